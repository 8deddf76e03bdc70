//! The charts of sresim as SVG, on plotters: the project's palette ([`PALETTE`]), fonts
//! and grid ([`style`]), axis labels with their unit ([`axis_label`]), and the line chart
//! of a [`Chart`] (`sresim plot`): plot area with mesh and axis labels, one line with
//! markers per series, the legend beside the plot (so it never hides a line). Large linear
//! y values are scaled into the axis label (`x 1e6`); ticks sit at round values, as many
//! as the axis holds without crowding ([`ticks`]).
//! Without lines the chart is a scatter (one marker per point), over which a Pareto
//! front can be drawn as a step line in [`style::REFERENCE`], its points ringed. A
//! series may carry an interval per point (a 95% confidence interval): whiskers on a
//! scatter, a translucent band around a line.
//! It knows no model and writes no file: callers get the SVG text.

use anyhow::{anyhow, bail, Result};
use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;

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
}

/// Fraction of a category's width its bars take.
const BAR_GROUP: f64 = 0.8;

impl Chart {
    /// The bar of series `k` at category `x` with value `y`: its left and right x, and
    /// its bottom and top y (stacked bars start where the series before end).
    fn bar(&self, k: usize, x: f64, y: f64, floor: f64) -> (f64, f64, f64, f64) {
        if self.stacked {
            let below: f64 = self.series[..k]
                .iter()
                .filter_map(|s| s.1.iter().find(|p| p.0 == x).map(|p| p.1))
                .sum();
            let base = if k == 0 { floor } else { below };
            (x - BAR_GROUP / 2.0, x + BAR_GROUP / 2.0, base, below + y)
        } else {
            let w = BAR_GROUP / self.series.len().max(1) as f64;
            let left = x - BAR_GROUP / 2.0 + k as f64 * w;
            (left, left + w, floor, y)
        }
    }

    /// Whether the series are drawn as bars: a categorical x.
    fn bars(&self) -> bool {
        self.categories.is_some()
    }
}

/// The legend entry of [`Chart::front`].
pub const FRONT_LABEL: &str = "Pareto front";

/// The project's palette (tab10), in the order series take it; in the line chart, series
/// past the tenth change marker shape.
pub const PALETTE: [RGBColor; 10] = [
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

const COLORS: [RGBColor; 10] = PALETTE;

/// The colour of series `k`.
pub fn color(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
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
    /// Reference lines that are not a series (such as a bound).
    pub const REFERENCE: RGBColor = RGBColor(120, 120, 120);
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

/// Pixels of the plot area (the chart less its margins and label areas), across and up.
const PLOT_AREA: (f64, f64) = (640.0, 430.0);

/// The category indices an x axis labels: all of them, or every n-th when their names
/// would not fit side by side.
fn category_ticks(names: &[String]) -> Vec<f64> {
    let widest = names
        .iter()
        .map(|n| ticks::text_width(n, style::TICK))
        .fold(0.0, f64::max);
    let per = PLOT_AREA.0 / names.len().max(1) as f64;
    let every = ((widest + 8.0) / per).ceil().max(1.0) as usize;
    (0..names.len()).step_by(every).map(|i| i as f64).collect()
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
    if c.stacked {
        // A stack reaches the sum of its parts.
        for s in &c.series {
            for p in &s.1 {
                let top: f64 = c
                    .series
                    .iter()
                    .filter_map(|s| s.1.iter().find(|q| q.0 == p.0).map(|q| q.1))
                    .sum();
                y1 = y1.max(top);
            }
        }
    }
    // The intervals widen the y range to hold them whole.
    for &(_, lo, hi) in c.intervals.iter().flatten() {
        (y0, y1) = (y0.min(lo), y1.max(hi));
    }
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
        let root = root
            .titled(&c.title, (style::FONT, style::TITLE))
            .map_err(err)?;
        let (plot, legend) = root.split_horizontally(w - legend_w);
        let xt = match &c.categories {
            Some(names) => ticks::Ticks {
                major: category_ticks(names),
                minor: Vec::new(),
            },
            None => ticks::fit(x0, x1, log_x, PLOT_AREA.0, true, style::TICK),
        };
        let yt = ticks::fit(y0, y1, log_y, PLOT_AREA.1, false, style::TICK);
        let lin = |lo: f64, hi: f64, t: ticks::Ticks| Ticked {
            inner: RangedCoordf64::from(lo..hi),
            ticks: t,
        };
        let log = |lo: f64, hi: f64, t: ticks::Ticks| Ticked {
            inner: LogCoord::<f64>::from((lo..hi).log_scale()),
            ticks: t,
        };
        let yl = y_label.as_str();
        // Bars rise from 0, or from the bottom of a logarithmic axis.
        let floor = if log_y { y0 } else { 0.0 };
        let fit = Fit { scale, floor };
        match (log_x, log_y) {
            (false, false) => draw(&plot, lin(x0, x1, xt), lin(y0, y1, yt), c, yl, fit)?,
            (true, false) => draw(&plot, log(x0, x1, xt), lin(y0, y1, yt), c, yl, fit)?,
            (false, true) => draw(&plot, lin(x0, x1, xt), log(y0, y1, yt), c, yl, fit)?,
            (true, true) => draw(&plot, log(x0, x1, xt), log(y0, y1, yt), c, yl, fit)?,
        }
        draw_legend(&legend, c)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// An axis with labelled ticks exactly at the given values and light grid lines at the
/// minor ones.
struct Ticked<R: Ranged<ValueType = f64>> {
    inner: R,
    ticks: ticks::Ticks,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.ticks.minor.clone()
        } else {
            self.ticks.major.clone()
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

/// How values map to the plot: y divided by `scale`; bars rise from `floor`.
#[derive(Debug, Clone, Copy)]
struct Fit {
    scale: f64,
    floor: f64,
}

/// The plot area: mesh, axis labels, one line with markers per series, or its bars over
/// a categorical x (y divided by the fit's scale).
fn draw<XR, YR>(
    area: &DrawingArea<SVGBackend, Shift>,
    xr: XR,
    yr: YR,
    c: &Chart,
    y_label: &str,
    fit: Fit,
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
        None => ticks::label(*v),
    };
    let y_fmt = |v: &f64| ticks::label(*v);
    chart
        .configure_mesh()
        .x_desc(c.x_label.as_str())
        .y_desc(y_label)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .axis_desc_style((style::FONT, style::AXIS))
        .label_style((style::FONT, style::TICK))
        .bold_line_style(style::GRID)
        .light_line_style(style::GRID_LIGHT)
        .draw()
        .map_err(err)?;
    let scale = fit.scale;
    if !c.front.is_empty() {
        let pts: Vec<(f64, f64)> = c.front.iter().map(|&(px, py)| (px, py / scale)).collect();
        chart
            .draw_series(LineSeries::new(pts, style::REFERENCE.stroke_width(2)))
            .map_err(err)?;
    }
    for (k, (_, pts)) in c.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        if c.bars() {
            for &(x, y) in pts {
                let (l, r, b, t) = c.bar(k, x, y, fit.floor * scale);
                let rect = [(l, b / scale), (r, t / scale)];
                chart
                    .draw_series(std::iter::once(Rectangle::new(rect, color.filled())))
                    .map_err(err)?;
            }
        }
        // Over bars, a point and its whiskers sit at its bar's centre.
        let at = |x: f64| match c.bars() && !c.stacked {
            true => {
                let (l, r, _, _) = c.bar(k, x, 0.0, 0.0);
                (l + r) / 2.0
            }
            false => x,
        };
        let pts: Vec<(f64, f64)> = pts.iter().map(|&(px, py)| (at(px), py / scale)).collect();
        let bars: Vec<(f64, f64, f64)> = c
            .intervals
            .get(k)
            .map(|b| {
                b.iter()
                    .map(|&(x, lo, hi)| (at(x), lo / scale, hi / scale))
                    .collect()
            })
            .unwrap_or_default();
        if c.lines && !c.bars() && bars.len() > 1 {
            // A band: the upper ends left to right, then the lower ends back.
            let band: Vec<(f64, f64)> = bars
                .iter()
                .map(|b| (b.0, b.2))
                .chain(bars.iter().rev().map(|b| (b.0, b.1)))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(band, color.mix(0.2).filled())))
                .map_err(err)?;
        } else {
            // Whiskers: a vertical line from low to high with a cap at each end.
            for &(x, lo, hi) in &bars {
                let cap = || PathElement::new(vec![(-5, 0), (5, 0)], color.stroke_width(1));
                chart
                    .draw_series([
                        EmptyElement::at((x, lo)) + cap(),
                        EmptyElement::at((x, hi)) + cap(),
                    ])
                    .map_err(err)?;
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, lo), (x, hi)],
                        color.stroke_width(1),
                    )))
                    .map_err(err)?;
            }
        }
        if c.bars() {
            continue;
        }
        if c.lines {
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(err)?;
        }
        chart
            .draw_series(pts.into_iter().map(|p| marker(k, p)))
            .map_err(err)?;
    }
    // Front points ringed over the markers.
    chart
        .draw_series(
            c.front_points.iter().map(|&(px, py)| {
                Circle::new((px, py / scale), 8, style::REFERENCE.stroke_width(2))
            }),
        )
        .map_err(err)?;
    Ok(())
}

/// The legend, beside the plot: the series columns as heading, one entry per series.
fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, c: &Chart) -> Result<()> {
    let top = 60;
    if !c.legend.is_empty() {
        let bold = (style::FONT, style::LEGEND)
            .into_font()
            .style(FontStyle::Bold);
        area.draw(&Text::new(c.legend.clone(), (12, top - 26), bold))
            .map_err(err)?;
    }
    for (k, (name, _)) in c.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let y = top + 24 * k as i32;
        if c.bars() {
            let swatch = Rectangle::new([(18, y - 7), (38, y + 7)], color.filled());
            area.draw(&swatch).map_err(err)?;
        } else if c.lines {
            let line = PathElement::new(vec![(12, y), (44, y)], color.stroke_width(2));
            area.draw(&line).map_err(err)?;
        }
        if !c.bars() {
            area.draw(&marker(k, (28, y))).map_err(err)?;
        }
        area.draw(&Text::new(
            name.clone(),
            (52, y - 8),
            (style::FONT, style::LEGEND),
        ))
        .map_err(err)?;
    }
    if !c.front.is_empty() || !c.front_points.is_empty() {
        let y = top + 24 * c.series.len() as i32;
        let line = PathElement::new(vec![(12, y), (44, y)], style::REFERENCE.stroke_width(2));
        area.draw(&line).map_err(err)?;
        if !c.front_points.is_empty() {
            let ring = Circle::new((28, y), 8, style::REFERENCE.stroke_width(2));
            area.draw(&ring).map_err(err)?;
        }
        area.draw(&Text::new(
            FRONT_LABEL,
            (52, y - 8),
            (style::FONT, style::LEGEND),
        ))
        .map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_carry_their_unit() {
        assert_eq!(axis_label("time per step", "ms"), "time per step (ms)");
        assert_eq!(axis_label("speedup", ""), "speedup");
    }

    #[test]
    fn series_past_the_palette_wrap_around() {
        assert_eq!(color(0), PALETTE[0]);
        assert_eq!(color(PALETTE.len() + 1), PALETTE[1]);
        assert_ne!(color(0), color(1));
    }

    fn bars(stacked: bool) -> Chart {
        Chart {
            title: "t".into(),
            x_label: "mode".into(),
            y_label: "e (pJ)".into(),
            legend: String::new(),
            categories: Some(vec!["dense".into(), "sre".into()]),
            series: vec![
                ("a".into(), vec![(0.0, 3.0), (1.0, 1.0)]),
                ("b".into(), vec![(0.0, 2.0), (1.0, 4.0)]),
            ],
            lines: false,
            front: Vec::new(),
            front_points: Vec::new(),
            intervals: Vec::new(),
            stacked,
        }
    }

    #[test]
    fn categories_are_bars_side_by_side_or_stacked() {
        let side = bars(false);
        // Two series share a category's 0.8: each bar 0.4 wide, from 0.
        assert_eq!(side.bar(0, 0.0, 3.0, 0.0), (-0.4, 0.0, 0.0, 3.0));
        assert_eq!(side.bar(1, 0.0, 2.0, 0.0), (0.0, 0.4, 0.0, 2.0));
        // Stacked: the second part starts where the first ends, the stack is the sum.
        let stack = bars(true);
        assert_eq!(stack.bar(0, 1.0, 1.0, 0.0), (0.6, 1.4, 0.0, 1.0));
        assert_eq!(stack.bar(1, 1.0, 4.0, 0.0), (0.6, 1.4, 1.0, 5.0));
        // One filled rectangle per bar and per legend swatch, in the series' colours.
        for c in [side, stack] {
            let svg = svg(&c, false, false).unwrap();
            let fill = |k: usize| {
                let RGBColor(r, g, b) = color(k);
                format!("fill=\"#{r:02X}{g:02X}{b:02X}\"")
            };
            for k in 0..2 {
                let n = svg
                    .lines()
                    .filter(|l| l.contains("<rect") && l.contains(&fill(k)))
                    .count();
                assert_eq!(n, 3, "{k}: {svg}");
            }
        }
    }
}
