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

/// A copy of a fixture bundle with `edit` applied to its manifest.
fn edited(fixture: &str, edit: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = repo(fixture);
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("manifest.json")).unwrap()).unwrap();
    edit(&mut m);
    std::fs::write(dir.path().join("manifest.json"), m.to_string()).unwrap();
    std::fs::copy(src.join("tensors.npz"), dir.path().join("tensors.npz")).unwrap();
    dir
}

#[test]
fn a_name_with_a_control_character_is_refused_at_read_time() {
    for (c, code) in [('\u{0}', "0000"), ('\n', "000A"), ('\u{1b}', "001B")] {
        let dir = edited("tests/fixtures/torch-cnn", |m| {
            m["layers"][0]["name"] = json!(format!("conv1{c}Conv"));
        });
        let e = fails(&sresim(&["check", s(dir.path())]));
        assert_eq!(
            e,
            format!(
                "error: {}: layers[0].name: holds the control character U+{code} (a name is printed and written to CSV files)\n",
                dir.path().join("manifest.json").display()
            )
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "esc.toml",
        "name = \"\\u001b[2J\"\n[[layers]]\nname = \"f\"\nkind = \"fc\"\nin_features = 4\nout_features = 4\n",
    );
    let e = fails(&sresim(&["run", "-q", "-w", s(&f)]));
    assert!(
        e.contains(": name: holds the control character U+001B"),
        "{e}"
    );
    assert!(!e.contains('\u{1b}'), "{e:?}");
}

#[test]
fn softmax_over_the_batch_axis_is_refused_like_layernorm() {
    let dir = edited("tests/fixtures/torch-vit", |m| {
        m["graph"][22]["axis"] = json!(0)
    });
    let e = fails(&sresim(&["check", s(dir.path())]));
    assert!(
        e.ends_with("Softmax over the batch axis would mix samples\n") && e.contains("graph[22]"),
        "{e}"
    );
}

#[test]
fn nested_config_keys_are_settable_and_a_figure_that_does_not_fit_blames_its_set() {
    let vit = repo("tests/fixtures/torch-vit");
    let o = sresim(&["check", s(&vit), "--set", "digital.occupancy.exp=4"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let e = error_line(&sresim(&[
        "check",
        s(&vit),
        "--set",
        "digital.occupancy.exp=0",
    ]));
    assert!(!e.contains("unknown key"), "{e}");
    assert!(e.contains("digital.occupancy"), "{e}");
    let e = error_line(&sresim(&["check", s(&vit), "--set", "digital.occupancy=4"]));
    assert!(e.contains("unknown key"), "a table is not a value: {e}");
    let dir = tempfile::tempdir().unwrap();
    let e = error_line(&sresim(&[
        "run",
        "-q",
        "-w",
        s(&vit),
        "--set",
        "timing.cycle_ns=1e-300",
        "-o",
        s(&dir.path().join("o")),
    ]));
    assert!(
        e.starts_with("error: --set timing.cycle_ns=1e-300: timing.cycle_ns: "),
        "{e}"
    );
    assert!(!dir.path().join("o").exists());
}

#[test]
fn a_table_value_of_the_wrong_type_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = std::fs::read_to_string(repo("configs/energy/digital-45nm.toml")).unwrap();
    let bad: String = shipped
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("exp_pj") {
                "exp_pj = \"3.46\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let f = write(dir.path(), "d.toml", &bad);
    let set = format!("digital.table={}", f.display());
    let e = fails(&sresim(&[
        "check",
        s(&repo("tests/fixtures/torch-vit")),
        "--set",
        &set,
    ]));
    assert!(
        e.contains(&format!(
            "{}: exp_pj: invalid type: string \"3.46\", expected f64",
            f.display()
        )),
        "{e}"
    );
}

#[test]
fn an_npz_with_two_entries_of_one_name_is_refused() {
    use std::io::Write;
    let dir = edited("tests/fixtures/torch-cnn", |_| {});
    let npz = dir.path().join("tensors.npz");
    let mut src = zip::ZipArchive::new(std::fs::File::open(&npz).unwrap()).unwrap();
    let mut bytes = Vec::new();
    {
        let mut out = zip::ZipWriter::new(std::io::Cursor::new(&mut bytes));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let mut first = Vec::new();
        for i in 0..src.len() {
            let mut f = src.by_index(i).unwrap();
            let name = f.name().to_string();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut data).unwrap();
            out.start_file(name.as_str(), opts).unwrap();
            out.write_all(&data).unwrap();
            if i == 0 {
                first = data;
            }
        }
        // A second entry whose name differs by one byte, patched below to the first's.
        out.start_file("conv1_Conv.weighX.npy", opts).unwrap();
        out.write_all(&first).unwrap();
        out.finish().unwrap();
    }
    let (from, to) = (b"conv1_Conv.weighX.npy", b"conv1_Conv.weight.npy");
    let mut i = 0;
    while i + from.len() <= bytes.len() {
        if &bytes[i..i + from.len()] == from {
            bytes[i..i + from.len()].copy_from_slice(to);
        }
        i += 1;
    }
    std::fs::write(&npz, &bytes).unwrap();
    let e = fails(&sresim(&["check", s(dir.path())]));
    assert!(
        e.contains("two entries of the archive have one name (one entry an array)"),
        "{e}"
    );
}

/// The one `error: ` line of a failed command that may print `note:` lines first.
fn error_line(o: &std::process::Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| !l.starts_with("note: ")).collect();
    assert!(
        errors.len() == 1 && errors[0].starts_with("error: "),
        "{e:?}"
    );
    errors[0].to_string()
}
