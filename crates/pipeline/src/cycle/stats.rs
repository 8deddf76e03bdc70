//! What the cycle engine reports per layer beyond cycles: per-stage busy and stall
//! cycles, barrier waits and the partial-sum buffer the merge needs.

use super::QueueDepth;
use crate::Stage;

/// Per-layer (or, summed, per-network) counters of the cycle engine. Every count is in
/// crossbar-cycles: a cycle of one crossbar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CycleStats {
    /// The queue depth in effect (never `Auto`).
    pub queue_depth: QueueDepth,
    /// Which stages the mode's pipeline has, by [`Stage::index`].
    pub stages: [bool; 7],
    /// Layer cycles x crossbars: what utilization is measured against.
    pub crossbar_cycles: u64,
    /// OUs issued.
    pub ous: u64,
    /// Per stage: cycles the stage held an OU (an OU's II in its slowest stage, 1 in the others).
    pub busy: [u64; 7],
    /// Per stage: cycles a crossbar's next OU could not enter the pipeline because this
    /// stage still held the previous OU (II - 1 per OU, charged to its slowest stage).
    pub stall: [u64; 7],
    /// Cycles a crossbar issued nothing while another crossbar of the layer still did:
    /// its queue was empty (the barrier held the next interval) or it had finished.
    pub wait_cycles: u64,
    /// The most input vectors whose partial sums one crossbar held at once, waiting for
    /// the merge (every crossbar's partial sum of a vector) — the output buffer it needs.
    pub psum_peak: u64,
}

impl CycleStats {
    /// Stall cycles summed over stages.
    pub fn stall_cycles(&self) -> u64 {
        self.stall.iter().sum()
    }

    pub fn has(&self, s: Stage) -> bool {
        self.stages[s.index()]
    }

    /// busy / (cycles x crossbars) of a stage the mode has; None otherwise or when the
    /// layer took no cycles.
    pub fn utilization(&self, s: Stage) -> Option<f64> {
        (self.has(s) && self.crossbar_cycles > 0)
            .then(|| self.busy[s.index()] as f64 / self.crossbar_cycles as f64)
    }

    /// Adds another layer's counters (a TOTAL row): sums, and the larger buffer peak.
    pub fn add(&mut self, o: &CycleStats) {
        if self.queue_depth == QueueDepth::Auto {
            self.queue_depth = o.queue_depth;
        }
        for i in 0..7 {
            self.stages[i] |= o.stages[i];
            self.busy[i] += o.busy[i];
            self.stall[i] += o.stall[i];
        }
        self.crossbar_cycles += o.crossbar_cycles;
        self.ous += o.ous;
        self.wait_cycles += o.wait_cycles;
        self.psum_peak = self.psum_peak.max(o.psum_peak);
    }
}
