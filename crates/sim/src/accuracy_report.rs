//! What `sresim accuracy` and `sresim accuracy-merge` write (docs/accuracy.md):
//! accuracy.csv, summary.json and the printed tables, from a run's draws
//! ([`crate::accuracy::Draws`]) or from the merged shards of one
//! ([`crate::accuracy_shard::merge`]). The report of the accuracy path, as
//! [`crate::report`] is the report of `run`.

use crate::accuracy::{Draws, NetInfo};
use accuracy::{Evaluation, PathResult};
use anyhow::{anyhow, Result};
use std::io::Write;

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
            let mut o = outdir::stdout();
            write!(o, "{}", table(net, ev))?;
            if draws.k > 1 {
                write!(o, "{}", draws_table(net, draws))?;
            }
            match out {
                Some(d) => writeln!(
                    o,
                    "wrote {0}/accuracy.csv and {0}/summary.json",
                    bounds::text::path(d.path())
                )?,
                None => writeln!(o, "(--out DIR writes accuracy.csv and summary.json)")?,
            }
            o.flush()?;
        }
        Ok(())
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
    crate::accuracy::figures(net, ev, p).map(crate::accuracy::cell)
}

/// The columns accuracy.csv gains with more than one draw: the draw of a row, then the
/// intervals of [`crate::draws::FIGURES`].
pub fn draw_columns() -> Vec<String> {
    let mut c = vec!["draw".to_string()];
    c.extend(crate::draws::columns());
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
        header.push(crate::functional::CLIP_COLUMN.to_string());
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
            crate::draws::columns().len(),
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
                    row.push(crate::functional::clip_value(m));
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
    let means: Vec<String> = (0..crate::accuracy::FIGURES.len())
        .map(|f| crate::accuracy::cell(draws.figure(net, pi, f).map(|i| i.mean)))
        .collect();
    row.extend(means);
    row.extend(std::iter::repeat_n(String::new(), 4 + clip as usize));
    row.push("all".into());
    row.extend(draws.interval_cells(net, pi));
    row
}

/// summary.json's figures over the draws: `draws` (K), `draw_seeds`, `draws_identical`,
/// and per path (`quantized`, `modes.MODE`) a `draws` object with, per figure, its value
/// in every draw and its mean, std, ci_low and ci_high.
fn add_draws_json(summary: &mut serde_json::Value, net: &NetInfo, draws: &Draws) {
    let path = |pi: usize| {
        let mut o = serde_json::Map::new();
        for (name, f) in crate::draws::FIGURES
            .iter()
            .zip(crate::accuracy::DRAW_FIGURES)
        {
            let values: Vec<Option<f64>> = (0..draws.k as usize)
                .map(|d| {
                    let ev = draws.eval(d);
                    let p = if pi == 0 {
                        &ev.quantized
                    } else {
                        &ev.modes[pi - 1]
                    };
                    crate::accuracy::figures(net, ev, p)[f]
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
        // Over the samples and the draws: top-1's and agreement's interval, and the
        // paired top-1 drop against the quantized network.
        let [top1, agreement, drop] = draws.sample_intervals(net, pi);
        for (name, i) in [("top1", top1), ("agreement", agreement)] {
            if let Some(serde_json::Value::Object(f)) = o.get_mut(name) {
                f.insert("samples_ci_low".into(), i.map(|i| i.low).into());
                f.insert("samples_ci_high".into(), i.map(|i| i.high).into());
            }
        }
        if pi > 0 {
            o.insert(
                "top1_drop".into(),
                serde_json::json!({
                    "mean": drop.map(|i| i.mean),
                    "ci_low": drop.map(|i| i.low), "ci_high": drop.map(|i| i.high),
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
        "over {} device draws{} (mean [95% device-draw interval, at these samples]):\n{:<12}{:>26}{:>26}{:>32}\n",
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
    s.push_str(&format!(
        "over the samples and the draws (95% interval; the drop is paired, against the quantized network):\n{:<12}{:>26}{:>26}{:>32}\n",
        "path", "top-1", "agreement", "top-1 drop"
    ));
    for pi in 0..1 + ev.modes.len() {
        let p = if pi == 0 {
            &ev.quantized
        } else {
            &ev.modes[pi - 1]
        };
        let [top1, agreement, drop] = draws.sample_intervals(net, pi);
        let range = |i: Option<crate::draws::Interval>| match i {
            None => "-".to_string(),
            Some(i) => format!("[{:.2}, {:.2}]", 100.0 * i.low, 100.0 * i.high),
        };
        let drop = match drop {
            None => "-".to_string(),
            Some(i) => format!(
                "{:.2}% [{:.2}, {:.2}]",
                100.0 * i.mean,
                100.0 * i.low,
                100.0 * i.high
            ),
        };
        s.push_str(&format!(
            "{:<12}{:>26}{:>26}{:>32}\n",
            mode_name(p),
            range(top1),
            range(agreement),
            drop
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
