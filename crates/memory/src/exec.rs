//! Layer-wise execution: compute time, memory time and the bound of each step.
//!
//! A step streams its tiles with double buffering, so its own transfers overlap its compute:
//! time = max(compute, memory). With prefetching, the part of the next step's read misses
//! that existed before this step (see [`crate::access::Access::prefetchable`]) is fetched
//! during this step's slack (compute time not used by its own transfers), as far as the
//! buffer has room beside this step's footprint; those bytes then no longer count against
//! the next step's memory time. Traffic is unchanged; only its timing moves.

use crate::access::AccessList;
use crate::buffer::SimResult;
use crate::config::MemoryConfig;
use crate::step::{Phase, TrainingStep};
use crate::units::Capacity;
use serde::Serialize;
use std::collections::HashMap;

/// Where compute times come from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ComputeSource {
    /// Peak MAC/s and element-wise op/s of the config.
    #[default]
    Peak,
    /// Forward seconds per layer name (e.g. the crossbar layers sresim simulated). Backward
    /// matrix steps of such a layer scale it by their MACs over the forward MACs; layers
    /// without a figure, and non-matrix steps, use the peak figures.
    Simulated(HashMap<String, f64>),
}

impl ComputeSource {
    pub fn name(&self) -> &'static str {
        match self {
            ComputeSource::Peak => "peak",
            ComputeSource::Simulated(_) => "simulated",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepTime {
    pub compute_s: f64,
    /// Transfer time of the step's own traffic less what was prefetched earlier.
    pub memory_s: f64,
    pub time_s: f64,
    pub bound: Bound,
    /// Bytes of this step's reads that were fetched during the previous step.
    pub prefetched_bytes: u64,
}

/// Compute seconds of every step.
pub fn compute_times(ts: &TrainingStep, cfg: &MemoryConfig, src: &ComputeSource) -> Vec<f64> {
    ts.steps
        .iter()
        .map(|s| {
            let peak = s.macs / cfg.peak_macs_per_s + s.ops / cfg.elementwise_ops_per_s;
            let ComputeSource::Simulated(map) = src else {
                return peak;
            };
            let Some(name) = ts.node_names.get(s.node) else {
                return peak;
            };
            let (Some(&fwd), Some(&fwd_macs)) = (map.get(name), ts.node_macs.get(s.node)) else {
                return peak;
            };
            match s.phase {
                Phase::Forward => fwd,
                Phase::BackwardData | Phase::BackwardWeight if fwd_macs > 0.0 => {
                    fwd * s.macs / fwd_macs + s.ops / cfg.elementwise_ops_per_s
                }
                _ => peak,
            }
        })
        .collect()
}

/// Times every step for one capacity and bandwidth.
pub fn time_steps(
    list: &AccessList,
    sim: &SimResult,
    compute: &[f64],
    capacity: Capacity,
    bandwidth: f64,
    prefetch: bool,
) -> Vec<StepTime> {
    let n = sim.steps.len();
    let mut out = Vec::with_capacity(n);
    let mut carried = 0u64;
    for (i, (tr, &c)) in sim.steps.iter().zip(compute).enumerate() {
        let own = tr.read_bytes - carried + tr.write_bytes;
        let m = own as f64 / bandwidth;
        let t = c.max(m);
        let bound = if m > c { Bound::Memory } else { Bound::Compute };
        out.push(StepTime {
            compute_s: c,
            memory_s: m,
            time_s: t,
            bound,
            prefetched_bytes: carried,
        });
        carried = 0;
        if prefetch && i + 1 < n {
            let slack = ((c - m).max(0.0) * bandwidth).floor() as u64;
            let room = capacity.limit().saturating_sub(list.step_footprint[i]);
            carried = sim.steps[i + 1]
                .prefetchable_read_bytes
                .min(slack)
                .min(room);
        }
    }
    out
}
