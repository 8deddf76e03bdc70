//! What a run chooses besides the hardware: the engine ([`EngineKind`]), the run-time
//! choices of sections 5 and 7 ([`SimOptions`]), and the one error of a choice the
//! engines cannot honour ([`EngineError`]).

use crate::input::{Granularity, SignedEncoding};
use pipeline::cycle::{PipelineOptions, QueueDepth};
use pipeline::Sync;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Which engine computes the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Fast,
    Reference,
    Cycle,
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fast" => Ok(EngineKind::Fast),
            "reference" => Ok(EngineKind::Reference),
            "cycle" => Ok(EngineKind::Cycle),
            _ => Err(format!(
                "unknown engine '{s}' (expected fast, reference or cycle)"
            )),
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EngineKind::Fast => "fast",
            EngineKind::Reference => "reference",
            EngineKind::Cycle => "cycle",
        })
    }
}

/// Run-time choices of sections 5 and 7 that are not hardware geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimOptions {
    pub sync: Sync,
    pub granularity: Granularity,
    pub encoding: SignedEncoding,
    /// `[pipeline]`: input queue depth (cycle engine) and an optional slow stage (all).
    pub pipeline: PipelineOptions,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            sync: Sync::Vector,
            granularity: Granularity::Value,
            encoding: SignedEncoding::TwosComplement,
            pipeline: PipelineOptions::default(),
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum EngineError {
    #[error("pipeline.queue_depth: a queue of {0} is modeled only by --engine cycle (the closed form of the fast and reference engines covers a depth of 1 and an unbounded queue)")]
    QueueNeedsCycle(QueueDepth),
    #[error("--engine cycle: this layer runs a window of column blocks at a time (its weights do not fit limits.max_layer_bytes at once), and the cycle engine simulates a layer's crossbars together; use --engine fast or reference, or raise limits.max_layer_bytes")]
    CycleWindow,
    #[error("cannot allocate {bytes} bytes ({}) for {what}: the layer is too large for this machine's memory (limits.max_layer_bytes was raised past what it holds)", workload::bundle::fmt_bytes(*bytes as u128))]
    Alloc { bytes: u64, what: &'static str },
}
