//! Synthetic sweep outputs, for measuring `merge` at scale without simulating: the shard
//! directories of an imaginary grid of `points` points of `rows` rows each, shaped like
//! real ones (the columns of points.csv, each cell of its column's type, about as wide
//! as real ones).
//! Written as a stream: generating 10^5 points of 66 rows holds one row at a time.

use super::meta::{select, Shard};
use super::meta::{Meta, WorkloadMeta, FORMAT};
use super::value::AxisValue;
use anyhow::{anyhow, Result};
use columnar::Kind;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The grid's description: one workload, three axes (`ou.rows` and `ou.cols` of 4 values
/// each and `synth.seed` of points / 16 when 16 divides `points`, else 1, 1 and `points`).
pub fn meta(points: usize, rows: usize) -> Meta {
    let ints = |n: usize, f: fn(usize) -> i64| (0..n).map(|i| AxisValue::Int(f(i))).collect();
    let (a, b) = if points.is_multiple_of(16) {
        (4, 4)
    } else {
        (1, 1)
    };
    Meta {
        format: FORMAT.into(),
        sresim_version: env!("CARGO_PKG_VERSION").into(),
        grid: "synthetic.toml".into(),
        fingerprint: format!("synthetic-{points}x{rows}"),
        axes: ["ou.rows", "ou.cols", "synth.seed"]
            .map(String::from)
            .to_vec(),
        modes: ["dense", "sre"].map(String::from).to_vec(),
        shard: None,
        table: Default::default(),
        point_count: points,
        workloads: vec![WorkloadMeta {
            name: "resnet18".into(),
            rows,
        }],
        values: vec![
            ints(a, |i| 4 << i),
            ints(b, |i| 4 << i),
            ints(points / (a * b), |i| i as i64),
        ],
        explicit: None,
        extra_columns: Vec::new(),
    }
}

/// Writes shard directories `dir/shard-I` (I < `shards`) of [`meta`] and returns them.
pub fn write_shards(dir: &Path, points: usize, rows: usize, shards: usize) -> Result<Vec<PathBuf>> {
    let full = meta(points, rows);
    let cols = full.columns();
    let ids = full.ids();
    let kinds: Vec<Kind> = cols.iter().map(|c| sim::format::layers_kind(c)).collect();
    let domains: Vec<(f64, f64)> = cols
        .iter()
        .map(|c| {
            super::names::known(c).map_or((f64::NEG_INFINITY, f64::INFINITY), |k| k.domain.range())
        })
        .collect();
    let mut out = Vec::new();
    for index in 0..shards {
        let shard = Shard {
            index,
            count: shards,
        };
        let mut mine = vec![false; ids.len()];
        for i in select(&ids.ids, Some(shard)) {
            mine[i] = true;
        }
        let d = dir.join(format!("shard-{index}"));
        std::fs::create_dir_all(&d).map_err(|e| anyhow!("{}: {e}", d.display()))?;
        let m = Meta {
            shard: Some(shard),
            ..full.clone()
        };
        let mut json = outdir::stage(&d, "sweep.json")?;
        json.write_all(&m.json()?)?;
        let mut w = csv::Writer::from_writer(outdir::stage(&d, "points.csv")?);
        w.write_record(&cols)?;
        let mut row: Vec<String> = Vec::with_capacity(cols.len());
        let mut i = 0;
        let mut result = Ok(());
        full.each_point(|workload, values| {
            if mine[i] && result.is_ok() {
                for r in 0..rows {
                    row.clear();
                    row.push(ids.text(i));
                    row.push(workload.to_string());
                    row.extend(values.iter().map(|v| v.csv()));
                    for (c, kind) in kinds.iter().enumerate().skip(row.len()) {
                        let x = (i * 131 + r * 17 + c * 7) as u64;
                        // Each number inside its column's domain (merge re-checks it).
                        let (lo, hi) = domains[c];
                        row.push(match kind {
                            Kind::Count => (x * 7919 % 10_000_000).to_string(),
                            Kind::Text => format!("t{}", x % 97),
                            _ if hi.is_finite() => {
                                let f = (x % 1000) as f64 / 1000.0;
                                format!("{}", lo.max(0.0) + f * (hi - lo.max(0.0)))
                            }
                            _ => format!("{}", (x % 1_000_000) as f64 * 0.618),
                        });
                    }
                    // The cells a sweep derives from the row's others, as merge
                    // recomputes them: cycles and energy of the layer in each mode, the
                    // dense row's for the ratios, one clock, busy within cycles.
                    let m = full.modes.len().max(1);
                    let (layer, mode) = (r / m, r % m);
                    let cycles = |mode: usize| {
                        1000 + ((i * 131 + layer * 17) % 100_000) as u64 + mode as u64 * 7
                    };
                    let parts = |mode: usize| -> Vec<f64> {
                        (0..energy::Breakdown::COLUMNS.len())
                            .map(|k| {
                                ((i * 131 + layer * 17 + mode * 5 + k * 7) % 1000) as f64 * 0.5
                                    + 1.0
                            })
                            .collect()
                    };
                    let total = |mode: usize| parts(mode).iter().sum::<f64>();
                    let dense = full.modes.iter().position(|x| x == "dense").unwrap_or(0);
                    for (c, name) in cols.iter().enumerate() {
                        row[c] = match name.as_str() {
                            "cycles" => cycles(mode).to_string(),
                            "busy_cycles" => (cycles(mode) / 2).to_string(),
                            "time_ns" => format!("{}", cycles(mode) as f64 * 7.68),
                            "energy_pj" => format!("{}", total(mode)),
                            "speedup_vs_dense" => {
                                format!("{}", cycles(dense) as f64 / cycles(mode) as f64)
                            }
                            "energy_saving_vs_dense" => {
                                format!("{}", 1.0 - total(mode) / total(dense))
                            }
                            "passes" => "1".into(),
                            "input_cycles" => "16".into(),
                            n => match energy::Breakdown::COLUMNS.iter().position(|k| *k == n) {
                                Some(k) => format!("{}", parts(mode)[k]),
                                None => continue,
                            },
                        };
                    }
                    // The cells the point's id determines (merge re-checks them): the
                    // grid's modes in order, TOTAL last, one layer list per workload,
                    // and the cells a TOTAL row leaves empty.
                    let m = full.modes.len().max(1);
                    let total = r + m >= rows;
                    for (c, name) in cols.iter().enumerate() {
                        let cell = match name.as_str() {
                            "mode" => full.modes[r % m].clone(),
                            "layer" if total => "TOTAL".into(),
                            "layer" => format!("l{}", r / m),
                            "network" => workload.to_string(),
                            "kind" if total => String::new(),
                            "kind" => "conv".into(),
                            "signed" | "adc_bits" | "passes" | "input_cycles" if total => {
                                String::new()
                            }
                            "signed" => ((r / m) % 2).to_string(),
                            "adc_bits" => "8".into(),
                            "samples" => "4".into(),
                            _ => continue,
                        };
                        row[c] = cell;
                    }
                    if let Err(e) = w.write_record(&row) {
                        result = Err(e);
                        break;
                    }
                }
            }
            i += 1;
        });
        result?;
        let points = w.into_inner().map_err(|e| anyhow!("{}", e.error()))?;
        outdir::replace_staged(&d, vec![json, points])?;
        out.push(d);
    }
    Ok(out)
}
