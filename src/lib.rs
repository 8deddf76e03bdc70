//! sresim: a cycle-level simulator of an OU-based sparse ReRAM DNN accelerator.
//!
//! The library half of the `sresim` binary: configuration ([`config`]), the run driver
//! that walks a workload layer by layer through the engines ([`run`]), and the reports
//! ([`report`]). The model itself lives in the crates: workload -> crossbar -> sparsity
//! -> pipeline / engine -> energy.

// Configs, bundles and flags are user data: no unwrap/expect outside tests (docs/errors.md).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod accuracy;
pub mod chip;
pub mod cli;
pub mod commands;
pub mod config;
pub mod functional;
pub mod memory_out;
pub mod report;
pub mod run;
// The sweep's expects are on invariants of data it has already checked; it is to adopt
// the rule with an `#[allow]` per invariant.
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub mod sweep;
pub mod workloads;
