//! The committed workload bundles (every `workloads/*/manifest.json`): each opens with the
//! default config's precision, its manifest geometry matches its tensors and what the
//! loader makes of them, and a run on it needs fewer OU operations and cycles with
//! sparsity than dense. Also: `sresim run` with no arguments runs the embedded default.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crossbar::Mode;
use engine::EngineKind;
use ndarray::ArrayD;
use ndarray_npy::NpzReader;
use serde_json::Value;
use sim::config::{self, Resolved};
use sim::run::{run, RunSpec};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use workload::bundle::BundleWorkload;
use workload::resolve::OpenOptions;
use workload::{ConvGeometry, LayerKind, Workload};

/// The bundles the repository ships; the test fails if one of them goes missing.
const SHIPPED: [&str; 7] = [
    "fmnist-cnn",
    "fmnist-cnn-ssl",
    "lenet5-mnist",
    "lenet5-mnist-ssl",
    "mobilenetv2-nsfwjs",
    "mobilenetv2-nsfwjs-pruned",
    "ppocr-cls-mobilenetv3",
];

/// The tracked bundles of workloads/ (a user's untracked `workloads/mynet` is not one).
fn bundle_dirs() -> Vec<PathBuf> {
    let dirs = common::tracked_bundles();
    let names: Vec<String> = dirs.iter().map(|d| dir_name(d)).collect();
    for s in SHIPPED {
        assert!(names.iter().any(|n| n == s), "workloads/{s} is missing");
    }
    dirs
}

fn dir_name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

fn default_config() -> Resolved {
    config::load(None, &[]).expect("the default config loads")
}

fn open(dir: &Path, cfg: &Resolved) -> BundleWorkload {
    let opts = OpenOptions {
        precision: cfg.precision(),
        ..OpenOptions::default()
    };
    BundleWorkload::open(dir, &opts)
        .unwrap_or_else(|e| panic!("{}: does not open: {e:#}", dir.display()))
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap_or_else(|| panic!("{v} is not an array"))
        .iter()
        .map(|x| x.as_u64().expect("a non-negative integer") as usize)
        .collect()
}

fn num(v: &Value, key: &str) -> usize {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}")) as usize
}

/// What the manifest entry says, read with serde_json (not the crate's parser): the
/// geometry, the weight shape and the shape of one input sample.
fn manifest_layer(l: &Value) -> (ConvGeometry, Vec<usize>, Vec<usize>) {
    match l["kind"].as_str() {
        Some("conv") => {
            let pair = |k: &str| {
                let v = usizes(&l[k]);
                assert_eq!(v.len(), 2, "{k} of {}", l["name"]);
                [v[0], v[1]]
            };
            let shape = usizes(&l["input_shape"]);
            let g = ConvGeometry {
                in_channels: num(l, "in_channels"),
                out_channels: num(l, "out_channels"),
                kernel: pair("kernel"),
                stride: pair("stride"),
                padding: pair("padding"),
                dilation: pair("dilation"),
                groups: num(l, "groups"),
                input_hw: [shape[1], shape[2]],
            };
            assert_eq!(shape[0], g.in_channels, "{}: input_shape C", l["name"]);
            let w = vec![
                g.out_channels,
                g.in_channels / g.groups,
                g.kernel[0],
                g.kernel[1],
            ];
            (g, w, shape)
        }
        Some("fc") => {
            let (i, o) = (num(l, "in_features"), num(l, "out_features"));
            match l.get("tokens") {
                // A projection over a sequence: input [N, T, in], T input vectors a sample.
                Some(_) => {
                    let t = num(l, "tokens");
                    (ConvGeometry::fc_tokens(i, o, t), vec![o, i], vec![t, i])
                }
                None => (ConvGeometry::fc(i, o), vec![o, i], vec![i]),
            }
        }
        other => panic!("{}: unknown kind {other:?}", l["name"]),
    }
}

#[test]
fn every_bundle_opens_and_its_geometry_matches_manifest_tensors_and_loader() {
    let cfg = default_config();
    for dir in bundle_dirs() {
        let name = dir_name(&dir);
        let w = open(&dir, &cfg);
        let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
        let manifest: Value = serde_json::from_str(&text).unwrap();
        let entries = manifest["layers"].as_array().expect("layers");
        assert_eq!(w.layers().len(), entries.len(), "{name}: layer count");
        assert!(!entries.is_empty(), "{name}: no layers");
        let samples = w.available_samples();
        assert!(samples >= 1, "{name}: no samples");
        if let Some(n) = manifest["samples"].as_u64() {
            assert_eq!(samples, n as usize, "{name}: samples");
        }
        let mut npz = NpzReader::new(File::open(dir.join("tensors.npz")).unwrap()).unwrap();
        for (i, (l, spec)) in entries.iter().zip(w.layers()).enumerate() {
            let at = format!("{name}: layer {i} ({})", spec.name);
            assert_eq!(l["name"].as_str(), Some(spec.name.as_str()), "{at}: name");
            let (geom, wshape, xshape) = manifest_layer(l);
            let kind = if l["kind"] == "fc" {
                LayerKind::Fc
            } else {
                LayerKind::Conv
            };
            assert_eq!(spec.kind, kind, "{at}: kind");
            assert_eq!(spec.geom, geom, "{at}: geometry");

            // The tensors have the shapes the manifest promises.
            let wkey = l["weight"].as_str().expect("weight");
            let xkey = l["input"]
                .as_str()
                .expect("every shipped layer has its input");
            let wf: ArrayD<f32> = npz.by_name(wkey).unwrap();
            let xf: ArrayD<f32> = npz.by_name(xkey).unwrap();
            assert_eq!(wf.shape(), &wshape[..], "{at}: {wkey} shape");
            let mut want_x = vec![samples];
            want_x.extend(&xshape);
            assert_eq!(xf.shape(), &want_x[..], "{at}: {xkey} shape");

            // The loader reads them with that geometry: weights Cout * K with
            // K = (Cin / G) * R * S, inputs samples * C * H * W.
            let q = w.load_layer(i, cfg.precision(), samples).unwrap();
            let k = geom.in_channels / geom.groups * geom.kernel[0] * geom.kernel[1];
            assert_eq!(q.weights.len(), geom.out_channels * k, "{at}: weights");
            let chw = geom.in_channels * geom.input_hw[0] * geom.input_hw[1];
            assert_eq!(q.input.len(), samples * chw, "{at}: inputs");
            assert_eq!(q.samples, samples, "{at}: samples");
            // Quantization keeps exact zeros zero, element by element (same layout).
            for (f, q) in wf.iter().zip(&q.weights) {
                assert!(*f != 0.0 || *q == 0, "{at}: a zero weight quantized to {q}");
            }
            // A projection over tokens is stored [N, T, in] and loaded [N, in, T] (channels,
            // then positions, as a conv's input): compare in the loader's order.
            let xf = match xshape.len() {
                2 => xf.view().permuted_axes(vec![0, 2, 1]),
                _ => xf.view(),
            };
            for (f, q) in xf.iter().zip(&q.input) {
                assert!(*f != 0.0 || *q == 0, "{at}: a zero input quantized to {q}");
            }
        }
    }
}

#[test]
fn a_run_on_every_bundle_needs_fewer_ou_operations_than_dense() {
    let cfg = default_config();
    let modes = [
        Mode::Dense,
        Mode::Weight,
        Mode::Activation,
        Mode::Sre,
        Mode::Ideal,
    ];
    for dir in bundle_dirs() {
        let name = dir_name(&dir);
        let w = open(&dir, &cfg);
        let res = run(&RunSpec {
            workload: &w,
            cfg: &cfg,
            modes: &modes,
            engine: EngineKind::Fast,
            samples: 1,
            progress: false,
        })
        .unwrap_or_else(|e| panic!("{name}: run fails: {e:#}"));
        assert_eq!(res.layers.len(), w.layers().len() * modes.len(), "{name}");
        let t = |m: Mode| res.total(m).unwrap().events;
        let (dense, weight, act, sre) = (
            t(Mode::Dense),
            t(Mode::Weight),
            t(Mode::Activation),
            t(Mode::Sre),
        );
        // Every mode replays the same input vectors.
        for m in modes {
            assert_eq!(t(m).vectors, dense.vectors, "{name}: {m:?} vectors");
        }
        assert!(
            act.ou_ops < dense.ou_ops,
            "{name}: activation {} OU ops, dense {}",
            act.ou_ops,
            dense.ou_ops
        );
        assert!(
            sre.ou_ops < dense.ou_ops,
            "{name}: sre {} OU ops, dense {}",
            sre.ou_ops,
            dense.ou_ops
        );
        assert!(
            sre.ou_ops <= weight.ou_ops,
            "{name}: sre {} OU ops, weight {}",
            sre.ou_ops,
            weight.ou_ops
        );
        assert!(
            sre.cycles < dense.cycles,
            "{name}: sre {} cycles, dense {}",
            sre.cycles,
            dense.cycles
        );
    }
}

#[test]
fn sresim_run_without_arguments_runs_the_embedded_lenet5_mnist() {
    // From an empty directory: the default bundle is embedded, not read from workloads/.
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sresim"))
        .arg("run")
        .current_dir(dir.path())
        .output()
        .expect("binary runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("lenet5-mnist"), "{stdout}");
    for m in ["dense", "weight", "activation", "sre", "ideal"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(m)),
            "no {m} row in:\n{stdout}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a run without --out writes no files"
    );
}
