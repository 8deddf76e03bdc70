//! The ADC as a study axis through the binary (docs/functional.md, "ADC range"):
//! `adc_clip_frac` in layers.csv, accuracy.csv and points.csv with a fixed `adc.bits`
//! (and not with auto), `full` with auto's bits exact, `max` calibrated on every sample
//! run clipping nothing, and one-line errors.
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{run_fails, run_ok as ok, s, write};

use std::collections::HashMap;
use std::path::Path;

type Row = HashMap<String, String>;

fn rows(path: &Path) -> (Vec<String>, Vec<Row>) {
    let (h, r) = common::read_csv(path);
    let rows = r
        .into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect();
    (h, rows)
}

fn functional(dir: &Path, name: &str, sets: &[&str]) -> (Vec<String>, Vec<Row>) {
    let out = dir.join(name);
    let mut args = vec![
        "run",
        "-q",
        "--functional",
        "--modes",
        "dense,sre",
        "-o",
        s(&out),
    ];
    for x in sets {
        args.extend(["--set", x]);
    }
    ok(&args);
    rows(&out.join("layers.csv"))
}

fn f(r: &Row, c: &str) -> f64 {
    r[c].parse().unwrap_or_else(|_| panic!("{c}: {:?}", r[c]))
}

#[test]
fn functional_runs_count_clips_with_a_fixed_adc_only() {
    let dir = tempfile::tempdir().unwrap();
    // Auto: the columns of every functional run so far.
    let (h, _) = functional(dir.path(), "auto", &[]);
    assert!(!h.iter().any(|c| c == "adc_clip_frac"));
    // 4 bits of step 1 below auto's 5: sre, packing active rows, clips.
    let (h, r) = functional(dir.path(), "four", &["adc.bits=4"]);
    assert_eq!(h.last().unwrap(), "adc_clip_frac");
    let layers: Vec<&Row> = r.iter().filter(|r| r["layer"] != "TOTAL").collect();
    assert!(layers
        .iter()
        .all(|r| (0.0..=1.0).contains(&f(r, "adc_clip_frac"))));
    assert!(layers
        .iter()
        .any(|r| r["mode"] == "sre" && f(r, "adc_clip_frac") > 0.0));
    assert!(r
        .iter()
        .filter(|r| r["layer"] == "TOTAL")
        .all(|r| r["adc_clip_frac"].is_empty()));
    // full with auto's bits (5 for a 9-row OU): exact, nothing clips.
    let (_, r) = functional(dir.path(), "full", &["adc.bits=5", "adc.range=full"]);
    for l in r.iter().filter(|r| r["layer"] != "TOTAL") {
        assert_eq!(f(l, "func_exact_frac"), 1.0, "{}", l["layer"]);
        assert_eq!(f(l, "adc_clip_frac"), 0.0, "{}", l["layer"]);
    }
    // max, calibrated on the first 16 inputs: the trace's 8 are all of them, so no sum
    // the run reads passes the range; 3 bits then lose levels instead.
    let (_, r) = functional(dir.path(), "max", &["adc.bits=3", "adc.range=max"]);
    for l in r.iter().filter(|r| r["layer"] != "TOTAL") {
        assert_eq!(f(l, "adc_clip_frac"), 0.0, "{} {}", l["layer"], l["mode"]);
        assert!(
            f(l, "func_exact_frac") < 1.0,
            "{} {}",
            l["layer"],
            l["mode"]
        );
    }
    // The energy charges the fixed bits.
    let four = dir.path().join("four");
    let (_, r) = rows(&four.join("layers.csv"));
    assert!(r
        .iter()
        .filter(|r| r["layer"] != "TOTAL")
        .all(|r| r["adc_bits"] == "4"));
}

#[test]
fn accuracy_reports_each_layers_clips_and_a_narrow_range_clips() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, sets: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "accuracy",
            "-q",
            "--samples",
            "4",
            "--modes",
            "sre",
            "-o",
            s(&out),
        ];
        for x in sets {
            args.extend(["--set", x]);
        }
        ok(&args);
        rows(&out.join("accuracy.csv"))
    };
    let (h, _) = run("auto", &[]);
    assert!(!h.iter().any(|c| c == "adc_clip_frac"));
    let (h, r) = run("p50", &["adc.bits=4", "adc.range=percentile:50"]);
    assert_eq!(h[14], "adc_clip_frac");
    let sre: Vec<&Row> = r
        .iter()
        .filter(|r| r["mode"] == "sre" && r["layer"] != "TOTAL")
        .collect();
    assert_eq!(sre.len(), 4);
    assert!(sre.iter().any(|r| f(r, "adc_clip_frac") > 0.0));
    let (_, r) = run("full", &["adc.bits=5", "adc.range=full"]);
    for l in r
        .iter()
        .filter(|r| r["mode"] == "sre" && r["layer"] != "TOTAL")
    {
        assert_eq!(f(l, "adc_clip_frac"), 0.0);
        assert_eq!(f(l, "func_exact_frac"), 1.0);
    }
}

#[test]
fn bad_ranges_are_one_line_errors() {
    for (set, want) in [
        (
            "adc.range=half",
            "adc.range: 'half' is not step, full, max or percentile:P",
        ),
        ("adc.range=percentile:0", "adc.range: 'percentile:0'"),
        ("adc.calibration_samples=0", "adc.calibration_samples: 0"),
    ] {
        let e = run_fails(&["run", "-q", "--functional", "--set", set]);
        assert!(e.contains(want), "{e}");
    }
    let e = run_fails(&["accuracy", "--set", "adc.range=max", "--set", "adc.step=2"]);
    assert!(e.contains("adc.step must stay 1 (it is 2)"), "{e}");
}

/// A sweep over adc.bits with auto among its values: every point has the column (an auto
/// point clips nothing), TOTAL rows the network's fraction.
#[test]
fn sweeps_carry_the_clip_fraction() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        r#"
workloads = ["lenet5-mnist"]
modes = ["sre"]
samples = 2
functional = true
[axes]
"adc.bits" = ["auto", 3]
"#,
    );
    let out = dir.path().join("out");
    ok(&["sweep", "--grid", s(&grid), "--out", s(&out), "-q"]);
    let (h, r) = rows(&out.join("points.csv"));
    assert!(h.iter().any(|c| c == "adc_clip_frac"));
    let total = |bits: &str| {
        r.iter()
            .find(|r| r["adc.bits"] == bits && r["layer"] == "TOTAL")
            .unwrap()
    };
    assert_eq!(f(total("auto"), "adc_clip_frac"), 0.0);
    assert!(f(total("3"), "adc_clip_frac") > 0.0);
}
