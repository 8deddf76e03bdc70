//! The subcommands, as library functions the binary (and tests) call.

use crate::cli::{MemoryCmd, RunArgs, SynthArgs, WorkloadsArgs};
use crate::{config, report, run};
use anyhow::{anyhow, Result};
use crossbar::Mode;
use engine::EngineKind;
use outdir::OutputDir;
use std::io::{IsTerminal, Write};
use workload::LayerSelector;

/// `sresim run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let cfg = config::load_cli(args.config.as_deref(), &args.sets)?;
    let modes = parse_modes(&args.modes)?;
    let engine: EngineKind = args.engine.parse().map_err(|e| anyhow!("--engine: {e}"))?;
    if args.dump_outputs && !args.functional {
        return Err(anyhow!(
            "--dump-outputs: needs --functional (the outputs are the functional datapath's)"
        ));
    }
    if args.dump_outputs && args.out.is_none() {
        return Err(anyhow!(
            "--dump-outputs: needs --out DIR to write outputs.npz into"
        ));
    }
    let pool = thread_pool(args.threads)?;
    let selector = args
        .layers
        .as_deref()
        .map(LayerSelector::parse)
        .transpose()
        .map_err(|e| anyhow!("--layers: {e}"))?;
    let func = args
        .functional
        .then(|| crate::functional::options(&cfg, args.dump_outputs));
    let w = crate::workloads::open(args.workload.as_deref(), &args.synth, args.samples, &cfg)?;
    let total_layers = w.layers().len();
    let w = crate::workloads::select(w, selector.as_ref(), "--layers")?;
    for note in w.notes() {
        eprintln!("note: {note}");
    }
    let samples = args.samples.unwrap_or(w.available_samples());
    // Locked from here to the end, so that a second writer is refused before it runs.
    let out = args.out.as_deref().map(OutputDir::open).transpose()?;
    let result = pool.install(|| {
        run::run_functional(
            &run::RunSpec {
                workload: w.as_ref(),
                cfg: &cfg,
                modes: &modes,
                engine,
                samples,
                // -q hides the bar as well as the table.
                progress: !args.quiet && std::io::stderr().is_terminal(),
            },
            func.as_ref(),
        )
    })?;
    if let Some(dir) = &out {
        report::write_outputs(dir, &result, &cfg, args.format)?;
    }
    if !args.quiet {
        let mut o = std::io::stdout().lock();
        if selector.is_some() {
            let names: Vec<&str> = w.layers().iter().map(|l| l.name.as_str()).collect();
            writeln!(
                o,
                "--layers: {} of {total_layers} layers: {}",
                names.len(),
                names.join(", ")
            )?;
        }
        write!(o, "{}", report::summary_table(&result))?;
        match &args.out {
            Some(dir) => writeln!(
                o,
                "wrote {0}/{1} and {0}/summary.json",
                dir.display(),
                args.format.file("layers")
            )?,
            None => writeln!(o, "(--out DIR writes layers.csv and summary.json)")?,
        }
        o.flush()?;
    }
    Ok(())
}

/// `sresim workloads`.
pub fn workloads(args: &WorkloadsArgs) -> Result<()> {
    let cfg = config::load(args.config.as_deref(), &[])?;
    let mut o = std::io::stdout().lock();
    write!(o, "{}", crate::workloads::listing(&cfg)?)?;
    o.flush()?;
    Ok(())
}

pub fn parse_modes(list: &[String]) -> Result<Vec<Mode>> {
    let mut modes = Vec::new();
    for m in list {
        let mode: Mode = m.trim().parse().map_err(|e| anyhow!("--modes: {e}"))?;
        if !modes.contains(&mode) {
            modes.push(mode);
        }
    }
    if modes.is_empty() {
        return Err(anyhow!("--modes: no mode given"));
    }
    Ok(modes)
}

/// Most worker threads (`--threads`) and points in flight (`sweep --jobs`): far more
/// than any machine's cores, few enough that starting them cannot exhaust the system
/// (each thread has its own stack and, for a job, a layer in memory).
pub const MAX_WORKERS: usize = 1024;

/// Checks `--threads` or `--jobs`: at least 1, at most [`MAX_WORKERS`].
pub fn check_workers(flag: &str, n: Option<usize>) -> Result<()> {
    match n {
        Some(0) => Err(anyhow!("{flag}: must be at least 1")),
        Some(n) if n > MAX_WORKERS => Err(anyhow!(
            "{flag}: {n} is more than the limit of {MAX_WORKERS} (this machine has {} cores; results do not depend on it)",
            std::thread::available_parallelism().map_or(1, |c| c.get())
        )),
        _ => Ok(()),
    }
}

fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    check_workers("--threads", threads)?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("--threads: {e}"))
}

/// The synthetic-data flags, checked.
pub fn synth_params(a: &SynthArgs) -> Result<workload::SynthParams> {
    let structure = match a.structure.as_str() {
        "unstructured" => workload::Structure::Unstructured,
        "ssl" => workload::Structure::Ssl,
        s => {
            return Err(anyhow!(
                "--structure: unknown '{s}' (expected unstructured or ssl)"
            ))
        }
    };
    let p = workload::SynthParams {
        seed: a.seed,
        weight_sparsity: a.weight_sparsity,
        structure,
        act_sparsity: a.act_sparsity,
    };
    p.validate()?;
    Ok(p)
}

/// `sresim memory`: the memory-subsystem model, with compute times at peak or, with
/// `memory.compute = "simulated"`, the crossbar layers' times from an sre-mode run of the
/// same network (one sample, scaled by the batch).
pub fn memory(cmd: &MemoryCmd) -> Result<()> {
    let cfg = config::load_cli(cmd.config.as_deref(), &cmd.sets)?;
    let mut mc = cfg.config.memory.clone();
    if let Some(p) = &cmd.policy {
        mc.policy = memory::buffer::Policy::parse(p).map_err(|e| anyhow!("--policy: {e}"))?;
    }
    let mc = &mc;
    mc.validate()
        .map_err(|e| config::blame_sets(anyhow!("{}: {e}", cfg.origin), &cfg.origin, &cmd.sets))?;
    let mut exports = crate::memory_out::Exports::prepare(cmd)?;
    let out = cmd.args.out.as_deref().map(OutputDir::open).transpose()?;
    let compute = match mc.compute {
        memory::ComputeKind::Peak => memory::ComputeSource::Peak,
        memory::ComputeKind::Simulated => {
            let synth = SynthArgs {
                weight_sparsity: 0.7,
                structure: "unstructured".into(),
                act_sparsity: 0.5,
                seed: 1,
                synthetic_inputs: true,
            };
            let w = crate::workloads::open(Some(&cmd.args.workload), &synth, Some(1), &cfg)
                .map_err(|e| anyhow!("memory.compute = \"simulated\": {e:#}"))?;
            let result = run::run(&run::RunSpec {
                workload: w.as_ref(),
                cfg: &cfg,
                modes: &[Mode::Sre],
                engine: EngineKind::Fast,
                samples: 1,
                progress: false,
            })?;
            let batch = cmd.args.batch as f64;
            memory::ComputeSource::Simulated(
                result
                    .layers
                    .iter()
                    .map(|r| (r.layer.clone(), r.time_ns * 1e-9 * batch))
                    .collect(),
            )
        }
    };
    if !exports.is_empty() {
        exports.write(&crate::memory_out::model(cmd, mc, &compute)?)?;
    }
    let mut outputs = memory::report::outputs(&cmd.args, mc, compute)?;
    if cmd.format == crate::format::Format::Parquet {
        for f in outputs.files.iter_mut() {
            if f.0 == "memory_layers.csv" {
                let name = "memory_layers.parquet";
                *f = (
                    name,
                    crate::format::parquet_of_csv(name, &f.1, crate::format::memory_kind)?,
                );
            }
        }
    }
    outputs.write(out.as_ref(), &mut std::io::stdout().lock())?;
    if let Some(dir) = &out {
        crate::format::remove_other(dir.path(), "memory_layers", cmd.format)?;
    }
    for line in exports.commit()? {
        // The files are in place; a closed stdout does not undo them.
        let _ = writeln!(std::io::stdout(), "wrote {line}");
    }
    Ok(())
}
