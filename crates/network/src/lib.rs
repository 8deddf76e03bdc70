//! Networks: what a DNN is, described once, independent of how it is simulated.
//!
//! Owns the layer geometry of crossbar-mapped layers ([`geometry`]), the network graph
//! ([`graph`]: every op in execution order with ONNX-meaning attributes, named tensors with
//! shapes, the conv/fc nodes being the crossbar layers), the built-in networks as graphs
//! ([`zoo`], written with [`builder`]) and the reading of a bundle's `graph` into the same
//! type ([`bundle`]). It knows nothing of tensor values, of the machine, of files or of
//! the command line, and depends on no other crate of the workspace.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod builder;
pub mod bundle;
pub mod geometry;
pub mod graph;
pub mod text;
pub mod zoo;

pub use bundle::{BundleGraph, GraphError, GraphErrorKind};
pub use geometry::{ConvGeometry, LayerKind, LayerSpec};
pub use graph::{Graph, Node, Op, Tensor, TensorId, TensorRole};
