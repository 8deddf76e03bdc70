//! `sresim plot DIR --x ou.rows --y speedup_vs_dense --series mode`: one SVG line chart of
//! a result table — one line per series value, axes named with their units from the one
//! table of column names ([`crate::names`]), a legend to the right of the plot.
//!
//! Rows are filtered first (`--where COL=VALUE`, VALUE a glob, and `layer=TOTAL` unless a filter names
//! the layer). Each (series, x) must then be one row: when several rows remain, the
//! error names the columns that tell them apart. A non-numeric x column is categorical
//! (values in order of first appearance). When the table has a 95% interval of y
//! ([`interval_columns`]), each point carries it: a band around its line.
//!
//! Reading is one pass over the table, streamed (CSV or Parquet), keeping of each kept
//! row only its point: a result table of 10^6 rows plots in seconds and in the memory of
//! its points, not of its text. Numbers are read as every reader of sresim reads them: a
//! cell that holds NaN or an infinity is refused, naming its file, line and column (a
//! figure of sresim's own is always finite; such a cell was written by something else).

use super::args::PlotArgs;
use super::names;
use super::table::Table;
use anyhow::{anyhow, bail, Result};
use chart::Chart;
use std::collections::HashMap;
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
            let header = rd.columns().iter().map(|c| c.name.clone()).collect();
            return Ok(Source::Parquet { path, header });
        }
        let mut rd = csv_reader(&path)?;
        let header: Vec<String> = rd
            .headers()
            .map_err(|e| anyhow!("{p}: {e}"))?
            .iter()
            .map(String::from)
            .collect();
        if header.is_empty() || header.iter().all(String::is_empty) {
            bail!("{p}: empty file (no header)");
        }
        Ok(Source::Csv { path, header })
    }
}

fn csv_reader(path: &Path) -> Result<csv::Reader<std::io::BufReader<std::fs::File>>> {
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
    fn rows_at(&self, places: &[Place]) -> Result<Vec<Vec<String>>> {
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

fn label_in(col: &str, unit: &str) -> String {
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
fn none_kept(src: &Source, keep: &Keep, y: &str) -> anyhow::Error {
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
    let has = |c: &str| header.iter().position(|h| h == c);
    let stem = match y.strip_suffix("_mean") {
        Some(f) => f.to_string(),
        None if has(&format!("{y}_mean")).is_some() => return None,
        None => y.to_string(),
    };
    Some((
        has(&format!("{stem}_ci_low"))?,
        has(&format!("{stem}_ci_high"))?,
    ))
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

fn number(src: &Source, r: &csv::StringRecord, at: Place, i: usize, flag: &str) -> Result<f64> {
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

fn interval_of(
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

/// The series of rows: their names, in order of first appearance, and the index of the
/// series of a row.
#[derive(Default)]
struct SeriesNames {
    names: Vec<String>,
    index: HashMap<String, usize>,
    key: String,
}

impl SeriesNames {
    /// The series of row `r`: the values of columns `si` (the y column's name when none).
    fn of(&mut self, h: &[String], si: &[usize], r: &csv::StringRecord, y: &str) -> usize {
        self.key.clear();
        for (n, &i) in si.iter().enumerate() {
            if n > 0 {
                self.key.push('\u{1f}');
            }
            self.key.push_str(r.get(i).unwrap_or(""));
        }
        if let Some(&k) = self.index.get(&self.key) {
            return k;
        }
        let name = match si {
            [] => names::column(y).name,
            [i] => names::value(&h[*i], r.get(*i).unwrap_or("")),
            many => many
                .iter()
                .map(|&i| names::value(&h[i], r.get(i).unwrap_or("")))
                .collect::<Vec<_>>()
                .join(", "),
        };
        self.names.push(name);
        self.index.insert(self.key.clone(), self.names.len() - 1);
        self.names.len() - 1
    }
}

/// The legend's heading: the series columns' names.
pub fn legend(h: &[String], si: &[usize]) -> String {
    si.iter()
        .map(|&i| names::column(&h[i]).name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The workload all kept rows share, if they share one (for the title).
#[derive(Default)]
struct Shared {
    col: Option<usize>,
    value: Option<String>,
    mixed: bool,
}

impl Shared {
    fn new(src: &Source) -> Shared {
        Shared {
            col: src
                .col("workload", "")
                .or_else(|_| src.col("network", ""))
                .ok(),
            ..Shared::default()
        }
    }

    fn see(&mut self, r: &csv::StringRecord) {
        let Some(i) = self.col else { return };
        let v = r.get(i).unwrap_or("");
        match &self.value {
            None => self.value = Some(v.to_string()),
            Some(w) if w != v => self.mixed = true,
            Some(_) => {}
        }
    }

    /// The column and its value, when every kept row has the same one and no filter
    /// names the column.
    fn fixed(&self, keep: &Keep) -> Option<(usize, String)> {
        let i = self.col?;
        if self.mixed || keep.filters.iter().any(|f| f.col == i) {
            return None;
        }
        self.value.clone().map(|v| (i, v))
    }
}

/// The title: `a`'s, or what is drawn and the settings the rows share.
fn title(src: &Source, a: &PlotArgs, keep: &Keep, shared: &Shared, what: String) -> String {
    if let Some(t) = &a.title {
        return t.clone();
    }
    let set = keep.setting(src.header(), shared.fixed(keep));
    match set.is_empty() {
        true => what,
        false => format!("{what} ({set})"),
    }
}

/// `y` against `x`, in words.
fn versus(y: &str, x: &str) -> String {
    format!("{} vs {}", names::column(y).name, names::column(x).name)
}

/// One point of a line chart while the table is read.
struct Pt {
    series: usize,
    /// The x value, when the cell reads as a number.
    x: Option<f64>,
    /// The category of the x cell (u32::MAX past [`MAX_CATEGORIES`]).
    cat: u32,
    y: f64,
    ci: Option<(f64, f64)>,
    at: Place,
}

/// Filters and groups the rows of `t` as `a` asks.
pub fn chart(t: &Table, a: &PlotArgs) -> Result<Chart> {
    chart_of(&Source::Table(t), a)
}

/// [`chart`] of any source.
pub fn chart_of(src: &Source, a: &PlotArgs) -> Result<Chart> {
    let p = src.path().display().to_string();
    let h = src.header();
    let xi = src.col(&a.x, "--x")?;
    let yi = src.col(&a.y, "--y")?;
    let si = series_columns(src, a)?;
    let keep = Keep::new(src, a, yi)?;
    let ci = interval_columns(h, &a.y);
    let mut shared = Shared::new(src);
    let mut series = SeriesNames::default();
    let mut cats: Vec<String> = Vec::new();
    let mut cat_index: HashMap<String, u32> = HashMap::new();
    let mut pts: Vec<Pt> = Vec::new();
    src.scan(&mut |r, at| {
        if !keep.keeps(r) {
            return Ok(());
        }
        shared.see(r);
        let y = number(src, r, at, yi, "--y")?;
        let cell = r.get(xi).unwrap_or("");
        let x = cell.trim().parse::<f64>().ok();
        let cat = match cat_index.get(cell) {
            Some(&c) => c,
            None if cats.len() < MAX_CATEGORIES => {
                cats.push(cell.to_string());
                cat_index.insert(cell.to_string(), cats.len() as u32 - 1);
                cats.len() as u32 - 1
            }
            None => u32::MAX,
        };
        pts.push(Pt {
            series: series.of(h, &si, r, &a.y),
            x,
            cat,
            y,
            ci: interval_of(src, r, at, ci)?,
            at,
        });
        Ok(())
    })?;
    if pts.is_empty() {
        return Err(none_kept(src, &keep, &a.y));
    }
    let numeric = pts.iter().all(|q| q.x.is_some());
    if numeric {
        if let Some(q) = pts.iter().find(|q| q.x.is_some_and(|v| !v.is_finite())) {
            bail!(
                "{p}: {}: --x: column {} holds '{}', not a finite number",
                q.at,
                a.x,
                q.x.unwrap_or(0.0)
            );
        }
    } else if pts.iter().any(|q| q.cat == u32::MAX) {
        bail!(
            "{p}: --x: column {} is not a number in every kept row and has more than {MAX_CATEGORIES} distinct values: too many categories to draw",
            a.x
        );
    }
    let key = |q: &Pt| -> f64 {
        match numeric {
            // -0 and 0 are one x.
            true => q.x.unwrap_or(0.0) + 0.0,
            false => q.cat as f64,
        }
    };
    // Each (series, x) once: sorted by series and x, a repeat sits beside its twin.
    let mut order: Vec<usize> = (0..pts.len()).collect();
    order.sort_by(|&i, &j| {
        (pts[i].series, key(&pts[i]))
            .partial_cmp(&(pts[j].series, key(&pts[j])))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(i.cmp(&j))
    });
    if let Some(w) = order
        .windows(2)
        .find(|w| pts[w[0]].series == pts[w[1]].series && key(&pts[w[0]]) == key(&pts[w[1]]))
    {
        let (one, two) = (&pts[w[0]], &pts[w[1]]);
        let rows = src.rows_at(&[one.at, two.at])?;
        let differ: Vec<&str> = match rows.as_slice() {
            [r1, r2] => (0..h.len())
                .filter(|&i| h[i] != "point" && r1.get(i) != r2.get(i))
                .filter(|&i| super::compare::is_key_column(&h[i]))
                .map(|i| h[i].as_str())
                .collect(),
            _ => Vec::new(),
        };
        let x_text = rows
            .first()
            .and_then(|r| r.get(xi))
            .cloned()
            .unwrap_or_default();
        bail!(
            "{p}: several rows for {}={} in series '{}'; they differ in {}: add --where COLUMN=VALUE or more --series columns",
            a.x,
            x_text,
            series.names[one.series],
            if differ.is_empty() { "nothing (duplicate rows)".into() } else { differ.join(", ") }
        );
    }
    check_log(
        src,
        a,
        &pts.iter()
            .map(|q| (q.x.unwrap_or(1.0), q.y, q.at))
            .collect::<Vec<_>>(),
        numeric,
    )?;
    let mut out: Vec<(String, Vec<(f64, f64)>)> = series
        .names
        .iter()
        .map(|n| (n.clone(), Vec::new()))
        .collect();
    let mut intervals: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); out.len()];
    for &i in &order {
        let q = &pts[i];
        let x = key(q);
        out[q.series].1.push((x, q.y));
        if let Some((lo, hi)) = q.ci {
            intervals[q.series].push((x, lo, hi));
        }
    }
    let c = Chart {
        title: title(src, a, &keep, &shared, versus(&a.y, &a.x)),
        x_label: label(&a.x),
        y_label: label(&a.y),
        legend: legend(h, &si),
        categories: (!numeric).then(|| cats.iter().map(|c| names::value(&a.x, c)).collect()),
        series: out,
        lines: true,
        intervals,
        y_domain: names::column(&a.y).domain.range(),
        ..Chart::default()
    };
    Ok(fit_units(with_limits(c, a)?, &a.x, &a.y))
}

/// With a logarithmic axis, the first point whose value there is not positive: the
/// error naming the column and its place.
fn check_log(src: &Source, a: &PlotArgs, pts: &[(f64, f64, Place)], x_numeric: bool) -> Result<()> {
    let p = src.path().display();
    for (log, name, col, get) in [
        (a.log_x && x_numeric, "x", &a.x, 0usize),
        (a.log_y, "y", &a.y, 1),
    ] {
        if !log {
            continue;
        }
        if let Some(q) = pts
            .iter()
            .find(|q| if get == 0 { q.0 <= 0.0 } else { q.1 <= 0.0 })
        {
            let v = if get == 0 { q.0 } else { q.1 };
            bail!(
                "{p}: --log-{name}: column {col} holds {v} at {}; a logarithmic axis needs positive values (drop --log-{name}, or filter the row out with --where)",
                q.2
            );
        }
    }
    Ok(())
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

/// The name of what the columns a `--stack` glob matches hold: "energy" for parts of
/// the energy, else the glob's words.
fn stack_name(glob: &str, cols: &[&str]) -> String {
    match cols
        .iter()
        .all(|c| c.starts_with("e_") && c.ends_with("_pj"))
    {
        true => "energy".to_string(),
        false => names::words(&glob.replace(['*', '?'], " ")),
    }
}

/// `--stack`: the columns `a.y` matches (a glob) stacked as bars at each x (categories in
/// order of first appearance; numbers in increasing order), one series per column.
pub fn stacked(t: &Table, a: &PlotArgs) -> Result<Chart> {
    stacked_of(&Source::Table(t), a)
}

/// [`stacked`] of any source.
pub fn stacked_of(src: &Source, a: &PlotArgs) -> Result<Chart> {
    let p = src.path().display().to_string();
    let h = src.header();
    let xi = src.col(&a.x, "--x")?;
    let cols: Vec<usize> = (0..h.len())
        .filter(|&i| i != xi && workload::select::glob_match(&a.y, &h[i]))
        .collect();
    let Some(&first) = cols.first() else {
        bail!(
            "{p}: --y {}: no column matches (columns: {})",
            a.y,
            h.join(", ")
        );
    };
    let keep = Keep::new(src, a, first)?;
    let mut shared = Shared::new(src);
    let mut xs: Vec<String> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); cols.len()];
    src.scan(&mut |r, at| {
        if !keep.keeps(r) {
            return Ok(());
        }
        shared.see(r);
        let x = r.get(xi).unwrap_or("");
        if seen.insert(x.to_string(), ()).is_some() {
            bail!(
                "{p}: several rows for {}={x}: add --where COLUMN=VALUE to keep one",
                a.x
            );
        }
        if xs.len() >= MAX_CATEGORIES {
            bail!("{p}: --x: more than {MAX_CATEGORIES} bars to stack");
        }
        xs.push(x.to_string());
        for (k, &c) in cols.iter().enumerate() {
            values[k].push(number(src, r, at, c, "--y")?);
        }
        Ok(())
    })?;
    if xs.is_empty() {
        return Err(none_kept(src, &keep, &h[first]));
    }
    let mut order: Vec<usize> = (0..xs.len()).collect();
    if xs.iter().all(|x| x.parse::<f64>().is_ok()) {
        order.sort_by(|&i, &j| {
            let v = |k: usize| xs[k].parse::<f64>().unwrap_or(0.0);
            v(i).total_cmp(&v(j))
        });
    }
    let matched: Vec<&str> = cols.iter().map(|&c| h[c].as_str()).collect();
    let what = stack_name(&a.y, &matched);
    let energy = what == "energy";
    let series: Vec<(String, Vec<(f64, f64)>)> = cols
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let name = names::column(&h[c]).name;
            let name = match energy {
                true => name.strip_suffix(" energy").unwrap_or(&name).to_string(),
                false => name,
            };
            let pts = order
                .iter()
                .enumerate()
                .map(|(slot, &i)| (slot as f64, values[k][i]))
                .collect();
            (name, pts)
        })
        .collect();
    let unit = unit(&h[first]).unwrap_or("");
    let c = Chart {
        title: title(
            src,
            a,
            &keep,
            &shared,
            format!("{what} by {}", names::column(&a.x).name),
        ),
        x_label: label(&a.x),
        y_label: chart::axis_label(&what, unit),
        legend: if energy {
            "component".into()
        } else {
            "column".into()
        },
        categories: Some(order.iter().map(|&i| names::value(&a.x, &xs[i])).collect()),
        series,
        lines: false,
        stacked: true,
        ..Chart::default()
    };
    let mut c = with_limits(c, a)?;
    // The unit of the whole stack: the largest sum decides.
    let top = (0..order.len())
        .map(|x| c.series.iter().map(|s| s.1[x].1).sum::<f64>())
        .fold(0.0, f64::max);
    if let Some((u, d)) = fitted_unit(&h[first], top) {
        c.y_label = chart::axis_label(&what, u);
        c.series
            .iter_mut()
            .flat_map(|s| s.1.iter_mut())
            .for_each(|p| p.1 /= d);
        c.y_limits = (c.y_limits.0.map(|v| v / d), c.y_limits.1.map(|v| v / d));
        c.y_lines.iter_mut().for_each(|l| l.0 /= d);
    }
    Ok(c)
}

/// `sresim plot`: writes the SVG and returns its path.
pub fn plot(a: &PlotArgs) -> Result<PathBuf> {
    for (flag, set) in [("--x-better", a.x_better), ("--y-better", a.y_better)] {
        if set.is_some() && !a.pareto {
            bail!("{flag}: needs --pareto (it sets the direction of the Pareto front)");
        }
    }
    let src = Source::open(&a.input)?;
    let c = match (a.pareto, a.stack) {
        (true, _) => super::pareto::chart_of(&src, a)?,
        (false, true) => stacked_of(&src, a)?,
        (false, false) => chart_of(&src, a)?,
    };
    let text =
        chart::svg(&c, a.log_x, a.log_y).map_err(|e| anyhow!("{}: {e}", src.path().display()))?;
    let path = src.path();
    let out = match &a.out {
        Some(o) => o.clone(),
        None if a.pareto => path.with_file_name(format!("pareto-{}-vs-{}.svg", a.y, a.x)),
        None if a.stack => path.with_file_name(format!(
            "stacked-{}-vs-{}.svg",
            a.y.replace(['*', '?'], "_"),
            a.x
        )),
        None => path.with_file_name(format!("{}-vs-{}.svg", a.y, a.x)),
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
pub(crate) mod tests;
