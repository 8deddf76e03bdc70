//! The cycle engine's model of a layer: per-crossbar input queues of finite depth, the
//! barrier, the stage pipeline of each crossbar and the merge of each vector's partial
//! sums (docs/pipeline.md).
//!
//! - [`Machine`]: event-driven, jumps from one unit end to the next; what
//!   `--engine cycle` runs.
//! - [`literal`]: the same machine stepped cycle by cycle and stage by stage; the
//!   oracle the tests hold [`Machine`] to.
//! - [`QueueDepth`], [`PipelineOptions`]: the `[pipeline]` configuration.
//! - [`CycleStats`]: per-stage busy and stall cycles, barrier waits, partial-sum buffer.

mod depth;
pub mod literal;
mod machine;
mod stats;

pub use depth::{PipelineOptions, QueueDepth};
pub use machine::Machine;
pub use stats::CycleStats;

#[cfg(test)]
mod tests;
