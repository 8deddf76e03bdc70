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
mod datapath;
mod device;
mod exact;
mod metrics;
mod program;
pub mod rng;
mod run;

pub use adc::Adc;
pub use device::{Device, ErrorTable};
pub use exact::{exact_product, fits_i64};
pub use metrics::Metrics;
pub use program::{index_decoder, Decoder, Program};
pub use run::{Layer, LayerRun, ModeOutput};

use crossbar::Hardware;
use thiserror::Error;
use workload::LayerSpec;

/// The settings of a functional run that are not hardware geometry.
#[derive(Debug, Clone)]
pub struct FuncOptions {
    /// `adc.step`: cell levels per ADC count (1: every level distinct).
    pub adc_step: u64,
    /// Keep every output (for `--dump-outputs`); otherwise only the metrics.
    pub keep_outputs: bool,
    /// The index decoder compacted rows are routed with (the model's, or a wrong one in
    /// a mutation test).
    pub decoder: Decoder,
    /// `[device]`: the ideal device by default.
    pub device: Device,
}

impl Default for FuncOptions {
    fn default() -> Self {
        FuncOptions {
            adc_step: 1,
            keep_outputs: false,
            decoder: index_decoder,
            device: Device::default(),
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum FuncError {
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
