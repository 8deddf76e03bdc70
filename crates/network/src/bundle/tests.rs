//! The graph reader's tests: parsing, shape inference and errors of every op family.

use super::*;
use crate::geometry::{ConvGeometry, LayerKind};
use crate::graph::{ActKind, PoolKind, PoolWindow};

/// conv1 (1x8x8 -> 4x6x6), fc1 (36 -> 10): the layers of the tiny manifests below.
fn layers() -> Vec<LayerSpec> {
    vec![
        LayerSpec {
            name: "conv1".into(),
            kind: LayerKind::Conv,
            geom: ConvGeometry::conv(1, 4, 3, 1, 0, 1, [8, 8]),
        },
        LayerSpec {
            name: "fc1".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(36, 10),
        },
    ]
}

const GOOD: &str = r#"[
    {"op": "layer", "layer": "conv1", "inputs": ["x"], "output": "c1"},
    {"op": "Relu", "inputs": ["c1"], "output": "r1"},
    {"op": "MaxPool", "inputs": ["r1"], "output": "p1", "kernel_shape": [2, 2],
     "strides": [2, 2]},
    {"op": "Mul", "inputs": ["p1", "p1"], "output": "sq"},
    {"op": "Add", "inputs": ["p1", "sq"], "output": "s"},
    {"op": "Flatten", "inputs": ["s"], "output": "f", "axis": 1},
    {"op": "Concat", "inputs": ["f", "f", "f", "f"], "output": "cat", "axis": -1},
    {"op": "Reshape", "inputs": ["cat"], "output": "rs", "shape": [1, 16, 3, 3]},
    {"op": "GlobalAveragePool", "inputs": ["rs"], "output": "gap"},
    {"op": "Pad", "inputs": ["rs"], "output": "pad", "pads": [0, 0, 1, 1, 0, 0, 1, 1]},
    {"op": "AveragePool", "inputs": ["pad"], "output": "ap", "kernel_shape": [3, 3],
     "strides": [2, 2], "ceil_mode": 1, "count_include_pad": 1},
    {"op": "Clip", "inputs": ["ap"], "output": "clip", "min": 0, "max": 6},
    {"op": "HardSwish", "inputs": ["clip"], "output": "hs"},
    {"op": "Reshape", "inputs": ["rs"], "output": "flat", "shape": [-1, 0, -1]},
    {"op": "layer", "layer": "fc1", "inputs": ["f"], "output": "y"},
    {"op": "Softmax", "inputs": ["y"], "output": "prob"}
]"#;

fn parse(nodes: &str) -> Result<BundleGraph, GraphError> {
    let v: Value = serde_json::from_str(nodes).unwrap();
    let (i, o, l) = (Value::from("x"), Value::from("prob"), Value::from("labels"));
    BundleGraph::parse(&v, Some(&i), Some(&o), Some(&l))
}

fn build(nodes: &str) -> Result<Graph, String> {
    let g = parse(nodes).map_err(|e| e.to_string())?;
    g.build("tiny", 2, &[1, 8, 8], &layers())
        .map_err(|e| e.to_string())
}

fn shape(g: &Graph, name: &str) -> Vec<usize> {
    g.tensors[g.tensor_id(name).unwrap()].shape.clone()
}

#[test]
fn a_good_graph_infers_every_shape() {
    let g = build(GOOD).unwrap();
    assert!(g.validate().is_ok());
    assert_eq!(shape(&g, "x"), [2, 1, 8, 8]);
    assert_eq!(shape(&g, "c1"), [2, 4, 6, 6]);
    assert_eq!(shape(&g, "p1"), [2, 4, 3, 3]);
    assert_eq!(shape(&g, "f"), [2, 36]);
    assert_eq!(shape(&g, "cat"), [2, 144]);
    assert_eq!(shape(&g, "rs"), [2, 16, 3, 3]);
    assert_eq!(shape(&g, "gap"), [2, 16, 1, 1]);
    assert_eq!(shape(&g, "pad"), [2, 16, 5, 5]);
    // ceil((5 - 3) / 2) + 1 = 2
    assert_eq!(shape(&g, "ap"), [2, 16, 2, 2]);
    assert_eq!(shape(&g, "flat"), [2, 16, 9]);
    assert_eq!(shape(&g, "prob"), [2, 10]);
    assert_eq!(shape(&g, "conv1.weight"), [4, 1, 3, 3]);
    assert_eq!(g.tensors[g.outputs[0]].name, "prob");
    let layers: Vec<String> = g.crossbar_layers().into_iter().map(|l| l.name).collect();
    assert_eq!(layers, ["conv1", "fc1"]);
    let n = &g.nodes[2];
    assert_eq!(n.name, "p1");
    assert_eq!(
        n.op,
        Op::Pool {
            kind: PoolKind::Max,
            window: PoolWindow {
                kernel: [2, 2],
                strides: [2, 2],
                pads: [0; 4],
                ceil_mode: false,
                count_include_pad: false
            }
        }
    );
    assert_eq!(g.nodes[6].op, Op::Concat { axis: 1 });
    assert_eq!(
        g.nodes[11].op,
        Op::Activation(ActKind::Clip { min: 0.0, max: 6.0 })
    );
    assert_eq!(g.nodes[15].op, Op::Softmax { axis: 1 });
    let b = parse(GOOD).unwrap();
    assert_eq!(
        (b.input.as_str(), b.output.as_str(), b.labels.as_deref()),
        ("x", "prob", Some("labels"))
    );
}

/// `GOOD` with node `i` replaced by `node`.
fn with(i: usize, node: &str) -> String {
    let mut v: Vec<Value> = serde_json::from_str(GOOD).unwrap();
    v[i] = serde_json::from_str(node).unwrap();
    serde_json::to_string(&v).unwrap()
}

#[test]
fn each_bad_node_is_named_in_one_line() {
    let cases = [
        (
            with(1, r#"{"inputs": ["c1"], "output": "r1"}"#),
            "graph[1]: op: absent (expected one of: layer, Relu,",
        ),
        (
            with(1, r#"{"op": "Selu", "inputs": ["c1"], "output": "r1"}"#),
            "graph[1] (Selu -> r1): op: unknown op \"Selu\"",
        ),
        (
            with(1, r#"{"op": "Relu", "inputs": ["c9"], "output": "r1"}"#),
            "graph[1] (Relu -> r1): input \"c9\": unknown tensor",
        ),
        (
            with(1, r#"{"op": "Relu", "inputs": ["c1"], "output": "x"}"#),
            "graph[1] (Relu -> x): output \"x\": already names a tensor",
        ),
        (
            with(0, r#"{"op": "layer", "layer": "conv9", "inputs": ["x"], "output": "c1"}"#),
            "graph[0] (layer -> c1): layer \"conv9\": no layer of the manifest",
        ),
        (
            with(14, r#"{"op": "layer", "layer": "fc1", "inputs": ["pad"], "output": "y"}"#),
            "graph[14] (layer -> y): layer \"fc1\": its geometry expects input [N, 36] (or [N, C, H, W] with C*H*W = 36), the graph gives [2, 16, 5, 5]",
        ),
        (
            with(0, r#"{"op": "layer", "layer": "conv1", "inputs": ["x"], "output": "c1"}"#)
                .replace(r#"{"inputs":["c1"],"op":"Relu","output":"r1"}"#,
                    r#"{"inputs":["c1"],"layer":"conv1","op":"layer","output":"r1"}"#),
            "graph[1] (layer -> r1): layer \"conv1\": already placed by an earlier node",
        ),
        (
            with(2, r#"{"op": "MaxPool", "inputs": ["r1"], "output": "p1", "kernel_shape": [9, 9]}"#),
            "graph[2] (MaxPool -> p1): input shape [2, 4, 6, 6]: the window exceeds the padded input",
        ),
        (
            with(2, r#"{"op": "MaxPool", "inputs": ["r1"], "output": "p1"}"#),
            "graph[2] (MaxPool -> p1): kernel_shape: absent",
        ),
        (
            with(2, r#"{"op": "MaxPool", "inputs": ["r1"], "output": "p1", "kernel": [2, 2]}"#),
            "graph[2] (MaxPool -> p1): kernel: unknown key (expected op, inputs, output, kernel_shape,",
        ),
        (
            with(4, r#"{"op": "Add", "inputs": ["p1", "r1"], "output": "s"}"#),
            "graph[4] (Add -> s): input shape [2, 4, 3, 3]: does not broadcast with [2, 4, 6, 6]",
        ),
        (
            with(4, r#"{"op": "Add", "inputs": ["p1"], "output": "s"}"#),
            "graph[4] (Add -> s): inputs: expected 2 tensor names",
        ),
        (
            with(6, r#"{"op": "Concat", "inputs": ["f", "p1"], "output": "cat", "axis": 1}"#),
            "graph[6] (Concat -> cat): input shape [2, 36]: does not concatenate with [2, 4, 3, 3]",
        ),
        (
            with(7, r#"{"op": "Reshape", "inputs": ["cat"], "output": "rs", "shape": [1, 5, 3, 3]}"#),
            "graph[7] (Reshape -> rs): input shape [2, 144]: cannot reshape to [1, 5, 3, 3]",
        ),
        (
            with(9, r#"{"op": "Pad", "inputs": ["rs"], "output": "pad", "pads": [0, 1]}"#),
            "graph[9] (Pad -> pad): input shape [2, 16, 3, 3]: pads has 2 entries, expected 8",
        ),
        (
            with(15, r#"{"op": "Softmax", "inputs": ["y"], "output": "prob", "axis": 2}"#),
            "graph[15] (Softmax -> prob): input shape [2, 10]: axis 2 outside [-2, 2)",
        ),
        (
            with(15, r#"{"op": "Softmax", "inputs": ["y"], "output": "logits"}"#),
            "graph_output: \"prob\": no node writes this tensor",
        ),
        (
            with(11, r#"{"op": "Clip", "inputs": ["ap"], "output": "clip", "min": "0"}"#),
            "graph[11] (Clip -> clip): min: expected a finite number",
        ),
    ];
    for (nodes, want) in cases {
        let e = build(&nodes).unwrap_err();
        assert!(e.starts_with(want), "{e}\n  expected: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}

/// ONNX writes `dilations` on pools (torch.onnx: [1, 1] on every MaxPool): accepted
/// when every entry is 1, refused by name otherwise (a dilated window is not modelled).
#[test]
fn pool_dilations_of_one_are_accepted_and_others_refused() {
    let pool = |d: &str| {
        with(
            2,
            &format!(
                r#"{{"op": "MaxPool", "inputs": ["r1"], "output": "p1", "kernel_shape": [2, 2], "strides": [2, 2], "dilations": {d}}}"#
            ),
        )
    };
    let g = build(&pool("[1, 1]")).unwrap();
    assert_eq!(g, build(GOOD).unwrap());
    let cases = [
        (
            "[2, 2]",
            "dilations: dilated pooling is not supported (expected [1, 1])",
        ),
        (
            "[1, 2]",
            "dilations: dilated pooling is not supported (expected [1, 1])",
        ),
        ("[1]", "dilations: expected 2 positive integers"),
        ("[0, 1]", "dilations: expected 2 positive integers"),
    ];
    for (d, want) in cases {
        let e = build(&pool(d)).unwrap_err();
        assert_eq!(e, format!("graph[2] (MaxPool -> p1): {want}"), "{d}");
    }
}

#[test]
fn the_keys_beside_the_graph_are_checked() {
    let v: Value = serde_json::from_str(GOOD).unwrap();
    let x = Value::from("x");
    let e = BundleGraph::parse(&v, None, Some(&x), None).unwrap_err();
    assert_eq!(e.to_string(), "graph_input: expected a non-empty string");
    let e = BundleGraph::parse(&Value::Array(vec![]), Some(&x), Some(&x), None).unwrap_err();
    assert_eq!(e.to_string(), "graph: expected a non-empty array of nodes");
    let g = BundleGraph::parse(&v, Some(&x), Some(&x), None).unwrap();
    assert_eq!(g.labels, None);
    // A conv layer whose geometry disagrees with the graph input's shape.
    let e = g.build("t", 2, &[1, 9, 9], &layers()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "graph[0] (layer -> c1): layer \"conv1\": its geometry expects input \
         [2, 1, 8, 8], the graph gives [2, 1, 9, 9]"
    );
    // An input with a zero dimension is refused before any node.
    let e = g.build("t", 1, &[1, 0, 8], &layers()).unwrap_err();
    assert_eq!(e.at, "graph_input");
}

#[test]
fn hostile_sizes_are_refused_before_anything_is_built() {
    let big = i64::MAX;
    assert_eq!(
        PoolWindow {
            strides: [usize::MAX, 1],
            pads: [usize::MAX, 0, 1, 0],
            ..PoolWindow::square(2, 1, 0)
        }
        .output_hw([6, 6]),
        None
    );
    let cases = [
        // Pads that wrap usize when added to the input.
        (
            with(9, &format!(r#"{{"op": "Pad", "inputs": ["rs"], "output": "pad", "pads": [0, 0, {big}, 0, 0, 0, {big}, 0]}}"#)),
            "graph[9] (Pad -> pad): input shape [2, 16, 3, 3]: the padded size: ",
        ),
        // Pads that fit usize but make a tensor of more than 2^48 elements.
        (
            with(9, r#"{"op": "Pad", "inputs": ["rs"], "output": "pad", "pads": [0, 0, 4398046511104, 0, 0, 0, 4398046511104, 0]}"#),
            "graph[9] (Pad -> pad): input shape [2, 16, 3, 3]: the output [2, 16, 8796093022211, 3] holds 844424930132256 elements, more than the limit of 281474976710656",
        ),
        // A reshape whose dimensions multiply past 2^64 (and to 0 when wrapped).
        (
            with(7, r#"{"op": "Reshape", "inputs": ["cat"], "output": "rs", "shape": [1, 4294967296, 4294967296, 0]}"#),
            "graph[7] (Reshape -> rs): input shape [2, 144]: ",
        ),
        (
            with(7, r#"{"op": "Reshape", "inputs": ["cat"], "output": "rs", "shape": [1, 4294967296, 4294967296, -1]}"#),
            "graph[7] (Reshape -> rs): input shape [2, 144]: cannot reshape to",
        ),
        // A pooling window of 2^62 elements.
        (
            with(2, r#"{"op": "MaxPool", "inputs": ["r1"], "output": "p1", "kernel_shape": [2147483648, 2147483648], "pads": [2147483647, 0, 0, 0]}"#),
            "graph[2] (MaxPool -> p1): kernel_shape: a window of 4611686018427387904 elements, more than the limit of 1048576",
        ),
        // A window at the limit over a padded input: 4.4e12 reads a sample.
        (
            with(2, r#"{"op": "MaxPool", "inputs": ["r1"], "output": "p1", "kernel_shape": [1024, 1024], "pads": [1023, 1023, 1023, 1023]}"#),
            "graph[2] (MaxPool -> p1): input shape [2, 4, 6, 6]: 4 x 1029 x 1029 outputs of a 1024 x 1024 window read more than 4294967296",
        ),
        // An attribute beyond float32 (it would be cast to infinity).
        (
            with(11, r#"{"op": "Clip", "inputs": ["ap"], "output": "clip", "min": 0, "max": 1e300}"#),
            "graph[11] (Clip -> clip): max: expected a finite number within the float32 range",
        ),
        (
            with(9, r#"{"op": "Pad", "inputs": ["rs"], "output": "pad", "pads": [0, 0, 1, 1, 0, 0, 1, 1], "value": -1e39}"#),
            "graph[9] (Pad -> pad): value: expected a finite number within the float32 range",
        ),
    ];
    for (nodes, want) in cases {
        let e = build(&nodes).unwrap_err();
        assert!(e.starts_with(want), "{e}\n  expected: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A concatenation whose axis sums past 2^64.
    let g = parse(
        r#"[{"op": "Reshape", "inputs": ["x"], "output": "r", "shape": [1, 1, 1, 64]},
            {"op": "Pad", "inputs": ["r"], "output": "p", "pads": [0, 0, 0, 0, 0, 0, 0, 9223372036854775807]},
            {"op": "Softmax", "inputs": ["p"], "output": "prob"}]"#,
    )
    .unwrap();
    let e = g
        .build("t", 1, &[1, 8, 8], &layers())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("graph[1] (Pad -> p): input shape [1, 1, 1, 64]: the output [1, 1, 1, 9223372036854775871] holds"), "{e}");
    let g = parse(
        r#"[{"op": "Concat", "inputs": ["x", "x", "x"], "output": "c", "axis": 1},
            {"op": "Softmax", "inputs": ["c"], "output": "prob"}]"#,
    )
    .unwrap();
    let e = g
        .build("t", 1, &[usize::MAX / 2, 1, 1], &layers())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("graph_input: input shape [1, 9223372036854775807, 1, 1]: the output"),
        "{e}"
    );
    let e = g
        .build("t", 1, &[1 << 47, 1, 1], &layers())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("graph[0] (Concat -> c): input shape [1, 140737488355328, 1, 1]: the output [1, 422212465065984, 1, 1] holds 422212465065984 elements, more than the limit"), "{e}");
}

#[test]
fn ceil_mode_drops_a_window_that_starts_in_the_end_padding() {
    // PyTorch: 6 + 1 + 1 = 8, k 2, s 2, ceil -> 5, but the 5th window starts at 8 >= 6 + 1.
    let mut w = PoolWindow::square(2, 2, 1);
    w.ceil_mode = true;
    assert_eq!(w.output_hw([6, 6]), Some([4, 4]));
    w.ceil_mode = false;
    assert_eq!(w.output_hw([6, 6]), Some([4, 4]));
    // Caffe's cifar10 pools: 32 -> 16 -> 8 -> 4 with k 3, s 2, ceil.
    let mut w = PoolWindow::square(3, 2, 0);
    w.ceil_mode = true;
    assert_eq!(w.output_hw([32, 32]), Some([16, 16]));
    assert_eq!(w.output_hw([8, 8]), Some([4, 4]));
}
