//! Model transformation: the forward graph becomes a training step (or stays a forward pass).
//!
//! Training: forward nodes in order; a loss step per network output; then for each node in
//! reverse its input-gradient and weight-gradient computations (element-wise layers have one
//! combined backward step); then one weight-update step per layer that owns weights. Each step
//! lists the tensors it reads and writes as [`Pattern`]s, which [`crate::access`] turns into
//! tile accesses. Gradients of a tensor with several consumers are summed by an explicit
//! accumulate step; an add passes its output gradient through to its inputs without a copy.

use crate::config::{MemoryConfig, Mode};
use crate::graph::{Graph, Op, PoolKind, TensorId, TensorRole};
use serde::Serialize;
use std::collections::HashMap;

/// What a step tensor holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TensorClass {
    Input,
    Activation,
    Weight,
    ActGrad,
    WeightGrad,
    OptState,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepTensor {
    pub name: String,
    pub bytes: u64,
    pub class: TensorClass,
    /// Holds data in off-chip memory before the step (weights, inputs, optimizer state).
    pub live_in: bool,
    /// Must be in off-chip memory after the step (updated weights and state; inference outputs).
    pub live_out: bool,
    /// A weight (or its gradient or state) used by several nodes: recurrent weights.
    pub shared: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Forward,
    Loss,
    BackwardData,
    BackwardWeight,
    /// Combined backward of an element-wise layer (data and, for norms, scale/shift grads).
    Backward,
    GradAccumulate,
    Update,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Loss => "loss",
            Phase::BackwardData => "backward-data",
            Phase::BackwardWeight => "backward-weight",
            Phase::Backward => "backward",
            Phase::GradAccumulate => "grad-accumulate",
            Phase::Update => "update",
        }
    }

    /// Forward pass and loss, as opposed to backward pass and update.
    pub fn is_forward(self) -> bool {
        matches!(self, Phase::Forward | Phase::Loss)
    }
}

/// How a step walks its tensors; tensors are split in row panels by [`crate::access`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Pattern {
    /// Row-chunk loop: each chunk reads its panel of every `reads` tensor and writes its panel
    /// of every `writes` tensor (element-wise layers, norms, batched activation products).
    Stream {
        reads: Vec<TensorId>,
        writes: Vec<TensorId>,
    },
    /// Blocked product, activation-stationary: per row chunk, read the chunk of `rows_in`,
    /// read every panel of `weights`, write the chunk of `rows_out`.
    Gemm {
        rows_in: Vec<TensorId>,
        weights: Vec<TensorId>,
        rows_out: Vec<TensorId>,
    },
    /// Reduction over rows into weight-shaped `grads` (already holding a partial sum when
    /// `accumulate`, as for weights shared across time steps).
    WeightGrad {
        rows_in: Vec<TensorId>,
        grads: Vec<TensorId>,
        accumulate: bool,
    },
    /// Table lookup touching `fraction` of the table.
    Gather {
        ids: TensorId,
        table: TensorId,
        out: TensorId,
        fraction: f64,
    },
    /// Embedding gradient: dense zero-fill and scatter, or scatter-add into `fraction` of an
    /// existing gradient.
    Scatter {
        rows_in: Vec<TensorId>,
        grad: TensorId,
        fraction: f64,
        accumulate: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Forward node the step belongs to; `nodes` (one past the last) for a loss step.
    pub node: usize,
    pub layer: String,
    pub kind: &'static str,
    pub phase: Phase,
    pub macs: f64,
    pub ops: f64,
    pub patterns: Vec<Pattern>,
}

/// The whole modelled step: tensors (forward ones keep their graph ids) and steps in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingStep {
    pub network: String,
    pub batch: usize,
    pub mode: Mode,
    pub tensors: Vec<StepTensor>,
    pub steps: Vec<Step>,
    pub nodes: usize,
    pub node_names: Vec<String>,
    /// Forward multiply-accumulates of every node (to scale simulated times to backward).
    pub node_macs: Vec<f64>,
    pub node_block: Vec<Option<usize>>,
    /// First node of every block.
    pub block_start: Vec<usize>,
}

struct Builder<'a> {
    g: &'a Graph,
    cfg: &'a MemoryConfig,
    tensors: Vec<StepTensor>,
    steps: Vec<Step>,
    contributions: Vec<Vec<TensorId>>,
    resolved: HashMap<TensorId, Option<TensorId>>,
    weight_grad: HashMap<TensorId, TensorId>,
    producers: Vec<Option<usize>>,
}

impl<'a> Builder<'a> {
    fn new_tensor(&mut self, name: String, like: TensorId, class: TensorClass) -> TensorId {
        let t = &self.tensors[like];
        let shared = t.shared;
        let bytes = match class {
            TensorClass::OptState => {
                self.g.tensors[like].elements() * self.cfg.optimizer_bytes_per_element as u64
            }
            _ => t.bytes,
        };
        let persistent = class == TensorClass::OptState;
        self.tensors.push(StepTensor {
            name,
            bytes,
            class,
            live_in: persistent,
            live_out: persistent,
            shared,
        });
        self.tensors.len() - 1
    }

    /// Appends a step of `node` and returns it, for a caller that names its kind.
    fn push(
        &mut self,
        node: usize,
        phase: Phase,
        macs: f64,
        ops: f64,
        patterns: Vec<Pattern>,
    ) -> &mut Step {
        let n = &self.g.nodes[node];
        let at = self.steps.len();
        self.steps.push(Step {
            node,
            layer: n.name.clone(),
            kind: n.op.kind(),
            phase,
            macs,
            ops,
            patterns,
        });
        &mut self.steps[at]
    }

    fn elems(&self, t: TensorId) -> f64 {
        self.g.tensors[t].elements() as f64
    }

    fn needs_grad(&self, t: TensorId) -> bool {
        self.g.tensors[t].role == TensorRole::Activation
    }

    /// The gradient of forward tensor `t`, summing several contributions in a new step.
    fn grad(&mut self, t: TensorId) -> Option<TensorId> {
        if let Some(&r) = self.resolved.get(&t) {
            return r;
        }
        let c = std::mem::take(&mut self.contributions[t]);
        let r = match c.len() {
            0 => None,
            1 => Some(c[0]),
            k => {
                let name = format!("{}.grad", self.g.tensors[t].name);
                let sum = self.new_tensor(name, t, TensorClass::ActGrad);
                // Only activations gather gradient contributions, and each has a
                // producer; a tensor without one has no node to charge the sum to and no
                // node reads its gradient.
                let Some(node) = self.producers[t] else {
                    self.resolved.insert(t, None);
                    return None;
                };
                let ops = (k - 1) as f64 * self.elems(t);
                let pat = Pattern::Stream {
                    reads: c,
                    writes: vec![sum],
                };
                self.push(node, Phase::GradAccumulate, 0.0, ops, vec![pat])
                    .kind = "accumulate";
                Some(sum)
            }
        };
        self.resolved.insert(t, r);
        r
    }

    /// A fresh gradient tensor for input `x` of `node`, recorded as a contribution.
    fn input_grad(&mut self, node: usize, x: TensorId) -> TensorId {
        let name = format!("{}.d{}", self.g.nodes[node].name, self.g.tensors[x].name);
        let d = self.new_tensor(name, x, TensorClass::ActGrad);
        self.contributions[x].push(d);
        d
    }

    /// The gradient tensor of weight `w` and whether it already holds a partial sum.
    fn weight_grad(&mut self, w: TensorId) -> (TensorId, bool) {
        if let Some(&d) = self.weight_grad.get(&w) {
            return (d, true);
        }
        let name = format!("{}.grad", self.g.tensors[w].name);
        let d = self.new_tensor(name, w, TensorClass::WeightGrad);
        self.weight_grad.insert(w, d);
        (d, false)
    }

    fn forward(&mut self, i: usize) {
        let n = &self.g.nodes[i];
        let training = self.cfg.mode == Mode::Training;
        let macs = self.g.macs(i);
        let ops = self.g.elementwise_ops(i);
        let mut reads = n.inputs.clone();
        reads.extend(&n.weights);
        let pats = match &n.op {
            Op::Conv(_) | Op::Fc { .. } => vec![Pattern::Gemm {
                rows_in: n.inputs.clone(),
                weights: n.weights.clone(),
                rows_out: n.outputs.clone(),
            }],
            Op::BatchNorm if training => vec![
                // Pass 1: batch statistics; pass 2: normalize, scale, shift.
                Pattern::Stream {
                    reads: n.inputs.clone(),
                    writes: vec![],
                },
                Pattern::Stream {
                    reads,
                    writes: n.outputs.clone(),
                },
            ],
            Op::Embedding { vocab, .. } => vec![Pattern::Gather {
                ids: n.inputs[0],
                table: n.weights[0],
                out: n.outputs[0],
                fraction: (self.elems(n.inputs[0]) / *vocab as f64).min(1.0),
            }],
            Op::Lstm { .. } => {
                // Gates = W [x, h_prev] + b, then the element-wise cell update.
                let mut rows_in = vec![n.inputs[0]];
                rows_in.extend(n.inputs.get(1));
                let mut cell_reads = vec![n.saved[0]];
                cell_reads.extend(n.inputs.get(2));
                vec![
                    Pattern::Gemm {
                        rows_in,
                        weights: n.weights.clone(),
                        rows_out: n.saved.clone(),
                    },
                    Pattern::Stream {
                        reads: cell_reads,
                        writes: n.outputs.clone(),
                    },
                ]
            }
            _ => vec![Pattern::Stream {
                reads,
                writes: n.outputs.clone(),
            }],
        };
        self.push(i, Phase::Forward, macs, ops, pats);
    }

    fn backward(&mut self, i: usize) {
        let g = self.g;
        let n = &g.nodes[i];
        let dys: Vec<Option<TensorId>> = n.outputs.iter().map(|&t| self.grad(t)).collect();
        if dys.iter().all(Option::is_none) {
            return;
        }
        // The gradient of the first output; the nodes that read it have one output, whose
        // gradient is there (a node with none returned above).
        let dy = dys[0];
        let macs = g.macs(i);
        let out_elems: f64 = n.outputs.iter().map(|&t| self.elems(t)).sum();
        let grad_inputs: Vec<TensorId> = n
            .inputs
            .iter()
            .copied()
            .filter(|&x| self.needs_grad(x))
            .collect();
        match &n.op {
            Op::Conv(_) | Op::Fc { .. } => {
                let Some(dy) = dy else { return };
                let x = n.inputs[0];
                if self.needs_grad(x) {
                    let dx = self.input_grad(i, x);
                    let pat = Pattern::Gemm {
                        rows_in: vec![dy],
                        weights: vec![n.weights[0]],
                        rows_out: vec![dx],
                    };
                    self.push(i, Phase::BackwardData, macs, 0.0, vec![pat]);
                }
                let (grads, accumulate) = self.weight_grads(&n.weights);
                let bias_ops = if n.weights.len() > 1 { out_elems } else { 0.0 };
                let pat = Pattern::WeightGrad {
                    rows_in: vec![x, dy],
                    grads,
                    accumulate,
                };
                self.push(i, Phase::BackwardWeight, macs, bias_ops, vec![pat]);
            }
            Op::MatMul { .. } => {
                let Some(dy) = dy else { return };
                let (a, b) = (n.inputs[0], n.inputs[1]);
                let mut pats = Vec::new();
                let mut m = 0.0;
                if self.needs_grad(a) {
                    let da = self.input_grad(i, a);
                    pats.push(Pattern::Stream {
                        reads: vec![dy, b],
                        writes: vec![da],
                    });
                    m += macs;
                }
                if self.needs_grad(b) {
                    let db = self.input_grad(i, b);
                    pats.push(Pattern::Stream {
                        reads: vec![a, dy],
                        writes: vec![db],
                    });
                    m += macs;
                }
                if !pats.is_empty() {
                    self.push(i, Phase::BackwardData, m, 0.0, pats);
                }
            }
            Op::BatchNorm | Op::LayerNorm { .. } | Op::RmsNorm { .. } => {
                let Some(dy) = dy else { return };
                let x = n.inputs[0];
                let w = n.weights[0];
                let (dw, _) = self.weight_grad(w);
                let dx = self.needs_grad(x).then(|| self.input_grad(i, x));
                let pats = if matches!(n.op, Op::BatchNorm) {
                    // Pass 1: reduce dy and dy*xhat (the scale/shift gradients); pass 2: dx.
                    let mut v = vec![Pattern::Stream {
                        reads: vec![dy, x],
                        writes: vec![dw],
                    }];
                    if let Some(dx) = dx {
                        v.push(Pattern::Stream {
                            reads: vec![dy, x, w],
                            writes: vec![dx],
                        });
                    }
                    v
                } else {
                    // Row-wise statistics: one pass writes dx and the reduced dw.
                    let mut writes: Vec<TensorId> = dx.into_iter().collect();
                    writes.push(dw);
                    vec![Pattern::Stream {
                        reads: vec![dy, x, w],
                        writes,
                    }]
                };
                self.push(i, Phase::Backward, 0.0, 8.0 * out_elems, pats);
            }
            Op::Add => {
                // The output gradient is the gradient of every input: no copy, no step.
                let Some(dy) = dy else { return };
                for &x in &grad_inputs {
                    self.contributions[x].push(dy);
                }
            }
            Op::Embedding { vocab, .. } => {
                let Some(dy) = dy else { return };
                let ids = n.inputs[0];
                let (dw, accumulate) = self.weight_grad(n.weights[0]);
                let pat = Pattern::Scatter {
                    rows_in: vec![ids, dy],
                    grad: dw,
                    fraction: (self.elems(ids) / *vocab as f64).min(1.0),
                    accumulate,
                };
                self.push(i, Phase::BackwardWeight, 0.0, out_elems, vec![pat]);
            }
            Op::Lstm { .. } => self.lstm_backward(i, &dys),
            op => {
                // Element-wise layers: what the derivative needs besides dy.
                let Some(dy) = dy else { return };
                let x = n.inputs[0];
                let mut reads = vec![dy];
                let factor = match op {
                    Op::Activation(a) => {
                        reads.push(if a.backward_reads_output() {
                            n.outputs[0]
                        } else {
                            x
                        });
                        a.ops()
                    }
                    Op::Pool {
                        kind: PoolKind::Max,
                        ..
                    } => {
                        reads.push(x);
                        2.0
                    }
                    Op::Softmax { .. } => {
                        reads.push(n.outputs[0]);
                        4.0
                    }
                    _ => 1.0,
                };
                let writes: Vec<TensorId> =
                    grad_inputs.iter().map(|&x| self.input_grad(i, x)).collect();
                if !writes.is_empty() {
                    let in_elems: f64 = grad_inputs.iter().map(|&x| self.elems(x)).sum();
                    let ops = factor * in_elems.max(out_elems);
                    let pat = Pattern::Stream { reads, writes };
                    self.push(i, Phase::Backward, 0.0, ops, vec![pat]);
                }
            }
        }
    }

    fn weight_grads(&mut self, ws: &[TensorId]) -> (Vec<TensorId>, bool) {
        let mut grads = Vec::new();
        let mut acc = false;
        for &w in ws {
            let (d, a) = self.weight_grad(w);
            grads.push(d);
            acc |= a;
        }
        (grads, acc)
    }

    fn lstm_backward(&mut self, i: usize, dys: &[Option<TensorId>]) {
        let n = &self.g.nodes[i];
        let macs = self.g.macs(i);
        let x = n.inputs[0];
        let h_prev = n.inputs.get(1).copied();
        let c_prev = n.inputs.get(2).copied();
        let gates = n.saved[0];
        let c = n.outputs[1];
        // Element-wise part: dgates and dc_{t-1} from dh_t, dc_t, the gates and the cells.
        let dgates = {
            let name = format!("{}.dgates", n.name);
            self.new_tensor(name, gates, TensorClass::ActGrad)
        };
        let mut reads: Vec<TensorId> = dys.iter().flatten().copied().collect();
        reads.extend([gates, c]);
        reads.extend(c_prev);
        let mut writes = vec![dgates];
        if let Some(cp) = c_prev {
            writes.push(self.input_grad(i, cp));
        }
        let mut pats = vec![Pattern::Stream { reads, writes }];
        // Matrix part: [dx, dh_prev] = W^T dgates.
        let mut rows_out = Vec::new();
        if self.needs_grad(x) {
            rows_out.push(self.input_grad(i, x));
        }
        if let Some(hp) = h_prev {
            rows_out.push(self.input_grad(i, hp));
        }
        pats.push(Pattern::Gemm {
            rows_in: vec![dgates],
            weights: vec![n.weights[0]],
            rows_out,
        });
        let ops = self.elems(gates) * 4.0;
        self.push(i, Phase::BackwardData, macs, ops, pats);
        let mut rows_in = vec![x];
        rows_in.extend(h_prev);
        rows_in.push(dgates);
        let (grads, accumulate) = self.weight_grads(&n.weights.clone());
        let pat = Pattern::WeightGrad {
            rows_in,
            grads,
            accumulate,
        };
        self.push(i, Phase::BackwardWeight, macs, self.elems(gates), vec![pat]);
    }

    fn update(&mut self) {
        let opt = self.cfg.optimizer;
        let mut seen = vec![false; self.g.tensors.len()];
        for i in 0..self.g.nodes.len() {
            let mut pats = Vec::new();
            let mut ops = 0.0;
            for &w in &self.g.nodes[i].weights {
                if seen[w] {
                    continue;
                }
                seen[w] = true;
                let Some(&dw) = self.weight_grad.get(&w) else {
                    continue;
                };
                let states: Vec<TensorId> = (0..opt.state_tensors())
                    .map(|k| {
                        let name = format!("{}.state{k}", self.g.tensors[w].name);
                        self.new_tensor(name, w, TensorClass::OptState)
                    })
                    .collect();
                let mut reads = vec![w, dw];
                reads.extend(&states);
                let mut writes = vec![w];
                writes.extend(&states);
                pats.push(Pattern::Stream { reads, writes });
                ops += opt.ops_per_element() * self.elems(w);
            }
            if !pats.is_empty() {
                self.push(i, Phase::Update, 0.0, ops, pats).kind = "update";
            }
        }
    }
}

/// Builds the training step (or the forward pass, in inference mode) of `g`.
pub fn build(g: &Graph, cfg: &MemoryConfig) -> TrainingStep {
    let training = cfg.mode == Mode::Training;
    let bpe = cfg.bytes_per_element as u64;
    let mut uses = vec![0usize; g.tensors.len()];
    for n in &g.nodes {
        for &w in &n.weights {
            uses[w] += 1;
        }
    }
    let tensors = g
        .tensors
        .iter()
        .enumerate()
        .map(|(t, x)| {
            let class = match x.role {
                TensorRole::Input => TensorClass::Input,
                TensorRole::Activation => TensorClass::Activation,
                TensorRole::Weight => TensorClass::Weight,
            };
            StepTensor {
                name: x.name.clone(),
                bytes: x.elements() * bpe,
                class,
                live_in: x.role != TensorRole::Activation,
                live_out: (training && x.role == TensorRole::Weight)
                    || (!training && g.outputs.contains(&t)),
                shared: uses[t] > 1,
            }
        })
        .collect();
    let mut b = Builder {
        g,
        cfg,
        tensors,
        steps: Vec::new(),
        contributions: vec![Vec::new(); g.tensors.len()],
        resolved: HashMap::new(),
        weight_grad: HashMap::new(),
        producers: g.producers(),
    };
    for i in 0..g.nodes.len() {
        b.forward(i);
    }
    if training {
        for &o in &g.outputs {
            let d = b.new_tensor(
                format!("{}.dloss", g.tensors[o].name),
                o,
                TensorClass::ActGrad,
            );
            b.contributions[o].push(d);
            b.steps.push(Step {
                node: g.nodes.len(),
                layer: "loss".into(),
                kind: "loss",
                phase: Phase::Loss,
                macs: 0.0,
                ops: 5.0 * b.elems(o),
                patterns: vec![Pattern::Stream {
                    reads: vec![o],
                    writes: vec![d],
                }],
            });
        }
        for i in (0..g.nodes.len()).rev() {
            b.backward(i);
        }
        b.update();
    }
    let mut block_start = vec![usize::MAX; g.blocks.len()];
    for (i, n) in g.nodes.iter().enumerate() {
        if let Some(k) = n.block {
            block_start[k] = block_start[k].min(i);
        }
    }
    TrainingStep {
        network: g.name.clone(),
        batch: g.batch,
        mode: cfg.mode,
        tensors: b.tensors,
        steps: b.steps,
        nodes: g.nodes.len(),
        node_names: g.nodes.iter().map(|n| n.name.clone()).collect(),
        node_macs: (0..g.nodes.len()).map(|i| g.macs(i)).collect(),
        node_block: g.nodes.iter().map(|n| n.block).collect(),
        block_start,
    }
}
