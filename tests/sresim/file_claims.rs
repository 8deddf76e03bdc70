//! What a file says is checked where it is read: a count a file implies that does not fit
//! 64 bits is refused at open in one line naming the file and the layer or node (never
//! written saturated or wrapped), names hold no control characters, and a bad key or
//! value is blamed on the key and where it came from (docs/errors.md).

// Test code: a failed unwrap is a failed test, and fixtures are made with std::fs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use crate::common;
use common::{fails, s, sresim, write};

use serde_json::{json, Value};
use std::path::Path;

fn repo(p: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// An attention block of 8192-wide projections over 16384 tokens whose queries attend to
/// 2^31 - 1 keys: each of its two products is 2^58 multiply-accumulates a sample.
fn big_block(i: usize) -> String {
    let mut t = String::new();
    for role in ["q", "k", "v", "attn_out"] {
        t += &format!(
            "[[layers]]\nname = \"b{i}.{role}\"\nkind = \"fc\"\nin_features = 8192\nout_features = 8192\ntokens = 16384\nrole = \"{role}\"\nheads = 1\n"
        );
        if role == "attn_out" {
            t += "kv_len = 2147483647\n";
        }
    }
    t
}

#[test]
fn a_shape_files_attention_products_that_overflow_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = "[[layers]]\nname = \"tiny\"\nkind = \"fc\"\nin_features = 4\nout_features = 4\n";
    // 2^58 - 2^27 a product: 32 blocks (64 products) fit, the 33rd block's pass 2^64.
    let ok_text: String = tiny.to_string() + &(0..31).map(big_block).collect::<String>();
    let bad_text: String = tiny.to_string() + &(0..40).map(big_block).collect::<String>();
    let good = write(dir.path(), "fits.toml", &ok_text);
    let bad = write(dir.path(), "ovf.toml", &bad_text);
    let out = dir.path().join("o");
    let o = sresim(&[
        "run",
        "-q",
        "-w",
        s(&good),
        "--layers",
        "tiny",
        "--modes",
        "dense",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sum: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let per = 16384u64 * 8192 * 2147483647;
    assert_eq!(sum["macs_per_sample"]["off_crossbar"], json!(62 * per));
    let out2 = dir.path().join("o2");
    let e = fails(&sresim(&[
        "run",
        "-q",
        "-w",
        s(&bad),
        "--layers",
        "tiny",
        "--modes",
        "dense",
        "-o",
        s(&out2),
    ]));
    assert_eq!(
        e,
        format!(
            "error: {}: layers[132]: the attention products' multiply-accumulates a sample (tokens x in_features x kv_len, summed over the file's blocks) overflow 64 bits\n",
            bad.display()
        )
    );
    assert!(!out2.exists(), "nothing is written");
}

#[test]
fn a_bundle_graphs_matmuls_whose_sum_overflows_are_refused_naming_the_node() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo("tests/fixtures/torch-vit");
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("manifest.json")).unwrap())
            .unwrap();
    // The 144 input values padded to [1, 2^21, 2^21]: each product of it by itself is
    // 2^63 multiply-accumulates, so two of them sum past 2^64.
    let g = m["graph"].as_array_mut().unwrap();
    g.push(
        json!({"op": "Reshape", "inputs": ["graph.input"], "output": "bx", "shape": [1, 144, 1]}),
    );
    g.push(json!({"op": "Pad", "inputs": ["bx"], "output": "bp", "pads": [0, 0, 0, 0, 2097008, 2097151]}));
    g.push(json!({"op": "MatMul", "inputs": ["bp", "bp"], "output": "bm0"}));
    g.push(json!({"op": "MatMul", "inputs": ["bp", "bp"], "output": "bm1"}));
    std::fs::write(dir.path().join("manifest.json"), m.to_string()).unwrap();
    std::fs::copy(fixture.join("tensors.npz"), dir.path().join("tensors.npz")).unwrap();
    let want = format!(
        "error: {}: graph (bm1): the multiply-accumulates a sample of the activation-by-activation MatMul ops, summed up to this one, overflow 64 bits\n",
        dir.path().join("manifest.json").display()
    );
    let big = "limits.max_layer_bytes=70368744177664";
    let out = dir.path().join("o");
    for args in [
        vec!["check", s(dir.path()), "--set", big],
        vec![
            "run",
            "-q",
            "-w",
            s(dir.path()),
            "--set",
            big,
            "-o",
            s(&out),
        ],
    ] {
        assert_eq!(fails(&sresim(&args)), want, "{args:?}");
    }
    assert!(!out.exists(), "nothing is written");
}
