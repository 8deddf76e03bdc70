//! `device.sampler` through the binary (docs/functional.md, "Samplers"): lenet5-mnist's
//! top-1 under the skip and the per-read sampler agrees within the Monte Carlo interval,
//! and a sampler that does not exist is one line naming the key.
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{fails, run_ok as ok, sresim};

/// (top-1, agreement with the quantized network, relative RMS error of the outputs) of
/// the dense mode of lenet5-mnist over `samples` digits with read noise 0.2 and 9-row
/// OUs, drawn by `sampler`.
fn dense_top1(sampler: &str, samples: usize) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let n = samples.to_string();
    let set = format!("device.sampler={sampler}");
    ok(&[
        "accuracy",
        "--workload",
        "lenet5-mnist",
        "--samples",
        &n,
        "--modes",
        "dense",
        "--set",
        "device.read_noise=0.2",
        "--set",
        "ou.rows=9",
        "--set",
        &set,
        "--out",
        dir.path().to_str().unwrap(),
        "-q",
    ]);
    let mut r = csv::Reader::from_path(dir.path().join("accuracy.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (layer, mode, top1, agree, rmse) = (
        col("layer"),
        col("mode"),
        col("top1"),
        col("agreement_quantized"),
        col("output_rel_rmse"),
    );
    for rec in r.records() {
        let rec = rec.unwrap();
        if &rec[layer] == "TOTAL" && &rec[mode] == "dense" {
            return (
                rec[top1].parse().unwrap(),
                rec[agree].parse().unwrap(),
                rec[rmse].parse().unwrap(),
            );
        }
    }
    panic!("no TOTAL row of dense");
}

/// Both samplers give every read the same law, so their top-1 figures are two estimates
/// of one probability on the same digits. Over N digits each has variance at most
/// t (1 - t) / N (t the mean top-1), their difference at most twice that: the test allows
/// 4.9 standard deviations of the difference (a correct sampler fails with probability
/// below 10^-6, normal approximation; the seeds are fixed, so it passes or fails always).
fn agree_within_the_interval(samples: usize) {
    let (skip, skip_q, skip_e) = dense_top1("skip", samples);
    let (per_read, per_read_q, per_read_e) = dense_top1("per-read", samples);
    let t = (skip + per_read) / 2.0;
    let sd = (2.0 * t * (1.0 - t) / samples as f64).sqrt();
    let tol = 4.9 * sd + 1.0 / samples as f64;
    assert!(
        (skip - per_read).abs() <= tol,
        "top-1 {skip} (skip) against {per_read} (per-read), {samples} digits: more than {tol} apart"
    );
    let (a, q) = ((skip_q + per_read_q) / 2.0, (skip_q - per_read_q).abs());
    let tol = 4.9 * (2.0 * a * (1.0 - a) / samples as f64).sqrt() + 1.0 / samples as f64;
    assert!(q <= tol, "agreement {skip_q} against {per_read_q}");
    // The noise is strong enough to change predictions: the test compares something.
    // (On 30 digits a sampler may change no prediction: the outputs' error says it
    // drew noise, about 0.2 of their RMS under either sampler.)
    assert!(
        skip_e > 0.1 && per_read_e > 0.1,
        "output error {skip_e} (skip), {per_read_e} (per-read)"
    );
}

#[test]
fn lenet_top1_agrees_under_both_samplers() {
    agree_within_the_interval(30);
}

/// The same on the figure's 500 digits (minutes in a debug build).
#[test]
#[ignore]
fn lenet_top1_agrees_under_both_samplers_on_500_digits() {
    agree_within_the_interval(500);
}

/// The mean over device seeds 1 to 3 of layer fc1's output error (`func_rel_rmse`) in
/// the ideal and weight modes of `sresim run --functional` (8 digits, read noise 0.2),
/// reads drawn by `sampler`.
fn fc1_error(sampler: &str) -> f64 {
    let mut sum = 0.0;
    let mut n = 0;
    for seed in 1..=3 {
        let dir = tempfile::tempdir().unwrap();
        let (seed, set) = (
            format!("device.seed={seed}"),
            format!("device.sampler={sampler}"),
        );
        ok(&[
            "run",
            "--workload",
            "lenet5-mnist",
            "--functional",
            "--modes",
            "ideal,weight",
            "--set",
            "device.read_noise=0.2",
            "--set",
            &seed,
            "--set",
            &set,
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ]);
        let mut r = csv::Reader::from_path(dir.path().join("layers.csv")).unwrap();
        let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let col = |name: &str| head.iter().position(|h| h == name).unwrap();
        let (layer, err) = (col("layer"), col("func_rel_rmse"));
        for rec in r.records() {
            let rec = rec.unwrap();
            if &rec[layer] == "fc1" {
                sum += rec[err].parse::<f64>().unwrap();
                n += 1;
            }
        }
    }
    assert_eq!(n, 6, "fc1 in two modes and three seeds");
    sum / n as f64
}

/// The reads of one OU read in different columns, polarities and column groups draw
/// independently under both samplers. Independence is what a per-level histogram cannot
/// see: when the positive and the negative array's reads of one OU shared their random
/// bits, their errors cancelled in the difference of the two polarities and fc1's output
/// error under the skip sampler fell to 0.8x the per-read sampler's (0.45 against 0.57).
/// Over the three seeds both estimates vary by about 2% of their size, so a ratio outside
/// 0.92 to 1.08 is a different law, not chance.
#[test]
fn both_samplers_give_fc1_the_same_output_error() {
    let (skip, per_read) = (fc1_error("skip"), fc1_error("per-read"));
    let ratio = skip / per_read;
    assert!(
        (0.92..=1.08).contains(&ratio),
        "fc1's output error {skip} (skip) against {per_read} (per-read): ratio {ratio}"
    );
}

#[test]
fn an_unknown_sampler_is_one_line_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let e = fails(&sresim(&[
        "run",
        "--functional",
        "-q",
        "--set",
        "device.sampler=fast",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(
        e.trim_end(),
        "error: --set device.sampler=fast: device.sampler: 'fast' is not a sampler (skip, per-read)"
    );
    assert!(!out.exists());
}
