//! Reports of a run: layers.csv and summary.json (docs/interfaces.md), replaced
//! together (crate outdir), and the summary table printed on stdout.

use crate::config::Resolved;
use crate::result::{LayerResult, ModeTotal, RunResult};
use anyhow::{Context, Result};
use crossbar::Mode;
use energy::{Breakdown, Events};
use pipeline::cycle::CycleStats;
use pipeline::Stage;
use serde_json::{json, Value};
use std::fmt::Write as _;

/// The contract columns of layers.csv, in order.
pub const CONTRACT_COLUMNS: [&str; 17] = [
    "network",
    "layer",
    "kind",
    "mode",
    "vectors",
    "crossbars",
    "ou_ops",
    "rows_driven",
    "cells_read",
    "adc_conversions",
    "index_reads",
    "ous_formed",
    "cycles",
    "time_ns",
    "energy_pj",
    "speedup_vs_dense",
    "energy_saving_vs_dense",
];

/// Columns after the energy breakdown.
pub const EXTRA_COLUMNS: [&str; 12] = [
    "busy_cycles",
    "passes",
    "input_cycles",
    "adc_bits",
    "signed",
    "ir_bits",
    "or_bits",
    "edram_bits",
    "index_bits_read",
    "weight_storage_bits",
    "index_storage_bits",
    "samples",
];

/// Whether every row a run writes fills column `col` of layers.csv (and of points.csv):
/// the names and counts of the contract except `kind` (empty on TOTAL rows) and the two
/// ratios (empty when dense was not run), the energy breakdown, and the extra columns
/// that TOTAL rows fill too. `merge` refuses an empty cell in one of them.
pub fn never_empty(col: &str) -> bool {
    const SOMETIMES: [&str; 3] = ["kind", "speedup_vs_dense", "energy_saving_vs_dense"];
    // The extra columns TOTAL rows leave empty ([`EXTRA_COLUMNS`]' own list).
    const EMPTY_ON_TOTAL: [&str; 4] = ["passes", "input_cycles", "adc_bits", "signed"];
    (CONTRACT_COLUMNS.contains(&col) && !SOMETIMES.contains(&col))
        || Breakdown::COLUMNS.contains(&col)
        || (EXTRA_COLUMNS.contains(&col) && !EMPTY_ON_TOTAL.contains(&col))
}

/// Columns of the cycle engine (empty for the other engines), after [`EXTRA_COLUMNS`]:
/// the queue depth in effect, stall and barrier-wait crossbar-cycles, the partial-sum
/// buffer peak, then busy and stall cycles per stage in [`Stage::ALL`] order (empty for
/// a stage the mode does not have). docs/pipeline.md defines each.
pub const CYCLE_COLUMNS: [&str; 18] = [
    "queue_depth",
    "stall_cycles",
    "wait_cycles",
    "psum_peak",
    "busy_input_register",
    "busy_index_decode",
    "busy_ou_formation",
    "busy_crossbar_read",
    "busy_adc",
    "busy_shift_add",
    "busy_output_register",
    "stall_input_register",
    "stall_index_decode",
    "stall_ou_formation",
    "stall_crossbar_read",
    "stall_adc",
    "stall_shift_add",
    "stall_output_register",
];

pub fn header() -> Vec<&'static str> {
    CONTRACT_COLUMNS
        .iter()
        .chain(Breakdown::COLUMNS.iter())
        .chain(EXTRA_COLUMNS.iter())
        .chain(CYCLE_COLUMNS.iter())
        .copied()
        .collect()
}

/// Whether `col` is a result column of layers.csv, of any run: [`header`], the functional
/// columns, the clip column, the chip's and the digital unit's. What is not one identifies
/// a row (`compare` matches rows by such columns: a sweep's axes). A new column of
/// layers.csv is a result here through its list, or compare would key rows on it.
pub fn is_result_column(col: &str) -> bool {
    header().contains(&col)
        || crate::functional::COLUMNS.contains(&col)
        || col == crate::functional::CLIP_COLUMN
        || crate::chip::CHIP_COLUMNS.contains(&col)
        || crate::digital::COLUMNS.contains(&col)
}

/// The header of `res`'s layers.csv: [`header`], then, in a functional run only, the
/// functional columns.
pub fn header_for(res: &RunResult) -> Vec<&'static str> {
    let mut h = header();
    if res.functional {
        h.extend(crate::functional::COLUMNS);
    }
    if res.adc_clip {
        h.push(crate::functional::CLIP_COLUMN);
    }
    h
}

/// The [`CYCLE_COLUMNS`] of one row.
fn cycle_values(st: Option<&CycleStats>) -> Vec<String> {
    let Some(st) = st else {
        return vec![String::new(); CYCLE_COLUMNS.len()];
    };
    let mut v = vec![
        st.queue_depth.to_string(),
        st.stall_cycles().to_string(),
        st.wait_cycles.to_string(),
        st.psum_peak.to_string(),
    ];
    for counts in [&st.busy, &st.stall] {
        v.extend(Stage::ALL.map(|s| {
            if st.has(s) {
                counts[s.index()].to_string()
            } else {
                String::new()
            }
        }));
    }
    v
}

/// summary.json's `pipeline` object of a mode: null for the fast and reference engines.
fn cycle_json(st: Option<&CycleStats>) -> Value {
    let Some(st) = st else {
        return Value::Null;
    };
    let stages: serde_json::Map<String, Value> = Stage::ALL
        .into_iter()
        .filter(|&s| st.has(s))
        .map(|s| {
            let i = s.index();
            let v = json!({
                "busy_cycles": st.busy[i],
                "stall_cycles": st.stall[i],
                "utilization": st.utilization(s),
            });
            (s.to_string(), v)
        })
        .collect();
    json!({
        "queue_depth": st.queue_depth.to_string(),
        "crossbar_cycles": st.crossbar_cycles,
        "stall_cycles": st.stall_cycles(),
        "wait_cycles": st.wait_cycles,
        "psum_peak": st.psum_peak,
        "stages": stages,
    })
}

/// dense / mode cycles; empty when dense was not run or the ratio is undefined.
fn speedup(dense: Option<u64>, cycles: u64) -> String {
    match dense {
        Some(d) if cycles > 0 => fmt_f(d as f64 / cycles as f64),
        _ => String::new(),
    }
}

fn saving(dense: Option<f64>, energy: f64) -> String {
    match dense {
        Some(d) if d > 0.0 => fmt_f(1.0 - energy / d),
        _ => String::new(),
    }
}

/// Shortest round-trip decimal of an f64: the same bits print the same text.
fn fmt_f(x: f64) -> String {
    format!("{x}")
}

struct Row<'a> {
    layer: &'a str,
    kind: &'a str,
    mode: Mode,
    ev: &'a Events,
    energy: &'a Breakdown,
    time_ns: f64,
    dense: Option<(u64, f64)>,
    /// passes, input_cycles, adc_bits, signed (empty on TOTAL rows).
    extra: [String; 4],
    pipeline: Option<&'a CycleStats>,
}

fn record(net: &str, samples: usize, r: &Row) -> Vec<String> {
    let e = r.ev;
    let total = r.energy.total();
    let mut v = vec![
        net.to_string(),
        r.layer.to_string(),
        r.kind.to_string(),
        r.mode.to_string(),
        e.vectors.to_string(),
        e.crossbars.to_string(),
        e.ou_ops.to_string(),
        e.rows_driven.to_string(),
        e.cells_read.to_string(),
        e.adc_conversions.to_string(),
        e.index_reads.to_string(),
        e.ous_formed.to_string(),
        e.cycles.to_string(),
        fmt_f(r.time_ns),
        fmt_f(total),
        speedup(r.dense.map(|d| d.0), e.cycles),
        saving(r.dense.map(|d| d.1), total),
    ];
    v.extend(r.energy.values().iter().map(|&x| fmt_f(x)));
    v.push(e.busy_cycles.to_string());
    v.extend(r.extra.iter().cloned());
    v.extend(
        [
            e.ir_bits,
            e.or_bits,
            e.edram_bits,
            e.index_bits_read,
            e.weight_storage_bits,
            e.index_storage_bits,
        ]
        .map(|x| x.to_string()),
    );
    v.push(samples.to_string());
    v.extend(cycle_values(r.pipeline));
    v
}

fn layer_row(res: &RunResult, r: &LayerResult) -> Vec<String> {
    let dense = res
        .dense_of(&r.layer)
        .map(|d| (d.events.cycles, d.energy.total()));
    record(
        &res.network,
        res.samples,
        &Row {
            layer: &r.layer,
            kind: r.kind.as_str(),
            mode: r.mode,
            ev: &r.events,
            energy: &r.energy,
            time_ns: r.time_ns,
            dense,
            extra: [
                r.passes.to_string(),
                r.input_cycles.to_string(),
                r.adc_bits.to_string(),
                (r.signed as u8).to_string(),
            ],
            pipeline: r.pipeline.as_ref(),
        },
    )
}

fn dense_total(res: &RunResult) -> Option<(u64, f64)> {
    res.total(Mode::Dense)
        .map(|d| (d.events.cycles, d.energy.total()))
}

fn total_row(res: &RunResult, t: &ModeTotal) -> Vec<String> {
    record(
        &res.network,
        res.samples,
        &Row {
            layer: "TOTAL",
            kind: "",
            mode: t.mode,
            ev: &t.events,
            energy: &t.energy,
            time_ns: t.time_ns,
            dense: dense_total(res),
            extra: Default::default(),
            pipeline: t.pipeline.as_ref(),
        },
    )
}

/// The records of layers.csv (without the header): one per (layer, mode), then one TOTAL
/// record per mode.
pub fn layers_rows(res: &RunResult) -> Vec<Vec<String>> {
    let func = |mut row: Vec<String>, f: Option<&crate::functional::FuncResult>| {
        if res.functional {
            row.extend(crate::functional::values(f));
        }
        if res.adc_clip {
            row.push(crate::functional::clip_value(f.map(|f| &f.metrics)));
        }
        row
    };
    let layers = res
        .layers
        .iter()
        .map(|r| func(layer_row(res, r), r.functional.as_ref()));
    let totals = res.totals.iter().map(|t| func(total_row(res, t), None));
    layers.chain(totals).collect()
}

/// The config key that scales a column of layers.csv and its value, for the message
/// when a figure of that column is not finite (`energy_pj` and the saving: the key of the
/// row's largest energy component).
fn column_key(col: &str, row: &[String], cfg: &Resolved) -> Option<(String, f64)> {
    let entries = cfg.energy.entries();
    if col == "time_ns" {
        return Some(("timing.cycle_ns".into(), cfg.cycle_ns));
    }
    if col == "e_static_pj" {
        return Some((
            "power.static_mw_per_crossbar".into(),
            cfg.static_mw_per_crossbar,
        ));
    }
    if let Some(i) = Breakdown::COLUMNS.iter().position(|c| *c == col) {
        let (name, v) = entries.get(i)?;
        return Some((format!("energy.{name}"), *v));
    }
    if col == "energy_pj" || col == "energy_saving_vs_dense" {
        let head = header();
        let value = |c: &str| -> f64 {
            head.iter()
                .position(|h| *h == c)
                .and_then(|i| row.get(i))
                .and_then(|x| x.parse::<f64>().ok())
                .map_or(0.0, |x| if x.is_nan() { f64::INFINITY } else { x })
        };
        let largest = Breakdown::COLUMNS
            .iter()
            .max_by(|a, b| value(a).total_cmp(&value(b)))?;
        return column_key(largest, row, cfg);
    }
    None
}

/// Refuses a result with a figure that is not a finite number (a finite but huge config
/// value can overflow f64): layers.csv, summary.json and the table on stdout hold only
/// finite numbers. The message names the config key that scales the figure. Every row
/// passes the one finite gate, `bounds::finite::check_row`.
pub fn check_finite(res: &RunResult, cfg: &Resolved) -> Result<()> {
    check_digital(res, cfg)?;
    let head = header();
    for row in layers_rows(res) {
        let name = || format!("{} ({})", row[1], row[3]);
        let Err(e) = bounds::finite::check_row(&head, &row, is_text, name) else {
            continue;
        };
        return Err(match column_key(head[e.index], &row, cfg) {
            Some((key, v)) => anyhow::anyhow!(
                "{}: {key}: {} is too large: {e}",
                cfg.source_of(&key),
                if v != 0.0 && !(1e-4..1e6).contains(&v.abs()) {
                    format!("{v:e}")
                } else {
                    format!("{v}")
                }
            ),
            None => anyhow::anyhow!("{}: {e}", cfg.origin),
        });
    }
    Ok(())
}

/// The finite gate of the digital unit's columns (a huge `[digital]` value or table entry
/// can overflow f64).
fn check_digital(res: &RunResult, cfg: &Resolved) -> Result<()> {
    if res.digital.is_none() {
        return Ok(());
    }
    let rows = res.layers.len() + res.totals.len();
    for i in 0..rows {
        let Some(row) = digital_values(res, i) else {
            continue;
        };
        let name = || match res.layers.get(i) {
            Some(r) => format!("{} ({})", r.layer, r.mode),
            None => "TOTAL".to_string(),
        };
        bounds::finite::check_row(&crate::digital::COLUMNS, &row, is_text, name).map_err(|e| {
            let col = crate::digital::COLUMNS[e.index];
            // The keys that scale the column, the likeliest named with where it came from.
            let keys: &[&str] = match col {
                "combined_cycles" | "combined_time_ns" => {
                    &["timing.cycle_ns", "digital.clock_ghz", "digital.lanes"]
                }
                "attention_write_pj" | "attention_write_ns" | "attention_write_cells" => {
                    &["attention.write_table", "timing.cycle_ns"]
                }
                c if c.ends_with("_pj") => &["digital.table", "tech.node"],
                _ => &["digital.clock_ghz", "digital.lanes", "timing.cycle_ns"],
            };
            let key = cfg.likely_key(keys);
            anyhow::anyhow!(
                "{}: {key}: {e} (the value is too small or too large for the digital unit's figures)",
                cfg.source_of(key)
            )
        })?;
    }
    Ok(())
}

/// The text columns of layers.csv (names, not figures).
fn is_text(col: &str) -> bool {
    matches!(
        col,
        "network" | "layer" | "mode" | "chip_note" | "chip_fits"
    )
}

/// The finite gate of the chip columns and sections (layers.csv, summary.json, the
/// table and a sweep's points): the last line of defence after the chip's own checks,
/// which name the key.
pub fn check_chip(res: &RunResult, cfg: &Resolved) -> Result<()> {
    let Some(chip) = &res.chip else {
        return Ok(());
    };
    let gate = |head: &[&str], row: &[String], what: &str| {
        bounds::finite::check_row(head, row, is_text, || what.to_string())
            .map_err(|e| anyhow::anyhow!("{}: {}: {e}", cfg.origin, res.network))
    };
    let per_mode = res.modes.len().max(1);
    let layers = res.layers.len() / per_mode;
    for m in chip {
        for i in 0..layers {
            let what = format!("{} ({})", res.layers[i * per_mode].layer, m.mode);
            gate(
                &crate::chip::CHIP_COLUMNS,
                &crate::chip::values(m, Some(i)),
                &what,
            )?;
        }
        let what = format!("TOTAL ({})", m.mode);
        gate(
            &crate::chip::CHIP_COLUMNS,
            &crate::chip::values(m, None),
            &what,
        )?;
        let summary = crate::chip::summary_values(m);
        gate(&crate::chip::SUMMARY_COLUMNS, &summary, &what)?;
    }
    Ok(())
}

/// layers.csv as bytes: [`header`], then [`layers_rows`]; with a `[chip]` table its
/// columns, then for a run with the digital unit its columns ([`crate::digital::COLUMNS`]).
pub fn layers_csv(res: &RunResult) -> Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut h = header_for(res);
    if res.chip.is_some() {
        // With a [chip] table, its columns follow all others.
        h.extend(crate::chip::CHIP_COLUMNS);
    }
    if res.digital.is_some() {
        // Then the digital unit's (a transformer's run only).
        h.extend(crate::digital::COLUMNS);
    }
    w.write_record(h)?;
    let per_mode = res.modes.len().max(1);
    for (i, mut row) in layers_rows(res).into_iter().enumerate() {
        let (layer, m) = if i < res.layers.len() {
            (Some(i / per_mode), i % per_mode)
        } else {
            (None, i - res.layers.len())
        };
        if let Some(chip) = &res.chip {
            row.extend(crate::chip::values(&chip[m], layer));
        }
        if let Some(d) = digital_values(res, i) {
            row.extend(d);
        }
        w.write_record(row)?;
    }
    w.into_inner().context("csv buffer")
}

/// The digital unit's columns of record `i` of [`layers_rows`] (None without the unit).
pub fn digital_values(res: &RunResult, i: usize) -> Option<Vec<String>> {
    let d = res.digital.as_ref()?;
    let per_mode = res.modes.len().max(1);
    let cycle_ns = d.cycle_ns;
    if let Some(r) = res.layers.get(i) {
        let l = d.per_layer.get(i / per_mode).copied().unwrap_or_default();
        return Some(crate::digital::values(
            &l,
            r.events.cycles,
            r.energy.total(),
            l.crossbar_cycles(cycle_ns),
            cycle_ns,
        ));
    }
    let t = res.totals.get(i - res.layers.len())?;
    Some(crate::digital::values(
        &d.total(),
        t.events.cycles,
        t.energy.total(),
        d.crossbar_cycles(cycle_ns),
        cycle_ns,
    ))
}

/// summary.json: the network, the effective config and per-mode totals.
pub fn summary_json(res: &RunResult, cfg: &Resolved) -> Value {
    let dense = dense_total(res);
    let modes: serde_json::Map<String, Value> = res
        .totals
        .iter()
        .map(|t| {
            let e = &t.events;
            let energy = t.energy.total();
            let breakdown: serde_json::Map<String, Value> = Breakdown::COLUMNS
                .iter()
                .zip(t.energy.values())
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect();
            (
                t.mode.to_string(),
                json!({
                    "cycles": e.cycles,
                    "time_ns": t.time_ns,
                    "energy_pj": energy,
                    "speedup_vs_dense": dense.filter(|_| e.cycles > 0).map(|d| d.0 as f64 / e.cycles as f64),
                    "energy_saving_vs_dense": dense.filter(|d| d.1 > 0.0).map(|d| 1.0 - energy / d.1),
                    "crossbars": e.crossbars,
                    "events": e,
                    "energy_breakdown_pj": breakdown,
                    "pipeline": cycle_json(t.pipeline.as_ref()),
                }),
            )
        })
        .collect();
    let mut modes = modes;
    if let Some(d) = &res.digital {
        for t in &res.totals {
            if let Some(Value::Object(o)) = modes.get_mut(t.mode.as_str()) {
                crate::digital::extend_mode_json(o, d, t.events.cycles, t.energy.total());
            }
        }
    }
    let mut s = json!({
        "sresim_version": env!("CARGO_PKG_VERSION"),
        "network": res.network,
        "source": res.source,
        "samples": res.samples,
        "layers": res.layers.len() / res.modes.len().max(1),
        "engine": res.engine.to_string(),
        "config_origin": cfg.origin,
        "config": cfg.config,
        "energy_table": cfg.energy,
        "modes": modes,
        "macs_per_sample": {"crossbar": res.crossbar_macs, "off_crossbar": res.off_crossbar_macs()},
    });
    if let (Some(c), Some(figures), Some(o)) = (&cfg.chip, &res.chip, s.as_object_mut()) {
        o.insert("chip".into(), crate::chip::json(c, figures));
    }
    // Only for a network that has such ops: every other summary stays as it was.
    if let (false, Some(o)) = (res.off_crossbar.is_empty(), s.as_object_mut()) {
        let ops: Vec<Value> = res
            .off_crossbar
            .iter()
            .map(|(node, macs)| json!({"node": node, "op": "MatMul", "macs_per_sample": macs}))
            .collect();
        o.insert(
            "off_crossbar".into(),
            json!({
                "macs_per_sample": res.off_crossbar_macs(),
                "ops": ops,
                "counted": res.digital.as_ref().is_some_and(|d| d.placement == digital::Placement::Digital),
            }),
        );
    }
    if let (Some(d), Some(o)) = (&res.digital, s.as_object_mut()) {
        o.insert("digital_unit".into(), crate::digital::unit_json(d, cfg));
    }
    s
}

/// Replaces layers.csv (or layers.parquet) and summary.json in `dir` together, with
/// outputs.npz when the run has it. The replacement removes what an earlier run left
/// that this one does not write (the layers table of the other format, an outputs.npz),
/// so that the directory holds one result (outdir, docs/errors.md "One result set,
/// whole").
pub fn write_outputs(
    dir: &outdir::OutputDir,
    res: &RunResult,
    cfg: &Resolved,
    format: crate::format::Format,
) -> Result<()> {
    let name = format.file("layers");
    let table = match format {
        crate::format::Format::Csv => layers_csv(res)?,
        crate::format::Format::Parquet => {
            crate::format::parquet_of_csv(&name, &layers_csv(res)?, crate::columns::layers_kind)?
        }
    };
    let json = serde_json::to_vec_pretty(&summary_json(res, cfg))?;
    // Everything is built before the first file is replaced.
    let npz = crate::functional::outputs_npz(res)?;
    match &npz {
        Some(npz) => dir.replace(&[
            ("outputs.npz", npz),
            (&name, &table),
            ("summary.json", &json),
        ])?,
        None => dir.replace(&[(&name, &table), ("summary.json", &json)])?,
    }
    Ok(())
}

/// The per-mode summary table printed on stdout.
pub fn summary_table(res: &RunResult) -> String {
    let dense = dense_total(res);
    let mut s = String::new();
    let off = res.off_crossbar_macs();
    let macs = match off {
        0 => format!("{} MACs a sample", res.crossbar_macs),
        _ => format!(
            "{} crossbar + {off} off-crossbar MACs a sample",
            res.crossbar_macs
        ),
    };
    let _ = writeln!(
        s,
        "{} ({} layers, {macs}, {} engine): totals over {} sample{}",
        res.network,
        res.layers.len() / res.modes.len().max(1),
        res.engine,
        res.samples,
        if res.samples == 1 { "" } else { "s" }
    );
    // One unit and precision per column: the largest mode's.
    use memory::units::{Column, NANOSECONDS, PICOJOULES};
    let time = Column::fit(res.totals.iter().map(|t| t.time_ns), NANOSECONDS, 3);
    let energy = Column::fit(res.totals.iter().map(|t| t.energy.total()), PICOJOULES, 3);
    let _ = write!(
        s,
        "{:<11}{:>16}{:>13}{:>13}{:>10}{:>10}{:>11}",
        "mode", "cycles", "time", "energy", "speedup", "e-saving", "crossbars"
    );
    if res.functional {
        let _ = write!(s, "{:>9}{:>11}", "exact", "rel-err");
    }
    s.push('\n');
    for t in &res.totals {
        let e = t.energy.total();
        let sp = dense
            .filter(|_| t.events.cycles > 0)
            .map(|d| format!("{:.2}x", d.0 as f64 / t.events.cycles as f64))
            .unwrap_or_else(|| "-".into());
        let sv = dense
            .filter(|d| d.1 > 0.0)
            .map(|d| format!("{:.1}%", 100.0 * (1.0 - e / d.1)))
            .unwrap_or_else(|| "-".into());
        let _ = write!(
            s,
            "{:<11}{:>16}{:>13}{:>13}{:>10}{:>10}{:>11}",
            t.mode.as_str(),
            t.events.cycles,
            time.show(t.time_ns),
            energy.show(e),
            sp,
            sv,
            t.events.crossbars
        );
        if res.functional {
            let m = crate::functional::total_metrics(res, t.mode);
            let exact = m
                .as_ref()
                .and_then(|m| m.exact_frac())
                .map_or("-".into(), |x| format!("{:.1}%", 100.0 * x));
            let err = m
                .as_ref()
                .and_then(|m| m.rel_rmse())
                .map_or("-".into(), |x| format!("{x:.2e}"));
            let _ = write!(s, "{exact:>9}{err:>11}");
        }
        s.push('\n');
    }
    if let Some(chip) = &res.chip {
        s.push_str(&crate::chip::table(chip));
    }
    if let Some(d) = &res.digital {
        let totals: Vec<(String, u64, f64)> = res
            .totals
            .iter()
            .map(|t| (t.mode.to_string(), t.events.cycles, t.energy.total()))
            .collect();
        s.push_str(&crate::digital::table(d, &totals));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{run, RunSpec};
    use engine::EngineKind;
    use workload::{SynthParams, ZooWorkload};

    fn lenet5(engine: EngineKind, sets: &[&str]) -> (RunResult, Resolved) {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = crate::config::load(None, &sets).unwrap();
        let w = ZooWorkload::new("lenet5", SynthParams::default()).unwrap();
        let res = run(&RunSpec {
            workload: &w,
            cfg: &cfg,
            modes: &Mode::ALL,
            engine,
            samples: 1,
            progress: false,
        })
        .unwrap();
        (res, cfg)
    }

    #[test]
    fn cycle_columns_come_after_the_existing_ones() {
        let h = header();
        assert_eq!(h[..CONTRACT_COLUMNS.len()], CONTRACT_COLUMNS);
        assert_eq!(h[h.len() - CYCLE_COLUMNS.len()..], CYCLE_COLUMNS);
        let before = CONTRACT_COLUMNS.len() + Breakdown::COLUMNS.len() + EXTRA_COLUMNS.len();
        assert_eq!(h.len(), before + CYCLE_COLUMNS.len());
        for (i, s) in Stage::ALL.iter().enumerate() {
            assert_eq!(CYCLE_COLUMNS[4 + i], format!("busy_{s}"));
            assert_eq!(CYCLE_COLUMNS[11 + i], format!("stall_{s}"));
        }
    }

    #[test]
    fn the_cycle_engine_fills_its_columns_and_changes_no_other() {
        // Halved ADCs: every OU of lenet5 converts 8 columns with 4 ADCs (II 2, at the
        // ADC; decoder ceil(9/9) = 1), so stall_adc = ou_ops on every sre row.
        let sets = ["adc.per_crossbar=4"];
        let (fast, _) = lenet5(EngineKind::Fast, &sets);
        let (cycle, cfg) = lenet5(EngineKind::Cycle, &sets);
        let (f, c) = (layers_rows(&fast), layers_rows(&cycle));
        let h = header();
        let col = |name: &str| h.iter().position(|&c| c == name).unwrap();
        let first_cycle_col = h.len() - CYCLE_COLUMNS.len();
        assert_eq!(f.len(), c.len());
        for (fr, cr) in f.iter().zip(&c) {
            assert_eq!(fr[..first_cycle_col], cr[..first_cycle_col]);
            assert!(fr[first_cycle_col..].iter().all(String::is_empty));
            assert_eq!(cr[col("queue_depth")], "1");
            let mode = &cr[col("mode")];
            if mode == "sre" {
                assert_eq!(cr[col("stall_adc")], cr[col("ou_ops")]);
                assert_eq!(cr[col("stall_cycles")], cr[col("ou_ops")]);
            }
            // Dense has no index decoder: its column is empty, not 0.
            if mode == "dense" {
                assert_eq!(cr[col("busy_index_decode")], "");
                assert_ne!(cr[col("busy_adc")], "");
            }
        }
        let s = summary_json(&cycle, &cfg);
        let adc = &s["modes"]["sre"]["pipeline"]["stages"]["adc"];
        let u = adc["utilization"].as_f64().unwrap();
        assert!(u > 0.0 && u <= 1.0, "{u}");
        assert!(s["modes"]["sre"]["pipeline"]["stages"]["index_decode"].is_object());
        assert!(s["modes"]["dense"]["pipeline"]["stages"]["index_decode"].is_null());
        assert!(summary_json(&fast, &cfg)["modes"]["sre"]["pipeline"].is_null());
    }

    /// The columns `merge` holds to be always filled are filled on every row a run writes,
    /// TOTAL rows and every mode included, and the others are not all of them.
    #[test]
    fn the_never_empty_columns_are_filled_on_every_row() {
        let (res, _) = lenet5(EngineKind::Cycle, &[]);
        let h = header();
        let rows = layers_rows(&res);
        assert!(rows.iter().any(|r| r[1] == "TOTAL"));
        for r in &rows {
            for (i, c) in h.iter().enumerate() {
                if never_empty(c) {
                    assert_ne!(r[i], "", "{c} of {} ({})", r[1], r[3]);
                }
            }
        }
        assert!(never_empty("cycles") && never_empty("e_adc_pj") && never_empty("samples"));
        assert!(!never_empty("kind") && !never_empty("passes") && !never_empty("queue_depth"));
    }
}
