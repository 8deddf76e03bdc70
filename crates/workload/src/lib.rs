//! Workloads for sresim: what is simulated.
//!
//! This crate owns everything about the network being replayed and nothing about the
//! machine: layer geometry ([`geometry`]), quantization of real-valued tensors to the
//! configured precision ([`quant`], docs/sre-model.md section 2), quantized layers and
//! im2col input vectors generated on the fly ([`layer`]).

pub mod geometry;
pub mod layer;
pub mod quant;
pub mod source;
pub mod synth;
pub mod zoo;

pub use geometry::{ConvGeometry, LayerKind, LayerSpec};
pub use layer::{im2col_vector, QuantLayer};
pub use quant::{Precision, QuantError};
pub use source::Workload;
