//! The functional datapath (docs/functional.md): what every OU read computes.
//!
//! The counting engines say how many OU reads a mode makes; this crate computes their
//! values. Each mode reads its own tiling ([`Program`]: dense row tiles, or compacted
//! rows routed through the index decoder), forms its own OUs (fixed slices, the next
//! ou.rows driven rows, or the whole tile), converts every bitline sum with the ADC and
//! adds the codes by cycle, slice, polarity and pass. With an ideal device and an ADC
//! that does not clip, every mode's output equals the exact integer product; [`LayerRun`]
//! compares them as samples stream and keeps only the [`Metrics`] (and, on request, the
//! outputs).

// Values come from user data: no unwrap/expect outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod adc;
mod aging;
mod alias;
mod counts;
mod datapath;
mod device;
mod exact;
mod levels;
mod math;
mod metrics;
mod options;
mod program;
pub mod rng;
mod run;
mod skip;

pub use adc::{Adc, Converter};
pub use aging::Aging;
pub use counts::{set_count_table_limit, COUNT_TABLE_BYTES};
pub use device::{Device, ErrorTable, Reference, Sampler, DRIFT_T0_S};
pub use exact::{exact_path, exact_product, exact_products, fits_i64};
pub use levels::{Law, LevelSpace, Levels, Spread};
pub use math::poly;
pub use metrics::Metrics;
pub use options::{AdcRange, FuncOptions};
pub use program::{
    index_decoder, set_conductance_cache_limit, Decoder, Program, CONDUCTANCE_CACHE_BYTES,
};
pub use run::{calibrate, compensation_gains, full_sum, Layer, LayerRun, ModeOutput};
pub use skip::code_law;

use crossbar::Hardware;
use thiserror::Error;
use workload::LayerSpec;

#[derive(Debug, Error, PartialEq)]
pub enum FuncError {
    #[error("layer {layer}: a functional run of it needs about {} ({} of programs and buffers besides the {} the counts need), more than limits.max_layer_bytes = {} ({})", workload::bundle::fmt_bytes(*need), workload::bundle::fmt_bytes(*programs), workload::bundle::fmt_bytes(need - programs), workload::bundle::fmt_bytes(*cap as u128), workload::bundle::raise_layer_bytes_hint(*need))]
    Memory {
        layer: String,
        need: u128,
        programs: u128,
        cap: u64,
    },
    #[error("layer {layer}: its exact product needs {bits} bits ((weight_bits - 1) + input_bits + ceil(log2 K) = {wb} + {ib} + {kb}), more than an int64 holds; lower precision.weight_bits or precision.input_bits")]
    Overflow {
        layer: String,
        bits: u32,
        wb: u32,
        ib: u32,
        kb: u32,
    },
}

/// Refuses an error table that says nothing of the widest read a mode makes: every OU
/// of `ou.rows` (the ideal mode's whole tile of `crossbar.rows`) may open that many
/// wordlines. `label` names the table's file.
pub fn check_table(
    device: &Device,
    hw: &Hardware,
    modes: &[crossbar::Mode],
    label: &str,
) -> Result<(), String> {
    let Some(t) = &device.error_table else {
        return Ok(());
    };
    for &m in modes {
        let h = hw.ou_height(m);
        if h > t.max_open {
            return Err(format!(
                "{label}: open_wordlines: the table stops at {} wordlines, but {m} reads open up to {h}",
                t.max_open
            ));
        }
    }
    Ok(())
}

/// What a functional run of a layer holds besides what the counts need (docs/functional.md,
/// "Memory"), from the geometry alone, before anything is loaded: an upper bound.
pub struct Budget<'a> {
    pub hw: &'a Hardware,
    pub modes: &'a [crossbar::Mode],
    /// Input bits applied (input_bits; the bit-planes are cut into this many).
    pub applied_bits: u32,
    /// Samples of the layer's input held at once (a chunk).
    pub held_samples: u64,
    /// Samples of the layer, when its outputs are kept for `--dump-outputs` (0 otherwise).
    pub kept_samples: u64,
    pub threads: usize,
    /// The device draws each cell's conductance: the programs cache them (up to
    /// [`CONDUCTANCE_CACHE_BYTES`] each).
    pub per_cell: bool,
    /// Read noise is drawn by the skip sampler ([`Device::skips`]): each mode keeps a
    /// table of the laws of its classes of reads, and each thread a state per class.
    pub skip: bool,
}

/// Saturating product of u128 factors.
fn mul(xs: &[u128]) -> u128 {
    xs.iter().fold(1u128, |a, &x| a.saturating_mul(x))
}

/// Upper bound of the bytes a functional run of `spec` adds: the dense program (every
/// column's cell planes in every row tile, its metadata, the rows each tile holds and
/// routes), the compacted one when a compacted mode runs (no more tiles than dense, but
/// rows recorded per column group), each thread's bit-planes, accumulators and the
/// batch of outputs computed before they are reduced, and the kept outputs when dumped.
pub fn program_bytes(spec: &LayerSpec, b: &Budget) -> u128 {
    let g = &spec.geom;
    let hw = b.hw;
    let k = g.k_rows() as u128;
    let x = hw.xbar_rows.max(1) as u128;
    let words = x.div_ceil(64);
    let cb = hw.cell_bits.max(1) as u128;
    let cpw = ((hw.weight_bits.max(2) - 1) as u128).div_ceil(cb);
    let groups = g.groups.max(1) as u128;
    let ng = g.cols_per_group() as u128;
    let pol_cols = mul(&[ng, cpw]);
    let blocks_per_pol = pol_cols.div_ceil(hw.xbar_cols.max(1) as u128);
    let cols = mul(&[groups, 2, pol_cols]);
    let blocks = mul(&[groups, 2, blocks_per_pol]);
    // Column groups: ou.cols wide, plus a narrower last one per block.
    let col_groups = mul(&[groups, 2])
        .saturating_mul(pol_cols.div_ceil(hw.ou_cols.max(1) as u128))
        .saturating_add(blocks);
    let tiles = k.div_ceil(x).max(1);
    // A column of a tile: its planes and 24 bytes of metadata; a tile's rows, u32 each.
    let column = mul(&[cb, words, 8]).saturating_add(24);
    let columns = mul(&[cols, tiles, column]);
    // A dense tile's column set per row: ceil(its columns / 64) words a row (compacted
    // tiles keep none).
    let row_cols = |cols: u32| mul(&[x, (cols.max(1) as u128).div_ceil(64), 8]);
    // A tile or a route: 128 bytes of its own besides its rows.
    let dense = columns
        .saturating_add(mul(&[blocks, tiles, row_cols(hw.xbar_cols)]))
        .saturating_add(mul(&[
            blocks,
            tiles,
            x.saturating_mul(4).saturating_add(128),
        ]))
        .saturating_add(mul(&[
            groups,
            tiles,
            x.saturating_mul(4).saturating_add(128),
        ]));
    // Cached conductances: an f64 per cell of every tile, up to the cache's limit.
    let conductances = if b.per_cell {
        mul(&[cols, tiles, x, 8]).min(program::conductance_cache_limit() as u128)
    } else {
        0
    };
    // Count tables of the fixed OUs (dense and weight modes, per-cell reads): a byte
    // per column and mask of each OU and four per mask, up to their limit a mode.
    let ou = (hw.ou_rows.clamp(1, counts::MAX_TABLE_ROWS as u32)) as u128;
    let count_tables = |mode: crossbar::Mode| {
        if !b.per_cell || !b.modes.contains(&mode) {
            return 0;
        }
        mul(&[tiles, x.div_ceil(ou), 1 << ou, cols.saturating_add(4)])
            .min(counts::table_limit() as u128)
    };
    // The levels of the alias reads, a byte per cell and row padded to whole words of
    // columns, up to their limit a program.
    let levels = |tiles: u128| {
        if !b.skip || hw.cell_bits > 2 {
            return 0;
        }
        let row = (hw.xbar_cols.max(1) as u128).div_ceil(64) * 64;
        mul(&[tiles, x, row]).min(program::LEVELS_BYTES as u128)
    };
    let dense = dense
        .saturating_add(conductances)
        .saturating_add(levels(mul(&[blocks, tiles])))
        .saturating_add(count_tables(crossbar::Mode::Dense));
    let compacted = if b.modes.iter().any(|m| m.compacted()) {
        columns
            .saturating_add(mul(&[
                col_groups,
                tiles,
                x.saturating_mul(8).saturating_add(256),
            ]))
            .saturating_add(conductances)
            .saturating_add(levels(mul(&[col_groups, tiles])))
            .saturating_add(count_tables(crossbar::Mode::Weight))
    } else {
        0
    };
    let outs = mul(&[groups, ng]);
    let modes = b.modes.len() as u128;
    // Per thread and mode, a scratch: the bit-planes of every route of its program (a
    // route per conv group and tile, or per column group and tile when compacted), the
    // digits, a code sum and a bit per column of a tile, an i128 per output, the table
    // of read noise.
    let scratch = |compacted: bool| {
        let routes = mul(&[if compacted { col_groups } else { groups }, tiles]);
        let tile_cols = mul(&[blocks_per_pol, hw.xbar_cols as u128]).min(pol_cols);
        mul(&[routes, b.applied_bits.max(1) as u128, words, 8])
            .saturating_add(mul(&[tile_cols, 16]))
            .saturating_add(mul(&[tile_cols.div_ceil(64), 8]))
            .saturating_add(datapath::NOISE_TABLE as u128 * 8)
            .saturating_add(mul(&[outs, 16]))
    };
    // The skip sampler's tables, a mode's laws and each thread's states (by (open, sum):
    // the bound of a device with IR drop).
    let skip = |m: &crossbar::Mode| {
        let open = (hw.ou_height(*m) as u128).min(words * 64) as u64;
        let (n, _) = skip::classes(open, hw.cell_bits, hw.dac_bits, true);
        skip::table_bytes(n, b.threads)
    };
    let skip = match b.skip {
        true => b.modes.iter().fold(0u128, |a, m| a.saturating_add(skip(m))),
        false => 0,
    };
    let per_thread = b
        .modes
        .iter()
        .fold(0u128, |a, m| a.saturating_add(scratch(m.compacted())))
        .saturating_add(mul(&[k, groups, 12]))
        .saturating_add(mul(&[outs, 8]))
        .saturating_add(exact::BLOCK_BYTES as u128);
    // The outputs of a batch of vectors (at most a chunk's), every mode's and the exact
    // product as i64 (the latter twice: as computed, and in the batch's rows), the float
    // layer's as f64.
    let chunk_outputs = mul(&[b.held_samples as u128, g.vectors_per_sample() as u128, outs]);
    let batch_outputs = chunk_outputs.min((run::BATCH_OUTPUTS as u128).max(outs));
    let batch = mul(&[batch_outputs, modes.saturating_add(3), 8]);
    let kept = mul(&[
        b.kept_samples as u128,
        g.vectors_per_sample() as u128,
        outs,
        modes,
        8,
    ]);
    dense
        .saturating_add(compacted)
        .saturating_add(skip)
        .saturating_add(mul(&[per_thread, b.threads.max(1) as u128]))
        .saturating_add(batch)
        .saturating_add(kept)
}

/// Refuses a layer whose functional run would need more than `cap` bytes
/// (`limits.max_layer_bytes`), `counts` being what the counting engines need of it.
pub fn check_memory(spec: &LayerSpec, b: &Budget, counts: u128, cap: u64) -> Result<(), FuncError> {
    let programs = program_bytes(spec, b);
    let need = counts.saturating_add(programs);
    if need <= cap as u128 {
        return Ok(());
    }
    Err(FuncError::Memory {
        layer: spec.name.clone(),
        need,
        programs,
        cap,
    })
}

/// Refuses a layer whose exact product could exceed an i64.
pub fn check_layer(spec: &LayerSpec, hw: &Hardware) -> Result<(), FuncError> {
    let k = spec.geom.k_rows() as u64;
    if fits_i64(hw.weight_bits, hw.input_bits, k) {
        return Ok(());
    }
    let (wb, ib, kb) = (hw.weight_bits - 1, hw.input_bits, crossbar::ceil_log2(k));
    Err(FuncError::Overflow {
        layer: spec.name.clone(),
        bits: wb + ib + kb,
        wb,
        ib,
        kb,
    })
}
