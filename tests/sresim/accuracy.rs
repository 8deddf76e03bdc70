//! `sresim accuracy` through the binary (docs/accuracy.md): the exact datapath keeps the
//! quantized network's predictions, noise costs accuracy, threads change nothing, and a
//! bad graph is one line naming the node.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{run_ok as ok, sresim};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// accuracy.csv as rows keyed by column name.
fn rows(dir: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(dir.join("accuracy.csv")).unwrap();
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            head.iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn total<'a>(rows: &'a [HashMap<String, String>], mode: &str) -> &'a HashMap<String, String> {
    rows.iter()
        .find(|r| r["layer"] == "TOTAL" && r["mode"] == mode)
        .unwrap_or_else(|| panic!("no TOTAL row for {mode}"))
}

fn num(r: &HashMap<String, String>, col: &str) -> f64 {
    r[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}: {:?}", r[col]))
}

#[test]
fn with_an_ideal_device_every_mode_predicts_what_the_quantized_network_predicts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    ok(&["accuracy", "--samples", "3", "--out", out, "-q"]);
    let r = rows(dir.path());
    let q = total(&r, "quantized");
    for mode in ["dense", "weight", "activation", "sre", "ideal"] {
        let t = total(&r, mode);
        // Not close: equal. Same predictions, same logits (the datapath is exact).
        assert_eq!(t["top1"], q["top1"], "{mode}");
        assert_eq!(num(t, "agreement_quantized"), 1.0, "{mode}");
        assert_eq!(t["output_rel_rmse"], q["output_rel_rmse"], "{mode}");
        for l in r
            .iter()
            .filter(|l| l["mode"] == mode && l["layer"] != "TOTAL")
        {
            assert_eq!(num(l, "func_exact_frac"), 1.0, "{mode} {}", l["layer"]);
            assert_eq!(num(l, "func_max_abs_err"), 0.0, "{mode} {}", l["layer"]);
        }
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["samples"], 3);
    assert_eq!(summary["modes"]["sre"]["agreement_quantized"], 1.0);
}

#[test]
fn the_16_bit_quantized_network_agrees_with_the_float_network_on_99_percent_of_the_digits() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "accuracy",
        "--modes",
        "none",
        "--out",
        dir.path().to_str().unwrap(),
        "-q",
    ]);
    let r = rows(dir.path());
    let q = total(&r, "quantized");
    assert!(num(q, "samples") >= 500.0);
    assert!(num(q, "agreement") >= 0.99, "agreement {}", q["agreement"]);
    // labelled: a top-1 against the labels, the float network's beside it
    assert!(num(q, "top1_float") > 0.9);
}

/// fc2 through the crossbar datapath alone, on a read noise raised step by step (same seed):
/// the logits drift further from the float network's and fewer predictions agree.
#[test]
fn accuracy_falls_when_the_read_noise_is_raised() {
    let run = |noise: &str| {
        let dir = tempfile::tempdir().unwrap();
        let set = format!("device.read_noise={noise}");
        ok(&[
            "accuracy",
            "--samples",
            "150",
            "--modes",
            "sre",
            "--layers",
            "fc2",
            "--set",
            &set,
            "--set",
            "device.seed=7",
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ]);
        let r = rows(dir.path());
        let t = total(&r, "sre").clone();
        let fc2 = r
            .iter()
            .find(|l| l["mode"] == "sre" && l["layer"] == "fc2")
            .unwrap()
            .clone();
        // --layers: only fc2 went through the datapath
        let conv1 = r
            .iter()
            .find(|l| l["mode"] == "sre" && l["layer"] == "conv1")
            .unwrap();
        assert_eq!(conv1["func_exact_frac"], "");
        (
            num(&t, "agreement"),
            num(&t, "output_rel_rmse"),
            num(&fc2, "func_rel_rmse"),
        )
    };
    let (a0, e0, f0) = run("0");
    let (a1, e1, f1) = run("0.5");
    let (a2, e2, f2) = run("4");
    assert_eq!(f0, 0.0);
    assert!(f0 < f1 && f1 < f2, "fc2 error {f0} {f1} {f2}");
    assert!(e0 < e1 && e1 < e2, "output error {e0} {e1} {e2}");
    assert!(a0 >= a1 && a1 >= a2 && a2 < a0, "agreement {a0} {a1} {a2}");
}

#[test]
fn results_do_not_depend_on_threads() {
    let run = |threads: &str| {
        let dir = tempfile::tempdir().unwrap();
        ok(&[
            "accuracy",
            "--samples",
            "30",
            "--modes",
            "sre,dense",
            "--layers",
            "fc2",
            "--set",
            "device.preset=noisy-rram",
            "--threads",
            threads,
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ]);
        std::fs::read(dir.path().join("accuracy.csv")).unwrap()
    };
    assert_eq!(run("1"), run("2"));
}

#[test]
fn float_logits_are_written_as_npy() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("logits.npy");
    ok(&[
        "accuracy",
        "--samples",
        "5",
        "--float-logits",
        f.to_str().unwrap(),
        "-q",
    ]);
    let bytes = std::fs::read(&f).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(header.contains("'shape': (5, 10)"), "{header}");
    assert_eq!(bytes.len() - 10 - hlen, 5 * 10 * 8);
}

/// A copy of lenet5-mnist whose manifest `edit` changes.
fn bundle_with(edit: impl Fn(&mut serde_json::Value)) -> (tempfile::TempDir, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    std::fs::create_dir(&b).unwrap();
    std::fs::copy(src.join("tensors.npz"), b.join("tensors.npz")).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("manifest.json")).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(b.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    (dir, b)
}

fn one_line_error(b: &Path, wants: &[&str]) {
    let o = sresim(&[
        "accuracy",
        "--workload",
        b.to_str().unwrap(),
        "--samples",
        "1",
        "--modes",
        "none",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    for w in wants {
        assert!(err.contains(w), "{w:?} not in {err}");
    }
}

#[test]
fn every_bad_graph_is_one_line_naming_the_node() {
    // an op the list does not have
    let (_d, b) = bundle_with(|m| m["graph"][1]["op"] = "Erf".into());
    one_line_error(&b, &["graph[1]", "Erf"]);
    // an input no earlier node writes
    let (_d, b) = bundle_with(|m| m["graph"][2]["inputs"][0] = "nowhere".into());
    one_line_error(&b, &["graph[2]", "nowhere"]);
    // a shape that does not fit the layer: conv2 fed the unpooled conv1 output
    let (_d, b) = bundle_with(|m| m["graph"][2]["inputs"][0] = "c1".into());
    one_line_error(&b, &["graph[2]", "conv2"]);
    // a layer the manifest does not list
    let (_d, b) = bundle_with(|m| m["graph"][5]["layer"] = "fc9".into());
    one_line_error(&b, &["graph[5]", "fc9"]);
    // no calibrated range: the layer is named
    let (_d, b) = bundle_with(|m| {
        m["layers"][1].as_object_mut().unwrap().remove("input_max");
    });
    one_line_error(&b, &["layers[1]", "conv2", "input_max"]);
    // a bundle without a graph
    let (_d, b) = bundle_with(|m| {
        let o = m.as_object_mut().unwrap();
        for k in ["graph", "graph_input", "graph_output", "labels"] {
            o.remove(k);
        }
    });
    one_line_error(&b, &["graph: absent"]);
}

/// The NeuroSim preset is an on/off ratio of 17 with no variation: the reference column
/// removes the off current exactly, so its reads are exact (configs/device/neurosim-rram.toml).
#[test]
fn an_on_off_ratio_with_a_reference_column_and_no_variation_reads_exactly() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "accuracy",
        "--samples",
        "10",
        "--modes",
        "sre",
        "--layers",
        "fc*",
        "--set",
        "device.preset=neurosim-rram",
        "--out",
        dir.path().to_str().unwrap(),
        "-q",
    ]);
    let r = rows(dir.path());
    for l in r
        .iter()
        .filter(|l| l["mode"] == "sre" && l["layer"].starts_with("fc"))
    {
        assert_eq!(num(l, "func_exact_frac"), 1.0, "{}", l["layer"]);
    }
    assert_eq!(num(total(&r, "sre"), "agreement_quantized"), 1.0);
}

/// Every file of configs/device is a shipped preset: `device.preset = "NAME"` selects it
/// and the resolved config carries each of its keys (summary.json).
#[test]
fn every_shipped_device_preset_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names: Vec<_> = common::tracked_files(root, "configs/device")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    for p in names {
        let name = p.file_stem().unwrap().to_str().unwrap();
        let file: toml::Table = std::fs::read_to_string(&p).unwrap().parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let set = format!("device.preset={name}");
        ok(&[
            "accuracy",
            "--samples",
            "1",
            "--modes",
            "none",
            "--set",
            &set,
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ]);
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap())
                .unwrap();
        let dev = &summary["config_values"]["device"];
        assert_eq!(dev["preset"], name);
        for (k, v) in file["device"].as_table().unwrap() {
            let want: serde_json::Value = serde_json::to_value(v).unwrap();
            match (want.as_f64(), dev[k].as_f64()) {
                (Some(a), Some(b)) => assert_eq!(a, b, "{name}: device.{k}"),
                _ => assert_eq!(dev[k], want, "{name}: device.{k}"),
            }
        }
    }
}

/// The literature presets with variation: their own spread costs output accuracy against
/// the quantized network, and a larger spread (same seed) costs more.
#[test]
fn raising_a_literature_presets_variation_raises_the_output_error() {
    let run = |preset: &str, set: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        let mut a: Vec<String> = [
            "accuracy",
            "--samples",
            "10",
            "--modes",
            "sre",
            "--layers",
            "fc2",
            "--set",
            "device.seed=3",
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ]
        .map(String::from)
        .to_vec();
        a.extend(["--set".into(), format!("device.preset={preset}")]);
        if let Some(s) = set {
            a.extend(["--set".into(), s.to_string()]);
        }
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        ok(&a);
        let r = rows(dir.path());
        (
            num(total(&r, "quantized"), "output_rel_rmse"),
            num(total(&r, "sre"), "output_rel_rmse"),
            num(total(&r, "sre"), "agreement_quantized"),
        )
    };
    // DL-RSim's log10 R sds doubled (tripled, the high-resistance state's log-normal mean
    // conductance would pass the low one's, which the reader refuses), CrossSim's sd
    // polynomial tripled.
    for (preset, raised) in [
        ("dlrsim-rram", "device.levels=[[2.62, 0.76], [1.34, 0.12]]"),
        ("milo-rram", "device.level_sigma=[14.346963, -0.027321]"),
    ] {
        let (q, e1, a1) = run(preset, None);
        let (_, e3, a3) = run(preset, Some(raised));
        assert!(q < e1 && e1 < e3, "{preset}: output error {q} {e1} {e3}");
        assert!(a3 <= a1, "{preset}: agreement {a1} {a3}");
    }
}
