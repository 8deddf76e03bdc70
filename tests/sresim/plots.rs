//! The committed plots are what the generator draws today, and read cleanly: no two
//! texts overprint or leave the canvas, and no axis labels a value twice
//! (`chart::layout`: each text's box from its anchor point, alignment, rotation and font
//! size, 0.65 em a character: wider than sans-serif digits and most letters).
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{run_fails, run_ok, s, write};

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_committed_plot_overprints_a_label_or_labels_a_value_twice() {
    let mut checked = 0;
    for path in common::tracked_files(root(), "docs") {
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        let svg = std::fs::read_to_string(&path).unwrap();
        if !svg.contains("font-family=\"sans-serif\"") {
            continue; // drawn by another tool (scripts/functional-study: matplotlib)
        }
        checked += 1;
        let p = chart::layout::problems(&svg);
        assert!(p.is_empty(), "{}: {p:?}", path.display());
    }
    // docs/plots (17 of sresim's), docs/studies/plots (9) and the 5 search plots.
    assert!(checked >= 31, "{checked} plots checked");
}

#[test]
fn the_checker_finds_overprinted_and_repeated_labels() {
    // The Pareto plot as drawn before ticks went to round values: a tick at every
    // energy (1.628e5, 2.157e5 within a few pixels), as the committed grid plot had.
    let tick = |x: f64, t: &str| {
        format!("<text x=\"{x}\" y=\"502\" dy=\"0.76em\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"10.48\">\n{t}\n</text>")
    };
    let smear = [
        "<svg width=\"900\" height=\"560\">".to_string(),
        tick(120.0, "1.628e5"),
        tick(152.0, "2.157e5"),
    ]
    .concat();
    assert_eq!(
        chart::layout::problems(&smear),
        ["\"1.628e5\" overlaps \"2.157e5\""]
    );
}

/// The plots drawn by `sresim plot` from tables committed beside them, with the commands
/// the docs show: the committed SVGs are what it draws today, byte for byte.
fn redrawn() -> Vec<(&'static str, String)> {
    let ou_rows = "--x ou.rows --y output_rel_rmse --series preset,mode --where workload=lenet5-mnist --log-x --log-y";
    let grid = "docs/studies/data/ou-size-grid.csv";
    let mut plots = vec![
        (
            "docs/plots/accuracy-output-error-vs-ou-rows.svg",
            format!("docs/plots/accuracy-study.csv {ou_rows}"),
        ),
        (
            "docs/plots/accuracy-200-output-error-vs-ou-rows.svg",
            format!("docs/plots/accuracy-study-200.csv {ou_rows}"),
        ),
        (
            "docs/plots/accuracy-pareto-milo.svg",
            "docs/plots/accuracy-study.csv --pareto --x cycles --y output_rel_rmse --y-better lower --series mode --where workload=lenet5-mnist --where preset=milo-rram --log-x --log-y".to_string(),
        ),
        (
            "docs/studies/plots/ou-size-slice-top1.svg",
            "docs/studies/data/ou-size-slice.csv --x ou.rows --y top1_mean --log-x --title @fmnist-cnn,_fc1_on_milo-rram,_4-bit_ADC_(adc.range_=_max):_top-1_over_5_draws,_2,000_images".to_string(),
        ),
        (
            "docs/studies/plots/ou-size-grid-error-milo-rram-sre.svg",
            format!("{grid} --x ou.rows --y output_rel_rmse_mean --series adc.bits --log-x --log-y --where device.preset=milo-rram --where mode=sre --title @fmnist-cnn,_fc1_on_milo-rram,_sre:_output_error_over_5_draws,_40_images"),
        ),
        (
            "docs/studies/plots/ou-size-grid-pareto-milo-rram.svg",
            format!("{grid} --pareto --x energy_pj --y top1_mean --series mode,adc.bits --log-x --where device.preset=milo-rram --title @fmnist-cnn,_fc1_on_milo-rram:_fc1's_energy_against_top-1,_40_images"),
        ),
    ];
    for (csv, preset, bits, svg) in [
        (
            "search-lenet5-mnist.csv",
            "dlrsim-rram",
            "4",
            "docs/studies/data/search-lenet5-mnist-dlrsim-rram-4-energy.svg",
        ),
        (
            "search-fmnist-cnn-milo.csv",
            "milo-rram",
            "4",
            "docs/studies/data/search-fmnist-cnn-milo-rram-4-energy.svg",
        ),
    ] {
        let w = if csv.contains("lenet5") {
            "lenet5-mnist"
        } else {
            "fmnist-cnn"
        };
        plots.push((svg, format!("docs/studies/data/{csv} --pareto --x energy_pj --y drop --y-better lower --series mode,verdict --log-x --where workload={w} --where device.preset={preset} --where adc.bits={bits} --y-line 0.01=budget_0.01")));
    }
    plots
}

#[test]
fn the_committed_plots_of_committed_tables_are_redrawn_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (committed, args) in redrawn() {
        let out = dir.path().join("p.svg");
        // Arguments are split at spaces; `_` inside a title or label stands for a space.
        let words: Vec<String> = args
            .split(' ')
            .map(|w| match w.strip_prefix('@') {
                Some(t) => t.replace('_', " "),
                None if w.starts_with("0.01=") => w.replace('_', " "),
                None => w.to_string(),
            })
            .collect();
        let mut a: Vec<&str> = vec!["plot"];
        a.extend(words.iter().map(String::as_str));
        a.extend_from_slice(&["-o", s(&out)]);
        run_ok(&a);
        let drawn = std::fs::read_to_string(&out).unwrap();
        let kept = std::fs::read_to_string(root().join(committed)).unwrap();
        assert!(
            drawn == kept,
            "{committed} differs from what sresim plot draws"
        );
        let p = chart::layout::problems(&drawn);
        assert!(p.is_empty(), "{committed}: {p:?}");
    }
}

/// The tick labels of the y axis of `svg` (right-aligned texts of the tick font).
fn y_ticks(svg: &str) -> Vec<f64> {
    chart::layout::labels(svg)
        .into_iter()
        .filter(|l| l.anchor == "end" && !l.rotated && l.size < 11.0)
        .filter_map(|l| l.text.parse::<f64>().ok())
        .collect()
}

#[test]
fn the_ou_size_slice_shows_its_fall_with_no_forced_zero() {
    // top-1 from 0.897 to 0.859 and its intervals: the axis holds them, not 0 to 0.9.
    let svg =
        std::fs::read_to_string(root().join("docs/studies/plots/ou-size-slice-top1.svg")).unwrap();
    let ticks = y_ticks(&svg);
    assert!(ticks.len() >= 3, "{ticks:?}");
    assert!(ticks.iter().all(|&t| t > 0.8 && t < 0.95), "{ticks:?}");
    // Its x ticks are the OU heights of the study.
    let x: Vec<String> = chart::layout::labels(&svg)
        .into_iter()
        .filter(|l| l.anchor == "middle" && l.size < 11.0)
        .map(|l| l.text)
        .collect();
    assert_eq!(x, ["2", "9", "32", "128"]);
    // Labels name the quantities, not the columns.
    assert!(
        svg.contains("top-1 accuracy, mean over draws (fraction)") && !svg.contains("top1_mean")
    );
}

#[test]
fn finite_extremes_draw_and_non_finite_cells_are_refused() {
    // The values that drew `NaN`, `-inf` and `x 1einf` labels through the axis arithmetic.
    let dir = tempfile::tempdir().unwrap();
    let table = "workload,layer,mode,ou.rows,cycles\nw,TOTAL,sre,1,1e308\nw,TOTAL,sre,2,5e-324\n\
w,TOTAL,sre,4,1.7976931348623157e308\nw,TOTAL,dense,1,-1.7976931348623157e308\nw,TOTAL,dense,2,1\n";
    let csv = write(dir.path(), "points.csv", table);
    let out = dir.path().join("p.svg");
    for extra in [
        &[][..],
        &["--where", "mode=sre", "--log-y"][..],
        &["--pareto"][..],
    ] {
        let mut a = vec![
            "plot",
            s(&csv),
            "--x",
            "ou.rows",
            "--y",
            "cycles",
            "-o",
            s(&out),
        ];
        a.extend_from_slice(extra);
        run_ok(&a);
        let svg = std::fs::read_to_string(&out).unwrap();
        for bad in ["NaN", "inf", "1einf"] {
            assert!(!svg.contains(bad), "{extra:?}: {bad}");
        }
        let p = chart::layout::problems(&svg);
        assert!(p.is_empty(), "{extra:?}: {p:?}");
    }
    // A NaN or an infinity in a cell is one line naming the file, line and column.
    for (bad, line) in [("NaN", 3), ("-inf", 4)] {
        let text = table.replacen(
            if line == 3 {
                "5e-324"
            } else {
                "1.7976931348623157e308"
            },
            bad,
            1,
        );
        let csv = write(dir.path(), "bad.csv", &text);
        let e = run_fails(&[
            "plot",
            s(&csv),
            "--x",
            "ou.rows",
            "--y",
            "cycles",
            "-o",
            s(&out),
        ]);
        assert!(
            e.contains(&format!(
                "bad.csv: line {line}: --y: column cycles holds '{bad}', not a finite number"
            )),
            "{e}"
        );
    }
}

#[test]
fn interval_chooses_the_drawn_interval_and_names_it_and_the_default_names_none() {
    let dir = tempfile::tempdir().unwrap();
    let table = "workload,layer,mode,ou.rows,top1_mean,top1_ci_low,top1_ci_high,top1_samples_ci_low,top1_samples_ci_high\n\
w,TOTAL,dense,8,0.9,0.88,0.92,0.85,0.94\nw,TOTAL,dense,16,0.8,0.79,0.81,0.76,0.84\n";
    let csv = write(dir.path(), "points.csv", table);
    let draw = |extra: &[&str]| {
        let out = dir.path().join("p.svg");
        let mut a = vec![
            "plot",
            s(&csv),
            "--x",
            "ou.rows",
            "--y",
            "top1_mean",
            "-o",
            s(&out),
        ];
        a.extend_from_slice(extra);
        run_ok(&a);
        std::fs::read_to_string(&out).unwrap()
    };
    let plain = draw(&[]);
    let draws = draw(&["--interval", "draws"]);
    let samples = draw(&["--interval", "samples"]);
    assert!(!plain.contains("95% interval"));
    assert!(draws.contains("95% interval over device draws"));
    assert!(samples.contains("95% interval over samples and draws"));
    // The band drawn is the chosen one: the wider interval over samples reaches further
    // from the line, so its polygon differs from the draws' (which is the default's).
    let band = |svg: &str| {
        svg.lines()
            .find(|l| l.contains("<polygon"))
            .map(str::to_string)
            .unwrap()
    };
    assert_ne!(band(&samples), band(&draws));
    for svg in [&plain, &draws, &samples] {
        let p = chart::layout::problems(svg);
        assert!(p.is_empty(), "{p:?}");
    }
    // A table without the chosen columns: one line naming them, nothing written.
    let out = dir.path().join("never.svg");
    let lacking = write(
        dir.path(),
        "lacking.csv",
        &table
            .replace("top1_samples_ci_low", "x")
            .replace("top1_samples_ci_high", "y"),
    );
    let e = run_fails(&[
        "plot",
        s(&lacking),
        "--x",
        "ou.rows",
        "--y",
        "top1_mean",
        "--interval",
        "samples",
        "-o",
        s(&out),
    ]);
    assert!(
        e.contains("lacking.csv: --interval samples: no columns top1_samples_ci_low and top1_samples_ci_high for --y top1_mean"),
        "{e}"
    );
    assert!(!out.exists());
}
