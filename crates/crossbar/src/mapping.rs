//! Section 3: polarity arrays, cell slices, physical column order, column blocks,
//! column groups and the dense row tiling.

use crate::{div_ceil, Hardware, Layout};
use std::ops::Range;
use workload::ConvGeometry;

/// Differential sign: each logical column has a positive and a negative array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Polarity {
    Pos,
    Neg,
}

impl Polarity {
    pub const BOTH: [Polarity; 2] = [Polarity::Pos, Polarity::Neg];

    /// The magnitude this polarity stores for weight q: max(q,0) or max(-q,0).
    #[inline]
    pub fn magnitude(self, q: i32) -> u32 {
        match self {
            Polarity::Pos => q.max(0) as u32,
            Polarity::Neg => (-(q.min(0) as i64)) as u32,
        }
    }
}

/// The value of cell `slice` (LSB slice first) of weight `q` in polarity `pol`.
#[inline]
pub fn cell(q: i32, pol: Polarity, slice: u32, cell_bits: u32) -> u32 {
    let mag = pol.magnitude(q) as u64;
    ((mag >> (slice * cell_bits)) & ((1u64 << cell_bits) - 1)) as u32
}

/// Bit j set iff slice j of `mag` is non-zero, for j < cpw.
#[inline]
pub fn slice_mask(mag: u32, cpw: u32, cell_bits: u32) -> u32 {
    let m = (1u64 << cell_bits) - 1;
    let mag = mag as u64;
    (0..cpw).fold(0, |acc, j| {
        acc | ((((mag >> (j * cell_bits)) & m != 0) as u32) << j)
    })
}

/// One physical column: logical column `n` of its conv group, cell `slice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysCol {
    pub n: u32,
    pub slice: u32,
}

/// ou.cols adjacent columns of a block (the last group of a block may be narrower).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnGroup {
    /// Index into [`LayerMap::blocks`].
    pub block: u32,
    pub cols: Vec<PhysCol>,
}

impl ColumnGroup {
    pub fn width(&self) -> u32 {
        self.cols.len() as u32
    }
}

/// crossbar.cols columns of one polarity array of one conv group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub group: u32,
    pub polarity: Polarity,
    /// Columns the mapping puts in this block (<= crossbar.cols).
    pub used_cols: u32,
    /// Indices into [`LayerMap::col_groups`].
    pub col_groups: Range<usize>,
}

/// The column structure of a layer and its dense row tiling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerMap {
    /// Rows of each group's matrix.
    pub k: u32,
    pub groups: u32,
    pub cols_per_group: u32,
    pub cells_per_weight: u32,
    pub cell_bits: u32,
    pub xbar_rows: u32,
    /// Ordered: for conv group, for polarity (pos, neg), for block.
    pub blocks: Vec<Block>,
    pub col_groups: Vec<ColumnGroup>,
    /// The logical columns the weights handed with this map hold: None for a whole
    /// layer (`[Cout, K]`), or a window of one conv group's columns ([`LayerMap::window`]).
    pub window: Option<ColumnWindow>,
}

/// The logical columns of one conv group that a window of column blocks reads: `len`
/// columns from `start`, cyclically (n = start, start + 1, ..., wrapping past the
/// group's last column to 0; a slice-major block may hold the end and the start of the
/// group). The weights of a window are those columns in that order, K rows each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnWindow {
    pub group: u32,
    pub start: u32,
    pub len: u32,
}

impl ColumnWindow {
    /// The output channels of the window, as at most two ranges of `[Cout, K]` rows in
    /// the order its weights hold them.
    pub fn channels(&self, cols_per_group: u32) -> Vec<Range<usize>> {
        let base = (self.group * cols_per_group) as usize;
        let (start, len, ng) = (
            self.start as usize,
            self.len as usize,
            cols_per_group as usize,
        );
        let first = base + start..base + (start + len).min(ng);
        match (start + len).checked_sub(ng) {
            Some(wrap) if wrap > 0 => vec![first, base..base + wrap],
            _ => vec![first],
        }
    }
}

impl LayerMap {
    pub fn new(geom: &ConvGeometry, hw: &Hardware) -> Self {
        let k = geom.k_rows() as u32;
        let ng = geom.cols_per_group() as u32;
        let cpw = hw.cells_per_weight();
        let total = ng * cpw;
        let phys = |i: u32| match hw.layout {
            Layout::WeightMajor => PhysCol {
                n: i / cpw,
                slice: i % cpw,
            },
            Layout::SliceMajor => PhysCol {
                n: i % ng,
                slice: i / ng,
            },
        };
        let mut blocks = Vec::new();
        let mut col_groups = Vec::new();
        for group in 0..geom.groups as u32 {
            for polarity in Polarity::BOTH {
                for start in (0..total).step_by(hw.xbar_cols as usize) {
                    let end = (start + hw.xbar_cols).min(total);
                    let block = blocks.len() as u32;
                    let first = col_groups.len();
                    for gs in (start..end).step_by(hw.ou_cols as usize) {
                        let ge = (gs + hw.ou_cols).min(end);
                        col_groups.push(ColumnGroup {
                            block,
                            cols: (gs..ge).map(phys).collect(),
                        });
                    }
                    blocks.push(Block {
                        group,
                        polarity,
                        used_cols: end - start,
                        col_groups: first..col_groups.len(),
                    });
                }
            }
        }
        LayerMap {
            k,
            groups: geom.groups as u32,
            cols_per_group: ng,
            cells_per_weight: cpw,
            cell_bits: hw.cell_bits,
            xbar_rows: hw.xbar_rows,
            blocks,
            col_groups,
            window: None,
        }
    }

    /// Column blocks per polarity array of one conv group.
    pub fn blocks_per_array(&self) -> usize {
        // Every conv group has two polarity arrays of the same blocks.
        self.blocks.len() / (2 * self.groups.max(1) as usize)
    }

    /// The blocks `range` (indices within one polarity array) of conv group `group`, in
    /// both polarities, as a map of their own: its column groups and blocks in the
    /// order of this map, and the [`ColumnWindow`] of the logical columns they read.
    /// `xbar_cols` and `layout` must be those this map was built with. Every count the
    /// engines sum over column groups or crossbars is the sum of these maps' counts
    /// over a partition of the blocks.
    pub fn window(&self, group: u32, range: Range<usize>, hw: &Hardware) -> LayerMap {
        let per = self.blocks_per_array();
        let mut blocks = Vec::new();
        let mut col_groups = Vec::new();
        for pol in 0..2usize {
            let first = (group as usize * 2 + pol) * per;
            for b in &self.blocks[first + range.start..first + range.end] {
                let start = col_groups.len();
                for cg in &self.col_groups[b.col_groups.clone()] {
                    col_groups.push(ColumnGroup {
                        block: blocks.len() as u32,
                        cols: cg.cols.clone(),
                    });
                }
                blocks.push(Block {
                    col_groups: start..col_groups.len(),
                    ..b.clone()
                });
            }
        }
        // The physical columns [s, e) of one polarity array that the blocks cover.
        let total = self.cols_per_group * self.cells_per_weight;
        let s = (range.start as u32 * hw.xbar_cols).min(total);
        let e = (range.end as u32 * hw.xbar_cols).min(total);
        let ng = self.cols_per_group;
        let (start, len) = if e <= s {
            (0, 0)
        } else {
            match hw.layout {
                Layout::WeightMajor => {
                    let (a, b) = (s / self.cells_per_weight, (e - 1) / self.cells_per_weight);
                    (a, b - a + 1)
                }
                Layout::SliceMajor if e - s >= ng => (0, ng),
                Layout::SliceMajor => (s % ng, e - s),
            }
        };
        LayerMap {
            blocks,
            col_groups,
            window: Some(ColumnWindow { group, start, len }),
            ..self.clone_header()
        }
    }

    /// This map's fields but its blocks and column groups (left empty).
    fn clone_header(&self) -> LayerMap {
        LayerMap {
            k: self.k,
            groups: self.groups,
            cols_per_group: self.cols_per_group,
            cells_per_weight: self.cells_per_weight,
            cell_bits: self.cell_bits,
            xbar_rows: self.xbar_rows,
            blocks: Vec::new(),
            col_groups: Vec::new(),
            window: self.window,
        }
    }

    /// Where logical column `n` of conv group `group` starts in the weights handed with
    /// this map, in elements (K per column).
    #[inline]
    pub fn weight_column(&self, group: u32, n: u32) -> usize {
        let col = match self.window {
            None => group * self.cols_per_group + n,
            Some(w) => (n + self.cols_per_group - w.start) % self.cols_per_group.max(1),
        };
        col as usize * self.k as usize
    }

    /// Dense row tiles per block: ceil(K / crossbar.rows).
    pub fn dense_row_tiles(&self) -> u32 {
        div_ceil(self.k as u64, self.xbar_rows as u64) as u32
    }

    /// Logical rows [start, end) of dense row tile t.
    pub fn dense_tile_range(&self, t: u32) -> Range<u32> {
        let start = t * self.xbar_rows;
        start..(start + self.xbar_rows).min(self.k)
    }

    /// Crossbars of the dense tiling: row tiles x column blocks (both polarities, all groups).
    pub fn dense_crossbars(&self) -> u64 {
        self.blocks.len() as u64 * self.dense_row_tiles() as u64
    }

    /// Physical columns over both polarities and all groups.
    pub fn total_cols(&self) -> u64 {
        self.blocks.iter().map(|b| b.used_cols as u64).sum()
    }

    /// Cell value at row k of physical column `col` of a block of `group`/`pol`.
    #[inline]
    pub fn cell_at(&self, weights: &[i32], group: u32, pol: Polarity, col: PhysCol, k: u32) -> u32 {
        let idx = self.weight_column(group, col.n) + k as usize;
        cell(weights[idx], pol, col.slice, self.cell_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_lsb_first_slices_of_the_polarity_magnitude() {
        // q = -45 = -0b10_11_01: negative array holds 45 -> slices 01, 11, 10 (2-bit cells)
        assert_eq!(
            [0, 1, 2, 3].map(|j| cell(-45, Polarity::Neg, j, 2)),
            [1, 3, 2, 0]
        );
        assert_eq!(cell(-45, Polarity::Pos, 0, 2), 0);
        assert_eq!(slice_mask(45, 4, 2), 0b0111);
        assert_eq!(slice_mask(0b1100_0000, 4, 2), 0b1000);
    }

    #[test]
    fn weight_major_and_slice_major_blocks_and_groups() {
        // 3 logical columns, 4-bit weights, 1-bit cells -> cpw 3, 9 columns per polarity;
        // crossbar.cols 4, ou.cols 3 -> blocks of 4,4,1 columns; groups 3+1, 3+1, 1.
        let geom = ConvGeometry::fc(5, 3);
        let hw = Hardware {
            xbar_rows: 2,
            xbar_cols: 4,
            cell_bits: 1,
            ou_rows: 2,
            ou_cols: 3,
            weight_bits: 4,
            ..Hardware::default()
        };
        let m = LayerMap::new(&geom, &hw);
        assert_eq!(m.cells_per_weight, 3);
        assert_eq!(m.blocks.len(), 6);
        assert_eq!(
            m.blocks.iter().map(|b| b.used_cols).collect::<Vec<_>>(),
            [4, 4, 1, 4, 4, 1]
        );
        let widths: Vec<u32> = m.col_groups.iter().map(|g| g.width()).collect();
        assert_eq!(widths, [3, 1, 3, 1, 1, 3, 1, 3, 1, 1]);
        // weight-major: column 3 is n=1 slice 0
        assert_eq!(m.col_groups[1].cols[0], PhysCol { n: 1, slice: 0 });
        assert_eq!(m.dense_row_tiles(), 3);
        assert_eq!(m.dense_tile_range(2), 4..5);
        assert_eq!(m.dense_crossbars(), 18);
        let sm = LayerMap::new(
            &geom,
            &Hardware {
                layout: Layout::SliceMajor,
                ..hw
            },
        );
        // slice-major: column 3 is slice 1 of n=0
        assert_eq!(sm.col_groups[1].cols[0], PhysCol { n: 0, slice: 1 });
    }
}
