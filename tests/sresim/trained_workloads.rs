//! The trained bundles (workloads/fmnist-cnn, fmnist-cnn-ssl, lenet5-mnist-ssl,
//! lenet5-mnist-ssl-paper, fmnist-vit,
//! fmnist-vit-relu, fmnist-vit-relu-2of4, fmnist-resnet20, fmnist-resnet20-pruned): `sresim
//! accuracy` on their first 100 labelled images gives exactly the float and 16-bit
//! quantized top-1 their README states for those images (the builder measured it with the
//! same command), so a corrupted bundle or a wrong README figure fails here. No torch:
//! only the committed files. tools/tests/test_trained_bundles.py checks the README's
//! sparsity table and whole-input float top-1 against the arrays.
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests make their fixtures and read outputs with std::fs.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{col, read_csv, run_ok, s};

use std::path::Path;

const TRAINED: [&str; 9] = [
    "fmnist-cnn",
    "fmnist-cnn-ssl",
    "lenet5-mnist-ssl",
    "lenet5-mnist-ssl-paper",
    "fmnist-vit",
    "fmnist-vit-relu",
    "fmnist-vit-relu-2of4",
    "fmnist-resnet20",
    "fmnist-resnet20-pruned",
];
const CHECK: usize = 100;

/// The README's `| first 100 ... | 100 | F% | Q% |` row: (float, quantized) top-1 in percent.
fn readme_figures(name: &str) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("workloads")
        .join(name)
        .join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let prefix = format!("| first {CHECK} ");
    let row = text
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{path:?}: no row {prefix:?}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells[2], CHECK.to_string(), "{row}");
    (cells[3].to_string(), cells[4].to_string())
}

fn percent(frac: &str) -> String {
    format!("{:.2}%", frac.parse::<f64>().unwrap() * 100.0)
}

#[test]
fn accuracy_on_the_first_images_is_what_each_trained_readme_states() {
    for name in TRAINED {
        let (want_float, want_quant) = readme_figures(name);
        let dir = tempfile::tempdir().unwrap();
        let workload = format!("workloads/{name}");
        run_ok(&[
            "accuracy",
            "--workload",
            &workload,
            "--samples",
            &CHECK.to_string(),
            "--modes",
            "none",
            "--out",
            s(dir.path()),
            "-q",
        ]);
        let (head, rows) = read_csv(&dir.path().join("accuracy.csv"));
        let total = rows
            .iter()
            .find(|r| r[col(&head, "layer")] == "TOTAL" && r[col(&head, "mode")] == "quantized")
            .expect("a quantized TOTAL row");
        assert_eq!(total[col(&head, "samples")], CHECK.to_string(), "{name}");
        assert_eq!(
            percent(&total[col(&head, "top1_float")]),
            want_float,
            "{name}: float top-1"
        );
        assert_eq!(
            percent(&total[col(&head, "top1")]),
            want_quant,
            "{name}: quantized top-1"
        );
    }
}

/// `sresim run` of a bundle in every mode: (layer, mode) -> (cycles, cells_read).
fn run_counts(name: &str) -> Vec<(String, String, u64, u64)> {
    let dir = tempfile::tempdir().unwrap();
    run_ok(&[
        "run",
        "--workload",
        &format!("workloads/{name}"),
        "--out",
        s(dir.path()),
        "-q",
    ]);
    let (head, rows) = read_csv(&dir.path().join("layers.csv"));
    rows.iter()
        .map(|r| {
            (
                r[col(&head, "layer")].clone(),
                r[col(&head, "mode")].clone(),
                r[col(&head, "cycles")].parse().unwrap(),
                r[col(&head, "cells_read")].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_relu_vits_run_and_their_2_of_4_and_relu_zeros_are_skipped() {
    let dense = run_counts("fmnist-vit-relu");
    let pruned = run_counts("fmnist-vit-relu-2of4");
    let get = |rows: &[(String, String, u64, u64)], layer: &str, mode: &str| {
        rows.iter()
            .find(|r| r.0 == layer && r.1 == mode)
            .map(|r| (r.2, r.3))
            .unwrap_or_else(|| panic!("no row {layer} {mode}"))
    };
    // The same network: the same layers in the same order.
    let names =
        |rows: &[(String, String, u64, u64)]| rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&dense), names(&pruned));
    // Dense mode reads every weight: pruning changes nothing there.
    assert_eq!(
        get(&dense, "TOTAL", "dense").1,
        get(&pruned, "TOTAL", "dense").1
    );
    // Weight compression reads fewer cells once half the encoder's weights are zero.
    assert!(get(&pruned, "TOTAL", "weight").1 < get(&dense, "TOTAL", "weight").1);
    // sre beats dense on both, more so on the pruned network.
    let speedup = |rows: &[(String, String, u64, u64)]| {
        get(rows, "TOTAL", "dense").0 as f64 / get(rows, "TOTAL", "sre").0 as f64
    };
    assert!(speedup(&dense) > 1.0, "{}", speedup(&dense));
    assert!(
        speedup(&pruned) > speedup(&dense),
        "{} vs {}",
        speedup(&pruned),
        speedup(&dense)
    );
    // The feed-forward's second layers read the ReLU's zeros: activation sparsity alone
    // saves cycles there, in both networks.
    for rows in [&dense, &pruned] {
        let ffn: Vec<&String> = rows
            .iter()
            .filter(|r| r.0.contains("linear2") && r.1 == "dense")
            .map(|r| &r.0)
            .collect();
        assert_eq!(ffn.len(), 3);
        for l in ffn {
            assert!(
                get(rows, l, "activation").0 < get(rows, l, "dense").0,
                "{l}"
            );
        }
    }
}

#[test]
fn the_resnets_check_and_run_and_pruning_saves_reads_and_cycles() {
    for name in ["fmnist-resnet20", "fmnist-resnet20-pruned"] {
        let out = run_ok(&["check", &format!("workloads/{name}")]);
        assert!(out.contains("ok"), "{name}: {out}");
    }
    let dense = run_counts("fmnist-resnet20");
    let pruned = run_counts("fmnist-resnet20-pruned");
    let get = |rows: &[(String, String, u64, u64)], layer: &str, mode: &str| {
        rows.iter()
            .find(|r| r.0 == layer && r.1 == mode)
            .map(|r| (r.2, r.3))
            .unwrap_or_else(|| panic!("no row {layer} {mode}"))
    };
    let names =
        |rows: &[(String, String, u64, u64)]| rows.iter().map(|r| r.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&dense), names(&pruned));
    // The stem, 18 block convs, 2 shortcuts and the head, then TOTAL, in every mode.
    let layers: std::collections::BTreeSet<&String> = dense.iter().map(|r| &r.0).collect();
    assert_eq!(layers.len(), 23, "{layers:?}");
    // Dense mode reads every weight: pruning changes nothing there.
    assert_eq!(
        get(&dense, "TOTAL", "dense").1,
        get(&pruned, "TOTAL", "dense").1
    );
    // With 60% of the block convs' weights zero, weight compression reads fewer cells and
    // sre takes fewer cycles on the pruned network than on the dense one.
    assert!(get(&pruned, "TOTAL", "weight").1 < get(&dense, "TOTAL", "weight").1);
    assert!(get(&pruned, "TOTAL", "sre").0 < get(&dense, "TOTAL", "sre").0);
}
