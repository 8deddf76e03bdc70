//! Workloads for sresim: what is simulated.
//!
//! This crate owns everything about the network being replayed and nothing about the
//! machine: layer geometry ([`geometry`]), quantization of real-valued tensors to the
//! configured precision ([`quant`], docs/model.md §2), quantized layers and
//! im2col input vectors generated on the fly ([`layer`]), the [`Workload`] trait
//! ([`source`]), the built-in networks ([`zoo`]) with seeded synthetic data ([`synth`]),
//! bundles of real tensors ([`bundle`]), networks described by their layer shapes in a
//! TOML file ([`shapes`]), the `--workload` lookup ([`resolve`]) and the
//! `--layers` subset of a workload ([`select`]).
//! Layers are loaded one at a time and their inputs streamed a few samples at a time;
//! nothing is held for the whole network or the whole trace.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // tests make their fixtures with std::fs

pub mod bundle;
pub mod files;
pub mod json;
pub use network::geometry;
pub mod layer;
mod options;
pub mod quant;
pub mod resolve;
pub mod select;
pub mod shapes;
pub mod source;
pub mod synth;
pub use network::text;
pub mod zoo;

pub use bundle::BundleWorkload;
pub use geometry::{ConvGeometry, LayerKind, LayerSpec};
pub use layer::{im2col_vector, LayerWeights, QuantLayer};
pub use options::OpenOptions;
pub use quant::{Precision, QuantError};
pub use resolve::{list_bundles, resolve, summary, WorkloadStats};
pub use select::{LayerSelector, Selected};
pub use source::{
    chunk_samples, off_crossbar_total, ColumnWeights, FloatLayer, FloatSampleSink, HeadsKept,
    SampleSink, Workload, CHUNK_INPUT_ELEMENTS,
};
pub use synth::{Structure, SynthParams, ZooWorkload};
