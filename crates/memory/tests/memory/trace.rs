//! The exports on synthetic lists: the DRAM requests of a point carry exactly its traffic,
//! step by step, in 64-byte pieces inside the tiles they move; the address layout; the
//! records of the access list and the prefetch list.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory::access::{from_raw, AccessList};
use memory::buffer::Policy;
use memory::trace::{AddressLayout, TracePoint, REQUEST_BYTES, TENSOR_ALIGN};
use memory::Capacity;
use proptest::prelude::*;

/// Random lists of up to 8 tiles of 1..=300 bytes (several requests each), with writes.
fn lists() -> impl Strategy<Value = (AccessList, Vec<bool>)> {
    (1u32..=8).prop_flat_map(|n| {
        let sizes = prop::collection::vec(1u64..=300, n as usize);
        let seq = prop::collection::vec((0..n, prop::bool::weighted(0.3)), 1..=40);
        let live_out = prop::collection::vec(any::<bool>(), n as usize);
        let live_in = prop::collection::vec(any::<bool>(), n as usize);
        (sizes, live_out, seq, live_in).prop_map(|(s, l, q, i)| (from_raw(&s, &l, &q), i))
    })
}

fn policy() -> impl Strategy<Value = Policy> {
    prop::sample::select(Policy::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn requests_carry_exactly_the_traffic_of_every_step(
        (l, live_in) in lists(),
        cap in 0u64..1500,
        p in policy(),
        compute in prop::collection::vec(0.0f64..2e-6, 40),
        prefetch in any::<bool>(),
    ) {
        let layout = AddressLayout::new(&l, &live_in);
        let steps = l.step_ranges.len();
        let tp = TracePoint::new(&l, Capacity::bytes(cap), p, &compute[..steps], 1e9, prefetch);
        let mut read = vec![0u64; steps];
        let mut write = vec![0u64; steps];
        let mut count = 0u64;
        let mut last_cycle = 0;
        tp.requests(&layout, 1e9, |r| {
            let s = r.step as usize;
            if r.write { write[s] += r.bytes } else { read[s] += r.bytes }
            count += 1;
            assert!(r.cycle >= last_cycle, "cycles go back");
            last_cycle = r.cycle;
            assert!(r.bytes >= 1 && r.bytes <= REQUEST_BYTES);
            // Inside one tile.
            let t = (0..l.tiles.len() as u32)
                .find(|&t| layout.tile_range(&l, t).contains(&r.addr))
                .expect("request outside every tile");
            assert!(r.addr + r.bytes <= layout.tile_range(&l, t).end);
        });
        for (s, st) in tp.sim.steps.iter().enumerate() {
            prop_assert_eq!(read[s], st.read_bytes, "read bytes of step {}", s);
            prop_assert_eq!(write[s], st.write_bytes, "write bytes of step {}", s);
        }
        let rounded: u64 = tp.transfers.iter().map(|t| t.bytes.div_ceil(REQUEST_BYTES)).sum();
        prop_assert_eq!(count, rounded);
        for t in &tp.transfers {
            prop_assert!(t.bytes > 0 && t.offset + t.bytes <= l.tiles[t.tile as usize].bytes);
        }
        // The last request issues before the step sequence ends.
        let total: f64 = tp.times.iter().map(|t| t.time_s).sum();
        prop_assert!(last_cycle as f64 <= (total * 1e9).ceil());
    }

    #[test]
    fn tensors_are_aligned_disjoint_and_live_in_first((l, live_in) in lists()) {
        let layout = AddressLayout::new(&l, &live_in);
        let mut spans: Vec<(u64, u64, bool)> = (0..l.tensor_tiles.len())
            .map(|i| {
                let r = &l.tensor_tiles[i];
                let lo = layout.tile_addr[r.start as usize];
                let hi = layout.tile_range(&l, r.end - 1).end;
                (lo, hi, live_in[i])
            })
            .collect();
        spans.sort();
        for (i, w) in spans.windows(2).enumerate() {
            prop_assert!(w[0].1 <= w[1].0, "tensors {} and {} overlap", i, i + 1);
            prop_assert!(w[0].2 || !w[1].2, "a live-in tensor after a temporary one");
        }
        for &(lo, _, _) in &spans {
            prop_assert_eq!(lo % TENSOR_ALIGN, 0);
        }
        prop_assert_eq!(spans[0].0, 0);
        prop_assert_eq!(layout.end, spans.last().unwrap().1.next_multiple_of(TENSOR_ALIGN));
    }
}

#[test]
fn a_partial_transfer_takes_the_bytes_that_are_not_resident() {
    // One 200-byte tile read twice with a 72-byte buffer: the first read fetches 200 bytes
    // (keeping the first 72), the second fetches the other 128: requests of 64 at offsets 72
    // and 136. Tile 1 (live-in) comes first in the layout, at 0; tile 0
    // at 4096.
    let l = from_raw(
        &[200, 8],
        &[false, false],
        &[(0, false), (1, false), (0, false)],
    );
    let layout = AddressLayout::new(&l, &[false, true]);
    assert_eq!(layout.tile_addr, [4096, 0]);
    let tp = TracePoint::new(
        &l,
        Capacity::bytes(72),
        Policy::Belady,
        &[0.0; 3],
        64e9,
        false,
    );
    let mut got = Vec::new();
    tp.requests(&layout, 1e9, |r| {
        got.push((r.step, r.addr, r.bytes, r.cycle))
    });
    // At 64 GB/s and 1 GHz a request issues every cycle from the start of its step; step 0
    // lasts 200 B / 64 GB/s = 3.125 ns, step 1 0.125 ns.
    assert_eq!(
        got,
        [
            (0, 4096, 64, 0),
            (0, 4160, 64, 1),
            (0, 4224, 64, 2),
            (0, 4288, 8, 3),
            (1, 0, 8, 3),
            (2, 4096 + 72, 64, 3),
            (2, 4096 + 136, 64, 4),
        ]
    );
}

#[test]
fn prefetched_reads_issue_in_the_previous_steps_slack() {
    use memory::builder::GraphBuilder;
    use memory::{ComputeSource, MemoryConfig, Model};
    // Four fc layers of 64 units on a batch of 8, 2 B per element: 8 KiB weights, 1 KiB
    // activations; compute slow enough (1 GMAC/s) to leave slack at 1 GB/s.
    let mut b = GraphBuilder::new("mlp", 8);
    let mut y = b.input("x", vec![8, 64]);
    for i in 0..4 {
        y = b.fc(&format!("fc{i}"), y, 64, true);
    }
    b.output(y);
    let cfg = MemoryConfig {
        peak_macs_per_s: 1e9,
        elementwise_ops_per_s: 1e9,
        ..MemoryConfig::default()
    };
    let m =
        Model::new(&b.finish(), &cfg, &ComputeSource::Peak).expect("a small graph fits the limits");
    let live_in: Vec<bool> = m.step.tensors.iter().map(|t| t.live_in).collect();
    let layout = AddressLayout::new(&m.list, &live_in);
    let clock = 1e9;
    for cap in [Capacity::bytes(16 * 1024), Capacity::INFINITE] {
        let tp = TracePoint::of(&m, cap, 1e9);
        let prefetched: u64 = tp.times.iter().map(|t| t.prefetched_bytes).sum();
        assert!(prefetched > 0, "no slack to prefetch into");
        let mut starts = vec![0.0f64];
        for t in &tp.times {
            starts.push(starts.last().unwrap() + t.time_s);
        }
        let cycle = |t: f64| (t * clock).floor() as u64;
        let steps = tp.times.len();
        let (mut read, mut write, mut early) = (vec![0; steps], vec![0; steps], vec![0; steps]);
        tp.requests(&layout, clock, |r| {
            let s = r.step as usize;
            if r.write {
                write[s] += r.bytes;
            } else {
                read[s] += r.bytes;
            }
            if r.cycle < cycle(starts[s]) {
                // Fetched ahead: during the previous step, after that step's own transfers.
                assert!(s > 0 && !r.write);
                assert!(r.cycle + 1 >= cycle(starts[s - 1] + tp.times[s - 1].memory_s));
                early[s] += r.bytes;
            } else {
                assert!(r.cycle <= cycle(starts[s + 1]));
            }
        });
        for (s, st) in tp.sim.steps.iter().enumerate() {
            assert_eq!(
                (read[s], write[s]),
                (st.read_bytes, st.write_bytes),
                "step {s}"
            );
            // The prefetched bytes, rounded up to whole requests (at most one more request).
            let p = tp.times[s].prefetched_bytes;
            assert!(
                early[s] >= p && early[s] < p + 64,
                "step {s}: {} vs {p}",
                early[s]
            );
        }
    }
}
