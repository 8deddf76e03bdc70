//! What every chart of `sresim plot` reads from a result table and how it labels it: the
//! table as a stream of rows ([`Source`], a CSV or Parquet file or a table in memory, and
//! the [`Place`] of a row), the rows a plot keeps ([`Keep`]: `--where` filters and
//! `layer=TOTAL`), the numbers and 95% intervals of a row (every cell finite, or an error
//! naming file, place and column), the series columns and the legend, the axis labels
//! with their units and the fitted time or energy unit, and the axis limits and reference
//! lines. Below both the line chart ([`crate::plot`]) and the Pareto chart
//! ([`crate::pareto`]), which read rows the same way.

use super::args::{Interval, PlotArgs};
use super::names;
use super::table::Table;
use anyhow::{anyhow, bail, Result};
use chart::Chart;
use std::path::{Path, PathBuf};

/// The most distinct values a categorical x axis takes.
pub const MAX_CATEGORIES: usize = 10_000;

/// Where a row sits in its file: a CSV line, or a row of a Parquet or in-memory table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Line(u64),
    Row(u64),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Line(n) => write!(f, "line {n}"),
            Place::Row(n) => write!(f, "row {n}"),
        }
    }
}

/// A result table read one row at a time: a CSV or Parquet file, or a table in memory.
pub enum Source<'t> {
    Csv { path: PathBuf, header: Vec<String> },
    Parquet { path: PathBuf, header: Vec<String> },
    Table(&'t Table),
}

impl Source<'static> {
    /// Opens `path` (CSV or Parquet, told by its first bytes; a directory stands for its
    /// points table, else its layers table) and reads its header.
    pub fn open(path: &Path) -> Result<Source<'static>> {
        let path = if path.is_dir() {
            super::table::find(path)?
        } else {
            path.to_path_buf()
        };
        let p = path.display().to_string();
        if sim::format::is_parquet_file(&path) {
            let file = workload::files::open(&path, &p).map_err(anyhow::Error::msg)?;
            let rd = columnar::Reader::new(file)
                .map_err(|e| anyhow!("{p}: not a readable Parquet table: {e}"))?;
            let header: Vec<String> = rd.columns().iter().map(|c| c.name.clone()).collect();
            super::table::check_header(&p, &header)?;
            return Ok(Source::Parquet { path, header });
        }
        let mut rd = csv_reader(&path)?;
        let header: Vec<String> = rd
            .headers()
            .map_err(|e| anyhow!("{p}: {e}"))?
            .iter()
            .map(String::from)
            .collect();
        super::table::check_header(&p, &header)?;
        Ok(Source::Csv { path, header })
    }
}

pub(crate) fn csv_reader(path: &Path) -> Result<csv::Reader<std::io::BufReader<std::fs::File>>> {
    let p = path.display().to_string();
    let file = workload::files::open(path, &p).map_err(anyhow::Error::msg)?;
    Ok(csv::Reader::from_reader(std::io::BufReader::with_capacity(
        1 << 20,
        file,
    )))
}

impl Source<'_> {
    pub fn path(&self) -> &Path {
        match self {
            Source::Csv { path, .. } | Source::Parquet { path, .. } => path,
            Source::Table(t) => &t.path,
        }
    }

    pub fn header(&self) -> &[String] {
        match self {
            Source::Csv { header, .. } | Source::Parquet { header, .. } => header,
            Source::Table(t) => &t.header,
        }
    }

    /// The index of `col`, or an error listing the columns.
    pub fn col(&self, col: &str, flag: &str) -> Result<usize> {
        let h = self.header();
        h.iter().position(|c| c == col).ok_or_else(|| {
            anyhow!(
                "{}: {flag}: no column '{col}' (columns: {})",
                self.path().display(),
                h.join(", ")
            )
        })
    }

    /// Calls `f` with every row in order (its cells and place).
    pub fn scan(&self, f: &mut dyn FnMut(&csv::StringRecord, Place) -> Result<()>) -> Result<()> {
        let p = self.path().display().to_string();
        let width = self.header().len();
        let mut rec = csv::StringRecord::new();
        match self {
            Source::Csv { path, .. } => {
                let mut rd = csv_reader(path)?;
                while rd.read_record(&mut rec).map_err(|e| anyhow!("{p}: {e}"))? {
                    let line = rec.position().map_or(0, |q| q.line());
                    f(&rec, Place::Line(line))?;
                }
            }
            Source::Parquet { path, .. } => {
                let file = workload::files::open(path, &p).map_err(anyhow::Error::msg)?;
                let mut rd = columnar::Reader::new(file)
                    .map_err(|e| anyhow!("{p}: not a readable Parquet table: {e}"))?;
                let mut row = Vec::new();
                let mut n = 0;
                while rd.next_row(&mut row).map_err(|e| anyhow!("{p}: {e}"))? {
                    n += 1;
                    rec.clear();
                    row.iter().for_each(|c| rec.push_field(c));
                    f(&rec, Place::Row(n))?;
                }
            }
            Source::Table(t) => {
                for (n, row) in t.rows.iter().enumerate() {
                    rec.clear();
                    row.iter().for_each(|c| rec.push_field(c));
                    if row.len() != width {
                        bail!(
                            "{p}: row {}: {} cells under {width} columns",
                            n + 1,
                            row.len()
                        );
                    }
                    f(&rec, Place::Row(n as u64 + 1))?;
                }
            }
        }
        Ok(())
    }

    /// The rows at `places`, in the order of the table (for messages).
    pub(crate) fn rows_at(&self, places: &[Place]) -> Result<Vec<Vec<String>>> {
        let mut out = Vec::new();
        self.scan(&mut |r, at| {
            if places.contains(&at) {
                out.push(r.iter().map(String::from).collect());
            }
            Ok(())
        })?;
        Ok(out)
    }
}

/// An axis label: the column's name and unit (or `unit` instead, a fitted one).
pub fn label(col: &str) -> String {
    let c = names::column(col);
    chart::axis_label(&c.name, c.unit)
}

pub(crate) fn label_in(col: &str, unit: &str) -> String {
    chart::axis_label(&names::column(col).name, unit)
}

/// What a column measures, for axis labels: the unit of [`names::column`].
pub fn unit(col: &str) -> Option<&'static str> {
    names::known(col).map(|c| c.unit).filter(|u| !u.is_empty())
}

/// The unit among ns, µs, ms, s (or pJ, nJ, µJ, mJ, J) in which `largest`, a magnitude of
/// column `col`, reads between 1 and 1000, and what to divide the column's values by;
/// None for a column that is neither a time nor an energy.
pub fn fitted_unit(col: &str, largest: f64) -> Option<(&'static str, f64)> {
    const TIME: [&str; 4] = ["ns", "µs", "ms", "s"];
    const ENERGY: [&str; 5] = ["pJ", "nJ", "µJ", "mJ", "J"];
    let (units, base): (&[&str], usize) = match names::known(col)?.unit {
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

/// A `--where` filter: a column and a glob over its values.
#[derive(Debug, Clone)]
pub struct Filter {
    pub col: usize,
    pub value: String,
    plain: bool,
}

impl Filter {
    fn matches(&self, cell: &str) -> bool {
        match self.plain {
            true => cell == self.value,
            false => workload::select::glob_match(&self.value, cell),
        }
    }
}

/// The rows a plot keeps: its `--where` filters (filters on one column are
/// alternatives, filters on different columns all hold), `layer=TOTAL` unless a filter
/// names the layer or the plot is per layer, and a value in column `need`.
pub struct Keep {
    pub filters: Vec<Filter>,
    no_total: Option<usize>,
    need: usize,
}

impl Keep {
    pub fn new(src: &Source, a: &PlotArgs, need: usize) -> Result<Keep> {
        let mut filters: Vec<Filter> = Vec::new();
        for f in &a.filters {
            let (k, v) = f
                .split_once('=')
                .ok_or_else(|| anyhow!("--where {f}: expected COLUMN=VALUE"))?;
            let value = v.trim().to_string();
            filters.push(Filter {
                col: src.col(k.trim(), "--where")?,
                plain: !value.contains(['*', '?']),
                value,
            });
        }
        // A per-layer plot (layer on x or among the series) keeps the layers' rows and
        // leaves out their TOTAL; any other keeps the TOTAL rows unless a filter names
        // the layer.
        let mut no_total = None;
        if let Ok(l) = src.col("layer", "") {
            let per_layer = a.x == "layer" || a.series.split(',').any(|c| c.trim() == "layer");
            if !filters.iter().any(|f| f.col == l) {
                match per_layer {
                    true => no_total = Some(l),
                    false => filters.push(Filter {
                        col: l,
                        value: "TOTAL".into(),
                        plain: true,
                    }),
                }
            }
        }
        Ok(Keep {
            filters,
            no_total,
            need,
        })
    }

    pub fn keeps(&self, r: &csv::StringRecord) -> bool {
        let cell = |i: usize| r.get(i).unwrap_or("");
        self.filters.iter().all(|f| {
            self.filters
                .iter()
                .any(|g| g.col == f.col && g.matches(cell(g.col)))
        }) && self.no_total.is_none_or(|l| cell(l) != "TOTAL")
            && !cell(self.need).is_empty()
    }

    /// `COL=V1|V2, ...` of the filters, for messages.
    pub fn shown(&self, h: &[String]) -> String {
        let mut cols: Vec<(usize, Vec<&str>)> = Vec::new();
        for f in &self.filters {
            match cols.iter_mut().find(|c| c.0 == f.col) {
                Some(c) => c.1.push(&f.value),
                None => cols.push((f.col, vec![&f.value])),
            }
        }
        cols.iter()
            .map(|(i, v)| format!("{}={}", h[*i], v.join("|")))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The filters as a title says them ("mobilenetv2-nsfwjs-pruned, OU width 8
    /// bitlines"); the whole network's rows (layer TOTAL) go without saying.
    pub fn setting(&self, h: &[String], fixed: Option<(usize, String)>) -> String {
        let mut cols: Vec<(usize, Vec<String>)> = Vec::new();
        if let Some((i, v)) = fixed {
            cols.push((i, vec![v]));
        }
        for f in &self.filters {
            if h[f.col] == "layer" && f.value == "TOTAL" {
                continue;
            }
            match cols.iter_mut().find(|c| c.0 == f.col) {
                Some(c) => c.1.push(f.value.clone()),
                None => cols.push((f.col, vec![f.value.clone()])),
            }
        }
        cols.iter()
            .map(|(i, v)| names::setting(&h[*i], &v.join(" or ")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The error of a plot whose filters keep no row.
pub(crate) fn none_kept(src: &Source, keep: &Keep, y: &str) -> anyhow::Error {
    anyhow!(
        "{}: no row with a value of {y} matches {}",
        src.path().display(),
        keep.shown(src.header())
    )
}

/// The columns of the interval of y, when the table has them: `<y>_ci_low` and
/// `<y>_ci_high`, or for a mean `<f>_mean`, `<f>_ci_low` and `<f>_ci_high` (the columns
/// of device draws, docs/accuracy.md). A figure `f` whose table also has `f_mean` is a
/// single draw, not the mean: it gets none.
pub fn interval_columns(header: &[String], y: &str) -> Option<(usize, usize)> {
    interval_columns_of(header, y, Interval::Draws)
}

/// [`interval_columns`] of the interval `which`: with [`Interval::Samples`],
/// `<f>_samples_ci_low` and `<f>_samples_ci_high`.
///
/// A figure whose `_ci_*` columns are over the samples and the draws ([`PAIRED`]: the
/// paired top-1 drop, docs/accuracy.md) has no interval over the device draws alone:
/// its `_ci_*` columns are its [`Interval::Samples`] interval. The columns are chosen,
/// and named in the legend, by what they are, not by their suffix.
pub fn interval_columns_of(header: &[String], y: &str, which: Interval) -> Option<(usize, usize)> {
    let has = |c: &str| header.iter().position(|h| h == c);
    let stem = match y.strip_suffix("_mean") {
        Some(f) => f.to_string(),
        None if has(&format!("{y}_mean")).is_some() => return None,
        None => y.to_string(),
    };
    let (low, high) = match (PAIRED.contains(&stem.as_str()), which) {
        (true, Interval::Draws) => return None,
        (true, Interval::Samples) => Interval::Draws.suffixes(),
        (false, _) => which.suffixes(),
    };
    Some((
        has(&format!("{stem}{low}"))?,
        has(&format!("{stem}{high}"))?,
    ))
}

/// The figures whose `_ci_low` and `_ci_high` columns are an interval over the samples
/// and the draws (`sim::draws::SAMPLE_COLUMNS`' paired drop), not over the draws alone.
pub const PAIRED: [&str; 1] = ["top1_drop"];

/// The (low, high) columns of an interval, when drawn, and the legend entry naming it.
pub type Chosen = (Option<(usize, usize)>, Option<String>);

/// The interval columns a plot of `a` draws, and the legend entry naming them: without
/// `--interval`, the draws' columns when there are (and no entry); with it, its columns,
/// or the error naming the file, the flag and the columns it lacks.
pub fn chosen_interval(src: &Source, a: &PlotArgs) -> Result<Chosen> {
    let h = src.header();
    let stem = a.y.strip_suffix("_mean").unwrap_or(&a.y);
    let paired = PAIRED.contains(&stem);
    let Some(which) = a.interval else {
        // The default: the draws' interval, unnamed; a paired figure's only interval,
        // named (it is not over the draws alone).
        return Ok(match paired {
            true => match interval_columns_of(h, &a.y, Interval::Samples) {
                Some(ci) => (Some(ci), Some(Interval::Samples.label().to_string())),
                None => (None, None),
            },
            false => (interval_columns(h, &a.y), None),
        });
    };
    if paired && which == Interval::Draws {
        bail!(
            "{}: --interval draws: {stem}_ci_low and {stem}_ci_high of --y {} are a 95% interval over the samples and the draws (the paired drop, docs/accuracy.md), not over the device draws alone: --interval samples draws them",
            src.path().display(),
            a.y
        );
    }
    match interval_columns_of(h, &a.y, which) {
        Some(ci) => Ok((Some(ci), Some(which.label().to_string()))),
        None => {
            let (low, high) = match paired {
                true => Interval::Draws.suffixes(),
                false => which.suffixes(),
            };
            bail!(
                "{}: --interval {}: no columns {stem}{low} and {stem}{high} for --y {} (a table of `accuracy --draws` or a sweep with draws has them for the _mean columns)",
                src.path().display(),
                match which {
                    Interval::Draws => "draws",
                    Interval::Samples => "samples",
                },
                a.y
            )
        }
    }
}

/// The number in cell `i` of row `r` (column `col`, named by `flag` in messages): a
/// finite number, or the error naming the file, the place and the column.
pub fn number_at(
    src: &Source,
    r: &csv::StringRecord,
    at: Place,
    i: usize,
    flag: &str,
) -> Result<f64> {
    number(src, r, at, i, flag)
}

pub(crate) fn number(
    src: &Source,
    r: &csv::StringRecord,
    at: Place,
    i: usize,
    flag: &str,
) -> Result<f64> {
    let cell = r.get(i).unwrap_or("");
    let col = &src.header()[i];
    let p = src.path().display();
    match cell.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(anyhow!(
            "{p}: {at}: {flag}: column {col} holds '{cell}', not a finite number"
        )),
        Err(_) => Err(anyhow!(
            "{p}: {at}: {flag}: column {col} holds '{cell}', not a number"
        )),
    }
}

/// The interval (low, high) of a row, when its cells hold one.
pub fn interval_at(
    src: &Source,
    r: &csv::StringRecord,
    at: Place,
    ci: Option<(usize, usize)>,
) -> Result<Option<(f64, f64)>> {
    interval_of(src, r, at, ci)
}

pub(crate) fn interval_of(
    src: &Source,
    r: &csv::StringRecord,
    at: Place,
    ci: Option<(usize, usize)>,
) -> Result<Option<(f64, f64)>> {
    let Some((lo, hi)) = ci else {
        return Ok(None);
    };
    if r.get(lo).unwrap_or("").is_empty() || r.get(hi).unwrap_or("").is_empty() {
        return Ok(None);
    }
    let (lo, hi) = (
        number(src, r, at, lo, "interval")?,
        number(src, r, at, hi, "interval")?,
    );
    Ok(Some((lo.min(hi), hi.max(lo))))
}

/// The series columns of `a`.
pub fn series_columns(src: &Source, a: &PlotArgs) -> Result<Vec<usize>> {
    a.series
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| src.col(s, "--series"))
        .collect()
}

/// The legend's heading: the series columns' names.
pub fn legend(h: &[String], si: &[usize]) -> String {
    si.iter()
        .map(|&i| names::column(&h[i]).name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `c` with the axis limits and reference lines of `a`.
pub fn with_limits(mut c: Chart, a: &PlotArgs) -> Result<Chart> {
    for (flag, v) in [
        ("--x-min", a.x_min),
        ("--x-max", a.x_max),
        ("--y-min", a.y_min),
        ("--y-max", a.y_max),
    ] {
        if let Some(v) = v {
            if !v.is_finite() {
                bail!("{flag}: {v} is not a finite number");
            }
        }
    }
    for (flag, lo, hi) in [("x", a.x_min, a.x_max), ("y", a.y_min, a.y_max)] {
        if let (Some(lo), Some(hi)) = (lo, hi) {
            if lo >= hi {
                bail!("--{flag}-min {lo} is not below --{flag}-max {hi}");
            }
        }
    }
    for (flag, log, lo, hi) in [
        ("x", a.log_x, a.x_min, a.x_max),
        ("y", a.log_y, a.y_min, a.y_max),
    ] {
        if let Some(v) = [lo, hi].into_iter().flatten().find(|v| log && *v <= 0.0) {
            bail!("--{flag}-min/--{flag}-max: {v} on a logarithmic axis (--log-{flag}) must be positive");
        }
    }
    c.x_limits = (a.x_min, a.x_max);
    c.y_limits = (a.y_min, a.y_max);
    for l in &a.y_lines {
        let (v, name) = match l.split_once('=') {
            Some((v, n)) => (v.trim(), n.trim().to_string()),
            None => (l.trim(), format!("y = {}", l.trim())),
        };
        let v: f64 = v
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                anyhow!("--y-line {l}: expected VALUE or VALUE=LABEL, VALUE a finite number")
            })?;
        if a.log_y && v <= 0.0 {
            bail!("--y-line {l}: {v} on a logarithmic axis (--log-y) must be positive");
        }
        c.y_lines.push((v, name));
    }
    Ok(c)
}

/// `c` with a time or energy axis (column `x`, `y`) in the unit that fits its range
/// ([`fitted_unit`]): `time_ns` from 2e6 to 9e7 is drawn in ms, `energy_pj` in µJ. Limits
/// and reference lines given in the column's own unit are converted with it.
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
        c.x_label = label_in(x, u);
    }
    if let Some((u, _)) = fy {
        c.y_label = label_in(y, u);
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
    c.x_limits = (c.x_limits.0.map(|v| v / dx), c.x_limits.1.map(|v| v / dx));
    c.y_limits = (c.y_limits.0.map(|v| v / dy), c.y_limits.1.map(|v| v / dy));
    c.y_lines.iter_mut().for_each(|l| l.0 /= dy);
    c
}
