//! Counts that do not depend on OU formation: crossbars, register, eDRAM and storage
//! bits (section 8 and the precise readings of section 9).

use crate::prepared::Prepared;
use crossbar::{Hardware, Mode};
use energy::Events;

/// Row tiles of each block in a mode's tiling and a flat crossbar index over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tiling {
    /// Row tiles per block: dense ceil(K/X), or compacted ceil(max|C_g|/X).
    pub tiles: Vec<u32>,
    /// First crossbar index of each block.
    pub offsets: Vec<usize>,
    /// Crossbars in the tiling (all groups and both polarities share one barrier).
    pub total: usize,
}

impl Tiling {
    pub fn new(prep: &Prepared, mode: Mode) -> Self {
        let tiles: Vec<u32> = if mode.compacted() {
            prep.comp().block_tiles.clone()
        } else {
            vec![prep.map.dense_row_tiles(); prep.map.blocks.len()]
        };
        let mut offsets = Vec::with_capacity(tiles.len());
        let mut total = 0;
        for &t in &tiles {
            offsets.push(total);
            total += t as usize;
        }
        Tiling {
            tiles,
            offsets,
            total,
        }
    }

    #[inline]
    pub fn xbar(&self, block: usize, t: u32) -> usize {
        self.offsets[block] + t as usize
    }
}

/// Every count of section 8 that a formula gives for `samples` samples of the layer; the
/// OU counts and cycles are zero.
pub fn static_events(prep: &Prepared, hw: &Hardware, mode: Mode, samples: u64) -> Events {
    let map = &prep.map;
    let geom = prep.geom();
    let tiling = Tiling::new(prep, mode);
    let vectors = samples * geom.vectors_per_sample() as u64;
    let k = map.k as u64;
    let passes = prep.plan.passes.len() as u64;
    let ir_bits = vectors * passes * prep.plan.applied_bits as u64 * k * map.blocks.len() as u64;
    let or_bits = vectors
        * map
            .blocks
            .iter()
            .zip(&tiling.tiles)
            .map(|(b, &t)| t as u64 * b.used_cols as u64 * 32)
            .sum::<u64>();
    let edram_bits =
        samples * (geom.input_elements() + geom.output_elements()) as u64 * hw.input_bits as u64;
    let (weight_cells, index_storage_bits) = if mode.compacted() {
        let comp = prep.comp();
        map.col_groups
            .iter()
            .zip(&comp.groups)
            .fold((0u64, 0u64), |(cells, idx), (cg, c)| {
                let rows = c.rows.len() as u64;
                (
                    cells + rows * cg.width() as u64,
                    idx + rows * comp.index_bits as u64,
                )
            })
    } else {
        (k * map.total_cols(), 0)
    };
    Events {
        vectors,
        ir_bits,
        or_bits,
        edram_bits,
        weight_storage_bits: weight_cells * hw.cell_bits as u64,
        index_storage_bits,
        crossbars: tiling.total as u64,
        ..Events::default()
    }
}
