//! `merge` and `sweep --resume` re-check which cells of a shard's rows are filled, per
//! column, as the writer decides it (docs/errors.md, "Merged rows"): a cell emptied
//! where a sweep fills it, or filled where a sweep leaves it empty, is refused naming the
//! file, the point's row and the column, and nothing is written.

use crate::common;
use common::{col, fails, ok, read_csv, s, sresim, write};

use std::path::Path;

/// A CNN beside a transformer (the digital unit's columns), dense and sre.
const MIXED: &str = "workloads = [\"fmnist-vit\", \"lenet5\"]\nmodes = [\"dense\", \"sre\"]\n[axes]\n\"ou.rows\" = [4, 16]\n";

/// Copies sweep `from` to `to` with cell (`workload`, `layer`, `mode`, `column`) set to
/// `value`.
fn tampered(from: &Path, to: &Path, at: (&str, &str, &str), column: &str, value: &str) {
    let (h, mut rows) = read_csv(&from.join("points.csv"));
    let (w, l, m, c) = (
        col(&h, "workload"),
        col(&h, "layer"),
        col(&h, "mode"),
        col(&h, column),
    );
    let row = rows
        .iter_mut()
        .find(|r| r[w] == at.0 && r[l] == at.1 && r[m] == at.2)
        .unwrap_or_else(|| panic!("no row {at:?}"));
    row[c] = value.to_string();
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(from.join("sweep.json"), to.join("sweep.json")).unwrap();
    let text: String = std::iter::once(&h)
        .chain(&rows)
        .map(|r| format!("{}\n", r.join(",")))
        .collect();
    std::fs::write(to.join("points.csv"), text).unwrap();
}

/// A tampered cell (workload, layer, mode), its column, its value and what the refusal
/// must say.
type Case<'a> = ((&'a str, &'a str, &'a str), &'a str, &'a str, &'a str);

fn first_layer(from: &Path, workload: &str) -> String {
    let (h, rows) = read_csv(&from.join("points.csv"));
    let (w, l) = (col(&h, "workload"), col(&h, "layer"));
    rows.iter().find(|r| r[w] == workload).unwrap()[l].clone()
}

#[test]
fn merge_refuses_cells_emptied_or_filled_against_the_writers_rule() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", MIXED);
    let full = dir.path().join("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    // The untouched sweep merges.
    ok(&sresim(&[
        "merge",
        s(&full),
        "-o",
        s(&dir.path().join("m0")),
    ]));
    let cnn = first_layer(&full, "lenet5");
    let vit = first_layer(&full, "fmnist-vit");
    let cases: [Case; 9] = [
        (
            ("lenet5", &cnn, "sre"),
            "signed",
            "",
            "empty, but a sweep fills it",
        ),
        (
            ("lenet5", "TOTAL", "sre"),
            "signed",
            "0",
            "a TOTAL row has none",
        ),
        (
            ("lenet5", &cnn, "sre"),
            "speedup_vs_dense",
            "",
            "empty, but a sweep fills it",
        ),
        (
            ("lenet5", "TOTAL", "sre"),
            "energy_saving_vs_dense",
            "",
            "dense row's energy_pj",
        ),
        (
            ("lenet5", &cnn, "dense"),
            "digital_cycles",
            "5",
            "not a transformer",
        ),
        (
            ("fmnist-vit", &vit, "sre"),
            "digital_cycles",
            "",
            "the workload has the digital unit's work",
        ),
        (
            ("lenet5", &cnn, "sre"),
            "queue_depth",
            "1",
            "did not run the cycle engine",
        ),
        (
            ("lenet5", &cnn, "sre"),
            "stall_adc",
            "7",
            "did not run the cycle engine",
        ),
        (
            ("fmnist-vit", "TOTAL", "dense"),
            "kind",
            "conv",
            "a TOTAL row has none",
        ),
    ];
    for (i, (at, column, value, why)) in cases.into_iter().enumerate() {
        let shard = dir.path().join(format!("t{i}"));
        tampered(&full, &shard, at, column, value);
        let out = dir.path().join(format!("m{}", i + 1));
        let e = fails(&sresim(&["merge", s(&shard), "-o", s(&out)]));
        assert!(
            e.contains(&format!("t{i}/points.csv: point "))
                && e.contains(&format!(": {column}: "))
                && e.contains(why),
            "{at:?} {column}={value:?}: {e}"
        );
        assert!(!out.exists(), "{e}");
    }
}

/// The cycle engine's columns: every row fills the four general ones, a mode's rows the
/// stages the mode has; one emptied is refused, the untouched sweep merges.
#[test]
fn merge_refuses_an_emptied_cycle_engine_cell() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\nengine = \"cycle\"\n[axes]\n\"ou.rows\" = [4, 16]\n",
    );
    let full = dir.path().join("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    ok(&sresim(&[
        "merge",
        s(&full),
        "-o",
        s(&dir.path().join("m0")),
    ]));
    let cnn = first_layer(&full, "lenet5");
    for (i, column) in ["queue_depth", "busy_adc"].into_iter().enumerate() {
        let shard = dir.path().join(format!("t{i}"));
        tampered(&full, &shard, ("lenet5", &cnn, "sre"), column, "");
        let e = fails(&sresim(&[
            "merge",
            s(&shard),
            "-o",
            s(&dir.path().join(format!("m{}", i + 1))),
        ]));
        assert!(
            e.contains(&format!(": {column}: empty, but a sweep fills it here")),
            "{column}: {e}"
        );
    }
}

/// `sweep --resume` keeps a complete point only after the same check.
#[test]
fn resume_refuses_a_kept_row_with_an_emptied_flag() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\n[axes]\n\"ou.rows\" = [4, 16]\n",
    );
    let full = dir.path().join("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    let cnn = first_layer(&full, "lenet5");
    let cut = dir.path().join("cut");
    tampered(&full, &cut, ("lenet5", &cnn, "sre"), "signed", "");
    let before = std::fs::read(cut.join("points.csv")).unwrap();
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&cut),
        "--resume",
        "-q",
    ]));
    assert!(
        e.contains("points.csv: point ") && e.contains(": signed: empty, but a sweep fills it"),
        "{e}"
    );
    assert_eq!(std::fs::read(cut.join("points.csv")).unwrap(), before);
}

/// A shard's directory holds its own points only (docs/errors.md, "Merged rows"): a
/// complete point of another shard appended to its points.csv is refused by `merge`
/// (which took it as this shard's) and by `sweep --resume` (which dropped it without a
/// word), naming the file, the point and both shards, and nothing is written.
#[test]
fn a_shard_directory_holding_another_shards_point_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\"]\n[axes]\n\"ou.rows\" = [4, 8, 16, 32]\n",
    );
    let shard = |i: usize| {
        let d = dir.path().join(format!("s{i}"));
        ok(&sresim(&[
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(&d),
            "-q",
            "--shard",
            &format!("{i}/2"),
        ]));
        d
    };
    let (s0, s1) = (shard(0), shard(1));
    // The untouched shard merges alone with --partial.
    ok(&sresim(&[
        "merge",
        s(&s0),
        "--partial",
        "-o",
        s(&dir.path().join("m0")),
    ]));
    let (h, rows1) = read_csv(&s1.join("points.csv"));
    let id = col(&h, "point");
    let theirs = rows1[0][id].clone();
    let mut text = std::fs::read_to_string(s0.join("points.csv")).unwrap();
    for r in rows1.iter().filter(|r| r[id] == theirs) {
        text.push_str(&format!("{}\n", r.join(",")));
    }
    std::fs::write(s0.join("points.csv"), &text).unwrap();
    let before = std::fs::read(s0.join("points.csv")).unwrap();
    let merged = dir.path().join("m1");
    let e = fails(&sresim(&["merge", s(&s0), "--partial", "-o", s(&merged)]));
    assert!(
        e.contains(&format!("point {theirs}: belongs to shard 1/2")) && e.contains("shard 0/2"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!merged.exists());
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&s0),
        "-q",
        "--shard",
        "0/2",
        "--resume",
    ]));
    assert!(
        e.contains(&format!("point {theirs}: belongs to shard 1/2")),
        "{e}"
    );
    assert_eq!(std::fs::read(s0.join("points.csv")).unwrap(), before);
}
