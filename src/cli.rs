//! Command-line interface (docs/interfaces.md): the subcommands of `sresim`, each with
//! the flags its driver crate defines (`commands`, `sweep`, `search`).

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "sresim",
    version,
    about = "Cycle-level simulator of an OU-based sparse ReRAM DNN accelerator (Sparse ReRAM Engine)",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Parsed once at start-up; the size of its variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate a workload in every requested mode and report cycles and energy.
    Run(commands::run::RunArgs),
    /// List the built-in networks and the bundled workloads.
    Workloads(commands::workloads::WorkloadsArgs),
    /// Run every point of a grid of configs and workloads (resumable, shardable).
    Sweep(sweep::SweepArgs),
    /// Join the output directories of the shards of one sweep.
    Merge(sweep::MergeArgs),
    /// Draw one column of a result CSV against another as an SVG line chart.
    Plot(sweep::PlotArgs),
    /// Report what changed between two result CSVs; fails when anything did.
    Compare(sweep::CompareArgs),
    /// End-to-end accuracy: a bundle's network run sample by sample in float, quantized
    /// and through each mode's crossbar datapath (top-1, agreement, per-layer errors).
    Accuracy(commands::accuracy::AccuracyArgs),
    /// Join the shard directories of `accuracy --sample-range` into the outputs of the
    /// unsharded run.
    AccuracyMerge(commands::accuracy_merge::AccuracyMergeArgs),
    /// Memory-subsystem model: off-chip traffic and time of a training step or inference
    /// against on-chip buffer capacity and off-chip bandwidth.
    Memory(commands::memory::MemoryCmd),
    /// Open a bundle with the rules of `run` and `accuracy` and print one `ok: ...` line
    /// (or the one error line, and a non-zero exit).
    Check(commands::check::CheckArgs),
    /// Which design points of a grid keep top-1 within a budget of the quantized network
    /// at a stated confidence (a sequential paired test), and which of them take the
    /// fewest cycles and least energy.
    Search(search::SearchArgs),
}
