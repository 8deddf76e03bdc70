//! The reference engine: every OU of every input cycle formed one by one, literally as
//! sections 4-7 describe it. Slow on purpose; tests hold the fast engine to it.

use crate::counts::OuCounts;
use crate::options::SimOptions;
use crate::prepared::{Prepared, Progress, Samples};
use crate::statics::Tiling;
use crossbar::{Hardware, Mode};
use pipeline::{Barrier, Busy, StageModel};
use sparsity::form_ous;

/// The reference engine's state over the chunks of one layer in one mode.
pub(crate) struct Run<'p> {
    prep: &'p Prepared<'p>,
    hw: &'p Hardware,
    opts: SimOptions,
    mode: Mode,
    tiling: Tiling,
    st: StageModel,
    barrier: Barrier,
    counts: OuCounts,
    vector: Vec<i32>,
    issue: Vec<u64>,
}

impl<'p> Run<'p> {
    pub fn new(
        prep: &'p Prepared<'p>,
        hw: &'p Hardware,
        opts: &SimOptions,
        mode: Mode,
        traced: bool,
    ) -> Self {
        let tiling = Tiling::new(prep, mode);
        Run {
            prep,
            hw,
            opts: *opts,
            mode,
            st: StageModel::new(mode, hw, opts.pipeline.slow_stage),
            barrier: match traced {
                true => Barrier::traced(opts.sync, tiling.total),
                false => Barrier::new(opts.sync, tiling.total),
            },
            counts: OuCounts::default(),
            vector: vec![0; prep.map.k as usize * prep.map.groups as usize],
            issue: vec![0; tiling.total],
            tiling,
        }
    }

    /// Forms every OU of every vector of `chunk`, in order.
    pub fn feed(&mut self, chunk: Samples, progress: Progress) {
        for v in 0..chunk.vectors(self.prep.geom()) {
            chunk.fill_vector(self.prep.geom(), v, &mut self.vector);
            self.one_vector();
            if let Some(p) = progress {
                p(1);
            }
        }
    }

    /// OU counts and busy time W over every vector fed.
    pub fn finish(self) -> (OuCounts, Busy) {
        (self.counts, self.barrier.part())
    }

    fn one_vector(&mut self) {
        let (prep, hw, mode, opts) = (self.prep, self.hw, self.mode, &self.opts);
        let (map, plan, st, tiling) = (&prep.map, &prep.plan, &self.st, &self.tiling);
        let k = map.k as usize;
        let (vector, issue, counts) = (&self.vector, &mut self.issue, &mut self.counts);
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
                self.barrier.interval(issue, 1);
            }
        }
        self.barrier.end_vector();
    }
}
