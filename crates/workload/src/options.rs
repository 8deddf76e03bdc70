//! How a workload is opened ([`OpenOptions`]): below every reader that takes it (the
//! bundle, the shape files, the resolver of a name).

use crate::quant::Precision;
use crate::synth::SynthParams;

/// Everything that decides how a workload is opened.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenOptions {
    /// Precision that integer arrays of a bundle are range-checked against at open.
    pub precision: Precision,
    /// Generator parameters (zoo networks; bundle layers without `input`).
    pub synth: SynthParams,
    /// Samples a zoo network holds, and a bundle whose layers all lack `input` and whose
    /// manifest has no `samples` key. Default 1.
    pub samples: usize,
    /// Allow bundle layers without an `input` array (`--synthetic-inputs`).
    pub synthetic_inputs: bool,
    /// A bundle layer whose arrays would need more bytes than this to load is refused at
    /// open (`limits.max_layer_bytes`; see [`crate::bundle::array_bytes`]).
    pub max_layer_bytes: u64,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            precision: Precision::default(),
            synth: SynthParams::default(),
            samples: 1,
            synthetic_inputs: false,
            max_layer_bytes: crate::bundle::DEFAULT_MAX_LAYER_BYTES,
        }
    }
}
