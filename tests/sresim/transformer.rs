//! Transformers: a projection over a sequence (`[N, T, in]` by a constant weight) is an fc
//! layer with `tokens` T whose tokens are the crossbar's input vectors, exactly as a 1x1
//! conv over the same values laid out channel-major; the attention's products of two
//! activations run off the crossbar and `run` says so with their multiply-accumulates.
//! The bundle exported from a ViT written by torch.onnx (tests/fixtures/torch-vit, made by
//! tools/tests/fixtures/make_torch_vit.py) runs and scores without a hand edit.

// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests make their fixtures and read outputs with std::fs.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{col, ok, read_csv, s, sresim};

use ndarray::{Array2, Array3, Array4};
use ndarray_npy::NpzWriter;
use std::path::Path;

const FIXTURE: &str = "tests/fixtures/torch-vit";

/// The counting columns of layers.csv (everything but the names and the kind), per row.
fn counts(dir: &Path) -> Vec<Vec<String>> {
    let (head, rows) = read_csv(&dir.join("layers.csv"));
    let skip = [
        col(&head, "network"),
        col(&head, "layer"),
        col(&head, "kind"),
    ];
    rows.iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .filter(|(i, _)| !skip.contains(i))
                .map(|(_, v)| v.clone())
                .collect()
        })
        .collect()
}

/// A value with zeros among it (so that activation sparsity depends on the layout).
fn value(i: usize) -> f32 {
    match (i * 7 + 3) % 5 {
        0 | 1 => 0.0,
        k => k as f32 - 2.5 + (i % 3) as f32,
    }
}

#[test]
fn a_projection_over_tokens_counts_as_a_1x1_conv_over_its_positions() {
    let (n, t, d, e) = (3, 5, 6, 4);
    let x = Array3::<f32>::from_shape_fn((n, t, d), |(a, b, c)| value(a * t * d + b * d + c));
    let w = Array2::<f32>::from_shape_fn((e, d), |(o, c)| value(100 + o * d + c));
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    let conv = dir.path().join("conv");
    std::fs::create_dir_all(&seq).unwrap();
    std::fs::create_dir_all(&conv).unwrap();
    std::fs::write(
        seq.join("manifest.json"),
        r#"{"name": "seq", "layers": [{"name": "q", "kind": "fc", "in_features": 6,
            "out_features": 4, "tokens": 5, "weight": "q.weight", "input": "q.input"}]}"#,
    )
    .unwrap();
    let mut npz = NpzWriter::new(std::fs::File::create(seq.join("tensors.npz")).unwrap());
    npz.add_array("q.weight", &w).unwrap();
    npz.add_array("q.input", &x).unwrap();
    npz.finish().unwrap();
    // The same values as a 1x1 conv: input [N, D, T, 1], weight [E, D, 1, 1].
    std::fs::write(
        conv.join("manifest.json"),
        r#"{"name": "seq", "layers": [{"name": "q", "kind": "conv", "in_channels": 6,
            "out_channels": 4, "kernel": 1, "input_shape": [6, 5, 1], "weight": "q.weight",
            "input": "q.input"}]}"#,
    )
    .unwrap();
    let xc = Array4::<f32>::from_shape_fn((n, d, t, 1), |(a, c, b, _)| x[[a, b, c]]);
    let wc = w.clone().into_shape_with_order((e, d, 1, 1)).unwrap();
    let mut npz = NpzWriter::new(std::fs::File::create(conv.join("tensors.npz")).unwrap());
    npz.add_array("q.weight", &wc).unwrap();
    npz.add_array("q.input", &xc).unwrap();
    npz.finish().unwrap();
    for engine in ["fast", "reference", "cycle"] {
        let (a, b) = (
            dir.path().join(format!("a-{engine}")),
            dir.path().join(format!("b-{engine}")),
        );
        for (bundle, out) in [(&seq, &a), (&conv, &b)] {
            ok(&sresim(&[
                "run",
                "--workload",
                s(bundle),
                "--engine",
                engine,
                "--out",
                s(out),
                "-q",
            ]));
        }
        let (head, rows) = read_csv(&a.join("layers.csv"));
        let dense = rows
            .iter()
            .find(|r| r[col(&head, "mode")] == "dense")
            .unwrap();
        // One input vector per token of every sample.
        assert_eq!(
            dense[col(&head, "vectors")],
            (n * t).to_string(),
            "{engine}"
        );
        assert_eq!(dense[col(&head, "kind")], "fc");
        assert_eq!(counts(&a), counts(&b), "{engine}");
    }
    // A trace of the wrong shape is refused in one line naming the geometry.
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::copy(seq.join("manifest.json"), bad.join("manifest.json")).unwrap();
    let mut npz = NpzWriter::new(std::fs::File::create(bad.join("tensors.npz")).unwrap());
    npz.add_array("q.weight", &w).unwrap();
    npz.add_array(
        "q.input",
        &x.clone().into_shape_with_order((n, t * d)).unwrap(),
    )
    .unwrap();
    npz.finish().unwrap();
    let e = common::fails(&sresim(&["run", "--workload", s(&bad)]));
    assert!(
        e.contains("q.input: shape [3,30] does not match geometry [N,5,6] (tokens, in_features)"),
        "{e}"
    );
}

#[test]
fn the_vit_fixture_runs_with_its_attention_reported_off_the_crossbar() {
    let dir = tempfile::tempdir().unwrap();
    let o = sresim(&["run", "--workload", FIXTURE, "--out", s(dir.path()), "-q"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    // 2 MatMuls of 2 heads x [10, 8] x [8, 10] and [10, 10] x [10, 8]: 1600 each; the
    // crossbar layers: patch conv 9 x 256, 4 projections 10 x 256, fc1 and fc2 10 x 512,
    // head 160.
    assert!(
        err.contains("graph: 2 activation-by-activation MatMul ops run off the crossbar (computed in float by `accuracy`; `run` costs them on the digital unit when the graph has attention or a norm, docs/digital.md, not on crossbars): 3200 multiply-accumulates a sample, beside 22944 on the crossbar layers"),
        "{err}"
    );
    // summary.json lists them, counted by the digital unit (the graph has LayerNorms,
    // docs/digital.md, "In a run"); a network without them has no such key.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let off = &summary["off_crossbar"];
    assert_eq!(off["macs_per_sample"], 3200);
    assert_eq!(summary["macs_per_sample"]["off_crossbar"], 3200);
    assert_eq!(off["counted"], true);
    let digital = &summary["modes"]["sre"]["digital"]["by_class"]["attention"];
    assert!(digital["cycles"].as_u64().unwrap() > 0);
    let ops = off["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 2);
    assert_eq!(ops[0]["node"], "/blocks/blocks.0/attn/MatMul_output_0");
    assert_eq!(
        (ops[0]["op"].as_str(), ops[0]["macs_per_sample"].as_u64()),
        (Some("MatMul"), Some(1600))
    );
    let cnn = tempfile::tempdir().unwrap();
    ok(&sresim(&[
        "run",
        "--workload",
        "tests/fixtures/torch-cnn",
        "--out",
        s(cnn.path()),
        "-q",
    ]));
    let cnn_summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cnn.path().join("summary.json")).unwrap())
            .unwrap();
    assert!(cnn_summary.get("off_crossbar").is_none());
    assert_eq!(cnn_summary["macs_per_sample"]["off_crossbar"], 0);
    let (head, rows) = read_csv(&dir.path().join("layers.csv"));
    let dense: Vec<&Vec<String>> = rows
        .iter()
        .filter(|r| r[col(&head, "mode")] == "dense" && r[col(&head, "layer")] != "TOTAL")
        .collect();
    let vectors: Vec<&str> = dense
        .iter()
        .map(|r| r[col(&head, "vectors")].as_str())
        .collect();
    // 12 samples: the patch conv's 9 positions, 10 tokens for each projection, 1 for the head.
    assert_eq!(
        vectors,
        ["108", "120", "120", "120", "120", "120", "120", "12"]
    );
    assert!(dense
        .iter()
        .all(|r| r[col(&head, "cycles")].parse::<u64>().unwrap() > 0));
}

#[test]
fn the_vit_fixture_scores_through_accuracy() {
    let dir = tempfile::tempdir().unwrap();
    ok(&sresim(&[
        "accuracy",
        "--workload",
        FIXTURE,
        "--modes",
        "sre",
        "--out",
        s(dir.path()),
        "-q",
    ]));
    let (head, rows) = read_csv(&dir.path().join("accuracy.csv"));
    let total = |mode: &str| {
        rows.iter()
            .find(|r| r[col(&head, "layer")] == "TOTAL" && r[col(&head, "mode")] == mode)
            .unwrap()
    };
    // The fixture's weights are fitted to its 12 labels.
    for mode in ["quantized", "sre"] {
        assert_eq!(total(mode)[col(&head, "top1")], "1", "{mode}");
        assert_eq!(total(mode)[col(&head, "top1_float")], "1", "{mode}");
    }
}

#[test]
fn the_memory_model_prices_the_vit_fixture_in_training_and_inference() {
    for mode in ["training", "inference"] {
        let dir = tempfile::tempdir().unwrap();
        ok(&sresim(&[
            "memory",
            "--workload",
            FIXTURE,
            "--batch",
            "4",
            "--mode",
            mode,
            "--out",
            s(dir.path()),
        ]));
        let text = std::fs::read_to_string(dir.path().join("memory_layers.csv")).unwrap();
        // The LayerNorms, the attention MatMuls and the token projections are all there.
        for name in [
            "LayerNormalization",
            "attn/MatMul_output_0",
            "blocks_blocks.0_attn_q_MatMul",
        ] {
            assert!(text.contains(name), "{mode}: {name}");
        }
    }
}

#[test]
fn a_built_in_decoder_runs_in_five_modes_with_its_attention_reported() {
    // gpt2-decode, its first block only: c_attn 768 x 2304, c_proj 768 x 768, c_fc and
    // mlp.c_proj 768 x 3072 each, one token: 12 x 768^2 = 7,077,888 on the crossbars. The
    // attention of the whole network: 12 layers x 2 x 1025 keys x 768 = 18,892,800.
    let dir = tempfile::tempdir().unwrap();
    ok(&sresim(&[
        "run",
        "--workload",
        "gpt2-decode",
        "--layers",
        "transformer.h.0.*",
        "--out",
        s(dir.path()),
        "-q",
    ]));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["macs_per_sample"]["crossbar"], 7_077_888);
    assert_eq!(summary["macs_per_sample"]["off_crossbar"], 18_892_800);
    let ops = summary["off_crossbar"]["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 24);
    assert_eq!(ops[0]["node"], "transformer.h.0.attn.scores");
    assert_eq!(ops[0]["macs_per_sample"], 768 * 1025);
    let (head, rows) = read_csv(&dir.path().join("layers.csv"));
    let totals: Vec<&str> = rows
        .iter()
        .filter(|r| r[col(&head, "layer")] == "TOTAL")
        .map(|r| r[col(&head, "mode")].as_str())
        .collect();
    assert_eq!(totals, ["dense", "weight", "activation", "sre", "ideal"]);
    // The shape file of the same network gives the same layers.csv.
    let file = tempfile::tempdir().unwrap();
    ok(&sresim(&[
        "run",
        "--workload",
        "workloads/transformers/gpt2-decode.toml",
        "--layers",
        "transformer.h.0.*",
        "--out",
        s(file.path()),
        "-q",
    ]));
    assert_eq!(
        std::fs::read(dir.path().join("layers.csv")).unwrap(),
        std::fs::read(file.path().join("layers.csv")).unwrap()
    );
}
