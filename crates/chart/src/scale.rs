//! What the axes span: every value through the finite gate, divided by its axis's power
//! of ten ([`shift10`]), intervals cut to the quantity's domain, bars as rectangles
//! ([`Prepared`]), and each axis's range fitted to the data with a margin
//! ([`fit_range`]).

use crate::data::Chart;
use anyhow::{anyhow, bail, Result};

/// Fraction of a category's width its bars take.
pub(crate) const BAR_GROUP: f64 = 0.8;

/// `v` divided by 10^`e`, with neither the divisor nor an intermediate overflowing or
/// underflowing before the result does (5e-324 divided by 10^-324 is 5, 1e308 by
/// 10^306 is 100): one exact division up to 10^22, else the decimal exponent of `v`'s
/// shortest text shifted (1.5e308 reads 1.5e2), which rounds once.
pub fn shift10(v: f64, e: i32) -> f64 {
    if e == 0 || v == 0.0 {
        return v;
    }
    if e.abs() <= 22 {
        let p = 10f64.powi(e.abs());
        return if e > 0 { v / p } else { v * p };
    }
    let text = format!("{v:e}");
    match text.split_once('e') {
        Some((m, x)) => match x.parse::<i32>() {
            Ok(x) => format!("{m}e{}", x.saturating_sub(e))
                .parse()
                .unwrap_or(0.0),
            Err(_) => 0.0,
        },
        None => 0.0,
    }
}

/// The power of ten (a multiple of 3) a linear axis is divided by, given log10 of its
/// largest magnitude: 0 while that reads from 0.001 to 9999, else the one that brings it
/// between 1 and 1000.
pub(crate) fn exponent(log10_max: Option<f64>) -> i32 {
    match log10_max {
        Some(l) if l.is_finite() && !(-3.0..4.0).contains(&l) => 3 * (l / 3.0).floor() as i32,
        _ => 0,
    }
}

/// log10 of the largest magnitude of `values` (None when all are 0).
pub(crate) fn log10_max(values: impl Iterator<Item = f64>) -> Option<f64> {
    let m = values.map(f64::abs).fold(0.0, f64::max);
    (m > 0.0).then(|| m.log10())
}

/// The smallest positive double and the largest: the ends a logarithmic axis may reach.
pub(crate) const TINIEST: f64 = 5e-324;

/// A chart ready to draw: every value divided by its axis's power of ten, intervals cut
/// to the domain, bars as rectangles.
pub(crate) struct Prepared {
    pub(crate) series: Vec<(String, Vec<(f64, f64)>)>,
    pub(crate) intervals: Vec<Vec<(f64, f64, f64)>>,
    pub(crate) front: Vec<(f64, f64)>,
    pub(crate) front_points: Vec<(f64, f64)>,
    pub(crate) y_lines: Vec<(f64, String)>,
    /// Per series, its bars (left, right, bottom, top) over a categorical x.
    pub(crate) bars: Vec<Vec<(f64, f64, f64, f64)>>,
    /// Powers of ten the axes are divided by (0 for a logarithmic or categorical one).
    pub(crate) ex: i32,
    pub(crate) ey: i32,
    pub(crate) x: (f64, f64),
    pub(crate) y: (f64, f64),
}

/// Calls `f` with every value of `c` that will be drawn and the axis it sits on (false:
/// x, true: y).
pub(crate) fn each_value(c: &Chart, mut f: impl FnMut(bool, f64) -> Result<()>) -> Result<()> {
    for s in &c.series {
        for p in &s.1 {
            f(false, p.0)?;
            f(true, p.1)?;
        }
    }
    for b in c.intervals.iter().flatten() {
        f(false, b.0)?;
        f(true, b.1)?;
        f(true, b.2)?;
    }
    for p in c.front.iter().chain(&c.front_points) {
        f(false, p.0)?;
        f(true, p.1)?;
    }
    for l in &c.y_lines {
        f(true, l.0)?;
    }
    for (axis, lim) in [(false, c.x_limits), (true, c.y_limits)] {
        for l in lim.0.into_iter().chain(lim.1) {
            f(axis, l)?;
        }
    }
    Ok(())
}

/// The values of `c` that must be positive on a logarithmic axis (false: x, true: y):
/// everything but the ends of intervals, which are cut at the axis's bottom instead.
pub(crate) fn positive_needed(c: &Chart, axis: bool) -> impl Iterator<Item = f64> + '_ {
    let pick = move |p: &(f64, f64)| if axis { p.1 } else { p.0 };
    c.series
        .iter()
        .flat_map(move |s| s.1.iter().map(pick))
        .chain(c.front.iter().chain(&c.front_points).map(pick))
        .chain(c.y_lines.iter().filter(move |_| axis).map(|l| l.0))
        .chain(
            c.intervals
                .iter()
                .flatten()
                .filter(move |_| !axis)
                .map(|b| b.0),
        )
        .chain({
            let l = if axis { c.y_limits } else { c.x_limits };
            l.0.into_iter().chain(l.1)
        })
}

impl Prepared {
    pub(crate) fn new(c: &Chart, log_x: bool, log_y: bool) -> Result<Prepared> {
        // The finite gate: no NaN or infinity reaches a figure.
        each_value(c, |axis, v| {
            bounds::finite::check(
                || format!("plot: a value of {}", ["x", "y"][axis as usize]),
                v,
            )
            .map(|_| ())
            .map_err(|e| anyhow!("{e}"))
        })?;
        let cat = c.categories.is_some();
        if cat && log_x {
            bail!("plot: --log-x: the x axis holds categories, not numbers");
        }
        for (axis, log, name) in [(false, log_x, "x"), (true, log_y, "y")] {
            if let Some(v) = positive_needed(c, axis).find(|v| log && *v <= 0.0) {
                bail!("plot: --log-{name}: the {name} axis holds {v}; a logarithmic axis needs positive values");
            }
        }
        for (name, (lo, hi)) in [("x", c.x_limits), ("y", c.y_limits)] {
            if let (Some(lo), Some(hi)) = (lo, hi) {
                if lo >= hi {
                    bail!("plot: --{name}-min {lo} is not below --{name}-max {hi}");
                }
            }
        }
        let (dlo, dhi) = c.y_domain;
        let intervals: Vec<Vec<(f64, f64, f64)>> = c
            .intervals
            .iter()
            .map(|s| {
                s.iter()
                    .map(|&(x, lo, hi)| {
                        let lo = lo.clamp(dlo, dhi);
                        (x, lo, hi.clamp(lo, dhi))
                    })
                    .collect()
            })
            .collect();
        // Powers of ten: chosen on the values, then (bars) on the stacks they make.
        // The largest magnitude on x.
        let mut x_max = 0.0f64;
        each_value(c, |axis, v| {
            if !axis {
                x_max = x_max.max(v.abs());
            }
            Ok(())
        })?;
        let ex = match log_x || cat {
            true => 0,
            false => exponent(log10_max(std::iter::once(x_max))),
        };
        let mut ey = match log_y {
            true => 0,
            false => exponent(log10_max(
                c.series
                    .iter()
                    .flat_map(|s| s.1.iter().map(|q| q.1))
                    .chain(intervals.iter().flatten().flat_map(|b| [b.1, b.2]))
                    .chain(c.front.iter().chain(&c.front_points).map(|q| q.1))
                    .chain(c.y_lines.iter().map(|l| l.0))
                    .chain(c.y_limits.0.into_iter().chain(c.y_limits.1)),
            )),
        };
        let sx = |v: f64| shift10(v, ex);
        let mut p = Prepared {
            series: Vec::new(),
            intervals: Vec::new(),
            front: Vec::new(),
            front_points: Vec::new(),
            y_lines: Vec::new(),
            bars: Vec::new(),
            ex,
            ey,
            x: (0.0, 1.0),
            y: (0.0, 1.0),
        };
        let mut bars = match cat {
            true => bars_of(c, ey),
            false => Vec::new(),
        };
        if c.stacked && !log_y {
            // A stack may outgrow its parts: divided once more when it does.
            let more = exponent(log10_max(bars.iter().flatten().map(|b| b.3)));
            if more != 0 {
                ey += more;
                bars = bars_of(c, ey);
            }
        }
        let sy = |v: f64| shift10(v, ey);
        p.ey = ey;
        p.series = c
            .series
            .iter()
            .map(|(n, pts)| (n.clone(), pts.iter().map(|q| (sx(q.0), sy(q.1))).collect()))
            .collect();
        p.intervals = intervals
            .iter()
            .map(|s| s.iter().map(|b| (sx(b.0), sy(b.1), sy(b.2))).collect())
            .collect();
        p.front = c.front.iter().map(|q| (sx(q.0), sy(q.1))).collect();
        p.front_points = c.front_points.iter().map(|q| (sx(q.0), sy(q.1))).collect();
        p.y_lines = c.y_lines.iter().map(|(v, l)| (sy(*v), l.clone())).collect();
        p.bars = bars;
        // The ranges: the data, the intervals and the lines, with a margin.
        let xs: Vec<f64> = match &c.categories {
            Some(names) => vec![-0.5, names.len().max(1) as f64 - 0.5],
            None => p
                .series
                .iter()
                .flat_map(|s| s.1.iter().map(|q| q.0))
                .chain(p.intervals.iter().flatten().map(|b| b.0))
                .chain(p.front.iter().map(|q| q.0))
                .collect(),
        };
        let mut ys: Vec<f64> = p
            .series
            .iter()
            .flat_map(|s| s.1.iter().map(|q| q.1))
            .chain(p.intervals.iter().flatten().flat_map(|b| [b.1, b.2]))
            .chain(p.front.iter().map(|q| q.1))
            .chain(p.y_lines.iter().map(|l| l.0))
            .chain(p.bars.iter().flatten().flat_map(|b| [b.2, b.3]))
            .filter(|v| !log_y || *v > 0.0)
            .collect();
        if cat && !log_y {
            // A bar's length is its value: bars rise from 0.
            ys.push(0.0);
        }
        let limits = |l: (Option<f64>, Option<f64>), e: i32| {
            (l.0.map(|v| shift10(v, e)), l.1.map(|v| shift10(v, e)))
        };
        p.x = match &c.categories {
            Some(_) => (xs[0], xs[1]),
            None => fit_range(&xs, log_x, limits(c.x_limits, ex)),
        };
        p.y = fit_range(&ys, log_y, limits(c.y_limits, ey));
        if cat && !log_y && c.y_limits.0.is_none() && ys.iter().all(|v| *v >= 0.0) {
            // Bars of positive values stand on the axis's bottom.
            p.y.0 = 0.0;
        }
        Ok(p)
    }
}

/// The bars of `c` over its categories (y divided by 10^`ey`): side by side, or stacked
/// (a part starts where the parts before it at its category end).
pub(crate) fn bars_of(c: &Chart, ey: i32) -> Vec<Vec<(f64, f64, f64, f64)>> {
    let n = c.series.len().max(1) as f64;
    let mut tops: std::collections::HashMap<u64, f64> = std::collections::HashMap::new();
    c.series
        .iter()
        .enumerate()
        .map(|(k, (_, pts))| {
            pts.iter()
                .map(|&(x, y)| {
                    let y = shift10(y, ey);
                    if c.stacked {
                        let base = tops.entry(x.to_bits()).or_insert(0.0);
                        let b = (x - BAR_GROUP / 2.0, x + BAR_GROUP / 2.0, *base, *base + y);
                        *base += y;
                        b
                    } else {
                        let w = BAR_GROUP / n;
                        let left = x - BAR_GROUP / 2.0 + k as f64 * w;
                        (left, left + w, 0.0, y)
                    }
                })
                .collect()
        })
        .collect()
}

/// An axis range over `values` with a 5% margin on each side (on a logarithmic axis, 5%
/// of its decades), each end replaced by its limit where one is given. Finite for every
/// finite input: a logarithmic end stays between the smallest and the largest double.
pub fn fit_range(values: &[f64], log: bool, limits: (Option<f64>, Option<f64>)) -> (f64, f64) {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
        (true, true) => (lo, hi),
        _ => match log {
            true => (1.0, 10.0),
            false => (0.0, 1.0),
        },
    };
    let (mut a, mut b) = if log {
        let (l0, l1) = (lo.log10(), hi.log10());
        let span = (l1 - l0).max(0.2);
        let mid = (l0 + l1) / 2.0;
        let (l0, l1) = (l0.min(mid - span / 2.0), l1.max(mid + span / 2.0));
        let pad = 0.05 * (l1 - l0);
        let up = |l: f64| 10f64.powf(l).clamp(TINIEST, f64::MAX);
        (up(l0 - pad), up(l1 + pad))
    } else {
        // At most 1e4 in magnitude here (the axis's power of ten is divided out), so no
        // sum below overflows; a range too narrow to tick is widened around its middle.
        let span = match hi > lo {
            true => (hi - lo).max(hi.abs().max(lo.abs()) * 1e-6),
            false if lo == 0.0 => 1.0,
            false => lo.abs() * 0.2,
        };
        let mid = lo / 2.0 + hi / 2.0;
        let (lo, hi) = (lo.min(mid - span / 2.0), hi.max(mid + span / 2.0));
        let pad = 0.05 * (hi - lo);
        (lo - pad, hi + pad)
    };
    if let Some(l) = limits.0 {
        a = l;
    }
    if let Some(l) = limits.1 {
        b = l;
    }
    if b <= a {
        // One limit given beyond the data's other end: a tenth of the limit's size.
        let w = if log {
            10.0
        } else {
            a.abs().max(b.abs()).max(1.0) * 0.1
        };
        match limits {
            (Some(_), None) => b = if log { a * w } else { a + w },
            _ => a = if log { b / w } else { b - w },
        }
    }
    (a, b)
}
