//! The simulator behind the `sresim` commands: configuration ([`config`]: the file's
//! keys, `[chip]` and `[device]`, `--set`), the run driver that walks a workload layer by
//! layer through the engines ([`run`]) into a [`result::RunResult`], the reports and
//! output files of a run ([`report`], with the [`functional`] and [`chip`] columns and
//! the column types of [`columns`]) and of the accuracy path ([`accuracy`],
//! [`accuracy_report`], [`accuracy_shard`]), the memory model's outputs ([`memory_out`]),
//! and which workload a name opens ([`workloads`]). It takes plain structs: the flags of
//! the commands are `crates/commands`'s.
//!
//! Its modules form layers (docs/ARCHITECTURE.md, "crates/sim inside"): `config` and
//! `result` at the bottom, the column lists and reports above them, the drivers
//! (`run`, `accuracy`, `check`) above those; no module imports one above it
//! (`scripts/check-layout`).
#![cfg_attr(test, allow(clippy::disallowed_methods))] // tests make their fixtures with std::fs

pub mod accuracy;
pub mod accuracy_report;
pub mod accuracy_shard;
pub mod calibration;
pub mod check;
pub mod chip;
pub mod columns;
pub mod config;
pub mod digital;
pub mod draws;
pub mod format;
pub mod functional;
pub mod memory_out;
pub mod memory_plot;
pub mod progress;
pub mod report;
pub mod result;
pub mod run;
pub mod workloads;
