//! Replays the fuzz corpus (tests/corpus/<target>/, the minimized inputs of the cargo-fuzz
//! targets in fuzz/) through the very entry points the fuzz targets call, without the
//! fuzzer: every input must end in success or a one-line error, never a panic. The
//! entry points are fuzz/src/lib.rs, included here as a module; docs/errors.md says how
//! to run the fuzzers and refresh the corpus.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod entries;

mod common;

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
fn the_seeds_succeed() {
    // The fixed inputs the targets mutate are themselves valid.
    assert_eq!(entries::manifest(entries::TINY_MANIFEST.as_bytes()), Ok(()));
    assert_eq!(entries::npz(entries::tiny_npz()), Ok(()));
    assert_eq!(
        entries::bundle_manifest(entries::TINY_MANIFEST.as_bytes()),
        Ok(())
    );
    let default = include_bytes!("../configs/default.toml");
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
