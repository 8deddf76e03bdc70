use super::*;
use crate::clip::*;
use crate::scale::*;
use proptest::prelude::*;

#[test]
fn axis_labels_carry_their_unit() {
    assert_eq!(axis_label("time per step", "ms"), "time per step (ms)");
    assert_eq!(axis_label("speedup", ""), "speedup");
}

/// sRGB (0..255) to CIE L*a*b* (D65).
fn lab(c: [f64; 3]) -> [f64; 3] {
    let lin = |v: f64| {
        let v = v / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let [r, g, b] = c.map(lin);
    let x = 0.4124 * r + 0.3576 * g + 0.1805 * b;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
    let f = |t: f64| {
        if t > (6.0f64 / 29.0).powi(3) {
            t.cbrt()
        } else {
            t / (3.0 * (6.0f64 / 29.0).powi(2)) + 4.0 / 29.0
        }
    };
    let (fx, fy, fz) = (f(x / 0.95047), f(y), f(z / 1.08883));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// The colour `c` as seen with a colour-vision deficiency: Machado, Oliveira and
/// Fernandes (2009), severity 1, applied to linear RGB.
fn simulate(c: [f64; 3], m: &[[f64; 3]; 3]) -> [f64; 3] {
    let lin = |v: f64| {
        let v = v / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let back = |v: f64| {
        let v = v.clamp(0.0, 1.0);
        255.0
            * if v <= 0.0031308 {
                12.92 * v
            } else {
                1.055 * v.powf(1.0 / 2.4) - 0.055
            }
    };
    let l = c.map(lin);
    let row = |r: [f64; 3]| back(r[0] * l[0] + r[1] * l[1] + r[2] * l[2]);
    [row(m[0]), row(m[1]), row(m[2])]
}

const NORMAL: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
const PROTAN: [[f64; 3]; 3] = [
    [0.152286, 1.052583, -0.204868],
    [0.114503, 0.786281, 0.099216],
    [-0.003882, -0.048116, 1.051998],
];
const DEUTAN: [[f64; 3]; 3] = [
    [0.367322, 0.860646, -0.227968],
    [0.280085, 0.672501, 0.047413],
    [-0.011820, 0.042940, 0.968881],
];
const TRITAN: [[f64; 3]; 3] = [
    [1.255528, -0.076749, -0.178779],
    [-0.078411, 0.930809, 0.147602],
    [0.004733, 0.691367, 0.303900],
];

#[test]
fn the_palette_stays_distinct_in_every_common_colour_vision() {
    let rgb = |c: RGBColor| [c.0 as f64, c.1 as f64, c.2 as f64];
    let mut colours: Vec<[f64; 3]> = PALETTE.iter().map(|&c| rgb(c)).collect();
    colours.push(rgb(style::REFERENCE));
    let mut least = f64::INFINITY;
    for (name, m) in [
        ("normal", NORMAL),
        ("protanopia", PROTAN),
        ("deuteranopia", DEUTAN),
        ("tritanopia", TRITAN),
    ] {
        let seen: Vec<[f64; 3]> = colours.iter().map(|&c| lab(simulate(c, &m))).collect();
        for i in 0..seen.len() {
            for j in i + 1..seen.len() {
                let d = (0..3)
                    .map(|k| (seen[i][k] - seen[j][k]).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(d >= 17.0, "{name}: colours {i} and {j} differ by {d:.1}");
                least = least.min(d);
            }
        }
    }
    // And each stands out from the white page (no pale yellow).
    for (i, &c) in colours.iter().enumerate() {
        let [l, _, _] = lab(c);
        assert!(l <= 90.0, "colour {i}: lightness {l:.0}");
    }
    // tab10, the palette before, fails the same test (orange and green under
    // protanopia differ by 4.6).
    let tab10 = [[255.0, 127.0, 14.0], [44.0, 160.0, 44.0]];
    let [a, b] = tab10.map(|c| lab(simulate(c, &PROTAN)));
    let d = (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt();
    assert!(d < 17.0 && least >= 17.0);
}

#[test]
fn series_differ_in_colour_for_twelve_then_in_dashes_and_always_in_marker() {
    let styles: Vec<SeriesStyle> = (0..84).map(series_style).collect();
    for i in 0..12 {
        for j in i + 1..12 {
            assert_ne!(styles[i].color, styles[j].color, "{i} {j}");
        }
    }
    assert!(styles[..12].iter().all(|s| s.dash.is_none()));
    assert!(styles[12].dash.is_some() && styles[12].color == styles[0].color);
    // Colour, marker and dash together tell every two of 84 series apart; two
    // neighbouring series never share a marker.
    for i in 0..84 {
        for j in i + 1..84 {
            assert_ne!(
                (styles[i].color, styles[i].marker, styles[i].dash),
                (styles[j].color, styles[j].marker, styles[j].dash),
                "{i} {j}"
            );
        }
        assert_ne!(styles[i].marker, series_style(i + 1).marker);
    }
}

fn bars(stacked: bool) -> Chart {
    Chart {
        title: "t".into(),
        x_label: "mode".into(),
        y_label: "e (pJ)".into(),
        categories: Some(vec!["dense".into(), "sre".into()]),
        series: vec![
            ("a".into(), vec![(0.0, 3.0), (1.0, 1.0)]),
            ("b".into(), vec![(0.0, 2.0), (1.0, 4.0)]),
        ],
        lines: false,
        stacked,
        ..Chart::default()
    }
}

fn fill(k: usize) -> String {
    let RGBColor(r, g, b) = color(k);
    format!("fill=\"#{r:02X}{g:02X}{b:02X}\"")
}

#[test]
fn categories_are_bars_side_by_side_or_stacked() {
    // Two series share a category's 0.8: each bar 0.4 wide, from 0.
    let side = bars_of(&bars(false), 0);
    assert_eq!(side[0][0], (-0.4, 0.0, 0.0, 3.0));
    assert_eq!(side[1][0], (0.0, 0.4, 0.0, 2.0));
    // Stacked: the second part starts where the first ends, the stack is the sum.
    let stack = bars_of(&bars(true), 0);
    assert_eq!(stack[0][1], (0.6, 1.4, 0.0, 1.0));
    assert_eq!(stack[1][1], (0.6, 1.4, 1.0, 5.0));
    // One filled shape per bar and per legend swatch, in the series' colours; the
    // axis starts at 0 (a bar's length is its value) and holds the tallest stack.
    for (c, top) in [(bars(false), 4.0), (bars(true), 5.0)] {
        let p = Prepared::new(&c, false, false).unwrap();
        assert_eq!(p.y.0, 0.0);
        assert!(p.y.1 >= top && p.y.1 < top * 1.1, "{:?}", p.y);
        let svg = svg(&c, false, false).unwrap();
        for k in 0..2 {
            let n = svg
                .lines()
                .filter(|l| (l.contains("<polygon") || l.contains("<rect")) && l.contains(&fill(k)))
                .count();
            assert_eq!(n, 3, "{k}: {svg}");
        }
        assert!(
            layout::problems(&svg).is_empty(),
            "{:?}",
            layout::problems(&svg)
        );
    }
}

/// A line chart of one series through `pts`.
fn line(pts: &[(f64, f64)]) -> Chart {
    Chart {
        title: "a chart".into(),
        x_label: "x (s)".into(),
        y_label: "y (pJ)".into(),
        legend: "series".into(),
        series: vec![("one".into(), pts.to_vec())],
        ..Chart::default()
    }
}

/// The labels of the axis of `svg` whose tick labels are anchored `anchor` ("end": y).
fn tick_labels(svg: &str, anchor: &str) -> Vec<String> {
    let mut l: Vec<layout::Label> = layout::labels(svg)
        .into_iter()
        .filter(|l| l.anchor == anchor && !l.rotated && l.size < 11.0)
        .collect();
    l.sort_by(|a, b| (a.at.0 - a.at.1).total_cmp(&(b.at.0 - b.at.1)));
    l.into_iter().map(|l| l.text).collect()
}

#[test]
fn axes_fit_the_data_with_no_forced_zero() {
    // A 3.8-point fall from 0.897: the axis spans the data, not 0 to 1.
    let c = line(&[(2.0, 0.897), (9.0, 0.881), (32.0, 0.868), (128.0, 0.859)]);
    let p = Prepared::new(&c, true, false).unwrap();
    assert!(p.y.0 > 0.85 && p.y.1 < 0.91, "{:?}", p.y);
    let svg = svg(&c, true, false).unwrap();
    let y = tick_labels(&svg, "end");
    assert!(!y.contains(&"0".to_string()), "{y:?}");
    // The four x values are the ticks.
    assert_eq!(tick_labels(&svg, "middle"), ["2", "9", "32", "128"]);
    // Limits override the fit, either end.
    let mut lim = c.clone();
    lim.y_limits = (Some(0.0), None);
    let p = Prepared::new(&lim, true, false).unwrap();
    assert_eq!(p.y.0, 0.0);
    assert!(p.y.1 < 0.91);
    lim.x_limits = (Some(1.0), Some(1000.0));
    assert_eq!(Prepared::new(&lim, true, false).unwrap().x, (1.0, 1000.0));
    lim.y_limits = (Some(1.0), Some(0.5));
    let e = svg_err(&lim, true, false);
    assert!(e.contains("--y-min 1 is not below --y-max 0.5"), "{e}");
}

fn svg_err(c: &Chart, log_x: bool, log_y: bool) -> String {
    svg(c, log_x, log_y).unwrap_err().to_string()
}

#[test]
fn intervals_stay_in_their_domain_and_reach_a_log_axis_bottom() {
    // A proportion's interval computed past 1 is cut at 1.
    let mut c = line(&[(1.0, 0.9), (2.0, 0.95)]);
    c.intervals = vec![vec![(1.0, 0.8, 1.0), (2.0, 0.857, 1.043)]];
    c.y_domain = (0.0, 1.0);
    let p = Prepared::new(&c, false, false).unwrap();
    assert_eq!(p.intervals[0][1], (2.0, 0.857, 1.0));
    assert!(p.y.1 <= 1.0 + 0.05 * (1.0 - 0.8) + 1e-12, "{:?}", p.y);
    // An error's interval reaching below 0 on a log axis: drawn, its low end at the
    // bottom; a point at 0 is an error naming the axis.
    let mut e = line(&[(1.0, 0.01), (2.0, 0.02)]);
    e.intervals = vec![vec![(1.0, -0.002, 0.03), (2.0, 0.0, 0.04)]];
    e.y_domain = (0.0, f64::INFINITY);
    let svg = svg(&e, false, true).unwrap();
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
    e.series[0].1[0].1 = 0.0;
    let msg = svg_err(&e, false, true);
    assert!(msg.contains("--log-y: the y axis holds 0"), "{msg}");
}

#[test]
fn non_finite_values_are_refused() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let e = svg_err(&line(&[(1.0, 1.0), (2.0, bad)]), false, false);
        assert!(e.contains("plot: a value of y"), "{e}");
        let e = svg_err(&line(&[(bad, 1.0)]), false, false);
        assert!(e.contains("plot: a value of x"), "{e}");
    }
}

#[test]
fn the_ends_of_the_double_range_draw() {
    let tiny = 5e-324;
    type Case<'a> = (&'a [(f64, f64)], bool, bool);
    let cases: [Case; 6] = [
        (&[(1.0, 1e308), (2.0, 1.7e308)], false, false),
        (&[(1.0, -1.7e308), (2.0, 1.7e308)], false, false),
        (&[(1.0, tiny), (2.0, 2.0 * tiny)], false, false),
        (&[(1.0, tiny), (2.0, 1.7e308)], false, true),
        (&[(tiny, 1.0), (1.7e308, 2.0)], true, false),
        (&[(-1.7e308, 1.0), (1.7e308, 1.0)], false, false),
    ];
    for (pts, log_x, log_y) in cases {
        let text = svg(&line(pts), log_x, log_y).unwrap();
        for bad in ["NaN", "inf", "1einf"] {
            assert!(!text.contains(bad), "{pts:?}: {bad}");
        }
        let problems = layout::problems(&text);
        assert!(problems.is_empty(), "{pts:?}: {problems:?}");
        // The huge and tiny linear values are divided into their label.
        if !log_y && pts[1].1.abs() > 1e300 {
            assert!(text.contains("x 1e30"), "{pts:?}");
        }
    }
    // A stack of two near-maximal parts outgrows the doubles: drawn in its own power.
    let mut b = bars(true);
    b.series[0].1[0].1 = 1.7e308;
    b.series[1].1[0].1 = 1.7e308;
    let text = svg(&b, false, false).unwrap();
    assert!(text.contains("x 1e30") && !text.contains("NaN"));
}

#[test]
fn a_long_line_keeps_what_each_pixel_column_shows() {
    // 200,000 points of a sawtooth: the SVG holds a few thousand, with the extremes.
    let pts: Vec<(f64, f64)> = (0..200_000)
        .map(|i| (i as f64, if i % 2 == 0 { (i % 1000) as f64 } else { -1.0 }))
        .collect();
    let text = svg(&line(&pts), false, false).unwrap();
    assert!(text.len() < 2_000_000, "{} bytes", text.len());
    let small = svg(&line(&pts[..2000]), false, false).unwrap();
    assert!(small.len() < text.len() * 3);
    // The per-column thinning keeps each column's first, lowest, highest and last.
    let thin = per_column(&[(0, 5), (0, 1), (0, 9), (0, 4), (1, 2), (2, 3), (2, 3)]);
    assert_eq!(
        thin,
        [(0, 5), (0, 1), (0, 9), (0, 4), (1, 2), (2, 3), (2, 3)]
    );
    let many: Vec<(i32, i32)> = (0..100).map(|i| (i / 10, i % 7)).collect();
    let thin = per_column(&many);
    assert!(thin.len() <= 40);
    for col in 0..10 {
        let ys: Vec<i32> = many.iter().filter(|p| p.0 == col).map(|p| p.1).collect();
        let kept: Vec<i32> = thin.iter().filter(|p| p.0 == col).map(|p| p.1).collect();
        assert!(kept.contains(ys.iter().min().unwrap()) && kept.contains(ys.iter().max().unwrap()));
        assert_eq!(kept[0], ys[0]);
        assert_eq!(kept[kept.len() - 1], ys[ys.len() - 1]);
    }
}

#[test]
fn a_scatter_draws_one_marker_per_pixel_and_every_front_point() {
    let pts: Vec<(f64, f64)> = (0..100_000)
        .map(|i| ((i % 100) as f64, (i % 37) as f64))
        .collect();
    let front: Vec<(f64, f64)> = (0..40).map(|i| (i as f64, 36.0)).collect();
    let c = Chart {
        series: vec![("s".into(), pts)],
        lines: false,
        front: front.clone(),
        front_points: front,
        ..line(&[])
    };
    let text = svg(&c, false, false).unwrap();
    let markers = text.matches("<circle").count();
    // At most 100 x 37 distinct points, plus 40 rings and the legend's.
    assert!(markers <= 3700 + 40 + 2, "{markers}");
    assert!(markers > 1000, "{markers}: the cloud is drawn");
    let rings = text.matches("fill=\"none\" stroke=\"#000000\"").count();
    assert_eq!(rings, 40 + 1, "every front point ringed, and the legend's");
}

#[test]
fn a_reference_line_is_drawn_and_named_in_the_legend() {
    let mut c = line(&[(1.0, 0.1), (2.0, 0.3)]);
    c.lines = false;
    c.y_lines = vec![(0.01, "budget 0.01".into())];
    let p = Prepared::new(&c, false, false).unwrap();
    assert!(p.y.0 < 0.01, "the range holds the line: {:?}", p.y);
    let text = svg(&c, false, false).unwrap();
    assert!(text.contains("budget 0.01"));
    assert!(
        text.matches("stroke=\"#000000\"").count() > 4,
        "dashes of the line"
    );
}

#[test]
fn long_titles_wrap_and_long_legend_entries_are_cut() {
    let mut c = line(&[(1.0, 1.0), (2.0, 2.0)]);
    c.title = "word ".repeat(60);
    c.series[0].0 = "a very long series name ".repeat(8);
    let text = svg(&c, false, false).unwrap();
    assert!(
        layout::problems(&text).is_empty(),
        "{:?}",
        layout::problems(&text)
    );
    assert_eq!(
        wrap("ab cd ef", ticks::text_width("ab cd", 18), 18),
        ["ab cd", "ef"]
    );
    assert_eq!(
        wrap("abcdef", ticks::text_width("abc", 18), 18),
        ["abc", "def"]
    );
}

#[test]
fn limits_cut_lines_bands_and_markers_at_the_plot_area() {
    let mut c = line(&[(0.0, 0.0), (10.0, 10.0)]);
    c.intervals = vec![vec![(0.0, -1.0, 1.0), (10.0, 9.0, 11.0)]];
    c.x_limits = (Some(2.0), Some(8.0));
    c.y_limits = (Some(2.0), Some(8.0));
    let text = svg(&c, false, false).unwrap();
    assert!(layout::problems(&text).is_empty());
    let r = (0, 0, 10, 10);
    assert_eq!(clip_segment((-5, 5), (15, 5), r), Some(((0, 5), (10, 5))));
    assert_eq!(clip_segment((-5, 20), (15, 20), r), None);
    assert_eq!(
        clip_polyline(&[(-5, 5), (5, 5), (5, 20)], r),
        [vec![(0, 5), (5, 5), (5, 10)]]
    );
    let mut square = clip_polygon(&[(-5, -5), (15, -5), (15, 15), (-5, 15)], r);
    square.sort_unstable();
    assert_eq!(square, [(0, 0), (0, 10), (10, 0), (10, 10)]);
}

#[test]
fn powers_of_ten_shift_without_overflow() {
    assert_eq!(shift10(1.5e6, 6), 1.5);
    assert_eq!(shift10(1234567.0, 6), 1.234567);
    assert_eq!(shift10(5e-324, -324), 5.0);
    assert_eq!(shift10(-2.5e-300, -300), -2.5);
    assert_eq!(shift10(1e308, 306), 100.0);
    assert_eq!(exponent(Some(3.99)), 0);
    assert_eq!(exponent(Some(4.0)), 3);
    assert_eq!(exponent(Some(-3.5)), -6);
    assert_eq!(exponent(Some(-323.3)), -324);
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e3f64..1e3,
        2 => 0.5f64..2.0,
        1 => (-300i32..300, 1.0f64..10.0).prop_map(|(e, m)| m * 10f64.powi(e)),
        1 => Just(1.7e308),
        1 => Just(5e-324),
    ]
}

fn chart_strategy() -> impl Strategy<Value = (Chart, bool, bool)> {
    (
        prop::collection::vec(prop::collection::vec((value(), value()), 1..30), 1..16),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        "[a-z ]{0,120}",
    )
        .prop_map(|(series, lines, log_x, log_y, title)| {
            let pos = |v: f64| if v > 0.0 { v } else { -v + 1.0 };
            let series: Vec<(String, Vec<(f64, f64)>)> = series
                .into_iter()
                .enumerate()
                .map(|(k, mut pts)| {
                    for p in &mut pts {
                        if log_x {
                            p.0 = pos(p.0);
                        }
                        if log_y {
                            p.1 = pos(p.1);
                        }
                    }
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    (format!("series {k}"), pts)
                })
                .collect();
            let c = Chart {
                title,
                x_label: "x quantity (unit)".into(),
                y_label: "y quantity (unit)".into(),
                legend: "series".into(),
                series,
                lines,
                ..Chart::default()
            };
            (c, log_x, log_y)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any finite data draws: no NaN or inf in the SVG, and no two texts overlap or
    /// leave the canvas.
    #[test]
    fn drawn_charts_read_cleanly((c, log_x, log_y) in chart_strategy()) {
        let text = svg(&c, log_x, log_y).unwrap();
        prop_assert!(!text.contains("NaN") && !text.contains("inf"));
        let problems = layout::problems(&text);
        prop_assert!(problems.is_empty(), "{:?}", problems);
    }
}
