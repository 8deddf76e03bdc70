//! The bundle contract between tools/export_onnx.py and the reader: `sresim check` applies
//! the rules `run` and `accuracy` apply at open, the exporter's mirror of them
//! (tools/sresim_export/schema.json) holds the reader's key tables, the shared cases of
//! tools/tests/fixtures/schema_cases.json get the recorded messages (the Python tests run
//! the mirror on the same file), and the bundle exported from a model written by
//! torch.onnx (tests/fixtures/torch-cnn) opens for every command.

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests make their fixtures and read outputs with std::fs.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{fails, ok, s, sresim};

use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn json(p: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo(p)).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

const FIXTURE: &str = "tests/fixtures/torch-cnn";

#[test]
fn the_exporters_schema_mirror_holds_the_readers_key_tables() {
    let m = json("tools/sresim_export/schema.json");
    let list = |k: &str| strings(&m[k]);
    let own = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(list("manifest_keys"), own(&workload::bundle::TOP_KEYS));
    assert_eq!(list("graph_keys"), own(&workload::bundle::GRAPH_KEYS));
    assert_eq!(list("conv_keys"), own(&workload::bundle::CONV_KEYS));
    assert_eq!(list("fc_keys"), own(&workload::bundle::FC_KEYS));
    let ops = m["graph_ops"].as_object().unwrap();
    let mut names: Vec<&String> = ops.keys().collect();
    let mut want: Vec<&str> = network::bundle::OPS.to_vec();
    names.sort();
    want.sort();
    assert_eq!(names, want);
    for op in network::bundle::OPS {
        assert_eq!(
            strings(&ops[op]),
            own(network::bundle::attribute_keys(op)),
            "{op}"
        );
    }
}

/// A copy of the fixture bundle in a temporary directory with `edit` applied to its
/// manifest.
fn edited(edit: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut m = json(&format!("{FIXTURE}/manifest.json"));
    edit(&mut m);
    std::fs::write(dir.path().join("manifest.json"), m.to_string()).unwrap();
    std::fs::copy(
        repo(&format!("{FIXTURE}/tensors.npz")),
        dir.path().join("tensors.npz"),
    )
    .unwrap();
    dir
}

#[test]
fn the_shared_schema_cases_get_the_recorded_messages() {
    let cfg = sim::config::load(None, &[]).unwrap();
    let cases = json("tools/tests/fixtures/schema_cases.json");
    let cases = cases["cases"].as_array().unwrap();
    assert!(cases.len() >= 8);
    for case in cases {
        let path = case["path"].as_array().unwrap().clone();
        let value = case["value"].clone();
        let dir = edited(|m| {
            if let Some((last, head)) = path.split_last() {
                let mut t = m;
                for k in head {
                    t = match k {
                        Value::String(k) => &mut t[k.as_str()],
                        k => &mut t[k.as_u64().unwrap() as usize],
                    };
                }
                match last {
                    Value::String(k) => t[k.as_str()] = value,
                    k => t[k.as_u64().unwrap() as usize] = value,
                }
            }
        });
        let got = sim::check::check(s(dir.path()), &cfg);
        match case["error"].as_str() {
            None => {
                got.unwrap_or_else(|e| panic!("{}: {e:#}", case["what"]));
            }
            Some(want) => {
                let e = format!("{:#}", got.unwrap_err());
                let label = dir.path().join("manifest.json");
                assert_eq!(
                    e,
                    format!("{}: {want}", label.display()),
                    "{}",
                    case["what"]
                );
            }
        }
    }
}

#[test]
fn check_prints_one_ok_line_for_the_torch_fixture_and_every_committed_bundle() {
    let out = ok(&sresim(&["check", FIXTURE]));
    assert_eq!(
        out,
        format!("ok: {FIXTURE}: torch_cnn: 5 layers, 12 samples; graph of 12 nodes over 12 samples, labelled\n")
    );
    let out = ok(&sresim(&["check", "workloads/mobilenetv2-nsfwjs-pruned"]));
    assert!(
        out.ends_with("55 layers, 1 sample; no graph (run only; accuracy needs a graph)\n"),
        "{out}"
    );
}

/// torch.onnx's model runs and gives its top-1 through `accuracy` without a hand edit.
#[test]
fn the_torch_fixture_runs_and_gives_its_float_top1() {
    let dir = tempfile::tempdir().unwrap();
    ok(&sresim(&[
        "accuracy",
        "-w",
        FIXTURE,
        "--modes",
        "none",
        "-q",
        "-o",
        s(dir.path()),
    ]));
    let (header, rows) = common::read_csv(&dir.path().join("accuracy.csv"));
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let total = rows.iter().find(|r| r[at("layer")] == "TOTAL").unwrap();
    assert_eq!(total[at("top1_float")].parse::<f64>().unwrap(), 1.0);
    assert_eq!(total[at("samples")], "12");
    ok(&sresim(&["run", "-w", FIXTURE, "-q", "--modes", "sre"]));
}

/// The float path through the fixture's graph (MaxPools that carry `dilations` [1, 1], a
/// conv with dilation 2) computes onnxruntime's logits, stored in the bundle as
/// `graph.reference` when it was exported.
#[test]
fn the_torch_fixtures_float_logits_are_onnxruntimes() {
    use ndarray::{Array2, ArrayD};
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("logits.npy");
    ok(&sresim(&[
        "accuracy",
        "-w",
        FIXTURE,
        "--float-logits",
        s(&f),
        "-q",
    ]));
    let got: Array2<f64> = ndarray_npy::read_npy(&f).unwrap();
    let npz = std::fs::File::open(repo(&format!("{FIXTURE}/tensors.npz"))).unwrap();
    let want: ArrayD<f32> = ndarray_npy::NpzReader::new(npz)
        .unwrap()
        .by_name("graph.reference.npy")
        .unwrap();
    assert_eq!(got.shape(), want.shape());
    let scale = want.iter().fold(0f64, |m, &v| m.max((v as f64).abs()));
    let err = got
        .iter()
        .zip(want.iter())
        .fold(0f64, |m, (&g, &w)| m.max((g - w as f64).abs()));
    assert!(err <= 1e-4 * scale, "max error {err} of {scale}");
}

/// A graph attribute the reader refuses is refused alike by check, run and accuracy (one
/// open for all: docs/exporting.md, "Checking a bundle").
#[test]
fn check_run_and_accuracy_refuse_a_dilated_pool_with_the_same_line() {
    let dir = edited(|m| m["graph"][2]["dilations"] = serde_json::json!([2, 2]));
    let want = format!(
        "error: {}: graph[2] (MaxPool -> /pool/MaxPool_output_0): dilations: dilated pooling is not supported (expected [1, 1])\n",
        dir.path().join("manifest.json").display()
    );
    for args in [
        vec!["check", s(dir.path())],
        vec!["run", "-q", "-w", s(dir.path())],
        vec!["accuracy", "-q", "-w", s(dir.path())],
    ] {
        assert_eq!(fails(&sresim(&args)), want, "{args:?}");
    }
    let e = fails(&sresim(&["check", "resnet18"]));
    assert!(
        e.contains("resnet18: a built-in network, not a bundle"),
        "{e}"
    );
    let e = fails(&sresim(&["check", "workloads/none-such"]));
    assert!(e.contains("no such bundle directory"), "{e}");
}
