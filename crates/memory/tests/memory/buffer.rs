//! The buffer on synthetic access lists: the limits (zero, unbounded), monotonicity in
//! capacity, Belady against LRU, and Belady against an exhaustive search for the optimum.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memory::access::{from_raw, AccessList, NEVER};
use memory::buffer::{simulate, Policy};
use memory::Capacity;
use proptest::prelude::*;
use std::collections::HashMap;

/// Random access lists over `tiles` tiles of `size` bytes (or sizes 1..=4 when `size` is 0).
fn lists(
    max_tiles: u32,
    max_len: usize,
    uniform: bool,
    writes: bool,
) -> impl Strategy<Value = AccessList> {
    (1..=max_tiles).prop_flat_map(move |n| {
        let sizes = if uniform {
            Just(vec![4u64; n as usize]).boxed()
        } else {
            prop::collection::vec(1u64..=8, n as usize).boxed()
        };
        let seq = prop::collection::vec(
            (0..n, prop::bool::weighted(if writes { 0.3 } else { 0.0 })),
            1..=max_len,
        );
        let live = prop::collection::vec(any::<bool>(), n as usize);
        (sizes, live, seq).prop_map(|(s, l, q)| from_raw(&s, &l, &q))
    })
}

fn traffic(l: &AccessList, cap: u64, p: Policy) -> u64 {
    simulate(l, Capacity::bytes(cap), p).traffic()
}

/// Minimum traffic over every buffer schedule, by exhaustive search over (resident, dirty)
/// states, for tiles of equal size `b` and a capacity of `k` tiles. Each access may bypass
/// or allocate, evicting any one resident tile; `fetch_only` counts read misses only.
fn optimum(l: &AccessList, k: usize, fetch_only: bool) -> u64 {
    let b = l.tiles[0].bytes;
    let n = l.tiles.len();
    // Tile t holds data still needed after access i (read later, or live-out).
    let live_after = |i: usize, t: usize| -> bool {
        match l.accesses[i + 1..].iter().find(|a| a.tile as usize == t) {
            Some(a) => !a.write,
            None => l.live_out[t],
        }
    };
    let wb = |dirty: bool, live: bool| if dirty && live && !fetch_only { b } else { 0 };
    let mut states: HashMap<(u32, u32), u64> = HashMap::from([((0, 0), 0)]);
    for (i, a) in l.accesses.iter().enumerate() {
        let x = 1u32 << a.tile;
        let mut next: HashMap<(u32, u32), u64> = HashMap::new();
        let mut put = |s: (u32, u32), c: u64| {
            let e = next.entry(s).or_insert(u64::MAX);
            *e = (*e).min(c);
        };
        for (&(res, dirty), &cost) in &states {
            if res & x != 0 {
                put((res, if a.write { dirty | x } else { dirty }), cost);
                continue;
            }
            let miss = if a.write {
                if fetch_only {
                    0
                } else {
                    b
                }
            } else {
                b
            };
            // Bypass: a read goes straight to the compute, a write straight off-chip.
            put((res, dirty), cost + miss);
            let fetch = if a.write { 0 } else { b };
            let d = if a.write { x } else { 0 };
            if (res.count_ones() as usize) < k {
                put((res | x, dirty | d), cost + fetch);
            } else if k > 0 {
                for y in 0..n {
                    let ym = 1u32 << y;
                    if res & ym != 0 {
                        let c = cost + fetch + wb(dirty & ym != 0, live_after(i, y));
                        put(((res & !ym) | x, (dirty & !ym) | d), c);
                    }
                }
            }
        }
        states = next;
    }
    states
        .iter()
        .map(|(&(res, dirty), &c)| {
            let flush: u64 = (0..n)
                .filter(|&t| res & dirty & (1 << t) != 0 && l.live_out[t])
                .map(|_| if fetch_only { 0 } else { b })
                .sum();
            c + flush
        })
        .min()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn limits_are_compulsory_and_all_accesses(l in lists(8, 40, false, true)) {
        prop_assert_eq!(simulate(&l, Capacity::INFINITE, Policy::Belady).traffic(), l.compulsory_bytes());
        prop_assert_eq!(traffic(&l, 0, Policy::Belady), l.total_bytes());
        prop_assert_eq!(traffic(&l, 0, Policy::Lru), l.total_bytes());
        prop_assert_eq!(traffic(&l, 0, Policy::Fifo), l.total_bytes());
        prop_assert_eq!(simulate(&l, Capacity::INFINITE, Policy::Fifo).traffic(), l.compulsory_bytes());
        prop_assert_eq!(simulate(&l, Capacity::INFINITE, Policy::Lru).traffic(), l.compulsory_bytes());
    }

    #[test]
    fn every_byte_is_traffic_or_saved(l in lists(8, 40, false, true), cap in 0u64..40) {
        for p in Policy::ALL {
            let r = simulate(&l, Capacity::bytes(cap), p);
            let saved: u64 = r.saved_by_scope().iter().sum();
            prop_assert_eq!(r.traffic() + saved, l.total_bytes());
        }
    }

    #[test]
    fn traffic_never_grows_with_capacity(l in lists(8, 40, true, true)) {
        let mut last = u64::MAX;
        for k in 0..=9 {
            let t = traffic(&l, 4 * k, Policy::Belady);
            prop_assert!(t <= last, "capacity {} tiles: {} > {}", k, t, last);
            last = t;
        }
    }

    #[test]
    fn traffic_never_grows_with_capacity_for_mixed_sizes(l in lists(8, 40, false, true)) {
        let mut last = u64::MAX;
        for cap in 0..=40 {
            let t = traffic(&l, cap, Policy::Belady);
            prop_assert!(t <= last, "capacity {}: {} > {}", cap, t, last);
            last = t;
        }
    }

    #[test]
    fn belady_is_never_beaten_by_lru_or_fifo_on_reads(l in lists(8, 40, false, false), cap in 0u64..40) {
        let b = traffic(&l, cap, Policy::Belady);
        prop_assert!(b <= traffic(&l, cap, Policy::Lru));
        prop_assert!(b <= traffic(&l, cap, Policy::Fifo));
    }

    /// With writes Belady can move more bytes in total (`belady_does_not_weigh_write_backs`),
    /// but never fetches more.
    #[test]
    fn belady_never_fetches_more_than_lru_or_fifo(l in lists(8, 40, false, true), cap in 0u64..40) {
        let b = simulate(&l, Capacity::bytes(cap), Policy::Belady).read_bytes();
        for p in [Policy::Lru, Policy::Fifo] {
            prop_assert!(b <= simulate(&l, Capacity::bytes(cap), p).read_bytes(), "{:?}", p);
        }
    }

    #[test]
    fn belady_equals_the_exhaustive_optimum_on_reads(l in lists(5, 12, true, false), k in 0usize..5) {
        prop_assert_eq!(traffic(&l, 4 * k as u64, Policy::Belady), optimum(&l, k, false));
    }

    #[test]
    fn belady_fetches_exactly_the_exhaustive_optimum(l in lists(5, 12, true, true), k in 0usize..5) {
        let r = simulate(&l, Capacity::bytes(4 * k as u64), Policy::Belady);
        prop_assert_eq!(r.read_bytes(), optimum(&l, k, true));
        prop_assert!(r.traffic() >= optimum(&l, k, false));
    }
}

#[test]
fn belady_keeps_the_tile_needed_soonest() {
    // Tiles a, b, c of 4 bytes, buffer of 2 tiles: a b c a b c a b.
    // Belady: miss a, miss b, miss c (next reads a@3, b@4, c@5: c is farthest and bypasses),
    // hit a, hit b, miss c (dead: bypasses), hit a, hit b: 4 misses = 16 bytes.
    // LRU: c evicts a, a evicts b, b evicts c, c misses (dead: bypasses), a and b hit:
    // 6 misses = 24 bytes.
    let seq: Vec<(u32, bool)> = [0, 1, 2, 0, 1, 2, 0, 1]
        .iter()
        .map(|&t| (t, false))
        .collect();
    let l = from_raw(&[4, 4, 4], &[false; 3], &seq);
    assert_eq!(l.accesses[2].next_read, 5);
    assert_eq!(l.accesses[5].next_read, NEVER);
    assert_eq!(traffic(&l, 8, Policy::Belady), 16);
    assert_eq!(traffic(&l, 8, Policy::Lru), 24);
}

#[test]
fn dead_dirty_data_is_dropped_and_live_out_data_written_once() {
    // Tile 0 is written, read, and dead (not live-out): it never leaves the chip.
    // Tile 1 is written twice (live-out): only the final version is written back.
    let l = from_raw(
        &[4, 4],
        &[false, true],
        &[(0, true), (0, false), (1, true), (1, true)],
    );
    let r = simulate(&l, Capacity::bytes(8), Policy::Belady);
    assert_eq!(r.read_bytes(), 0);
    assert_eq!(r.write_bytes(), 4);
    // With no room, every write goes off-chip and the read of tile 0 is fetched back.
    assert_eq!(traffic(&l, 0, Policy::Belady), 16);
}

#[test]
fn belady_does_not_weigh_write_backs() {
    // The limit of Belady with dirty data (docs/memory.md): buffer of 2 tiles,
    // W1 R0 R1 R2 R0 R2 R1. At R2 the farthest next read is tile 1's (@6), so Belady evicts
    // dirty tile 1: write-back 4 + refetch 4, plus R0 4 and R2 4 = 16 bytes. LRU evicts clean
    // tile 0 instead and pays R0 4 + R2 4 + R0 again 4 = 12 bytes. (On the zoo networks
    // Belady never loses to LRU: tests/memory/model.rs.)
    let seq = [
        (1, true),
        (0, false),
        (1, false),
        (2, false),
        (0, false),
        (2, false),
        (1, false),
    ];
    let l = from_raw(&[4, 4, 4], &[false; 3], &seq);
    assert_eq!(traffic(&l, 8, Policy::Belady), 16);
    assert_eq!(traffic(&l, 8, Policy::Lru), 12);
}

#[test]
fn fifo_evicts_the_oldest_data_even_when_it_is_hot() {
    // Tiles a, b, c of 1 byte, buffer of 2 bytes: a b a c a b a c a (next reads: a@2, b@5,
    // a@4, c@7, a@6, b never, a@8, c never, a never).
    // LRU: c evicts b (used at 1, a at 2); b misses again (dead: bypasses); a, c hit:
    //   misses a b c b = 4 bytes.
    // FIFO: c evicts a (on chip since 0, b since 1); a misses and evicts b (the oldest now);
    //   b misses (dead: bypasses); a, c, a hit: misses a b c a b = 5 bytes.
    // Belady: c is read farthest (@7) and bypasses; a, b hit; c misses again: 4 bytes.
    let seq: Vec<(u32, bool)> = [0, 1, 0, 2, 0, 1, 0, 2, 0]
        .iter()
        .map(|&t| (t, false))
        .collect();
    let l = from_raw(&[1, 1, 1], &[false; 3], &seq);
    assert_eq!(traffic(&l, 2, Policy::Lru), 4);
    assert_eq!(traffic(&l, 2, Policy::Fifo), 5);
    assert_eq!(traffic(&l, 2, Policy::Belady), 4);
    assert_eq!(Policy::parse(" FIFO "), Ok(Policy::Fifo));
    assert!(Policy::parse("random")
        .unwrap_err()
        .contains("belady, lru or fifo"));
}
