//! A bundle graph with a transformer's ops: every shape inferred as computed by hand, and
//! every refused attribute or shape named in one line.

// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use network::bundle::BundleGraph;
use network::graph::{ActKind, Graph, Op};
use network::{ConvGeometry, LayerKind, LayerSpec};
use serde_json::Value;

/// q: a projection over 5 tokens of width 16; head: 16 -> 3 on one token.
fn layers() -> Vec<LayerSpec> {
    vec![
        LayerSpec {
            name: "q".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc_tokens(16, 16, 5),
        },
        LayerSpec {
            name: "head".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(16, 3),
        },
    ]
}

const SEQ: &str = r#"[
    {"op": "Reshape", "inputs": ["x"], "output": "s", "shape": [1, 4, 16]},
    {"op": "Constant", "output": "cls", "value": "c.cls"},
    {"op": "Concat", "inputs": ["cls", "s"], "output": "t", "axis": 1},
    {"op": "Constant", "output": "pos", "value": "c.pos"},
    {"op": "Add", "inputs": ["t", "pos"], "output": "e"},
    {"op": "Constant", "inputs": [], "output": "g", "value": "c.g"},
    {"op": "LayerNormalization", "inputs": ["e", "g", "g"], "output": "n", "epsilon": 1e-6},
    {"op": "layer", "layer": "q", "inputs": ["n"], "output": "qo"},
    {"op": "Reshape", "inputs": ["qo"], "output": "h", "shape": [1, 5, 2, 8]},
    {"op": "Transpose", "inputs": ["h"], "output": "hq", "perm": [0, 2, 1, 3]},
    {"op": "Transpose", "inputs": ["h"], "output": "hk", "perm": [0, 2, 3, 1]},
    {"op": "MatMul", "inputs": ["hq", "hk"], "output": "sc"},
    {"op": "Constant", "output": "k", "value": "c.k"},
    {"op": "Div", "inputs": ["sc", "k"], "output": "sd"},
    {"op": "Sub", "inputs": ["k", "sd"], "output": "ss"},
    {"op": "Softmax", "inputs": ["ss"], "output": "p"},
    {"op": "MatMul", "inputs": ["p", "hq"], "output": "ctx"},
    {"op": "Erf", "inputs": ["ctx"], "output": "er"},
    {"op": "Sqrt", "inputs": ["er"], "output": "sq"},
    {"op": "Gelu", "inputs": ["sq"], "output": "ge", "approximate": "none"},
    {"op": "Gather", "inputs": ["n"], "output": "c0", "axis": 1, "indices": 0},
    {"op": "Gather", "inputs": ["n"], "output": "c2", "axis": -2, "indices": [0, -1]},
    {"op": "layer", "layer": "head", "inputs": ["c0"], "output": "y"}
]"#;

fn parse(nodes: &str) -> Result<BundleGraph, String> {
    let v: Value = serde_json::from_str(nodes).unwrap();
    let mut g = BundleGraph::parse(&v, Some(&"x".into()), Some(&"y".into()), None)
        .map_err(|e| e.to_string())?;
    for (name, shape) in [
        ("c.cls", vec![1, 1, 16]),
        ("c.pos", vec![1, 5, 16]),
        ("c.g", vec![16]),
        ("c.k", vec![]),
    ] {
        g.constants.insert(name.into(), shape);
    }
    Ok(g)
}

fn build(nodes: &str, batch: usize) -> Result<Graph, String> {
    parse(nodes)?
        .build("seq", batch, &[1, 8, 8], &layers())
        .map_err(|e| e.to_string())
}

fn shape(g: &Graph, name: &str) -> Vec<usize> {
    g.tensors[g.tensor_id(name).unwrap()].shape.clone()
}

#[test]
fn a_transformer_block_infers_every_shape() {
    for batch in [1, 3] {
        let g = build(SEQ, batch).unwrap();
        assert!(g.validate().is_ok());
        let b = batch;
        assert_eq!(shape(&g, "s"), [b, 4, 16]);
        // The class token of batch 1 is repeated for every sample.
        assert_eq!(shape(&g, "cls"), [1, 1, 16]);
        assert_eq!(shape(&g, "t"), [b, 5, 16]);
        assert_eq!(shape(&g, "e"), [b, 5, 16]);
        assert_eq!(shape(&g, "n"), [b, 5, 16]);
        assert_eq!(shape(&g, "qo"), [b, 5, 16]);
        assert_eq!(shape(&g, "hq"), [b, 2, 5, 8]);
        assert_eq!(shape(&g, "hk"), [b, 2, 8, 5]);
        assert_eq!(shape(&g, "sc"), [b, 2, 5, 5]);
        assert_eq!(shape(&g, "k"), Vec::<usize>::new());
        assert_eq!(shape(&g, "ss"), [b, 2, 5, 5]);
        assert_eq!(shape(&g, "ctx"), [b, 2, 5, 8]);
        assert_eq!(shape(&g, "ge"), [b, 2, 5, 8]);
        assert_eq!(shape(&g, "c0"), [b, 16]);
        assert_eq!(shape(&g, "c2"), [b, 2, 16]);
        assert_eq!(shape(&g, "y"), [b, 3]);
        // Constants are weights (no batch), and make no node.
        let c = g.tensor_id("pos").unwrap();
        assert_eq!(g.tensors[c].role, network::TensorRole::Weight);
        assert_eq!(g.nodes.len(), 19);
        let node = |name: &str| g.nodes.iter().position(|n| n.name == name).unwrap();
        // Q K^T: 2 heads of [5, 8] x [8, 5] a sample; softmax x V: [5, 5] x [5, 8].
        assert_eq!(
            g.nodes[node("sc")].op,
            Op::MatMul {
                batch: 2 * b,
                m: 5,
                k: 8,
                n: 5
            }
        );
        assert_eq!(g.macs(node("sc")), (b * 2 * 5 * 8 * 5) as f64);
        assert_eq!(g.macs(node("ctx")), (b * 2 * 5 * 5 * 8) as f64);
        // The projection: 5 tokens of 16 x 16 a sample, one crossbar vector each.
        assert_eq!(g.macs(node("q")), (b * 5 * 16 * 16) as f64);
        let xbar = g.crossbar_layers();
        assert_eq!(xbar[0].geom, ConvGeometry::fc_tokens(16, 16, 5));
        assert_eq!(xbar[0].geom.vectors_per_sample(), 5);
        assert_eq!(xbar[1].geom.vectors_per_sample(), 1);
        assert_eq!(
            g.nodes[node("n")].op,
            Op::LayerNorm {
                axis: 2,
                epsilon: 1e-6
            }
        );
        assert_eq!(
            g.nodes[node("hk")].op,
            Op::Transpose {
                perm: vec![0, 2, 3, 1]
            }
        );
        assert_eq!(
            g.nodes[node("c2")].op,
            Op::Gather {
                axis: 1,
                indices: vec![0, 4],
                keep_axis: true
            }
        );
        // LayerNormalization reads the sequence; its scale and bias are its weights.
        let ln = &g.nodes[node("n")];
        let gid = g.tensor_id("g").unwrap();
        assert_eq!((ln.inputs.len(), ln.weights.clone()), (1, vec![gid, gid]));
        assert_eq!(g.nodes[node("ge")].op, Op::Activation(ActKind::Gelu));
        assert_eq!(g.nodes[node("ss")].op, Op::Sub);
    }
    let b = parse(SEQ).unwrap();
    assert_eq!(b.constant_arrays(), ["c.cls", "c.pos", "c.g", "c.k"]);
    assert_eq!(b.constant_tensors()[0], ("cls", "c.cls"));
}

/// `SEQ` with node `i` replaced by `node`.
fn with(i: usize, node: &str) -> String {
    let mut v: Vec<Value> = serde_json::from_str(SEQ).unwrap();
    v[i] = serde_json::from_str(node).unwrap();
    serde_json::to_string(&v).unwrap()
}

#[test]
fn each_unsupported_attribute_or_shape_is_refused_in_one_line() {
    let cases = [
        (
            with(9, r#"{"op": "Transpose", "inputs": ["h"], "output": "hq", "perm": [1, 0, 2, 3]}"#),
            "graph[9] (Transpose -> hq): input shape [1, 5, 2, 8]: perm [1, 0, 2, 3] moves the batch axis (expected perm[0] = 0)",
        ),
        (
            with(9, r#"{"op": "Transpose", "inputs": ["h"], "output": "hq", "perm": [0, 2, 2, 3]}"#),
            "graph[9] (Transpose -> hq): input shape [1, 5, 2, 8]: perm [0, 2, 2, 3] is not a permutation of 4 axes",
        ),
        // A perm shorter than the rank, empty included: checked before the loop over it
        // (`perm: []` indexed an empty list and panicked).
        (
            with(9, r#"{"op": "Transpose", "inputs": ["h"], "output": "hq", "perm": []}"#),
            "graph[9] (Transpose -> hq): input shape [1, 5, 2, 8]: perm [] is not a permutation of 4 axes",
        ),
        (
            with(9, r#"{"op": "Transpose", "inputs": ["h"], "output": "hq", "perm": [0, 2]}"#),
            "graph[9] (Transpose -> hq): input shape [1, 5, 2, 8]: perm [0, 2] is not a permutation of 4 axes",
        ),
        (
            with(9, r#"{"op": "Transpose", "inputs": ["h"], "output": "hq"}"#),
            "graph[9] (Transpose -> hq): input shape [1, 5, 2, 8]: perm [3, 2, 1, 0] moves the batch axis",
        ),
        (
            with(20, r#"{"op": "Gather", "inputs": ["n"], "output": "c0", "axis": 0, "indices": 0}"#),
            "graph[20] (Gather -> c0): input shape [1, 5, 16]: Gather along axis 0 would pick samples",
        ),
        (
            with(20, r#"{"op": "Gather", "inputs": ["n"], "output": "c0", "axis": 1, "indices": 5}"#),
            "graph[20] (Gather -> c0): input shape [1, 5, 16]: index 5 outside [-5, 5) of axis 1",
        ),
        (
            with(20, r#"{"op": "Gather", "inputs": ["n"], "output": "c0", "axis": 1, "indices": []}"#),
            "graph[20] (Gather -> c0): indices: expected an integer or a non-empty list of integers",
        ),
        (
            with(20, r#"{"op": "Gather", "inputs": ["n"], "output": "c0", "axis": 0}"#),
            "graph[20] (Gather -> c0): inputs: expected 2 tensor names (a Constant table, then the token ids)",
        ),
        (
            with(20, r#"{"op": "Gather", "inputs": ["n"], "output": "c0", "axis": 1}"#),
            "graph[20] (Gather -> c0): axis: a lookup of token ids (no indices) is along axis 0 of the table",
        ),
        (
            with(19, r#"{"op": "Gelu", "inputs": ["sq"], "output": "ge", "approximate": "tanh"}"#),
            "graph[19] (Gelu -> ge): approximate: only \"none\" (the erf form) is supported",
        ),
        (
            with(6, r#"{"op": "LayerNormalization", "inputs": ["e", "g", "g"], "output": "n", "axis": 0}"#),
            "graph[6] (LayerNormalization -> n): input shape [1, 5, 16]: LayerNormalization over the batch axis would mix samples",
        ),
        (
            with(6, r#"{"op": "LayerNormalization", "inputs": ["e", "pos"], "output": "n"}"#),
            "graph[6] (LayerNormalization -> n): input shape [1, 5, 16]: scale or bias [1, 5, 16] does not broadcast to the normalized dimensions [16]",
        ),
        (
            with(6, r#"{"op": "LayerNormalization", "inputs": ["e", "t"], "output": "n"}"#),
            "graph[6] (LayerNormalization -> n): inputs: the scale and bias must be Constant nodes",
        ),
        (
            with(6, r#"{"op": "LayerNormalization", "inputs": ["e"], "output": "n"}"#),
            "graph[6] (LayerNormalization -> n): inputs: expected 2 or 3 tensor names (X, scale, bias)",
        ),
        (
            with(6, r#"{"op": "LayerNormalization", "inputs": ["e", "g"], "output": "n", "epsilon": 0}"#),
            "graph[6] (LayerNormalization -> n): epsilon: expected a positive number",
        ),
        (
            with(6, r#"{"op": "LayerNormalization", "inputs": ["e", "g"], "output": "n", "stash_type": 1}"#),
            "graph[6] (LayerNormalization -> n): stash_type: unknown key (expected op, inputs, output, axis, epsilon)",
        ),
        (
            with(11, r#"{"op": "MatMul", "inputs": ["hq", "hq"], "output": "sc"}"#),
            "graph[11] (MatMul -> sc): input shape [1, 2, 5, 8]: MatMul of [1, 2, 5, 8] and [1, 2, 5, 8]: inner dimensions 8 and 5 differ",
        ),
        (
            with(11, r#"{"op": "MatMul", "inputs": ["hq", "n"], "output": "sc"}"#),
            "graph[11] (MatMul -> sc): input shape [1, 2, 5, 8]: MatMul of [1, 2, 5, 8] and [1, 5, 16]: expected two tensors of the same rank >= 3",
        ),
        (
            with(1, r#"{"op": "Constant", "output": "cls", "value": "c.none"}"#),
            "graph[1] (Constant -> cls): value: \"c.none\": no such array in tensors.npz",
        ),
        (
            with(1, r#"{"op": "Constant", "inputs": ["x"], "output": "cls", "value": "c.cls"}"#),
            "graph[1] (Constant -> cls): inputs: expected no tensor (a constant reads none)",
        ),
        (
            with(4, r#"{"op": "Add", "inputs": ["cls", "pos"], "output": "e"}"#),
            "graph[4] (Add -> e): inputs: every input is a Constant (expected at least one activation)",
        ),
        (
            with(7, r#"{"op": "layer", "layer": "q", "inputs": ["s"], "output": "qo"}"#),
            "graph[7] (layer -> qo): layer \"q\": its geometry expects input [1, 5, 16], the graph gives [1, 4, 16]",
        ),
        (
            with(1, r#"{"op": "Constant", "output": "cls", "value": "c.g"}"#),
            "graph[2] (Concat -> t): input shape [1, 4, 16]: does not concatenate with [16] along axis 1",
        ),
    ];
    for (nodes, want) in cases {
        let e = build(&nodes, 1).unwrap_err();
        assert!(e.starts_with(want), "{e}\n  expected: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
}

/// Token ids `[N, 4]` looked up in a `[10, 16]` table, plus a positional embedding: the
/// embedding of a text transformer.
const LOOKUP: &str = r#"[
    {"op": "Constant", "output": "table", "value": "c.table"},
    {"op": "Gather", "inputs": ["table", "ids"], "output": "emb", "axis": 0},
    {"op": "Constant", "output": "pos", "value": "c.pos"},
    {"op": "Add", "inputs": ["emb", "pos"], "output": "e"},
    {"op": "Reshape", "inputs": ["e"], "output": "y", "shape": [1, 64]}
]"#;

fn build_lookup(nodes: &str, batch: usize) -> Result<Graph, String> {
    let v: Value = serde_json::from_str(nodes).unwrap();
    let mut g = BundleGraph::parse(&v, Some(&"ids".into()), Some(&"y".into()), None)
        .map_err(|e| e.to_string())?;
    for (name, shape) in [
        ("c.table", vec![10, 16]),
        ("c.pos", vec![1, 4, 16]),
        ("c.cube", vec![10, 4, 4]),
    ] {
        g.constants.insert(name.into(), shape);
    }
    g.build("emb", batch, &[4], &[]).map_err(|e| e.to_string())
}

#[test]
fn a_lookup_of_token_ids_is_an_embedding_whose_table_is_its_weight() {
    for b in [1, 3] {
        let g = build_lookup(LOOKUP, b).unwrap();
        assert!(g.validate().is_ok());
        assert_eq!(shape(&g, "emb"), [b, 4, 16]);
        assert_eq!(shape(&g, "y"), [b, 64]);
        let n = g.nodes.iter().find(|n| n.name == "emb").unwrap();
        assert_eq!(n.op, Op::Embedding { vocab: 10, dim: 16 });
        assert_eq!(n.inputs, vec![g.tensor_id("ids").unwrap()]);
        assert_eq!(n.weights, vec![g.tensor_id("table").unwrap()]);
    }
    let bad = |node: &str| {
        let mut v: Vec<Value> = serde_json::from_str(LOOKUP).unwrap();
        v[1] = serde_json::from_str(node).unwrap();
        build_lookup(&serde_json::to_string(&v).unwrap(), 1).unwrap_err()
    };
    let cases = [
        (
            r#"{"op": "Gather", "inputs": ["ids", "table"], "output": "emb"}"#,
            "graph[1] (Gather -> emb): inputs: a lookup reads a Constant table, then token ids that are not a Constant",
        ),
        (
            r#"{"op": "Gather", "inputs": ["table", "table"], "output": "emb"}"#,
            "graph[1] (Gather -> emb): inputs: a lookup reads a Constant table, then token ids that are not a Constant",
        ),
        (
            r#"{"op": "Gather", "inputs": ["table", "ids"], "output": "emb", "axis": 1}"#,
            "graph[1] (Gather -> emb): axis: a lookup of token ids (no indices) is along axis 0 of the table",
        ),
    ];
    for (node, want) in cases {
        let e = bad(node);
        assert!(e.starts_with(want), "{e}\n  expected: {want}");
        assert!(!e.contains('\n'), "{e}");
    }
    let mut v: Vec<Value> = serde_json::from_str(LOOKUP).unwrap();
    v[0] = serde_json::from_str(r#"{"op": "Constant", "output": "table", "value": "c.cube"}"#)
        .unwrap();
    let e = build_lookup(&serde_json::to_string(&v).unwrap(), 1).unwrap_err();
    assert!(
        e.starts_with("graph[1] (Gather -> emb): input shape [1, 4]: a lookup table of shape [10, 4, 4]: expected [vocab, dim]"),
        "{e}"
    );
}
