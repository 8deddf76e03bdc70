//! `tech.node` and `adc.energy_law` end to end (docs/technology.md): 32 nm is every
//! output byte for byte, energy and area fall with the node in every mode and component
//! while cycles stay, the Walden law prices each conversion at E_8 * 2^(b-8), and a node
//! that is not one of the five is one error line naming the key and the valid nodes.
#![allow(clippy::disallowed_methods)]
// tests make their fixtures with std::fs

// Test code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{col, read_csv, run_fails, run_ok, s, write};

use std::path::{Path, PathBuf};

/// Runs lenet5-mnist (one image, every mode, the isaac chip) into `dir/name`.
fn run(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut a = vec![
        "run",
        "--samples",
        "1",
        "-q",
        "--set",
        "chip.preset=isaac",
        "--out",
        s(&out),
    ];
    a.extend(extra);
    run_ok(&a);
    out
}

fn bytes(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).unwrap()
}

/// The default, `--set tech.node=32` and a config file saying `[tech] node = 32` (with
/// the default ADC law spelled out) write the same bytes, functional columns included.
#[test]
fn thirty_two_nm_is_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "c.toml",
        "[tech]\nnode = 32\n[adc]\nenergy_law = \"isaac\"\n",
    );
    let base = run(d, "base", &["--functional"]);
    let set = run(d, "set", &["--functional", "--set", "tech.node=32"]);
    let file = run(d, "file", &["--functional", "--config", s(&cfg)]);
    for f in ["layers.csv", "summary.json"] {
        assert_eq!(bytes(&base, f), bytes(&set, f), "{f}");
    }
    assert_eq!(bytes(&base, "layers.csv"), bytes(&file, "layers.csv"));
    // The summary names its config's origin; every other byte is the same.
    let strip = |p: &Path| {
        let mut v: serde_json::Value = serde_json::from_slice(&bytes(p, "summary.json")).unwrap();
        v.as_object_mut().unwrap().remove("config_origin");
        v
    };
    assert_eq!(strip(&base), strip(&file));
    let summary = String::from_utf8(bytes(&base, "summary.json")).unwrap();
    assert!(!summary.contains("node_nm") && !summary.contains("\"tech\""));
}

/// The TOTAL row of one mode: (mode, cycles, energy_pj, [(e_* column, pJ)]).
type Total = (String, String, f64, Vec<(String, f64)>);

fn totals(out: &Path) -> Vec<Total> {
    let (h, rows) = read_csv(&out.join("layers.csv"));
    let comps: Vec<&String> = h.iter().filter(|c| c.starts_with("e_")).collect();
    rows.iter()
        .filter(|r| r[col(&h, "layer")] == "TOTAL")
        .map(|r| {
            (
                r[col(&h, "mode")].clone(),
                r[col(&h, "cycles")].clone(),
                r[col(&h, "energy_pj")].parse().unwrap(),
                comps
                    .iter()
                    .map(|c| ((*c).clone(), r[col(&h, c)].parse().unwrap()))
                    .collect(),
            )
        })
        .collect()
}

fn occupied_area(out: &Path, mode: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_slice(&bytes(out, "summary.json")).unwrap();
    v["chip"]["modes"][mode]["area_occupied_mm2"]
        .as_f64()
        .unwrap()
}

/// From 45 to 7 nm: in every mode the cycles stay, the energy and the occupied chip area
/// fall at each step, every CMOS component's energy falls, the crossbar read stays.
#[test]
fn energy_and_area_fall_with_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let runs: Vec<PathBuf> = ["45", "32", "22", "14", "7"]
        .iter()
        .map(|n| run(dir.path(), n, &["--set", &format!("tech.node={n}")]))
        .collect();
    for w in runs.windows(2) {
        let (big, small) = (totals(&w[0]), totals(&w[1]));
        assert_eq!(big.len(), 5);
        for (b, t) in big.iter().zip(&small) {
            assert_eq!((&b.0, &b.1), (&t.0, &t.1), "mode and cycles");
            assert!(t.2 < b.2, "{} energy {:?} -> {:?}", b.0, w[0], w[1]);
            for ((name, x), (_, y)) in b.3.iter().zip(&t.3) {
                match name.as_str() {
                    "e_xbar_pj" => assert_eq!(x, y),
                    _ if *x == 0.0 => assert_eq!(*y, 0.0, "{name}"),
                    _ => assert!(y < x, "{} {name}: {x} -> {y}", b.0),
                }
            }
            assert!(occupied_area(&w[1], &b.0) < occupied_area(&w[0], &b.0));
        }
    }
}

/// ADC energy per layer under each law: with the same conversions, the Walden law's
/// e_adc over the reference law's is 2^(b-8) / ((2^b/(b+1)) / (2^8/9)) at the layer's
/// ADC resolution b (5 bits for the 9-row OU modes, 9 bits for ideal's 128 rows).
#[test]
fn adc_energy_follows_the_chosen_law() {
    let dir = tempfile::tempdir().unwrap();
    let isaac = run(dir.path(), "isaac", &[]);
    let walden = run(dir.path(), "walden", &["--set", "adc.energy_law=walden"]);
    let (h, ri) = read_csv(&isaac.join("layers.csv"));
    let (_, rw) = read_csv(&walden.join("layers.csv"));
    let (adc, bits) = (col(&h, "e_adc_pj"), col(&h, "adc_bits"));
    let mut seen = std::collections::BTreeSet::new();
    for (a, b) in ri.iter().zip(&rw) {
        if a[col(&h, "layer")] == "TOTAL" {
            continue;
        }
        let bits: i32 = a[bits].parse().unwrap();
        seen.insert(bits);
        let law = |b: i32| 2f64.powi(b) / (b as f64 + 1.0) / (256.0 / 9.0);
        let want = 2f64.powi(bits - 8) / law(bits);
        let (ei, ew): (f64, f64) = (a[adc].parse().unwrap(), b[adc].parse().unwrap());
        assert!(ei > 0.0);
        assert!((ew / ei - want).abs() < 1e-12, "{bits} bits: {ew} / {ei}");
    }
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), [5, 9]);
}

/// A node that is not one of the five, or not a number, is one line naming tech.node
/// (and the valid nodes), before anything is written.
#[test]
fn bad_nodes_are_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cfg = write(dir.path(), "c.toml", "[tech]\nnode = 10\n");
    let valid = "(expected one of 45, 32, 22, 14, 7)";
    for (args, names) in [
        (
            vec!["--set", "tech.node=28"],
            "--set tech.node=28: tech.node: 28 is not",
        ),
        (vec!["--config", s(&cfg)], "c.toml: tech.node: 10 is not"),
        (vec!["--set", "tech.node=0"], "tech.node: 0 is not"),
    ] {
        let mut a = vec!["run", "--samples", "1", "--out", s(&out)];
        a.extend(args);
        let e = run_fails(&a);
        assert!(e.contains(names) && e.contains(valid), "{e}");
        assert!(!out.exists());
    }
    let e = run_fails(&["run", "--set", "tech.node=big", "--out", s(&out)]);
    assert!(e.contains("tech.node"), "{e}");
    let e = run_fails(&["run", "--set", "adc.energy_law=walton", "--out", s(&out)]);
    assert!(
        e.contains("adc.energy_law") && e.contains("\"walden\""),
        "{e}"
    );
    let e = run_fails(&["run", "--set", "tech.nodes=7", "--out", s(&out)]);
    assert!(e.contains("did you mean \"tech.node\""), "{e}");
    assert!(!out.exists());
}

/// The committed grid sweeps the node; its TOTAL rows hold every node and mode.
#[test]
fn the_tech_node_grid_runs() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/sweeps/tech-node.toml"),
    )
    .unwrap();
    let all =
        "workloads = [\"lenet5-mnist\", \"ppocr-cls-mobilenetv3\", \"mobilenetv2-nsfwjs-pruned\"]";
    assert!(text.contains(all));
    // One image of the smallest workload keeps the test quick.
    let one = text.replace(all, "workloads = [\"lenet5-mnist\"]\nsamples = 1");
    let grid = write(dir.path(), "g.toml", &one);
    let out = dir.path().join("sw");
    run_ok(&["sweep", "-q", "--grid", s(&grid), "--out", s(&out)]);
    let (h, rows) = read_csv(&out.join("points.csv"));
    let mut nodes: Vec<&str> = rows
        .iter()
        .filter(|r| r[col(&h, "layer")] == "TOTAL" && r[col(&h, "mode")] == "sre")
        .map(|r| r[col(&h, "tech.node")].as_str())
        .collect();
    nodes.sort_unstable();
    assert_eq!(nodes, ["14", "22", "32", "45", "7"]);
    assert!(h.iter().any(|c| c == "chip_area_occupied_mm2"));
}
