//! `sresim plot DIR --x ou.rows --y speedup_vs_dense --series mode`: one SVG line chart of
//! a result CSV — one line per series value, axes labelled with their units, a legend to
//! the right of the plot.
//!
//! Rows are filtered first (`--where COL=VALUE`, VALUE a glob, and `layer=TOTAL` unless a filter names
//! the layer). Each (series, x) must then be one row: when several rows remain, the
//! error names the columns that tell them apart. A non-numeric x column is categorical
//! (values in order of first appearance). When the table has a 95% interval of y
//! ([`interval_columns`]), each point carries it: a band around its line.

use super::args::PlotArgs;
use super::table::Table;
use anyhow::{anyhow, bail, Result};
use chart::Chart;
use std::path::PathBuf;

/// What a column measures, for axis labels: every column run, sweep, accuracy and memory
/// write that holds a number (chip_*, func_*, accuracy, memory_layers.csv).
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
        "timing.cycle_ns" | "time_ns" | "chip_latency_ns" => "ns",
        "compute_s" | "memory_s" | "time_s" => "s",
        "synth.weight_sparsity" => "fraction of zero weights",
        "synth.act_sparsity" => "fraction of zero inputs",
        "speedup_vs_dense" => "x, dense cycles / cycles",
        "energy_saving_vs_dense" => "fraction of the dense energy saved",
        c if c.ends_with("_pj") => "pJ",
        c if c.ends_with("_mm2") => "mm²",
        c if c.ends_with("_bits") => "bits",
        "cycles" | "busy_cycles" => "cycles",
        c if c.starts_with("chip_") && (c.ends_with("_cycles") || c.ends_with("_cycle")) => {
            "cycles"
        }
        "chip_cycles_per_image" => "cycles per image",
        "chip_images_per_s" => "images/s",
        "chip_images_per_s_per_mm2" => "images/s/mm²",
        "chip_images_per_s_per_w" => "images/s/W",
        "chip_power_w" => "W",
        "chip_utilization" => "fraction of the crossbars busy",
        "capacity_bytes" => "bytes",
        "bandwidth_bytes_per_s" => "bytes/s",
        c if c.ends_with("_bytes") || c.starts_with("saved_") => "bytes",
        "op_intensity" => "flop/B",
        "func_exact_frac" => "fraction of outputs exact",
        "func_max_abs_err" => "integer output units",
        "adc_clip_frac" => "fraction of conversions clipped",
        c if c.ends_with("rel_rmse")
            || c.ends_with("rel_rmse_mean")
            || c.ends_with("rel_rmse_ci_low")
            || c.ends_with("rel_rmse_ci_high") =>
        {
            "relative RMS error"
        }
        c if c.starts_with("top1") => "fraction correct",
        c if c.starts_with("agreement") => "fraction of samples agreeing",
        "accuracy_samples" => "samples",
        "accuracy_draws" => "device draws",
        "vectors" | "crossbars" | "ou_ops" | "rows_driven" | "cells_read" | "adc_conversions"
        | "index_reads" | "ous_formed" | "passes" | "input_cycles" | "samples" | "macs"
        | "elementwise_ops" | "chip_chips" | "chip_crossbars" | "chip_replicas"
        | "chip_segments" | "chip_segment" | "chip_tiles" | "chip_units" | "chip_hops" => "count",
        _ => return None,
    })
}

/// The unit among ns, us, ms, s (or pJ, nJ, uJ, mJ, J) in which `largest`, a magnitude of
/// column `col`, reads between 1 and 1000, and what to divide the column's values by;
/// None for a column that is neither a time nor an energy.
pub fn fitted_unit(col: &str, largest: f64) -> Option<(&'static str, f64)> {
    const TIME: [&str; 4] = ["ns", "µs", "ms", "s"];
    const ENERGY: [&str; 5] = ["pJ", "nJ", "µJ", "mJ", "J"];
    let (units, base): (&[&str], usize) = match unit(col)? {
        "ns" => (&TIME, 0),
        "s" => (&TIME, 3),
        "pJ" => (&ENERGY, 0),
        _ => return None,
    };
    // The step (a power of 1000) that brings `largest` into [1, 1000), within the units.
    let steps = if largest > 0.0 && largest.is_finite() {
        (largest.log10() / 3.0).floor() as i64
    } else {
        0
    };
    let to = (base as i64 + steps).clamp(0, units.len() as i64 - 1) as usize;
    let divisor = 1000f64.powi(to as i32 - base as i32);
    Some((units[to], divisor))
}

/// An axis label: the column and its unit.
pub fn label(col: &str, scale: &str) -> String {
    label_in(col, unit(col), scale)
}

/// An axis label: the column and `unit` (the column's own, or a fitted one).
fn label_in(col: &str, unit: Option<&str>, scale: &str) -> String {
    match (unit, scale.is_empty()) {
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
    filter_on(t, a, t.col(&a.y, "--y")?)
}

/// [`filter`], keeping the rows with a value in column `yi`.
fn filter_on<'t>(t: &'t Table, a: &PlotArgs, yi: usize) -> Result<Filtered<'t>> {
    let p = t.path.display().to_string();
    let mut filters: Vec<(usize, String)> = Vec::new();
    for f in &a.filters {
        let (k, v) = f
            .split_once('=')
            .ok_or_else(|| anyhow!("--where {f}: expected COLUMN=VALUE"))?;
        filters.push((t.col(k.trim(), "--where")?, v.trim().to_string()));
    }
    // A per-layer plot (layer on x or among the series) keeps the layers' rows and leaves
    // out their TOTAL; any other keeps the TOTAL rows unless a filter names the layer.
    let mut no_total = None;
    if let Ok(l) = t.col("layer", "") {
        let per_layer = a.x == "layer" || a.series.split(',').any(|c| c.trim() == "layer");
        if !filters.iter().any(|(i, _)| *i == l) {
            match per_layer {
                true => no_total = Some(l),
                false => filters.push((l, "TOTAL".into())),
            }
        }
    }
    let rows: Vec<&Vec<String>> = t
        .rows
        .iter()
        // Filters on one column are alternatives; filters on different columns all hold.
        // A value is a glob (`*` any run of characters, `?` one), as `--layers` takes.
        .filter(|r| {
            filters.iter().all(|(i, _)| {
                filters
                    .iter()
                    .any(|(j, v)| j == i && workload::select::glob_match(v, &r[*j]))
            })
        })
        .filter(|r| no_total.is_none_or(|l| r[l] != "TOTAL"))
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

/// The legend's heading: the series columns.
pub fn legend(t: &Table, si: &[usize]) -> String {
    let names: Vec<&str> = si.iter().map(|&i| t.header[i].as_str()).collect();
    names.join(", ")
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
    Ok(fit_units(
        Chart {
            title,
            x_label: label(&a.x, ""),
            y_label: label(&a.y, ""),
            legend: legend(t, &si),
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
            stacked: false,
            intervals,
        },
        &a.x,
        &a.y,
    ))
}

/// `c` with a time or energy axis (column `x`, `y`) in the unit that fits its range
/// ([`fitted_unit`]): `time_ns` from 2e6 to 9e7 is drawn in ms, `energy_pj` in µJ.
pub fn fit_units(mut c: Chart, x: &str, y: &str) -> Chart {
    let largest = |f: &dyn Fn(&(f64, f64)) -> f64| {
        c.series
            .iter()
            .flat_map(|s| s.1.iter())
            .map(|p| f(p).abs())
            .fold(0.0, f64::max)
    };
    let fx = match c.categories {
        None => fitted_unit(x, largest(&|p| p.0)),
        Some(_) => None,
    };
    let fy = fitted_unit(y, largest(&|p| p.1));
    let (dx, dy) = (fx.map_or(1.0, |f| f.1), fy.map_or(1.0, |f| f.1));
    if let Some((u, _)) = fx {
        c.x_label = label_in(x, Some(u), "");
    }
    if let Some((u, _)) = fy {
        c.y_label = label_in(y, Some(u), "");
    }
    let scale = |p: &mut (f64, f64)| *p = (p.0 / dx, p.1 / dy);
    c.series
        .iter_mut()
        .flat_map(|s| s.1.iter_mut())
        .for_each(scale);
    c.front.iter_mut().for_each(scale);
    c.front_points.iter_mut().for_each(scale);
    for b in c.intervals.iter_mut().flatten() {
        *b = (b.0 / dx, b.1 / dy, b.2 / dy);
    }
    c
}

/// `--stack`: the columns `a.y` matches (a glob) stacked as bars at each x (categories in
/// order of first appearance; numbers in increasing order), one series per column.
pub fn stacked(t: &Table, a: &PlotArgs) -> Result<Chart> {
    let p = t.path.display().to_string();
    let xi = t.col(&a.x, "--x")?;
    let cols: Vec<usize> = (0..t.header.len())
        .filter(|&i| i != xi && workload::select::glob_match(&a.y, &t.header[i]))
        .collect();
    let Some(&first) = cols.first() else {
        bail!(
            "{p}: --y {}: no column matches (columns: {})",
            a.y,
            t.header.join(", ")
        );
    };
    let f = filter_on(t, a, first)?;
    let mut xs: Vec<&str> = Vec::new();
    for r in &f.rows {
        if xs.contains(&r[xi].as_str()) {
            bail!(
                "{p}: several rows for {}={}: add --where COLUMN=VALUE to keep one",
                a.x,
                r[xi]
            );
        }
        xs.push(&r[xi]);
    }
    let mut order: Vec<usize> = (0..xs.len()).collect();
    if xs.iter().all(|x| x.parse::<f64>().is_ok()) {
        order.sort_by(|&i, &j| {
            let v = |k: usize| xs[k].parse::<f64>().unwrap_or(0.0);
            v(i).total_cmp(&v(j))
        });
    }
    let mut series = Vec::new();
    for &c in &cols {
        let mut pts = Vec::new();
        for (slot, &i) in order.iter().enumerate() {
            let cell = &f.rows[i][c];
            let y: f64 = cell.parse().map_err(|_| {
                anyhow!(
                    "{p}: --y: column {} holds '{cell}', not a number",
                    t.header[c]
                )
            })?;
            pts.push((slot as f64, y));
        }
        series.push((t.header[c].clone(), pts));
    }
    let c = Chart {
        title: title(t, a, &f, "stacked "),
        x_label: label(&a.x, ""),
        y_label: label_in(&a.y, unit(&t.header[first]), ""),
        legend: "column".into(),
        categories: Some(order.iter().map(|&i| xs[i].to_string()).collect()),
        series,
        lines: false,
        front: Vec::new(),
        front_points: Vec::new(),
        intervals: Vec::new(),
        stacked: true,
    };
    // The unit of the whole stack: the largest sum decides.
    let top = (0..order.len())
        .map(|x| c.series.iter().map(|s| s.1[x].1).sum::<f64>())
        .fold(0.0, f64::max);
    Ok(match fitted_unit(&t.header[first], top) {
        Some((u, d)) => {
            let mut c = c;
            c.y_label = label_in(&a.y, Some(u), "");
            c.series
                .iter_mut()
                .flat_map(|s| s.1.iter_mut())
                .for_each(|p| p.1 /= d);
            c
        }
        None => c,
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
    let c = match (a.pareto, a.stack) {
        (true, _) => super::pareto::chart(&t, a)?,
        (false, true) => stacked(&t, a)?,
        (false, false) => chart(&t, a)?,
    };
    let text = chart::svg(&c, a.log_x, a.log_y)?;
    let out = match &a.out {
        Some(o) => o.clone(),
        None if a.pareto => t
            .path
            .with_file_name(format!("pareto-{}-vs-{}.svg", a.y, a.x)),
        None if a.stack => t.path.with_file_name(format!(
            "stacked-{}-vs-{}.svg",
            a.y.replace(['*', '?'], "_"),
            a.x
        )),
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
            stack: false,
            x_better: None,
            y_better: None,
            quiet: false,
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

    #[test]
    fn where_values_are_globs() {
        // `mode=s*` keeps sre only; `layer=conv?` the conv1 row; a plain value matches
        // itself only.
        let c = chart(&table(), &args("ou.rows", "mode", &["mode=s*"])).unwrap();
        assert_eq!(c.series.len(), 1);
        assert_eq!(c.series[0].0, "sre");
        let c = chart(&table(), &args("ou.rows", "mode", &["layer=conv?"])).unwrap();
        assert_eq!(c.series[0].1, [(8.0, 5.0)]);
        let e = chart(&table(), &args("ou.rows", "mode", &["mode=s"])).unwrap_err();
        assert!(
            e.to_string()
                .contains("no row with a value of cycles matches"),
            "{e}"
        );
    }

    #[test]
    fn time_and_energy_take_the_unit_that_fits() {
        assert_eq!(fitted_unit("time_ns", 999.0), Some(("ns", 1.0)));
        assert_eq!(fitted_unit("time_ns", 9.0e7), Some(("ms", 1e6)));
        assert_eq!(fitted_unit("chip_latency_ns", 1.5e3), Some(("µs", 1e3)));
        assert_eq!(fitted_unit("time_s", 0.004), Some(("ms", 1e-3)));
        assert_eq!(fitted_unit("energy_pj", 2.5e13), Some(("J", 1e12)));
        assert_eq!(fitted_unit("e_adc_pj", 0.5), Some(("pJ", 1.0)));
        assert_eq!(fitted_unit("cycles", 1e9), None);
        let mut t = table();
        t.header[5] = "time_ns".into();
        let a = PlotArgs {
            y: "time_ns".into(),
            ..args("ou.rows", "mode", &["mode=dense"])
        };
        let c = chart(&t, &a).unwrap();
        assert_eq!(c.y_label, "time_ns (ns)");
        for r in &mut t.rows {
            r[5] = format!("{}000000", r[5]);
        }
        let c = chart(&t, &a).unwrap();
        assert_eq!(c.y_label, "time_ns (ms)");
        assert_eq!(c.series[0].1, [(4.0, 100.0), (16.0, 30.0)]);
    }

    #[test]
    fn every_numeric_column_of_the_reports_has_a_unit() {
        for c in [
            "chip_area_chips_mm2",
            "chip_images_per_s_per_w",
            "chip_latency_cycles",
            "chip_cycles_per_image",
            "chip_power_w",
            "chip_spill_bytes",
            "chip_replicas",
            "func_rel_rmse",
            "func_exact_frac",
            "func_max_abs_err",
            "top1_mean",
            "agreement",
            "output_rel_rmse_ci_high",
            "capacity_bytes",
            "time_s",
            "op_intensity",
            "saved_block",
            "macs",
            "e_crossbar_pj",
        ] {
            assert!(unit(c).is_some(), "{c}");
        }
    }

    #[test]
    fn a_per_layer_plot_keeps_the_layers_and_leaves_out_the_total() {
        let c = chart(&table(), &args("layer", "mode", &["ou.rows=8"])).unwrap();
        assert_eq!(c.categories, Some(vec!["conv1".to_string()]));
        assert_eq!(c.series, [("sre".to_string(), vec![(0.0, 5.0)])]);
    }

    #[test]
    fn stacked_columns_are_one_series_each_in_the_unit_of_the_whole() {
        let t = Table {
            path: PathBuf::from("layers.csv"),
            header: ["layer", "mode", "e_adc_pj", "e_xbar_pj", "energy_pj"]
                .map(String::from)
                .to_vec(),
            rows: [
                ["TOTAL", "sre", "600", "900", "1500"],
                ["TOTAL", "dense", "2000", "700", "2700"],
            ]
            .iter()
            .map(|r| r.map(String::from).to_vec())
            .collect(),
        };
        let a = PlotArgs {
            y: "e_*_pj".into(),
            stack: true,
            ..args("mode", "", &[])
        };
        let c = stacked(&t, &a).unwrap();
        assert!(c.stacked);
        assert_eq!(c.categories, Some(vec!["sre".into(), "dense".into()]));
        // energy_pj is no component: the glob leaves it out. The tallest stack, 2,700 pJ,
        // reads 2.7 nJ.
        assert_eq!(
            c.series,
            [
                ("e_adc_pj".to_string(), vec![(0.0, 0.6), (1.0, 2.0)]),
                ("e_xbar_pj".to_string(), vec![(0.0, 0.9), (1.0, 0.7)]),
            ]
        );
        assert_eq!(c.y_label, "e_*_pj (nJ)");
        let none = PlotArgs {
            y: "f_*".into(),
            ..a.clone()
        };
        assert!(stacked(&t, &none)
            .unwrap_err()
            .to_string()
            .contains("no column matches"));
    }
}
