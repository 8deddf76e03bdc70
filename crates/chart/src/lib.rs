//! The charts of sresim as SVG, on plotters: the project's palette ([`PALETTE`], with a
//! marker shape and a dash pattern per series, [`SeriesStyle`]), fonts and grid
//! ([`style`]), axis labels with their unit ([`axis_label`]), and the line chart of a
//! [`Chart`] (`sresim plot`): plot area with mesh and axis labels, one line with markers
//! per series, the legend beside the plot (so it never hides a line).
//!
//! What a figure shows by default (docs/sweeps.md, "Plots"):
//! - **Axes fitted to the data**: each axis spans the data, its intervals and its
//!   reference lines with a 5% margin, and nothing else: no forced zero (bars alone rise
//!   from 0, their length being their value); [`Chart::x_limits`] and
//!   [`Chart::y_limits`] override either end.
//! - **Ticks** at the data's own x values when they are few, else at round values, as
//!   many as fit without two labels touching ([`ticks`]); large or tiny linear values are
//!   divided by a power of ten named in the axis label (`x 1e6`), so that no tick label
//!   is long and no arithmetic on the axis can overflow (values from 5e-324 to 1.8e308
//!   draw).
//! - **Series that stay apart**: twelve colours that stay distinct under the common
//!   colour-vision deficiencies, then dash patterns; each series also has its own marker
//!   shape, drawn as an outline, so identical series do not hide each other.
//! - **Intervals within their quantity's domain** ([`Chart::y_domain`]): a 95% interval
//!   of a fraction never leaves [0, 1]; on a logarithmic axis an interval reaching 0 is
//!   drawn to the axis's bottom.
//!
//! Without lines the chart is a scatter (one marker per point), over which a Pareto
//! front can be drawn as a step line in [`style::REFERENCE`], its points ringed; a
//! horizontal reference line (an accuracy budget) can be drawn dashed with its own legend
//! entry ([`Chart::y_lines`]). A series may carry an interval per point (a 95% confidence
//! interval): whiskers on a scatter, a translucent band around a line.
//!
//! Every value drawn passes the finite gate (crate bounds) first. Large series cost
//! O(points): a line keeps, per pixel column, its first, lowest, highest and last point
//! (what the column shows); a scatter keeps one marker per 2x2-pixel cell it covers;
//! every point of a Pareto front is drawn and ringed.
//!
//! It knows no model and writes no file: callers get the SVG text.

use anyhow::{anyhow, bail, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

pub mod layout;
pub mod ticks;

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
    /// Whether a series' points are joined by a line (else markers only: a scatter).
    pub lines: bool,
    /// A Pareto front drawn over the series as a step line (the corners, in order), with
    /// its own legend entry; empty for none.
    pub front: Vec<(f64, f64)>,
    /// The points of the Pareto front, each ringed in [`style::REFERENCE`] (a front of
    /// one point has no line to draw); empty for none.
    pub front_points: Vec<(f64, f64)>,
    /// Per series, in the order of `series`, the intervals (x, low, high) of its points
    /// that have one, sorted by x; empty (or shorter than `series`) for none.
    pub intervals: Vec<Vec<(f64, f64, f64)>>,
    /// With `categories`: the series' bars stacked on one another at each category (the
    /// parts of a whole, such as energy by component) rather than side by side.
    pub stacked: bool,
    /// Horizontal reference lines (y, legend entry), drawn dashed in
    /// [`style::REFERENCE`] across the plot: an accuracy budget, say.
    pub y_lines: Vec<(f64, String)>,
    /// The values the y quantity can take (a fraction: 0 to 1; a count or an error: 0
    /// and up): intervals are cut to it. Unbounded by default.
    pub y_domain: (f64, f64),
    /// The ends of the x axis, where given (else fitted to the data).
    pub x_limits: (Option<f64>, Option<f64>),
    /// The ends of the y axis, where given (else fitted to the data).
    pub y_limits: (Option<f64>, Option<f64>),
}

impl Default for Chart {
    fn default() -> Chart {
        Chart {
            title: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            legend: String::new(),
            categories: None,
            series: Vec::new(),
            lines: true,
            front: Vec::new(),
            front_points: Vec::new(),
            intervals: Vec::new(),
            stacked: false,
            y_lines: Vec::new(),
            y_domain: (f64::NEG_INFINITY, f64::INFINITY),
            x_limits: (None, None),
            y_limits: (None, None),
        }
    }
}

/// Fraction of a category's width its bars take.
const BAR_GROUP: f64 = 0.8;

/// The legend entry of [`Chart::front`].
pub const FRONT_LABEL: &str = "Pareto front";

/// The project's palette, in the order series take it: Petroff's ten-colour accessible
/// sequence (matplotlib's `petroff10` style; M. A. Petroff, "Accessible Color Sequences
/// for Data Visualization", 2021), extended by a violet and a navy chosen so that every
/// two of the twelve, and each of them and the black of [`style::REFERENCE`], differ by
/// at least 17 (CIE L*a*b* distance) in normal vision and under simulated protanopia,
/// deuteranopia and tritanopia (Machado, Oliveira and Fernandes 2009, full severity).
/// The tests check this. Series past the twelfth reuse the colours with dashed lines
/// ([`SeriesStyle`]).
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0x3f, 0x90, 0xda),
    RGBColor(0xff, 0xa9, 0x0e),
    RGBColor(0xbd, 0x1f, 0x01),
    RGBColor(0x94, 0xa4, 0xa2),
    RGBColor(0x83, 0x2d, 0xb6),
    RGBColor(0xa9, 0x6b, 0x59),
    RGBColor(0xe7, 0x63, 0x00),
    RGBColor(0xb9, 0xac, 0x70),
    RGBColor(0x71, 0x75, 0x81),
    RGBColor(0x92, 0xda, 0xdd),
    RGBColor(0x69, 0x00, 0xff),
    RGBColor(0x2d, 0x4b, 0x78),
];

/// The colour of series `k`.
pub fn color(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
}

/// The marker shapes, in the order series take them: a circle, square, triangle,
/// diamond, downward triangle, plus and cross. Their count, 7, shares no factor with the
/// palette's 12, so colour and shape together tell apart the first 84 series, and two
/// series at the same points show both shapes.
pub const MARKERS: usize = 7;

/// How series `k` is drawn: its colour, marker shape (an index below [`MARKERS`]) and
/// dash pattern (pixels on and off; solid for the first twelve series, then dashed,
/// dotted and dash-dotted for each further round of the palette).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesStyle {
    pub color: RGBColor,
    pub marker: usize,
    pub dash: Option<&'static [u32]>,
}

/// The style of series `k`.
pub fn series_style(k: usize) -> SeriesStyle {
    const DASHES: [Option<&[u32]>; 4] = [None, Some(&[9, 5]), Some(&[2, 4]), Some(&[9, 4, 2, 4])];
    SeriesStyle {
        color: color(k),
        marker: k % MARKERS,
        dash: DASHES[(k / PALETTE.len()) % DASHES.len()],
    }
}

/// Fonts and grid of every chart.
pub mod style {
    use plotters::style::RGBColor;

    /// Font family of all text.
    pub const FONT: &str = "sans-serif";
    /// Size of a chart's title.
    pub const TITLE: u32 = 18;
    /// Size of an axis's description.
    pub const AXIS: u32 = 16;
    /// Size of tick labels.
    pub const TICK: u32 = 13;
    /// Size of legend entries.
    pub const LEGEND: u32 = 15;
    /// Grid lines at the ticks, and the light ones between.
    pub const GRID: RGBColor = RGBColor(210, 210, 210);
    pub const GRID_LIGHT: RGBColor = RGBColor(240, 240, 240);
    /// Reference lines that are not a series (a Pareto front, a budget): black, which no
    /// colour of the palette comes near.
    pub const REFERENCE: RGBColor = RGBColor(0, 0, 0);
}

/// An axis description: the quantity and, when it has one, its unit in parentheses.
pub fn axis_label(quantity: &str, unit: &str) -> String {
    if unit.is_empty() {
        quantity.to_string()
    } else {
        format!("{quantity} ({unit})")
    }
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}

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
fn exponent(log10_max: Option<f64>) -> i32 {
    match log10_max {
        Some(l) if l.is_finite() && !(-3.0..4.0).contains(&l) => 3 * (l / 3.0).floor() as i32,
        _ => 0,
    }
}

/// log10 of the largest magnitude of `values` (None when all are 0).
fn log10_max(values: impl Iterator<Item = f64>) -> Option<f64> {
    let m = values.map(f64::abs).fold(0.0, f64::max);
    (m > 0.0).then(|| m.log10())
}

/// The smallest positive double and the largest: the ends a logarithmic axis may reach.
const TINIEST: f64 = 5e-324;

/// A chart ready to draw: every value divided by its axis's power of ten, intervals cut
/// to the domain, bars as rectangles.
struct Prepared {
    series: Vec<(String, Vec<(f64, f64)>)>,
    intervals: Vec<Vec<(f64, f64, f64)>>,
    front: Vec<(f64, f64)>,
    front_points: Vec<(f64, f64)>,
    y_lines: Vec<(f64, String)>,
    /// Per series, its bars (left, right, bottom, top) over a categorical x.
    bars: Vec<Vec<(f64, f64, f64, f64)>>,
    /// Powers of ten the axes are divided by (0 for a logarithmic or categorical one).
    ex: i32,
    ey: i32,
    x: (f64, f64),
    y: (f64, f64),
}

/// Calls `f` with every value of `c` that will be drawn and the axis it sits on (false:
/// x, true: y).
fn each_value(c: &Chart, mut f: impl FnMut(bool, f64) -> Result<()>) -> Result<()> {
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
fn positive_needed(c: &Chart, axis: bool) -> impl Iterator<Item = f64> + '_ {
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
    fn new(c: &Chart, log_x: bool, log_y: bool) -> Result<Prepared> {
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
fn bars_of(c: &Chart, ey: i32) -> Vec<Vec<(f64, f64, f64, f64)>> {
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

/// An axis with labelled ticks exactly at the given values and light grid lines at the
/// minor ones (set once the plot's size in pixels is known).
struct Ticked<R: Ranged<ValueType = f64>> {
    inner: R,
    ticks: Rc<RefCell<ticks::Ticks>>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let t = self.ticks.borrow();
        if hint.weight().allow_light_points() {
            t.minor.clone()
        } else {
            t.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// Space around the plot area, and the heights of the x axis's labels and of a title
/// line, in pixels.
const MARGIN: i32 = 16;
const X_LABEL_AREA: i32 = 52;
const TITLE_LINE: i32 = 22;
/// The width of the plot side of the canvas (the legend is added to its right) and the
/// least height of the canvas.
const PLOT_WIDTH: i32 = 760;
const MIN_HEIGHT: i32 = 560;
/// The legend: its first entry's distance from the top, the height of an entry.
const LEGEND_TOP: i32 = 60;
const LEGEND_ROW: i32 = 24;

/// `text` broken at spaces into lines of at most `width` pixels at font `size` (a word
/// longer than a line is cut).
fn wrap(text: &str, width: f64, size: u32) -> Vec<String> {
    let fits = |s: &str| ticks::text_width(s, size) <= width;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let joined = match line.is_empty() {
            true => word.to_string(),
            false => format!("{line} {word}"),
        };
        if fits(&joined) {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut w = word.to_string();
        while !fits(&w) {
            let keep = ((width / (ticks::CHAR_EM * ticks::rendered(size))) as usize).max(1);
            let rest: String = w.chars().skip(keep).collect();
            lines.push(w.chars().take(keep).collect());
            w = rest;
        }
        line = w;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` cut to at most `width` pixels at font `size`, ending in "..." when cut.
fn fit_text(text: &str, width: f64, size: u32) -> String {
    if ticks::text_width(text, size) <= width {
        return text.to_string();
    }
    let keep = ((width / (ticks::CHAR_EM * ticks::rendered(size))) as usize).saturating_sub(3);
    format!("{}...", text.chars().take(keep).collect::<String>())
}

/// One entry of the legend.
enum Entry {
    Series(usize),
    Front,
    Line(usize),
}

/// The SVG text of `c`.
pub fn svg(c: &Chart, log_x: bool, log_y: bool) -> Result<String> {
    let p = Prepared::new(c, log_x, log_y)?;
    // Labels with the axis's power of ten.
    // The power of ten goes with the unit, before a remark after "; " (a direction).
    let scaled = |label: &str, e: i32| {
        if e == 0 {
            return label.to_string();
        }
        let (head, tail) = match label.split_once("; ") {
            Some((h, t)) => (h, format!("; {t}")),
            None => (label, String::new()),
        };
        match head.strip_suffix(')') {
            Some(i) => format!("{i}, x 1e{e}){tail}"),
            None => format!("{head} (x 1e{e}){tail}"),
        }
    };
    let x_label = scaled(&c.x_label, p.ex);
    let y_label = scaled(&c.y_label, p.ey);

    // The legend's entries and width.
    let mut entries: Vec<(Entry, String)> = c
        .series
        .iter()
        .enumerate()
        .map(|(k, s)| (Entry::Series(k), s.0.clone()))
        .collect();
    if !c.front.is_empty() || !c.front_points.is_empty() {
        entries.push((Entry::Front, FRONT_LABEL.to_string()));
    }
    for (i, l) in c.y_lines.iter().enumerate() {
        entries.push((Entry::Line(i), l.1.clone()));
    }
    const LEGEND_TEXT_X: i32 = 52;
    let widest = entries
        .iter()
        .map(|e| ticks::text_width(&e.1, style::LEGEND))
        .chain([ticks::text_width(&c.legend, style::LEGEND) * 1.1 - 40.0])
        .fold(0.0, f64::max);
    let legend_w = ((widest + LEGEND_TEXT_X as f64 + 16.0).ceil() as i32).clamp(130, 440);
    let entry_room = (legend_w - LEGEND_TEXT_X - 12) as f64;
    let w = PLOT_WIDTH + legend_w;
    let title = wrap(&c.title, (w - 40) as f64, style::TITLE);
    let title_h = 10 + TITLE_LINE * title.len() as i32;
    let legend_h = LEGEND_TOP + LEGEND_ROW * entries.len() as i32 + 20;
    let h = (title_h + legend_h).max(MIN_HEIGHT);

    // The plot area in pixels, and the y ticks (which depend on its height only).
    let top = title_h + MARGIN;
    let bottom = h - MARGIN - X_LABEL_AREA;
    let to_axis = |v: f64, log: bool| if log { v.max(TINIEST).ln() } else { v };
    let pixel = |v: f64, (lo, hi): (f64, f64), log: bool, (p0, p1): (i32, i32)| {
        let (a, b, v) = (to_axis(lo, log), to_axis(hi, log), to_axis(v, log));
        p0 as f64 + (p1 - p0) as f64 * (v - a) / (b - a)
    };
    let y_pos = |v: f64| pixel(v, p.y, log_y, (bottom, top));
    let yt = ticks::choose(p.y, log_y, &[], &y_pos, false, style::TICK);
    let widest_y = yt
        .major
        .iter()
        .map(|&v| ticks::text_width(&ticks::label(v), style::TICK))
        .fold(0.0, f64::max);
    let y_area = ((widest_y + 36.0).ceil() as i32).max(84);
    let left = MARGIN + y_area;
    let right = PLOT_WIDTH - MARGIN;
    let x_pos = |v: f64| pixel(v, p.x, log_x, (left, right));
    let xt = match &c.categories {
        Some(names) => category_ticks(names, x_pos(1.0) - x_pos(0.0)),
        None => {
            let mut distinct: HashSet<u64> = HashSet::new();
            let data: Vec<f64> = p
                .series
                .iter()
                .flat_map(|s| s.1.iter().map(|q| q.0))
                .filter(|v| distinct.len() <= ticks::MAX_DATA_TICKS && distinct.insert(v.to_bits()))
                .collect();
            let data = if distinct.len() <= ticks::MAX_DATA_TICKS {
                data
            } else {
                Vec::new()
            };
            ticks::choose(p.x, log_x, &data, &x_pos, true, style::TICK)
        }
    };

    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w as u32, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let title_style = TextStyle::from((style::FONT, style::TITLE).into_font())
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (i, line) in title.iter().enumerate() {
            root.draw(&Text::new(
                line.clone(),
                (w / 2, 5 + TITLE_LINE * i as i32),
                title_style.clone(),
            ))
            .map_err(err)?;
        }
        let (_, rest) = root.split_vertically(title_h);
        let (plot, legend) = rest.split_horizontally(PLOT_WIDTH);
        let axes = Axes {
            xt: Rc::new(RefCell::new(xt)),
            yt: Rc::new(RefCell::new(yt)),
            x_label: &x_label,
            y_label: &y_label,
            y_area,
            categories: c.categories.clone(),
        };
        let mut body = |map: &dyn Fn(f64, f64) -> (i32, i32), area: (i32, i32, i32, i32)| {
            draw_data(&root, map, area, c, &p)
        };
        match (log_x, log_y) {
            (false, false) => mesh(&plot, lin(p.x), lin(p.y), &axes, &mut body)?,
            (true, false) => mesh(&plot, logc(p.x), lin(p.y), &axes, &mut body)?,
            (false, true) => mesh(&plot, lin(p.x), logc(p.y), &axes, &mut body)?,
            (true, true) => mesh(&plot, logc(p.x), logc(p.y), &axes, &mut body)?,
        }
        draw_legend(&legend, c, &entries, entry_room)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn lin(r: (f64, f64)) -> RangedCoordf64 {
    RangedCoordf64::from(r.0..r.1)
}

fn logc(r: (f64, f64)) -> LogCoord<f64> {
    LogCoord::<f64>::from((r.0..r.1).log_scale())
}

/// The category indices an x axis labels: all of them, or every n-th when their names
/// would not fit side by side, `per` pixels apart.
fn category_ticks(names: &[String], per: f64) -> ticks::Ticks {
    let widest = names
        .iter()
        .map(|n| ticks::text_width(n, style::TICK))
        .fold(0.0, f64::max);
    let gap = ticks::GAP_EM * ticks::rendered(style::TICK);
    let every = ((widest + gap) / per.max(1.0)).ceil().max(1.0) as usize;
    ticks::Ticks {
        major: (0..names.len()).step_by(every).map(|i| i as f64).collect(),
        minor: Vec::new(),
    }
}

/// The axes of a chart: ticks, descriptions, the y labels' width, categories.
struct Axes<'a> {
    xt: Rc<RefCell<ticks::Ticks>>,
    yt: Rc<RefCell<ticks::Ticks>>,
    x_label: &'a str,
    y_label: &'a str,
    y_area: i32,
    categories: Option<Vec<String>>,
}

/// Draws the mesh of the plot area with axes `xr` and `yr`, then calls `body` with the
/// map from values to canvas pixels and the plot area (left, top, right, bottom).
#[allow(clippy::type_complexity)]
fn mesh<X, Y>(
    area: &DrawingArea<SVGBackend, Shift>,
    xr: X,
    yr: Y,
    axes: &Axes,
    body: &mut dyn FnMut(&dyn Fn(f64, f64) -> (i32, i32), (i32, i32, i32, i32)) -> Result<()>,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let xr = Ticked {
        inner: xr,
        ticks: axes.xt.clone(),
    };
    let yr = Ticked {
        inner: yr,
        ticks: axes.yt.clone(),
    };
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(axes.y_area)
        .build_cartesian_2d(xr, yr)
        .map_err(err)?;
    let cats = axes.categories.clone();
    let x_fmt = move |v: &f64| match &cats {
        Some(names) => names
            .get(v.round().max(0.0) as usize)
            .filter(|_| (v - v.round()).abs() < 1e-6)
            .cloned()
            .unwrap_or_default(),
        None => ticks::label(*v),
    };
    let y_fmt = |v: &f64| ticks::label(*v);
    chart
        .configure_mesh()
        .x_desc(axes.x_label)
        .y_desc(axes.y_label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style((style::FONT, style::AXIS))
        .label_style((style::FONT, style::TICK))
        .bold_line_style(style::GRID)
        .light_line_style(style::GRID_LIGHT)
        .draw()
        .map_err(err)?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    let map = |x: f64, y: f64| chart.backend_coord(&(x, y));
    body(&map, (px.start, py.start, px.end, py.end))
}

/// A polyline cut to the rectangle (left, top, right, bottom): the runs of it inside.
fn clip_polyline(pts: &[(i32, i32)], r: (i32, i32, i32, i32)) -> Vec<Vec<(i32, i32)>> {
    let mut runs: Vec<Vec<(i32, i32)>> = Vec::new();
    let mut run: Vec<(i32, i32)> = Vec::new();
    for w in pts.windows(2) {
        match clip_segment(w[0], w[1], r) {
            Some((a, b)) => {
                if run.last() != Some(&a) {
                    if !run.is_empty() {
                        runs.push(std::mem::take(&mut run));
                    }
                    run.push(a);
                }
                run.push(b);
                if b != w[1] {
                    runs.push(std::mem::take(&mut run));
                }
            }
            None => {
                if !run.is_empty() {
                    runs.push(std::mem::take(&mut run));
                }
            }
        }
    }
    if pts.len() == 1 && inside(pts[0], r) {
        run.push(pts[0]);
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

fn inside(p: (i32, i32), r: (i32, i32, i32, i32)) -> bool {
    p.0 >= r.0 && p.0 <= r.2 && p.1 >= r.1 && p.1 <= r.3
}

/// The part of segment a-b inside the rectangle (Liang-Barsky).
fn clip_segment(
    a: (i32, i32),
    b: (i32, i32),
    r: (i32, i32, i32, i32),
) -> Option<((i32, i32), (i32, i32))> {
    let (x0, y0) = (a.0 as f64, a.1 as f64);
    let (dx, dy) = (b.0 as f64 - x0, b.1 as f64 - y0);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, x0 - r.0 as f64),
        (dx, r.2 as f64 - x0),
        (-dy, y0 - r.1 as f64),
        (dy, r.3 as f64 - y0),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
        }
    }
    if t0 > t1 {
        return None;
    }
    let at = |t: f64| ((x0 + t * dx).round() as i32, (y0 + t * dy).round() as i32);
    Some((
        if t0 == 0.0 { a } else { at(t0) },
        if t1 == 1.0 { b } else { at(t1) },
    ))
}

/// A polygon cut to the rectangle (Sutherland-Hodgman).
fn clip_polygon(pts: &[(i32, i32)], r: (i32, i32, i32, i32)) -> Vec<(i32, i32)> {
    let mut poly: Vec<(f64, f64)> = pts.iter().map(|p| (p.0 as f64, p.1 as f64)).collect();
    let edges: [(usize, f64, bool); 4] = [
        (0, r.0 as f64, true),
        (0, r.2 as f64, false),
        (1, r.1 as f64, true),
        (1, r.3 as f64, false),
    ];
    for (axis, bound, keep_above) in edges {
        let get = |p: &(f64, f64)| if axis == 0 { p.0 } else { p.1 };
        let is_in = |p: &(f64, f64)| match keep_above {
            true => get(p) >= bound,
            false => get(p) <= bound,
        };
        let mut next = Vec::with_capacity(poly.len() + 4);
        for i in 0..poly.len() {
            let (a, b) = (poly[i], poly[(i + 1) % poly.len()]);
            let cross = |a: (f64, f64), b: (f64, f64)| {
                let t = (bound - get(&a)) / (get(&b) - get(&a));
                (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1))
            };
            match (is_in(&a), is_in(&b)) {
                (true, true) => next.push(b),
                (true, false) => next.push(cross(a, b)),
                (false, true) => {
                    next.push(cross(a, b));
                    next.push(b);
                }
                (false, false) => {}
            }
        }
        poly = next;
        if poly.is_empty() {
            break;
        }
    }
    poly.iter()
        .map(|p| (p.0.round() as i32, p.1.round() as i32))
        .collect()
}

/// The points of a line that a plot `area` wide in pixels can show: per pixel column its
/// first, lowest, highest and last point, in order (all of them when the line has few).
fn per_column(pts: &[(i32, i32)]) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pts.len() {
        let col = pts[i].0;
        let start = i;
        let (mut lo, mut hi) = (i, i);
        while i < pts.len() && pts[i].0 == col {
            if pts[i].1 < pts[lo].1 {
                lo = i;
            }
            if pts[i].1 > pts[hi].1 {
                hi = i;
            }
            i += 1;
        }
        let mut keep = [start, lo, hi, i - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(pts[k]);
                last = k;
            }
        }
    }
    out
}

/// A polyline drawn with `dash` (pixels on and off, repeating; solid for None).
fn stroke(
    root: &DrawingArea<SVGBackend, Shift>,
    pts: &[(i32, i32)],
    style: ShapeStyle,
    dash: Option<&[u32]>,
) -> Result<()> {
    if pts.len() < 2 {
        return Ok(());
    }
    let Some(dash) = dash.filter(|d| !d.is_empty()) else {
        return root
            .draw(&PathElement::new(pts.to_vec(), style))
            .map_err(err);
    };
    // Walk the line, emitting the "on" stretches of the pattern.
    let mut k = 0;
    let mut left = dash[0] as f64;
    let mut piece: Vec<(f64, f64)> = vec![(pts[0].0 as f64, pts[0].1 as f64)];
    let flush = |piece: &mut Vec<(f64, f64)>, on: bool| -> Result<()> {
        if on && piece.len() >= 2 {
            let p: Vec<(i32, i32)> = piece
                .iter()
                .map(|q| (q.0.round() as i32, q.1.round() as i32))
                .collect();
            root.draw(&PathElement::new(p, style)).map_err(err)?;
        }
        Ok(())
    };
    for w in pts.windows(2) {
        let (a, b) = (
            (w[0].0 as f64, w[0].1 as f64),
            (w[1].0 as f64, w[1].1 as f64),
        );
        let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        let mut t = 0.0;
        while len - t > left {
            t += left;
            let q = (a.0 + (b.0 - a.0) * t / len, a.1 + (b.1 - a.1) * t / len);
            piece.push(q);
            flush(&mut piece, k % 2 == 0)?;
            piece = vec![q];
            k = (k + 1) % dash.len();
            left = dash[k] as f64;
        }
        left -= len - t;
        piece.push(b);
    }
    flush(&mut piece, k % 2 == 0)
}

/// The outline of series `k`'s marker ([`series_style`]) as one polyline around (0, 0),
/// in pixels: a circle of radius 3 (the smallest shape, so that it shows inside the
/// square of the series after it), a square, a triangle, a diamond, a downward triangle,
/// a plus and a cross (the last two retrace their centre).
pub fn marker_path(k: usize) -> Vec<(i32, i32)> {
    match series_style(k).marker {
        0 => (0..=16)
            .map(|i| {
                let a = i as f64 * std::f64::consts::TAU / 16.0;
                (
                    (3.0 * a.cos()).round() as i32,
                    (3.0 * a.sin()).round() as i32,
                )
            })
            .collect(),
        1 => vec![(-5, -5), (5, -5), (5, 5), (-5, 5), (-5, -5)],
        2 => vec![(0, -5), (5, 4), (-5, 4), (0, -5)],
        3 => vec![(0, -5), (5, 0), (0, 5), (-5, 0), (0, -5)],
        4 => vec![(0, 5), (5, -4), (-5, -4), (0, 5)],
        5 => vec![(-5, 0), (5, 0), (0, 0), (0, -5), (0, 5)],
        _ => vec![(-4, -4), (4, 4), (0, 0), (-4, 4), (4, -4)],
    }
}

/// The marker of series `k` at pixel `at` of `root`: its shape drawn as an outline in
/// its colour ([`marker_path`]), so that markers of several series at one point all show
/// (a filled one would hide those under it).
pub fn marker(root: &DrawingArea<SVGBackend, Shift>, k: usize, at: (i32, i32)) -> Result<()> {
    let line = series_style(k).color.stroke_width(2);
    if series_style(k).marker == 0 {
        return root.draw(&Circle::new(at, 3, line)).map_err(err);
    }
    let path: Vec<(i32, i32)> = marker_path(k)
        .iter()
        .map(|d| (at.0 + d.0, at.1 + d.1))
        .collect();
    root.draw(&PathElement::new(path, line)).map_err(err)
}

/// Everything drawn inside the plot area, in canvas pixels: bars, intervals, lines,
/// markers, the front and the reference lines, each cut to the area.
fn draw_data(
    root: &DrawingArea<SVGBackend, Shift>,
    map: &dyn Fn(f64, f64) -> (i32, i32),
    area: (i32, i32, i32, i32),
    c: &Chart,
    p: &Prepared,
) -> Result<()> {
    let (left, top, right, bottom) = area;
    let rect = (left, top, right - 1, bottom - 1);
    let bars = c.categories.is_some();
    for (i, (y, _)) in p.y_lines.iter().enumerate() {
        let (_, py) = map(p.x.0, *y);
        for run in clip_polyline(&[(left, py), (right - 1, py)], rect) {
            let dash: &[u32] = if i % 2 == 0 { &[10, 6] } else { &[3, 4] };
            stroke(root, &run, style::REFERENCE.stroke_width(2), Some(dash))?;
        }
    }
    for (k, (_, pts)) in p.series.iter().enumerate() {
        let s = series_style(k);
        if bars {
            for &(l, r, b, t) in p.bars.get(k).into_iter().flatten() {
                let poly = clip_polygon(&[map(l, b), map(r, b), map(r, t), map(l, t)], rect);
                if poly.len() >= 3 {
                    root.draw(&Polygon::new(poly, s.color.filled()))
                        .map_err(err)?;
                }
            }
        }
        // Over side-by-side bars a point and its whiskers sit at its bar's centre.
        let at = |x: f64| -> f64 {
            match bars && !c.stacked {
                true => {
                    let n = p.series.len().max(1) as f64;
                    x - BAR_GROUP / 2.0 + (k as f64 + 0.5) * BAR_GROUP / n
                }
                false => x,
            }
        };
        let whiskers: Vec<(f64, f64, f64)> = p
            .intervals
            .get(k)
            .map(|b| b.iter().map(|&(x, lo, hi)| (at(x), lo, hi)).collect())
            .unwrap_or_default();
        if c.lines && !bars && whiskers.len() > 1 {
            // A band: per pixel column the highest upper end and the lowest lower end,
            // the upper ends left to right, then the lower ones back.
            let mut cols: Vec<(i32, i32, i32)> = Vec::new();
            for &(x, lo, hi) in &whiskers {
                let (px, py_hi) = map(x, hi);
                let (_, py_lo) = map(x, lo);
                match cols.last_mut() {
                    Some(last) if last.0 == px => {
                        last.1 = last.1.min(py_hi);
                        last.2 = last.2.max(py_lo);
                    }
                    _ => cols.push((px, py_hi, py_lo)),
                }
            }
            let band: Vec<(i32, i32)> = cols
                .iter()
                .map(|c| (c.0, c.1))
                .chain(cols.iter().rev().map(|c| (c.0, c.2)))
                .collect();
            let poly = clip_polygon(&band, rect);
            if poly.len() >= 3 {
                root.draw(&Polygon::new(poly, s.color.mix(0.2).filled()))
                    .map_err(err)?;
            }
        } else {
            // Whiskers: a vertical line from low to high with a cap at each end, once
            // per distinct one in pixels.
            let mut seen: HashSet<(i32, i32, i32)> = HashSet::new();
            for &(x, lo, hi) in &whiskers {
                let (a, b) = (map(x, lo), map(x, hi));
                if !seen.insert((a.0, a.1, b.1)) {
                    continue;
                }
                let Some((a2, b2)) = clip_segment(a, b, rect) else {
                    continue;
                };
                let line = s.color.stroke_width(1);
                root.draw(&PathElement::new(vec![a2, b2], line))
                    .map_err(err)?;
                for (end, clipped) in [(a, a2), (b, b2)] {
                    if end == clipped {
                        let cap = vec![(end.0 - 5, end.1), (end.0 + 5, end.1)];
                        root.draw(&PathElement::new(cap, line)).map_err(err)?;
                    }
                }
            }
        }
        if bars {
            continue;
        }
        let px: Vec<(i32, i32)> = pts.iter().map(|q| map(at(q.0), q.1)).collect();
        if c.lines {
            let thin = per_column(&px);
            for run in clip_polyline(&thin, rect) {
                stroke(root, &run, s.color.stroke_width(2), s.dash)?;
            }
            for q in thin.iter().filter(|q| inside(**q, rect)) {
                marker(root, k, *q)?;
            }
        } else {
            // One marker per 2x2-pixel cell (a marker is 8 pixels wide): a cloud of 10^6
            // points draws as the cells it covers.
            let mut seen: HashSet<(i32, i32)> = HashSet::new();
            for q in px.iter().filter(|q| inside(**q, rect)) {
                if seen.insert((q.0.div_euclid(2), q.1.div_euclid(2))) {
                    marker(root, k, *q)?;
                }
            }
        }
    }
    // The front over the markers (it is what the plot is about), every point ringed.
    if !p.front.is_empty() {
        let pts: Vec<(i32, i32)> = p.front.iter().map(|q| map(q.0, q.1)).collect();
        for run in clip_polyline(&pts, rect) {
            stroke(root, &run, style::REFERENCE.stroke_width(2), None)?;
        }
    }
    // Front points ringed over the markers: every one of them.
    for q in &p.front_points {
        let at = map(q.0, q.1);
        if inside(at, rect) {
            root.draw(&Circle::new(at, 8, style::REFERENCE.stroke_width(2)))
                .map_err(err)?;
        }
    }
    Ok(())
}

/// The legend, beside the plot: the series columns as heading, one entry per series,
/// then the front and the reference lines.
fn draw_legend(
    area: &DrawingArea<SVGBackend, Shift>,
    c: &Chart,
    entries: &[(Entry, String)],
    room: f64,
) -> Result<()> {
    let top = LEGEND_TOP;
    if !c.legend.is_empty() {
        let bold = (style::FONT, style::LEGEND)
            .into_font()
            .style(FontStyle::Bold);
        let heading = fit_text(&c.legend, room + 30.0, style::LEGEND);
        area.draw(&Text::new(heading, (12, top - 26), bold))
            .map_err(err)?;
    }
    let bars = c.categories.is_some();
    for (i, (entry, name)) in entries.iter().enumerate() {
        let y = top + LEGEND_ROW * i as i32;
        match entry {
            Entry::Series(k) => {
                let s = series_style(*k);
                if bars {
                    let swatch = Rectangle::new([(18, y - 7), (38, y + 7)], s.color.filled());
                    area.draw(&swatch).map_err(err)?;
                } else {
                    if c.lines {
                        stroke(area, &[(10, y), (46, y)], s.color.stroke_width(2), s.dash)?;
                    }
                    marker(area, *k, (28, y))?;
                }
            }
            Entry::Front => {
                if !c.front.is_empty() {
                    let line =
                        PathElement::new(vec![(12, y), (44, y)], style::REFERENCE.stroke_width(2));
                    area.draw(&line).map_err(err)?;
                }
                if !c.front_points.is_empty() {
                    let ring = Circle::new((28, y), 8, style::REFERENCE.stroke_width(2));
                    area.draw(&ring).map_err(err)?;
                }
            }
            Entry::Line(j) => {
                let dash: &[u32] = if j % 2 == 0 { &[10, 6] } else { &[3, 4] };
                stroke(
                    area,
                    &[(10, y), (46, y)],
                    style::REFERENCE.stroke_width(2),
                    Some(dash),
                )?;
            }
        }
        area.draw(&Text::new(
            fit_text(name, room, style::LEGEND),
            (52, y - 8),
            (style::FONT, style::LEGEND),
        ))
        .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
