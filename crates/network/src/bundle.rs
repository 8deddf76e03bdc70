//! A bundle's network graph (manifest keys `graph`, `graph_input`, `graph_output`,
//! `labels`): parsed from JSON in two steps.
//!
//! [`BundleGraph::parse`] reads the nodes and their attributes (ONNX opset-13 names and
//! meanings) without shapes, so a manifest is checked on its own; [`BundleGraph::build`]
//! then resolves tensor names in execution order, infers every shape from the graph
//! input's, and checks each `layer` node against the geometry of the manifest layer it
//! names. Every error names the node: `graph[3] (MaxPool -> p1): kernel_shape: absent`.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};
use thiserror::Error;

use crate::geometry::{LayerKind, LayerSpec};
use crate::graph::{ActKind, Graph, Node, Op, PoolKind, PoolWindow, Tensor, TensorId, TensorRole};

/// Most elements of any tensor of a bundle graph, batch included (2^48: every byte count
/// of it fits u64 at any element width; the accuracy path then holds each tensor to
/// `limits.max_layer_bytes`, the memory model to its own tensor limit).
pub const MAX_TENSOR_ELEMENTS: u64 = 1 << 48;
/// Most elements of a pooling window (kernel height x width).
pub const MAX_WINDOW_ELEMENTS: u64 = 1 << 20;
/// Most reads of one sample's pooling (output elements x window): 2^32, seconds of work.
pub const MAX_POOL_READS: u64 = 1 << 32;

/// Most elements of a `Constant` array (the positional embedding of a transformer is T x D).
pub const MAX_CONSTANT_ELEMENTS: u64 = 1 << 32;

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

/// One node of `graph`, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSpec {
    /// The ONNX op name as written (`MaxPool`), for messages.
    pub op_name: String,
    pub op: NodeOp,
    pub inputs: Vec<String>,
    pub output: String,
}

/// The graph of a bundle as its manifest gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleGraph {
    pub nodes: Vec<NodeSpec>,
    /// Name of the network input array in tensors.npz, `[M, ...]`.
    pub input: String,
    /// The tensor whose argmax is the prediction.
    pub output: String,
    /// Name of the int array `[M]` of labels, if any.
    pub labels: Option<String>,
    /// The shapes of the arrays `Constant` nodes name, as tensors.npz holds them: filled
    /// by the reader of the archive ([`BundleGraph::constant_arrays`]) before `build`.
    pub constants: BTreeMap<String, Vec<usize>>,
}

type Obj = Map<String, Value>;

fn err(at: &str, kind: GraphErrorKind) -> GraphError {
    GraphError {
        at: at.to_string(),
        kind,
    }
}

fn attr_err(at: &str, key: &str, problem: &str) -> GraphError {
    err(
        at,
        GraphErrorKind::Attribute {
            key: key.to_string(),
            problem: problem.to_string(),
        },
    )
}

fn name_of(v: Option<&Value>, at: &str) -> Result<String, GraphError> {
    match v {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(err(at, GraphErrorKind::NotAName)),
    }
}

/// A number attribute used as f32: finite and within f32's range before the cast (1e300
/// would become infinity).
fn float(o: &Obj, key: &str, at: &str, default: f32) -> Result<f32, GraphError> {
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

fn int(o: &Obj, key: &str, at: &str, default: Option<i64>) -> Result<i64, GraphError> {
    match (o.get(key), default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(attr_err(at, key, "absent")),
        (Some(v), _) => v
            .as_i64()
            .ok_or_else(|| attr_err(at, key, "expected an integer")),
    }
}

fn ints(o: &Obj, key: &str, at: &str) -> Result<Option<Vec<i64>>, GraphError> {
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
fn fixed(
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

fn flag(o: &Obj, key: &str, at: &str) -> Result<bool, GraphError> {
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

fn parse_op(op: &str, o: &Obj, at: &str) -> Result<NodeOp, GraphError> {
    Ok(match op {
        "layer" => NodeOp::Layer(
            name_of(o.get("layer"), &format!("{at}: layer"))
                .map_err(|_| attr_err(at, "layer", "expected the name of a manifest layer"))?,
        ),
        "Relu" => NodeOp::Activation(ActKind::Relu),
        "Sigmoid" => NodeOp::Activation(ActKind::Sigmoid),
        "Tanh" => NodeOp::Activation(ActKind::Tanh),
        "HardSwish" => NodeOp::Activation(ActKind::HardSwish),
        "Erf" => NodeOp::Activation(ActKind::Erf),
        "Sqrt" => NodeOp::Activation(ActKind::Sqrt),
        "Gelu" => {
            match o.get("approximate") {
                None => {}
                Some(Value::String(m)) if m == "none" => {}
                Some(_) => {
                    return Err(attr_err(
                        at,
                        "approximate",
                        "only \"none\" (the erf form) is supported",
                    ))
                }
            }
            NodeOp::Activation(ActKind::Gelu)
        }
        "Constant" => {
            NodeOp::Constant(name_of(o.get("value"), at).map_err(|_| {
                attr_err(at, "value", "expected the name of an array in tensors.npz")
            })?)
        }
        "LayerNormalization" => {
            let epsilon = float(o, "epsilon", at, 1e-5)?;
            if epsilon <= 0.0 {
                return Err(attr_err(at, "epsilon", "expected a positive number"));
            }
            NodeOp::LayerNorm {
                axis: int(o, "axis", at, Some(-1))?,
                epsilon,
            }
        }
        "Transpose" => NodeOp::Transpose(ints(o, "perm", at)?),
        "MatMul" => NodeOp::MatMul,
        "Gather" if !o.contains_key("indices") => {
            if int(o, "axis", at, Some(0))? != 0 {
                return Err(attr_err(
                    at,
                    "axis",
                    "a lookup of token ids (no indices) is along axis 0 of the table",
                ));
            }
            NodeOp::Lookup
        }
        "Gather" => {
            let (indices, scalar) = match o.get("indices") {
                Some(v) if v.is_i64() => (vec![int(o, "indices", at, None)?], true),
                Some(_) => match ints(o, "indices", at)? {
                    Some(list) if !list.is_empty() => (list, false),
                    _ => {
                        return Err(attr_err(
                            at,
                            "indices",
                            "expected an integer or a non-empty list of integers",
                        ))
                    }
                },
                None => return Err(attr_err(at, "indices", "absent")),
            };
            NodeOp::Gather {
                axis: int(o, "axis", at, Some(0))?,
                indices,
                scalar,
            }
        }
        "Sub" => NodeOp::Sub,
        "Div" => NodeOp::Div,
        "Clip" => {
            let min = float(o, "min", at, f32::MIN)?;
            let max = float(o, "max", at, f32::MAX)?;
            if min > max {
                return Err(attr_err(at, "min", "exceeds max"));
            }
            NodeOp::Activation(ActKind::Clip { min, max })
        }
        "LeakyRelu" => NodeOp::Activation(ActKind::LeakyRelu {
            alpha: float(o, "alpha", at, 0.01)?,
        }),
        "HardSigmoid" => NodeOp::Activation(ActKind::HardSigmoid {
            alpha: float(o, "alpha", at, 0.2)?,
            beta: float(o, "beta", at, 0.5)?,
        }),
        "MaxPool" | "AveragePool" => {
            let kernel = fixed(o, "kernel_shape", at, 2, 1, None)?;
            bounds::size::elements(&kernel, MAX_WINDOW_ELEMENTS)
                .map_err(|e| attr_err(at, "kernel_shape", &format!("a window of {e}")))?;
            let strides = fixed(o, "strides", at, 2, 1, Some(vec![1, 1]))?;
            let pads = fixed(o, "pads", at, 4, 0, Some(vec![0; 4]))?;
            // ONNX writes `dilations` on every pool (torch.onnx: [1, 1]); a dilated window
            // is not modelled, and tools/export_onnx.py refuses it before writing.
            if fixed(o, "dilations", at, 2, 1, Some(vec![1, 1]))? != [1, 1] {
                return Err(attr_err(
                    at,
                    "dilations",
                    "dilated pooling is not supported (expected [1, 1])",
                ));
            }
            for d in 0..2 {
                if pads[d] >= kernel[d] || pads[d + 2] >= kernel[d] {
                    return Err(attr_err(
                        at,
                        "pads",
                        "each pad must be smaller than the kernel",
                    ));
                }
            }
            let kind = if op == "MaxPool" {
                PoolKind::Max
            } else {
                PoolKind::Avg
            };
            let window = PoolWindow {
                kernel: [kernel[0], kernel[1]],
                strides: [strides[0], strides[1]],
                pads: [pads[0], pads[1], pads[2], pads[3]],
                ceil_mode: flag(o, "ceil_mode", at)?,
                count_include_pad: flag(o, "count_include_pad", at)?,
            };
            if kind == PoolKind::Max && window.count_include_pad {
                return Err(attr_err(
                    at,
                    "count_include_pad",
                    "applies to AveragePool only",
                ));
            }
            NodeOp::Pool(kind, window)
        }
        "GlobalAveragePool" => NodeOp::GlobalAveragePool,
        "Flatten" => NodeOp::Flatten(int(o, "axis", at, Some(1))?),
        "Add" => NodeOp::Add,
        "Mul" => NodeOp::Mul,
        "Concat" => NodeOp::Concat(int(o, "axis", at, None)?),
        "Softmax" => NodeOp::Softmax(int(o, "axis", at, Some(-1))?),
        "Pad" => {
            match o.get("mode") {
                None => {}
                Some(Value::String(m)) if m == "constant" => {}
                Some(_) => return Err(attr_err(at, "mode", "only \"constant\" is supported")),
            }
            let pads = ints(o, "pads", at)?.ok_or_else(|| attr_err(at, "pads", "absent"))?;
            if pads.iter().any(|&p| p < 0) {
                return Err(attr_err(at, "pads", "expected non-negative integers"));
            }
            NodeOp::Pad {
                pads,
                value: float(o, "value", at, 0.0)?,
            }
        }
        "Reshape" => {
            let shape = ints(o, "shape", at)?.ok_or_else(|| attr_err(at, "shape", "absent"))?;
            if shape.is_empty() || shape.iter().any(|&d| d < -1) {
                return Err(attr_err(at, "shape", "expected integers >= -1"));
            }
            if shape[1..].iter().filter(|&&d| d == -1).count() > 1 {
                return Err(attr_err(
                    at,
                    "shape",
                    "at most one -1 after the batch entry",
                ));
            }
            NodeOp::Reshape(shape)
        }
        other => return Err(err(at, GraphErrorKind::UnknownOp(crate::text::clip(other)))),
    })
}

fn node_label(i: usize, op: &str, output: &str) -> String {
    format!(
        "graph[{i}] ({} -> {})",
        crate::text::clip(op),
        crate::text::clip(output)
    )
}

fn parse_node(i: usize, v: &Value) -> Result<NodeSpec, GraphError> {
    let bare = format!("graph[{i}]");
    let o = v
        .as_object()
        .ok_or_else(|| err(&bare, GraphErrorKind::NotAnObject))?;
    let op_name = match o.get("op") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(err(&bare, GraphErrorKind::MissingOp)),
    };
    let output = match o.get("output") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        _ => return Err(attr_err(&bare, "output", "expected a non-empty string")),
    };
    let at = node_label(i, &op_name, &output);
    let inputs = match o.get("inputs") {
        // A constant reads no tensor: `inputs` absent or empty.
        None if op_name == "Constant" => Vec::new(),
        Some(Value::Array(a)) if a.is_empty() && op_name == "Constant" => Vec::new(),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_string))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| attr_err(&at, "inputs", "expected a non-empty list of tensor names"))?,
        _ => {
            return Err(attr_err(
                &at,
                "inputs",
                "expected a non-empty list of tensor names",
            ))
        }
    };
    let known = attribute_keys(&op_name);
    if let Some(k) = o
        .keys()
        .find(|k| !["op", "inputs", "output"].contains(&k.as_str()) && !known.contains(&k.as_str()))
    {
        let mut expected = vec!["op", "inputs", "output"];
        expected.extend_from_slice(known);
        return Err(err(
            &at,
            GraphErrorKind::UnknownKey {
                key: crate::text::clip(k),
                expected: expected.join(", "),
            },
        ));
    }
    let op = parse_op(&op_name, o, &at)?;
    let count = match &op {
        NodeOp::Add | NodeOp::Mul | NodeOp::Sub | NodeOp::Div | NodeOp::MatMul => {
            Some((2, "2 tensor names"))
        }
        NodeOp::Lookup => Some((2, "2 tensor names (a Constant table, then the token ids)")),
        NodeOp::Constant(_) => Some((0, "no tensor (a constant reads none)")),
        NodeOp::LayerNorm { .. } if (2..=3).contains(&inputs.len()) => None,
        NodeOp::LayerNorm { .. } => {
            return Err(err(
                &at,
                GraphErrorKind::InputCount("2 or 3 tensor names (X, scale, bias)"),
            ))
        }
        NodeOp::Concat(_) => None,
        _ => Some((1, "1 tensor name")),
    };
    if let Some((n, what)) = count {
        if inputs.len() != n {
            return Err(err(&at, GraphErrorKind::InputCount(what)));
        }
    }
    Ok(NodeSpec {
        op_name,
        op,
        inputs,
        output,
    })
}

impl BundleGraph {
    /// Parses the manifest's `graph` array and the names beside it; `None` for the keys
    /// that are absent. `graph_input` and `graph_output` are required with a graph.
    pub fn parse(
        graph: &Value,
        graph_input: Option<&Value>,
        graph_output: Option<&Value>,
        labels: Option<&Value>,
    ) -> Result<BundleGraph, GraphError> {
        let list = graph
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| err("graph", GraphErrorKind::EmptyGraph))?;
        let nodes = list
            .iter()
            .enumerate()
            .map(|(i, v)| parse_node(i, v))
            .collect::<Result<Vec<_>, _>>()?;
        let labels = match labels {
            None | Some(Value::Null) => None,
            v => Some(name_of(v, "labels")?),
        };
        Ok(BundleGraph {
            nodes,
            input: name_of(graph_input, "graph_input")?,
            output: name_of(graph_output, "graph_output")?,
            labels,
            constants: BTreeMap::new(),
        })
    }

    /// The `Constant` nodes as (tensor they write, array of tensors.npz they name).
    pub fn constant_tensors(&self) -> Vec<(&str, &str)> {
        self.nodes
            .iter()
            .filter_map(|n| match &n.op {
                NodeOp::Constant(a) => Some((n.output.as_str(), a.as_str())),
                _ => None,
            })
            .collect()
    }

    /// The arrays of tensors.npz that `Constant` nodes name, in node order (each once).
    pub fn constant_arrays(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for n in &self.nodes {
            if let NodeOp::Constant(a) = &n.op {
                if !out.contains(&a.as_str()) {
                    out.push(a);
                }
            }
        }
        out
    }

    /// The graph for `batch` samples whose input (one sample) has shape `sample_shape`
    /// (the graph input array's shape without its leading M), over the manifest `layers`.
    /// Crossbar layers become `Conv`/`Fc` nodes named after the layer, each with a weight
    /// tensor `NAME.weight`; every other node is named after its output tensor.
    pub fn build(
        &self,
        name: &str,
        batch: usize,
        sample_shape: &[usize],
        layers: &[LayerSpec],
    ) -> Result<Graph, GraphError> {
        let mut g = Graph::empty(name, batch);
        let mut ids: HashMap<String, TensorId> = HashMap::new();
        let mut input_shape = vec![batch];
        input_shape.extend_from_slice(sample_shape);
        if input_shape.contains(&0) {
            return Err(err(
                "graph_input",
                GraphErrorKind::Shape {
                    shape: fmt_shape(&input_shape),
                    problem: "every dimension must be positive".into(),
                },
            ));
        }
        check_size(&input_shape)
            .map_err(|problem| shape_err("graph_input", &input_shape, problem))?;
        g.tensors.push(Tensor {
            name: self.input.clone(),
            shape: input_shape,
            role: TensorRole::Input,
        });
        ids.insert(self.input.clone(), 0);
        let mut placed: HashMap<&str, usize> = HashMap::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let at = node_label(i, &n.op_name, &n.output);
            let inputs = n
                .inputs
                .iter()
                .map(|t| {
                    ids.get(t).copied().ok_or_else(|| {
                        err(&at, GraphErrorKind::UnknownTensor(crate::text::clip(t)))
                    })
                })
                .collect::<Result<Vec<TensorId>, _>>()?;
            if ids.contains_key(&n.output) {
                return Err(err(
                    &at,
                    GraphErrorKind::DuplicateOutput(crate::text::clip(&n.output)),
                ));
            }
            if let NodeOp::Constant(array) = &n.op {
                let shape = self.constant(array, &at)?;
                g.tensors.push(Tensor {
                    name: n.output.clone(),
                    shape,
                    role: TensorRole::Weight,
                });
                ids.insert(n.output.clone(), g.tensors.len() - 1);
                continue;
            }
            let shapes: Vec<&[usize]> = inputs.iter().map(|&t| &g.tensors[t].shape[..]).collect();
            // Constants carry no batch dimension: a node reads at least one activation,
            // whose shape is the one its output follows (the exporter folds the rest).
            let consts: Vec<bool> = inputs
                .iter()
                .map(|&t| g.tensors[t].role == TensorRole::Weight)
                .collect();
            // LayerNormalization's scale and bias are its weights (the memory model prices
            // them as such): Constant nodes.
            if matches!(n.op, NodeOp::Lookup) && (!consts[0] || consts[1]) {
                return Err(attr_err(
                    &at,
                    "inputs",
                    "a lookup reads a Constant table, then token ids that are not a Constant",
                ));
            }
            if matches!(n.op, NodeOp::LayerNorm { .. }) && !consts[1..].iter().all(|&c| c) {
                return Err(attr_err(
                    &at,
                    "inputs",
                    "the scale and bias must be Constant nodes",
                ));
            }
            let Some(data) = consts.iter().position(|c| !c) else {
                return Err(attr_err(
                    &at,
                    "inputs",
                    "every input is a Constant (expected at least one activation)",
                ));
            };
            let (node_name, op, out_shape, weight) = match &n.op {
                NodeOp::Layer(l) => {
                    let spec = layers.iter().find(|s| &s.name == l).ok_or_else(|| {
                        err(&at, GraphErrorKind::UnknownLayer(crate::text::clip(l)))
                    })?;
                    if placed.insert(spec.name.as_str(), i).is_some() {
                        return Err(err(&at, GraphErrorKind::LayerTwice(crate::text::clip(l))));
                    }
                    let (op, out, weight) = layer_node(spec, shapes[0], &at)?;
                    (spec.name.clone(), op, out, Some((spec, weight)))
                }
                other => {
                    let (op, out) = infer(other, &shapes, &consts, data)
                        .and_then(|(op, out)| check_size(&out).map(|()| (op, out)))
                        .map_err(|problem| shape_err(&at, shapes[data], problem))?;
                    (n.output.clone(), op, out, None)
                }
            };
            let mut weights = Vec::new();
            if let Some((spec, shape)) = weight {
                let wname = format!("{}.weight", spec.name);
                if ids.contains_key(&wname) {
                    return Err(err(
                        &at,
                        GraphErrorKind::DuplicateOutput(crate::text::clip(&wname)),
                    ));
                }
                g.tensors.push(Tensor {
                    name: wname.clone(),
                    shape,
                    role: TensorRole::Weight,
                });
                ids.insert(wname, g.tensors.len() - 1);
                weights.push(g.tensors.len() - 1);
            }
            g.tensors.push(Tensor {
                name: n.output.clone(),
                shape: out_shape,
                role: TensorRole::Activation,
            });
            let out = g.tensors.len() - 1;
            ids.insert(n.output.clone(), out);
            let mut inputs = inputs;
            if matches!(op, Op::LayerNorm { .. }) {
                weights = inputs.split_off(1);
            }
            if matches!(op, Op::Embedding { .. }) {
                // the table is the node's weight, the ids its input
                weights = vec![inputs.remove(0)];
            }
            g.nodes.push(Node {
                name: node_name,
                op,
                inputs,
                weights,
                outputs: vec![out],
                saved: Vec::new(),
                block: None,
                layer_name: None,
            });
        }
        let out = ids
            .get(&self.output)
            .copied()
            .filter(|&t| g.tensors[t].role == TensorRole::Activation)
            .ok_or_else(|| {
                err(
                    "graph_output",
                    GraphErrorKind::OutputNotProduced(crate::text::clip(&self.output)),
                )
            })?;
        g.outputs.push(out);
        Ok(g)
    }
}

impl BundleGraph {
    /// The shape of the array a `Constant` node names, checked against the limits.
    fn constant(&self, array: &str, at: &str) -> Result<Vec<usize>, GraphError> {
        let shape = self.constants.get(array).ok_or_else(|| {
            attr_err(
                at,
                "value",
                &format!(
                    "\"{}\": no such array in tensors.npz",
                    crate::text::clip(array)
                ),
            )
        })?;
        bounds::size::elements(shape, MAX_CONSTANT_ELEMENTS)
            .map_err(|e| attr_err(at, "value", &format!("an array of {e}")))?;
        if shape.contains(&0) {
            return Err(attr_err(at, "value", "an array with an empty dimension"));
        }
        Ok(shape.clone())
    }
}

/// A tensor of `shape` holds at most [`MAX_TENSOR_ELEMENTS`] (checked product).
fn check_size(shape: &[usize]) -> Result<(), String> {
    bounds::size::elements(shape, MAX_TENSOR_ELEMENTS)
        .map(|_| ())
        .map_err(|e| format!("the output {} holds {e}", fmt_shape(shape)))
}

fn fmt_shape(s: &[usize]) -> String {
    let parts: Vec<String> = s.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(", "))
}

fn shape_err(at: &str, shape: &[usize], problem: String) -> GraphError {
    err(
        at,
        GraphErrorKind::Shape {
            shape: fmt_shape(shape),
            problem,
        },
    )
}

type LayerNode = (Op, Vec<usize>, Vec<usize>);

/// The node of a crossbar layer on an input of `shape`: op, output shape, weight shape.
fn layer_node(spec: &LayerSpec, shape: &[usize], at: &str) -> Result<LayerNode, GraphError> {
    let g = &spec.geom;
    let n = shape[0];
    let mismatch = |expected: String| {
        err(
            at,
            GraphErrorKind::LayerGeometry {
                layer: crate::text::clip(&spec.name),
                expected,
                got: fmt_shape(shape),
            },
        )
    };
    match spec.kind {
        LayerKind::Conv => {
            let need = [n, g.in_channels, g.input_hw[0], g.input_hw[1]];
            if shape != need {
                return Err(mismatch(fmt_shape(&need)));
            }
            let [ho, wo] = g.output_hw();
            let weight = vec![
                g.out_channels,
                g.in_channels / g.groups,
                g.kernel[0],
                g.kernel[1],
            ];
            Ok((Op::Conv(g.clone()), vec![n, g.out_channels, ho, wo], weight))
        }
        LayerKind::Fc if g.vectors_per_sample() > 1 || shape.len() == 3 => {
            // A projection over a sequence: [N, T, in] -> [N, T, out] (T may be 1).
            let tokens = g.vectors_per_sample();
            let need = [n, tokens, g.in_channels];
            if shape != need {
                return Err(mismatch(fmt_shape(&need)));
            }
            let op = Op::Fc {
                in_features: g.in_channels,
                out_features: g.out_channels,
                tokens,
            };
            Ok((
                op,
                vec![n, tokens, g.out_channels],
                vec![g.out_channels, g.in_channels],
            ))
        }
        LayerKind::Fc => {
            // As for a layer's input trace: [N, in], or [N, C, H, W] with C*H*W = in.
            let fits = match shape.len() {
                2 | 4 => shape[1..].iter().product::<usize>() == g.in_channels,
                _ => false,
            };
            if !fits {
                return Err(mismatch(format!(
                    "[N, {0}] (or [N, C, H, W] with C*H*W = {0})",
                    g.in_channels
                )));
            }
            let op = Op::Fc {
                in_features: g.in_channels,
                out_features: g.out_channels,
                tokens: 1,
            };
            Ok((
                op,
                vec![n, g.out_channels],
                vec![g.out_channels, g.in_channels],
            ))
        }
    }
}

/// An ONNX axis in [-rank, rank) as an index.
fn axis(a: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    if a < -r || a >= r {
        return Err(format!("axis {a} outside [-{r}, {r})"));
    }
    Ok(if a < 0 { (a + r) as usize } else { a as usize })
}

/// numpy broadcasting of two shapes.
fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], i: usize| -> usize {
        let off = rank - s.len();
        if i < off {
            1
        } else {
            s[i - off]
        }
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(format!(
                "does not broadcast with {} (numpy rules)",
                fmt_shape(b)
            )),
        })
        .collect()
}

/// The op and output shape of a non-layer node, or the problem with its input shapes;
/// `consts` marks the inputs that are constants, `data` is the first that is not.
fn infer(
    op: &NodeOp,
    shapes: &[&[usize]],
    consts: &[bool],
    data: usize,
) -> Result<(Op, Vec<usize>), String> {
    let x = shapes[data];
    let rank = x.len();
    Ok(match op {
        NodeOp::Layer(_) | NodeOp::Constant(_) => {
            return Err("a layer or constant node is built by build".into())
        }
        NodeOp::Activation(a) => (Op::Activation(*a), x.to_vec()),
        NodeOp::Pool(kind, w) => {
            if rank != 4 {
                return Err("pooling expects an NCHW tensor".into());
            }
            let [ho, wo] = w
                .output_hw([x[2], x[3]])
                .ok_or("the window exceeds the padded input")?;
            // Per sample: channels x outputs x window.
            bounds::size::product(&[x[1], ho, wo, w.kernel[0], w.kernel[1]])
                .filter(|&r| r <= MAX_POOL_READS)
                .ok_or(format!(
                    "{} x {ho} x {wo} outputs of a {} x {} window read more than {MAX_POOL_READS} elements a sample",
                    x[1], w.kernel[0], w.kernel[1]
                ))?;
            (
                Op::Pool {
                    kind: *kind,
                    window: *w,
                },
                vec![x[0], x[1], ho, wo],
            )
        }
        NodeOp::GlobalAveragePool => {
            if rank < 3 {
                return Err("GlobalAveragePool expects [N, C, spatial...]".into());
            }
            let mut out = vec![x[0], x[1]];
            out.resize(rank, 1);
            (Op::GlobalPool, out)
        }
        NodeOp::Flatten(a) => {
            let ax = if *a == rank as i64 {
                rank
            } else {
                axis(*a, rank)?
            };
            if ax == 0 {
                return Err("Flatten axis 0 would merge the batch".into());
            }
            // Factors of the input's element count, which is bounded.
            let outer: usize = x[..ax].iter().product();
            let inner: usize = x[ax..].iter().product();
            (Op::Flatten { axis: ax }, vec![outer, inner])
        }
        NodeOp::Add | NodeOp::Mul | NodeOp::Sub | NodeOp::Div => {
            let other = shapes[1 - data];
            let out = broadcast(shapes[0], shapes[1])?;
            if out[0] != x[0] || out.len() != rank {
                return Err(format!(
                    "the element-wise op with {} changes the shape",
                    fmt_shape(other)
                ));
            }
            let op = match op {
                NodeOp::Add => Op::Add,
                NodeOp::Mul => Op::Mul,
                NodeOp::Sub => Op::Sub,
                _ => Op::Div,
            };
            (op, out)
        }
        NodeOp::Concat(a) => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("Concat along axis 0 would mix samples".into());
            }
            let mut out = x.to_vec();
            out[ax] = 0;
            for (s, &c) in shapes.iter().zip(consts) {
                // A constant of batch 1 (a class token) is repeated for every sample.
                let same = s.len() == rank
                    && (0..rank).all(|d| d == ax || s[d] == x[d] || (d == 0 && c && s[0] == 1));
                if !same {
                    return Err(format!(
                        "does not concatenate with {} along axis {ax}",
                        fmt_shape(s)
                    ));
                }
                out[ax] = bounds::size::add(out[ax], s[ax], "the concatenated axis")?;
            }
            (Op::Concat { axis: ax }, out)
        }
        NodeOp::Softmax(a) => (
            Op::Softmax {
                axis: axis(*a, rank)?,
            },
            x.to_vec(),
        ),
        NodeOp::Pad { pads, value } => {
            if pads.len() != 2 * rank {
                return Err(format!(
                    "pads has {} entries, expected {}",
                    pads.len(),
                    2 * rank
                ));
            }
            if pads[0] != 0 || pads[rank] != 0 {
                return Err("Pad must not pad the batch dimension".into());
            }
            let pads: Vec<usize> = pads.iter().map(|&p| p as usize).collect();
            let out = (0..rank)
                .map(|d| {
                    bounds::size::add(x[d], pads[d], "the padded size")
                        .and_then(|v| bounds::size::add(v, pads[d + rank], "the padded size"))
                })
                .collect::<Result<Vec<usize>, String>>()?;
            (
                Op::Pad {
                    pads,
                    value: *value,
                },
                out,
            )
        }
        NodeOp::LayerNorm { axis: a, epsilon } => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("LayerNormalization over the batch axis would mix samples".into());
            }
            for s in &shapes[1..] {
                if broadcast(&x[ax..], s).ok().as_deref() != Some(&x[ax..]) {
                    return Err(format!(
                        "scale or bias {} does not broadcast to the normalized dimensions {}",
                        fmt_shape(s),
                        fmt_shape(&x[ax..])
                    ));
                }
            }
            (
                Op::LayerNorm {
                    axis: ax,
                    epsilon: *epsilon,
                },
                x.to_vec(),
            )
        }
        NodeOp::Transpose(perm) => {
            let perm: Vec<i64> = perm
                .clone()
                .unwrap_or_else(|| (0..rank as i64).rev().collect());
            // The length before the loop over it: what follows indexes the result.
            if perm.len() != rank {
                return Err(format!("perm {perm:?} is not a permutation of {rank} axes"));
            }
            let mut seen = vec![false; rank];
            let mut p = Vec::with_capacity(rank);
            for &d in &perm {
                if !(d >= 0 && (d as usize) < rank && !seen[d as usize]) {
                    return Err(format!("perm {perm:?} is not a permutation of {rank} axes"));
                }
                seen[d as usize] = true;
                p.push(d as usize);
            }
            if p.first() != Some(&0) {
                return Err(format!(
                    "perm {perm:?} moves the batch axis (expected perm[0] = 0)"
                ));
            }
            let out = p.iter().map(|&d| x[d]).collect();
            (Op::Transpose { perm: p }, out)
        }
        NodeOp::MatMul => {
            let (a, b) = (shapes[0], shapes[1]);
            if a.len() < 3 || b.len() != a.len() {
                return Err(format!(
                    "MatMul of {} and {}: expected two tensors of the same rank >= 3 ([N, ..., m, k] x [N, ..., k, n])",
                    fmt_shape(a),
                    fmt_shape(b)
                ));
            }
            let r = a.len();
            let (m, k, k2, n) = (a[r - 2], a[r - 1], b[r - 2], b[r - 1]);
            if k != k2 {
                return Err(format!(
                    "MatMul of {} and {}: inner dimensions {k} and {k2} differ",
                    fmt_shape(a),
                    fmt_shape(b)
                ));
            }
            let mut out = broadcast(&a[..r - 2], &b[..r - 2])?;
            if out[0] != x[0] {
                return Err("MatMul changes the batch".into());
            }
            out.extend([m, n]);
            // Per sample: every product of the leading dimensions, then m x k x n.
            let lead = bounds::size::product(&out[..r - 2])
                .and_then(|v| usize::try_from(v).ok())
                .ok_or("the MatMul's size overflows 64 bits")?;
            bounds::size::product(&[lead, m, k, n])
                .ok_or("the MatMul's multiply-accumulates overflow 64 bits")?;
            (
                Op::MatMul {
                    batch: lead,
                    m,
                    k,
                    n,
                },
                out,
            )
        }
        NodeOp::Lookup => {
            let (table, ids) = (shapes[0], shapes[1]);
            let [vocab, dim] = *table else {
                return Err(format!(
                    "a lookup table of shape {}: expected [vocab, dim]",
                    fmt_shape(table)
                ));
            };
            let mut out = ids.to_vec();
            out.push(dim);
            (Op::Embedding { vocab, dim }, out)
        }
        NodeOp::Gather {
            axis: a,
            indices,
            scalar,
        } => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("Gather along axis 0 would pick samples".into());
            }
            let len = x[ax] as i64;
            let resolved = indices
                .iter()
                .map(|&i| {
                    let j = if i < 0 { i + len } else { i };
                    (0..len)
                        .contains(&j)
                        .then_some(j as usize)
                        .ok_or(format!("index {i} outside [-{len}, {len}) of axis {ax}"))
                })
                .collect::<Result<Vec<usize>, String>>()?;
            let mut out = x[..ax].to_vec();
            if !*scalar {
                out.push(resolved.len());
            }
            out.extend_from_slice(&x[ax + 1..]);
            (
                Op::Gather {
                    axis: ax,
                    indices: resolved,
                    keep_axis: !*scalar,
                },
                out,
            )
        }
        NodeOp::Reshape(shape) => {
            // The first entry stands for the batch, whatever it says: one sample's shape
            // is what the rest describes (0 copies the input's dimension, -1 is inferred).
            let per_sample: usize = x[1..].iter().product();
            let mut out = vec![x[0]];
            let mut unknown = None;
            for (d, &s) in shape.iter().enumerate().skip(1) {
                out.push(match s {
                    0 => *x
                        .get(d)
                        .ok_or(format!("shape[{d}] = 0 copies no dimension"))?,
                    -1 => {
                        unknown = Some(d);
                        1
                    }
                    s => s as usize,
                });
            }
            let known = bounds::size::product(&out[1..])
                .and_then(|k| usize::try_from(k).ok())
                .ok_or(format!(
                    "cannot reshape to {shape:?}: its size overflows 64 bits"
                ))?;
            if let Some(d) = unknown {
                if known == 0 || !per_sample.is_multiple_of(known) {
                    return Err(format!("cannot reshape to {shape:?}"));
                }
                out[d] = per_sample / known;
            } else if known != per_sample {
                return Err(format!("cannot reshape to {shape:?}"));
            }
            (
                Op::Reshape {
                    shape: shape.clone(),
                },
                out,
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::ConvGeometry;

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
}
