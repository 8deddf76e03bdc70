//! `sresim plot --pareto`: one marker per row (a scatter, series by `--series`) and the
//! Pareto front of all plotted points drawn as a step line.
//!
//! Direction rule: by default lower x is better (cycles, energy) and higher y is better
//! (top-1, agreement); `--x-better higher` and `--y-better lower` flip either. A point
//! dominates another when it is at least as good on both axes and better on one; the
//! front is every point no other point dominates (equal points are all on it).
//! Dominance is judged on the plotted y: with `--y top1_mean`, on the mean over device
//! draws. Each point's 95% interval, when the table has one
//! ([`super::plot_table::interval_columns`]), is drawn as a whisker, and every front point is
//! ringed (so a front of one point shows).

use super::args::PlotArgs;
use super::names;
use super::plot_table::{chosen_interval, label, legend, series_columns, Keep, Place, Source};
use super::table::Table;
use anyhow::{anyhow, Result};
use chart::Chart;

pub use super::args::Better;

/// Whether `a` dominates `b`: at least as good on both axes and better on one.
pub fn dominates(a: (f64, f64), b: (f64, f64), bx: Better, by: Better) -> bool {
    let (ax, ay, cx, cy) = (bx.cost(a.0), by.cost(a.1), bx.cost(b.0), by.cost(b.1));
    ax <= cx && ay <= cy && (ax < cx || ay < cy)
}

/// The indices of the points no other point dominates, from the best x to the worst (ties
/// in x by the best y). One sort and one pass: O(n log n).
pub fn front(points: &[(f64, f64)], bx: Better, by: Better) -> Vec<usize> {
    let cost = |i: usize| (bx.cost(points[i].0), by.cost(points[i].1));
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (cost(i), cost(j));
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(i.cmp(&j))
    });
    let mut out: Vec<usize> = Vec::new();
    for i in order {
        let c = cost(i);
        match out.last().map(|&l| cost(l)) {
            // Sorted by x cost: a point is dominated iff an earlier one has a y cost as
            // low, unless it equals that point.
            Some(last) if c != last && c.1 >= last.1 => {}
            _ => out.push(i),
        }
    }
    out
}

/// The step line through front points `f` (in [`front`]'s order): from each point along
/// x to the next one's x, then along y to it — the edge of the region the front
/// dominates.
pub fn steps(f: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * f.len());
    for (k, &p) in f.iter().enumerate() {
        if k > 0 {
            out.push((p.0, f[k - 1].1));
        }
        out.push(p);
    }
    out
}

/// The Pareto chart of the rows of `t` that `a` keeps.
pub fn chart(t: &Table, a: &PlotArgs) -> Result<Chart> {
    chart_of(&Source::Table(t), a)
}

/// [`chart`] of any source: one pass over its rows, keeping each kept row's point; every
/// point of the front is drawn, however many.
pub fn chart_of(src: &Source, a: &PlotArgs) -> Result<Chart> {
    let p = src.path().display().to_string();
    let h = src.header();
    let xi = src.col(&a.x, "--x")?;
    let yi = src.col(&a.y, "--y")?;
    let si = series_columns(src, a)?;
    let keep = Keep::new(src, a, yi)?;
    let (ci, interval_label) = chosen_interval(src, a)?;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut intervals: Vec<Vec<(f64, f64, f64)>> = Vec::new();
    let mut index: std::collections::HashMap<Vec<String>, usize> = Default::default();
    let mut all: Vec<(f64, f64)> = Vec::new();
    let mut places: Vec<Place> = Vec::new();
    let mut workload: (Option<String>, bool) = (None, false);
    let wi = src
        .col("workload", "")
        .or_else(|_| src.col("network", ""))
        .ok();
    let mut kept = 0usize;
    src.scan(&mut |r, at| {
        if !keep.keeps(r) {
            return Ok(());
        }
        kept += 1;
        // Rows without an x value (a mode that does not fit a chip) are not points.
        if r.get(xi).unwrap_or("").is_empty() {
            return Ok(());
        }
        if let Some(w) = wi.map(|i| r.get(i).unwrap_or("")) {
            match &workload.0 {
                None => workload.0 = Some(w.to_string()),
                Some(v) if v != w => workload.1 = true,
                Some(_) => {}
            }
        }
        let pt = (
            super::plot_table::number_at(src, r, at, xi, "--x")?,
            super::plot_table::number_at(src, r, at, yi, "--y")?,
        );
        all.push(pt);
        places.push(at);
        let key: Vec<String> = si
            .iter()
            .map(|&i| r.get(i).unwrap_or("").to_string())
            .collect();
        let k = match index.get(&key) {
            Some(&k) => k,
            None => {
                let name = match si.as_slice() {
                    [] => names::column(&a.y).name,
                    cols => cols
                        .iter()
                        .zip(&key)
                        .map(|(&i, v)| names::value(&h[i], v))
                        .collect::<Vec<_>>()
                        .join(", "),
                };
                series.push((name, Vec::new()));
                intervals.push(Vec::new());
                index.insert(key, series.len() - 1);
                series.len() - 1
            }
        };
        series[k].1.push(pt);
        if let Some((lo, hi)) = super::plot_table::interval_at(src, r, at, ci)? {
            intervals[k].push((pt.0, lo, hi));
        }
        Ok(())
    })?;
    if kept == 0 {
        return Err(anyhow!(
            "{p}: no row with a value of {} matches {}",
            a.y,
            keep.shown(h)
        ));
    }
    if all.is_empty() {
        return Err(anyhow!("{p}: --x: no kept row has a value of {}", a.x));
    }
    for (log, name, col, get) in [(a.log_x, "x", &a.x, 0), (a.log_y, "y", &a.y, 1)] {
        let v = |q: &(f64, f64)| if get == 0 { q.0 } else { q.1 };
        if let Some(i) = (0..all.len()).find(|&i| log && v(&all[i]) <= 0.0) {
            return Err(anyhow!(
                "{p}: --log-{name}: column {col} holds {} at {}; a logarithmic axis needs positive values (drop --log-{name}, or filter the row out with --where)",
                v(&all[i]),
                places[i]
            ));
        }
    }
    for s in &mut series {
        s.1.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    for b in &mut intervals {
        b.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    }
    let bx = a.x_better.unwrap_or(Better::Lower);
    let by = a.y_better.unwrap_or(Better::Higher);
    let on: Vec<(f64, f64)> = front(&all, bx, by).into_iter().map(|i| all[i]).collect();
    let dir = |b: Better| match b {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    };
    let what = format!(
        "Pareto front: {} vs {}",
        names::column(&a.y).name,
        names::column(&a.x).name
    );
    let title = match &a.title {
        Some(t) => t.clone(),
        None => {
            let fixed = match (wi, &workload) {
                (Some(i), (Some(v), false)) if !keep.filters.iter().any(|f| f.col == i) => {
                    Some((i, v.clone()))
                }
                _ => None,
            };
            let set = keep.setting(h, fixed);
            match set.is_empty() {
                true => what,
                false => format!("{what} ({set})"),
            }
        }
    };
    let c = Chart {
        title,
        x_label: label(&a.x),
        y_label: label(&a.y),
        legend: legend(h, &si),
        series,
        lines: false,
        front: steps(&on),
        front_points: on,
        intervals,
        interval_label,
        y_domain: names::column(&a.y).domain.range(),
        ..Chart::default()
    };
    let c = super::plot_table::with_limits(c, a)?;
    let mut c = super::plot_table::fit_units(c, &a.x, &a.y);
    c.x_label = format!("{}; {}", c.x_label, dir(bx));
    c.y_label = format!("{}; {}", c.y_label, dir(by));
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LH: (Better, Better) = (Better::Lower, Better::Higher);

    #[test]
    fn hand_computed_fronts() {
        // (cycles, top1): (1, 0.5) (2, 0.9) (3, 0.8) (4, 0.95) (2, 0.6) (5, 0.95)
        let pts = [
            (1.0, 0.5),
            (2.0, 0.9),
            (3.0, 0.8),
            (4.0, 0.95),
            (2.0, 0.6),
            (5.0, 0.95),
        ];
        assert_eq!(front(&pts, LH.0, LH.1), [0, 1, 3]);
        // Flipped: higher x and lower y are better.
        assert_eq!(front(&pts, Better::Higher, Better::Lower), [5, 2, 4, 0]);
        // Both lower: (1, 0.5) dominates all.
        assert_eq!(front(&pts, Better::Lower, Better::Lower), [0]);
        // Equal points are both on the front; a point equal in x but worse in y is not.
        let dup = [(1.0, 1.0), (1.0, 1.0), (1.0, 0.5)];
        assert_eq!(front(&dup, LH.0, LH.1), [0, 1]);
        assert!(front(&[], LH.0, LH.1).is_empty());
        assert_eq!(
            steps(&[(1.0, 0.5), (2.0, 0.9), (4.0, 0.95)]),
            [(1.0, 0.5), (2.0, 0.5), (2.0, 0.9), (4.0, 0.9), (4.0, 0.95)]
        );
    }

    fn better() -> impl Strategy<Value = Better> {
        prop_oneof![Just(Better::Lower), Just(Better::Higher)]
    }

    proptest! {
        /// No front point is dominated by any point; every other point is dominated by a
        /// front point. Small integer coordinates make ties common.
        #[test]
        fn front_is_exactly_the_non_dominated_points(
            pts in prop::collection::vec((0i32..8, 0i32..8), 0..40),
            bx in better(),
            by in better(),
        ) {
            let pts: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x as f64, y as f64)).collect();
            let f = front(&pts, bx, by);
            for &i in &f {
                prop_assert!(pts.iter().all(|&q| !dominates(q, pts[i], bx, by)));
            }
            for i in (0..pts.len()).filter(|i| !f.contains(i)) {
                prop_assert!(f.iter().any(|&j| dominates(pts[j], pts[i], bx, by)), "{i}");
            }
        }
    }
}

#[cfg(test)]
mod svg_tests {
    use super::*;
    use std::path::PathBuf;

    /// Three design points, (cycles, top1_mean +- interval): (1, 0.9) dominates the
    /// others, so the front is one point.
    fn table(ci: bool) -> Table {
        let mut header = vec!["workload", "layer", "mode", "cycles", "top1_mean"];
        if ci {
            header.extend(["top1_ci_low", "top1_ci_high"]);
        }
        let rows = [
            ["w", "TOTAL", "dense", "1", "0.9", "0.85", "0.95"],
            ["w", "TOTAL", "sre", "2", "0.8", "0.7", "0.9"],
            ["w", "TOTAL", "ideal", "3", "0.7", "0.6", "0.8"],
        ];
        Table {
            path: PathBuf::from("t.csv"),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: rows
                .iter()
                .map(|r| r[..header.len()].iter().map(|c| c.to_string()).collect())
                .collect(),
        }
    }

    fn args(pareto: bool) -> PlotArgs {
        PlotArgs {
            input: PathBuf::from("t.csv"),
            x: "cycles".into(),
            y: "top1_mean".into(),
            series: "mode".into(),
            filters: Vec::new(),
            out: None,
            title: None,
            log_x: false,
            log_y: false,
            pareto,
            ..super::super::plot::tests::args("cycles", "mode", &[])
        }
    }

    /// The stroke attribute of series k's colour.
    fn stroke(k: usize) -> String {
        let c = chart::color(k);
        format!("stroke=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)
    }

    fn count(svg: &str, what: &str) -> usize {
        svg.matches(what).count()
    }

    /// A ring: an unfilled circle in the reference black.
    const RING: &str = r##"fill="none" stroke="#000000""##;

    #[test]
    fn a_one_point_front_is_ringed_and_every_interval_is_a_whisker() {
        let c = chart(&table(true), &args(true)).unwrap();
        assert_eq!(c.front_points, [(1.0, 0.9)]);
        let bars: Vec<(f64, f64, f64)> = c.intervals.iter().flatten().copied().collect();
        assert_eq!(bars.len(), 3);
        assert!(bars.contains(&(2.0, 0.7, 0.9)));
        let with = chart::svg(&c, false, false).unwrap();
        let without =
            chart::svg(&chart(&table(false), &args(true)).unwrap(), false, false).unwrap();
        // The front point's ring and its legend entry's.
        assert_eq!(count(&with, RING), 2, "{with}");
        // A whisker is three thin polylines in its series' colour: the line and two caps
        // (markers are outlines two pixels wide).
        let series_lines = |svg: &str| {
            svg.lines()
                .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"1\""))
                .filter(|l| (0..3).any(|k| l.contains(&stroke(k))))
                .count()
        };
        assert_eq!(series_lines(&with), 9, "{with}");
        assert_eq!(series_lines(&without), 0, "{without}");
        assert_eq!(count(&without, RING), 2);
        // The y range holds the intervals whole: 0.95 above the top point.
        assert!(c.intervals.iter().flatten().all(|b| b.1 <= b.2));
    }

    #[test]
    fn a_line_plot_draws_a_band_and_a_single_draw_figure_none() {
        let mut a = args(false);
        a.series = String::new();
        let c = super::super::plot::chart(&table(true), &a).unwrap();
        assert_eq!(c.intervals[0].len(), 3);
        let svg = chart::svg(&c, false, false).unwrap();
        assert_eq!(count(&svg, "<polygon"), 1, "{svg}");
        // `top1` beside `top1_mean` is draw 0, not the mean: no interval of it.
        let mut t = table(true);
        t.header.push("top1".into());
        for r in &mut t.rows {
            r.push("0.5".into());
        }
        assert_eq!(
            super::super::plot::interval_columns(&t.header, "top1"),
            None
        );
        assert!(super::super::plot::interval_columns(&t.header, "top1_mean").is_some());
        a.y = "top1".into();
        let c = super::super::plot::chart(&t, &a).unwrap();
        assert!(c.intervals.iter().all(Vec::is_empty));
    }
}
