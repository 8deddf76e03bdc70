//! The plot area's axes: linear or logarithmic coordinates with ticks exactly where
//! crate::ticks puts them ([`Ticked`]), category ticks, and the mesh with its
//! descriptions and tick labels ([`mesh`]).

use crate::draw::err;
use crate::style;
use crate::ticks;
use anyhow::Result;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

/// An axis with labelled ticks exactly at the given values and light grid lines at the
/// minor ones (set once the plot's size in pixels is known).
pub(crate) struct Ticked<R: Ranged<ValueType = f64>> {
    pub(crate) inner: R,
    pub(crate) ticks: Rc<RefCell<ticks::Ticks>>,
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

/// Space around the plot area, and the height of the x axis's labels, in pixels.
pub(crate) const MARGIN: i32 = 16;
pub(crate) const X_LABEL_AREA: i32 = 52;

pub(crate) fn lin(r: (f64, f64)) -> RangedCoordf64 {
    RangedCoordf64::from(r.0..r.1)
}

pub(crate) fn logc(r: (f64, f64)) -> LogCoord<f64> {
    LogCoord::<f64>::from((r.0..r.1).log_scale())
}

/// The category indices an x axis labels: all of them, or every n-th when their names
/// would not fit side by side, `per` pixels apart.
pub(crate) fn category_ticks(names: &[String], per: f64) -> ticks::Ticks {
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
pub(crate) struct Axes<'a> {
    pub(crate) xt: Rc<RefCell<ticks::Ticks>>,
    pub(crate) yt: Rc<RefCell<ticks::Ticks>>,
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) y_area: i32,
    pub(crate) categories: Option<Vec<String>>,
}

/// Draws the mesh of the plot area with axes `xr` and `yr`, then calls `body` with the
/// map from values to canvas pixels and the plot area (left, top, right, bottom).
#[allow(clippy::type_complexity)]
pub(crate) fn mesh<X, Y>(
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
