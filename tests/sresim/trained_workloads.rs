//! The trained bundles (workloads/fmnist-cnn, fmnist-cnn-ssl, lenet5-mnist-ssl, fmnist-vit): `sresim
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

const TRAINED: [&str; 4] = [
    "fmnist-cnn",
    "fmnist-cnn-ssl",
    "lenet5-mnist-ssl",
    "fmnist-vit",
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
