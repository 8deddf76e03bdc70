//! `sresim accuracy` (docs/accuracy.md): reads a bundle's network, runs the accuracy
//! crate over its graph input and writes accuracy.csv and summary.json.

use accuracy::{Evaluation, Network, PathResult};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sim::config::Resolved;
use std::io::{IsTerminal, Write};
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
    /// Print neither the table nor the progress bar.
    #[arg(long, short = 'q')]
    pub quiet: bool,
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
    let selector = args
        .layers
        .as_deref()
        .map(LayerSelector::parse)
        .transpose()
        .map_err(|e| anyhow!("--layers: {e}"))?;
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
            .map_err(|e| anyhow!("--float-logits: {}: cannot write: {e}", path.display()))?;
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
    let bar = progress_bar(
        samples as u64,
        !args.quiet && std::io::stderr().is_terminal(),
    );
    let inc = |n: u64| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    };
    let ev =
        pool.install(|| sim::accuracy::evaluate(&net, &cfg, &modes, &crossbar, samples, &inc))?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let csv = accuracy_csv(&net, &ev)?;
    let json = serde_json::to_vec_pretty(&summary_json(&net, &ev, &cfg, &crossbar))?;
    if let Some(dir) = &out {
        dir.replace(&[("accuracy.csv", &csv), ("summary.json", &json)])?;
    }
    if !args.quiet {
        let mut o = std::io::stdout().lock();
        write!(o, "{}", table(&net, &ev))?;
        match &args.out {
            Some(d) => writeln!(
                o,
                "wrote {0}/accuracy.csv and {0}/summary.json",
                d.display()
            )?,
            None => writeln!(o, "(--out DIR writes accuracy.csv and summary.json)")?,
        }
        o.flush()?;
    }
    Ok(())
}

fn progress_bar(total: u64, enabled: bool) -> Option<ProgressBar> {
    enabled.then(|| {
        let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} samples (eta {eta})",
        ) {
            pb.set_style(style);
        }
        pb
    })
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
fn network_figures(net: &Network, ev: &Evaluation, p: &PathResult) -> [String; 6] {
    sim::accuracy::figures(net, ev, p).map(sim::accuracy::cell)
}

/// accuracy.csv: per path (the quantized network, then each mode) a `TOTAL` row with the
/// network figures, then a row per crossbar layer with its error figures.
pub fn accuracy_csv(net: &Network, ev: &Evaluation) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS)?;
    for p in std::iter::once(&ev.quantized).chain(&ev.modes) {
        let mode = mode_name(p);
        let mut row = vec![
            net.name.clone(),
            "TOTAL".into(),
            mode.clone(),
            ev.samples.to_string(),
        ];
        row.extend(network_figures(net, ev, p));
        row.extend([String::new(), String::new(), String::new(), String::new()]);
        w.write_record(&row)?;
        for (l, st) in net.layers.iter().zip(&p.layers) {
            let mut row = vec![
                net.name.clone(),
                l.name().to_string(),
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
            w.write_record(&row)?;
        }
    }
    w.into_inner().map_err(|e| anyhow!("accuracy.csv: {e}"))
}

fn summary_json(
    net: &Network,
    ev: &Evaluation,
    cfg: &Resolved,
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
        "crossbar_layers": net.layers.iter().zip(crossbar).filter(|(_, &c)| c).map(|(l, _)| l.name()).collect::<Vec<_>>(),
        "config": cfg.origin,
        "config_values": cfg.config,
    })
}

fn table(net: &Network, ev: &Evaluation) -> String {
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
