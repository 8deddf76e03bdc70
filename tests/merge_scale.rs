//! `sresim merge` holds a few rows per input, not the rows: 10^5 synthetic points merged
//! under a heap bound measured by this test binary's own allocator. A binary of its own,
//! the one root test outside tests/sresim/: the allocator counts every thread's heap, so
//! no other test may run in this process.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

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
    let csv = sim::format::Format::Csv;
    let (msg, peak) = peak_of(|| shard::merge(&shards, &out, false, csv).unwrap());
    assert!(msg.starts_with("merged 100000 of 100000 points"), "{msg}");
    // Every row is there once, in grid order.
    let mut r = csv::Reader::from_path(out.join("points.csv")).unwrap();
    let ids = synth::meta(points, rows).ids();
    let mut n = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(rec[0], ids.text(n / rows), "row {n}");
        n += 1;
    }
    assert_eq!(n, points * rows);
    // sweep.json lists no point: it grows with the grid's axis values (6,258 of them
    // here, 6,250 seeds), not with the points they make.
    let json = std::fs::metadata(out.join("sweep.json")).unwrap().len();
    assert!(json < 4096 + 16 * 6258, "sweep.json of {json} B");
    // The ids regenerated from the grid and the indexes grow with the points (some 60 B
    // a point); the rows (csv_bytes of them) must not be held.
    let per_point = 64 * points;
    eprintln!("peak {peak} B; {csv_bytes} B of CSV");
    assert!(
        peak < per_point + (4 << 20),
        "merge peaked at {peak} B of heap, over 64 B a point + 4 MB"
    );
    assert!(
        (peak as u64) < csv_bytes / 2,
        "{peak} B for {csv_bytes} B of CSV"
    );
    // To Parquet, and from Parquet back to CSV: one row group (16,384 rows) more.
    let pq = t.path().join("pq");
    let parquet = sim::format::Format::Parquet;
    let (_, peak) = peak_of(|| shard::merge(&shards, &pq, false, parquet).unwrap());
    eprintln!("to Parquet: peak {peak} B");
    assert!(peak < per_point + (32 << 20), "to Parquet: {peak} B");
    let back = t.path().join("back");
    let (_, peak) = peak_of(|| shard::merge(std::slice::from_ref(&pq), &back, false, csv).unwrap());
    eprintln!("from Parquet: peak {peak} B");
    assert!(peak < per_point + (32 << 20), "from Parquet: {peak} B");
    assert_eq!(
        std::fs::read(out.join("points.csv")).unwrap(),
        std::fs::read(back.join("points.csv")).unwrap()
    );
}
