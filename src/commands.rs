//! The subcommands, as library functions the binary (and tests) call.

use crate::cli::{MemoryCmd, RunArgs, SynthArgs, WorkloadsArgs};
use crate::{config, report, run};
use anyhow::{anyhow, Result};
use crossbar::Mode;
use engine::EngineKind;
use std::io::IsTerminal;

/// `sresim run`.
pub fn run(args: &RunArgs) -> Result<()> {
    let cfg = config::load(args.config.as_deref(), &args.sets)?;
    let modes = parse_modes(&args.modes)?;
    let engine: EngineKind = args.engine.parse().map_err(|e| anyhow!("--engine: {e}"))?;
    let pool = thread_pool(args.threads)?;
    let w = crate::workloads::open(args.workload.as_deref(), &args.synth, args.samples, &cfg)?;
    let samples = args.samples.unwrap_or(w.available_samples());
    let result = pool.install(|| {
        run::run(&run::RunSpec {
            workload: w.as_ref(),
            cfg: &cfg,
            modes: &modes,
            engine,
            samples,
            progress: std::io::stderr().is_terminal(),
        })
    })?;
    if let Some(dir) = &args.out {
        report::write_outputs(dir, &result, &cfg)?;
    }
    if !args.quiet {
        print!("{}", report::summary_table(&result));
        match &args.out {
            Some(dir) => println!("wrote {0}/layers.csv and {0}/summary.json", dir.display()),
            None => println!("(--out DIR writes layers.csv and summary.json)"),
        }
    }
    Ok(())
}

/// `sresim workloads`.
pub fn workloads(args: &WorkloadsArgs) -> Result<()> {
    let cfg = config::load(args.config.as_deref(), &[])?;
    print!("{}", crate::workloads::listing(&cfg)?);
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
    let cfg = config::load(cmd.config.as_deref(), &cmd.sets)?;
    let mc = &cfg.config.memory;
    mc.validate().map_err(|e| anyhow!("{}: {e}", cfg.origin))?;
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
    memory::run(&cmd.args, mc, compute)
}
