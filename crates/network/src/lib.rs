//! Networks: what a DNN is, independent of how it is simulated.
//!
//! Owns the layer geometry of crossbar-mapped layers ([`geometry`]) and the network graph
//! ([`graph`]: every op in execution order, named tensors with shapes). Knows nothing of
//! tensors' values, of the machine or of files.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod bundle;
pub mod geometry;
pub mod graph;
pub mod text;

pub use bundle::{BundleGraph, GraphError, GraphErrorKind};
pub use geometry::{ConvGeometry, LayerKind, LayerSpec};
pub use graph::{Graph, Node, Op, Tensor, TensorId, TensorRole};
