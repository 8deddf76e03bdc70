//! The operations of a network graph that no crossbar computes, in execution order, with
//! their kind, their place between the crossbar layers and their counts per sample.

use crate::ops::{self, OpCounts, VALUE_BYTES};
use network::graph::{ActKind, LrnRegion, PoolKind};
use network::{Graph, Op};
use serde::{Deserialize, Serialize};

/// Where the attention products (activation x activation MatMuls) run
/// (`attention.placement`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// On the digital unit, as MACs, K^T and V read from the K/V store.
    #[default]
    Digital,
    /// In crossbars: K^T and V written into crossbars at run time
    /// ([`crate::attention::crossbar_attention`]); the unit keeps the rest.
    Crossbar,
}

impl Placement {
    pub const NAMES: [&'static str; 2] = ["digital", "crossbar"];

    pub fn parse(s: &str) -> Option<Placement> {
        match s {
            "digital" => Some(Placement::Digital),
            "crossbar" => Some(Placement::Crossbar),
            _ => None,
        }
    }
}

/// The family of an operation, for per-class sums in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Activation x activation products (Q.K^T, P.V).
    Attention,
    Softmax,
    /// LayerNorm, RMSNorm, BatchNorm, LRN.
    Norm,
    /// Element-wise functions (GELU, SiLU, ReLU, sigmoid, ...).
    Activation,
    /// Residual adds and other element-wise arithmetic of two tensors.
    Elementwise,
    /// Max, average and global pooling.
    Pooling,
    /// The element-wise gates of a recurrent cell.
    Recurrent,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Attention => "attention",
            Class::Softmax => "softmax",
            Class::Norm => "norm",
            Class::Activation => "activation",
            Class::Elementwise => "elementwise",
            Class::Pooling => "pooling",
            Class::Recurrent => "recurrent",
        }
    }
}

/// One graph node the digital unit runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DigitalOp {
    /// Index into `graph.nodes`.
    pub node: usize,
    pub name: String,
    /// The node's kind as the graph prints it (`Op::kind`: "softmax", "gelu", "add", ...).
    pub kind: &'static str,
    pub class: Class,
    /// Index into `graph.crossbar_layers()` of the last crossbar layer before the node in
    /// execution order; None before the first. A driver runs the op after that layer.
    pub after_layer: Option<usize>,
    /// Primitive operations and bytes of one sample.
    pub counts: OpCounts,
}

/// Ops that only move or relabel data; walked through when looking for a softmax.
fn is_layout(op: &Op) -> bool {
    matches!(
        op,
        Op::Transpose { .. }
            | Op::Reshape { .. }
            | Op::Flatten { .. }
            | Op::Gather { .. }
            | Op::Slice
            | Op::Glue
    )
}

/// Whether tensor `t` comes from a softmax, through layout ops only.
pub(crate) fn from_softmax(graph: &Graph, producers: &[Option<usize>], mut t: usize) -> bool {
    // Bounded walk: a graph is acyclic, the bound only guards a malformed one.
    for _ in 0..graph.nodes.len().min(64) {
        let Some(p) = producers.get(t).copied().flatten() else {
            return false;
        };
        let node = &graph.nodes[p];
        match &node.op {
            Op::Softmax { .. } => return true,
            op if is_layout(op) => match node.inputs.first() {
                Some(&i) => t = i,
                None => return false,
            },
            _ => return false,
        }
    }
    false
}

/// Values of an attention product's right operand that its step adds to the K/V store.
/// The product whose left operand is a softmax's output is P.V: V is [k = L, n = dh] and
/// the step's m query tokens add min(m, L) rows of it; otherwise it is Q.K^T with K^T
/// [k = dh, n = L] and the step adds min(m, L) columns. In an encoder or a prefill m = L:
/// the whole operand; in a decode step m = 1 against a cache of L: one token's keys or
/// values.
fn kv_written(graph: &Graph, producers: &[Option<usize>], i: usize) -> u64 {
    let node = &graph.nodes[i];
    let Op::MatMul { batch, m, k, n } = node.op else {
        return 0;
    };
    let (b, m, k, n) = (batch as u64, m as u64, k as u64, n as u64);
    let context = node
        .inputs
        .first()
        .is_some_and(|&t| from_softmax(graph, producers, t));
    if context {
        b.saturating_mul(m.min(k)).saturating_mul(n)
    } else {
        b.saturating_mul(k).saturating_mul(m.min(n))
    }
}

/// Elements of tensor `t`.
fn elements(graph: &Graph, t: usize) -> u64 {
    graph.tensors.get(t).map_or(0, |x| x.elements())
}

/// Elements of every input of node `i`.
fn input_elements(graph: &Graph, i: usize) -> u64 {
    graph.nodes[i]
        .inputs
        .iter()
        .fold(0u64, |s, &t| s.saturating_add(elements(graph, t)))
}

/// Elements of every output of node `i`.
fn output_elements(graph: &Graph, i: usize) -> u64 {
    graph.nodes[i]
        .outputs
        .iter()
        .fold(0u64, |s, &t| s.saturating_add(elements(graph, t)))
}

/// The whole batch's counts and class of node `i`, or None when the unit does not run it
/// (crossbar layers, layout ops, embedding lookups, and with `Placement::Crossbar` the
/// attention products).
fn node_counts(
    graph: &Graph,
    producers: &[Option<usize>],
    i: usize,
    placement: Placement,
) -> Option<(Class, OpCounts)> {
    let node = &graph.nodes[i];
    let out = output_elements(graph, i);
    let first_shape = |i: usize| -> &[usize] {
        node.inputs
            .get(i)
            .and_then(|&t| graph.tensors.get(t))
            .map_or(&[], |t| t.shape.as_slice())
    };
    let with_reads = |c: OpCounts| OpCounts {
        buffer_read_bytes: input_elements(graph, i).saturating_mul(VALUE_BYTES),
        ..c
    };
    Some(match &node.op {
        Op::MatMul { batch, m, k, n } => {
            if placement == Placement::Crossbar {
                return None;
            }
            let w = kv_written(graph, producers, i);
            let c = ops::matmul(*batch as u64, *m as u64, *k as u64, *n as u64, w);
            (Class::Attention, c)
        }
        Op::Softmax { axis } => {
            let shape = first_shape(0);
            let n = shape.get(*axis).copied().unwrap_or(1).max(1) as u64;
            let x = elements(graph, node.inputs.first().copied().unwrap_or(usize::MAX));
            (Class::Softmax, ops::softmax(x / n, n))
        }
        Op::LayerNorm { axis, .. } | Op::RmsNorm { axis, .. } => {
            // Normalised over the axes from `axis` on: x / d rows of d.
            let shape = first_shape(0);
            let d = shape
                .get(*axis..)
                .map_or(1, |s| s.iter().map(|&v| v as u64).product::<u64>())
                .max(1);
            let x = elements(graph, node.inputs.first().copied().unwrap_or(usize::MAX));
            let norm = match &node.op {
                Op::RmsNorm { .. } => ops::rmsnorm(x / d, d),
                _ => ops::layernorm(x / d, d),
            };
            (Class::Norm, norm)
        }
        Op::Activation(a) => {
            let c = match a {
                ActKind::Relu => ops::clamp_like(out, 1, 0, 0),
                ActKind::Relu6 | ActKind::Clip { .. } => ops::clamp_like(out, 2, 0, 0),
                ActKind::LeakyRelu { .. } => ops::clamp_like(out, 1, 1, 0),
                ActKind::HardSigmoid { .. } => ops::clamp_like(out, 2, 1, 1),
                ActKind::HardSwish => ops::clamp_like(out, 2, 2, 1),
                ActKind::Gelu => ops::gelu(out),
                ActKind::Silu => ops::silu(out),
                ActKind::Sigmoid => ops::sigmoid(out),
                ActKind::Tanh => ops::tanh(out),
                ActKind::Erf => ops::erf(out),
                ActKind::Sqrt => ops::sqrt(out),
            };
            (Class::Activation, c)
        }
        Op::Pool { kind, window } => {
            let win = (window.kernel[0] as u64).saturating_mul(window.kernel[1] as u64);
            let inp = input_elements(graph, i);
            let c = match kind {
                PoolKind::Max => ops::maxpool(out, win, inp),
                PoolKind::Avg => ops::avgpool(out, win, inp),
            };
            (Class::Pooling, c)
        }
        Op::GlobalPool => {
            let inp = input_elements(graph, i);
            (Class::Pooling, ops::avgpool(out, inp / out.max(1), inp))
        }
        Op::Add | Op::Sub => (
            Class::Elementwise,
            with_reads(ops::add(out, node.inputs.len() as u64)),
        ),
        Op::Mul => (
            Class::Elementwise,
            with_reads(ops::mul(out, node.inputs.len() as u64)),
        ),
        Op::Div => {
            let divisors = elements(graph, node.inputs.get(1).copied().unwrap_or(usize::MAX));
            let divisors = if divisors == 0 {
                out
            } else {
                divisors.min(out)
            };
            (Class::Elementwise, with_reads(ops::div(out, divisors)))
        }
        Op::BatchNorm => (Class::Norm, ops::batchnorm(out)),
        Op::Lrn { size, region, .. } => {
            let summed = match region {
                LrnRegion::AcrossChannels => *size as u64,
                LrnRegion::WithinChannel => (*size as u64).saturating_mul(*size as u64),
            };
            (Class::Norm, ops::lrn(out, summed))
        }
        Op::Lstm { hidden, .. } => (
            Class::Recurrent,
            ops::lstm_gates((*hidden as u64).saturating_mul(graph.batch as u64)),
        ),
        Op::Conv(_)
        | Op::Fc { .. }
        | Op::Transpose { .. }
        | Op::Gather { .. }
        | Op::Concat { .. }
        | Op::Flatten { .. }
        | Op::Reshape { .. }
        | Op::Pad { .. }
        | Op::Slice
        | Op::Upsample { .. }
        | Op::Embedding { .. }
        | Op::Glue => return None,
    })
}

/// Every node of `graph` the digital unit runs, in execution order, with its counts per
/// sample (the graph's batch divided out, rounded up) and its place after the crossbar
/// layers (docs/digital.md, "What the unit runs").
pub fn enumerate(graph: &Graph, placement: Placement) -> Vec<DigitalOp> {
    let producers = graph.producers();
    let batch = graph.batch.max(1) as u64;
    let mut crossbar_seen = 0usize;
    let mut out = Vec::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        if node.crossbar_layer().is_some() {
            crossbar_seen += 1;
            continue;
        }
        if let Some((class, counts)) = node_counts(graph, &producers, i, placement) {
            out.push(DigitalOp {
                node: i,
                name: node.name.clone(),
                kind: node.op.kind(),
                class,
                after_layer: crossbar_seen.checked_sub(1),
                counts: counts.per(batch),
            });
        }
    }
    out
}

/// Whether `ops` hold a transformer's operations: an attention product (a recurrent
/// network with attention has them too), a LayerNorm or an RMSNorm. A CNN's ops (pooling,
/// ReLU, batch norms, residual adds, and a classifier's final softmax) do not: a driver
/// that adds the unit's figures only when this holds keeps every CNN output as it was
/// (docs/digital.md, "What the unit runs"). A softmax alone does not make a transformer
/// (exported CNN classifiers end with one); with `Placement::Crossbar` the products are
/// not in `ops`, so judge on the ops of `Placement::Digital`.
pub fn has_transformer_ops(ops: &[DigitalOp]) -> bool {
    ops.iter()
        .any(|o| o.class == Class::Attention || matches!(o.kind, "layernorm" | "rmsnorm"))
}
