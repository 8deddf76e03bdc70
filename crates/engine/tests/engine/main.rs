//! The engine crate's integration tests, one binary: add a test of the engines here, as a
//! module of its topic (a new file `NAME.rs` beside this one and `mod NAME;` below), not as
//! a new file in tests/ (each of those is one more binary to link; docs/ARCHITECTURE.md,
//! "Tests"). Run one topic with `cargo test -p engine --test engine differential::`.
// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

/// The random small layers and configurations shared with crates/functional's tests.
#[path = "../common/mod.rs"]
mod common;

mod chunked;
mod cycle;
mod differential;
mod hand;
mod windows;
