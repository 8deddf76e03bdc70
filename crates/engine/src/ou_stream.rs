//! The OU stream of a layer in one mode: for each input vector, each input cycle and
//! each crossbar, its OUs in issue order (sections 5 and 6), as runs of equal OUs.
//!
//! Within a crossbar, column groups take turns in block order; a group that drives
//! `rows` rows issues `rows / ou.rows` full OUs of ou.rows, then one OU of the rest
//! (dynamic OU formation takes the next ou.rows active rows, so every OU but the last
//! is full). `ideal` issues one OU per crossbar: every row of its tile, every used
//! column of its block. The driven-row counts are the fast engine's: popcounts of an
//! active-row mask per conv group over a dense tile (activation) or, intersected with
//! the group's compacted rows, over its compacted tile (sre); dense, weight and ideal
//! drive the same rows in every input cycle and are computed once.

use crate::input::Granularity;
use crate::options::SimOptions;
use crate::prepared::{Prepared, Samples};
use crate::statics::Tiling;
use crossbar::{Hardware, Mode};
use sparsity::RowMask;

/// Receives a vector's OUs.
pub(crate) trait OuSink {
    /// `count` OUs of `rows` x `cols` on crossbar `x`, next in its order.
    fn ous(&mut self, x: usize, count: u64, rows: u32, cols: u32);
    /// Closes an input cycle; `repeat` identical input cycles follow each other.
    fn end_interval(&mut self, repeat: u64);
}

/// One crossbar's share of an input cycle that does not depend on the inputs.
#[derive(Debug, Clone, Copy)]
struct Fixed {
    x: usize,
    rows: u32,
    cols: u32,
}

pub(crate) struct OuStream<'p, 'a> {
    prep: &'p Prepared<'a>,
    hw: Hardware,
    mode: Mode,
    granularity: Granularity,
    pub tiling: Tiling,
    /// Cycle classes with their own mask: 1 in value granularity, n_cyc in bit.
    classes: u32,
    vector: Vec<i32>,
    /// masks[g * classes + c]: rows of conv group g driven in class c.
    masks: Vec<RowMask>,
    /// dense, weight, ideal: the rows of each (crossbar, column group), once.
    fixed: Vec<Fixed>,
}

impl<'p, 'a> OuStream<'p, 'a> {
    pub fn new(prep: &'p Prepared<'a>, hw: &Hardware, opts: &SimOptions, mode: Mode) -> Self {
        let map = &prep.map;
        let tiling = Tiling::new(prep, mode);
        let classes = match opts.granularity {
            Granularity::Value => 1,
            Granularity::Bit => prep.plan.cycles,
        };
        let dynamic = mode.skips_inputs();
        let mut s = OuStream {
            prep,
            hw: hw.clone(),
            mode,
            granularity: opts.granularity,
            tiling,
            classes,
            vector: if dynamic {
                vec![0; map.k as usize * map.groups as usize]
            } else {
                Vec::new()
            },
            masks: if dynamic {
                vec![RowMask::new(map.k); map.groups as usize * classes as usize]
            } else {
                Vec::new()
            },
            fixed: Vec::new(),
        };
        if !dynamic {
            s.fixed = s.fixed_rows();
        }
        s
    }

    fn fixed_rows(&self) -> Vec<Fixed> {
        let (map, hw) = (&self.prep.map, &self.hw);
        let mut out = Vec::new();
        for (bi, block) in map.blocks.iter().enumerate() {
            for t in 0..self.tiling.tiles[bi] {
                let x = self.tiling.xbar(bi, t);
                let dense_rows = map.dense_tile_range(t).len() as u32;
                if self.mode == Mode::Ideal {
                    out.push(Fixed {
                        x,
                        rows: dense_rows,
                        cols: block.used_cols,
                    });
                    continue;
                }
                for cg_i in block.col_groups.clone() {
                    let rows = if self.mode.compacted() {
                        self.prep.comp().groups[cg_i].tile_rows(t, hw.xbar_rows)
                    } else {
                        dense_rows
                    };
                    let cols = map.col_groups[cg_i].width();
                    out.push(Fixed { x, rows, cols });
                }
            }
        }
        out
    }

    /// Feeds the OUs of input vector `v` of `chunk` to `sink`, input cycle by input cycle.
    pub fn vector(&mut self, chunk: Samples, v: usize, sink: &mut impl OuSink) {
        let plan = &self.prep.plan;
        let cycles = plan.cycles as u64;
        if !self.mode.skips_inputs() {
            // Every (pass, input cycle) drives the same rows.
            for f in &self.fixed {
                if self.mode == Mode::Ideal {
                    sink.ous(f.x, 1, f.rows, f.cols);
                } else {
                    group_ous(sink, f.x, f.rows, f.cols, self.hw.ou_rows);
                }
            }
            sink.end_interval(plan.passes.len() as u64 * cycles);
            return;
        }
        chunk.fill_vector(self.prep.geom(), v, &mut self.vector);
        // Value granularity: one class whose mask holds in all n_cyc cycles of a pass.
        let repeat = match self.granularity {
            Granularity::Value => cycles,
            Granularity::Bit => 1,
        };
        for p in 0..plan.passes.len() {
            self.build_masks(p);
            for c in 0..self.classes as usize {
                self.interval(c, sink);
                sink.end_interval(repeat);
            }
        }
    }

    /// Rows of each conv group driven in each cycle class of pass `p` (section 5).
    fn build_masks(&mut self, p: usize) {
        let (map, plan) = (&self.prep.map, &self.prep.plan);
        let pass = plan.passes[p];
        let (k, classes) = (map.k as usize, self.classes as usize);
        self.masks.iter_mut().for_each(RowMask::clear);
        for g in 0..map.groups as usize {
            let masks = &mut self.masks[g * classes..][..classes];
            for (r, &q) in self.vector[g * k..][..k].iter().enumerate() {
                let u = pass.value(q);
                for (c, m) in masks.iter_mut().enumerate() {
                    if plan.active(self.granularity, u, c as u32) {
                        m.set(r as u32);
                    }
                }
            }
        }
    }

    /// The OUs of one input cycle of class `c`, crossbar by crossbar.
    fn interval(&self, c: usize, sink: &mut impl OuSink) {
        let (map, hw) = (&self.prep.map, &self.hw);
        for (bi, block) in map.blocks.iter().enumerate() {
            let mask = &self.masks[block.group as usize * self.classes as usize + c];
            for t in 0..self.tiling.tiles[bi] {
                let x = self.tiling.xbar(bi, t);
                let dense = map.dense_tile_range(t);
                let dense_active = mask.count_range(dense.start, dense.end);
                for cg_i in block.col_groups.clone() {
                    let rows = if self.mode.compacted() {
                        let g = &self.prep.comp().groups[cg_i];
                        let (lo, hi) = g.tile_span(t, hw.xbar_rows);
                        mask.and_count_range(&g.mask, lo, hi)
                    } else {
                        dense_active
                    };
                    group_ous(sink, x, rows, map.col_groups[cg_i].width(), hw.ou_rows);
                }
            }
        }
    }
}

/// A column group driving `rows` rows: full OUs of `ou_rows`, then the rest.
#[inline]
fn group_ous(sink: &mut impl OuSink, x: usize, rows: u32, cols: u32, ou_rows: u32) {
    let (full, rest) = (rows / ou_rows, rows % ou_rows);
    if full > 0 {
        sink.ous(x, full as u64, ou_rows, cols);
    }
    if rest > 0 {
        sink.ous(x, 1, rest, cols);
    }
}
