//! `sresim merge` holds a few rows per input, not the rows: 10^5 synthetic points merged
//! under a heap bound measured by this test binary's own allocator.

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live now and at most.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Bytes of heap at most, above what was live before, while `f` ran.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = f();
    (t, PEAK.load(Ordering::Relaxed) - base)
}

#[test]
fn merging_1e5_points_holds_neither_rows_nor_bytes() {
    use sweep::{shard, synth};
    let t = tempfile::tempdir().unwrap();
    let (points, rows) = (100_000, 2);
    let shards = synth::write_shards(t.path(), points, rows, 4).unwrap();
    let csv_bytes: u64 = shards
        .iter()
        .map(|d| std::fs::metadata(d.join("points.csv")).unwrap().len())
        .sum();
    let out = t.path().join("merged");
    let (msg, peak) = peak_of(|| shard::merge(&shards, &out, false).unwrap());
    assert!(msg.starts_with("merged 100000 of 100000 points"), "{msg}");
    // Every row is there once, in grid order.
    let mut r = csv::Reader::from_path(out.join("points.csv")).unwrap();
    let meta = synth::meta(points, rows);
    let mut n = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(&rec[0], meta.points[n / rows].id, "row {n}");
        n += 1;
    }
    assert_eq!(n, points * rows);
    // The description of the grid (sweep.json's point list, parsed) is the one thing that
    // grows with the points; the rows (csv_bytes of them) must not be held.
    let (_, grid) = peak_of(|| sweep::store::Meta::read(&out).unwrap());
    let per_point = 64 * points;
    eprintln!("peak {peak} B; sweep.json parsed {grid} B; {csv_bytes} B of CSV");
    assert!(
        peak < grid + per_point + (4 << 20),
        "merge peaked at {peak} B of heap, over {grid} B (the grid) + 64 B a point + 4 MB"
    );
    assert!(
        (peak as u64) < csv_bytes / 2,
        "{peak} B for {csv_bytes} B of CSV"
    );
}
