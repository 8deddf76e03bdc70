//! Command-line interface (docs/interfaces.md): `sresim run`, `sresim workloads`, ...

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

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
    Run(RunArgs),
    /// List the built-in networks and the bundled workloads.
    Workloads(WorkloadsArgs),
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
    Accuracy(crate::accuracy_command::AccuracyArgs),
    /// Join the shard directories of `accuracy --sample-range` into the outputs of the
    /// unsharded run.
    AccuracyMerge(crate::accuracy_merge::AccuracyMergeArgs),
    /// Memory-subsystem model: off-chip traffic and time of a training step or inference
    /// against on-chip buffer capacity and off-chip bandwidth.
    Memory(MemoryCmd),
    /// Open a bundle with the rules of `run` and `accuracy` and print one `ok: ...` line
    /// (or the one error line, and a non-zero exit).
    Check(CheckArgs),
    /// Which design points of a grid keep top-1 within a budget of the quantized network
    /// at a stated confidence (a sequential paired test), and which of them take the
    /// fewest cycles and least energy.
    Search(search::SearchArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// A bundle directory (or the name of a bundle under workloads/).
    #[arg(value_name = "BUNDLE")]
    pub bundle: String,
    /// TOML config (its precision and limits are the ones the bundle is checked against).
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Override a config key, e.g. --set precision.weight_bits=8 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Print nothing on stdout: the exit status alone says whether the bundle opens.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct MemoryCmd {
    #[command(flatten)]
    pub args: MemoryFlags,
    /// TOML config (its [memory] table; keys it omits keep the defaults).
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Override a config key, e.g. --set memory.optimizer=adam (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Buffer policy of the reported figures: belady, lru or fifo (default: memory.policy
    /// of the config, belady).
    #[arg(long)]
    pub policy: Option<String>,
    /// Format of the layers table in --out: csv (memory_layers.csv, the default) or
    /// parquet (memory_layers.parquet, typed columns). The lists and traces of the
    /// --dump-* flags stay text.
    #[arg(long, default_value_t = sim::format::Format::Csv)]
    pub format: sim::format::Format,
    /// Print neither the table nor the `wrote` lines (errors and notes still go to
    /// stderr).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Write access_list.csv and prefetch_list.csv (the model's lists) to this directory.
    #[arg(long, value_name = "DIR")]
    pub dump_access_list: Option<PathBuf>,
    /// Write the off-chip requests of the one point (one --capacity, one --bandwidth) as a
    /// DRAM trace to this file.
    #[arg(long, value_name = "FILE")]
    pub dump_trace: Option<PathBuf>,
    /// Trace format: dramsim3 (`0xADDR READ|WRITE CYCLE`, the default) or ramulator2
    /// (`LD|ST 0xADDR`).
    #[arg(long)]
    pub trace_format: Option<String>,
    /// Clock of the DRAMsim3 issue cycles in MHz (default 1000).
    #[arg(long)]
    pub trace_clock_mhz: Option<f64>,
}

/// The model's flags of `sresim memory`.
#[derive(Debug, Clone, PartialEq, Args)]
pub struct MemoryFlags {
    /// Network: resnet18, resnet50, vgg16, mobilenetv2, bert, gnmt, yolov4-tiny, or a bundle directory.
    #[arg(long, default_value = "resnet50")]
    pub workload: String,
    /// Samples per step.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// On-chip buffer capacities, comma-separated (16MiB, 1GB, 512KiB, inf).
    #[arg(long, value_delimiter = ',', default_value = "16MiB")]
    pub capacity: Vec<String>,
    /// Off-chip bandwidths, comma-separated (900GB/s, 1.5TB/s).
    #[arg(long, value_delimiter = ',', default_value = "900GB/s")]
    pub bandwidth: Vec<String>,
    /// training or inference (default: memory.mode of the config).
    #[arg(long)]
    pub mode: Option<String>,
    /// Tokens per sequence (bert) or time steps (gnmt).
    #[arg(long)]
    pub seq_len: Option<usize>,
    /// Directory that receives memory_layers.csv, memory_summary.json and the plot
    /// (replaced atomically). Without it nothing is written.
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Write memory_vs_capacity.svg (always written for two or more capacities; needs --out).
    #[arg(long)]
    pub plot: bool,
}

impl MemoryFlags {
    /// The flags as the memory model takes them.
    pub fn to_args(&self) -> memory::MemoryArgs {
        memory::MemoryArgs {
            workload: self.workload.clone(),
            batch: self.batch,
            capacity: self.capacity.clone(),
            bandwidth: self.bandwidth.clone(),
            mode: self.mode.clone(),
            seq_len: self.seq_len,
            out: self.out.clone(),
            plot: self.plot,
        }
    }
}

impl MemoryCmd {
    /// The export flags as the library takes them.
    pub fn export_flags(&self) -> sim::memory_out::ExportFlags {
        sim::memory_out::ExportFlags {
            dump_access_list: self.dump_access_list.clone(),
            dump_trace: self.dump_trace.clone(),
            trace_format: self.trace_format.clone(),
            trace_clock_mhz: self.trace_clock_mhz,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// A built-in network (see `sresim workloads`), a bundled workload name, or a path to
    /// a workload bundle directory. Default: the embedded lenet5-mnist bundle.
    #[arg(long, short = 'w')]
    pub workload: Option<String>,
    /// TOML config; keys it omits keep the defaults of configs/default.toml.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Modes to simulate, comma-separated: dense, weight, activation, sre, ideal.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "dense,weight,activation,sre,ideal"
    )]
    pub modes: Vec<String>,
    /// Engine: fast (default), reference (naive, slow) or cycle.
    #[arg(long, default_value = "fast")]
    pub engine: String,
    /// Directory that receives layers.csv and summary.json (replaced atomically).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Replay the first N input samples (default: all the workload holds).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Format of the layers table in --out: csv (layers.csv, the default) or parquet
    /// (layers.parquet, typed columns).
    #[arg(long, default_value_t = sim::format::Format::Csv)]
    pub format: sim::format::Format,
    /// Run only these layers of the workload: names or globs, comma-separated, e.g.
    /// --layers conv2,'fc*' (each layer as in a run of the whole workload).
    #[arg(long, value_name = "NAME,...")]
    pub layers: Option<String>,
    /// Override a config key, e.g. --set ou.rows=16 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    #[command(flatten)]
    pub synth: SynthArgs,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Also compute the values of every OU read (docs/functional.md): layers.csv gains
    /// the functional columns; counts, cycles and energy are unchanged.
    #[arg(long)]
    pub functional: bool,
    /// With --functional: write every layer's integer outputs to DIR/outputs.npz.
    #[arg(long)]
    pub dump_outputs: bool,
    /// Print neither the summary table nor the progress bar (errors and notes still go
    /// to stderr).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Synthetic data for built-in networks (and for bundles without inputs). Given with a
/// bundle whose data they would not change, they are refused (`synth_flags`).
#[derive(Debug, Clone, Args)]
pub struct SynthArgs {
    /// Fraction of zero weights of built-in networks (default 0.7).
    #[arg(long)]
    pub weight_sparsity: Option<f64>,
    /// Weight sparsity structure of built-in networks: unstructured (default), magnitude,
    /// ssl, or N:M semi-structured along the inputs, e.g. 2:4 or 4:8 (it sets the sparsity
    /// to 1 - N/M).
    #[arg(long)]
    pub structure: Option<String>,
    /// Fraction of the heads of every attention block pruned (shape files whose fc layers
    /// carry `role` and `heads`; default 0).
    #[arg(long)]
    pub head_sparsity: Option<f64>,
    /// Fraction of zero inputs of built-in networks, layers after the first (default 0.5).
    #[arg(long)]
    pub act_sparsity: Option<f64>,
    /// Seed of the synthetic generators (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Generate inputs for bundle layers that have none.
    #[arg(long)]
    pub synthetic_inputs: bool,
}

impl SynthArgs {
    /// The flags as the library takes them (the defaults for those not given).
    pub fn to_synth(&self) -> sim::workloads::Synth {
        let d = sim::workloads::Synth::default();
        sim::workloads::Synth {
            weight_sparsity: self.weight_sparsity.unwrap_or(d.weight_sparsity),
            structure: self.structure.clone().unwrap_or(d.structure),
            act_sparsity: self.act_sparsity.unwrap_or(d.act_sparsity),
            head_sparsity: self.head_sparsity.unwrap_or(d.head_sparsity),
            seed: self.seed.unwrap_or(d.seed),
            synthetic_inputs: self.synthetic_inputs,
        }
    }

    /// Refuses `--weight-sparsity` beside an N:M `--structure`, which sets the sparsity
    /// itself (1 - N/M): the flag would change nothing.
    pub fn check_combination(&self) -> anyhow::Result<()> {
        if let (Some(w), Some(s)) = (self.weight_sparsity, &self.structure) {
            if let Ok(st) = s.parse::<workload::Structure>() {
                if let Some(fixed) = st.fixed_sparsity() {
                    anyhow::bail!(
                        "--weight-sparsity: {w} is not used with --structure {st}, whose sparsity is 1 - N/M = {fixed}; give one of them"
                    );
                }
            }
        }
        Ok(())
    }

    /// The generator flags given on the command line, as written.
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.weight_sparsity.is_some(), "--weight-sparsity"),
            (self.structure.is_some(), "--structure"),
            (self.head_sparsity.is_some(), "--head-sparsity"),
            (self.act_sparsity.is_some(), "--act-sparsity"),
            (self.seed.is_some(), "--seed"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }
}

#[derive(Debug, Clone, Args)]
pub struct WorkloadsArgs {
    /// TOML config (its precision is used for the zero fractions of bundles).
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Print nothing on stdout (the listing's workloads are still opened and checked).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
