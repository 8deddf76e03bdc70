//! The forward graph of a network: nodes of every layer type (not only conv and fc) with
//! explicit tensor shapes, in execution (topological) order.
//!
//! Shapes include the batch. A node reads `inputs` (activations or network inputs) and
//! `weights`, writes `outputs`, and may write `saved` tensors that only its backward pass
//! reads (the gates of an LSTM cell). Weights shared by several nodes (an LSTM layer's
//! weights at every time step) are the same tensor.

use serde::Serialize;
use crate::geometry::ConvGeometry;

pub type TensorId = usize;

/// What a forward tensor is, which decides whether it is live-in and needs a gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TensorRole {
    /// Network input (images, token ids): live-in, no gradient.
    Input,
    /// Produced by a node; has a gradient in training when it leads to a loss.
    Activation,
    /// Trainable parameters: live-in, updated (live-out) in training.
    Weight,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub role: TensorRole,
}

impl Tensor {
    pub fn elements(&self) -> u64 {
        self.shape.iter().map(|&d| d as u64).product()
    }
}

/// Element-wise activation functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActKind {
    Relu,
    Relu6,
    LeakyRelu,
    Gelu,
    Sigmoid,
    Tanh,
}

impl ActKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActKind::Relu => "relu",
            ActKind::Relu6 => "relu6",
            ActKind::LeakyRelu => "leakyrelu",
            ActKind::Gelu => "gelu",
            ActKind::Sigmoid => "sigmoid",
            ActKind::Tanh => "tanh",
        }
    }

    /// Whether the backward pass needs the output (true) or the input (false): ReLU-family,
    /// sigmoid and tanh differentiate from their output, GELU from its input.
    pub fn backward_reads_output(self) -> bool {
        !matches!(self, ActKind::Gelu)
    }

    /// Assumed element-wise operations per element, forward.
    pub fn ops(self) -> f64 {
        match self {
            ActKind::Relu => 1.0,
            ActKind::Relu6 | ActKind::LeakyRelu => 2.0,
            ActKind::Sigmoid | ActKind::Tanh => 4.0,
            ActKind::Gelu => 8.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolKind {
    Max,
    Avg,
}

/// Operation of a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Op {
    /// Convolution; geometry per sample (the batch is the graph's).
    Conv(ConvGeometry),
    /// Fully connected over the last dimension: rows = input elements / in_features.
    Fc {
        in_features: usize,
        out_features: usize,
    },
    /// Batched activation x activation product [b, m, k] x [b, k, n] (attention).
    MatMul {
        batch: usize,
        m: usize,
        k: usize,
        n: usize,
    },
    BatchNorm,
    LayerNorm,
    Activation(ActKind),
    Pool {
        kind: PoolKind,
        kernel: usize,
        stride: usize,
    },
    GlobalPool,
    /// Element-wise sum of its inputs (residual connections).
    Add,
    /// Channel concatenation of its inputs.
    Concat,
    /// A channel slice of its input (route/split layers).
    Slice,
    /// Nearest-neighbour upsampling by an integer factor.
    Upsample {
        factor: usize,
    },
    Softmax,
    /// Table lookup: inputs are token ids, the weight is the [vocab, dim] table.
    Embedding {
        vocab: usize,
        dim: usize,
    },
    /// One time step of an LSTM cell. Inputs: x_t, then h_{t-1} and c_{t-1} unless t = 0;
    /// outputs h_t, c_t; saved: the gate activations. Weights are shared across steps.
    Lstm {
        input: usize,
        hidden: usize,
        step: usize,
    },
    /// A layer of unknown kind between two bundle layers (pooling, flatten): a copy.
    Glue,
}

impl Op {
    /// Short kind name as printed in the `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Conv(_) => "conv",
            Op::Fc { .. } => "fc",
            Op::MatMul { .. } => "matmul",
            Op::BatchNorm => "batchnorm",
            Op::LayerNorm => "layernorm",
            Op::Activation(a) => a.as_str(),
            Op::Pool {
                kind: PoolKind::Max,
                ..
            } => "maxpool",
            Op::Pool {
                kind: PoolKind::Avg,
                ..
            } => "avgpool",
            Op::GlobalPool => "globalpool",
            Op::Add => "add",
            Op::Concat => "concat",
            Op::Slice => "slice",
            Op::Upsample { .. } => "upsample",
            Op::Softmax => "softmax",
            Op::Embedding { .. } => "embedding",
            Op::Lstm { .. } => "lstm",
            Op::Glue => "glue",
        }
    }

    /// Whether the op runs on the matrix engine (MAC/s) rather than the element-wise units.
    pub fn is_matrix(&self) -> bool {
        matches!(
            self,
            Op::Conv(_) | Op::Fc { .. } | Op::MatMul { .. } | Op::Lstm { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    pub name: String,
    pub op: Op,
    pub inputs: Vec<TensorId>,
    pub weights: Vec<TensorId>,
    pub outputs: Vec<TensorId>,
    pub saved: Vec<TensorId>,
    /// Index into `Graph::blocks` of the residual/inception/recurrent block the node is in.
    pub block: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graph {
    pub name: String,
    pub batch: usize,
    pub tensors: Vec<Tensor>,
    pub nodes: Vec<Node>,
    pub blocks: Vec<String>,
    /// Tensors the network produces (logits, detection maps): the losses of a training step
    /// start from them; in inference they are written off-chip.
    pub outputs: Vec<TensorId>,
}

impl Graph {
    /// Node index that writes tensor `t`, if any.
    pub fn producers(&self) -> Vec<Option<usize>> {
        let mut p = vec![None; self.tensors.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for &t in n.outputs.iter().chain(&n.saved) {
                p[t] = Some(i);
            }
        }
        p
    }

    /// Forward multiply-accumulates of node `i` (whole batch).
    pub fn macs(&self, i: usize) -> f64 {
        let n = &self.nodes[i];
        match &n.op {
            Op::Conv(g) => self.batch as f64 * g.macs_per_sample() as f64,
            Op::Fc {
                in_features,
                out_features,
            } => {
                let rows = self.tensors[n.inputs[0]].elements() as f64 / *in_features as f64;
                rows * (*in_features * *out_features) as f64
            }
            Op::MatMul { batch, m, k, n } => (*batch * *m * *k * *n) as f64,
            Op::Lstm { input, hidden, .. } => {
                self.batch as f64 * (4 * hidden * (input + hidden)) as f64
            }
            _ => 0.0,
        }
    }

    /// Forward element-wise operations of node `i` (assumed per-element costs, docs/memory.md).
    pub fn elementwise_ops(&self, i: usize) -> f64 {
        let n = &self.nodes[i];
        let out: f64 = n
            .outputs
            .iter()
            .map(|&t| self.tensors[t].elements() as f64)
            .sum();
        let inp: f64 = n
            .inputs
            .iter()
            .map(|&t| self.tensors[t].elements() as f64)
            .sum();
        match &n.op {
            Op::Conv(_) | Op::MatMul { .. } => 0.0,
            Op::Fc { .. } => {
                if n.weights.len() > 1 {
                    out // bias add
                } else {
                    0.0
                }
            }
            Op::BatchNorm => 5.0 * out,
            Op::LayerNorm => 7.0 * out,
            Op::Activation(a) => a.ops() * out,
            Op::Pool { kernel, .. } => (kernel * kernel) as f64 * out,
            Op::GlobalPool => inp,
            Op::Add => out * (n.inputs.len().saturating_sub(1)) as f64,
            Op::Concat | Op::Slice | Op::Upsample { .. } | Op::Embedding { .. } | Op::Glue => out,
            Op::Softmax => 5.0 * out,
            // 3 sigmoids and 2 tanh (4 ops each) + 3 products + 1 sum per hidden unit.
            Op::Lstm { hidden, .. } => self.batch as f64 * *hidden as f64 * 24.0,
        }
    }

    /// Checks the graph is well formed; the message names the node.
    pub fn validate(&self) -> Result<(), String> {
        let mut written = vec![false; self.tensors.len()];
        for (t, tensor) in self.tensors.iter().enumerate() {
            if tensor.role != TensorRole::Activation {
                written[t] = true;
            }
            if tensor.elements() == 0 {
                return Err(format!("tensor {}: empty shape", tensor.name));
            }
        }
        for n in &self.nodes {
            for &t in n.inputs.iter() {
                if t >= self.tensors.len() || !written[t] {
                    return Err(format!("node {}: input read before it is produced", n.name));
                }
            }
            for &w in &n.weights {
                if self.tensors.get(w).map(|t| t.role) != Some(TensorRole::Weight) {
                    return Err(format!("node {}: weight is not a weight tensor", n.name));
                }
            }
            for &t in n.outputs.iter().chain(&n.saved) {
                if self.tensors.get(t).map(|t| t.role) != Some(TensorRole::Activation) {
                    return Err(format!("node {}: output is not an activation", n.name));
                }
                if written[t] {
                    return Err(format!("node {}: output written twice", n.name));
                }
                written[t] = true;
            }
            if n.outputs.is_empty() {
                return Err(format!("node {}: no output", n.name));
            }
        }
        for &o in &self.outputs {
            if !written[o] {
                return Err("graph output is never produced".into());
            }
        }
        Ok(())
    }

    /// Total elements of all weight tensors (parameters).
    pub fn parameters(&self) -> u64 {
        self.tensors
            .iter()
            .filter(|t| t.role == TensorRole::Weight)
            .map(Tensor::elements)
            .sum()
    }
}
