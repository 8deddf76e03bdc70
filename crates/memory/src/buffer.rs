//! The software-managed on-chip buffer, simulated over an access list.
//!
//! Belady: on a miss or a write that needs room, evict the resident tiles whose next read is
//! farthest in the future, but only those farther than the incoming tile's own next read;
//! if that does not make room, the incoming tile bypasses the buffer (read straight into
//! the compute, or written through). Data that is dead (overwritten next, or never read
//! again) is the first to go, and a dead dirty tile is dropped without a write-back unless it
//! is live-out. LRU (for comparison) evicts the least recently used tile and knows only which
//! data is dead, as a framework that frees tensors does.
//!
//! Traffic: a read miss fetches the tile; a dirty tile is written back when it is evicted
//! while still to be read or live-out, and live-out dirty tiles are flushed at the end; a
//! bypassed write goes straight off-chip. Every byte of the access list is either traffic or
//! saved, and a saved byte is credited to the reuse scope of the hit that saved it (a write
//! that never left the chip to the scope of the last hit on that data).

use crate::access::{AccessList, Scope, NEVER};
use crate::units::Capacity;
use serde::Serialize;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    Belady,
    Lru,
}

/// Off-chip traffic caused by one step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StepTraffic {
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Read misses on data that could have been fetched during the previous step.
    pub prefetchable_read_bytes: u64,
    /// Bytes saved by buffer hits, per [`Scope`] index.
    pub saved: [u64; 6],
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimResult {
    pub steps: Vec<StepTraffic>,
    pub hits: u64,
    pub misses: u64,
}

impl SimResult {
    pub fn read_bytes(&self) -> u64 {
        self.steps.iter().map(|s| s.read_bytes).sum()
    }

    pub fn write_bytes(&self) -> u64 {
        self.steps.iter().map(|s| s.write_bytes).sum()
    }

    pub fn traffic(&self) -> u64 {
        self.read_bytes() + self.write_bytes()
    }

    pub fn saved_by_scope(&self) -> [u64; 6] {
        let mut v = [0; 6];
        for s in &self.steps {
            for (a, b) in v.iter_mut().zip(s.saved) {
                *a += b;
            }
        }
        v
    }
}

struct Sim<'a> {
    list: &'a AccessList,
    capacity: u64,
    free: u64,
    resident: Vec<bool>,
    dirty: Vec<bool>,
    key: Vec<u64>,
    next: Vec<u32>,
    last_scope: Vec<Scope>,
    last_step: Vec<u32>,
    last_writer: Vec<u32>,
    /// Max-heap of (eviction preference, tile); stale entries are skipped.
    heap: BinaryHeap<(u64, u32)>,
    out: Vec<StepTraffic>,
}

impl Sim<'_> {
    fn bytes(&self, t: u32) -> u64 {
        self.list.tiles[t as usize].bytes
    }

    fn valid(&self, (k, t): (u64, u32)) -> bool {
        self.resident[t as usize] && self.key[t as usize] == k
    }

    fn top(&mut self) -> Option<(u64, u32)> {
        while let Some(&e) = self.heap.peek() {
            if self.valid(e) {
                return Some(e);
            }
            self.heap.pop();
        }
        None
    }

    fn credit(&mut self, t: u32, bytes: u64) {
        let s = self.last_step[t as usize] as usize;
        self.out[s].saved[self.last_scope[t as usize].index()] += bytes;
    }

    fn evict(&mut self, t: u32, step: usize) {
        let i = t as usize;
        let b = self.bytes(t);
        self.resident[i] = false;
        self.free += b;
        if self.dirty[i] {
            self.dirty[i] = false;
            if self.next[i] != NEVER || self.list.live_out[i] {
                self.out[step].write_bytes += b;
            } else {
                self.credit(t, b);
            }
        }
    }

    /// Makes room for tile `t` with preference `k`; false if it bypasses the buffer.
    fn insert(&mut self, t: u32, k: u64, step: usize) -> bool {
        let b = self.bytes(t);
        if b > self.capacity {
            return false;
        }
        let mut victims = Vec::new();
        let mut room = self.free;
        while room < b {
            match self.top() {
                Some((kv, v)) if kv > k => {
                    self.heap.pop();
                    room += self.bytes(v);
                    victims.push((kv, v));
                }
                _ => break,
            }
        }
        if room < b {
            self.heap.extend(victims);
            return false;
        }
        for (_, v) in victims {
            self.evict(v, step);
        }
        self.free -= b;
        self.resident[t as usize] = true;
        self.key[t as usize] = k;
        self.heap.push((k, t));
        true
    }
}

/// Simulates the buffer of `capacity` over `list` with `policy`.
pub fn simulate(list: &AccessList, capacity: Capacity, policy: Policy) -> SimResult {
    let n = list.tiles.len();
    let cap = capacity.limit();
    let mut sim = Sim {
        list,
        capacity: cap,
        free: cap,
        resident: vec![false; n],
        dirty: vec![false; n],
        key: vec![0; n],
        next: vec![NEVER; n],
        last_scope: vec![Scope::IntraLayer; n],
        last_step: vec![0; n],
        last_writer: vec![0; n],
        heap: BinaryHeap::new(),
        out: vec![StepTraffic::default(); list.step_ranges.len()],
    };
    let (mut hits, mut misses) = (0, 0);
    for (i, a) in list.accesses.iter().enumerate() {
        let t = a.tile;
        let ti = t as usize;
        let s = a.step as usize;
        let b = sim.bytes(t);
        let k = match policy {
            Policy::Belady => a.next_read as u64,
            Policy::Lru if a.next_read == NEVER => u64::MAX,
            Policy::Lru => u64::MAX - 1 - i as u64,
        };
        if !a.write {
            if sim.resident[ti] {
                hits += 1;
                sim.out[s].saved[a.scope.index()] += b;
                sim.last_scope[ti] = a.scope;
                sim.last_step[ti] = a.step;
                sim.key[ti] = k;
                sim.heap.push((k, t));
            } else {
                misses += 1;
                sim.out[s].read_bytes += b;
                if a.prefetchable {
                    sim.out[s].prefetchable_read_bytes += b;
                }
                if a.next_read != NEVER {
                    sim.insert(t, k, s);
                }
            }
            sim.next[ti] = a.next_read;
        } else {
            if sim.resident[ti] {
                if sim.dirty[ti] {
                    // The previous version is overwritten on chip: its write-back is saved.
                    sim.credit(t, b);
                }
                sim.key[ti] = k;
                sim.heap.push((k, t));
            } else if !sim.insert(t, k, s) {
                sim.out[s].write_bytes += b;
                sim.next[ti] = a.next_read;
                continue;
            }
            sim.dirty[ti] = true;
            sim.next[ti] = a.next_read;
            sim.last_scope[ti] = Scope::IntraLayer;
            sim.last_step[ti] = a.step;
            sim.last_writer[ti] = a.step;
        }
    }
    for t in 0..n {
        if sim.resident[t] && sim.dirty[t] {
            let b = list.tiles[t].bytes;
            if list.live_out[t] {
                let w = sim.last_writer[t] as usize;
                sim.out[w].write_bytes += b;
            } else {
                sim.credit(t as u32, b);
            }
        }
    }
    SimResult {
        steps: sim.out,
        hits,
        misses,
    }
}
