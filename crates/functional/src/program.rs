//! Programming the crossbars (functional-model.md section 1): the cells of every row
//! tile as bit-planes over its physical rows, and the route that tells which logical
//! row (input) drives each physical row.
//!
//! Two programs per layer: the dense tiling (dense, activation, ideal) and the compacted
//! one (weight, sre). Cells are written from the index table (`CompressedGroup::rows`);
//! inputs are routed at read time through the index decoder, a separate function, so a
//! wrong decode shows up as a wrong value.

use crossbar::{LayerMap, Polarity};
use sparsity::{CompressedGroup, Compression};

/// The index decoder the datapath routes compacted rows with: the logical row that
/// drives physical row `phys` of a column group.
pub type Decoder = fn(&CompressedGroup, u32) -> u32;

/// The decoder of the model: `C_g[phys]`.
pub fn index_decoder(g: &CompressedGroup, phys: u32) -> u32 {
    g.decode(phys)
}

/// One physical column of a column group, programmed in one row tile.
#[derive(Debug, Clone)]
pub(crate) struct Column {
    /// Output it adds to: g * (Cout/G) + n.
    pub out: u32,
    /// Weight of its code in the shift-and-add: 2^(slice * cell_bits).
    pub shift: u32,
    /// Negative polarity array: its codes are subtracted.
    pub neg: bool,
    /// cell_bits planes of `words` words: bit i of plane c is bit c of the cell level at
    /// physical row i.
    pub planes: Box<[u64]>,
}

/// The logical rows that drive the physical rows of a row tile, in physical order.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    /// Conv group whose input vector the rows index.
    pub group: u32,
    pub rows: Vec<u32>,
}

/// One crossbar row tile: its route and the column groups programmed on it.
#[derive(Debug, Clone)]
pub(crate) struct Tile {
    pub route: usize,
    /// Column groups, each a list of columns (an OU reads one group; ideal reads all).
    pub groups: Vec<Vec<Column>>,
}

/// Every crossbar of one tiling of a layer.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) routes: Vec<Route>,
    pub(crate) tiles: Vec<Tile>,
    /// Words of a bit-plane: ceil(crossbar.rows / 64).
    pub(crate) words: usize,
}

fn column(
    map: &LayerMap,
    weights: &[i32],
    group: u32,
    pol: Polarity,
    col: crossbar::PhysCol,
    logical: &[u32],
    words: usize,
) -> Column {
    let cb = map.cell_bits as usize;
    let mut planes = vec![0u64; cb * words].into_boxed_slice();
    for (i, &k) in logical.iter().enumerate() {
        let mut c = map.cell_at(weights, group, pol, col, k);
        while c != 0 {
            let b = c.trailing_zeros() as usize;
            planes[b * words + i / 64] |= 1u64 << (i % 64);
            c &= c - 1;
        }
    }
    Column {
        out: group * map.cols_per_group + col.n,
        shift: col.slice * map.cell_bits,
        neg: pol == Polarity::Neg,
        planes,
    }
}

impl Program {
    /// The dense tiling: row tile t of every block holds logical rows t*X .. t*X+X.
    pub fn dense(map: &LayerMap, weights: &[i32]) -> Self {
        let words = (map.xbar_rows as usize).div_ceil(64);
        let tiles_per_block = map.dense_row_tiles();
        let mut routes = Vec::new();
        for group in 0..map.groups {
            for t in 0..tiles_per_block {
                routes.push(Route {
                    group,
                    rows: map.dense_tile_range(t).collect(),
                });
            }
        }
        let mut tiles = Vec::new();
        for block in &map.blocks {
            for t in 0..tiles_per_block {
                let route = (block.group * tiles_per_block + t) as usize;
                let rows = &routes[route].rows;
                let groups = map.col_groups[block.col_groups.clone()]
                    .iter()
                    .map(|cg| {
                        cg.cols
                            .iter()
                            .map(|&c| {
                                column(map, weights, block.group, block.polarity, c, rows, words)
                            })
                            .collect()
                    })
                    .collect();
                tiles.push(Tile { route, groups });
            }
        }
        Program {
            routes,
            tiles,
            words,
        }
    }

    /// The compacted tiling: physical row i of compacted tile t of a column group holds
    /// logical row C_g[t*X + i] (the index table); the decoder routes its input.
    pub fn compacted(
        map: &LayerMap,
        weights: &[i32],
        comp: &Compression,
        decoder: Decoder,
    ) -> Self {
        let words = (map.xbar_rows as usize).div_ceil(64);
        let x = map.xbar_rows;
        let mut routes = Vec::new();
        let mut tiles = Vec::new();
        for (bi, block) in map.blocks.iter().enumerate() {
            for t in 0..comp.block_tiles[bi] {
                for cg_i in block.col_groups.clone() {
                    let g = &comp.groups[cg_i];
                    let n = g.tile_rows(t, x);
                    if n == 0 {
                        continue;
                    }
                    let first = (t * x) as usize;
                    let written = &g.rows[first..first + n as usize];
                    let cols = map.col_groups[cg_i]
                        .cols
                        .iter()
                        .map(|&c| {
                            column(map, weights, block.group, block.polarity, c, written, words)
                        })
                        .collect();
                    routes.push(Route {
                        group: block.group,
                        rows: (0..n).map(|i| decoder(g, t * x + i)).collect(),
                    });
                    tiles.push(Tile {
                        route: routes.len() - 1,
                        groups: vec![cols],
                    });
                }
            }
        }
        Program {
            routes,
            tiles,
            words,
        }
    }

    /// Bytes the bit-planes of a tiling of `cells` mapped cells take (an estimate for
    /// the memory check).
    pub fn estimate_bytes(k: u64, total_cols: u64, cell_bits: u32) -> u128 {
        k as u128 * total_cols as u128 * cell_bits as u128 / 8 + total_cols as u128 * 64
    }
}
