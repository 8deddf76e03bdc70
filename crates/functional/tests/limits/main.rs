//! The functional crate's tests that set its process-wide limits (the conductance cache's
//! and the count tables', `set_conductance_cache_limit`, `set_count_table_limit`): a binary
//! of their own, so that no other test runs while a limit is changed, and each takes
//! `LIMITS` while it reads or sets one. Every other functional test goes in
//! tests/functional/ (docs/ARCHITECTURE.md, "Tests").
// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

/// Held by each test while it reads or sets the process-wide limits (the tests of one
/// binary run on several threads).
pub static LIMITS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[path = "../../../engine/tests/common/mod.rs"]
mod common;

#[path = "../cases/mod.rs"]
mod cases;

mod cached_reads;
mod conductance_cache;
