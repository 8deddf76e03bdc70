//! The fast engine: OU counts from popcounts over active-row masks.
//!
//! Dense, weight and ideal do not look at inputs: one input cycle is counted and
//! multiplied. Activation and sre build, per input vector, pass and input cycle, one
//! active-row mask per conv group, and count each column group's driven rows in a row
//! tile with one masked popcount over the tile's span. Vectors are split into chunks
//! processed in parallel; every sum is an exact integer sum, so the result does not
//! depend on the chunking or the thread count.

use crate::input::Granularity;
use crate::statics::Tiling;
use crate::{OuCounts, Prepared, Progress, SimOptions};
use crossbar::{div_ceil, Hardware, Mode};
use pipeline::{ii, issue_rows, Barrier};
use rayon::prelude::*;
use sparsity::RowMask;

pub(crate) fn run(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    progress: Progress,
) -> (OuCounts, u64) {
    let tiling = Tiling::new(prep, mode);
    if mode.skips_inputs() {
        dynamic(prep, hw, opts, mode, &tiling, progress)
    } else {
        input_independent(prep, hw, mode, &tiling, progress)
    }
}

/// Dense, weight, ideal: every input cycle costs the same.
fn input_independent(
    prep: &Prepared,
    hw: &Hardware,
    mode: Mode,
    tiling: &Tiling,
    progress: Progress,
) -> (OuCounts, u64) {
    let map = &prep.map;
    let mut counts = OuCounts::default();
    let mut issue = vec![0u64; tiling.total];
    for (bi, block) in map.blocks.iter().enumerate() {
        for t in 0..tiling.tiles[bi] {
            let x = tiling.xbar(bi, t);
            let dense_rows = map.dense_tile_range(t).len() as u32;
            if mode == Mode::Ideal {
                counts.record(mode, 1, dense_rows as u64, block.used_cols as u64);
                issue[x] += ii(dense_rows, block.used_cols, mode, hw);
                continue;
            }
            for cg_i in block.col_groups.clone() {
                let w = map.col_groups[cg_i].width();
                let rows = if mode.compacted() {
                    prep.comp.groups[cg_i].tile_rows(t, hw.xbar_rows)
                } else {
                    dense_rows
                };
                let ops = div_ceil(rows as u64, hw.ou_rows as u64);
                counts.record(mode, ops, rows as u64, w as u64);
                issue[x] += issue_rows(rows, w, mode, hw);
            }
        }
    }
    let vectors = prep.layer.vectors() as u64;
    let intervals = vectors * prep.plan.passes.len() as u64 * prep.plan.cycles as u64;
    if let Some(p) = progress {
        p(vectors);
    }
    // Identical intervals: every barrier policy gives intervals x the slowest crossbar.
    let slowest = issue.iter().copied().max().unwrap_or(0);
    (counts.scaled(intervals), intervals * slowest)
}

/// Per-chunk state of the activation and sre counting.
struct Scratch {
    vector: Vec<i32>,
    /// masks[g * classes + c]: rows of conv group g driven in cycle class c.
    masks: Vec<RowMask>,
    issue: Vec<u64>,
    counts: OuCounts,
    barrier: Barrier,
}

fn dynamic(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    tiling: &Tiling,
    progress: Progress,
) -> (OuCounts, u64) {
    let map = &prep.map;
    let vectors = prep.layer.vectors();
    let chunk = (vectors / (rayon::current_num_threads() * 8)).clamp(1, 256);
    let n_chunks = vectors.div_ceil(chunk);
    let classes = match opts.granularity {
        Granularity::Value => 1,
        Granularity::Bit => prep.plan.cycles,
    };
    let new_scratch = || Scratch {
        vector: vec![0; map.k as usize * map.groups as usize],
        masks: vec![RowMask::new(map.k); map.groups as usize * classes as usize],
        issue: vec![0; tiling.total],
        counts: OuCounts::default(),
        barrier: Barrier::new(opts.sync, tiling.total),
    };
    let parts: Vec<(OuCounts, Barrier)> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let mut s = new_scratch();
            let range = c * chunk..((c + 1) * chunk).min(vectors);
            let len = range.len() as u64;
            for v in range {
                one_vector(prep, hw, opts, mode, tiling, classes, v, &mut s);
            }
            if let Some(p) = progress {
                p(len);
            }
            (s.counts, s.barrier)
        })
        .collect();
    let mut counts = OuCounts::default();
    let mut barrier = Barrier::new(opts.sync, tiling.total);
    for (c, b) in &parts {
        counts.add(c);
        barrier.merge(b);
    }
    (counts, barrier.finish())
}

#[allow(clippy::too_many_arguments)]
fn one_vector(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    tiling: &Tiling,
    classes: u32,
    v: usize,
    s: &mut Scratch,
) {
    let (map, plan) = (&prep.map, &prep.plan);
    let k = map.k as usize;
    prep.layer.fill_vector(v, &mut s.vector);
    // Value granularity: one class whose mask holds in all n_cyc cycles of the pass.
    let repeat = match opts.granularity {
        Granularity::Value => plan.cycles as u64,
        Granularity::Bit => 1,
    };
    for &pass in &plan.passes {
        s.masks.iter_mut().for_each(RowMask::clear);
        for g in 0..map.groups as usize {
            let masks = &mut s.masks[g * classes as usize..][..classes as usize];
            for (r, &q) in s.vector[g * k..][..k].iter().enumerate() {
                let u = pass.value(q);
                if u == 0 {
                    continue;
                }
                match opts.granularity {
                    Granularity::Value => masks[0].set(r as u32),
                    Granularity::Bit => {
                        for (b, m) in masks.iter_mut().enumerate() {
                            if plan.digit(u, b as u32) != 0 {
                                m.set(r as u32);
                            }
                        }
                    }
                }
            }
        }
        for c in 0..classes as usize {
            s.issue.iter_mut().for_each(|i| *i = 0);
            for (bi, block) in map.blocks.iter().enumerate() {
                let mask = &s.masks[block.group as usize * classes as usize + c];
                for t in 0..tiling.tiles[bi] {
                    let x = tiling.xbar(bi, t);
                    let dense_range = map.dense_tile_range(t);
                    let dense_active = mask.count_range(dense_range.start, dense_range.end);
                    for cg_i in block.col_groups.clone() {
                        let w = map.col_groups[cg_i].width();
                        let rows = if mode.compacted() {
                            let g = &prep.comp.groups[cg_i];
                            let (lo, hi) = g.tile_span(t, hw.xbar_rows);
                            mask.and_count_range(&g.mask, lo, hi)
                        } else {
                            dense_active
                        };
                        let ops = div_ceil(rows as u64, hw.ou_rows as u64);
                        s.counts
                            .record(mode, ops * repeat, rows as u64 * repeat, w as u64);
                        s.issue[x] += issue_rows(rows, w, mode, hw);
                    }
                }
            }
            s.barrier.interval(&s.issue, repeat);
        }
    }
    s.barrier.end_vector();
}
