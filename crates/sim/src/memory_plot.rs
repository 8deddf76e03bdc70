//! memory_vs_capacity.svg: step time and off-chip traffic against on-chip capacity (log
//! scale), one line per bandwidth. Zero and unbounded capacities have no place on a log axis
//! and are left out (their numbers are in the summary). Each panel's y axis is fitted to
//! its data (and, for the time, the compute-only line), as every chart of sresim is; each
//! bandwidth has its colour and marker shape from crates/chart, so two bandwidths that
//! move the same traffic (the lower panel) both show.

use chart::{axis_label, style};
use memory::report::Curve;
use memory::units::{format_bandwidth, Capacity};
use plotters::prelude::*;

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow::anyhow!("memory_vs_capacity.svg: {e}")
}

/// The SVG text of the plot.
pub fn time_vs_capacity(m: &Curve) -> anyhow::Result<String> {
    let points = &m.points;
    const MIB: f64 = 1024.0 * 1024.0;
    let mut bws: Vec<f64> = points.iter().map(|p| p.bandwidth).collect();
    bws.sort_by(f64::total_cmp);
    bws.dedup();
    // Per bandwidth: (capacity MiB, time ms, traffic GiB) points.
    type Series = (f64, Vec<(f64, f64, f64)>);
    let series: Vec<Series> = bws
        .iter()
        .map(|&bw| {
            let mut v: Vec<(f64, f64, f64)> = points
                .iter()
                .filter(|p| p.bandwidth == bw)
                .filter_map(|p| {
                    let c = p.capacity.filter(|&c| c > 0)?;
                    Some((
                        c as f64 / MIB,
                        p.time_s * 1e3,
                        p.traffic as f64 / (MIB * 1024.0),
                    ))
                })
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            (bw, v)
        })
        .collect();
    let all: Vec<&(f64, f64, f64)> = series.iter().flat_map(|s| &s.1).collect();
    let range = |f: fn(&(f64, f64, f64)) -> f64| {
        let lo = all.iter().map(|p| f(p)).fold(f64::INFINITY, f64::min);
        let hi = all.iter().map(|p| f(p)).fold(0.0, f64::max);
        if lo.is_finite() && hi > lo {
            (lo, hi)
        } else if lo.is_finite() {
            (lo * 0.5, lo * 2.0 + 1e-9)
        } else {
            (1.0, 2.0)
        }
    };
    let (x0, x1) = range(|p| p.0);
    // The x ticks are the sampled capacities, labelled as given (512 KiB, 16 MiB), with no
    // minor lines: a log axis's automatic minor grid crowds into a grey band.
    let mut ticks: Vec<f64> = all.iter().map(|p| p.0).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    // Fitted to the data: no forced zero (the compute-only time belongs to the top panel).
    let times: Vec<f64> = all
        .iter()
        .map(|p| p.1)
        .chain(std::iter::once(m.compute_s * 1e3))
        .collect();
    let traffic: Vec<f64> = all.iter().map(|p| p.2).collect();
    let (t0, t1) = chart::fit_range(&times, false, (None, None));
    let (g0, g1) = chart::fit_range(&traffic, false, (None, None));
    let title = format!(
        "{} {} (batch {}): step time and traffic vs on-chip capacity",
        m.network,
        m.mode.as_str(),
        m.batch
    );
    let mut svg = String::new();
    {
        let canvas = SVGBackend::with_string(&mut svg, (900, 720)).into_drawing_area();
        let root = canvas.clone();
        root.fill(&WHITE).map_err(err)?;
        let root = root
            // Over two panels, the title is a size larger than a one-panel chart's.
            .titled(&title, (style::FONT, style::TITLE + 2))
            .map_err(err)?;
        let (top, bottom) = root.split_vertically(340);
        let panels = [
            (top, axis_label("time per step", "ms"), (t0, t1), 1usize),
            (
                bottom,
                axis_label("off-chip traffic", "GiB"),
                (g0, g1),
                2usize,
            ),
        ];
        for (area, label, (ymin, ymax), idx) in panels {
            let mut chart = ChartBuilder::on(&area)
                // Room on the right for half the last capacity's label.
                .margin_top(12)
                .margin_bottom(12)
                .margin_left(12)
                .margin_right(36)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(
                    (x0..x1).log_scale().with_key_points(ticks.clone()),
                    ymin..ymax,
                )
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("on-chip capacity")
                .y_desc(label)
                .axis_desc_style((style::FONT, style::AXIS))
                .label_style((style::FONT, style::TICK))
                .bold_line_style(style::GRID)
                .light_line_style(style::GRID_LIGHT)
                .y_max_light_lines(1)
                .x_label_formatter(&|v| Capacity::bytes((v * MIB).round() as u64).to_string())
                .draw()
                .map_err(err)?;
            for (k, (bw, pts)) in series.iter().enumerate() {
                let color = chart::color(k);
                let xy: Vec<(f64, f64)> = pts
                    .iter()
                    .map(|p| (p.0, if idx == 1 { p.1 } else { p.2 }))
                    .collect();
                // Markers in canvas pixels (the map's), on the untitled canvas.
                let canvas = &canvas;
                chart
                    .draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
                    .map_err(err)?
                    .label(format_bandwidth(*bw))
                    .legend(move |(x, y)| {
                        // The line and the series' marker (its shape, as the plot draws it).
                        let line = color.stroke_width(2);
                        let mark: Vec<(i32, i32)> = chart::marker_path(k)
                            .iter()
                            .map(|d| (d.0 + 10, d.1))
                            .collect();
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (20, 0)], line)
                            + PathElement::new(mark, line)
                    });
                for p in xy {
                    chart::marker(canvas, k, chart.backend_coord(&p))?;
                }
            }
            if idx == 1 {
                // Compute alone: the time with an unbounded bandwidth.
                let c = m.compute_s * 1e3;
                let grey = style::REFERENCE;
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x0, c), (x1, c)],
                        6,
                        4,
                        grey.stroke_width(1),
                    ))
                    .map_err(err)?
                    .label("compute only")
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey));
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}
