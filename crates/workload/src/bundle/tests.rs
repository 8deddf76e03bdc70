//! Bundles written with NpzWriter into temporary directories: good and bad cases.

use std::fs::File;
use std::path::Path;

use ndarray::{Array, Array2, Array4, ArrayD, IxDyn};
use ndarray_npy::NpzWriter;
use serde_json::{json, Value};

use super::*;
use crate::quant;

/// conv1: 1 -> 2 channels, 3x3 on 4x4 (output 2x2); fc1: 8 -> 3 (input given as [N,2,2,2]).
fn manifest() -> Value {
    json!({"name": "tiny", "source": "hand-made", "layers": [
        {"name": "conv1", "kind": "conv", "in_channels": 1, "out_channels": 2,
         "kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1,
         "input_shape": [1, 4, 4], "weight": "conv1.weight", "input": "conv1.input"},
        {"name": "fc1", "kind": "fc", "in_features": 8, "out_features": 3,
         "weight": "fc1.weight", "input": "fc1.input"}]})
}

fn seq(shape: &[usize], f: impl Fn(usize) -> f32) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

/// The tensors of [`manifest`]: 2 samples; conv1 input signed, fc1 input >= 0.
fn tensors() -> Vec<(&'static str, ArrayD<f32>)> {
    vec![
        ("conv1.weight", seq(&[2, 1, 3, 3], |i| i as f32 - 8.0)),
        (
            "conv1.input",
            seq(&[2, 1, 4, 4], |i| (i as f32 - 10.0) / 4.0),
        ),
        ("fc1.weight", seq(&[3, 8], |i| ((i * 7) % 5) as f32 - 2.0)),
        ("fc1.input", seq(&[2, 2, 2, 2], |i| (i % 3) as f32)),
    ]
}

fn write(dir: &Path, manifest: &Value, arrays: &[(&str, ArrayD<f32>)]) {
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let mut npz = NpzWriter::new_compressed(File::create(dir.join("tensors.npz")).unwrap());
    for (name, a) in arrays {
        npz.add_array(*name, a).unwrap();
    }
    npz.finish().unwrap();
}

fn p8() -> OpenOptions {
    OpenOptions {
        precision: Precision {
            weight_bits: 8,
            input_bits: 8,
        },
        ..Default::default()
    }
}

/// Writes a bundle with `edit` applied and returns open()'s error message.
fn open_err(
    edit: impl FnOnce(&mut Value, &mut Vec<(&'static str, ArrayD<f32>)>),
) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (mut m, mut t) = (manifest(), tensors());
    edit(&mut m, &mut t);
    write(dir.path(), &m, &t);
    let e = BundleWorkload::open(dir.path(), &p8())
        .unwrap_err()
        .to_string();
    (e, dir.path().display().to_string())
}

#[test]
fn good_bundle_quantizes_per_section_2() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &manifest(), &tensors());
    let w = BundleWorkload::open(dir.path(), &p8()).unwrap();
    assert_eq!(
        (w.name(), w.source(), w.available_samples()),
        ("tiny", "hand-made", 2)
    );
    let l = w.load_layer(0, p8().precision, 2).unwrap();
    // weights i - 8 = -8..=9 scaled by 127/9: -8 -> -112.9 -> -113, 1 -> 14.1 -> 14, 9 -> 127
    assert_eq!((l.weights[0], l.weights[9], l.weights[17]), (-113, 14, 127));
    // inputs (i - 10)/4 for i in 0..32: max|x| = 21/4, signed scale 127: i = 0 -> -2.5/5.25*127 = -60.48 -> -60
    assert!(l.signed);
    assert_eq!(l.input[0], -60);
    assert_eq!(l.input.len(), 32);
    let one = w.load_layer(0, p8().precision, 1).unwrap();
    assert_eq!(one.input[..], l.input[..16]); // quantized over both samples, then cut
                                              // fc1: [2,2,2,2] input flattened to [2, 8]; unsigned, max 2 -> 0, 128 (127.5 rounds up), 255
    let f = w.load_layer(1, p8().precision, 2).unwrap();
    assert!(!f.signed);
    assert_eq!(f.input[..4], [0, 128, 255, 0]);
    let want: Vec<f64> = tensors()[2].1.iter().map(|&v| v as f64).collect();
    assert_eq!(f.weights, quant::quantize_weights(&want, 8).unwrap());
}

#[test]
fn from_bytes_matches_open() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &manifest(), &tensors());
    let bytes = std::fs::read(dir.path().join("tensors.npz")).unwrap();
    let m = w_text(dir.path());
    let a = BundleWorkload::from_bytes("builtin", &m, bytes, &p8()).unwrap();
    let b = BundleWorkload::open(dir.path(), &p8()).unwrap();
    for i in 0..2 {
        assert_eq!(
            a.load_layer(i, p8().precision, 2).unwrap(),
            b.load_layer(i, p8().precision, 2).unwrap()
        );
    }
    let e = BundleWorkload::from_bytes("builtin", &m, &b"not a zip"[..], &p8()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("builtin/tensors.npz: not a readable npz archive"),
        "{e}"
    );
}

fn w_text(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("manifest.json")).unwrap()
}

#[test]
fn integer_arrays_are_used_as_is_and_fortran_order_is_read_logically() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("manifest.json"), manifest().to_string()).unwrap();
    let mut npz = NpzWriter::new(File::create(dir.path().join("tensors.npz")).unwrap());
    let cw =
        Array4::<i8>::from_shape_fn((2, 1, 3, 3), |(o, _, r, s)| (o * 9 + r * 3 + s) as i8 - 8);
    npz.add_array("conv1.weight", &cw).unwrap();
    let ci =
        Array4::<u8>::from_shape_fn((2, 1, 4, 4), |(n, _, h, w)| (n * 16 + h * 4 + w) as u8 * 8);
    npz.add_array("conv1.input", &ci).unwrap();
    // fc weight stored transposed (Fortran order): logical [3, 8] with value 10*o + k.
    let t = Array2::<i16>::from_shape_fn((8, 3), |(k, o)| (10 * o + k) as i16);
    npz.add_array("fc1.weight", &t.t()).unwrap();
    npz.add_array("fc1.input", &Array2::<i64>::from_elem((2, 8), -3))
        .unwrap();
    npz.finish().unwrap();
    let w = BundleWorkload::open(dir.path(), &p8()).unwrap();
    let c = w.load_layer(0, p8().precision, 2).unwrap();
    assert_eq!(c.weights, cw.iter().map(|&v| v as i32).collect::<Vec<_>>());
    assert_eq!((c.input[31], c.signed), (248, false));
    let f = w.load_layer(1, p8().precision, 1).unwrap();
    assert_eq!(&f.weights[8..11], &[10, 11, 12]); // row o = 1: 10*1 + k
    assert_eq!((f.input.len(), f.input[0], f.signed), (8, -3, true));
    // 248 does not fit 7-bit unsigned inputs (max 127).
    let p7 = OpenOptions {
        precision: Precision {
            weight_bits: 8,
            input_bits: 7,
        },
        ..Default::default()
    };
    let e = BundleWorkload::open(dir.path(), &p7)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with(
            "conv1.input: integer 128 at flat index 16 is out of range 0..=127 for 7-bit input"
        ),
        "{e}"
    );
}

#[test]
fn synthetic_inputs_fill_absent_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manifest();
    m["layers"][1].as_object_mut().unwrap().remove("input");
    let t: Vec<_> = tensors()
        .into_iter()
        .filter(|(n, _)| *n != "fc1.input")
        .collect();
    write(dir.path(), &m, &t);
    let e = BundleWorkload::open(dir.path(), &p8())
        .unwrap_err()
        .to_string();
    let d = dir.path().display();
    assert_eq!(
        e,
        format!("{d}/manifest.json: layers[1].input: absent; run with --synthetic-inputs")
    );
    let opts = OpenOptions {
        synthetic_inputs: true,
        ..p8()
    };
    let w = BundleWorkload::open(dir.path(), &opts).unwrap();
    assert_eq!(w.available_samples(), 2); // N of conv1.input
    let f = w.load_layer(1, opts.precision, 2).unwrap();
    assert!(!f.signed && f.input.len() == 16);
    assert_eq!(f, w.load_layer(1, opts.precision, 2).unwrap());
    // No input anywhere: the manifest's samples, else the option's.
    m["layers"][0].as_object_mut().unwrap().remove("input");
    m["samples"] = json!(3);
    write(dir.path(), &m, &t);
    assert_eq!(
        BundleWorkload::open(dir.path(), &opts)
            .unwrap()
            .available_samples(),
        3
    );
    m.as_object_mut().unwrap().remove("samples");
    write(dir.path(), &m, &t);
    let opts5 = OpenOptions { samples: 5, ..opts };
    let w = BundleWorkload::open(dir.path(), &opts5).unwrap();
    assert_eq!(w.available_samples(), 5);
    assert!(w.load_layer(0, opts.precision, 5).unwrap().signed); // layer 0: image-like
}

#[test]
fn bad_manifests() {
    let (e, d) = open_err(|m, _| m["layers"][0]["kernel"] = json!([3]));
    assert_eq!(
        e,
        format!("{d}/manifest.json: layers[0].kernel: expected 2 positive integers")
    );
    let (e, d) = open_err(|m, _| m["layers"][1]["kind"] = json!("pool"));
    assert_eq!(
        e,
        format!("{d}/manifest.json: layers[1].kind: expected \"conv\" or \"fc\", got \"pool\"")
    );
    let (e, _) = open_err(|m, _| m["layers"][1]["name"] = json!("conv1"));
    assert!(
        e.ends_with("layers[1].name: \"conv1\" repeats layers[0]"),
        "{e}"
    );
    let (e, _) = open_err(|m, _| m["layers"][0]["input_shape"] = json!([2, 4, 4]));
    assert!(
        e.ends_with("layers[0].input_shape: C = 2 does not match in_channels 1"),
        "{e}"
    );
    let (e, _) = open_err(|m, _| m["samples"] = json!(4));
    assert!(
        e.ends_with("manifest.json: samples: 4, but conv1.input in tensors.npz has 2 samples"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let e = BundleWorkload::open(dir.path(), &p8())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{}/manifest.json: cannot read:",
            dir.path().display()
        )),
        "{e}"
    );
    std::fs::write(dir.path().join("manifest.json"), "{\"name\": \"x\",").unwrap();
    let e = BundleWorkload::open(dir.path(), &p8())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("manifest.json: invalid JSON: EOF while parsing") && !e.contains('\n'),
        "{e}"
    );
    std::fs::write(dir.path().join("manifest.json"), manifest().to_string()).unwrap();
    let e = BundleWorkload::open(dir.path(), &p8())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{}/tensors.npz: cannot open:",
            dir.path().display()
        )),
        "{e}"
    );
}

#[test]
fn bad_arrays() {
    let (e, d) = open_err(|m, t| {
        m["layers"][0]["out_channels"] = json!(20);
        t[0].1 = seq(&[6, 1, 3, 3], |_| 1.0);
    });
    assert_eq!(
        e,
        format!(
            "{d}/tensors.npz: conv1.weight: shape [6,1,3,3] does not match geometry [20,1,3,3]"
        )
    );
    let (e, d) = open_err(|_, t| t[1].1[[0, 0, 1, 3]] = f32::NAN);
    assert_eq!(
        e,
        format!("{d}/tensors.npz: conv1.input: value at flat index 7 is not finite (NaN)")
    );
    let (e, _) = open_err(|_, t| t[2].1[[2, 0]] = f32::NEG_INFINITY);
    assert!(
        e.ends_with("tensors.npz: fc1.weight: value at flat index 16 is not finite (-inf)"),
        "{e}"
    );
    let (e, _) = open_err(|_, t| t[3].1 = seq(&[2, 9], |_| 1.0));
    assert!(
        e.ends_with(
            "fc1.input: shape [2,9] does not match geometry [N,8] (or [N,C,H,W] with C*H*W = 8)"
        ),
        "{e}"
    );
    let (e, _) = open_err(|_, t| t[1].1 = seq(&[2, 16], |_| 1.0));
    assert!(
        e.ends_with("conv1.input: shape [2,16] does not match geometry [N,1,4,4]"),
        "{e}"
    );
    let (e, _) = open_err(|_, t| t[3].1 = seq(&[3, 8], |_| 1.0));
    assert!(
        e.ends_with("fc1.input: 3 samples, but conv1.input has 2 (all layers need the same N)"),
        "{e}"
    );
    let (e, _) = open_err(|m, _| m["layers"][1]["weight"] = json!("fc1.w"));
    assert!(
        e.ends_with(
            "tensors.npz: fc1.w: no such array (named by layers[1].weight of manifest.json)"
        ),
        "{e}"
    );
    let (e, _) = open_err(|_, t| t[1].1 = seq(&[0, 1, 4, 4], |_| 1.0));
    assert!(e.ends_with("conv1.input: holds 0 samples"), "{e}");
}

#[test]
fn bad_integer_arrays_and_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    let write_with = |fc_weight: &dyn Fn(&mut NpzWriter<File>)| {
        std::fs::write(dir.path().join("manifest.json"), manifest().to_string()).unwrap();
        let mut npz = NpzWriter::new(File::create(dir.path().join("tensors.npz")).unwrap());
        for (n, a) in tensors() {
            if n != "fc1.weight" {
                npz.add_array(n, &a).unwrap();
            }
        }
        fc_weight(&mut npz);
        npz.finish().unwrap();
        BundleWorkload::open(dir.path(), &p8())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let e = write_with(&|z| {
        z.add_array("fc1.weight", &Array2::<u64>::zeros((3, 8)))
            .unwrap()
    })
    .unwrap_err();
    assert!(e.ends_with("fc1.weight: dtype '<u8' is not supported (float32, float64, int8..int64, uint8..uint32)"), "{e}");
    let e = write_with(&|z| {
        z.add_array("fc1.weight", &Array2::<i16>::from_elem((3, 8), -128))
            .unwrap()
    })
    .unwrap_err();
    assert!(
        e.ends_with(
            "fc1.weight: integer -128 at flat index 0 is out of range -127..=127 for 8-bit weight"
        ),
        "{e}"
    );
    assert!(write_with(&|z| z
        .add_array("fc1.weight", &Array2::<u32>::from_elem((3, 8), 127))
        .unwrap())
    .is_ok());
    let e = write_with(&|z| {
        z.add_array("fc1.weight", &Array2::<bool>::from_elem((3, 8), true))
            .unwrap()
    })
    .unwrap_err();
    assert!(
        e.contains("fc1.weight: dtype '|b1' is not supported"),
        "{e}"
    );
}

#[test]
fn unknown_keys_reserved_names_and_chain() {
    let (e, d) = open_err(|m, _| m["layers"][0]["strides"] = json!([1, 1]));
    assert!(
        e.starts_with(&format!(
            "{d}/manifest.json: layers[0].strides: unknown key (expected a key of a conv layer: name, kind,"
        )),
        "{e}"
    );
    let (e, _) = open_err(|m, _| m["layers"][1]["in_channels"] = json!(8));
    assert!(
        e.contains("layers[1].in_channels: unknown key (expected a key of an fc layer"),
        "{e}"
    );
    let (e, _) = open_err(|m, _| m["version"] = json!(2));
    assert!(
        e.ends_with("manifest.json: version: unknown key (expected a manifest key: name, source, samples, layers, provenance, graph, graph_input, graph_output, labels)"),
        "{e}"
    );
    // Known optional keys are accepted.
    let dir = tempfile::tempdir().unwrap();
    let mut m = manifest();
    m["provenance"] = json!({"model": "hand-made"});
    m["layers"][0]["onnx_pads"] = json!([0, 0, 1, 1]);
    m["layers"][0]["padding_folded_into_input"] = json!([0, 0, 1, 1]);
    write(dir.path(), &m, &tensors());
    assert!(BundleWorkload::open(dir.path(), &p8()).is_ok());
    let (e, _) = open_err(|m, _| m["layers"][0]["onnx_pads"] = json!([0, 0, 1]));
    assert!(
        e.ends_with("layers[0].onnx_pads: expected 4 non-negative integers"),
        "{e}"
    );
    let (e, _) = open_err(|m, _| m["layers"][1]["name"] = json!("TOTAL"));
    assert!(e.contains("layers[1].name: \"TOTAL\" is reserved"), "{e}");
    // conv1 makes 2 channels from 2: an fc on 9 inputs fits no flattened map of 2
    // channels (9 = 1 x 9 would fit a 1-channel network input). The layers do not chain,
    // which refuses nothing: the bundle opens, with a note naming the field.
    let dir = tempfile::tempdir().unwrap();
    let (mut m, mut t) = (manifest(), tensors());
    m["layers"][0]["input_shape"] = json!([2, 4, 4]);
    m["layers"][0]["in_channels"] = json!(2);
    m["layers"][1]["in_features"] = json!(9);
    t[0].1 = seq(&[2, 2, 3, 3], |_| 1.0);
    t[1].1 = seq(&[2, 2, 4, 4], |_| 1.0);
    t[2].1 = seq(&[3, 9], |_| 1.0);
    t[3].1 = seq(&[2, 9], |_| 1.0);
    write(dir.path(), &m, &t);
    let w = BundleWorkload::open(dir.path(), &p8()).unwrap();
    assert_eq!(
        w.notes(),
        [format!(
            "{}/manifest.json: layers[1].in_features: 9 is not a multiple of any channel count earlier layers produce (expected C*H*W of an earlier output, C from: 2); each layer is simulated on its own",
            dir.path().display()
        )]
    );
    // The unchanged bundle chains: no note.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &manifest(), &tensors());
    assert!(BundleWorkload::open(dir.path(), &p8())
        .unwrap()
        .notes()
        .is_empty());
    // Sizes beyond 2^31 - 1 and geometry whose products overflow are refused.
    let (e, _) = open_err(|m, _| m["layers"][0]["out_channels"] = json!(1u64 << 40));
    assert!(
        e.ends_with("layers[0].out_channels: expected a positive integer"),
        "{e}"
    );
    let (e, _) = open_err(|m, _| {
        let big = i32::MAX as u64 - 1;
        m["layers"][0]["input_shape"] = json!([1, big, big]);
        m["layers"][0]["kernel"] = json!([1, 1]);
        m["layers"][0]["out_channels"] = json!(big);
    });
    assert!(
        e.ends_with("layers[0]: geometry too large: output elements per sample overflow 64 bits (counts would overflow u64)"),
        "{e}"
    );
}

#[test]
fn memory_cap_is_checked_before_reading() {
    // Weights whole and one sample, 12 bytes per element, plus two read buffers as large
    // as the f32 input data (it is under a block):
    // conv1: (18 + 16) * 12 = 408, data 2 * 16 * 4 = 128 -> 408 + 256 = 664;
    // fc1: (24 + 8) * 12 = 384, data 2 * 8 * 4 = 64 -> 384 + 128 = 512.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &manifest(), &tensors());
    let cap = |b: u64| OpenOptions {
        max_layer_bytes: b,
        ..p8()
    };
    assert!(BundleWorkload::open(dir.path(), &cap(664)).is_ok());
    let e = BundleWorkload::open(dir.path(), &cap(663))
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("tensors.npz: conv1.input: layer conv1 needs about 664 B to load 2 sample(s), more than limits.max_layer_bytes = 663 B (raise it, e.g. --set limits.max_layer_bytes=1024)"),
        "{e}"
    );
}

/// An npz whose arrays are given as raw .npy bytes.
fn raw_npz(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        z.start_file(format!("{name}.npy"), opts).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap().into_inner()
}

fn npy_header(dict: &str) -> Vec<u8> {
    let mut h = format!("{dict}\n").into_bytes();
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.append(&mut h);
    out
}

#[test]
fn hostile_headers_and_corrupt_archives() {
    let good: Vec<(&str, Vec<u8>)> = tensors()
        .iter()
        .map(|(n, a)| {
            let mut b = Vec::new();
            ndarray_npy::WriteNpyExt::write_npy(a, &mut b).unwrap();
            (*n, b)
        })
        .collect();
    let m = manifest().to_string();
    let open = |entries: &[(&str, Vec<u8>)]| {
        BundleWorkload::from_bytes("b", &m, raw_npz(entries), &p8())
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(open(&good), Ok(()));
    let with = |i: usize, bytes: Vec<u8>| {
        let mut e = good.clone();
        e[i].1 = bytes;
        open(&e).unwrap_err()
    };
    // A header claiming 2^40 elements: refused on the shape, nothing allocated.
    let e = with(
        0,
        npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"),
    );
    assert_eq!(
        e,
        "b/tensors.npz: conv1.weight: shape [1099511627776] does not match geometry [2,1,3,3]"
    );
    // Right shape, data cut short.
    let mut short = good[0].1.clone();
    short.truncate(short.len() - 5);
    let e = with(0, short);
    assert_eq!(
        e,
        "b/tensors.npz: conv1.weight: not a valid .npy array: reached EOF before reading all data"
    );
    // Not an npy at all; an over-long header.
    assert_eq!(
        with(1, b"hello world".to_vec()),
        "b/tensors.npz: conv1.input: not a valid .npy array: bad magic string"
    );
    let mut long = b"\x93NUMPY\x02\x00".to_vec();
    long.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(with(1, long).ends_with("header of 4294967295 bytes (at most 65536)"));
    // A truncated archive.
    let mut bytes = raw_npz(&good);
    bytes.truncate(bytes.len() / 2);
    let e = BundleWorkload::from_bytes("b", &m, bytes, &p8()).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("b/tensors.npz: not a readable npz archive"),
        "{e}"
    );
}

/// Replaces the bundle in `dir` with `manifest` and `arrays` as a writer does: both files
/// written beside it, then renamed over the old ones.
fn replace(dir: &Path, manifest: &Value, arrays: &[(&str, ArrayD<f32>)]) {
    let new = tempfile::tempdir_in(dir).unwrap();
    write(new.path(), manifest, arrays);
    for f in ["tensors.npz", "manifest.json"] {
        std::fs::rename(new.path().join(f), dir.join(f)).unwrap();
    }
}

/// The same shapes and inputs, other weights, another name: what a re-export of a
/// retrained model writes.
fn other_bundle() -> (Value, Vec<(&'static str, ArrayD<f32>)>) {
    let mut m = manifest();
    m["name"] = json!("other");
    let t = tensors()
        .into_iter()
        .map(|(n, a)| match n.ends_with(".weight") {
            true => (n, a.mapv(|v| -2.0 * v + 1.0)),
            false => (n, a),
        })
        .collect();
    (m, t)
}

/// A bundle exported again while a command runs on it: each layer was read from the
/// tensors.npz its path named at load time, so a run's first layers came from the old
/// bundle and the later ones from the new, under the old manifest. Every layer is now
/// read from the file opened with the manifest.
#[test]
fn a_bundle_replaced_after_open_is_read_as_it_was_opened() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &manifest(), &tensors());
    let p = p8().precision;
    let w = BundleWorkload::open(dir.path(), &p8()).unwrap();
    let first = w.load_layer(0, p, 2).unwrap();
    let (m, t) = other_bundle();
    replace(dir.path(), &m, &t);
    let fresh = BundleWorkload::open(dir.path(), &p8()).unwrap();
    assert_eq!(fresh.name(), "other");
    for i in 0..2 {
        let l = w.load_layer(i, p, 2).unwrap();
        assert_ne!(l, fresh.load_layer(i, p, 2).unwrap(), "layer {i}");
        let old = tempfile::tempdir().unwrap();
        write(old.path(), &manifest(), &tensors());
        let want = BundleWorkload::open(old.path(), &p8()).unwrap();
        assert_eq!(l, want.load_layer(i, p, 2).unwrap(), "layer {i}");
    }
    assert_eq!(w.load_layer(0, p, 2).unwrap(), first);
    assert_eq!(w.name(), "tiny");
}

/// A replacement landing between the manifest's read and tensors.npz's open gave a
/// manifest of one export beside the arrays of the next: the pair is read again, and a
/// directory replaced under both reads is refused in one line.
#[test]
fn the_manifest_and_tensors_opened_are_of_one_export() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &manifest(), &tensors());
    let (m, t) = other_bundle();
    let mut n = 0;
    let (_, text, _, npz) = open_files(dir.path(), || {
        if n == 0 {
            replace(dir.path(), &m, &t);
        }
        n += 1;
    })
    .unwrap();
    assert_eq!(n, 2, "read a second time");
    assert_eq!(text, m.to_string());
    let NpzStore::File(npz) = npz else {
        panic!("tensors.npz not opened")
    };
    assert_eq!(
        crate::files::id_of(&npz),
        crate::files::id_at(&dir.path().join("tensors.npz"))
    );
    // Replaced under both reads: refused.
    let mut flip = 0;
    let e = open_files(dir.path(), || {
        flip += 1;
        match flip % 2 {
            1 => replace(dir.path(), &manifest(), &tensors()),
            _ => replace(dir.path(), &m, &t),
        }
    })
    .err()
    .unwrap()
    .to_string();
    assert_eq!(flip, 2);
    assert_eq!(
        e,
        format!(
            "{}: its files were replaced while they were opened, twice (a writer is exporting the bundle again): run the command again once it is done",
            dir.path().display()
        )
    );
    // A journal left between the reads is the unfinished replacement it always was.
    let e = match open_files(dir.path(), || {
        std::fs::write(dir.path().join(".sresim-commit"), "x").unwrap();
    }) {
        Ok((_, _, _, NpzStore::Unopened(e))) => e,
        _ => panic!("opened beside a journal"),
    };
    assert!(e.contains("holds an unfinished replacement"), "{e}");
}
