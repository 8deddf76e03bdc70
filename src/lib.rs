//! sresim: a cycle-level simulator of an OU-based sparse ReRAM DNN accelerator.
//!
//! The library half of the `sresim` binary: configuration ([`config`]), the run driver
//! that walks a workload layer by layer through the engines ([`run`]), and the reports
//! ([`report`]). The model itself lives in the crates: workload -> crossbar -> sparsity
//! -> pipeline / engine -> energy.

pub mod cli;
pub mod commands;
pub mod config;
pub mod report;
pub mod run;
pub mod sweep;
pub mod workloads;
