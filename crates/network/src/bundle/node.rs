//! The vocabulary of a bundle graph's nodes, below every op family: the op names
//! ([`OPS`]) and the attribute keys of each ([`attribute_keys`]), the parsed op
//! ([`NodeOp`]), the errors ([`GraphError`]) and the readers of attribute values that
//! every family's parser uses. A new op adds its name and keys and its `NodeOp` variant
//! here, and its parsing and shape inference in its family's file.

use serde_json::{Map, Value};
use thiserror::Error;

use crate::graph::{ActKind, PoolKind, PoolWindow};

/// The op names a node may carry.
pub const OPS: [&str; 28] = [
    "layer",
    "Relu",
    "Clip",
    "LeakyRelu",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "Tanh",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "Flatten",
    "Add",
    "Mul",
    "Concat",
    "Softmax",
    "Pad",
    "Reshape",
    "Constant",
    "LayerNormalization",
    "Transpose",
    "MatMul",
    "Gather",
    "Sub",
    "Div",
    "Erf",
    "Sqrt",
    "Gelu",
];

/// What went wrong, without saying where.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GraphErrorKind {
    #[error("expected a JSON object")]
    NotAnObject,
    #[error("op: absent (expected one of: {ops})", ops = OPS.join(", "))]
    MissingOp,
    #[error("op: unknown op \"{0}\" (expected one of: {ops})", ops = OPS.join(", "))]
    UnknownOp(String),
    #[error("{key}: unknown key (expected {expected})")]
    UnknownKey { key: String, expected: String },
    #[error("{key}: {problem}")]
    Attribute { key: String, problem: String },
    #[error("inputs: expected {0}")]
    InputCount(&'static str),
    #[error(
        "input \"{0}\": unknown tensor (no earlier node writes it and it is not the graph input)"
    )]
    UnknownTensor(String),
    #[error("output \"{0}\": already names a tensor")]
    DuplicateOutput(String),
    #[error("layer \"{0}\": no layer of the manifest has this name")]
    UnknownLayer(String),
    #[error("layer \"{0}\": already placed by an earlier node")]
    LayerTwice(String),
    #[error("layer \"{layer}\": its geometry expects input {expected}, the graph gives {got}")]
    LayerGeometry {
        layer: String,
        expected: String,
        got: String,
    },
    #[error("input shape {shape}: {problem}")]
    Shape { shape: String, problem: String },
    #[error("expected a non-empty string")]
    NotAName,
    #[error("holds the control character U+{0:04X} (a name is printed and written to CSV files)")]
    ControlInName(u32),
    #[error("\"{0}\": no node writes this tensor")]
    OutputNotProduced(String),
    #[error("expected a non-empty array of nodes")]
    EmptyGraph,
}

/// A problem in a bundle's graph: where (`graph[3] (Relu -> y)`, `graph_input`) and what.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{at}: {kind}")]
pub struct GraphError {
    pub at: String,
    pub kind: GraphErrorKind,
}

/// The parsed op of a bundle node; axes are resolved against shapes by `build`.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeOp {
    /// A crossbar layer of the manifest, by name.
    Layer(String),
    Activation(ActKind),
    Pool(PoolKind, PoolWindow),
    GlobalAveragePool,
    /// ONNX axis as written (may be negative).
    Flatten(i64),
    Add,
    Mul,
    Concat(i64),
    Softmax(i64),
    Pad {
        pads: Vec<i64>,
        value: f32,
    },
    Reshape(Vec<i64>),
    /// An array of tensors.npz, by name (a transformer's positional embedding, class token,
    /// LayerNorm scale and bias, the scalars of GELU): a tensor without a batch dimension.
    Constant(String),
    /// ONNX axis as written; inputs: X, scale and (optionally) bias.
    LayerNorm {
        axis: i64,
        epsilon: f32,
    },
    /// `perm` as written (None: ONNX's default, the axes reversed).
    Transpose(Option<Vec<i64>>),
    /// The product of two activations (attention scores and context): off the crossbar.
    MatMul,
    /// An embedding lookup: inputs a Constant table `[vocab, dim]` and integer token ids
    /// (a tensor of the graph, batch first); the rows the ids pick, `ids shape + [dim]`.
    /// Written as a `Gather` without `indices` (axis 0).
    Lookup,
    /// ONNX axis and indices as written; `scalar`: one index given as a number.
    Gather {
        axis: i64,
        indices: Vec<i64>,
        scalar: bool,
    },
    Sub,
    Div,
}

pub(super) type Obj = Map<String, Value>;

pub(super) fn err(at: &str, kind: GraphErrorKind) -> GraphError {
    GraphError {
        at: at.to_string(),
        kind,
    }
}

pub(super) fn attr_err(at: &str, key: &str, problem: &str) -> GraphError {
    err(
        at,
        GraphErrorKind::Attribute {
            key: key.to_string(),
            problem: problem.to_string(),
        },
    )
}

pub(super) fn name_of(v: Option<&Value>, at: &str) -> Result<String, GraphError> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => match s.chars().find(|c| c.is_control()) {
            Some(c) => Err(err(at, GraphErrorKind::ControlInName(c as u32))),
            None => Ok(s.clone()),
        },
        _ => Err(err(at, GraphErrorKind::NotAName)),
    }
}

/// A number attribute used as f32: finite and within f32's range before the cast (1e300
/// would become infinity).
pub(super) fn float(o: &Obj, key: &str, at: &str, default: f32) -> Result<f32, GraphError> {
    match o.get(key) {
        None => Ok(default),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite() && x.abs() <= f32::MAX as f64)
            .map(|x| x as f32)
            .ok_or_else(|| {
                attr_err(
                    at,
                    key,
                    "expected a finite number within the float32 range (|x| <= 3.4e38)",
                )
            }),
    }
}

pub(super) fn int(o: &Obj, key: &str, at: &str, default: Option<i64>) -> Result<i64, GraphError> {
    match (o.get(key), default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(attr_err(at, key, "absent")),
        (Some(v), _) => v
            .as_i64()
            .ok_or_else(|| attr_err(at, key, "expected an integer")),
    }
}

pub(super) fn ints(o: &Obj, key: &str, at: &str) -> Result<Option<Vec<i64>>, GraphError> {
    match o.get(key) {
        None => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(Value::as_i64)
            .collect::<Option<Vec<i64>>>()
            .map(Some)
            .ok_or_else(|| attr_err(at, key, "expected a list of integers")),
        Some(_) => Err(attr_err(at, key, "expected a list of integers")),
    }
}

/// `n` integers >= `min`, or `default` when the key is absent.
pub(super) fn fixed(
    o: &Obj,
    key: &str,
    at: &str,
    n: usize,
    min: i64,
    default: Option<Vec<usize>>,
) -> Result<Vec<usize>, GraphError> {
    let what = if min == 0 { "non-negative" } else { "positive" };
    match (ints(o, key, at)?, default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(attr_err(at, key, "absent")),
        (Some(v), _) if v.len() == n && v.iter().all(|&x| x >= min) => {
            Ok(v.into_iter().map(|x| x as usize).collect())
        }
        (Some(_), _) => Err(attr_err(at, key, &format!("expected {n} {what} integers"))),
    }
}

pub(super) fn flag(o: &Obj, key: &str, at: &str) -> Result<bool, GraphError> {
    match int(o, key, at, Some(0))? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(attr_err(at, key, "expected 0 or 1")),
    }
}

/// The attribute keys of each op, besides `op`, `inputs` and `output` (tools/sresim_export/
/// schema.json holds the same table for the exporter; tests/sresim/bundles.rs compares them).
pub fn attribute_keys(op: &str) -> &'static [&'static str] {
    match op {
        "layer" => &["layer"],
        "Clip" => &["min", "max"],
        "LeakyRelu" => &["alpha"],
        "HardSigmoid" => &["alpha", "beta"],
        "MaxPool" | "AveragePool" => &[
            "kernel_shape",
            "strides",
            "pads",
            "dilations",
            "ceil_mode",
            "count_include_pad",
        ],
        "Flatten" | "Concat" | "Softmax" => &["axis"],
        "Pad" => &["pads", "value", "mode"],
        "Reshape" => &["shape"],
        "Constant" => &["value"],
        "LayerNormalization" => &["axis", "epsilon"],
        "Transpose" => &["perm"],
        "Gather" => &["axis", "indices"],
        "Gelu" => &["approximate"],
        _ => &[],
    }
}
