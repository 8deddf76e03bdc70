//! `sresim run` (docs/interfaces.md): its flags, and the driver that opens the workload,
//! runs it through [`sim::run`] and writes and prints [`sim::report`]'s outputs.

use anyhow::{anyhow, Result};
use clap::Args;
use engine::EngineKind;
use outdir::OutputDir;
use sim::run::parse_modes;
use sim::{config, report, run};
use std::io::Write;
use std::path::PathBuf;
use workload::LayerSelector;

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
    let pool = crate::thread_pool(args.threads)?;
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
    let spec = run::RunSpec {
        workload: w.as_ref(),
        cfg: &cfg,
        modes: &modes,
        engine,
        samples,
        // -q hides the bar (or, without a terminal, the progress lines) as well as the
        // table.
        progress: !args.quiet,
    };
    // Every input is checked before --out is opened (docs/errors.md, "Output
    // directories": inputs, then the lock and the recovery of a journal left there).
    pool.install(|| run::check(&spec, func.as_ref()))?;
    // Locked from here to the end, so that a second writer is refused before it runs.
    let out = args.out.as_deref().map(OutputDir::open).transpose()?;
    let result = pool.install(|| run::run_functional(&spec, func.as_ref()))?;
    if let Some(dir) = &out {
        report::write_outputs(dir, &result, &cfg, args.format)?;
    }
    if !args.quiet {
        let mut o = outdir::stdout();
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
                bounds::text::path(dir),
                args.format.file("layers")
            )?,
            None => writeln!(o, "(--out DIR writes layers.csv and summary.json)")?,
        }
        o.flush()?;
    }
    Ok(())
}
