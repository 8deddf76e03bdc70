//! Replays the fuzz corpus (tests/corpus/<target>/, the minimized inputs of the cargo-fuzz
//! targets in fuzz/) through the very entry points the fuzz targets call, without the
//! fuzzer: every input must end in success or a one-line error, never a panic. The
//! entry points are fuzz/src/lib.rs, included here as a module; docs/errors.md says how
//! to run the fuzzers and refresh the corpus.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod entries;

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

type Entry = fn(&[u8]) -> Result<(), String>;

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let files = common::tracked_files(&root, &format!("tests/corpus/{target}"));
    assert!(!files.is_empty(), "tests/corpus/{target}: no tracked file");
    let mut files: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(p).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Feeds every corpus file of `target` to `entry`; returns (successes, errors).
fn replay(target: &str, entry: Entry) -> (usize, usize) {
    let files = corpus(target);
    assert!(!files.is_empty(), "tests/corpus/{target} is empty");
    let (mut ok, mut err) = (0, 0);
    let mut problems = Vec::new();
    for (name, bytes) in &files {
        match catch_unwind(AssertUnwindSafe(|| entry(bytes))) {
            Ok(Ok(())) => ok += 1,
            Ok(Err(msg)) => {
                err += 1;
                if msg.is_empty() || msg.contains('\n') {
                    problems.push(format!("{name}: not a one-line error: {msg:?}"));
                }
            }
            Err(_) => problems.push(format!("{name}: panicked")),
        }
    }
    assert!(problems.is_empty(), "{target}:\n{}", problems.join("\n"));
    (ok, err)
}

#[test]
fn manifest_corpus() {
    let (ok, err) = replay("manifest", entries::manifest);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

#[test]
fn config_corpus() {
    let (ok, err) = replay("config", entries::config);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

#[test]
fn npz_corpus() {
    let (ok, err) = replay("npz", entries::npz);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

#[test]
fn bundle_manifest_corpus() {
    let (ok, err) = replay("bundle_manifest", entries::bundle_manifest);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

#[test]
fn graph_corpus() {
    let (ok, err) = replay("graph", entries::graph);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

#[test]
fn parquet_corpus() {
    let (ok, err) = replay("parquet", entries::parquet);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

#[test]
fn sweep_json_corpus() {
    let (ok, err) = replay("sweep_json", entries::sweep_json);
    assert!(ok >= 1 && err > 0, "{ok} ok, {err} errors");
}

/// The hand-written hostile inputs of the three newer targets end in the errors of the
/// one bound check and the one finite gate (docs/errors.md), not merely in some error.
#[test]
fn hostile_sizes_and_figures_meet_their_guard() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let cases: [(&str, Entry, &str); 13] = [
        ("graph/pad_wraps.json", entries::graph, "the padded size"),
        (
            "graph/pad_over_2e48.json",
            entries::graph,
            "more than the limit of 281474976710656",
        ),
        (
            "graph/pad_over_memory_cap.json",
            entries::graph,
            "(limits.max_layer_bytes)",
        ),
        ("graph/reshape_wraps.json", entries::graph, "(Reshape -> q)"),
        (
            "graph/pool_window_2e62.json",
            entries::graph,
            "kernel_shape: a window of",
        ),
        (
            "graph/pool_reads_4e12.json",
            entries::graph,
            "read more than 4294967296",
        ),
        (
            "graph/clip_beyond_f32.json",
            entries::graph,
            "within the float32 range",
        ),
        (
            "graph/output_overflows_to_inf.json",
            entries::graph,
            "output[3] would be inf",
        ),
        (
            "graph/softmax_of_inf_is_nan.json",
            entries::graph,
            "would be NaN",
        ),
        (
            "parquet/row_group_2e40_rows.parquet",
            entries::parquet,
            "row group 0: declares 1099511627776 rows",
        ),
        (
            "parquet/row_group_negative_rows.parquet",
            entries::parquet,
            "row group 0: declares -3 rows: a corrupt file",
        ),
        (
            "sweep_json/count_wraps_to_0.json",
            entries::sweep_json,
            "point_count: 0 is not the number",
        ),
        (
            "sweep_json/count_3000_cubed.json",
            entries::sweep_json,
            "more than the limit of 67108864",
        ),
    ];
    for (file, entry, want) in cases {
        let e = entry(&std::fs::read(dir.join(file)).unwrap())
            .err()
            .unwrap_or_else(|| panic!("{file}: no error"));
        assert!(e.contains(want), "{file}: {e}");
    }
}

#[test]
fn the_seeds_succeed() {
    // The fixed inputs the targets mutate are themselves valid.
    assert_eq!(entries::manifest(entries::TINY_MANIFEST.as_bytes()), Ok(()));
    assert_eq!(entries::npz(entries::tiny_npz()), Ok(()));
    assert_eq!(
        entries::bundle_manifest(entries::TINY_MANIFEST.as_bytes()),
        Ok(())
    );
    assert_eq!(entries::graph(entries::GRAPH_MANIFEST.as_bytes()), Ok(()));
    let default = include_bytes!("../../configs/default.toml");
    assert_eq!(entries::config(default), Ok(()));
    for m in [
        "lenet5-mnist",
        "mobilenetv2-nsfwjs",
        "ppocr-cls-mobilenetv3",
    ] {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("workloads")
            .join(m)
            .join("manifest.json");
        assert_eq!(entries::manifest(&std::fs::read(p).unwrap()), Ok(()), "{m}");
    }
}
