//! The committed plots are what the generator draws today, and read cleanly: no two
//! labels overprint, and no axis labels a value twice. Label boxes are computed from the
//! SVG's own layout (each text's anchor point, alignment and font size, 0.6 em a
//! character: wider than sans-serif digits and most letters).
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{run_ok, s};

use std::path::Path;

/// One text of an SVG: its string, box [x0, y0, x1, y1], font size, and whether it is
/// rotated (an axis description).
#[derive(Debug, Clone)]
struct Label {
    text: String,
    bbox: [f64; 4],
    size: f64,
    anchor: String,
    at: (f64, f64),
    rotated: bool,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    Some(tag[i..].split('"').next()?.to_string())
}

/// The texts of an SVG written by plotters (one `<text ...>` element each).
fn labels(svg: &str) -> Vec<Label> {
    let mut out = Vec::new();
    for part in svg.split("<text").skip(1) {
        let (tag, rest) = part.split_once('>').unwrap();
        let text = rest.split("</text>").next().unwrap().trim().to_string();
        let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
        let (x, y, size) = (
            num("x").unwrap(),
            num("y").unwrap(),
            num("font-size").unwrap(),
        );
        let anchor = attr(tag, "text-anchor").unwrap_or_else(|| "start".into());
        let w = text.chars().count() as f64 * 0.6 * size;
        let (x0, x1) = match anchor.as_str() {
            "middle" => (x - w / 2.0, x + w / 2.0),
            "end" => (x - w, x),
            _ => (x, x + w),
        };
        let (y0, y1) = match attr(tag, "dy").as_deref() {
            Some("0.76em") => (y, y + size),
            Some("0.5ex") => (y - size / 2.0, y + size / 2.0),
            _ => (y - size, y),
        };
        out.push(Label {
            text,
            bbox: [x0, y0, x1, y1],
            size,
            anchor,
            at: (x, y),
            rotated: tag.contains("rotate("),
        });
    }
    out
}

/// The problems of one SVG: overlapping label boxes, a label repeated on one axis.
fn problems(svg: &str) -> Vec<String> {
    let all = labels(svg);
    let flat: Vec<&Label> = all
        .iter()
        .filter(|l| !l.rotated && !l.text.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, a) in flat.iter().enumerate() {
        for b in &flat[i + 1..] {
            let [ax0, ay0, ax1, ay1] = a.bbox;
            let [bx0, by0, bx1, by1] = b.bbox;
            if ax0 < bx1 && bx0 < ax1 && ay0 < by1 && by0 < ay1 {
                out.push(format!("{:?} overlaps {:?}", a.text, b.text));
            }
        }
    }
    // Tick labels of one axis share a font size and a column (y axis: right-aligned at
    // one x) or a row (x axis: centred at one y); in order along the axis, no label
    // follows itself (two panels may each have their own 0).
    let mut axes: Vec<Vec<&Label>> = Vec::new();
    for l in &flat {
        let same = |a: &Label| {
            a.size == l.size
                && a.anchor == l.anchor
                && ((l.anchor == "end" && a.at.0 == l.at.0)
                    || (l.anchor == "middle" && a.at.1 == l.at.1))
        };
        match axes.iter_mut().find(|g| same(g[0])) {
            Some(g) => g.push(l),
            None => axes.push(vec![l]),
        }
    }
    for mut g in axes {
        g.sort_by(|a, b| (a.at.0 + a.at.1).total_cmp(&(b.at.0 + b.at.1)));
        for w in g.windows(2) {
            if w[0].text == w[1].text {
                out.push(format!("{:?} twice on one axis", w[0].text));
            }
        }
    }
    out
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_committed_plot_overprints_a_label_or_labels_a_value_twice() {
    let mut checked = 0;
    for path in common::tracked_files(root(), "docs/plots") {
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        let svg = std::fs::read_to_string(&path).unwrap();
        if !svg.contains("font-family=\"sans-serif\"") {
            continue; // drawn by another tool (scripts/functional-study: matplotlib)
        }
        checked += 1;
        let p = problems(&svg);
        assert!(p.is_empty(), "{}: {p:?}", path.display());
    }
    assert!(checked >= 14, "{checked} plots checked");
}

#[test]
fn the_checker_finds_overprinted_and_repeated_labels() {
    // The Pareto plot as drawn before ticks went to round values: a tick at every cycle
    // count (1.671e6, 1.68e6, 1.681e6 within a few pixels) and a log axis labelling 10
    // twice.
    let tick = |x: f64, y: f64, anchor: &str, t: &str| {
        format!("<text x=\"{x}\" y=\"{y}\" dy=\"0.76em\" text-anchor=\"{anchor}\" font-family=\"sans-serif\" font-size=\"10.48\">\n{t}\n</text>")
    };
    let crowded = [
        tick(176.0, 502.0, "middle", "1.671e6"),
        tick(177.0, 502.0, "middle", "1.68e6"),
    ]
    .concat();
    assert_eq!(problems(&crowded), ["\"1.671e6\" overlaps \"1.68e6\""]);
    let twice = [
        tick(90.0, 205.0, "end", "10"),
        tick(90.0, 100.0, "end", "10"),
    ]
    .concat();
    assert_eq!(problems(&twice), ["\"10\" twice on one axis"]);
    let apart = [
        tick(100.0, 502.0, "middle", "2e6"),
        tick(200.0, 502.0, "middle", "5e6"),
    ]
    .concat();
    assert!(problems(&apart).is_empty());
}

/// The plots of docs/accuracy.md, drawn from the committed study tables by the commands
/// that page shows: the committed SVGs are what `sresim plot` draws today.
#[test]
fn the_committed_accuracy_plots_are_redrawn_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let ou_rows = "--x ou.rows --y output_rel_rmse --series preset,mode --where workload=lenet5-mnist --log-x --log-y";
    let plots = [
        (
            "accuracy-output-error-vs-ou-rows.svg",
            format!("docs/plots/accuracy-study.csv {ou_rows}"),
        ),
        (
            "accuracy-200-output-error-vs-ou-rows.svg",
            format!("docs/plots/accuracy-study-200.csv {ou_rows}"),
        ),
        (
            "accuracy-pareto-milo.svg",
            "docs/plots/accuracy-study.csv --pareto --x cycles --y output_rel_rmse --y-better lower --series mode --where workload=lenet5-mnist --where preset=milo-rram --log-x --log-y".to_string(),
        ),
    ];
    for (name, args) in plots {
        let out = dir.path().join(name);
        let mut a = vec!["plot"];
        a.extend(args.split(' '));
        a.extend_from_slice(&["-o", s(&out)]);
        run_ok(&a);
        let drawn = std::fs::read_to_string(&out).unwrap();
        let committed = std::fs::read_to_string(root().join("docs/plots").join(name)).unwrap();
        assert!(
            drawn == committed,
            "docs/plots/{name} differs from what sresim plot draws"
        );
        assert!(
            problems(&drawn).is_empty(),
            "{name}: {:?}",
            problems(&drawn)
        );
    }
}
