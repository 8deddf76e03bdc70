//! `sresim plot DIR --x ou.rows --y speedup_vs_dense --series mode`: one SVG line chart of
//! a result CSV — one line per series value, axes labelled with their units, a legend to
//! the right of the plot.
//!
//! Rows are filtered first (`--where COL=VALUE`, and `layer=TOTAL` unless a filter names
//! the layer). Each (series, x) must then be one row: when several rows remain, the
//! error names the columns that tell them apart. A non-numeric x column is categorical
//! (values in order of first appearance).

use super::args::PlotArgs;
use super::table::Table;
use anyhow::{anyhow, bail, Result};
use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use std::path::PathBuf;

/// The tab10 palette; series past the tenth change marker shape.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

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

fn label(col: &str, scale: &str) -> String {
    match (unit(col), scale.is_empty()) {
        (Some(u), true) => format!("{col} ({u})"),
        (Some(u), false) => format!("{col} ({u}, {scale})"),
        (None, true) => col.to_string(),
        (None, false) => format!("{col} ({scale})"),
    }
}

/// The data of a chart.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// The series columns (legend heading).
    pub legend: String,
    /// Category names when x is not numeric.
    pub categories: Option<Vec<String>>,
    /// (label, points sorted by x).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Filters and groups the rows of `t` as `a` asks.
pub fn chart(t: &Table, a: &PlotArgs) -> Result<Chart> {
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
    let xi = t.col(&a.x, "--x")?;
    let yi = t.col(&a.y, "--y")?;
    let si: Vec<usize> = a
        .series
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| t.col(s, "--series"))
        .collect::<Result<_>>()?;
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
    let shown = |fs: &[(usize, String)]| {
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
    };
    if rows.is_empty() {
        bail!(
            "{p}: no row with a value of {} matches {}",
            a.y,
            shown(&filters)
        );
    }
    let numeric = rows.iter().all(|r| r[xi].parse::<f64>().is_ok());
    let mut cats: Vec<String> = Vec::new();
    // (name, points, the row of each point)
    type Series<'r> = (String, Vec<(f64, f64)>, Vec<&'r Vec<String>>);
    let mut series: Vec<Series> = Vec::new();
    for r in &rows {
        let y: f64 = r[yi]
            .parse()
            .map_err(|_| anyhow!("{p}: --y: column {} holds '{}', not a number", a.y, r[yi]))?;
        let x = if numeric {
            r[xi].parse::<f64>().expect("checked numeric")
        } else {
            match cats.iter().position(|c| *c == r[xi]) {
                Some(i) => i as f64,
                None => {
                    cats.push(r[xi].clone());
                    (cats.len() - 1) as f64
                }
            }
        };
        let name = match si.as_slice() {
            [] => a.y.clone(),
            [i] => r[*i].clone(),
            many => many
                .iter()
                .map(|&i| format!("{}={}", t.header[i], r[i]))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let s = match series.iter().position(|s| s.0 == name) {
            Some(i) => &mut series[i],
            None => {
                series.push((name, Vec::new(), Vec::new()));
                series.last_mut().expect("just pushed")
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
    let mut fixed = filters.clone();
    if let Ok(w) = t.col("workload", "").or_else(|_| t.col("network", "")) {
        let first = &rows[0][w];
        if !fixed.iter().any(|(i, _)| *i == w) && rows.iter().all(|r| r[w] == *first) {
            fixed.insert(0, (w, first.clone()));
        }
    }
    let title = a
        .title
        .clone()
        .unwrap_or_else(|| format!("{} vs {} ({})", a.y, a.x, shown(&fixed)));
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
    })
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}

/// A number for a tick label: no trailing zeros; large numbers as 2.5e7.
fn tick(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if v.abs() >= 1e5 {
        let e = v.abs().log10().floor() as i32;
        format!("{}e{e}", trim(format!("{:.3}", v / 10f64.powi(e))))
    } else if v == v.round() {
        format!("{}", v as i64)
    } else {
        trim(format!("{v:.4}"))
    }
}

/// Where the x ticks go: every category, or the distinct x values (at most 16 of them).
fn x_ticks(c: &Chart) -> Vec<f64> {
    if let Some(names) = &c.categories {
        return (0..names.len()).map(|i| i as f64).collect();
    }
    let mut xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let step = xs.len().div_ceil(16).max(1);
    xs.into_iter().step_by(step).collect()
}

/// The SVG text of `c`.
pub fn svg(c: &Chart, log_x: bool, log_y: bool) -> Result<String> {
    let pts = || c.series.iter().flat_map(|s| s.1.iter());
    let span = |f: fn(&(f64, f64)) -> f64| {
        pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(f(p)), hi.max(f(p)))
        })
    };
    let ((mut x0, mut x1), (mut y0, mut y1)) = (span(|p| p.0), span(|p| p.1));
    if (log_x && x0 <= 0.0) || (log_y && y0 <= 0.0) {
        bail!("plot: a logarithmic axis needs positive values");
    }
    if c.categories.is_some() {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    } else if log_x {
        (x0, x1) = (x0 / 1.15, x1 * 1.15);
    } else {
        let pad = if x1 > x0 { (x1 - x0) * 0.04 } else { 1.0 };
        (x0, x1) = (x0 - pad, x1 + pad);
    }
    // Big linear y values are scaled into the label (x 1e6) rather than long ticks.
    let mut scale = 1.0;
    let top = y1.abs().max(y0.abs());
    if !log_y && top >= 1e4 {
        scale = 10f64.powi(3 * (top.log10() / 3.0).floor() as i32);
    }
    if log_y {
        (y0, y1) = (y0 / 1.3, y1 * 1.3);
    } else {
        (y0, y1) = (y0.min(0.0) / scale, y1.max(0.0) / scale);
        let pad = if y1 > y0 { (y1 - y0) * 0.06 } else { 1.0 };
        y1 += pad;
        if y0 < 0.0 {
            y0 -= pad;
        }
    }
    let y_label = if scale > 1.0 {
        let inner = c.y_label.strip_suffix(')');
        let e = scale.log10().round();
        match inner {
            Some(i) => format!("{i}, x 1e{e})"),
            None => format!("{} (x 1e{e})", c.y_label),
        }
    } else {
        c.y_label.clone()
    };
    let longest = c
        .series
        .iter()
        .map(|s| s.0.len())
        .chain([c.legend.len()])
        .max();
    let legend_w = (longest.unwrap_or(4) as u32 * 8 + 70).clamp(130, 340);
    let (w, h) = (760 + legend_w, 560);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = root.titled(&c.title, ("sans-serif", 18)).map_err(err)?;
        let (plot, legend) = root.split_horizontally(w - legend_w);
        let ticks = x_ticks(c);
        let lin = Ticked {
            inner: RangedCoordf64::from(x0..x1),
            ticks: ticks.clone(),
        };
        let log = Ticked {
            inner: LogCoord::<f64>::from((x0..x1).log_scale()),
            ticks,
        };
        let yl = y_label.as_str();
        match (log_x, log_y) {
            (false, false) => draw(&plot, lin, y0..y1, c, yl, scale)?,
            (true, false) => draw(&plot, log, y0..y1, c, yl, scale)?,
            (false, true) => {
                let yr = (y0..y1).log_scale();
                draw(&plot, lin, yr, c, yl, scale)?
            }
            (true, true) => {
                let yr = (y0..y1).log_scale();
                draw(&plot, log, yr, c, yl, scale)?
            }
        }
        draw_legend(&legend, c)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// An x axis with ticks exactly at the given values (no light grid lines).
struct Ticked<R: Ranged<ValueType = f64>> {
    inner: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// A marker of series `k`: a filled circle, then triangle, then cross for each round of
/// the palette.
fn marker<'a, C: Clone + 'static>(k: usize, at: C) -> DynElement<'static, SVGBackend<'a>, C>
where
    Circle<C, i32>: Drawable<SVGBackend<'a>>,
    TriangleMarker<C, i32>: Drawable<SVGBackend<'a>>,
    Cross<C, i32>: Drawable<SVGBackend<'a>>,
    for<'b> &'b Circle<C, i32>: PointCollection<'b, C>,
    for<'b> &'b TriangleMarker<C, i32>: PointCollection<'b, C>,
    for<'b> &'b Cross<C, i32>: PointCollection<'b, C>,
{
    let color = COLORS[k % COLORS.len()];
    match (k / COLORS.len()) % 3 {
        0 => Circle::new(at, 4, color.filled()).into_dyn(),
        1 => TriangleMarker::new(at, 5, color.filled()).into_dyn(),
        _ => Cross::new(at, 4, color.stroke_width(2)).into_dyn(),
    }
}

/// The plot area: mesh, axis labels, one line with markers per series (y divided by
/// `scale`).
fn draw<XR, YR>(
    area: &DrawingArea<SVGBackend, Shift>,
    xr: XR,
    yr: YR,
    c: &Chart,
    y_label: &str,
    scale: f64,
) -> Result<()>
where
    XR: AsRangedCoord<Value = f64>,
    YR: AsRangedCoord<Value = f64>,
    XR::CoordDescType: ValueFormatter<f64>,
    YR::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(16)
        .x_label_area_size(52)
        .y_label_area_size(84)
        .build_cartesian_2d(xr, yr)
        .map_err(err)?;
    let cats = c.categories.clone();
    let x_fmt = move |v: &f64| match &cats {
        Some(names) => names
            .get(v.round().max(0.0) as usize)
            .filter(|_| (v - v.round()).abs() < 1e-6)
            .cloned()
            .unwrap_or_default(),
        None => tick(*v),
    };
    let y_fmt = |v: &f64| tick(*v);
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(y_label)
        .y_labels(10)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style(("sans-serif", 16))
        .label_style(("sans-serif", 13))
        .bold_line_style(RGBColor(210, 210, 210))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(err)?;
    for (k, (_, pts)) in c.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let pts: Vec<(f64, f64)> = pts.iter().map(|&(px, py)| (px, py / scale)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(err)?;
        chart
            .draw_series(pts.into_iter().map(|p| marker(k, p)))
            .map_err(err)?;
    }
    Ok(())
}

/// The legend, beside the plot: the series columns as heading, one entry per series.
fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, c: &Chart) -> Result<()> {
    let top = 60;
    if !c.legend.is_empty() {
        let bold = ("sans-serif", 15).into_font().style(FontStyle::Bold);
        area.draw(&Text::new(c.legend.clone(), (12, top - 26), bold))
            .map_err(err)?;
    }
    for (k, (name, _)) in c.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let y = top + 24 * k as i32;
        let line = PathElement::new(vec![(12, y), (44, y)], color.stroke_width(2));
        area.draw(&line).map_err(err)?;
        area.draw(&marker(k, (28, y))).map_err(err)?;
        area.draw(&Text::new(name.clone(), (52, y - 8), ("sans-serif", 15)))
            .map_err(err)?;
    }
    Ok(())
}

/// `sresim plot`: writes the SVG and returns its path.
pub fn plot(a: &PlotArgs) -> Result<PathBuf> {
    let t = Table::read(&a.input)?;
    let c = chart(&t, a)?;
    let text = svg(&c, a.log_x, a.log_y)?;
    let out = match &a.out {
        Some(o) => o.clone(),
        None => t.path.with_file_name(format!("{}-vs-{}.svg", a.y, a.x)),
    };
    std::fs::write(&out, text).map_err(|e| anyhow!("{}: cannot write: {e}", out.display()))?;
    Ok(out)
}
