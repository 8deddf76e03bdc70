//! `sresim plot DIR --x ou.rows --y speedup_vs_dense --series mode`: one SVG line chart of
//! a result CSV — one line per series value, axes labelled with their units, a legend to
//! the right of the plot.
//!
//! Rows are filtered first (`--where COL=VALUE`, and `layer=TOTAL` unless a filter names
//! the layer). Each (series, x) must then be one row: when several rows remain, the
//! error names the columns that tell them apart. A non-numeric x column is categorical
//! (values in order of first appearance). When the table has a 95% interval of y
//! ([`interval_columns`]), each point carries it: a band around its line.

use super::args::PlotArgs;
use super::table::Table;
use anyhow::{anyhow, bail, Result};
use chart::Chart;
use std::path::PathBuf;

/// What a column measures, for axis labels.
pub fn unit(col: &str) -> Option<&'static str> {
    Some(match col {
        "ou.rows" => "OU height, wordlines",
        "ou.cols" => "OU width, bitlines",
        "crossbar.rows" => "wordlines per crossbar",
        "crossbar.cols" => "bitlines per crossbar",
        "crossbar.cell_bits" => "bits per cell",
        "adc.per_crossbar" => "ADC conversions per cycle per crossbar",
        "adc.bits" | "adc_bits" => "bits",
        "dac.bits" => "input bits per input cycle",
        "precision.weight_bits" | "precision.input_bits" => "bits",
        "index_decoder.rows_per_cycle" => "indices decoded per cycle",
        "timing.cycle_ns" => "ns",
        "synth.weight_sparsity" => "fraction of zero weights",
        "synth.act_sparsity" => "fraction of zero inputs",
        "cycles" | "busy_cycles" => "cycles",
        "time_ns" => "ns",
        "speedup_vs_dense" => "x, dense cycles / cycles",
        "energy_saving_vs_dense" => "fraction of the dense energy saved",
        c if c.starts_with("e_") && c.ends_with("_pj") || c == "energy_pj" => "pJ",
        c if c.ends_with("_bits") => "bits",
        "vectors" | "crossbars" | "ou_ops" | "rows_driven" | "cells_read" | "adc_conversions"
        | "index_reads" | "ous_formed" | "passes" | "input_cycles" | "samples" => "count",
        _ => return None,
    })
}

/// An axis label: the column and its unit.
pub fn label(col: &str, scale: &str) -> String {
    match (unit(col), scale.is_empty()) {
        (Some(u), true) => format!("{col} ({u})"),
        (Some(u), false) => format!("{col} ({u}, {scale})"),
        (None, true) => col.to_string(),
        (None, false) => format!("{col} ({scale})"),
    }
}

/// The rows `a` keeps (its `--where` filters, and `layer=TOTAL` unless one names the
/// layer) that have a y value, with the filters applied.
pub struct Filtered<'t> {
    pub rows: Vec<&'t Vec<String>>,
    pub filters: Vec<(usize, String)>,
}

/// `COL=V1|V2, ...` of filters, for titles and messages.
pub fn shown(t: &Table, fs: &[(usize, String)]) -> String {
    let mut cols: Vec<(usize, Vec<&str>)> = Vec::new();
    for (i, v) in fs {
        match cols.iter_mut().find(|c| c.0 == *i) {
            Some(c) => c.1.push(v),
            None => cols.push((*i, vec![v])),
        }
    }
    cols.iter()
        .map(|(i, v)| format!("{}={}", t.header[*i], v.join("|")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Applies the filters of `a` to `t`; an error when no row with a value of y remains.
pub fn filter<'t>(t: &'t Table, a: &PlotArgs) -> Result<Filtered<'t>> {
    let p = t.path.display().to_string();
    let mut filters: Vec<(usize, String)> = Vec::new();
    for f in &a.filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| anyhow!("--where {f}: expected COLUMN=VALUE"))?;
        filters.push((t.col(k.trim(), "--where")?, v.trim().to_string()));
    }
    if let Ok(l) = t.col("layer", "") {
        if !filters.iter().any(|(i, _)| *i == l) {
            filters.push((l, "TOTAL".into()));
        }
    }
    let yi = t.col(&a.y, "--y")?;
    let rows: Vec<&Vec<String>> = t
        .rows
        .iter()
        // Filters on one column are alternatives; filters on different columns all hold.
        .filter(|r| {
            filters
                .iter()
                .all(|(i, _)| filters.iter().any(|(j, v)| j == i && r[*j] == *v))
        })
        .filter(|r| !r[yi].is_empty())
        .collect();
    if rows.is_empty() {
        bail!(
            "{p}: no row with a value of {} matches {}",
            a.y,
            shown(t, &filters)
        );
    }
    Ok(Filtered { rows, filters })
}

/// The columns of the interval of y, when the table has them: `<y>_ci_low` and
/// `<y>_ci_high`, or for a mean `<f>_mean`, `<f>_ci_low` and `<f>_ci_high` (the columns
/// of device draws, docs/accuracy.md). A figure `f` whose table also has `f_mean` is a
/// single draw, not the mean: it gets none.
pub fn interval_columns(t: &Table, y: &str) -> Option<(usize, usize)> {
    let stem = match y.strip_suffix("_mean") {
        Some(f) => f.to_string(),
        None if t.col(&format!("{y}_mean"), "").is_ok() => return None,
        None => y.to_string(),
    };
    let lo = t.col(&format!("{stem}_ci_low"), "").ok()?;
    let hi = t.col(&format!("{stem}_ci_high"), "").ok()?;
    Some((lo, hi))
}

/// The interval (x, low, high) of row `r` at `x`, when its cells hold numbers.
pub fn interval(r: &[String], x: f64, cols: Option<(usize, usize)>) -> Option<(f64, f64, f64)> {
    let (lo, hi) = cols?;
    let lo: f64 = r[lo].parse().ok().filter(|v: &f64| v.is_finite())?;
    let hi: f64 = r[hi].parse().ok().filter(|v: &f64| v.is_finite())?;
    Some((x, lo, hi))
}

/// The series name of row `r`: the values of the series columns `si`.
pub fn series_name(t: &Table, si: &[usize], r: &[String], y: &str) -> String {
    match si {
        [] => y.to_string(),
        [i] => r[*i].clone(),
        many => many
            .iter()
            .map(|&i| format!("{}={}", t.header[i], r[i]))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The series columns of `a`.
pub fn series_columns(t: &Table, a: &PlotArgs) -> Result<Vec<usize>> {
    a.series
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| t.col(s, "--series"))
        .collect()
}

/// The title: `a`'s, or y vs x and the filters (with the workload when all rows share
/// one).
pub fn title(t: &Table, a: &PlotArgs, f: &Filtered, what: &str) -> String {
    let mut fixed = f.filters.clone();
    if let Ok(w) = t.col("workload", "").or_else(|_| t.col("network", "")) {
        let first = &f.rows[0][w];
        if !fixed.iter().any(|(i, _)| *i == w) && f.rows.iter().all(|r| r[w] == *first) {
            fixed.insert(0, (w, first.clone()));
        }
    }
    a.title
        .clone()
        .unwrap_or_else(|| format!("{}{} vs {} ({})", what, a.y, a.x, shown(t, &fixed)))
}

/// Filters and groups the rows of `t` as `a` asks.
pub fn chart(t: &Table, a: &PlotArgs) -> Result<Chart> {
    let p = t.path.display().to_string();
    let xi = t.col(&a.x, "--x")?;
    let yi = t.col(&a.y, "--y")?;
    let si = series_columns(t, a)?;
    let f = filter(t, a)?;
    let rows = &f.rows;
    let numeric = rows.iter().all(|r| r[xi].parse::<f64>().is_ok());
    let mut cats: Vec<String> = Vec::new();
    // (name, points, the row of each point)
    type Series<'r> = (String, Vec<(f64, f64)>, Vec<&'r Vec<String>>);
    let mut series: Vec<Series> = Vec::new();
    for r in rows {
        let y: f64 = r[yi]
            .parse()
            .map_err(|_| anyhow!("{p}: --y: column {} holds '{}', not a number", a.y, r[yi]))?;
        let x = if numeric {
            r[xi]
                .parse::<f64>()
                .map_err(|_| anyhow!("{p}: --x: column {} holds '{}', not a number", a.x, r[xi]))?
        } else {
            match cats.iter().position(|c| *c == r[xi]) {
                Some(i) => i as f64,
                None => {
                    cats.push(r[xi].clone());
                    (cats.len() - 1) as f64
                }
            }
        };
        let name = series_name(t, &si, r, &a.y);
        let s = match series.iter().position(|s| s.0 == name) {
            Some(i) => &mut series[i],
            None => {
                series.push((name, Vec::new(), Vec::new()));
                let last = series.len() - 1;
                &mut series[last]
            }
        };
        if let Some(k) = s.1.iter().position(|q| q.0 == x) {
            let other = s.2[k];
            let differ: Vec<&str> = (0..t.header.len())
                .filter(|&i| t.header[i] != "point" && other[i] != r[i])
                .filter(|&i| super::compare::is_key_column(&t.header[i]))
                .map(|i| t.header[i].as_str())
                .collect();
            bail!(
                "{p}: several rows for {}={} in series '{}'; they differ in {}: add --where COLUMN=VALUE or more --series columns",
                a.x,
                r[xi],
                s.0,
                if differ.is_empty() { "nothing (duplicate rows)".into() } else { differ.join(", ") }
            );
        }
        s.1.push((x, y));
        s.2.push(r);
    }
    let title = title(t, a, &f, "");
    let ci = interval_columns(t, &a.y);
    let intervals = series
        .iter()
        .map(|(_, pts, rows)| {
            let mut b: Vec<(f64, f64, f64)> = pts
                .iter()
                .zip(rows)
                .filter_map(|(p, r)| interval(r, p.0, ci))
                .collect();
            b.sort_by(|a, b| a.0.total_cmp(&b.0));
            b
        })
        .collect();
    Ok(Chart {
        title,
        x_label: label(&a.x, ""),
        y_label: label(&a.y, ""),
        legend: si
            .iter()
            .map(|&i| t.header[i].clone())
            .collect::<Vec<_>>()
            .join(", "),
        categories: (!numeric).then_some(cats),
        series: series
            .into_iter()
            .map(|(n, mut pts, _)| {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (n, pts)
            })
            .collect(),
        lines: true,
        front: Vec::new(),
        front_points: Vec::new(),
        intervals,
    })
}

/// `sresim plot`: writes the SVG and returns its path.
pub fn plot(a: &PlotArgs) -> Result<PathBuf> {
    for (flag, set) in [("--x-better", a.x_better), ("--y-better", a.y_better)] {
        if set.is_some() && !a.pareto {
            bail!("{flag}: needs --pareto (it sets the direction of the Pareto front)");
        }
    }
    let t = Table::read(&a.input)?;
    let c = match a.pareto {
        true => super::pareto::chart(&t, a)?,
        false => chart(&t, a)?,
    };
    let text = chart::svg(&c, a.log_x, a.log_y)?;
    let out = match &a.out {
        Some(o) => o.clone(),
        None if a.pareto => t
            .path
            .with_file_name(format!("pareto-{}-vs-{}.svg", a.y, a.x)),
        None => t.path.with_file_name(format!("{}-vs-{}.svg", a.y, a.x)),
    };
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
    outdir::replace(
        parent.unwrap_or(std::path::Path::new(".")),
        &[(
            &out.file_name()
                .map_or_else(|| "plot.svg".into(), |n| n.to_string_lossy().into_owned()),
            text.as_bytes(),
        )],
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let rows = [
            ["a", "4", "8", "TOTAL", "dense", "100"],
            ["a", "4", "8", "TOTAL", "sre", "40"],
            ["a", "16", "8", "TOTAL", "dense", "30"],
            ["a", "16", "8", "TOTAL", "sre", "20"],
            ["a", "8", "8", "TOTAL", "sre", "25"],
            ["a", "8", "8", "conv1", "sre", "5"],
        ];
        Table {
            path: PathBuf::from("t.csv"),
            header: ["workload", "ou.rows", "ou.cols", "layer", "mode", "cycles"]
                .map(String::from)
                .to_vec(),
            rows: rows.iter().map(|r| r.map(String::from).to_vec()).collect(),
        }
    }

    fn args(x: &str, series: &str, filters: &[&str]) -> PlotArgs {
        PlotArgs {
            input: PathBuf::from("t.csv"),
            x: x.into(),
            y: "cycles".into(),
            series: series.into(),
            filters: filters.iter().map(|f| f.to_string()).collect(),
            out: None,
            title: None,
            log_x: false,
            log_y: false,
            pareto: false,
            x_better: None,
            y_better: None,
        }
    }

    #[test]
    fn rows_become_sorted_series() {
        let c = chart(&table(), &args("ou.rows", "mode", &[])).unwrap();
        // The conv1 row is left out (TOTAL only); points sorted by x.
        assert_eq!(
            c.series[0],
            ("dense".into(), vec![(4.0, 100.0), (16.0, 30.0)])
        );
        assert_eq!(
            c.series[1],
            ("sre".into(), vec![(4.0, 40.0), (8.0, 25.0), (16.0, 20.0)])
        );
        assert_eq!(c.x_label, "ou.rows (OU height, wordlines)");
        assert_eq!(c.y_label, "cycles (cycles)");
        assert_eq!(c.title, "cycles vs ou.rows (workload=a, layer=TOTAL)");
        assert!(c.categories.is_none());
        // A non-numeric x is categorical, in order of first appearance.
        let c = chart(&table(), &args("mode", "", &["ou.rows=4"])).unwrap();
        assert_eq!(c.categories, Some(vec!["dense".into(), "sre".into()]));
        assert_eq!(c.series.len(), 1);
        let e = chart(&table(), &args("mode", "", &[]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("they differ in ou.rows"), "{e}");
        let e = chart(&table(), &args("ou.rows", "mode", &["mode=ideal"])).unwrap_err();
        assert!(e.to_string().contains("no row"), "{e}");
    }
}
