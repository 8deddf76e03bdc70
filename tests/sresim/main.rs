//! The binary-level tests of sresim, one test binary: add a test of a command here, as a
//! module of its topic (a new file `NAME.rs` beside this one and `mod NAME;` below), not
//! as a new file in tests/ (each of those is one more binary to link; docs/ARCHITECTURE.md,
//! "Tests"). Run one topic with `cargo test --test sresim errors::`. Fixtures are read by
//! path from the repository root: tests/fixtures, tests/corpus, workloads/, configs/.
// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

/// Running `sresim` and reading what it answers (tests/common/mod.rs).
#[path = "../common/mod.rs"]
mod common;

mod accuracy;
mod accuracy_draws;
mod accuracy_merge;
mod adc_range;
mod bundles;
mod check;
mod checked_first;
mod chip_digital;
mod cli;
mod data_text;
mod did_you_mean;
mod docs;
mod errors;
mod field_errors;
mod file_claims;
mod functional;
mod fuzz_corpus;
mod io_guards;
mod layers;
mod memory_exports;
mod merge_cells;
mod merge_derived;
mod merge_domains;
mod outputs;
mod parquet;
mod plots;
mod quiet;
mod result_sets;
mod sampler;
mod search;
mod shapes;
mod sre_evaluation;
mod studies;
mod sweep;
mod sweep_columns;
mod tech;
mod trained_workloads;
mod transformer;
