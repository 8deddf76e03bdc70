//! The chip's schedules place the digital unit's work (docs/chip.md, "The digital unit"):
//! a transformer's chip run, layer by layer on an unbounded chip with free data movement
//! and one copy, takes exactly the layer-by-layer account's `combined_cycles` and costs
//! `combined_energy_pj`; pipelined, the unit still lengthens the run. Hand counts of the
//! rule on a tiny chip are in crates/chip/tests/chip.rs (`digital_unit_by_hand`).

use crate::common;
use common::{col, ok, read_csv, s, sresim};
use std::path::Path;

const VIT: &str = "tests/fixtures/torch-vit";

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

fn run_chip(dir: &Path, schedule: &str) {
    let sched = format!("chip.schedule={schedule}");
    ok(&sresim(&[
        "run",
        "--workload",
        VIT,
        "--samples",
        "2",
        "--out",
        s(dir),
        "-q",
        "--set",
        "chip.preset=isaac",
        "--set",
        "chip.count=auto",
        "--set",
        "chip.data_movement=free",
        "--set",
        "chip.replication=none",
        "--set",
        &sched,
    ]));
}

#[test]
fn a_transformer_chip_run_layer_by_layer_is_the_combined_account() {
    let dir = tempfile::tempdir().unwrap();
    run_chip(dir.path(), "layer-by-layer");
    let sum = summary(dir.path());
    let modes = sum["modes"].as_object().unwrap();
    assert!(!modes.is_empty());
    for (m, o) in modes {
        let chip = &sum["chip"]["modes"][m];
        let combined = o["combined_cycles"].as_u64().unwrap();
        assert!(
            combined > o["cycles"].as_u64().unwrap(),
            "{m}: digital work"
        );
        assert_eq!(chip["run_cycles"].as_u64(), Some(combined), "{m}");
        assert_eq!(chip["energy_pj"], o["combined_energy_pj"], "{m}");
    }
    // Each layer: from its start to its end, its crossbar cycles and the unit's after it.
    let (head, rows) = read_csv(&dir.path().join("layers.csv"));
    let (layer, start, end, comb) = (
        col(&head, "layer"),
        col(&head, "chip_start_cycle"),
        col(&head, "chip_end_cycle"),
        col(&head, "combined_cycles"),
    );
    let n = |r: &Vec<String>, i: usize| r[i].parse::<u64>().unwrap();
    let cycles = col(&head, "cycles");
    let first = &rows[0][col(&head, "mode")];
    // The unit's crossbar cycles after each layer (the same in every mode), 2 samples.
    let mut unit = Vec::new();
    for r in rows.iter().filter(|r| r[layer] != "TOTAL") {
        assert_eq!(n(r, end) - n(r, start), n(r, comb), "{r:?}");
        if &r[col(&head, "mode")] == first {
            unit.push(n(r, comb) - n(r, cycles));
        }
    }
    assert!(unit.iter().any(|&d| d > 0));

    // Pipelined: never longer than layer by layer; one image alone still waits for the
    // unit's share of it after every layer (floor(D / 2) of 2 samples).
    let pip = tempfile::tempdir().unwrap();
    run_chip(pip.path(), "pipelined");
    let p = summary(pip.path());
    let one: u64 = unit.iter().map(|d| d / 2).sum();
    for m in modes.keys() {
        let (a, b) = (&sum["chip"]["modes"][m], &p["chip"]["modes"][m]);
        assert!(b["run_cycles"].as_u64() <= a["run_cycles"].as_u64(), "{m}");
        assert!(b["latency_cycles"].as_u64().unwrap() > one, "{m}");
        assert_eq!(
            b["energy_pj"], a["energy_pj"],
            "{m}: free movement, no static energy"
        );
    }
}
