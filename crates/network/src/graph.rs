//! The forward graph of a network: nodes of every layer type (not only conv and fc) with
//! explicit tensor shapes, in execution (topological) order.
//!
//! The crossbar layers are its `Conv` and `Fc` nodes ([`Graph::crossbar_layers`]); every
//! other op carries the attributes of its ONNX (opset 13) namesake, so that a graph can be
//! executed as well as costed. Tensors are addressable by name ([`Graph::tensor_id`]).
//!
//! Shapes include the batch. A node reads `inputs` (activations or network inputs) and
//! `weights`, writes `outputs`, and may write `saved` tensors that only its backward pass
//! reads (the gates of an LSTM cell). Weights shared by several nodes (an LSTM layer's
//! weights at every time step) are the same tensor.

use crate::geometry::{ConvGeometry, LayerKind, LayerSpec};
use serde::Serialize;

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

/// Element-wise activation functions (ONNX meanings where ONNX has the op).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActKind {
    Relu,
    /// min(max(x, 0), 6) (torchvision's ReLU6; a `Clip` with min 0, max 6).
    Relu6,
    /// x for x >= 0, alpha * x below.
    LeakyRelu {
        alpha: f32,
    },
    Gelu,
    Sigmoid,
    Tanh,
    /// min(max(x, min), max).
    Clip {
        min: f32,
        max: f32,
    },
    /// max(0, min(1, alpha * x + beta)).
    HardSigmoid {
        alpha: f32,
        beta: f32,
    },
    /// x * max(0, min(1, x / 6 + 1 / 2)).
    HardSwish,
    /// x * sigmoid(x) (SiLU, or swish: a Llama feed-forward's gate).
    Silu,
    /// The error function (ONNX Erf; torch.onnx writes GELU as x * (1 + erf(x / sqrt 2)) / 2).
    Erf,
    /// The square root (ONNX Sqrt).
    Sqrt,
}

impl ActKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ActKind::Relu => "relu",
            ActKind::Relu6 => "relu6",
            ActKind::LeakyRelu { .. } => "leakyrelu",
            ActKind::Gelu => "gelu",
            ActKind::Sigmoid => "sigmoid",
            ActKind::Tanh => "tanh",
            ActKind::Clip { .. } => "clip",
            ActKind::HardSigmoid { .. } => "hardsigmoid",
            ActKind::HardSwish => "hardswish",
            ActKind::Silu => "silu",
            ActKind::Erf => "erf",
            ActKind::Sqrt => "sqrt",
        }
    }

    /// Whether the backward pass needs the output (true) or the input (false): ReLU-family,
    /// clips, sigmoids and tanh differentiate from their output, GELU and hard-swish from
    /// their input.
    pub fn backward_reads_output(self) -> bool {
        !matches!(self, ActKind::Gelu | ActKind::HardSwish | ActKind::Silu)
    }

    /// Assumed element-wise operations per element, forward: a clip costs what ReLU6
    /// costs, hard-sigmoid one multiply-add more, hard-swish one multiply more again.
    pub fn ops(self) -> f64 {
        match self {
            ActKind::Relu | ActKind::Sqrt => 1.0,
            ActKind::Relu6 | ActKind::LeakyRelu { .. } | ActKind::Clip { .. } => 2.0,
            ActKind::HardSigmoid { .. } => 3.0,
            ActKind::Sigmoid | ActKind::Tanh | ActKind::HardSwish | ActKind::Erf => 4.0,
            // A sigmoid and a multiply.
            ActKind::Silu => 5.0,
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

/// A 2-D pooling window, with ONNX's attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PoolWindow {
    /// [kH, kW].
    pub kernel: [usize; 2],
    /// [sH, sW].
    pub strides: [usize; 2],
    /// [top, left, bottom, right] (ONNX order: the begins, then the ends).
    pub pads: [usize; 4],
    /// Output size rounded up (the last window must still start inside the input or its
    /// top/left padding, as in PyTorch and Caffe).
    pub ceil_mode: bool,
    /// Average pooling divides by the whole window, padding included.
    pub count_include_pad: bool,
}

impl PoolWindow {
    /// A square window with equal padding on every side, floor mode.
    pub fn square(kernel: usize, stride: usize, pad: usize) -> Self {
        PoolWindow {
            kernel: [kernel, kernel],
            strides: [stride, stride],
            pads: [pad; 4],
            ceil_mode: false,
            count_include_pad: false,
        }
    }

    /// [Ho, Wo] for an [H, W] input, or None when the window does not fit.
    pub fn output_hw(&self, hw: [usize; 2]) -> Option<[usize; 2]> {
        let mut out = [0; 2];
        for d in 0..2 {
            let (k, s) = (self.kernel[d], self.strides[d]);
            let (begin, end) = (self.pads[d], self.pads[d + 2]);
            // Checked: the sizes come from a bundle's graph (docs/errors.md).
            let padded = hw[d].checked_add(begin)?.checked_add(end)?;
            if k == 0 || s == 0 || padded < k {
                return None;
            }
            let span = padded - k;
            let mut o = if self.ceil_mode {
                span.div_ceil(s) + 1
            } else {
                span / s + 1
            };
            // The last window starts inside the input or the leading padding (o - 1 <=
            // span / s, so the product does not overflow).
            if self.ceil_mode && (o - 1) * s >= hw[d] + begin {
                o -= 1;
            }
            out[d] = o;
        }
        Some(out)
    }
}

/// Where local response normalization sums its squares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LrnRegion {
    /// Over neighbouring channels at one position (ONNX LRN, Caffe's default).
    AcrossChannels,
    /// Over a size x size window of one channel (Caffe's WITHIN_CHANNEL).
    WithinChannel,
}

/// Operation of a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Op {
    /// Convolution; geometry per sample (the batch is the graph's).
    Conv(ConvGeometry),
    /// Fully connected over the last dimension: rows = input elements / in_features.
    Fc {
        in_features: usize,
        out_features: usize,
        /// Input vectors of one sample on the crossbar: a bundle's projection over a
        /// sequence of T tokens (`[N, T, in]`) has T; 1 otherwise (the zoo's token rows
        /// fold the batch, `[B*T, in]`).
        tokens: usize,
    },
    /// Batched activation x activation product [b, m, k] x [b, k, n] (attention).
    MatMul {
        batch: usize,
        m: usize,
        k: usize,
        n: usize,
    },
    BatchNorm,
    /// Normalization over the dimensions from `axis` on (ONNX LayerNormalization: mean 0,
    /// variance 1 with `epsilon`, then a scale and a bias: the node's second and third
    /// inputs in a bundle graph, its weight in the zoo).
    LayerNorm {
        axis: usize,
        epsilon: f32,
    },
    /// Root-mean-square normalization over the dimensions from `axis` on (Llama's RMSNorm:
    /// x / sqrt(mean(x^2) + epsilon), then a scale, its weight; no mean, no bias).
    RmsNorm {
        axis: usize,
        epsilon: f32,
    },
    Activation(ActKind),
    /// MaxPool / AveragePool over the last two dimensions of an NCHW tensor.
    Pool {
        kind: PoolKind,
        window: PoolWindow,
    },
    /// GlobalAveragePool: the mean over every position of each channel.
    GlobalPool,
    /// Element-wise sum of its inputs (residual connections), broadcasting as numpy.
    Add,
    /// Element-wise product of its inputs, broadcasting as numpy.
    Mul,
    /// Element-wise difference of its two inputs, broadcasting as numpy.
    Sub,
    /// Element-wise quotient of its two inputs, broadcasting as numpy.
    Div,
    /// ONNX Transpose: output dimension i is input dimension `perm[i]`.
    Transpose {
        perm: Vec<usize>,
    },
    /// ONNX Gather with constant indices along `axis`; a scalar index (`keep_axis` false)
    /// removes the axis (a transformer's class token, `x[:, 0]`).
    Gather {
        axis: usize,
        indices: Vec<usize>,
        keep_axis: bool,
    },
    /// Concatenation of its inputs along `axis` (1 for NCHW channels).
    Concat {
        axis: usize,
    },
    /// ONNX Flatten: [d0 * .. * d(axis-1), d(axis) * .. ]; the batch stays first.
    Flatten {
        axis: usize,
    },
    /// ONNX Reshape with `shape` as given (0 copies a dimension, -1 is inferred); the
    /// output tensor holds the resolved shape.
    Reshape {
        shape: Vec<i64>,
    },
    /// ONNX Pad, constant mode: `pads` are the begins of every dimension, then the ends.
    Pad {
        pads: Vec<usize>,
        value: f32,
    },
    /// Local response normalization (ONNX LRN: across `size` channels; Caffe may also
    /// normalize within a channel over a size x size window).
    Lrn {
        size: usize,
        alpha: f32,
        beta: f32,
        bias: f32,
        region: LrnRegion,
    },
    /// A channel slice of its input (route/split layers).
    Slice,
    /// Nearest-neighbour upsampling by an integer factor.
    Upsample {
        factor: usize,
    },
    /// Softmax along `axis`.
    Softmax {
        axis: usize,
    },
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
            Op::LayerNorm { .. } => "layernorm",
            Op::RmsNorm { .. } => "rmsnorm",
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
            Op::Mul => "mul",
            Op::Sub => "sub",
            Op::Div => "div",
            Op::Transpose { .. } => "transpose",
            Op::Gather { .. } => "gather",
            Op::Concat { .. } => "concat",
            Op::Flatten { .. } => "flatten",
            Op::Reshape { .. } => "reshape",
            Op::Pad { .. } => "pad",
            Op::Lrn { .. } => "lrn",
            Op::Slice => "slice",
            Op::Upsample { .. } => "upsample",
            Op::Softmax { .. } => "softmax",
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
    /// For a crossbar layer whose name in the crossbar-layer list differs from the node
    /// name (vgg16: Caffe's `conv1_1` for torchvision's `features.0`); None: the node name.
    pub layer_name: Option<String>,
}

impl Node {
    /// The crossbar layer this node is (conv and fc nodes), named as the engines list it.
    pub fn crossbar_layer(&self) -> Option<LayerSpec> {
        let name = self.layer_name.clone().unwrap_or_else(|| self.name.clone());
        let (kind, geom) = match &self.op {
            Op::Conv(g) => (LayerKind::Conv, g.clone()),
            Op::Fc {
                in_features,
                out_features,
                tokens,
            } => (
                LayerKind::Fc,
                ConvGeometry::fc_tokens(*in_features, *out_features, *tokens),
            ),
            _ => return None,
        };
        Some(LayerSpec { name, kind, geom })
    }
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
    /// A graph with no tensors and no nodes yet, for `batch` samples.
    pub fn empty(name: &str, batch: usize) -> Graph {
        Graph {
            name: name.to_string(),
            batch,
            tensors: Vec::new(),
            nodes: Vec::new(),
            blocks: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// The tensor called `name` (activations, inputs and weights share one namespace).
    pub fn tensor_id(&self, name: &str) -> Option<TensorId> {
        self.tensors.iter().position(|t| t.name == name)
    }

    /// The crossbar layers (conv and fc nodes) in execution order: what the engines replay.
    /// Attention products (`MatMul`) multiply two activations and are not among them.
    pub fn crossbar_layers(&self) -> Vec<LayerSpec> {
        self.nodes.iter().filter_map(Node::crossbar_layer).collect()
    }

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
                ..
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
            Op::LayerNorm { .. } => 7.0 * out,
            // A square and a sum per element, a scale and a multiply (no mean, no shift).
            Op::RmsNorm { .. } => 4.0 * out,
            Op::Activation(a) => a.ops() * out,
            Op::Pool { window, .. } => (window.kernel[0] * window.kernel[1]) as f64 * out,
            Op::GlobalPool => inp,
            Op::Add | Op::Mul | Op::Sub | Op::Div => {
                out * (n.inputs.len().saturating_sub(1)) as f64
            }
            Op::Concat { .. }
            | Op::Flatten { .. }
            | Op::Reshape { .. }
            | Op::Pad { .. }
            | Op::Slice
            | Op::Transpose { .. }
            | Op::Gather { .. }
            | Op::Upsample { .. }
            | Op::Embedding { .. }
            | Op::Glue => out,
            // A square and an add per summed element, a power and a divide.
            Op::Lrn { size, region, .. } => {
                let summed = match region {
                    LrnRegion::AcrossChannels => *size,
                    LrnRegion::WithinChannel => size * size,
                };
                (2 * summed + 2) as f64 * out
            }
            Op::Softmax { .. } => 5.0 * out,
            // 3 sigmoids and 2 tanh (4 ops each) + 3 products + 1 sum per hidden unit.
            Op::Lstm { hidden, .. } => self.batch as f64 * *hidden as f64 * 24.0,
        }
    }

    /// Checks the graph is well formed; the message names the node.
    pub fn validate(&self) -> Result<(), String> {
        let mut written = vec![false; self.tensors.len()];
        let mut names = std::collections::HashSet::new();
        for (t, tensor) in self.tensors.iter().enumerate() {
            if !names.insert(tensor.name.as_str()) {
                return Err(format!("tensor {}: name used twice", tensor.name));
            }
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
