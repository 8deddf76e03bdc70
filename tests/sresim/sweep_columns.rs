//! The columns a sweep adds beyond layers.csv (docs/sweeps.md, "Chip, functional,
//! accuracy and digital-unit columns"), through the binary: chip figures equal to `sresim run`'s
//! summary.json, accuracy figures equal to `sresim accuracy`, a grid without them
//! unchanged, sharding and resume unchanged, the Pareto plot, bad grids, and the
//! digital unit's columns of a transformer.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{run_fails as fails, run_ok as ok, s, write};

use std::collections::HashMap;
use std::path::Path;

type Row = HashMap<String, String>;

/// A CSV as its header and rows keyed by column name.
fn read(path: &Path) -> (Vec<String>, Vec<Row>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            h.iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect();
    (h, rows)
}

fn sweep(grid: &Path, out: &Path, extra: &[&str]) -> String {
    let mut a = vec!["sweep", "--grid", s(grid), "--out", s(out), "-q"];
    a.extend(extra);
    ok(&a)
}

/// A cell against a summary.json number (null: an empty cell).
fn same(cell: &str, json: &serde_json::Value, what: &str) {
    match json {
        serde_json::Value::Null => assert_eq!(cell, "", "{what}"),
        serde_json::Value::Bool(b) => assert_eq!(cell, b.to_string(), "{what}"),
        serde_json::Value::String(t) => assert_eq!(cell, t, "{what}"),
        // serde_json parses a float to within an ulp or so, not always exactly.
        v => {
            let (a, b) = (cell.parse::<f64>().unwrap(), v.as_f64().unwrap());
            assert!(
                a == b || (a - b).abs() <= 1e-14 * a.abs().max(b.abs()),
                "{what}: {cell} against {v}"
            )
        }
    }
}

const CHIP: &str = r#"
workloads = ["lenet5"]
modes = ["dense", "sre"]
samples = 1
[set]
"chip.preset" = "isaac"
[axes]
"chip.replication" = ["none", "balance"]
"chip.schedule" = ["layer-by-layer", "pipelined"]
"#;

#[test]
fn chip_axes_give_the_figures_of_sresim_run() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(dir.path(), "g.toml", CHIP);
    let out = dir.path().join("out");
    sweep(&grid, &out, &[]);
    let (h, rows) = read(&out.join("points.csv"));
    for c in [
        "chip_replicas",
        "chip_images_per_s",
        "chip_fits",
        "chip_energy_pj",
    ] {
        assert!(h.iter().any(|x| x == c), "{c}");
    }
    // Every point against `sresim run` with the same keys.
    for (rep, sched) in [("balance", "pipelined"), ("none", "layer-by-layer")] {
        let run = dir.path().join(format!("run-{rep}"));
        ok(&[
            "run",
            "-w",
            "lenet5",
            "--modes",
            "dense,sre",
            "--samples",
            "1",
            "-q",
            "--set",
            "chip.preset=isaac",
            "--set",
            &format!("chip.replication={rep}"),
            "--set",
            &format!("chip.schedule={sched}"),
            "-o",
            s(&run),
        ]);
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
        let (lh, layers) = read(&run.join("layers.csv"));
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| r["chip.replication"] == rep && r["chip.schedule"] == sched)
            .collect();
        assert_eq!(mine.len(), layers.len());
        // Layer and TOTAL rows: every column of layers.csv, the chip ones included.
        for (p, l) in mine.iter().zip(&layers) {
            for c in &lh {
                assert_eq!(p[c], l[c], "{rep} {sched} {} {} {c}", l["layer"], l["mode"]);
            }
        }
        for mode in ["dense", "sre"] {
            let t = mine
                .iter()
                .find(|r| r["layer"] == "TOTAL" && r["mode"] == mode)
                .unwrap();
            let m = &summary["chip"]["modes"][mode];
            for key in [
                "fits",
                "note",
                "chips",
                "segments",
                "run_cycles",
                "latency_cycles",
                "latency_ns",
                "cycles_per_image",
                "images_per_s",
                "network_pj",
                "offchip_pj",
                "write_cycles",
                "write_pj",
                "static_pj",
                "energy_pj",
                "area_occupied_mm2",
                "area_chips_mm2",
                "images_per_s_per_mm2",
                "power_w",
                "images_per_s_per_w",
            ] {
                let cell = &t[&format!("chip_{key}")];
                if key == "note" && m[key].is_null() {
                    assert_eq!(cell, "");
                    continue;
                }
                same(cell, &m[key], &format!("{rep} {sched} {mode} {key}"));
            }
            same(&t["chip_tiles"], &m["tiles_used"], "tiles_used");
            same(&t["chip_end_cycle"], &m["run_cycles"], "run_cycles");
            same(
                &t["chip_network_bytes"],
                &m["network_bytes"],
                "network_bytes",
            );
            same(&t["chip_spill_bytes"], &m["offchip_bytes"], "offchip_bytes");
            assert!(t["chip_images_per_s"].parse::<f64>().unwrap() > 0.0);
        }
        // The summary figures are on TOTAL rows only.
        assert!(mine
            .iter()
            .filter(|r| r["layer"] != "TOTAL")
            .all(|r| r["chip_images_per_s"].is_empty() && r["chip_fits"].is_empty()));
    }

    // Two shards merged give the unsharded bytes; a finished sweep resumes to nothing.
    let mut shards = Vec::new();
    for i in 0..2 {
        let d = dir.path().join(format!("shard-{i}"));
        sweep(&grid, &d, &["--shard", &format!("{i}/2")]);
        shards.push(d);
    }
    let merged = dir.path().join("merged");
    ok(&["merge", s(&shards[0]), s(&shards[1]), "--out", s(&merged)]);
    for f in ["points.csv", "sweep.json"] {
        assert_eq!(
            std::fs::read(out.join(f)).unwrap(),
            std::fs::read(merged.join(f)).unwrap(),
            "{f}"
        );
    }
    let said = ok(&["sweep", "--grid", s(&grid), "--out", s(&out), "--resume"]);
    assert!(said.contains("0 run, 4 already done"), "{said}");
    // Parquet: the same cells, the chip columns typed.
    let pq = dir.path().join("pq");
    sweep(&grid, &pq, &["--format", "parquet"]);
    ok(&["compare", s(&out), s(&pq.join("points.parquet"))]);
}

const PLAIN: &str = r#"
workloads = ["lenet5"]
modes = ["dense", "sre"]
samples = 1
[axes]
"ou.rows" = [4, 16]
"#;

/// A grid without chip, functional or accuracy keys writes the points.csv it always did:
/// a harmless fixed key changes no byte, no new column appears, and the columns are
/// exactly the point, workload, axis and layers.csv columns.
#[test]
fn a_grid_without_extras_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.toml", PLAIN);
    // ou.cols = 8 is the default: fixing it changes nothing but the fingerprint.
    let b = write(
        dir.path(),
        "b.toml",
        &PLAIN.replace("[axes]", "[set]\n\"ou.cols\" = 8\n[axes]"),
    );
    let (oa, ob) = (dir.path().join("a"), dir.path().join("b"));
    sweep(&a, &oa, &[]);
    sweep(&b, &ob, &[]);
    let pa = std::fs::read(oa.join("points.csv")).unwrap();
    assert_eq!(pa, std::fs::read(ob.join("points.csv")).unwrap());
    let (h, _) = read(&oa.join("points.csv"));
    assert!(h
        .iter()
        .all(|c| !c.starts_with("chip_") && !c.starts_with("func_") && c != "top1"));
    let run = dir.path().join("run");
    ok(&[
        "run",
        "-w",
        "lenet5",
        "--modes",
        "dense,sre",
        "--samples",
        "1",
        "-q",
        "-o",
        s(&run),
    ]);
    let (rh, _) = read(&run.join("layers.csv"));
    assert_eq!(h[..3], ["point", "workload", "ou.rows"]);
    assert_eq!(h[3..], rh[..]);
    let meta = std::fs::read_to_string(oa.join("sweep.json")).unwrap();
    assert!(!meta.contains("extra_columns"), "{meta}");
}

/// An accuracy sweep over the read noise (fixed seed, fc2 alone through the datapath):
/// each point's figures are those of `sresim accuracy` with the same keys, and the
/// output error grows with the noise.
#[test]
fn accuracy_points_equal_sresim_accuracy() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        r#"
workloads = ["lenet5-mnist"]
modes = ["sre"]
samples = 1
layers = ["fc2"]
functional = true
accuracy = true
accuracy_samples = 24
[set]
"device.seed" = 7
[axes]
"device.read_noise" = [0.0, 2.0]
"#,
    );
    let out = dir.path().join("out");
    sweep(&grid, &out, &[]);
    let (h, rows) = read(&out.join("points.csv"));
    for c in [
        "func_rel_rmse",
        "accuracy_samples",
        "top1",
        "top1_float",
        "agreement",
        "output_rel_rmse",
    ] {
        assert!(h.iter().any(|x| x == c), "{c}");
    }
    let mut errors = Vec::new();
    for noise in ["0", "2"] {
        let t = rows
            .iter()
            .find(|r| r["device.read_noise"] == noise && r["layer"] == "TOTAL")
            .unwrap();
        let acc = dir.path().join(format!("acc-{noise}"));
        ok(&[
            "accuracy",
            "-w",
            "lenet5-mnist",
            "--samples",
            "24",
            "--modes",
            "sre",
            "--layers",
            "fc2",
            "--set",
            "device.seed=7",
            "--set",
            &format!("device.read_noise={noise}"),
            "-q",
            "-o",
            s(&acc),
        ]);
        let (_, a) = read(&acc.join("accuracy.csv"));
        let at = a
            .iter()
            .find(|r| r["layer"] == "TOTAL" && r["mode"] == "sre")
            .unwrap();
        for c in [
            "top1",
            "top1_float",
            "agreement",
            "top1_quantized",
            "agreement_quantized",
            "output_rel_rmse",
        ] {
            assert_eq!(t[c], at[c], "noise {noise}: {c}");
        }
        assert_eq!(t["accuracy_samples"], "24");
        // Layer rows carry no accuracy figures; TOTAL rows the network's functional ones.
        let fc2 = rows
            .iter()
            .find(|r| r["device.read_noise"] == noise && r["layer"] == "fc2")
            .unwrap();
        assert_eq!(fc2["top1"], "");
        assert_ne!(t["func_rel_rmse"], "");
        assert_eq!(
            t["func_rel_rmse"], fc2["func_rel_rmse"],
            "one layer: its own"
        );
        errors.push(t["output_rel_rmse"].parse::<f64>().unwrap());
    }
    assert!(errors[0] < errors[1], "{errors:?}");
    // The Pareto view of it, and the same bytes twice.
    let (p1, p2) = (dir.path().join("p1.svg"), dir.path().join("p2.svg"));
    for p in [&p1, &p2] {
        ok(&[
            "plot",
            s(&out),
            "--pareto",
            "--x",
            "energy_pj",
            "--y",
            "top1",
            "-o",
            s(p),
        ]);
    }
    let svg = std::fs::read_to_string(&p1).unwrap();
    assert!(
        svg.contains("Pareto front") && svg.starts_with("<svg"),
        "{svg}"
    );
    assert_eq!(svg.into_bytes(), std::fs::read(&p2).unwrap());
    let line = ok(&[
        "plot",
        s(&out),
        "--x",
        "device.read_noise",
        "--y",
        "top1",
        "-o",
        s(&p1),
    ]);
    assert!(line.starts_with("wrote"), "{line}");
}

#[test]
fn bad_extra_keys_are_one_line_errors_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"chip.colour\" = [1]\n",
            "g.toml: axes.chip.colour: unknown chip key",
        ),
        (
            "workloads = [\"lenet5\"]\n[set]\n\"chip.preset\" = \"isaac\"\n[axes]\n\"chip.replication\" = [\"none\", \"sideways\"]\n",
            "g.toml: axes.chip.replication = \"sideways\"",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"chip.preset\" = [\"isaac\", \"nowhere\"]\n",
            "chip.preset: 'nowhere'",
        ),
        (
            "workloads = [\"lenet5\"]\naccuracy = true\n",
            "g.toml: accuracy: workload lenet5: a built-in network",
        ),
        (
            "workloads = [\"lenet5\"]\naccuracy_samples = 3\n",
            "g.toml: accuracy_samples: set without accuracy = true",
        ),
        (
            "workloads = [\"lenet5-mnist\"]\naccuracy = true\naccuracy_samples = 100000\n",
            "g.toml: accuracy_samples: 100000",
        ),
        (
            "workloads = [\"lenet5\"]\nfunctional = \"yes\"\n",
            "g.toml: line 2: functional: invalid type",
        ),
        (
            "workloads = [\"lenet5\"]\n[axes]\n\"device.preset\" = [\"ideal\", \"nonesuch\"]\n",
            "g.toml: axes.device.preset = \"nonesuch\"",
        ),
    ];
    // A device error table that stops short of what the ideal mode reads.
    let table = write(
        dir.path(),
        "t.csv",
        "open_wordlines,ideal_sum,observed_sum,probability\n1,0,0,1\n1,1,1,1\n",
    );
    let short = format!(
        "workloads = [\"lenet5\"]\nmodes = [\"ideal\"]\nfunctional = true\n[set]\n\"device.error_table\" = {:?}\n",
        s(&table)
    );
    let mut cases: Vec<(&str, &str)> = cases.to_vec();
    cases.push((
        &short,
        "the table stops at 1 wordlines, but ideal reads open up to 128",
    ));
    for (text, want) in cases {
        let grid = write(dir.path(), "g.toml", text);
        let out = dir.path().join("out");
        let e = fails(&["sweep", "--grid", s(&grid), "--out", s(&out)]);
        assert!(e.contains(want), "{text}: {e}");
        assert!(!out.exists(), "{text}: wrote {}", out.display());
    }
    let e = fails(&[
        "plot",
        s(dir.path()),
        "--x",
        "a",
        "--y",
        "b",
        "--x-better",
        "higher",
    ]);
    assert!(e.contains("--x-better: needs --pareto"), "{e}");
}

/// A transformer beside a CNN: points.csv ends with the digital unit's 13 columns
/// (docs/sweeps.md), the transformer's rows hold what `sresim run` writes in layers.csv,
/// the CNN's rows leave them empty; a grid of CNNs alone has none of them.
#[test]
fn a_transformers_points_carry_the_digital_units_columns() {
    let dir = tempfile::tempdir().unwrap();
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"fmnist-vit\", \"lenet5\"]\nmodes = [\"dense\", \"sre\"]\n[axes]\n\"ou.rows\" = [4, 16]\n",
    );
    let out = dir.path().join("out");
    sweep(&grid, &out, &[]);
    let (h, rows) = read(&out.join("points.csv"));
    let digital = [
        "digital_ops",
        "digital_cycles",
        "digital_time_ns",
        "digital_energy_pj",
        "digital_compute_pj",
        "digital_buffer_pj",
        "digital_kv_pj",
        "attention_write_cells",
        "attention_write_pj",
        "attention_write_ns",
        "combined_cycles",
        "combined_time_ns",
        "combined_energy_pj",
    ];
    assert_eq!(h[h.len() - digital.len()..], digital);
    let run = dir.path().join("run");
    ok(&[
        "run",
        "-w",
        "fmnist-vit",
        "--modes",
        "dense,sre",
        "--set",
        "ou.rows=16",
        "-q",
        "-o",
        s(&run),
    ]);
    let (rh, run_rows) = read(&run.join("layers.csv"));
    // The points' columns up to the digital unit's are exactly layers.csv's.
    assert_eq!(h[3..], rh[..]);
    let vit: Vec<&Row> = rows
        .iter()
        .filter(|r| r["workload"] == "fmnist-vit" && r["ou.rows"] == "16")
        .collect();
    assert_eq!(vit.len(), run_rows.len());
    for (p, r) in vit.iter().zip(&run_rows) {
        assert_eq!(p["layer"], r["layer"]);
        for c in digital {
            assert_eq!(p[c], r[c], "{} {} {c}", r["layer"], r["mode"]);
        }
    }
    let total = vit.iter().find(|r| r["layer"] == "TOTAL").unwrap();
    assert!(total["digital_cycles"].parse::<u64>().unwrap() > 0);
    assert!(
        total["combined_cycles"].parse::<u64>().unwrap() > total["cycles"].parse::<u64>().unwrap()
    );
    let cnn: Vec<&Row> = rows.iter().filter(|r| r["workload"] == "lenet5").collect();
    assert!(!cnn.is_empty());
    assert!(cnn.iter().all(|r| digital.iter().all(|c| r[*c].is_empty())));
    // CNNs alone: the columns of layers.csv, nothing of the unit.
    let cnn_grid = write(
        dir.path(),
        "c.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\n[axes]\n\"ou.rows\" = [4]\n",
    );
    let cnn_out = dir.path().join("cnn");
    sweep(&cnn_grid, &cnn_out, &[]);
    let (ch, _) = read(&cnn_out.join("points.csv"));
    assert!(ch.iter().all(|c| !digital.contains(&c.as_str())));
}
