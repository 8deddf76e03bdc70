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
//!
//! The files, each using only those listed after it: `lib.rs` lays out the canvas
//! ([`svg`]); `axes.rs` the mesh and its ticks; `draw.rs` what is drawn inside the plot
//! area and the legend; `clip.rs` lines and shapes cut to the area; `scale.rs` the
//! values scaled and the axes' ranges; `text.rs` wrapped and cut texts; `palette.rs` and
//! `style.rs` the series' looks, fonts and grid; `data.rs` the [`Chart`]; [`layout`]
//! the check that a drawn SVG reads cleanly; [`ticks`] where ticks go and how wide a
//! text is.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

mod axes;
mod clip;
mod data;
mod draw;
pub mod layout;
mod palette;
mod scale;
pub mod style;
mod text;
pub mod ticks;

use axes::{category_ticks, lin, logc, mesh, Axes, MARGIN, X_LABEL_AREA};
use draw::{draw_data, draw_legend, err, Entry, LEGEND_ROW, LEGEND_TOP};
use scale::{Prepared, TINIEST};
use text::wrap;

pub use data::{Chart, FRONT_LABEL};
pub use draw::marker;
pub use palette::{color, marker_path, series_style, SeriesStyle, MARKERS, PALETTE};
pub use scale::{fit_range, shift10};
pub use text::axis_label;

/// The height of a line of the title, in pixels.
const TITLE_LINE: i32 = 22;
/// The width of the plot side of the canvas (the legend is added to its right) and the
/// least height of the canvas.
const PLOT_WIDTH: i32 = 760;
const MIN_HEIGHT: i32 = 560;

/// The SVG text of `c`.
pub fn svg(c: &Chart, log_x: bool, log_y: bool) -> Result<String> {
    // Every text drawn may come from a data file: control characters escaped
    // (`bounds::text`), so none reaches the SVG, which XML would refuse.
    let c = &c.printable();
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
    if let Some(l) = &c.interval_label {
        entries.push((Entry::Interval, l.clone()));
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

#[cfg(test)]
mod tests;
