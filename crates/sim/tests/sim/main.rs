//! The sim crate's integration tests, one binary: add a test of the run and accuracy drivers
//! here, as a module of its topic (a new file `NAME.rs` beside this one and `mod NAME;`
//! below), not as a new file in tests/ (each of those is one more binary to link;
//! docs/ARCHITECTURE.md, "Tests"). Run one topic with `cargo test -p sim --test sim accuracy_shards::`.
// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod accuracy_batches;
mod accuracy_shards;
mod device_presets;
mod device_sources;
mod digital_heads;
mod digital_run;
mod drawn_records;
mod interval_coverage;
mod memory_run;
mod windowed_run;
