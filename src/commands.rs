//! The subcommands, as library functions the binary (and tests) call.

use crate::cli::{CheckArgs, MemoryCmd, RunArgs, WorkloadsArgs};
use anyhow::{anyhow, Result};
use crossbar::Mode;
use engine::EngineKind;
use outdir::OutputDir;
use sim::run::{check_workers, parse_modes};
use sim::{config, report, run};
use std::io::Write;
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
        .then(|| sim::functional::options(&cfg, args.dump_outputs));
    sim::workloads::check_synth_flags(
        args.workload.as_deref(),
        &args.synth.given(),
        args.synth.synthetic_inputs,
    )?;
    args.synth.check_combination()?;
    let w = sim::workloads::open(
        args.workload.as_deref(),
        &args.synth.to_synth(),
        args.samples,
        &cfg,
    )?;
    let total_layers = w.layers().len();
    let w = sim::workloads::select(w, selector.as_ref(), "--layers")?;
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
                // -q hides the bar (or, without a terminal, the progress lines) as well
                // as the table.
                progress: !args.quiet,
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
        if !cfg.device.is_ideal() && sim::functional::all_exact(&result) {
            writeln!(
                o,
                "note: the [device] is not ideal, yet every output equals the exact product: \
                 each read's error rounded back to its level (raise device.read_noise, e.g. \
                 0.2, or widen the OUs to see an error)"
            )?;
        }
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
    let listing = sim::workloads::listing(&cfg)?;
    if !args.quiet {
        let mut o = std::io::stdout().lock();
        write!(o, "{listing}")?;
        o.flush()?;
    }
    Ok(())
}

/// `sresim check BUNDLE`.
pub fn check(args: &CheckArgs) -> Result<()> {
    let cfg = config::load_cli(args.config.as_deref(), &args.sets)?;
    let checked = sim::check::check(&args.bundle, &cfg)?;
    for note in &checked.notes {
        eprintln!("note: {note}");
    }
    if !args.quiet {
        let mut o = std::io::stdout().lock();
        writeln!(o, "{}", checked.line(&args.bundle))?;
        o.flush()?;
    }
    Ok(())
}

fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    check_workers("--threads", threads)?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("--threads: {e}"))
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
    let args = cmd.args.to_args();
    let mut exports = sim::memory_out::Exports::prepare(&args, &cmd.export_flags())?;
    let out = args.out.as_deref().map(OutputDir::open).transpose()?;
    let compute = match mc.compute {
        memory::ComputeKind::Peak => memory::ComputeSource::Peak,
        memory::ComputeKind::Simulated => {
            let synth = sim::workloads::Synth {
                synthetic_inputs: true,
                ..Default::default()
            };
            let w = sim::workloads::open(Some(&args.workload), &synth, Some(1), &cfg)
                .map_err(|e| anyhow!("memory.compute = \"simulated\": {e:#}"))?;
            let result = run::run(&run::RunSpec {
                workload: w.as_ref(),
                cfg: &cfg,
                modes: &[Mode::Sre],
                engine: EngineKind::Fast,
                samples: 1,
                progress: false,
            })?;
            let batch = args.batch as f64;
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
        false => outputs.write_with(out.as_ref(), staged, &mut std::io::stdout().lock())?,
    }
    if let Some(dir) = &out {
        sim::format::remove_other(dir.path(), "memory_layers", cmd.format)?;
    }
    for line in lines.into_iter().filter(|_| !cmd.quiet) {
        // The files are in place; a closed stdout does not undo them.
        let _ = writeln!(std::io::stdout(), "wrote {line}");
    }
    Ok(())
}
