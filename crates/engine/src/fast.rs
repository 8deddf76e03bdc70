//! The fast engine: OU counts from popcounts over active-row masks.
//!
//! Dense, weight and ideal do not look at inputs: one input cycle is counted and
//! multiplied. Activation and sre build, per input vector, pass and input cycle, one
//! active-row mask per conv group, and count each column group's driven rows in a row
//! tile with one masked popcount over the tile's span. The vectors of each chunk of
//! samples fed are split into pieces processed in parallel; every sum is an exact integer
//! sum and barriers merge exactly, so the result depends neither on the chunking nor on
//! the thread count.

use crate::counts::OuCounts;
use crate::input::{Granularity, Pass};
use crate::options::{EngineError, SimOptions};
use crate::prepared::{Prepared, Progress, Samples};
use crate::statics::Tiling;
use crossbar::{div_ceil, Hardware, Mode};
use pipeline::{Barrier, Busy, StageModel};
use rayon::prelude::*;
use sparsity::RowMask;

/// The fast engine's state over the chunks of one layer in one mode.
pub(crate) struct Run<'p> {
    prep: &'p Prepared<'p>,
    hw: &'p Hardware,
    opts: SimOptions,
    mode: Mode,
    tiling: Tiling,
    /// activation and sre: what the per-vector counting needs, and its sums so far.
    dynamic: Option<Dynamic>,
    /// Whether the barriers keep their trace ([`Barrier::traced`]).
    traced: bool,
}

struct Dynamic {
    classes: u32,
    widths: Vec<Vec<(u32, u64)>>,
    sre: SreTables,
    counts: OuCounts,
    barrier: Barrier,
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
        let dynamic = mode.skips_inputs().then(|| Dynamic {
            classes: match opts.granularity {
                Granularity::Value => 1,
                Granularity::Bit => prep.plan.cycles,
            },
            widths: block_widths(prep),
            sre: SreTables::new(prep, hw, opts, mode),
            counts: OuCounts::default(),
            barrier: new_barrier(opts, tiling.total, traced),
        });
        Run {
            prep,
            hw,
            opts: *opts,
            mode,
            tiling,
            dynamic,
            traced,
        }
    }

    /// Counts the vectors of `chunk` (activation, sre); the other modes only report them.
    pub fn feed(&mut self, chunk: Samples, progress: Progress) -> Result<(), EngineError> {
        match &mut self.dynamic {
            Some(d) => {
                let (counts, barrier) = dynamic(
                    self.prep,
                    self.hw,
                    &self.opts,
                    self.mode,
                    &self.tiling,
                    d,
                    chunk,
                    progress,
                    self.traced,
                )?;
                d.counts.add(&counts);
                d.barrier.merge(&barrier);
            }
            None => {
                if let Some(p) = progress {
                    p(chunk.vectors(self.prep.geom()) as u64);
                }
            }
        }
        Ok(())
    }

    /// OU counts and busy time W over the `vectors` vectors fed.
    pub fn finish(self, vectors: u64) -> (OuCounts, Busy) {
        match self.dynamic {
            Some(d) => (d.counts, d.barrier.part()),
            None => {
                let st = StageModel::new(self.mode, self.hw, self.opts.pipeline.slow_stage);
                let (c, w) =
                    input_independent(self.prep, self.hw, self.mode, &st, &self.tiling, vectors);
                // Identical intervals: the slowest crossbar of the layer is the slowest
                // of its parts'.
                (c, Busy::Max(w))
            }
        }
    }
}

/// A barrier of `crossbars`, traced or not.
fn new_barrier(opts: &SimOptions, crossbars: usize, traced: bool) -> Barrier {
    match traced {
        true => Barrier::traced(opts.sync, crossbars),
        false => Barrier::new(opts.sync, crossbars),
    }
}

/// Dense, weight, ideal: every input cycle costs the same.
fn input_independent(
    prep: &Prepared,
    hw: &Hardware,
    mode: Mode,
    st: &StageModel,
    tiling: &Tiling,
    vectors: u64,
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
                issue[x] += st.ii(dense_rows, block.used_cols);
                continue;
            }
            for cg_i in block.col_groups.clone() {
                let w = map.col_groups[cg_i].width();
                let rows = if mode.compacted() {
                    prep.comp().groups[cg_i].tile_rows(t, hw.xbar_rows)
                } else {
                    dense_rows
                };
                let ops = div_ceil(rows as u64, hw.ou_rows as u64);
                counts.record(mode, ops, rows as u64, w as u64);
                issue[x] += st.issue_rows(rows, w);
            }
        }
    }
    let intervals = vectors * prep.plan.passes.len() as u64 * prep.plan.cycles as u64;
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

/// The counts and barrier of the vectors of `chunk`, split into parallel pieces.
#[allow(clippy::too_many_arguments)]
fn dynamic(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    tiling: &Tiling,
    d: &Dynamic,
    chunk: Samples,
    progress: Progress,
    traced: bool,
) -> Result<(OuCounts, Barrier), EngineError> {
    let map = &prep.map;
    let vectors = chunk.vectors(prep.geom());
    let piece = (vectors / (rayon::current_num_threads() * 8))
        .clamp(1, crate::limits::FAST_PIECE_VECTORS as usize);
    let n_pieces = vectors.div_ceil(piece);
    let classes = d.classes;
    let new_scratch = || Scratch {
        vector: vec![0; map.k as usize * map.groups as usize],
        masks: vec![RowMask::new(map.k); map.groups as usize * classes as usize],
        issue: vec![0; tiling.total],
        counts: OuCounts::default(),
        barrier: new_barrier(opts, tiling.total, traced),
    };
    // One result a piece, as many pieces as the chunk's vectors need (a layer with
    // absurdly many output positions, let through by a raised limits.max_layer_bytes,
    // needs terabytes): reserved fallibly, so that a failure is an error naming the
    // layer, not an abort (docs/errors.md, "Limits").
    let mut parts: Vec<(OuCounts, Barrier)> = Vec::new();
    parts
        .try_reserve_exact(n_pieces)
        .map_err(|_| EngineError::Alloc {
            bytes: (n_pieces as u64)
                .saturating_mul(std::mem::size_of::<(OuCounts, Barrier)>() as u64),
            what: "the counts of a chunk's pieces",
        })?;
    parts.par_extend((0..n_pieces).into_par_iter().map(|c| {
        let mut s = new_scratch();
        let range = c * piece..((c + 1) * piece).min(vectors);
        let len = range.len() as u64;
        for v in range {
            chunk.fill_vector(prep.geom(), v, &mut s.vector);
            one_vector(prep, hw, opts, mode, tiling, d, &mut s);
        }
        if let Some(p) = progress {
            p(len);
        }
        (s.counts, s.barrier)
    }));
    let mut counts = OuCounts::default();
    let mut barrier = new_barrier(opts, tiling.total, traced);
    for (c, b) in &parts {
        counts.add(c);
        barrier.merge(b);
    }
    Ok((counts, barrier))
}

/// Fills `s.masks` with the rows of each conv group driven in each cycle class of `pass`.
fn build_masks(prep: &Prepared, g: Granularity, pass: Pass, classes: u32, s: &mut Scratch) {
    let (map, plan) = (&prep.map, &prep.plan);
    let k = map.k as usize;
    let digit_mask = (1u64 << plan.dac_bits) - 1;
    s.masks.iter_mut().for_each(RowMask::clear);
    for grp in 0..map.groups as usize {
        let masks = &mut s.masks[grp * classes as usize..][..classes as usize];
        for (r, &q) in s.vector[grp * k..][..k].iter().enumerate() {
            let u = pass.value(q);
            if u == 0 {
                continue;
            }
            match g {
                Granularity::Value => masks[0].set(r as u32),
                Granularity::Bit => {
                    // Only the digits up to the highest set bit can be non-zero.
                    let (mut v, mut b) = (u, 0);
                    while v != 0 {
                        if v & digit_mask != 0 {
                            masks[b].set(r as u32);
                        }
                        v >>= plan.dac_bits;
                        b += 1;
                    }
                }
            }
        }
    }
}

/// What the sre counting looks up instead of recomputing per column group and tile.
struct SreTables {
    /// Per block: its non-empty column groups, their widths and the index of that
    /// width's row of `issue`.
    groups: Vec<Vec<(usize, u32, usize)>>,
    /// Per column group: the logical-row span [lo, hi) of each of its non-empty
    /// compacted tiles (tiles past the end of the group hold nothing).
    spans: Vec<Vec<(u32, u32)>>,
    /// OUs for r driven rows: ceil(r / ou.rows), r = 0..=crossbar.rows.
    ops: Vec<u64>,
    /// issue[i][r]: issue time of r driven rows of a group of the i-th distinct width
    /// of the layer (only widths that occur: a few, whatever ou.cols is).
    issue: Vec<Vec<u64>>,
}

impl SreTables {
    fn new(prep: &Prepared, hw: &Hardware, opts: &SimOptions, mode: Mode) -> Self {
        if !mode.compacted() {
            return SreTables {
                groups: Vec::new(),
                spans: Vec::new(),
                ops: Vec::new(),
                issue: Vec::new(),
            };
        }
        let (map, comp) = (&prep.map, prep.comp());
        let st = StageModel::new(mode, hw, opts.pipeline.slow_stage);
        let spans: Vec<Vec<(u32, u32)>> = comp
            .groups
            .iter()
            .map(|g| {
                let tiles = div_ceil(g.rows.len() as u64, hw.xbar_rows as u64) as u32;
                (0..tiles).map(|t| g.tile_span(t, hw.xbar_rows)).collect()
            })
            .collect();
        let mut widths: Vec<u32> = Vec::new();
        let groups = map
            .blocks
            .iter()
            .map(|b| {
                b.col_groups
                    .clone()
                    .filter(|&cg| !spans[cg].is_empty())
                    .map(|cg| {
                        let w = map.col_groups[cg].width();
                        let i = widths.iter().position(|&x| x == w).unwrap_or_else(|| {
                            widths.push(w);
                            widths.len() - 1
                        });
                        (cg, w, i)
                    })
                    .collect()
            })
            .collect();
        let r_max = hw.xbar_rows as u64;
        SreTables {
            groups,
            spans,
            ops: (0..=r_max)
                .map(|r| div_ceil(r, hw.ou_rows as u64))
                .collect(),
            issue: widths
                .iter()
                .map(|&w| (0..=r_max as u32).map(|r| st.issue_rows(r, w)).collect())
                .collect(),
        }
    }
}

/// Per block: the distinct column-group widths and how many groups have each.
fn block_widths(prep: &Prepared) -> Vec<Vec<(u32, u64)>> {
    prep.map
        .blocks
        .iter()
        .map(|b| {
            let mut v: Vec<(u32, u64)> = Vec::new();
            for cg in &prep.map.col_groups[b.col_groups.clone()] {
                match v.iter_mut().find(|(w, _)| *w == cg.width()) {
                    Some((_, n)) => *n += 1,
                    None => v.push((cg.width(), 1)),
                }
            }
            v
        })
        .collect()
}

/// Counts the vector in `s.vector` into `s`.
fn one_vector(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    tiling: &Tiling,
    d: &Dynamic,
    s: &mut Scratch,
) {
    let (classes, widths, sre) = (d.classes, &d.widths, &d.sre);
    let (map, plan) = (&prep.map, &prep.plan);
    let st = StageModel::new(mode, hw, opts.pipeline.slow_stage);
    // Value granularity: one class whose mask holds in all n_cyc cycles of the pass.
    let repeat = match opts.granularity {
        Granularity::Value => plan.cycles as u64,
        Granularity::Bit => 1,
    };
    let comp = prep.comp();
    for &pass in &plan.passes {
        build_masks(prep, opts.granularity, pass, classes, s);
        for c in 0..classes as usize {
            s.issue.iter_mut().for_each(|i| *i = 0);
            for (bi, block) in map.blocks.iter().enumerate() {
                let mask = &s.masks[block.group as usize * classes as usize + c];
                for t in 0..tiling.tiles[bi] {
                    let x = tiling.xbar(bi, t);
                    if mode.compacted() {
                        // sre: the active compacted rows of each column group in tile t,
                        // one masked popcount each; OU counts and issue from the tables.
                        let (mut ops, mut rows, mut cells, mut adc, mut issue) = (0, 0, 0, 0, 0);
                        for &(cg_i, width, wi) in &sre.groups[bi] {
                            let Some(&(lo, hi)) = sre.spans[cg_i].get(t as usize) else {
                                continue;
                            };
                            let r = mask.and_count_range(&comp.groups[cg_i].mask, lo, hi) as usize;
                            let (o, w) = (sre.ops[r], width as u64);
                            ops += o;
                            rows += r as u64;
                            cells += r as u64 * w;
                            adc += o * w;
                            issue += sre.issue[wi][r];
                        }
                        s.counts.record_raw(mode, repeat, ops, rows, cells, adc);
                        s.issue[x] += issue;
                    } else {
                        // activation: every column group of the block sees the same
                        // active rows of the dense tile; groups of equal width cost the same.
                        let range = map.dense_tile_range(t);
                        let rows = mask.count_range(range.start, range.end) as u64;
                        let ops = div_ceil(rows, hw.ou_rows as u64);
                        for &(w, n) in &widths[bi] {
                            s.counts
                                .record(mode, n * ops * repeat, n * rows * repeat, w as u64);
                            s.issue[x] += n * st.issue_rows(rows as u32, w);
                        }
                    }
                }
            }
            s.barrier.interval(&s.issue, repeat);
        }
    }
    s.barrier.end_vector();
}
