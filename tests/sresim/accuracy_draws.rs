//! `sresim accuracy --draws K` and a sweep's `draws` (docs/accuracy.md, "Device draws"):
//! one draw is today's run byte for byte, the same seed gives the same bytes on any
//! thread count, the draws of a noisy device differ, an ideal device draws once, and the
//! 95% intervals cover the mean of 20 independent runs.
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests make their fixtures and read outputs with std::fs.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{run_fails, run_ok as ok, s, write};

use std::collections::HashMap;
use std::path::Path;

type Row = HashMap<String, String>;

fn rows(path: &Path) -> Vec<Row> {
    let (h, r) = common::read_csv(path);
    r.into_iter()
        .map(|r| h.iter().cloned().zip(r).collect())
        .collect()
}

fn num(r: &Row, c: &str) -> f64 {
    r[c].parse().unwrap_or_else(|_| panic!("{c}: {:?}", r[c]))
}

/// A small noisy run: fc2 alone through the datapath, 24 digits.
fn run(out: &Path, seed: u32, draws: u32, extra: &[&str]) {
    let draws = draws.to_string();
    let mut args = vec!["--draws", &draws];
    args.extend(extra);
    run_with(out, seed, &args);
}

/// [`run`] with `extra` flags only (no `--draws`).
fn run_with(out: &Path, seed: u32, extra: &[&str]) {
    let seed = format!("device.seed={seed}");
    let mut args = vec![
        "accuracy",
        "--samples",
        "24",
        "--modes",
        "sre",
        "--layers",
        "fc2",
        "--set",
        "device.read_noise=2",
        "--set",
        &seed,
        "-q",
        "-o",
        s(out),
    ];
    args.extend(extra);
    ok(&args);
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

#[test]
fn one_draw_is_the_single_draw_run_byte_for_byte_and_draw_0_is_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    run_with(&a, 3, &[]);
    run(&b, 3, 1, &[]);
    for f in ["accuracy.csv", "summary.json"] {
        assert_eq!(read(&a.join(f)), read(&b.join(f)), "{f}");
    }
    run(&c, 3, 3, &[]);
    // Draw 0's rows, without the draw columns, are the single-draw run's rows.
    let (h1, r1) = common::read_csv(&a.join("accuracy.csv"));
    let (h3, r3) = common::read_csv(&c.join("accuracy.csv"));
    assert_eq!(h3[..h1.len()], h1[..]);
    let draw = common::col(&h3, "draw");
    let zero: Vec<Vec<String>> = r3
        .iter()
        .filter(|r| r[draw] == "0")
        .map(|r| r[..h1.len()].to_vec())
        .collect();
    assert_eq!(zero, r1);
    let j1: serde_json::Value = serde_json::from_slice(&read(&a.join("summary.json"))).unwrap();
    let j3: serde_json::Value = serde_json::from_slice(&read(&c.join("summary.json"))).unwrap();
    assert_eq!(j1["modes"]["sre"]["top1"], j3["modes"]["sre"]["top1"]);
    assert_eq!(j3["draws"], 3);
    assert_eq!(j3["draw_seeds"][0], 3);
}

#[test]
fn the_same_seed_gives_the_same_bytes_on_any_thread_count_and_the_draws_differ() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&a, 5, 4, &["--threads", "1"]);
    run(&b, 5, 4, &["--threads", "2"]);
    for f in ["accuracy.csv", "summary.json"] {
        assert_eq!(read(&a.join(f)), read(&b.join(f)), "{f}");
    }
    let r = rows(&a.join("accuracy.csv"));
    let sre: Vec<&Row> = r
        .iter()
        .filter(|r| r["mode"] == "sre" && r["layer"] == "TOTAL")
        .collect();
    assert_eq!(sre.len(), 5, "4 draws and the summary row");
    let errs: Vec<f64> = sre[..4].iter().map(|r| num(r, "output_rel_rmse")).collect();
    for i in 0..4 {
        assert_eq!(sre[i]["draw"], i.to_string());
        for j in 0..i {
            assert_ne!(errs[i], errs[j], "draws {j} and {i}");
        }
    }
    // The summary row: the mean of the draws, the sample std, the t interval (df 3).
    let all = sre[4];
    assert_eq!(all["draw"], "all");
    let mean = errs.iter().sum::<f64>() / 4.0;
    let std = (errs.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
    assert!((num(all, "output_rel_rmse_mean") - mean).abs() <= 1e-15 * mean);
    assert_eq!(all["output_rel_rmse"], all["output_rel_rmse_mean"]);
    assert!((num(all, "output_rel_rmse_std") - std).abs() <= 1e-12 * std);
    let half = 3.182446305 * std / 2.0;
    assert!((num(all, "output_rel_rmse_ci_low") - (mean - half)).abs() <= 1e-12);
    assert!((num(all, "output_rel_rmse_ci_high") - (mean + half)).abs() <= 1e-12);
    // The quantized network draws nothing: std 0 whatever the device.
    let q = r
        .iter()
        .find(|r| r["mode"] == "quantized" && r["draw"] == "all")
        .unwrap();
    assert_eq!(num(q, "top1_std"), 0.0);
    let j: serde_json::Value = serde_json::from_slice(&read(&a.join("summary.json"))).unwrap();
    assert_eq!(j["draws_identical"], false);
    let v = &j["modes"]["sre"]["draws"]["output_rel_rmse"]["values"];
    assert_eq!(v.as_array().unwrap().len(), 4);
    // (serde_json's reader parses decimals to within an ulp, not always to the same bits.)
    assert!((v[1].as_f64().unwrap() - errs[1]).abs() <= 1e-15 * errs[1]);
}

#[test]
fn an_ideal_device_is_evaluated_once_and_its_draws_are_identical() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    ok(&[
        "accuracy",
        "--samples",
        "4",
        "--modes",
        "sre",
        "--set",
        "device.ir_drop=0.01",
        "--draws",
        "6",
        "-q",
        "-o",
        s(&a),
    ]);
    let j: serde_json::Value = serde_json::from_slice(&read(&a.join("summary.json"))).unwrap();
    assert_eq!(j["draws_identical"], true);
    let r = rows(&a.join("accuracy.csv"));
    let t: Vec<&Row> = r
        .iter()
        .filter(|r| r["mode"] == "sre" && r["layer"] == "TOTAL")
        .collect();
    assert_eq!(t.len(), 7);
    for row in &t[1..6] {
        assert_eq!(row["output_rel_rmse"], t[0]["output_rel_rmse"]);
    }
    assert_eq!(num(t[6], "output_rel_rmse_std"), 0.0);
    assert_eq!(t[6]["output_rel_rmse_ci_low"], t[0]["output_rel_rmse"]);
    assert!(run_fails(&["accuracy", "--draws", "0"]).contains("--draws: 0 is not"));
    assert!(run_fails(&["accuracy", "--draws", "4000000000"]).contains("1..=10000"));
}

/// Twenty independent runs (device.seed 1..=20) of 5 draws each: each run's 95% interval
/// of the output error covers the mean of all 100 draws in at least 17 of the 20. Were
/// the intervals exact, the count of covering runs would be Binomial(20, 0.95) and fall
/// below 17 with probability 1.6%: the false-failure rate of a fresh choice of seeds.
/// These seeds are fixed, so the test is deterministic.
#[test]
fn the_95_percent_interval_covers_the_mean_of_20_runs_in_at_least_17() {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for seed in 1..=20 {
        let o = dir.path().join(format!("s{seed}"));
        run(&o, seed, 5, &[]);
        let r = rows(&o.join("accuracy.csv"));
        let draws: Vec<f64> = r
            .iter()
            .filter(|r| r["mode"] == "sre" && r["layer"] == "TOTAL" && r["draw"] != "all")
            .map(|r| num(r, "output_rel_rmse"))
            .collect();
        assert_eq!(draws.len(), 5);
        let all = r
            .iter()
            .find(|r| r["mode"] == "sre" && r["draw"] == "all")
            .unwrap();
        runs.push((
            draws,
            num(all, "output_rel_rmse_ci_low"),
            num(all, "output_rel_rmse_ci_high"),
        ));
    }
    let grand = runs.iter().flat_map(|r| &r.0).sum::<f64>() / 100.0;
    let covering = runs
        .iter()
        .filter(|(_, lo, hi)| *lo <= grand && grand <= *hi)
        .count();
    eprintln!("{covering} of 20 intervals cover {grand}");
    assert!(covering >= 17, "{covering} of 20 cover {grand}: {runs:?}");
    // Not vacuous: the intervals are narrower than the spread of the draws.
    let widths: Vec<f64> = runs.iter().map(|r| r.2 - r.1).collect();
    assert!(widths.iter().all(|&w| w > 0.0 && w < grand), "{widths:?}");
}

/// A sweep with `draws = 3`: its interval columns are those of `sresim accuracy --draws 3`
/// with the same keys, and its draw-0 figures those without draws.
#[test]
fn sweep_draws_columns_equal_sresim_accuracy() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        r#"
workloads = ["lenet5-mnist"]
modes = ["sre"]
samples = 1
layers = ["fc2"]
accuracy = true
accuracy_samples = 24
draws = 3
[set]
"device.seed" = 9
"device.read_noise" = 2.0
"#,
    );
    let out = dir.path().join("out");
    ok(&["sweep", "--grid", s(&grid), "--out", s(&out), "-q"]);
    let p = rows(&out.join("points.csv"));
    let t = p.iter().find(|r| r["layer"] == "TOTAL").unwrap();
    let acc = dir.path().join("acc");
    run(&acc, 9, 3, &[]);
    let a = rows(&acc.join("accuracy.csv"));
    let all = a
        .iter()
        .find(|r| r["mode"] == "sre" && r["draw"] == "all")
        .unwrap();
    let zero = a
        .iter()
        .find(|r| r["mode"] == "sre" && r["layer"] == "TOTAL" && r["draw"] == "0")
        .unwrap();
    assert_eq!(t["accuracy_draws"], "3");
    for f in ["top1", "agreement", "output_rel_rmse"] {
        assert_eq!(t[f], zero[f], "{f}");
        for suffix in ["mean", "std", "ci_low", "ci_high"] {
            let c = format!("{f}_{suffix}");
            assert_eq!(t[&c], all[&c], "{c}");
        }
    }
    let layer = p.iter().find(|r| r["layer"] == "fc2").unwrap();
    assert_eq!(layer["top1_mean"], "");
    let bad = write(
        dir.path(),
        "bad.toml",
        "workloads = [\"lenet5-mnist\"]\ndraws = 3\n",
    );
    let e = run_fails(&[
        "sweep",
        "--grid",
        s(&bad),
        "--out",
        s(&dir.path().join("x")),
    ]);
    assert!(e.contains("draws: set without accuracy = true"), "{e}");
}
