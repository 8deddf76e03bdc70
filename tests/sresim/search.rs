//! `sresim search` through the binary (docs/search.md): the verdict, samples and bounds of
//! an exact design point follow the sequential rule computed by hand; threads change no
//! byte; bad input is one line naming the file and the field.
#![allow(clippy::disallowed_methods)]
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{col, read_csv, run_fails, run_ok, s, write};
use search::rule::{Test, Verdict};

const GRID: &str =
    "accuracy = true\nworkloads = [\"lenet5-mnist\"]\nmodes = [\"dense\", \"sre\"]\n\
accuracy_samples = 100\n[axes]\n\"ou.rows\" = [9, 128]\n[search]\nfirst_samples = 20\n";

#[test]
fn an_exact_design_point_is_within_where_the_rule_says() {
    // The ideal device reads exactly: every paired difference is 0, and the sample at
    // which the within test reaches 1/α is the rule's on a run of zeros.
    let mut t = Test::new(0.05, 0.05);
    let mut at = 0;
    while t.verdict() == Verdict::Undecided {
        t.push(0.0);
        at += 1;
    }
    // Looks of 20, 40, 80, 100: the first that holds `at` samples.
    let looks = [20, 40, 80, 100];
    let samples = *looks.iter().find(|&&n| n >= at).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", GRID);
    let out = dir.path().join("out");
    let table = run_ok(&[
        "search",
        "--grid",
        s(&grid),
        "-o",
        s(&out),
        "--budget",
        "0.05",
    ]);
    assert!(table.contains("lenet5-mnist: 4 within a top-1 drop of 0.05 at 95% confidence, 0 outside, 0 undecided (of 4)"), "{table}");
    let (h, rows) = read_csv(&out.join("points.csv"));
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r[col(&h, "verdict")], "within");
        assert_eq!(r[col(&h, "decided_at")], at.to_string());
        assert_eq!(r[col(&h, "samples")], samples.to_string());
        // A device that draws nothing: one draw.
        assert_eq!(r[col(&h, "draws")], "1");
        assert_eq!(r[col(&h, "drop")], "0");
        assert_eq!(r[col(&h, "top1")], r[col(&h, "top1_quantized")]);
        let lo: f64 = r[col(&h, "drop_ci_low")].parse().unwrap();
        let hi: f64 = r[col(&h, "drop_ci_high")].parse().unwrap();
        assert!(lo < 0.0 && hi > 0.0 && hi < 0.05, "{lo} {hi}");
    }
    // 128-row dense has the fewest cycles, 9-row sre the least energy (docs/accuracy.md).
    let best = |c: &str| {
        rows.iter()
            .filter(|r| r[col(&h, c)] == "true")
            .map(|r| format!("{} {}", r[col(&h, "ou.rows")], r[col(&h, "mode")]))
            .collect::<Vec<_>>()
    };
    assert_eq!(best("fewest_cycles"), ["128 dense"]);
    assert_eq!(best("least_energy"), ["9 sre"]);
    for f in [
        "search.json",
        "pareto-cycles-lenet5-mnist.svg",
        "pareto-energy-lenet5-mnist.svg",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // The plots are what `sresim plot` draws of points.csv with docs/search.md's flags,
    // byte for byte: the budget a dashed line named in the legend.
    for (x, what) in [("cycles", "cycles"), ("energy_pj", "energy")] {
        let redrawn = dir.path().join(format!("{what}.svg"));
        run_ok(&[
            "plot",
            s(&out.join("points.csv")),
            "--pareto",
            "--x",
            x,
            "--y",
            "drop",
            "--y-better",
            "lower",
            "--series",
            "mode,verdict",
            "--log-x",
            "--where",
            "workload=lenet5-mnist",
            "--y-line",
            "0.05=budget 0.05",
            "-o",
            s(&redrawn),
        ]);
        let drawn =
            std::fs::read_to_string(out.join(format!("pareto-{what}-lenet5-mnist.svg"))).unwrap();
        assert!(
            drawn == std::fs::read_to_string(&redrawn).unwrap(),
            "{what}"
        );
        assert!(
            drawn.contains("budget 0.05") && drawn.contains("top-1 drop"),
            "{drawn}"
        );
    }
}

#[test]
fn threads_change_no_byte_of_a_noisy_search() {
    // milo-rram draws a device per sample: the parallel path over samples.
    let grid = "accuracy = true\nworkloads = [\"lenet5-mnist\"]\nmodes = [\"sre\"]\naccuracy_samples = 12\n\
[set]\n\"ou.rows\" = 32\n[axes]\n\"device.preset\" = [\"milo-rram\"]\n[search]\nby = [\"device.preset\"]\nfirst_samples = 4\n";
    let dir = tempfile::tempdir().unwrap();
    let g = write(dir.path(), "g.toml", grid);
    let mut outs = Vec::new();
    for t in ["1", "2"] {
        let out = dir.path().join(format!("t{t}"));
        run_ok(&[
            "search",
            "--grid",
            s(&g),
            "-o",
            s(&out),
            "--threads",
            t,
            "-q",
            "--budget",
            "0.2",
        ]);
        outs.push(out);
    }
    for f in [
        "points.csv",
        "search.json",
        "pareto-cycles-lenet5-mnist-milo-rram.svg",
    ] {
        let a = std::fs::read(outs[0].join(f)).unwrap();
        let b = std::fs::read(outs[1].join(f)).unwrap();
        assert!(a == b, "{f} differs between 1 and 2 threads");
    }
    let (h, rows) = read_csv(&outs[0].join("points.csv"));
    // One draw per sample.
    assert_eq!(rows[0][col(&h, "draws")], rows[0][col(&h, "samples")]);
}

#[test]
fn bad_search_input_is_one_line_naming_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let g = write(dir.path(), "g.toml", GRID);
    let e = run_fails(&["search", "--grid", s(&g), "-o", s(&out), "--budget", "1.5"]);
    assert!(e.starts_with("error: --budget: 1.5 is not"), "{e}");
    let e = run_fails(&[
        "search",
        "--grid",
        s(&g),
        "-o",
        s(&out),
        "--confidence",
        "1",
    ]);
    assert!(e.starts_with("error: --confidence: 1 is not"), "{e}");
    let bad = write(
        dir.path(),
        "by.toml",
        &format!("{GRID}by = [\"ou.cols\"]\n"),
    );
    let e = run_fails(&["search", "--grid", s(&bad), "-o", s(&out)]);
    assert!(
        e.starts_with(&format!(
            "error: {}: search.by: ou.cols is not an axis",
            s(&bad)
        )),
        "{e}"
    );
    let none = write(
        dir.path(),
        "none.toml",
        GRID.split("[search]").next().unwrap(),
    );
    let e = run_fails(&["search", "--grid", s(&none), "-o", s(&out)]);
    assert!(
        e.starts_with(&format!("error: {}: search: absent", s(&none))),
        "{e}"
    );
    let unlabelled = write(
        dir.path(),
        "u.toml",
        &GRID
            .replace("lenet5-mnist", "mobilenetv2-nsfwjs")
            .replace("accuracy_samples = 100\n", ""),
    );
    let e = run_fails(&["search", "--grid", s(&unlabelled), "-o", s(&out)]);
    assert!(
        e.starts_with(&format!(
            "error: {}: workloads: mobilenetv2-nsfwjs: its graph input has no labels",
            s(&unlabelled)
        )),
        "{e}"
    );
    // A sweep refuses a search grid rather than ignoring its [search] table.
    let e = run_fails(&["sweep", "--grid", s(&g), "-o", s(&out)]);
    assert!(
        e.starts_with(&format!(
            "error: {}: search: a grid for `sresim search`",
            s(&g)
        )),
        "{e}"
    );
    assert!(!out.exists(), "nothing is written on bad input");
}
