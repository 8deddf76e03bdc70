//! The regression bench of docs/studies/sre-evaluation.md: `scripts/sre-evaluation --check`
//! reruns parts of the study with this build of sresim and compares their tables with the
//! committed ones at tolerance 0 (`sresim compare`) and their figures byte for byte. An
//! unchanged model reproduces every digit; a model change (here the index table's energy
//! per bit, which only the compressed modes read) fails, naming each row it moved and
//! leaving the rows it did not move unnamed.
#![allow(clippy::disallowed_methods)]
// the test makes its scratch folder with std::fs (through tempfile)

// Test code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::process::Command;

/// Runs the bench on the `networks` and `model-sync` parts (a few seconds) into `out`,
/// with `extra` arguments; returns whether it passed and what it printed.
fn bench(out: &Path, extra: &[&str]) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .arg(root.join("scripts/sre-evaluation"))
        .args([
            "--check",
            "--parts",
            "networks,model-sync",
            "--bin",
            common::BIN,
        ])
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("python3 runs scripts/sre-evaluation");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

#[test]
fn the_committed_study_reproduces_and_a_model_change_fails_naming_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, text) = bench(&dir.path().join("same"), &[]);
    assert!(ok, "{text}");
    assert!(text.contains("2 part(s) checked against"), "{text}");
    assert!(text.contains(": all equal"), "{text}");

    // The index table's energy per bit doubled: every weight and sre row moves (energy,
    // its index part and the saving over dense), no dense, activation or ideal row does.
    let (ok, text) = bench(
        &dir.path().join("changed"),
        &["--set", "energy.index_per_bit_pj=0.00808"],
    );
    assert!(!ok, "{text}");
    for w in [
        "lenet5-mnist-ssl",
        "fmnist-cnn-ssl",
        "lenet5-mnist-ssl-paper",
        "lenet5",
        "resnet20",
    ] {
        for mode in ["weight", "sre"] {
            let row = format!("changed workload={w} network={w} layer=TOTAL mode={mode}: ");
            let line = text
                .lines()
                .find(|l| l.starts_with(&row))
                .unwrap_or_else(|| panic!("{row} not named:\n{text}"));
            assert!(
                line.contains("energy_pj ") && line.contains("e_index_pj "),
                "{line}"
            );
            assert!(!line.contains("cycles "), "cycles moved: {line}");
        }
    }
    for mode in ["dense", "activation", "ideal"] {
        assert!(
            !text.contains(&format!("mode={mode}: ")),
            "a {mode} row named:\n{text}"
        );
    }
    // the timing.sync part: 2 workloads x 3 barriers, the sre row of each
    assert!(
        text.contains("12 rows compared: 6 changed"),
        "model-sync part:\n{text}"
    );
    assert!(
        text.contains("differs: networks: the table moved"),
        "{text}"
    );
    assert!(
        text.contains("differs: model-sync: the table moved"),
        "{text}"
    );
}
