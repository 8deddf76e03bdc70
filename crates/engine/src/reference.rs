//! The reference engine: every OU of every input cycle formed one by one, literally as
//! sections 4-7 describe it. Slow on purpose; tests hold the fast engine to it.

use crate::statics::Tiling;
use crate::{OuCounts, Prepared, Progress, SimOptions};
use crossbar::{Hardware, Mode};
use pipeline::{Barrier, StageModel};
use sparsity::form_ous;

pub(crate) fn run(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    progress: Progress,
) -> (OuCounts, u64) {
    let (map, plan) = (&prep.map, &prep.plan);
    let k = map.k as usize;
    let tiling = Tiling::new(prep, mode);
    let st = StageModel::new(mode, hw, opts.pipeline.slow_stage);
    let mut barrier = Barrier::new(opts.sync, tiling.total);
    let mut counts = OuCounts::default();
    let mut vector = vec![0i32; k * map.groups as usize];
    let mut issue = vec![0u64; tiling.total];
    for v in 0..prep.layer.vectors() {
        prep.layer.fill_vector(v, &mut vector);
        for &pass in &plan.passes {
            for b in 0..plan.cycles {
                issue.iter_mut().for_each(|i| *i = 0);
                for (bi, block) in map.blocks.iter().enumerate() {
                    let inputs = &vector[block.group as usize * k..][..k];
                    // Is logical row r driven in this cycle (section 5)?
                    let driven = |r: u32| {
                        !mode.skips_inputs()
                            || plan.active(opts.granularity, pass.value(inputs[r as usize]), b)
                    };
                    for t in 0..tiling.tiles[bi] {
                        let x = tiling.xbar(bi, t);
                        if mode == Mode::Ideal {
                            // One whole-tile op: all rows, all used columns, no skipping.
                            let rows = map.dense_tile_range(t).len() as u64;
                            counts.record(mode, 1, rows, block.used_cols as u64);
                            issue[x] += st.ii(rows as u32, block.used_cols);
                            continue;
                        }
                        for cg_i in block.col_groups.clone() {
                            let cg = &map.col_groups[cg_i];
                            let ous = if mode.compacted() {
                                // Physical rows of compacted tile t, through the index decoder.
                                let g = &prep.comp().groups[cg_i];
                                let first = t * hw.xbar_rows;
                                let n = g.tile_rows(t, hw.xbar_rows);
                                form_ous(
                                    (first..first + n).map(|p| g.decode(p)),
                                    driven,
                                    hw.ou_rows,
                                )
                            } else {
                                form_ous(map.dense_tile_range(t), driven, hw.ou_rows)
                            };
                            for ou in ous {
                                counts.record(mode, 1, ou.len() as u64, cg.width() as u64);
                                issue[x] += st.ii(ou.len() as u32, cg.width());
                            }
                        }
                    }
                }
                barrier.interval(&issue, 1);
            }
        }
        barrier.end_vector();
        if let Some(p) = progress {
            p(1);
        }
    }
    (counts, barrier.finish())
}
