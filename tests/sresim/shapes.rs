//! Networks by shape alone (a TOML file of layer shapes, docs/workloads.md): they run as a
//! built-in network does, `sresim workloads` lists them with the zoo and the bundles, and
//! a bad file is one line naming the file and the key.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{run_fails, run_ok, s, write};

/// Caffe's LeNet (examples/mnist/lenet_train_test.prototxt) by shape: the layers of the
/// built-in `lenet5`, written out by hand (pooling 2/2 between: 24 -> 12, 8 -> 4).
const LENET5: &str = r#"
name = "lenet5"
[[layers]]
name = "conv1"
kind = "conv"
in_channels = 1
out_channels = 20
kernel = 5
input_shape = [1, 28, 28]
[[layers]]
name = "conv2"
kind = "conv"
in_channels = 20
out_channels = 50
kernel = [5, 5]
input_shape = [20, 12, 12]
[[layers]]
name = "ip1"
kind = "fc"
in_features = 800
out_features = 500
[[layers]]
name = "ip2"
kind = "fc"
in_features = 500
out_features = 10
"#;

/// A run of `workload` with the generator flags; layers.csv's text.
fn layers_csv(dir: &std::path::Path, out: &str, workload: &str, flags: &[&str]) -> String {
    let out = dir.join(out);
    let mut args = vec!["run", "--workload", workload, "--samples", "2", "-q"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["--out", s(&out)]);
    run_ok(&args);
    std::fs::read_to_string(out.join("layers.csv")).unwrap()
}

#[test]
fn a_shape_file_runs_as_the_built_in_network_of_the_same_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "lenet.toml", LENET5);
    // Same layers, same generators, same seed: the same counts, cycles and energy, byte
    // for byte, whatever the generator flags.
    for flags in [
        &[][..],
        &[
            "--weight-sparsity",
            "0.3",
            "--structure",
            "ssl",
            "--act-sparsity",
            "0.8",
        ][..],
    ] {
        let by_shape = layers_csv(dir.path(), "shape", s(&file), flags);
        let built_in = layers_csv(dir.path(), "zoo", "lenet5", flags);
        assert_eq!(by_shape, built_in, "{flags:?}");
    }
    // The flags reach the generators: a different sparsity gives different counts.
    let dense = layers_csv(dir.path(), "dense", s(&file), &["--weight-sparsity", "0"]);
    assert_ne!(dense, layers_csv(dir.path(), "shape", s(&file), &[]));
}

/// One pre-norm encoder layer by shape, annotated: width 32, 4 heads, a ReLU feed-forward
/// 32 -> 128 -> 32, over 8 tokens.
const ENCODER: &str = r#"
name = "enc"
[[layers]]
name = "q"
kind = "fc"
in_features = 32
out_features = 32
tokens = 8
role = "q"
heads = 4
[[layers]]
name = "k"
kind = "fc"
in_features = 32
out_features = 32
tokens = 8
role = "k"
heads = 4
[[layers]]
name = "v"
kind = "fc"
in_features = 32
out_features = 32
tokens = 8
role = "v"
heads = 4
[[layers]]
name = "o"
kind = "fc"
in_features = 32
out_features = 32
tokens = 8
role = "attn_out"
heads = 4
[[layers]]
name = "up"
kind = "fc"
in_features = 32
out_features = 128
tokens = 8
role = "ffn_up"
[[layers]]
name = "down"
kind = "fc"
in_features = 128
out_features = 32
tokens = 8
role = "ffn_down"
"#;

/// layers.csv's rows of `layer`.
fn rows_of<'a>(csv: &'a str, layer: &str) -> Vec<&'a str> {
    csv.lines()
        .filter(|l| l.split(',').nth(1) == Some(layer))
        .collect()
}

#[test]
fn pruned_heads_change_the_attention_layers_only_and_n_m_runs_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enc.toml", ENCODER);
    let flags = ["--modes", "dense,weight,sre", "--structure", "2:4"];
    let plain = layers_csv(dir.path(), "plain", s(&file), &flags);
    let mut with_heads = flags.to_vec();
    with_heads.extend_from_slice(&["--head-sparsity", "0.5"]);
    let pruned = layers_csv(dir.path(), "heads", s(&file), &with_heads);
    // The feed-forward layers draw the same weights and inputs: the same rows.
    for layer in ["up", "down"] {
        assert_eq!(rows_of(&plain, layer), rows_of(&pruned, layer), "{layer}");
    }
    // Half the heads gone: fewer weights to read in every attention layer (weight mode).
    let cells = |csv: &str, layer: &str| -> u64 {
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|&c| c == "cells_read").unwrap();
        let row = rows_of(csv, layer)
            .into_iter()
            .find(|r| r.split(',').nth(3) == Some("weight"))
            .unwrap();
        row.split(',').nth(col).unwrap().parse().unwrap()
    };
    for layer in ["q", "k", "v", "o"] {
        assert!(
            cells(&pruned, layer) < cells(&plain, layer),
            "{layer}: {} vs {}",
            cells(&pruned, layer),
            cells(&plain, layer)
        );
    }
}

#[test]
fn a_run_says_the_multiply_accumulates_of_a_sample() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "lenet.toml", LENET5);
    // By hand: conv1 24x24 positions x 20 x 1x5x5 = 288,000; conv2 8x8 x 50 x 20x5x5 =
    // 1,600,000; ip1 800 x 500 = 400,000; ip2 500 x 10 = 5,000.
    let out = dir.path().join("out");
    let stdout = run_ok(&[
        "run",
        "--workload",
        s(&file),
        "--samples",
        "1",
        "--out",
        s(&out),
    ]);
    assert!(
        stdout.contains("lenet5 (4 layers, 2293000 MACs a sample, fast engine)"),
        "{stdout}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["macs_per_sample"]["crossbar"], 2_293_000);
    assert_eq!(summary["macs_per_sample"]["off_crossbar"], 0);
}

#[test]
fn workloads_lists_shape_files_and_says_why_a_network_cannot_run() {
    let out = run_ok(&["workloads"]);
    let shapes = out
        .split("Networks by shape")
        .nth(1)
        .expect("a section of shape files");
    // workloads/alexnet.toml: torchvision's AlexNet, 714,188,480 MACs per 224x224 image
    // (conv 70,276,800 + 223,948,800 + 112,140,288 + 149,520,384 + 99,680,256, fc 58,621,952).
    let row = shapes
        .lines()
        .find(|l| l.trim_start().starts_with("alexnet "))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["alexnet", "8", "714188480"]);
    // resnet50, yolov4-tiny, bert and the full-size transformers run; gnmt is listed with
    // the reason.
    let built_in = out.split("Networks by shape").next().unwrap();
    for n in [
        "resnet50",
        "yolov4-tiny",
        "bert",
        "bert-base-512",
        "llama3-8b-decode",
    ] {
        assert!(
            built_in
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{n} "))),
            "{n}"
        );
    }
    let cannot = out.split("cannot replay:").nth(1).unwrap();
    assert!(cannot.contains("  gnmt: "));
    assert!(!cannot.contains("  bert: "));
    let e = run_fails(&["run", "--workload", "gnmt", "-q"]);
    assert!(
        e.starts_with("error: --workload: gnmt: cannot run: its LSTM cells"),
        "{e}"
    );
    // The listed shape file opens by its name.
    let e = run_fails(&[
        "run",
        "--workload",
        "alexnet",
        "--set",
        "limits.max_layer_bytes=1000",
    ]);
    assert!(
        e.contains("alexnet.toml: layers[0]: layer features.0 needs about"),
        "{e}"
    );
}

#[test]
fn a_bad_shape_file_is_one_line_naming_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let cases = [
        (
            LENET5.replace("kernel = 5\n", "kernel = 50\n"),
            "layers[0].kernel: dilated kernel 50 exceeds padded input 28",
        ),
        (
            LENET5.replace("in_features = 800", "in_feature = 800"),
            "layers[2].in_feature: unknown key",
        ),
        (
            LENET5.replace("out_features = 10", "out_features = \"ten\""),
            "layers[3].out_features: expected a positive integer",
        ),
        (
            "name = \"empty\"\n".to_string(),
            "layers: expected a non-empty array",
        ),
        (
            ENCODER.replace("role = \"v\"", "role = \"value\""),
            "layers[2].role: 'value' is not one of q, k, v, qkv, attn_out, ffn_up, ffn_gate, ffn_down",
        ),
        (
            ENCODER.replace("role = \"q\"\nheads = 4", "role = \"q\""),
            "layers[0].heads: absent; a q layer needs its number of heads",
        ),
        (
            LENET5.replace("kernel = 5\n", "kernel = 5\nrole = \"q\"\nheads = 2\n"),
            "layers[0].role: only fc layers have a role",
        ),
    ];
    for (text, want) in cases {
        let file = write(dir.path(), "bad.toml", &text);
        let e = run_fails(&["run", "--workload", s(&file), "--out", s(&out)]);
        assert!(
            e.starts_with(&format!("error: {}: {want}", file.display())),
            "{e}"
        );
        assert!(!out.exists(), "nothing is written");
    }
    let missing = dir.path().join("none.toml");
    let e = run_fails(&["run", "--workload", s(&missing)]);
    assert!(e.contains("none.toml: cannot read: does not exist"), "{e}");
}

#[test]
fn a_local_shape_file_named_as_a_built_in_network_is_named_in_a_note_and_opens_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("workloads")).unwrap();
    // A variant of lenet5 (ip1 narrower) under the built-in's name.
    write(
        &dir.path().join("workloads"),
        "lenet5.toml",
        &LENET5
            .replace("out_features = 500", "out_features = 100")
            .replace("in_features = 500", "in_features = 100"),
    );
    let bin = env!("CARGO_BIN_EXE_sresim");
    let run = |workload: &str| {
        std::process::Command::new(bin)
            .args([
                "run",
                "--workload",
                workload,
                "--modes",
                "dense",
                "-q",
                "--out",
                "o",
            ])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    // The name is the built-in network's, and a note says what it hides and how to open it.
    let o = run("lenet5");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err.trim_end(),
        "note: --workload lenet5: the built-in network lenet5; ./workloads/lenet5.toml of the same name is not opened (name it by its path to open it: --workload ./workloads/lenet5.toml)"
    );
    let builtin = std::fs::read_to_string(dir.path().join("o/layers.csv")).unwrap();
    assert!(builtin.contains(",ip1,fc,dense,"));
    // By its path, the local file: ip1 has 100 outputs, so its rows differ.
    let o = run("./workloads/lenet5.toml");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let local = std::fs::read_to_string(dir.path().join("o/layers.csv")).unwrap();
    assert_ne!(builtin, local);
}
