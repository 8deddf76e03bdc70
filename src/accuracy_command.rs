//! `sresim accuracy` (docs/accuracy.md): reads a bundle's network, runs the accuracy
//! crate over its graph input and writes accuracy.csv and summary.json.

use accuracy::{Evaluation, PathResult};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sim::accuracy::{Draws, NetInfo};
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
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| anyhow!("--threads: {e}"))?;

    if let Some(path) = &args.float_logits {
        // The destination is checked (and its temporary made) before anything is computed.
        let flag = |e: anyhow::Error| anyhow!("--float-logits: {e:#}");
        let mut staged = outdir::stage_file(path).map_err(flag)?;
        let y = pool.install(|| accuracy::float_outputs(&net, samples))?;
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
            println!("wrote {} ({shape:?} float64)", path.display());
        }
        return Ok(());
    }

    let out = args
        .out
        .as_deref()
        .map(outdir::OutputDir::open)
        .transpose()?;
    if let (Some(range), Some(dir)) = (range, &out) {
        let shard = sim::accuracy_shard::ShardRun {
            net: &net,
            cfg: &cfg,
            modes: &modes,
            crossbar: &crossbar,
            workload: args.workload.as_deref(),
            samples,
            range: range.clone(),
            draws: args.draws,
        };
        // Checked (the config's TOML read back) before anything is computed.
        shard.manifest()?;
        bar.start(
            sim::accuracy::network_work(&net, &crossbar, &cfg, &modes, range.len(), args.draws),
            range.len() as u64 * u64::from(sim::accuracy::draws_computed(&cfg, &modes, args.draws)),
        );
        let m = pool.install(|| shard.write(dir, &|n| bar.inc(n)))?;
        drop(bar);
        if !args.quiet {
            println!(
                "wrote {}/{{{},{}}}: samples {}..{} of {} (fingerprint {}); `sresim accuracy-merge` joins the shards",
                dir.path().display(),
                sim::accuracy_shard::RECORDS,
                sim::accuracy_shard::MANIFEST,
                range.start,
                range.end,
                samples,
                m.fingerprint
            );
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

/// What `accuracy` and `accuracy-merge` write: accuracy.csv, summary.json and the table.
pub struct Outputs<'a> {
    pub info: &'a NetInfo,
    pub draws: &'a Draws,
    /// accuracy.csv has `adc_clip_frac` (a fixed `adc.bits`).
    pub clip: bool,
    /// summary.json's `config` and `config_values`.
    pub origin: &'a str,
    pub config: &'a serde_json::Value,
    pub crossbar: &'a [bool],
}

impl Outputs<'_> {
    /// Writes accuracy.csv and summary.json to `out` (when given) and, unless `quiet`,
    /// prints the table.
    pub fn write(&self, out: Option<&outdir::OutputDir>, quiet: bool) -> Result<()> {
        let (net, draws) = (self.info, self.draws);
        let ev = draws.first();
        let csv = accuracy_csv(net, draws, self.clip)?;
        let mut summary = summary_json(net, ev, self.origin, self.config, self.crossbar);
        if draws.k > 1 {
            add_draws_json(&mut summary, net, draws);
        }
        let json = serde_json::to_vec_pretty(&summary)?;
        if let Some(dir) = out {
            dir.replace(&[("accuracy.csv", &csv), ("summary.json", &json)])?;
        }
        if !quiet {
            let mut o = std::io::stdout().lock();
            write!(o, "{}", table(net, ev))?;
            if draws.k > 1 {
                write!(o, "{}", draws_table(net, draws))?;
            }
            match out {
                Some(d) => writeln!(
                    o,
                    "wrote {0}/accuracy.csv and {0}/summary.json",
                    d.path().display()
                )?,
                None => writeln!(o, "(--out DIR writes accuracy.csv and summary.json)")?,
            }
            o.flush()?;
        }
        Ok(())
    }
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

/// Columns of accuracy.csv (docs/accuracy.md defines them).
pub const COLUMNS: [&str; 14] = [
    "network",
    "layer",
    "mode",
    "samples",
    "top1",
    "top1_float",
    "agreement",
    "top1_quantized",
    "agreement_quantized",
    "output_rel_rmse",
    "func_exact_frac",
    "func_rel_rmse",
    "func_max_abs_err",
    "float_rel_rmse",
];

fn mode_name(p: &PathResult) -> String {
    p.mode.map_or("quantized".to_string(), |m| m.to_string())
}

fn fmt(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

/// Network figures of one path: top1, top1_float, agreement, top1_quantized,
/// agreement_quantized, output_rel_rmse.
fn network_figures(net: &NetInfo, ev: &Evaluation, p: &PathResult) -> [String; 6] {
    sim::accuracy::figures(net, ev, p).map(sim::accuracy::cell)
}

/// The columns accuracy.csv gains with more than one draw: the draw of a row, then the
/// intervals of [`sim::draws::FIGURES`].
pub fn draw_columns() -> Vec<String> {
    let mut c = vec!["draw".to_string()];
    c.extend(sim::draws::columns());
    c
}

/// accuracy.csv: per path (the quantized network, then each mode) a `TOTAL` row with the
/// network figures, then a row per crossbar layer with its error figures. With K > 1
/// draws, those rows once per draw (`draw` = 0..K-1), then a `TOTAL` row with `draw` =
/// `all`: the figures' means over the draws and their intervals. With a fixed
/// `adc.bits` (`clip`), `adc_clip_frac` follows `float_rel_rmse` on layer rows.
pub fn accuracy_csv(net: &NetInfo, draws: &Draws, clip: bool) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let multi = draws.k > 1;
    let mut header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    if clip {
        header.push(sim::functional::CLIP_COLUMN.to_string());
    }
    if multi {
        header.extend(draw_columns());
    }
    w.write_record(&header)?;
    let paths = 1 + draws.first().modes.len();
    let tail = |d: &str| {
        let mut t = vec![d.to_string()];
        t.extend(std::iter::repeat_n(
            String::new(),
            sim::draws::columns().len(),
        ));
        t
    };
    for pi in 0..paths {
        for d in 0..draws.k as usize {
            let ev = draws.eval(d);
            let p = if pi == 0 {
                &ev.quantized
            } else {
                &ev.modes[pi - 1]
            };
            let mode = mode_name(p);
            let mut row = vec![
                net.name.clone(),
                "TOTAL".into(),
                mode.clone(),
                ev.samples.to_string(),
            ];
            row.extend(network_figures(net, ev, p));
            row.extend([String::new(), String::new(), String::new(), String::new()]);
            if clip {
                row.push(String::new());
            }
            if multi {
                row.extend(tail(&d.to_string()));
            }
            w.write_record(&row)?;
            for (l, st) in net.layers.iter().zip(&p.layers) {
                let mut row = vec![
                    net.name.clone(),
                    l.clone(),
                    mode.clone(),
                    ev.samples.to_string(),
                ];
                row.extend(std::iter::repeat_n(String::new(), 6));
                let m = &st.func;
                if st.crossbar {
                    row.push(fmt(m.exact_frac()));
                    row.push(fmt(m.rel_rmse()));
                    row.push(m.max_abs_err.to_string());
                } else {
                    row.extend([String::new(), String::new(), String::new()]);
                }
                row.push(fmt(st.float_rel_rmse()));
                if clip {
                    let m = st.crossbar.then_some(&st.func);
                    row.push(sim::functional::clip_value(m));
                }
                if multi {
                    row.extend(tail(&d.to_string()));
                }
                w.write_record(&row)?;
            }
        }
        if multi {
            w.write_record(summary_row(net, draws, pi, clip))?;
        }
    }
    w.into_inner().map_err(|e| anyhow!("accuracy.csv: {e}"))
}

/// The `draw` = `all` row of path `pi`: each figure's mean over the draws (top1_float and
/// top1_quantized are the same in every draw), then the intervals.
fn summary_row(net: &NetInfo, draws: &Draws, pi: usize, clip: bool) -> Vec<String> {
    let ev = draws.first();
    let p = if pi == 0 {
        &ev.quantized
    } else {
        &ev.modes[pi - 1]
    };
    let mut row = vec![
        net.name.clone(),
        "TOTAL".into(),
        mode_name(p),
        ev.samples.to_string(),
    ];
    let means: Vec<String> = (0..sim::accuracy::FIGURES.len())
        .map(|f| sim::accuracy::cell(draws.figure(net, pi, f).map(|i| i.mean)))
        .collect();
    row.extend(means);
    row.extend(std::iter::repeat_n(String::new(), 4 + clip as usize));
    row.push("all".into());
    for f in sim::accuracy::DRAW_FIGURES {
        row.extend(sim::draws::Interval::cells(draws.figure(net, pi, f)));
    }
    row
}

/// summary.json's figures over the draws: `draws` (K), `draw_seeds`, `draws_identical`,
/// and per path (`quantized`, `modes.MODE`) a `draws` object with, per figure, its value
/// in every draw and its mean, std, ci_low and ci_high.
fn add_draws_json(summary: &mut serde_json::Value, net: &NetInfo, draws: &Draws) {
    let path = |pi: usize| {
        let mut o = serde_json::Map::new();
        for (name, f) in sim::draws::FIGURES.iter().zip(sim::accuracy::DRAW_FIGURES) {
            let values: Vec<Option<f64>> = (0..draws.k as usize)
                .map(|d| {
                    let ev = draws.eval(d);
                    let p = if pi == 0 {
                        &ev.quantized
                    } else {
                        &ev.modes[pi - 1]
                    };
                    sim::accuracy::figures(net, ev, p)[f]
                })
                .collect();
            let i = draws.figure(net, pi, f);
            o.insert(
                name.to_string(),
                serde_json::json!({
                    "values": values,
                    "mean": i.map(|i| i.mean), "std": i.map(|i| i.std),
                    "ci_low": i.map(|i| i.low), "ci_high": i.map(|i| i.high),
                }),
            );
        }
        serde_json::Value::Object(o)
    };
    summary["draws"] = draws.k.into();
    summary["draw_seeds"] = draws.seeds.clone().into();
    summary["draws_identical"] = draws.identical().into();
    summary["quantized"]["draws"] = path(0);
    for (i, p) in draws.first().modes.iter().enumerate() {
        summary["modes"][mode_name(p)]["draws"] = path(i + 1);
    }
}

/// The printed figures over the draws: mean and 95% interval of each path.
fn draws_table(net: &NetInfo, draws: &Draws) -> String {
    let mut s = format!(
        "over {} device draws{} (mean [95% interval]):\n{:<12}{:>26}{:>26}{:>32}\n",
        draws.k,
        if draws.identical() {
            ", all identical: the device draws nothing"
        } else {
            ""
        },
        "path",
        "top-1",
        "agreement",
        "output rel err"
    );
    let ev = draws.first();
    for pi in 0..1 + ev.modes.len() {
        let p = if pi == 0 {
            &ev.quantized
        } else {
            &ev.modes[pi - 1]
        };
        let cell = |f: usize, pct: bool| match draws.figure(net, pi, f) {
            None => "-".to_string(),
            Some(i) if pct => format!(
                "{:.2}% [{:.2}, {:.2}]",
                100.0 * i.mean,
                100.0 * i.low,
                100.0 * i.high
            ),
            Some(i) => format!("{:.3e} [{:.2e}, {:.2e}]", i.mean, i.low, i.high),
        };
        s.push_str(&format!(
            "{:<12}{:>26}{:>26}{:>32}\n",
            mode_name(p),
            cell(0, true),
            cell(2, true),
            cell(5, false)
        ));
    }
    s
}

fn summary_json(
    net: &NetInfo,
    ev: &Evaluation,
    origin: &str,
    config: &serde_json::Value,
    crossbar: &[bool],
) -> serde_json::Value {
    let path = |p: &PathResult| {
        let f = network_figures(net, ev, p);
        let num = |s: &str| s.parse::<f64>().ok();
        serde_json::json!({
            "top1": num(&f[0]), "agreement": num(&f[2]),
            "agreement_quantized": num(&f[4]), "output_rel_rmse": num(&f[5]),
        })
    };
    let modes: serde_json::Map<String, serde_json::Value> =
        ev.modes.iter().map(|p| (mode_name(p), path(p))).collect();
    let top = |preds: &[usize]| {
        net.labels
            .as_ref()
            .map(|l| Evaluation::top1(preds, &l[..preds.len()]))
    };
    serde_json::json!({
        "network": net.name,
        "samples": ev.samples,
        "labels": net.labels.is_some(),
        "top1_float": top(&ev.float_predictions),
        "quantized": path(&ev.quantized),
        "modes": modes,
        "crossbar_layers": net.layers.iter().zip(crossbar).filter(|(_, &c)| c).map(|(l, _)| l.as_str()).collect::<Vec<_>>(),
        "config": origin,
        "config_values": config,
    })
}

fn table(net: &NetInfo, ev: &Evaluation) -> String {
    let mut s = format!(
        "{} ({} samples{})\n{:<12}{:>10}{:>12}{:>16}\n",
        net.name,
        ev.samples,
        if net.labels.is_some() {
            ", labelled"
        } else {
            ", no labels"
        },
        "path",
        "top-1",
        "agreement",
        "output rel err"
    );
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.2}%", 100.0 * x));
    let top = |preds: &[usize]| {
        net.labels
            .as_ref()
            .map(|l| Evaluation::top1(preds, &l[..preds.len()]))
    };
    s.push_str(&format!(
        "{:<12}{:>10}{:>12}{:>16}\n",
        "float",
        pct(top(&ev.float_predictions)),
        "100.00%",
        "0"
    ));
    for p in std::iter::once(&ev.quantized).chain(&ev.modes) {
        s.push_str(&format!(
            "{:<12}{:>10}{:>12}{:>16}\n",
            mode_name(p),
            pct(top(&p.predictions)),
            pct(Some(Evaluation::agreement(
                &p.predictions,
                &ev.float_predictions
            ))),
            ev.output_rel_rmse(p)
                .map_or("-".into(), |v| format!("{v:.3e}"))
        ));
    }
    s
}
