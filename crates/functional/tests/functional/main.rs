//! The functional crate's integration tests, one binary: add a test of the functional
//! datapath here, as a module of its topic (a new file `NAME.rs` beside this one and
//! `mod NAME;` below), not as a new file in tests/ (each of those is one more binary to
//! link; docs/ARCHITECTURE.md, "Tests"). A test that sets a process-wide limit goes in
//! tests/limits/ instead. Run one topic with `cargo test -p functional --test functional device::`.
// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

/// The random small layers and configurations of crates/engine's tests.
#[path = "../../../engine/tests/common/mod.rs"]
mod common;

/// Random layers and hardware for the functional tests, and a chunked runner.
#[path = "../cases/mod.rs"]
mod cases;

mod adc_range;
mod device;
mod fast_path;
mod hand;
mod invariant;
mod memory;
mod sampler;
mod wide;
