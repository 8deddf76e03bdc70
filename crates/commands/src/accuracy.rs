//! `sresim accuracy` (docs/accuracy.md): its flags, and the driver that reads a bundle's
//! network ([`sim::accuracy`]), runs the accuracy crate over its graph input with a
//! progress bar, and writes [`sim::accuracy_report`]'s outputs (or a shard of them,
//! [`sim::accuracy_shard`]).

use anyhow::{anyhow, bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sim::accuracy::NetInfo;
use sim::accuracy_report::Outputs;
use std::io::Write;
use std::path::PathBuf;
use workload::LayerSelector;

#[derive(Debug, Clone, Args)]
pub struct AccuracyArgs {
    /// A bundle with a network graph: a bundled workload name or a directory. Default:
    /// the embedded lenet5-mnist bundle.
    #[arg(long, short = 'w')]
    pub workload: Option<String>,
    /// TOML config; keys it omits keep the defaults of configs/default.toml.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Modes whose crossbar layers go through the functional datapath, comma-separated;
    /// `none` runs only the float and the quantized network.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "dense,weight,activation,sre,ideal"
    )]
    pub modes: Vec<String>,
    /// Run the first M samples of the graph input (default: all).
    #[arg(long)]
    pub samples: Option<usize>,
    /// Only these layers (names or globs, comma-separated) go through the crossbar
    /// datapath; the others compute exact integer products.
    #[arg(long, value_name = "NAME,...")]
    pub layers: Option<String>,
    /// Directory that receives accuracy.csv and summary.json (replaced atomically).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Override a config key, e.g. --set ou.rows=16 (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Write the float network's outputs on the graph input to FILE (.npy, float64,
    /// [M, ...]) and stop.
    #[arg(long, value_name = "FILE")]
    pub float_logits: Option<PathBuf>,
    /// Device draws: programming and read noise re-drawn per draw, draw d seeded from
    /// device.seed and d (draw 0 is the single-draw run); K > 1 adds each figure's mean,
    /// standard deviation and 95% interval over the draws.
    #[arg(long, default_value_t = 1, value_name = "K")]
    pub draws: u32,
    /// Run only samples [A, B) of the run's samples (of `--samples`, default all) and
    /// write them as a shard to `--out` (records and shard.json, no figures);
    /// `sresim accuracy-merge` joins the shards into the run's outputs.
    #[arg(long, value_name = "A..B")]
    pub sample_range: Option<String>,
    /// Print neither the table nor the progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `--sample-range A..B` of a run over `samples` samples.
fn parse_range(text: &str, samples: usize) -> Result<std::ops::Range<usize>> {
    let bad = || {
        anyhow!(
            "--sample-range: '{text}' is not A..B with 0 <= A < B <= {samples} (the run's samples)"
        )
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let a: usize = a.trim().parse().map_err(|_| bad())?;
    let b: usize = b.trim().parse().map_err(|_| bad())?;
    if a >= b || b > samples {
        return Err(bad());
    }
    Ok(a..b)
}

/// `sresim accuracy`.
pub fn run(args: &AccuracyArgs) -> Result<()> {
    let cfg = sim::config::load_cli(args.config.as_deref(), &args.sets)?;
    let modes = if args.modes.len() == 1 && args.modes[0].trim() == "none" {
        Vec::new()
    } else {
        sim::run::parse_modes(&args.modes)?
    };
    sim::run::check_workers("--threads", args.threads)?;
    if !(1..=sim::draws::MAX_DRAWS).contains(&args.draws) {
        bail!(
            "--draws: {} is not a number of device draws in 1..={}",
            args.draws,
            sim::draws::MAX_DRAWS
        );
    }
    let selector = args
        .layers
        .as_deref()
        .map(LayerSelector::parse)
        .transpose()
        .map_err(|e| anyhow!("--layers: {e}"))?;
    // Drawn at once: reading a large bundle takes a while too. Without a terminal, plain
    // lines instead (from when the work is known).
    let show = match args.float_logits {
        Some(_) => sim::progress::Show::Nothing,
        None => sim::progress::show(args.quiet),
    };
    let mut bar = Bar::new(show);
    let w = sim::accuracy::open_bundle(args.workload.as_deref(), &cfg, "--workload")?;
    let net = sim::accuracy::load_network(&w, &cfg)?;
    let samples = match args.samples {
        None => net.samples,
        Some(0) => bail!("--samples: must be at least 1"),
        Some(s) if s > net.samples => bail!(
            "--samples {s}: the graph input of {} holds {} samples",
            net.name,
            net.samples
        ),
        Some(s) => s,
    };
    let crossbar = sim::accuracy::crossbar_layers(&net, selector.as_ref(), "--layers")?;
    functional::check_table(&cfg.device, &cfg.hw, &modes, &cfg.origin)
        .map_err(anyhow::Error::msg)?;
    let range = args
        .sample_range
        .as_deref()
        .map(|r| parse_range(r, samples))
        .transpose()?;
    if range.is_some() && args.float_logits.is_some() {
        bail!("--sample-range: a shard writes records, not --float-logits");
    }
    if range.is_some() && args.out.is_none() {
        bail!("--sample-range: needs --out DIR, the shard's directory");
    }
    let pool = sim::run::worker_pool("--threads", args.threads)?;

    if let Some(path) = &args.float_logits {
        // The destination is checked (and its temporary made) before anything is computed.
        let flag = |e: anyhow::Error| anyhow!("--float-logits: {e:#}");
        let mut staged = outdir::stage_file(path).map_err(flag)?;
        let y = pool.install(|| ::accuracy::float_outputs(&net, samples))?;
        let mut shape = vec![samples];
        shape.extend(net.graph.tensors[net.graph.outputs[0]].shape.iter().skip(1));
        staged
            .write_all(&sim::functional::npy(&shape, &y))
            .map_err(|e| anyhow!("--float-logits: {e}"))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        outdir::replace_staged(dir, vec![staged]).map_err(flag)?;
        if !args.quiet {
            writeln!(
                outdir::stdout(),
                "wrote {} ({shape:?} float64)",
                bounds::text::path(path)
            )?;
        }
        return Ok(());
    }

    let shard = range.map(|range| sim::accuracy_shard::ShardRun {
        net: &net,
        cfg: &cfg,
        modes: &modes,
        crossbar: &crossbar,
        workload: args.workload.as_deref(),
        samples,
        range,
        draws: args.draws,
    });
    // Checked (the config's TOML read back) before --out is opened (docs/errors.md,
    // "Output directories": inputs, then the lock).
    if let Some(shard) = &shard {
        shard.manifest()?;
    }
    let out = args
        .out
        .as_deref()
        .map(outdir::OutputDir::open)
        .transpose()?;
    if let (Some(shard), Some(dir)) = (shard, &out) {
        let range = shard.range.clone();
        bar.start(
            sim::accuracy::network_work(&net, &crossbar, &cfg, &modes, range.len(), args.draws),
            range.len() as u64 * u64::from(sim::accuracy::draws_computed(&cfg, &modes, args.draws)),
        );
        let m = pool.install(|| shard.write(dir, &|n| bar.inc(n)))?;
        drop(bar);
        if !args.quiet {
            writeln!(
                outdir::stdout(),
                "wrote {}/{{{},{}}}: samples {}..{} of {} (fingerprint {}); `sresim accuracy-merge` joins the shards",
                bounds::text::path(dir.path()),
                sim::accuracy_shard::RECORDS,
                sim::accuracy_shard::MANIFEST,
                range.start,
                range.end,
                samples,
                m.fingerprint
            )?;
        }
        return Ok(());
    }
    bar.start(
        sim::accuracy::network_work(&net, &crossbar, &cfg, &modes, samples, args.draws),
        samples as u64 * u64::from(sim::accuracy::draws_computed(&cfg, &modes, args.draws)),
    );
    let draws = pool.install(|| {
        sim::accuracy::evaluate_draws(&net, &cfg, &modes, &crossbar, samples, args.draws, &|n| {
            bar.inc(n)
        })
    })?;
    drop(bar);
    let outputs = Outputs {
        info: &NetInfo::of(&net),
        draws: &draws,
        clip: matches!(cfg.hw.adc_bits, crossbar::AdcBits::Fixed(_)),
        origin: &cfg.origin,
        config: &serde_json::to_value(&cfg.config)?,
        crossbar: &crossbar,
    };
    outputs.write(out.as_ref(), args.quiet)
}

/// The progress bar of `accuracy`, in the units of [`sim::accuracy::work`] (a sample
/// through one path weighed by its MACs and how the path computes them): drawn at once,
/// its length set when the network is read, redrawn as batches finish, and cleared
/// however the command ends. Without a terminal, progress lines from when the work is
/// known, counting samples x draws by the share of the work done.
struct Bar(
    Option<ProgressBar>,
    sim::progress::Show,
    Option<sim::progress::Lines>,
);

impl Bar {
    fn new(show: sim::progress::Show) -> Bar {
        let bar = (show == sim::progress::Show::Bar).then(|| {
            let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% {msg}(eta {eta})",
            ) {
                pb.set_style(style);
            }
            pb.set_message("reading the network ");
            pb.enable_steady_tick(std::time::Duration::from_millis(250));
            pb
        });
        Bar(bar, show, None)
    }

    /// The work is known: `total` units, for `sample_draws` samples x draws.
    fn start(&mut self, total: u64, sample_draws: u64) {
        if let Some(b) = &self.0 {
            b.set_message("");
            b.set_length(total);
            b.reset_eta();
        }
        if self.1 == sim::progress::Show::Lines {
            self.2 = Some(sim::progress::Lines::start(
                "sresim accuracy",
                sim::progress::Count::Share("samples x draws", sample_draws),
                total,
            ));
        }
    }

    fn inc(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
        if let Some(l) = &self.2 {
            l.inc(n);
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}
