//! Memory-subsystem model: on-chip buffer capacity x off-chip bandwidth -> off-chip traffic,
//! time and bandwidth of a whole DNN training step (or inference), every layer counted.
//!
//! Data flows one way: a forward [`graph`] (from the [`zoo`] or a bundle) -> the training
//! step of [`step`] (forward, loss, backward in reverse, weight update; each step lists the
//! tensors it reads and writes) -> the tile-level access list and prefetch list of
//! [`access`] -> the Belady-managed buffer of [`buffer`] (traffic, reuse scope of every
//! hit) -> per-step timing in [`exec`] -> CSV, JSON and table in [`report`], with the
//! figures of the plot ([`report::Curve`], drawn by the caller). The
//! lists and a point's off-chip requests are exported record by record by [`export`] and
//! [`trace`] (the caller writes them).
//! docs/memory.md states the model and every assumption.
#![cfg_attr(test, allow(clippy::disallowed_methods))] // tests make their fixtures with std::fs

pub mod access;
pub mod buffer;
pub use network::builder;
pub mod bundle;
pub mod config;
pub mod exec;
pub mod export;
pub use network::graph;
pub mod limits;
pub mod model;
pub mod report;
pub mod step;
pub mod trace;
pub mod units;
pub mod zoo;

pub use config::{ComputeKind, MemoryConfig, Mode, Optimizer};
pub use exec::ComputeSource;
pub use model::Model;
pub use report::MemoryArgs;
pub use units::{parse_bandwidth, parse_capacity, Capacity};
