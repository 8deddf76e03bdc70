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
pub use super::plot_table::*;
use super::plot_table::{interval_of, none_kept, number};
use super::table::Table;
use anyhow::{anyhow, bail, Result};
use chart::Chart;
use std::collections::HashMap;
use std::path::PathBuf;

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
    let (ci, interval_label) = chosen_interval(src, a)?;
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
        interval_label,
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
            // Shortest form: -1e308 in full digits is 309 characters.
            let v = match v == 0.0 || (1e-4..1e16).contains(&v.abs()) {
                true => v.to_string(),
                false => format!("{v:e}"),
            };
            bail!(
                "{p}: --log-{name}: column {col} holds {v} at {}; a logarithmic axis needs positive values (drop --log-{name}, or filter the row out with --where)",
                q.2
            );
        }
    }
    Ok(())
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

/// The default figure's name, made of column names (data, never a path): one file name
/// next to the table. A `/` or `\\` (which would put it in another directory, `../../x`
/// two levels up, `/x` anywhere) and a control character become `_`, and so does a
/// leading dot (a hidden file, or `..`); a name longer than [`NAME_MAX`] keeps its first
/// part and a hash of the whole (`bounds::text::bounded_name`), so it fits a file
/// system's 255 bytes.
fn one_name(name: String) -> String {
    let stem = name.strip_suffix(".svg").unwrap_or(&name);
    let mut v: String = stem
        .chars()
        .map(|c| match c {
            '/' | '\\' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    if v.starts_with('.') {
        v.replace_range(..1, "_");
    }
    format!("{}.svg", bounds::text::bounded_name(&v, NAME_MAX, &name))
}

/// The longest default figure name before its `.svg`, in bytes.
const NAME_MAX: usize = 200;

/// `sresim plot`: writes the SVG and returns its path.
pub fn plot(a: &PlotArgs) -> Result<PathBuf> {
    for (flag, set) in [("--x-better", a.x_better), ("--y-better", a.y_better)] {
        if set.is_some() && !a.pareto {
            bail!("{flag}: needs --pareto (it sets the direction of the Pareto front)");
        }
    }
    if a.interval.is_some() && a.stack && !a.pareto {
        bail!(
            "--interval: a stacked chart draws no interval (it goes with a line chart or --pareto)"
        );
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
        None if a.pareto => path.with_file_name(one_name(format!("pareto-{}-vs-{}.svg", a.y, a.x))),
        None if a.stack => path.with_file_name(one_name(format!(
            "stacked-{}-vs-{}.svg",
            a.y.replace(['*', '?'], "_"),
            a.x
        ))),
        None => path.with_file_name(one_name(format!("{}-vs-{}.svg", a.y, a.x))),
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
mod interval_tests;
#[cfg(test)]
pub(crate) mod tests;
