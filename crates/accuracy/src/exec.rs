//! The graph executor: a batch of samples through every node, in execution order.
//!
//! The graph is built for batch 1; a batch of n samples runs it with every tensor's
//! leading dimension n (`[1, ...]` becomes `[n, ...]`), which the ops handle as ONNX
//! does. A graph whose ops would mix samples that way (see [`Network::batchable`]) runs
//! one sample at a time. Either way a sample's values do not depend on the others.

use crate::layer::CrossbarLayer;
use crate::ops::{self, Binary};
use crate::seq_ops;
use crate::AccuracyError;
use ndarray::{ArrayD, IxDyn};
use network::graph::{Graph, Op, TensorRole};
use workload::bundle::StoredValues;

/// A crossbar layer's product in one path: (layer index, the input values of a batch of
/// samples, the batch's size n) -> W x, `[n, Cout, Ho*Wo]`, without the bias.
pub type Product<'a> = dyn FnMut(usize, &[f64], usize) -> Result<Vec<f64>, AccuracyError> + 'a;

/// A network ready to run: its graph (batch 1), its crossbar layers and its input.
#[derive(Debug, Clone)]
pub struct Network {
    pub name: String,
    /// Built for batch 1: one sample at a time.
    pub graph: Graph,
    /// Per node of `graph`: the index in `layers` of its crossbar layer.
    node_layer: Vec<Option<usize>>,
    pub layers: Vec<CrossbarLayer>,
    input_tensor: usize,
    output_tensor: usize,
    /// The graph input, `[M, ...]` row-major, in its stored dtype (widened a batch at a
    /// time).
    pub input: StoredValues,
    pub samples: usize,
    /// One class index per sample, when the bundle has labels.
    pub labels: Option<Vec<i64>>,
    /// Per tensor: the last node that reads it (it is dropped after).
    last_use: Vec<usize>,
    /// Whether batches of more than one sample may run through the graph at once.
    batchable: bool,
    /// The values of the graph's constants (its `Constant` nodes), by tensor.
    constants: Vec<(usize, ArrayD<f64>)>,
}

impl Network {
    /// Checks that every crossbar node of `graph` has its layer among `layers` (by name),
    /// and that `input` holds whole samples of the graph input's shape.
    pub fn new(
        name: &str,
        graph: Graph,
        layers: Vec<CrossbarLayer>,
        input: impl Into<StoredValues>,
        labels: Option<Vec<i64>>,
    ) -> Result<Network, AccuracyError> {
        let input = input.into();
        let bad = |what: String| AccuracyError::Network(format!("{name}: {what}"));
        let input_tensor = graph
            .tensors
            .iter()
            .position(|t| t.role == TensorRole::Input)
            .ok_or_else(|| bad("the graph has no input".into()))?;
        let output_tensor = *graph
            .outputs
            .first()
            .ok_or_else(|| bad("the graph has no output".into()))?;
        let mut node_layer = Vec::with_capacity(graph.nodes.len());
        for node in &graph.nodes {
            node_layer.push(match node.crossbar_layer() {
                Some(spec) => Some(
                    layers
                        .iter()
                        .position(|l| l.name() == spec.name)
                        .ok_or_else(|| {
                            bad(format!("node {}: no layer {}", node.name, spec.name))
                        })?,
                ),
                None => None,
            });
        }
        let per: usize = graph.tensors[input_tensor].shape.iter().product();
        if per == 0 || !input.len().is_multiple_of(per) {
            return Err(bad(format!(
                "graph input holds {} values, not whole samples of {:?}",
                input.len(),
                graph.tensors[input_tensor].shape
            )));
        }
        let samples = input.len() / per;
        if let Some(l) = &labels {
            if l.len() != samples {
                return Err(bad(format!("{} labels for {samples} samples", l.len())));
            }
        }
        // A label is a class: an index into the network's outputs a sample (a label of
        // 10 on a 10-class network, or -1, made every prediction wrong without a word).
        if let Some(l) = &labels {
            let classes: usize = graph.tensors[output_tensor].shape.iter().product();
            if let Some((s, &v)) = l
                .iter()
                .enumerate()
                .find(|(_, &v)| v < 0 || v as u64 >= classes as u64)
            {
                return Err(bad(format!(
                    "graph.labels: sample {s}'s label {v} is not a class of the network (0..{classes}, its outputs a sample)"
                )));
            }
        }
        let mut last_use = vec![usize::MAX; graph.tensors.len()];
        for (i, n) in graph.nodes.iter().enumerate() {
            for &t in &n.inputs {
                last_use[t] = i;
            }
        }
        let batchable = batchable(&graph);
        Ok(Network {
            name: name.to_string(),
            graph,
            node_layer,
            layers,
            input_tensor,
            output_tensor,
            input,
            samples,
            labels,
            last_use,
            batchable,
            constants: Vec::new(),
        })
    }

    /// The network with the values of its constants (the arrays of the graph's
    /// `Constant` nodes, by tensor name): each of the graph's constant tensors needs one,
    /// of the tensor's shape.
    pub fn with_constants(
        mut self,
        mut values: std::collections::HashMap<String, (Vec<usize>, Vec<f64>)>,
    ) -> Result<Network, AccuracyError> {
        // Every weight tensor a node reads other than a crossbar layer's own.
        let read = |t: usize| {
            self.graph.nodes.iter().any(|n| {
                n.inputs.contains(&t) || (n.crossbar_layer().is_none() && n.weights.contains(&t))
            })
        };
        for (t, tensor) in self.graph.tensors.iter().enumerate() {
            if tensor.role != TensorRole::Weight || !read(t) {
                continue;
            }
            let bad = |what: String| {
                AccuracyError::Network(format!("{}: constant {}: {what}", self.name, tensor.name))
            };
            let (shape, v) = values
                .remove(&tensor.name)
                .ok_or_else(|| bad("no values".into()))?;
            if shape != tensor.shape {
                return Err(bad(format!(
                    "values of shape {shape:?}, the graph says {:?}",
                    tensor.shape
                )));
            }
            let v = ArrayD::from_shape_vec(IxDyn(&shape), v).map_err(|e| bad(e.to_string()))?;
            self.constants.push((t, v));
        }
        Ok(self)
    }

    /// Whether samples may run through the graph in batches of more than one: every
    /// tensor a node computes (and the input) has a leading dimension of 1 (the batch),
    /// and no op reaches across it (a concatenation or softmax along it, padding of it,
    /// a flattening of it, a broadcast between tensors of different ranks).
    pub fn batchable(&self) -> bool {
        self.batchable
    }

    /// The shape of a tensor for a batch of n samples (n = 1: the graph's own).
    fn shape(&self, t: usize, n: usize) -> Vec<usize> {
        let mut s = self.graph.tensors[t].shape.clone();
        if n != 1 {
            if let Some(d) = s.first_mut() {
                *d = n;
            }
        }
        s
    }

    /// Values of samples `range` of the graph input, `[n, ...]`.
    pub fn samples(&self, range: std::ops::Range<usize>) -> ArrayD<f64> {
        let n = range.len();
        let shape = self.shape(self.input_tensor, n);
        let per: usize = self.graph.tensors[self.input_tensor].shape.iter().product();
        let v = self.input.to_f64(range.start * per..range.end * per);
        ArrayD::from_shape_vec(IxDyn(&shape), v).unwrap_or_else(|_| ArrayD::zeros(IxDyn(&shape)))
    }

    /// Output values of one sample (the graph output, flattened).
    pub fn output_len(&self) -> usize {
        self.graph.tensors[self.output_tensor]
            .shape
            .iter()
            .product()
    }

    /// Runs the n samples `x` (`[n, ...]`, from [`Network::samples`]; n > 1 only when
    /// [`Network::batchable`]) through the graph; every crossbar layer's product
    /// (without bias, `[n, Cout, Ho*Wo]`) comes from `product(layer index, its input
    /// values, n)`. Returns the graph output, `[n, ...]` flat.
    pub fn forward(
        &self,
        x: ArrayD<f64>,
        n: usize,
        product: &mut Product<'_>,
    ) -> Result<Vec<f64>, AccuracyError> {
        let g = &self.graph;
        let mut env: Vec<Option<ArrayD<f64>>> = vec![None; g.tensors.len()];
        env[self.input_tensor] = Some(x);
        for (t, v) in &self.constants {
            env[*t] = Some(v.clone());
        }
        for (i, node) in g.nodes.iter().enumerate() {
            let at = |e: String| AccuracyError::Node {
                network: self.name.clone(),
                node: node.name.clone(),
                op: node.op.kind(),
                problem: e,
            };
            let input = |j: usize| -> Result<&ArrayD<f64>, AccuracyError> {
                node.inputs
                    .get(j)
                    .and_then(|&t| env[t].as_ref())
                    .ok_or_else(|| at(format!("input {j} is not computed")))
            };
            let out_id = *node.outputs.first().ok_or_else(|| at("no output".into()))?;
            let out_shape = self.shape(out_id, n);
            let y = match &node.op {
                Op::Conv(_) | Op::Fc { .. } => {
                    let l = self.node_layer[i].ok_or_else(|| at("not a crossbar layer".into()))?;
                    let layer = &self.layers[l];
                    let xin = input(0)?;
                    let tokens = match node.op {
                        Op::Fc { tokens, .. } if tokens > 1 => tokens,
                        _ => 1,
                    };
                    // Tensors are built in row-major order: borrowed as they lie.
                    let copied: Vec<f64>;
                    let flat: &[f64] = match xin.as_slice() {
                        Some(s) if tokens == 1 => s,
                        _ => {
                            copied = if tokens > 1 {
                                seq_ops::tokens_to_channels(xin).map_err(at)?
                            } else {
                                xin.iter().copied().collect()
                            };
                            &copied
                        }
                    };
                    if flat.len() != n * layer.geom().input_elements() {
                        return Err(at(format!(
                            "input of {} values, layer {} takes {}",
                            flat.len() / n.max(1),
                            layer.name(),
                            layer.geom().input_elements()
                        )));
                    }
                    let mut y = product(l, flat, n)?;
                    if let Some(b) = &layer.bias {
                        let per = layer.geom().vectors_per_sample();
                        for sample in y.chunks_mut(layer.outputs().max(1)) {
                            for (o, bo) in b.iter().enumerate() {
                                for v in &mut sample[o * per..(o + 1) * per] {
                                    *v += bo;
                                }
                            }
                        }
                    }
                    if tokens > 1 {
                        let e = layer.geom().out_channels;
                        seq_ops::channels_to_tokens(y, n, e, tokens).map_err(at)?
                    } else {
                        ArrayD::from_shape_vec(IxDyn(&out_shape), y)
                            .map_err(|e| at(e.to_string()))?
                    }
                }
                Op::Activation(a) => {
                    // In place when this node is the input's last reader.
                    let t = node.inputs.first().copied();
                    let mut y = match t {
                        Some(t) if self.last_use[t] == i && t != self.output_tensor => env[t]
                            .take()
                            .ok_or_else(|| at("input 0 is not computed".into()))?,
                        _ => input(0)?.clone(),
                    };
                    ops::activation(*a, &mut y).map_err(at)?;
                    y
                }
                Op::Pool { kind, window } => {
                    ops::pool(*kind, window, input(0)?, &out_shape).map_err(at)?
                }
                Op::GlobalPool => ops::global_pool(input(0)?, &out_shape).map_err(at)?,
                Op::Add | Op::Mul | Op::Sub | Op::Div => {
                    let op = match node.op {
                        Op::Add => Binary::Add,
                        Op::Mul => Binary::Mul,
                        Op::Sub => Binary::Sub,
                        _ => Binary::Div,
                    };
                    let mut acc = input(0)?.clone();
                    for j in 1..node.inputs.len() {
                        acc = ops::binary(op, &acc, input(j)?).map_err(at)?;
                    }
                    acc
                }
                Op::LayerNorm { axis, epsilon } => {
                    // Scale and bias: the node's weights (constants).
                    let weight = |j: usize| {
                        node.weights
                            .get(j)
                            .and_then(|&t| env[t].as_ref())
                            .ok_or_else(|| at(format!("weight {j} has no values")))
                    };
                    let bias = if node.weights.len() > 1 {
                        Some(weight(1)?)
                    } else {
                        None
                    };
                    seq_ops::layer_norm(input(0)?, *axis, *epsilon as f64, weight(0)?, bias)
                        .map_err(at)?
                }
                Op::Transpose { perm } => seq_ops::transpose(input(0)?, perm).map_err(at)?,
                Op::MatMul { .. } => seq_ops::matmul(input(0)?, input(1)?).map_err(at)?,
                Op::Gather {
                    axis,
                    indices,
                    keep_axis,
                } => seq_ops::gather(input(0)?, *axis, indices, *keep_axis).map_err(at)?,
                Op::Embedding { .. } => {
                    let table = node
                        .weights
                        .first()
                        .and_then(|&t| env[t].as_ref())
                        .ok_or_else(|| at("the lookup table has no values".into()))?;
                    seq_ops::lookup(table, input(0)?).map_err(at)?
                }
                Op::Concat { axis } => {
                    let xs: Vec<&ArrayD<f64>> = (0..node.inputs.len())
                        .map(input)
                        .collect::<Result<_, _>>()?;
                    ops::concat(&xs, *axis).map_err(at)?
                }
                Op::Flatten { .. } | Op::Reshape { .. } => {
                    ops::reshape(input(0)?.clone(), &out_shape).map_err(at)?
                }
                Op::Pad { pads, value } => ops::pad(input(0)?, pads, *value as f64).map_err(at)?,
                Op::Softmax { axis } => ops::softmax(input(0)?, *axis).map_err(at)?,
                other => return Err(at(format!("op {} is not executable", other.kind()))),
            };
            if y.shape() != out_shape.as_slice() {
                return Err(at(format!(
                    "computed shape {:?}, the graph says {:?}",
                    y.shape(),
                    out_shape
                )));
            }
            env[out_id] = Some(y);
            for &t in &node.inputs {
                if self.last_use[t] == i && t != self.output_tensor {
                    env[t] = None;
                }
            }
        }
        env[self.output_tensor]
            .take()
            .map(|y| y.iter().copied().collect())
            .ok_or_else(|| {
                AccuracyError::Network(format!("{}: the graph output is not computed", self.name))
            })
    }
}

/// See [`Network::batchable`].
fn batchable(g: &Graph) -> bool {
    // Weights carry no batch dimension.
    let lead = |t: usize| {
        let t = &g.tensors[t];
        t.role == TensorRole::Weight || t.shape.first() == Some(&1)
    };
    let input_ok = g
        .tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == TensorRole::Input)
        .all(|(i, _)| lead(i));
    input_ok
        && g.nodes.iter().all(|node| {
            let rank = |t: usize| g.tensors[t].shape.len();
            node.outputs.iter().all(|&t| lead(t))
                && node.inputs.iter().all(|&t| lead(t))
                && match &node.op {
                    Op::Concat { axis } | Op::Flatten { axis } => *axis >= 1,
                    Op::Softmax { axis } => *axis >= 1,
                    Op::Pad { pads, .. } => {
                        pads.first() == Some(&0) && pads.get(pads.len() / 2) == Some(&0)
                    }
                    // Constants carry no batch: of a lower rank, or of leading dimension
                    // 1, they broadcast over every sample alike.
                    Op::Add | Op::Mul | Op::Sub | Op::Div => {
                        let data: Vec<usize> = node
                            .inputs
                            .iter()
                            .copied()
                            .filter(|&t| g.tensors[t].role != TensorRole::Weight)
                            .collect();
                        node.inputs.iter().all(|&t| match data.first() {
                            Some(&f) if g.tensors[t].role == TensorRole::Weight => {
                                rank(t) < rank(f)
                                    || (rank(t) == rank(f)
                                        && g.tensors[t].shape.first() == Some(&1))
                            }
                            Some(&f) => rank(t) == rank(f),
                            None => false,
                        })
                    }
                    _ => true,
                }
        })
}
