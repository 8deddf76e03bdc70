//! The event-driven machine: input queues, barrier, issue and merge of every crossbar
//! of a layer, advanced from one event to the next.
//!
//! Each crossbar issues its OUs in order, one every II cycles (an OU's II is its
//! initiation interval; section 7). Within one unit — the barrier interval the queues
//! hold: an input vector, or an input cycle under `sync = bit` — OUs issue back to back,
//! so nothing changes between the start and the end of a crossbar's unit except its
//! OUs entering the pipeline: the machine jumps from unit end to unit end. With F_u(x)
//! the cycle crossbar x finishes issuing unit u and G_u = max_x F_u(x):
//!
//! - unit u is broadcast into every queue once every queue has room: at
//!   P_u = G_{u-d} for a depth d (0 for the first d units; always 0 when unbounded);
//! - F_u(x) = max(P_u, F_{u-1}(x)) + issue_u(x);
//! - the last OU leaves the output register L - 1 cycles after its issue ends, so the
//!   layer takes max_x F(x) + L - 1 cycles (0 when nothing is issued).
//!
//! Depth 1 gives W = sum_u max_x issue_u(x) and an unbounded queue W = max_x sum_u
//! issue_u(x): the closed form of section 7 for `vector` (or `bit`) and `none`.
//! `literal` steps the same machine cycle by cycle, stage by stage; tests hold the
//! two equal.

use super::{CycleStats, QueueDepth};
use crate::{Stage, StageModel, Sync};
use std::collections::VecDeque;

/// The cycle engine's machine for one layer in one mode.
#[derive(Debug, Clone)]
pub struct Machine {
    model: StageModel,
    depth: QueueDepth,
    /// Under `sync = bit` a unit is one input cycle; otherwise one input vector.
    per_interval: bool,
    /// Issue of the open input cycle, per crossbar.
    interval: Vec<u64>,
    interval_ous: u64,
    interval_stall: [u64; 7],
    /// Issue of the open vector, per crossbar (vector units only).
    vector: Vec<u64>,
    /// F: the cycle each crossbar finishes issuing everything it has been given.
    free: Vec<u64>,
    /// G of the last `d` units, oldest first (finite depth only).
    recent: VecDeque<u64>,
    /// G of the vectors that some crossbar may still hold a partial sum of, in order.
    unmerged: VecDeque<u64>,
    issue_total: u64,
    ous: u64,
    stall: [u64; 7],
    psum_peak: u64,
}

impl Machine {
    /// `depth` is resolved against `sync` (`Auto` becomes 1 or unbounded).
    pub fn new(model: StageModel, crossbars: usize, sync: Sync, depth: QueueDepth) -> Self {
        Machine {
            model,
            depth: depth.resolve(sync),
            per_interval: sync == Sync::Bit,
            interval: vec![0; crossbars],
            interval_ous: 0,
            interval_stall: [0; 7],
            vector: vec![0; crossbars],
            free: vec![0; crossbars],
            recent: VecDeque::new(),
            unmerged: VecDeque::new(),
            issue_total: 0,
            ous: 0,
            stall: [0; 7],
            psum_peak: 0,
        }
    }

    /// `count` OUs of `rows` x `cols` on crossbar `x`, next in its order within the open
    /// input cycle.
    #[inline]
    pub fn ous(&mut self, x: usize, count: u64, rows: u32, cols: u32) {
        if count == 0 {
            return;
        }
        let ii = self.model.ii(rows, cols);
        self.interval[x] += count * ii;
        self.interval_ous += count;
        if let Some(s) = self.model.slowest(rows, cols) {
            self.interval_stall[s.index()] += count * (ii - 1);
        }
    }

    /// Closes the open input cycle; `repeat` identical ones follow each other (the
    /// cycles of a pass in value granularity, or of an input-independent mode).
    pub fn end_interval(&mut self, repeat: u64) {
        self.ous += repeat * self.interval_ous;
        for (s, i) in self.stall.iter_mut().zip(&self.interval_stall) {
            *s += repeat * i;
        }
        if self.per_interval {
            for _ in 0..repeat {
                Self::push(
                    &mut self.free,
                    &mut self.recent,
                    self.depth,
                    &self.interval,
                    &mut self.issue_total,
                );
            }
        } else {
            for (v, &i) in self.vector.iter_mut().zip(&self.interval) {
                *v += repeat * i;
            }
        }
        self.interval.iter_mut().for_each(|i| *i = 0);
        self.interval_ous = 0;
        self.interval_stall = [0; 7];
    }

    /// Closes the input vector: under `vector` and `none` it is broadcast as one unit;
    /// then its merge is booked.
    pub fn end_vector(&mut self) {
        debug_assert!(self.interval_ous == 0, "end_interval before end_vector");
        if !self.per_interval {
            Self::push(
                &mut self.free,
                &mut self.recent,
                self.depth,
                &self.vector,
                &mut self.issue_total,
            );
            self.vector.iter_mut().for_each(|v| *v = 0);
        }
        self.book_merge();
    }

    /// One unit into every queue, and every crossbar's issue of it.
    fn push(
        free: &mut [u64],
        recent: &mut VecDeque<u64>,
        depth: QueueDepth,
        issue: &[u64],
        issue_total: &mut u64,
    ) {
        // Queues have room for unit u once every crossbar finished unit u - d.
        let ready = match depth {
            QueueDepth::Finite(d) if recent.len() as u64 == d => recent[0],
            _ => 0,
        };
        let mut all_done = 0;
        for (f, &i) in free.iter_mut().zip(issue) {
            *f = (*f).max(ready) + i;
            all_done = all_done.max(*f);
            *issue_total += i;
        }
        if let QueueDepth::Finite(d) = depth {
            recent.push_back(all_done);
            if recent.len() as u64 > d {
                recent.pop_front();
            }
        }
    }

    /// A vector merges when every crossbar has finished it (G_v); until then each
    /// crossbar that finished it holds its partial sum.
    fn book_merge(&mut self) {
        let (Some(&first), Some(&last)) = (self.free.iter().min(), self.free.iter().max()) else {
            return;
        };
        self.unmerged.push_back(last);
        // Merged before every crossbar's present: never pending again.
        while self.unmerged.front().is_some_and(|&g| g <= first) {
            self.unmerged.pop_front();
        }
        for &f in &self.free {
            let pending = self.unmerged.len() - self.unmerged.partition_point(|&g| g <= f);
            self.psum_peak = self.psum_peak.max(pending as u64);
        }
    }

    /// W: the cycle the last OU's issue ends.
    pub fn busy_time(&self) -> u64 {
        self.free.iter().copied().max().unwrap_or(0)
    }

    /// Layer cycles (W + L - 1, or 0) and the counters.
    pub fn finish(&self) -> (u64, CycleStats) {
        let w = self.busy_time();
        let cycles = crate::layer_cycles(w, self.model.mode());
        let crossbars = self.free.len() as u64;
        let mut stats = CycleStats {
            queue_depth: self.depth,
            // Saturating: many crossbars could exceed u64 crossbar-cycles where the
            // layer's cycles do not.
            crossbar_cycles: cycles.saturating_mul(crossbars),
            ous: self.ous,
            stall: self.stall,
            wait_cycles: w.saturating_mul(crossbars) - self.issue_total,
            psum_peak: self.psum_peak,
            ..CycleStats::default()
        };
        for s in Stage::ALL {
            if s.in_mode(self.model.mode()) {
                stats.stages[s.index()] = true;
                stats.busy[s.index()] = self.ous + self.stall[s.index()];
            }
        }
        (cycles, stats)
    }
}
