//! A bundle's network graph (manifest keys `graph`, `graph_input`, `graph_output`,
//! `labels`): parsed from JSON in two steps.
//!
//! [`BundleGraph::parse`] reads the nodes and their attributes (ONNX opset-13 names and
//! meanings) without shapes, so a manifest is checked on its own; [`BundleGraph::build`]
//! then resolves tensor names in execution order, infers every shape from the graph
//! input's, and checks each `layer` node against the geometry of the manifest layer it
//! names. Every error names the node: `graph[3] (MaxPool -> p1): kernel_shape: absent`.//!
//! This file owns the reading of the manifest's graph: a node's op, inputs and output
//! ([`NodeSpec`]), the tensor names resolved in execution order and the `Constant`
//! arrays ([`BundleGraph`]), and the dispatch of each op to its family. Below it, one
//! file per family owns the attributes and the shape inference of its ops:
//! `conv_pool` (crossbar layers and pooling), `elementwise` (activations, Add/Mul/Sub/
//! Div), `sequence` (MatMul of activations, LayerNormalization, Transpose, Gather,
//! Softmax) and `shape` (Flatten, Reshape, Concat, Pad, and the shape helpers every
//! family uses); `node` holds the op names, `NodeOp`, the errors and the attribute
//! readers. A new op: its name, keys and variant in `node`, its parse and infer in its
//! family's file, one arm in each dispatch below.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::geometry::LayerSpec;
use crate::graph::{Graph, Node, Op, Tensor, TensorId, TensorRole};

mod conv_pool;
mod elementwise;
mod node;
mod sequence;
mod shape;

pub use conv_pool::{MAX_POOL_READS, MAX_WINDOW_ELEMENTS};
pub use node::{attribute_keys, GraphError, GraphErrorKind, NodeOp, OPS};
pub use shape::MAX_TENSOR_ELEMENTS;

use conv_pool::layer_node;
use node::{attr_err, err, name_of, Obj};
use shape::{check_size, fmt_shape, shape_err};

/// Most elements of a `Constant` array (the positional embedding of a transformer is T x D).
pub const MAX_CONSTANT_ELEMENTS: u64 = 1 << 32;

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

fn parse_op(op: &str, o: &Obj, at: &str) -> Result<NodeOp, GraphError> {
    Ok(match op {
        "layer" => NodeOp::Layer(
            name_of(o.get("layer"), &format!("{at}: layer"))
                .map_err(|_| attr_err(at, "layer", "expected the name of a manifest layer"))?,
        ),
        "Constant" => {
            NodeOp::Constant(name_of(o.get("value"), at).map_err(|_| {
                attr_err(at, "value", "expected the name of an array in tensors.npz")
            })?)
        }
        "Relu" | "Sigmoid" | "Tanh" | "HardSwish" | "Erf" | "Sqrt" | "Gelu" | "Clip"
        | "LeakyRelu" | "HardSigmoid" | "Add" | "Mul" | "Sub" | "Div" => {
            elementwise::parse(op, o, at)?
        }
        "MaxPool" | "AveragePool" | "GlobalAveragePool" => conv_pool::parse(op, o, at)?,
        "LayerNormalization" | "Transpose" | "MatMul" | "Gather" | "Softmax" => {
            sequence::parse(op, o, at)?
        }
        "Flatten" | "Concat" | "Pad" | "Reshape" => shape::parse(op, o, at)?,
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
    // A tensor name is printed in errors and notes: no control characters (node.rs, `name_of`).
    if let Some(c) = output.chars().find(|c| c.is_control()) {
        return Err(err(
            &format!("{bare}: output"),
            GraphErrorKind::ControlInName(c as u32),
        ));
    }
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

/// The op and output shape of a non-layer node, or the problem with its input shapes;
/// `consts` marks the inputs that are constants, `data` is the first that is not.
fn infer(
    op: &NodeOp,
    shapes: &[&[usize]],
    consts: &[bool],
    data: usize,
) -> Result<(Op, Vec<usize>), String> {
    match op {
        NodeOp::Layer(_) | NodeOp::Constant(_) => {
            Err("a layer or constant node is built by build".into())
        }
        NodeOp::Activation(_) | NodeOp::Add | NodeOp::Mul | NodeOp::Sub | NodeOp::Div => {
            elementwise::infer(op, shapes, consts, data)
        }
        NodeOp::Pool(..) | NodeOp::GlobalAveragePool => conv_pool::infer(op, shapes, consts, data),
        NodeOp::Softmax(_)
        | NodeOp::LayerNorm { .. }
        | NodeOp::Transpose(_)
        | NodeOp::MatMul
        | NodeOp::Lookup
        | NodeOp::Gather { .. } => sequence::infer(op, shapes, consts, data),
        NodeOp::Flatten(_) | NodeOp::Concat(_) | NodeOp::Pad { .. } | NodeOp::Reshape(_) => {
            shape::infer(op, shapes, consts, data)
        }
    }
}

#[cfg(test)]
mod tests;
