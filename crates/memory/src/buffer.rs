//! The software-managed on-chip buffer, simulated over an access list.
//!
//! Belady (the default policy): when room is needed, evict the resident data whose next read is farthest in the
//! future, but only data read later than the incoming tile; what does not fit then bypasses
//! the buffer (read straight into the compute, or written through). Room is counted in
//! bytes and a tile may be held in part (some rows of a panel), so the policy is Belady's
//! over bytes: a stack algorithm, whose traffic never grows with capacity, and optimal for
//! read traffic. Data that is dead (overwritten next, or never read again) goes first, and
//! dead dirty data is dropped without a write-back unless it is live-out. LRU, for
//! comparison, evicts the least recently used data and knows only which data is dead, as a
//! framework that frees tensors does. FIFO evicts the data that came on chip first (a hit
//! does not renew it) and knows which data is dead too, as a ring-buffer scratchpad does.
//!
//! Traffic: a read fetches the bytes of the tile that are not resident; dirty bytes are
//! written back when evicted while still to be read or live-out, and live-out dirty bytes are
//! flushed at the end; written bytes that find no room go straight off-chip. Every byte of
//! the access list is either traffic or saved, and a saved byte is credited to the reuse
//! scope of the hit that saved it (a write that never left the chip to the scope of the last
//! hit on that data).

use crate::access::{AccessList, Scope, NEVER};
/// The eviction policy is a key of `[memory]`: it lives with the config ([`crate::config`]).
pub use crate::config::Policy;
use crate::units::Capacity;
use serde::Serialize;
use std::collections::BinaryHeap;

/// One off-chip transfer: `bytes` of tile `tile` from byte `offset` on, read or written,
/// charged to step `step`. Their sum per step is the step's [`StepTraffic`].
///
/// The buffer counts resident bytes, so which bytes is a convention, kept consistent: the
/// resident part of a tile is its first bytes, dirty ones before clean ones. A read miss
/// fetches the bytes after the resident part, a write that finds no room writes its last
/// bytes through, an eviction takes the resident part's last bytes (clean ones first), and
/// the final write-back writes the dirty first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transfer {
    pub step: u32,
    pub tile: u32,
    pub write: bool,
    pub offset: u64,
    pub bytes: u64,
    /// A read miss on data that could have been fetched during the previous step.
    pub prefetchable: bool,
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
    /// Accesses served entirely from the buffer, and the others.
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

struct Sim<'a, F> {
    list: &'a AccessList,
    observe: F,
    free: u64,
    /// Resident bytes of each tile that match off-chip memory, and that do not.
    clean: Vec<u64>,
    dirty: Vec<u64>,
    key: Vec<u64>,
    next: Vec<u32>,
    last_scope: Vec<Scope>,
    last_step: Vec<u32>,
    last_writer: Vec<u32>,
    /// Max-heap of (eviction preference, tile); stale entries are skipped.
    heap: BinaryHeap<(u64, u32)>,
    out: Vec<StepTraffic>,
}

impl<F: FnMut(Transfer)> Sim<'_, F> {
    fn resident(&self, t: usize) -> u64 {
        self.clean[t] + self.dirty[t]
    }

    fn valid(&self, (k, t): (u64, u32)) -> bool {
        self.resident(t as usize) > 0 && self.key[t as usize] == k
    }

    fn credit(&mut self, t: usize, bytes: u64) {
        let s = self.last_step[t] as usize;
        self.out[s].saved[self.last_scope[t].index()] += bytes;
    }

    /// Evicts `bytes` of tile `t`, clean bytes first.
    fn evict(&mut self, t: usize, bytes: u64, step: usize) {
        let c = bytes.min(self.clean[t]);
        let d = bytes - c;
        self.clean[t] -= c;
        self.dirty[t] -= d;
        self.free += bytes;
        if d > 0 {
            if self.next[t] != NEVER || self.list.live_out[t] {
                self.out[step].write_bytes += d;
                (self.observe)(Transfer {
                    step: step as u32,
                    tile: t as u32,
                    write: true,
                    offset: self.dirty[t],
                    bytes: d,
                    prefetchable: false,
                });
            } else {
                self.credit(t, d);
            }
        }
    }

    /// Frees up to `want` bytes by evicting data read later than preference `k`, farthest
    /// first; returns how many bytes are free for the caller (at most `want`).
    fn make_room(&mut self, want: u64, k: u64, step: usize) -> u64 {
        while self.free < want {
            let Some(&(kv, v)) = self.heap.peek() else {
                break;
            };
            if !self.valid((kv, v)) {
                self.heap.pop();
                continue;
            }
            if kv <= k {
                break;
            }
            let v = v as usize;
            let take = (want - self.free).min(self.resident(v));
            self.evict(v, take, step);
            if self.resident(v) == 0 {
                self.heap.pop();
            }
        }
        self.free.min(want)
    }

    fn touch(&mut self, t: usize, k: u64) {
        self.key[t] = k;
        if self.resident(t) > 0 {
            self.heap.push((k, t as u32));
        }
    }
}

/// Simulates the buffer of `capacity` over `list` with `policy`.
pub fn simulate(list: &AccessList, capacity: Capacity, policy: Policy) -> SimResult {
    simulate_observed(list, capacity, policy, |_| {})
}

/// [`simulate`], handing every off-chip transfer to `observe` as it happens (the write-backs
/// of live-out data at the end come last, each charged to the step that last wrote it).
pub fn simulate_observed(
    list: &AccessList,
    capacity: Capacity,
    policy: Policy,
    observe: impl FnMut(Transfer),
) -> SimResult {
    let n = list.tiles.len();
    let mut sim = Sim {
        list,
        observe,
        free: capacity.limit(),
        clean: vec![0; n],
        dirty: vec![0; n],
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
        let t = a.tile as usize;
        let s = a.step as usize;
        let b = list.tiles[t].bytes;
        let held = sim.resident(t);
        let k = match policy {
            Policy::Belady => a.next_read as u64,
            _ if a.next_read == NEVER => u64::MAX,
            Policy::Lru => u64::MAX - 2 - i as u64,
            // A read hit keeps the time the data came on chip; a fetch or a write renews it.
            Policy::Fifo if held > 0 && !a.write => sim.key[t],
            Policy::Fifo => u64::MAX - 2 - i as u64,
        };
        // Resident bytes stay resident at the new preference; eviction may not take them
        // while this access is placed, so their heap entries are made stale (no preference
        // is ever u64::MAX - 1) until the end of it.
        sim.key[t] = u64::MAX - 1;
        sim.next[t] = a.next_read;
        if !a.write {
            let missing = b - held;
            if held > 0 {
                sim.out[s].saved[a.scope.index()] += held;
                sim.last_scope[t] = a.scope;
                sim.last_step[t] = a.step;
            }
            if missing == 0 {
                hits += 1;
            } else {
                misses += 1;
                sim.out[s].read_bytes += missing;
                if a.prefetchable {
                    sim.out[s].prefetchable_read_bytes += missing;
                }
                (sim.observe)(Transfer {
                    step: a.step,
                    tile: a.tile,
                    write: false,
                    offset: held,
                    bytes: missing,
                    prefetchable: a.prefetchable,
                });
                if a.next_read != NEVER {
                    let got = sim.make_room(missing, k, s);
                    sim.free -= got;
                    sim.clean[t] += got;
                }
            }
        } else {
            // The old version is overwritten: its dirty bytes never need to leave the chip.
            if sim.dirty[t] > 0 {
                let d = sim.dirty[t];
                sim.credit(t, d);
            }
            sim.dirty[t] = held;
            sim.clean[t] = 0;
            sim.last_scope[t] = Scope::IntraLayer;
            sim.last_step[t] = a.step;
            sim.last_writer[t] = a.step;
            let got = sim.make_room(b - held, k, s);
            sim.free -= got;
            sim.dirty[t] += got;
            let through = b - held - got;
            sim.out[s].write_bytes += through;
            if through > 0 {
                (sim.observe)(Transfer {
                    step: a.step,
                    tile: a.tile,
                    write: true,
                    offset: held + got,
                    bytes: through,
                    prefetchable: false,
                });
            }
        }
        sim.touch(t, k);
    }
    for t in 0..n {
        let d = sim.dirty[t];
        if d > 0 {
            if list.live_out[t] {
                let w = sim.last_writer[t] as usize;
                sim.out[w].write_bytes += d;
                (sim.observe)(Transfer {
                    step: w as u32,
                    tile: t as u32,
                    write: true,
                    offset: 0,
                    bytes: d,
                    prefetchable: false,
                });
            } else {
                sim.credit(t, d);
            }
        }
    }
    SimResult {
        steps: sim.out,
        hits,
        misses,
    }
}
