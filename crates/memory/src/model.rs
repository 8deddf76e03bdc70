//! The whole model for one network: training step, access list and compute times, built
//! once, then evaluated at any (capacity, bandwidth) point.

use crate::access::{self, AccessList, Scope};
use crate::buffer::{self, Policy, SimResult};
use crate::config::MemoryConfig;
use crate::exec::{self, Bound, ComputeSource, StepTime};
use crate::graph::Graph;
use crate::limits;
use crate::step::{self, TrainingStep};
use crate::units::Capacity;

pub struct Model {
    pub config: MemoryConfig,
    pub step: TrainingStep,
    pub list: AccessList,
    /// Compute seconds of every step.
    pub compute: Vec<f64>,
}

/// The buffer simulated at one capacity with the configured policy (shared by every
/// bandwidth).
pub struct CapacityResult {
    pub capacity: Capacity,
    pub sim: SimResult,
    /// Traffic of an LRU buffer of the same capacity, for comparison.
    pub lru_traffic: u64,
}

/// One (capacity, bandwidth) point.
pub struct Point<'a> {
    pub at: &'a CapacityResult,
    pub bandwidth: f64,
    pub times: Vec<StepTime>,
}

impl Point<'_> {
    pub fn time_s(&self) -> f64 {
        self.times.iter().map(|t| t.time_s).sum()
    }

    pub fn traffic(&self) -> u64 {
        self.at.sim.traffic()
    }

    /// Average off-chip bandwidth over the step (bytes/s).
    pub fn avg_bandwidth(&self) -> f64 {
        let t = self.time_s();
        if t > 0.0 {
            self.traffic() as f64 / t
        } else {
            0.0
        }
    }

    pub fn memory_bound_time_s(&self) -> f64 {
        self.times
            .iter()
            .filter(|t| t.bound == Bound::Memory)
            .map(|t| t.time_s)
            .sum()
    }
}

impl Model {
    /// Builds the model, after the checks of [`crate::limits`]: a graph whose tensors or
    /// access list would be too large is refused before either is built.
    pub fn new(graph: &Graph, cfg: &MemoryConfig, src: &ComputeSource) -> Result<Model, String> {
        limits::check_tensors(graph, cfg)?;
        let step = step::build(graph, cfg);
        limits::check_access_list(&step, cfg.tile_bytes)?;
        let list = access::build(&step, cfg.tile_bytes);
        let compute = exec::compute_times(&step, cfg, src);
        Ok(Model {
            config: cfg.clone(),
            step,
            list,
            compute,
        })
    }

    pub fn simulate(&self, capacity: Capacity) -> CapacityResult {
        let sim = buffer::simulate(&self.list, capacity, self.config.policy);
        let lru_traffic = buffer::simulate(&self.list, capacity, Policy::Lru).traffic();
        CapacityResult {
            capacity,
            sim,
            lru_traffic,
        }
    }

    pub fn point<'a>(&self, at: &'a CapacityResult, bandwidth: f64) -> Point<'a> {
        let times = exec::time_steps(
            &self.list,
            &at.sim,
            &self.compute,
            at.capacity,
            bandwidth,
            self.config.prefetch,
        );
        Point {
            at,
            bandwidth,
            times,
        }
    }

    /// Bytes each step would access with no buffer.
    pub fn accessed_bytes(&self) -> Vec<u64> {
        self.list
            .step_ranges
            .iter()
            .map(|r| {
                self.list.accesses[r.clone()]
                    .iter()
                    .map(|a| self.list.tiles[a.tile as usize].bytes)
                    .sum()
            })
            .collect()
    }

    /// Floating-point operations of step `i` (2 per MAC + element-wise ops).
    pub fn flops(&self, i: usize) -> f64 {
        let s = &self.step.steps[i];
        2.0 * s.macs + s.ops
    }
}

/// `saved` as (scope name, bytes) pairs, in [`Scope::ALL`] order.
pub fn named_scopes(saved: &[u64; 6]) -> Vec<(&'static str, u64)> {
    Scope::ALL
        .iter()
        .map(|s| (s.as_str(), saved[s.index()]))
        .collect()
}
