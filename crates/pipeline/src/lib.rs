//! Timing of the SRE pipeline.
//!
//! This crate owns docs/model.md §7: the stages an OU passes through and the
//! pipeline depth of each mode ([`depth`]), the initiation interval of one OU ([`ii`]),
//! the issue time of a run of OUs ([`issue_rows`]), the barrier policies that turn
//! per-crossbar issue times into a layer's busy time W ([`Barrier`]), and a layer's
//! cycles W + L - 1 ([`layer_cycles`]); an optional slow stage raises the II of every
//! OU ([`StageModel`]). The [`cycle`] module steps the same timing through finite
//! per-crossbar input queues, for the cycle engine.

mod barrier;
pub mod cycle;
mod stage;

pub use barrier::{Barrier, Busy, Sync};
pub use stage::{depth, ii, issue_rows, layer_cycles, stages, SlowStage, Stage, StageModel};
