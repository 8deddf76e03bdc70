//! What is drawn inside the plot area and the legend, in canvas pixels: dashed lines
//! ([`stroke`]), markers ([`marker`]), bars, intervals (whiskers or bands), lines, the
//! Pareto front and reference lines, each cut to the area ([`draw_data`]); the legend's
//! entries ([`draw_legend`]).

use crate::clip::{clip_polygon, clip_polyline, clip_segment, inside, per_column};
use crate::data::Chart;
use crate::palette::{marker_path, series_style};
use crate::scale::{Prepared, BAR_GROUP};
use crate::style;
use crate::text::fit_text;
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::HashSet;

pub(crate) fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("plot: {e}")
}

/// The legend: its first entry's distance from the top, the height of an entry.
pub(crate) const LEGEND_TOP: i32 = 60;
pub(crate) const LEGEND_ROW: i32 = 24;

/// One entry of the legend.
pub(crate) enum Entry {
    Series(usize),
    Front,
    Line(usize),
    /// What the intervals are ([`Chart::interval_label`]).
    Interval,
}

/// A polyline drawn with `dash` (pixels on and off, repeating; solid for None).
pub(crate) fn stroke(
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
pub(crate) fn draw_data(
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
pub(crate) fn draw_legend(
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
            Entry::Interval => {
                // The intervals are drawn in each series' colour; the swatch is grey.
                let grey = style::REFERENCE.mix(0.2);
                if c.lines && !bars {
                    let band = Rectangle::new([(10, y - 7), (46, y + 7)], grey.filled());
                    area.draw(&band).map_err(err)?;
                } else {
                    let whisker = style::REFERENCE.stroke_width(1);
                    for pts in [
                        [(28, y - 8), (28, y + 8)],
                        [(24, y - 8), (32, y - 8)],
                        [(24, y + 8), (32, y + 8)],
                    ] {
                        area.draw(&PathElement::new(pts.to_vec(), whisker))
                            .map_err(err)?;
                    }
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
