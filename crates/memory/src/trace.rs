//! The off-chip traffic of one (capacity, bandwidth) point as DRAM requests, for a DRAM
//! simulator (docs/memory.md, "Exports"): an address layout of the tensors, the buffer's
//! transfers split into 64-byte requests, and an issue time for each. Pure: the caller
//! formats and writes the requests as they come.
//!
//! Layout: tensors live-in first, then the others, each in tensor order, contiguous and
//! aligned to [`TENSOR_ALIGN`] bytes from address 0; a tile sits at its offset within its
//! tensor, and a transfer at its offset within the tile ([`Transfer`]). A transfer is split
//! from its first byte into [`REQUEST_BYTES`] requests; the last one covers the remainder.
//!
//! Timing: steps run one after another, each starting when the previous one ends (the
//! point's step times). A step's own requests issue back to back at the point's bandwidth
//! from the start of the step, filling its memory time; the requests prefetched for the
//! next step (its first prefetchable read misses, up to the prefetched bytes, rounded up to
//! whole requests) issue the same way right after them, in the step's slack.

use crate::access::AccessList;
use crate::buffer::{self, Policy, SimResult, Transfer};
use crate::exec::{self, StepTime};
use crate::model::Model;
use crate::units::Capacity;
use std::ops::Range;

/// Bytes of one DRAM request (a 64-byte burst).
pub const REQUEST_BYTES: u64 = 64;
/// Alignment of every tensor's first byte (a 4 KiB page).
pub const TENSOR_ALIGN: u64 = 4096;

/// Where every tile lives in the off-chip address space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressLayout {
    /// First address of every tile.
    pub tile_addr: Vec<u64>,
    /// First address of every tensor.
    pub tensor_addr: Vec<u64>,
    /// One past the last byte of the last tensor.
    pub end: u64,
}

impl AddressLayout {
    /// The layout of `list`'s tensors; `live_in[i]` says whether tensor `i` is live-in.
    pub fn new(list: &AccessList, live_in: &[bool]) -> AddressLayout {
        let tensors = list.tensor_tiles.len();
        let size = |i: usize| -> u64 {
            list.tiles[list.tensor_tiles[i].start as usize..list.tensor_tiles[i].end as usize]
                .iter()
                .map(|t| t.bytes)
                .sum()
        };
        let first: Vec<usize> = (0..tensors).filter(|&i| live_in[i]).collect();
        let rest = (0..tensors).filter(|&i| !live_in[i]);
        let mut tensor_addr = vec![0; tensors];
        let mut next = 0u64;
        for i in first.into_iter().chain(rest) {
            tensor_addr[i] = next;
            next = (next + size(i)).next_multiple_of(TENSOR_ALIGN);
        }
        let mut tile_addr = vec![0; list.tiles.len()];
        for (i, r) in list.tensor_tiles.iter().enumerate() {
            let mut a = tensor_addr[i];
            for t in r.clone() {
                tile_addr[t as usize] = a;
                a += list.tiles[t as usize].bytes;
            }
        }
        AddressLayout {
            tile_addr,
            tensor_addr,
            end: next,
        }
    }

    /// Addresses of tile `t` of `list`.
    pub fn tile_range(&self, list: &AccessList, t: u32) -> Range<u64> {
        let a = self.tile_addr[t as usize];
        a..a + list.tiles[t as usize].bytes
    }
}

/// One DRAM request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub write: bool,
    pub addr: u64,
    /// Bytes of the transfer it carries: [`REQUEST_BYTES`], less for the last one.
    pub bytes: u64,
    /// Step whose traffic it is (a prefetched read belongs to the step that reads it).
    pub step: u32,
    /// Issue cycle at the requested clock; never decreases along the trace.
    pub cycle: u64,
}

/// The buffer's transfers at one point, grouped by step, and the point's step times.
#[derive(Debug, Clone, PartialEq)]
pub struct TracePoint {
    pub sim: SimResult,
    /// Every transfer, steps in order (within a step, in the order the buffer made them).
    pub transfers: Vec<Transfer>,
    pub times: Vec<StepTime>,
    pub bandwidth: f64,
}

impl TracePoint {
    /// Simulates `list` at `capacity` with `policy` and times it at `bandwidth`.
    pub fn new(
        list: &AccessList,
        capacity: Capacity,
        policy: Policy,
        compute: &[f64],
        bandwidth: f64,
        prefetch: bool,
    ) -> TracePoint {
        let mut transfers = Vec::new();
        let sim = buffer::simulate_observed(list, capacity, policy, |t| transfers.push(t));
        transfers.sort_by_key(|t| t.step);
        let times = exec::time_steps(list, &sim, compute, capacity, bandwidth, prefetch);
        TracePoint {
            sim,
            transfers,
            times,
            bandwidth,
        }
    }

    /// The point (`capacity`, `bandwidth`) of `model`, with its configured policy.
    pub fn of(model: &Model, capacity: Capacity, bandwidth: f64) -> TracePoint {
        let c = &model.config;
        TracePoint::new(
            &model.list,
            capacity,
            c.policy,
            &model.compute,
            bandwidth,
            c.prefetch,
        )
    }

    fn step_transfers(&self, s: usize) -> &[Transfer] {
        let lo = self.transfers.partition_point(|t| (t.step as usize) < s);
        let hi = self.transfers.partition_point(|t| (t.step as usize) <= s);
        &self.transfers[lo..hi]
    }

    /// The requests of step `s`, each with whether it was prefetched during step `s - 1`.
    fn step_requests(&self, layout: &AddressLayout, s: usize, mut f: impl FnMut(Request, bool)) {
        let mut prefetch_left = self.times[s].prefetched_bytes;
        for tr in self.step_transfers(s) {
            let mut addr = layout.tile_addr[tr.tile as usize] + tr.offset;
            let end = addr + tr.bytes;
            while addr < end {
                let bytes = REQUEST_BYTES.min(end - addr);
                let prefetched = tr.prefetchable && !tr.write && prefetch_left > 0;
                if prefetched {
                    prefetch_left = prefetch_left.saturating_sub(bytes);
                }
                let r = Request {
                    write: tr.write,
                    addr,
                    bytes,
                    step: tr.step,
                    cycle: 0,
                };
                f(r, prefetched);
                addr += bytes;
            }
        }
    }

    /// Checks that every issue cycle at `clock_hz` fits u64 (a cast would saturate each
    /// at 2^64 - 1): the last request is issued before the point's time plus one step's
    /// memory time. Call before [`TracePoint::requests`].
    pub fn check_clock(&self, clock_hz: f64) -> Result<(), bounds::finite::NotFinite> {
        let total: f64 = self.times.iter().map(|t| t.time_s + t.memory_s).sum();
        bounds::finite::to_count(|| "the last issue cycle".into(), total * clock_hz, u64::MAX)
            .map(|_| ())
    }

    /// Every request of the point in issue order, with its cycle at `clock_hz`.
    pub fn requests(&self, layout: &AddressLayout, clock_hz: f64, mut emit: impl FnMut(Request)) {
        let n = self.times.len();
        let mut start = 0.0f64;
        let mut last = 0u64;
        let bw = self.bandwidth;
        let mut issue = |mut r: Request, at: f64| {
            r.cycle = ((at * clock_hz).floor() as u64).max(last);
            last = r.cycle;
            emit(r);
        };
        for s in 0..n {
            let mut sent = 0u64;
            self.step_requests(layout, s, |r, prefetched| {
                if !prefetched {
                    issue(r, start + sent as f64 / bw);
                    sent += r.bytes;
                }
            });
            if s + 1 < n {
                let tail = start + self.times[s].memory_s;
                let mut sent = 0u64;
                self.step_requests(layout, s + 1, |r, prefetched| {
                    if prefetched {
                        issue(r, tail + sent as f64 / bw);
                        sent += r.bytes;
                    }
                });
            }
            start += self.times[s].time_s;
        }
    }
}
