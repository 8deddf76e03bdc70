//! Bundles with a network graph (`graph`, `graph_input`, `graph_output`, `labels`).

use std::fs::File;

use ndarray::{Array, Array1, ArrayD, IxDyn};
use ndarray_npy::NpzWriter;
use serde_json::{json, Value};

use super::*;

/// conv1 (1x4x4 -> 2x2x2), fc1 (8 -> 3) with calibrated input scales, joined by a graph:
/// x -> conv1 -> Relu -> Flatten -> fc1 -> y.
fn manifest() -> Value {
    json!({"name": "tiny-net", "layers": [
        {"name": "conv1", "kind": "conv", "in_channels": 1, "out_channels": 2, "kernel": 3,
         "input_shape": [1, 4, 4], "weight": "conv1.weight", "input": "conv1.input",
         "input_max": 2.5, "input_signed": true},
        {"name": "fc1", "kind": "fc", "in_features": 8, "out_features": 3,
         "weight": "fc1.weight", "input": "fc1.input", "input_max": 4.0, "input_signed": false}],
     "graph": [
        {"op": "layer", "layer": "conv1", "inputs": ["x"], "output": "c1"},
        {"op": "Relu", "inputs": ["c1"], "output": "r1"},
        {"op": "Flatten", "inputs": ["r1"], "output": "f", "axis": 1},
        {"op": "layer", "layer": "fc1", "inputs": ["f"], "output": "y"}],
     "graph_input": "x", "graph_output": "y", "labels": "labels"})
}

fn seq(shape: &[usize]) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(|i| (i % 5) as f32 - 2.0).collect()).unwrap()
}

/// Layer traces of 2 samples; a graph input of `m` samples and `labels` (int64 [m]).
fn write(dir: &Path, manifest: &Value, m: usize, labels: Option<Array1<i64>>) {
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    let mut npz = NpzWriter::new_compressed(File::create(dir.join("tensors.npz")).unwrap());
    npz.add_array("conv1.weight", &seq(&[2, 1, 3, 3])).unwrap();
    npz.add_array("conv1.input", &seq(&[2, 1, 4, 4])).unwrap();
    npz.add_array("fc1.weight", &seq(&[3, 8])).unwrap();
    npz.add_array("fc1.input", &seq(&[2, 8])).unwrap();
    npz.add_array("x", &seq(&[m, 1, 4, 4])).unwrap();
    if let Some(l) = labels {
        npz.add_array("labels", &l).unwrap();
    }
    npz.finish().unwrap();
}

fn open(m: &Value, samples: usize, labels: Option<Array1<i64>>) -> anyhow::Result<BundleWorkload> {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), m, samples, labels);
    BundleWorkload::open(dir.path(), &OpenOptions::default())
}

fn open_err(m: &Value, samples: usize, labels: Option<Array1<i64>>) -> String {
    let e = open(m, samples, labels).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn a_graph_has_its_own_sample_count_and_is_exposed() {
    let w = open(&manifest(), 5, Some(Array1::from(vec![0, 1, 2, 0, 1]))).unwrap();
    // N = 2 layer-trace samples, M = 5 graph-input samples: no clash.
    assert_eq!((w.available_samples(), w.graph_samples()), (2, Some(5)));
    let g = w.graph(3).unwrap().unwrap();
    let shape = |n: &str| g.tensors[g.tensor_id(n).unwrap()].shape.clone();
    assert_eq!(shape("x"), [3, 1, 4, 4]);
    assert_eq!(shape("f"), [3, 8]);
    assert_eq!(shape("y"), [3, 3]);
    let names: Vec<String> = g.crossbar_layers().into_iter().map(|l| l.name).collect();
    assert_eq!(names, ["conv1", "fc1"]);
    let bg = w.manifest().graph.as_ref().unwrap();
    assert_eq!(
        (bg.input.as_str(), bg.output.as_str(), bg.labels.as_deref()),
        ("x", "y", Some("labels"))
    );
    let l = &w.manifest().layers;
    assert_eq!((l[0].input_max, l[0].input_signed), (Some(2.5), Some(true)));
    assert_eq!(
        (l[1].input_max, l[1].input_signed),
        (Some(4.0), Some(false))
    );
}

#[test]
fn a_bundle_without_graph_has_none() {
    let mut m = manifest();
    let o = m.as_object_mut().unwrap();
    for k in ["graph", "graph_input", "graph_output", "labels"] {
        o.remove(k);
    }
    let w = open(&m, 1, None).unwrap();
    assert!(w.graph(1).unwrap().is_none());
    assert_eq!(w.graph_samples(), None);
}

#[test]
fn graph_errors_name_the_node_or_the_key() {
    let labels = || Some(Array1::from(vec![0i64, 1]));
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut m = manifest();
        f(&mut m);
        m
    };
    let cases: Vec<(Value, &str)> = vec![
        (
            edit(&|m| m["graph"][1] = json!({"inputs": ["c1"], "output": "r1"})),
            "manifest.json: graph[1]: op: absent",
        ),
        (
            edit(&|m| m["graph"][1]["inputs"] = json!(["c2"])),
            "manifest.json: graph[1] (Relu -> r1): input \"c2\": unknown tensor",
        ),
        (
            edit(&|m| m["graph"][3]["layer"] = json!("fc9")),
            "manifest.json: graph[3] (layer -> y): layer \"fc9\": no layer of the manifest",
        ),
        (
            edit(&|m| m["graph"][3]["inputs"] = json!(["x"])),
            "manifest.json: graph[3] (layer -> y): layer \"fc1\": its geometry expects input [N, 8]",
        ),
        (
            edit(&|m| m["graph"][2] = json!({"op": "MaxPool", "inputs": ["r1"],
                "output": "f", "kernel_shape": [3, 3]})),
            "manifest.json: graph[2] (MaxPool -> f): input shape [1, 2, 2, 2]: the window exceeds",
        ),
        (
            edit(&|m| m["graph_output"] = json!("z")),
            "manifest.json: graph_output: \"z\": no node writes this tensor",
        ),
        (
            edit(&|m| {
                m.as_object_mut().unwrap().remove("graph");
            }),
            "manifest.json: graph_input: given without graph",
        ),
        (
            edit(&|m| m["layers"][0]["input_max"] = json!(-1)),
            "manifest.json: layers[0].input_max: expected a positive finite number",
        ),
        (
            edit(&|m| m["layers"][1]["input_signed"] = json!(1)),
            "manifest.json: layers[1].input_signed: expected true or false",
        ),
        (
            edit(&|m| m["graph_input"] = json!("conv9.input")),
            "tensors.npz: conv9.input: no such array (named by graph_input of manifest.json)",
        ),
    ];
    for (m, want) in cases {
        let e = open_err(&m, 2, labels());
        assert!(e.contains(want), "{e}\n  expected: {want}");
    }
    // Labels must be integers, one per graph-input sample.
    let e = open_err(&manifest(), 3, labels());
    assert!(
        e.ends_with("tensors.npz: labels: int64 [2] (expected integers [3], one per sample of x)"),
        "{e}"
    );
    let e = open_err(&manifest(), 2, None);
    assert!(
        e.ends_with("labels: no such array (named by labels of manifest.json)"),
        "{e}"
    );
}

/// `write`, then an entry `name.npy` holding only a header that declares `shape`.
fn add_hostile(dir: &Path, name: &str, shape: &str) {
    use std::io::Write;
    let path = dir.join("tensors.npz");
    let old = std::fs::read(&path).unwrap();
    let mut src = zip::ZipArchive::new(std::io::Cursor::new(old)).unwrap();
    let mut z = zip::ZipWriter::new(File::create(&path).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    for i in 0..src.len() {
        let f = src.by_index(i).unwrap();
        if f.name() != format!("{name}.npy") {
            z.raw_copy_file(f).unwrap();
        }
    }
    let dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}\n");
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    npy.extend_from_slice(dict.as_bytes());
    z.start_file(format!("{name}.npy"), opts).unwrap();
    z.write_all(&npy).unwrap();
    z.finish().unwrap();
}

#[test]
fn declared_sizes_of_graph_arrays_are_bounded_before_they_are_read() {
    let open_with = |m: &Value, hostile: &[(&str, &str)], max: u64| {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), m, 2, Some(Array1::from(vec![0i64, 1])));
        for (name, shape) in hostile {
            add_hostile(dir.path(), name, shape);
        }
        let opts = OpenOptions {
            max_layer_bytes: max,
            ..OpenOptions::default()
        };
        let w = BundleWorkload::open(dir.path(), &opts).map_err(|e| e.to_string());
        w.map(|w| (w, dir))
    };
    // A graph input claiming 2^34 samples (and labels to match): refused at open, not
    // aborted on an allocation of 1 TiB when the accuracy path reads it.
    let e = open_with(
        &manifest(),
        &[
            ("x", "(17179869184, 1, 4, 4)"),
            ("labels", "(17179869184,)"),
        ],
        4 << 30,
    )
    .unwrap_err();
    assert!(
        e.contains("tensors.npz: x: shape [17179869184,1,4,4]: 274877906944 elements of 16 bytes")
            && e.ends_with("(limits.max_layer_bytes)"),
        "{e}"
    );
    // One whose elements wrap 64 bits.
    let e = open_with(
        &manifest(),
        &[("x", "(4294967296, 4294967296, 1, 1)")],
        4 << 30,
    )
    .unwrap_err();
    assert!(
        e.contains("x: shape [4294967296,4294967296,1,1]: more than 2^64 elements"),
        "{e}"
    );
    // A bias claiming 2^34 elements: its data is never allocated.
    let (w, _dir) = open_with(&manifest(), &[("conv1.bias", "(17179869184,)")], 4 << 30).unwrap();
    assert_eq!(w.array_shape("conv1.bias").unwrap(), [17179869184]);
    let e = w.read_f64("conv1.bias").unwrap_err().to_string();
    assert!(
        e.ends_with("conv1.bias: shape [17179869184]: 17179869184 elements of 4 bytes (68719476736 bytes), more than the limit of 4294967296 bytes (limits.max_layer_bytes)"),
        "{e}"
    );
    // A graph tensor (here a Pad of one sample to 2^40 elements) over the memory cap.
    let mut m = manifest();
    m["graph"][2] = json!({"op": "Pad", "inputs": ["r1"], "output": "p",
        "pads": [0, 0, 0, 0, 0, 0, 1048576, 1048576]});
    m["graph"].as_array_mut().unwrap().insert(
        3,
        json!({"op": "GlobalAveragePool", "inputs": ["p"], "output": "g"}),
    );
    m["graph"].as_array_mut().unwrap().insert(
        4,
        json!({"op": "Flatten", "inputs": ["r1"], "output": "f", "axis": 1}),
    );
    let e = open_with(&m, &[], 4 << 30).unwrap_err();
    assert!(
        e.contains("manifest.json: graph: tensor p [1,2,1048578,1048578]: 2199031644168 elements of 8 bytes"),
        "{e}"
    );
}
