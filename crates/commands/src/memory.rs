//! `sresim memory` (docs/memory.md): its flags, and the driver over the memory model
//! (`crates/memory`) and its outputs ([`sim::memory_out`]).

use anyhow::{anyhow, Result};
use clap::Args;
use crossbar::Mode;
use engine::EngineKind;
use outdir::OutputDir;
use sim::{config, run};
use std::io::Write;
use std::path::{Path, PathBuf};

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
    pub fn to_args(&self) -> ::memory::MemoryArgs {
        ::memory::MemoryArgs {
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

/// `sresim memory`: the memory-subsystem model, with compute times at peak or, with
/// `memory.compute = "simulated"`, the crossbar layers' times from an sre-mode run of the
/// same network (one sample, scaled by the batch).
pub fn run(cmd: &MemoryCmd) -> Result<()> {
    let cfg = config::load_cli(cmd.config.as_deref(), &cmd.sets)?;
    let mut mc = cfg.config.memory.clone();
    if let Some(p) = &cmd.policy {
        mc.policy = ::memory::buffer::Policy::parse(p).map_err(|e| anyhow!("--policy: {e}"))?;
    }
    let mc = &mc;
    mc.validate()
        .map_err(|e| config::blame_sets(anyhow!("{}: {e}", cfg.origin), &cfg.origin, &cmd.sets))?;
    let args = cmd.args.to_args();
    let flags = cmd.export_flags();
    // Every input is checked before a directory is opened (docs/errors.md, "Output
    // directories": inputs, then the lock and the recovery of a journal left there, then
    // the simulation): the flags, the network (a bundle read and checked) and the
    // exports' values; a refused command leaves every directory as it was.
    ::memory::report::check(&args, mc)?;
    flags.check(&args)?;
    let simulated = match mc.compute {
        ::memory::ComputeKind::Peak => None,
        ::memory::ComputeKind::Simulated => {
            let synth = sim::workloads::Synth {
                synthetic_inputs: true,
                ..Default::default()
            };
            let w = sim::workloads::open(Some(&args.workload), &synth, Some(1), &cfg)
                .map_err(|e| anyhow!("memory.compute = \"simulated\": {e:#}"))?;
            Some(w)
        }
    };
    // Every directory the command writes is opened like --out (locked for the command's
    // whole life, and a replacement left there completed) before any file is staged: --out,
    // the --dump-access-list directory (its two lists are one pair) and the trace's, so
    // that two runs exporting to one directory cannot mix their files; in the order of
    // their resolved paths, each once (OutputDir::open_all; docs/errors.md, "Output
    // directories"). A path that is not a directory, and cannot be made one, is left to the
    // export's own check, which names its flag.
    let mut dirs: Vec<(&Path, &str)> = Vec::new();
    dirs.extend(args.out.as_deref().map(|d| (d, "")));
    dirs.extend(
        flags
            .dump_access_list
            .as_deref()
            .filter(|d| !d.as_os_str().is_empty() && creatable(d))
            .map(|d| (d, "--dump-access-list")),
    );
    let trace_dir = flags.dump_trace.as_deref().map(|t| match t.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    });
    dirs.extend(
        trace_dir
            .filter(|d| d.is_dir())
            .map(|d| (d, "--dump-trace")),
    );
    let mut locked = OutputDir::open_all(&dirs)?;
    // The lists go with their own result (`-o D --dump-access-list D`) or to a directory
    // holding no other memory result: replacing the lists of one would leave its reports
    // beside another run's lists; and the reports go where no lists lie written apart from
    // a result (checked with the directories locked, before anything is staged;
    // docs/errors.md, "One result set, whole").
    if let Some(d) = flags.dump_access_list.as_deref().filter(|d| d.is_dir()) {
        outdir::export_apart(
            d,
            args.out.as_deref(),
            "memory",
            &["access_list.csv", "prefetch_list.csv"],
        )
        .map_err(|e| anyhow!("--dump-access-list: {e}"))?;
    }
    if let Some(o) = args.out.as_deref().filter(|o| o.is_dir()) {
        outdir::reports_apart(
            o,
            flags.dump_access_list.as_deref(),
            "memory",
            &["access_list.csv", "prefetch_list.csv"],
        )
        .map_err(|e| anyhow!("--out: {e}"))?;
    }
    let out = match args.out {
        Some(_) => locked[0].take(),
        None => None,
    };
    let exported: Vec<OutputDir> = locked.into_iter().flatten().collect();
    let mut exports = sim::memory_out::Exports::prepare(&args, &flags)?;
    let compute = match simulated {
        None => ::memory::ComputeSource::Peak,
        Some(w) => {
            let result = run::run(&run::RunSpec {
                workload: w.as_ref(),
                cfg: &cfg,
                modes: &[Mode::Sre],
                engine: EngineKind::Fast,
                samples: 1,
                progress: false,
            })?;
            let batch = args.batch as f64;
            ::memory::ComputeSource::Simulated(
                result
                    .layers
                    .iter()
                    .map(|r| (r.layer.clone(), r.time_ns * 1e-9 * batch))
                    .collect(),
            )
        }
    };
    if !exports.is_empty() {
        exports.write(&sim::memory_out::model(&args, mc, &compute)?)?;
    }
    let mut outputs = sim::memory_out::outputs(&args, mc, compute)?;
    if cmd.format == sim::format::Format::Parquet {
        for f in outputs.files.iter_mut() {
            if f.0 == "memory_layers.csv" {
                let name = "memory_layers.parquet";
                *f = (name, sim::format::memory_parquet_of_csv(name, &f.1)?);
            }
        }
    }
    let (staged, lines) = exports.finish();
    match cmd.quiet {
        true => outputs.write_with(out.as_ref(), staged, &mut std::io::sink())?,
        false => outputs.write_with(out.as_ref(), staged, &mut outdir::stdout())?,
    }
    for d in &exported {
        d.mark_written();
    }
    for line in lines.into_iter().filter(|_| !cmd.quiet) {
        // The files are in place; a stdout that cannot be written does not undo them,
        // but it is an error all the same (a closed pipe ends quietly).
        writeln!(outdir::stdout(), "wrote {}", bounds::text::printable(&line))?;
    }
    Ok(())
}

/// `d` is a directory, or can be made one: its deepest existing ancestor is a directory.
fn creatable(d: &Path) -> bool {
    d.ancestors()
        .map(|a| match a.as_os_str().is_empty() {
            true => Path::new("."),
            false => a,
        })
        .find(|a| a.exists())
        .is_some_and(Path::is_dir)
}
