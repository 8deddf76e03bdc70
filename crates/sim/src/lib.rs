//! The simulator behind the `sresim` commands: configuration ([`config`]), the run driver
//! that walks a workload layer by layer through the engines ([`run`]), the reports and
//! output files of a run ([`report`], with the [`functional`] and [`chip`] columns) and of
//! the memory model ([`memory_out`]), and which workload a name opens ([`workloads`]).
#![cfg_attr(test, allow(clippy::disallowed_methods))] // tests make their fixtures with std::fs

pub mod accuracy;
pub mod accuracy_shard;
pub mod check;
pub mod chip;
pub mod config;
pub mod draws;
pub mod format;
pub mod functional;
pub mod memory_out;
pub mod memory_plot;
pub mod progress;
pub mod report;
pub mod run;
pub mod workloads;
