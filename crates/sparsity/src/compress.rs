//! Section 4: row compaction per column group, index tables and the index decoder.

use crate::RowMask;
use crossbar::{div_ceil, slice_mask, LayerMap};
use rayon::prelude::*;

/// The non-zero rows C_g of one column group, packed upward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressedGroup {
    /// The index table: physical row i of the group holds logical row rows[i].
    pub rows: Vec<u32>,
    /// The same set as a mask over logical rows.
    pub mask: RowMask,
}

impl CompressedGroup {
    /// The index decoder: which logical row (input) drives physical row `phys`.
    #[inline]
    pub fn decode(&self, phys: u32) -> u32 {
        self.rows[phys as usize]
    }

    /// Compacted rows of this group in row tile t: min(X, max(0, |C_g| - t*X)).
    #[inline]
    pub fn tile_rows(&self, t: u32, xbar_rows: u32) -> u32 {
        (self.rows.len() as u32)
            .saturating_sub(t * xbar_rows)
            .min(xbar_rows)
    }

    /// Logical-row span [lo, hi) covered by compacted tile t (empty if the tile is).
    #[inline]
    pub fn tile_span(&self, t: u32, xbar_rows: u32) -> (u32, u32) {
        let n = self.tile_rows(t, xbar_rows);
        if n == 0 {
            return (0, 0);
        }
        let first = (t * xbar_rows) as usize;
        (self.rows[first], self.rows[first + n as usize - 1] + 1)
    }
}

/// The compacted mapping of a whole layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compression {
    /// One per column group of the [`LayerMap`], same order.
    pub groups: Vec<CompressedGroup>,
    /// Compacted row tiles of each block: ceil(max_g |C_g| / X), 0 for an empty block.
    pub block_tiles: Vec<u32>,
    /// Index width: ceil(log2 K).
    pub index_bits: u32,
}

impl Compression {
    /// Finds the non-zero rows of every column group of `map` in `weights` ([Cout, K]).
    pub fn new(map: &LayerMap, weights: &[i32]) -> Self {
        let groups: Vec<CompressedGroup> = map
            .col_groups
            .par_iter()
            .map(|cg| {
                let block = &map.blocks[cg.block as usize];
                // The slices of each logical column that this group holds.
                let mut per_n: Vec<(u32, u32)> = Vec::new();
                for c in &cg.cols {
                    match per_n.iter_mut().find(|(n, _)| *n == c.n) {
                        Some((_, m)) => *m |= 1 << c.slice,
                        None => per_n.push((c.n, 1 << c.slice)),
                    }
                }
                let mut mask = RowMask::new(map.k);
                let all = (1u32 << map.cells_per_weight) - 1;
                let k = map.k as usize;
                for &(n, slices) in &per_n {
                    let col = map.weight_column(block.group, n);
                    let column = &weights[col..col + k];
                    for (r, &q) in column.iter().enumerate() {
                        let mag = block.polarity.magnitude(q);
                        // A group holding every slice of the weight: any non-zero magnitude.
                        let nonzero = if slices == all {
                            mag != 0
                        } else {
                            mag != 0
                                && slice_mask(mag, map.cells_per_weight, map.cell_bits) & slices
                                    != 0
                        };
                        if nonzero {
                            mask.set(r as u32);
                        }
                    }
                }
                let rows: Vec<u32> = mask.iter_ones().collect();
                CompressedGroup { rows, mask }
            })
            .collect();
        let block_tiles = map
            .blocks
            .iter()
            .map(|b| {
                let max = groups[b.col_groups.clone()]
                    .iter()
                    .map(|g| g.rows.len() as u64)
                    .max()
                    .unwrap_or(0);
                div_ceil(max, map.xbar_rows as u64) as u32
            })
            .collect();
        Compression {
            groups,
            block_tiles,
            index_bits: crossbar::ceil_log2(map.k as u64),
        }
    }

    /// Crossbars of the compacted tiling: sum over blocks of compacted row tiles.
    pub fn crossbars(&self) -> u64 {
        self.block_tiles.iter().map(|&t| t as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbar::Hardware;
    use workload::ConvGeometry;

    #[test]
    fn compacts_nonzero_rows_per_column_group() {
        // fc 4 -> 2, 3-bit weights, 1-bit cells: cpw 2; ou.cols 2 -> each group is one
        // logical column's two slices. Weights (rows k=0..3):
        //   n=0: [0, 1, 0, -2]  -> pos group rows {1}, neg group rows {3}
        //   n=1: [3, 0, 0, 0]   -> pos group rows {0}, neg group empty
        let geom = ConvGeometry::fc(4, 2);
        let hw = Hardware {
            xbar_rows: 2,
            xbar_cols: 4,
            cell_bits: 1,
            ou_rows: 2,
            ou_cols: 2,
            weight_bits: 3,
            ..Hardware::default()
        };
        let map = LayerMap::new(&geom, &hw);
        let w = vec![0, 1, 0, -2, 3, 0, 0, 0];
        let c = Compression::new(&map, &w);
        let rows: Vec<Vec<u32>> = c.groups.iter().map(|g| g.rows.clone()).collect();
        assert_eq!(rows, vec![vec![1], vec![0], vec![3], vec![]]);
        // pos block: max |C_g| = 1 -> 1 tile; neg block: 1 -> 1 tile. Dense: 2 tiles each.
        assert_eq!(c.block_tiles, vec![1, 1]);
        assert_eq!(c.crossbars(), 2);
        assert_eq!(c.index_bits, 2);
        assert_eq!(c.groups[2].decode(0), 3);
        assert_eq!(c.groups[2].tile_span(0, 2), (3, 4));
        assert_eq!(c.groups[3].tile_rows(0, 2), 0);
    }
}
