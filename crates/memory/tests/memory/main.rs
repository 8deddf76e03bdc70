//! The memory crate's integration tests, one binary: add a test of the memory model here,
//! as a module of its topic (a new file `NAME.rs` beside this one and `mod NAME;` below),
//! not as a new file in tests/ (each of those is one more binary to link;
//! docs/ARCHITECTURE.md, "Tests"). Run one topic with `cargo test -p memory --test memory buffer::`.
// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod buffer;
mod model;
mod three_layer;
mod trace;
mod two_layer;
