//! What the chip model is given of a layer and a mode ([`LayerShape`], [`LayerMode`],
//! [`Context`]), and its errors ([`ChipError`]): below the placement, the schedule,
//! the area and the evaluation that use them.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum ChipError {
    #[error("chip.{key}: {msg}")]
    Key { key: String, msg: String },
    #[error("area table: {key}{msg}")]
    Area { key: String, msg: String },
    #[error("no mode fits the chip: {needed} crossbars needed by the smallest mode ({mode}), {available} available on {chips} chip(s) of {per_chip}")]
    NoModeFits {
        mode: String,
        needed: u64,
        available: u64,
        chips: u64,
        per_chip: u64,
    },
}

/// A layer's shape as the chip sees it: output rows, which input rows each needs, and
/// how many bytes it hands to the next layer.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerShape {
    pub name: String,
    /// Output rows per image (Ho; 1 for fc).
    pub out_rows: u64,
    /// Input rows per image (H; 1 for fc).
    pub in_rows: u64,
    pub kernel_rows: u64,
    pub stride_rows: u64,
    pub pad_rows: u64,
    pub dilation_rows: u64,
    /// Bytes of one image it hands to the next layer (all channels, at the activation
    /// width, after any pooling between the two).
    pub out_bytes: u64,
}

/// What the engines counted for one layer in one mode, over the run's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LayerMode {
    /// Crossbars of one copy of the layer (dense tiling or compacted).
    pub crossbars: u64,
    /// Input vectors over all samples (the most copies that can work at once in the run).
    pub vectors: u64,
    /// W: busy cycles with one copy.
    pub busy_cycles: u64,
    /// W + L - 1, or 0.
    pub cycles: u64,
    /// The digital unit's work after the layer over the run's samples, in crossbar
    /// cycles (a transformer's attention products, softmax, norms: docs/digital.md); 0
    /// for a layer no digital op follows (every CNN layer).
    pub digital_cycles: u64,
}

/// The hardware around the chip that the chip needs to know.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Context {
    pub xbar_rows: u32,
    pub xbar_cols: u32,
    pub cycle_ns: f64,
    /// Images streamed in the run.
    pub samples: u64,
}
