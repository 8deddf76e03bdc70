//! A small builder that the zoo uses to write networks layer by layer, with shapes derived
//! as PyTorch would (NCHW for conv nets, [tokens, features] for sequence models).
//!
//! The networks it builds are code, not user data: a shape that does not fit is a bug in
//! the network's description, and the builder panics with its name (the zoo tests build
//! every network).

use crate::geometry::ConvGeometry;
use crate::graph::{
    ActKind, Graph, LrnRegion, Node, Op, PoolKind, PoolWindow, Tensor, TensorId, TensorRole,
};

pub struct GraphBuilder {
    g: Graph,
    block: Option<usize>,
    roles: Vec<LayerAnnot>,
}

/// What a transformer's fc layer is for, as the zoo writes it beside the graph: the layer
/// (its crossbar-layer name), its role (`q`, `k`, `v`, `qkv`, `attn_out`, `ffn_up`,
/// `ffn_gate`, `ffn_down`, the values of a shape file's `role`) and, for an attention
/// layer, its heads (query heads; K/V heads for `k` and `v`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerAnnot {
    pub layer: String,
    pub role: &'static str,
    pub heads: Option<usize>,
}

impl GraphBuilder {
    pub fn new(name: &str, batch: usize) -> Self {
        GraphBuilder {
            g: Graph::empty(name, batch),
            block: None,
            roles: Vec::new(),
        }
    }

    pub fn batch(&self) -> usize {
        self.g.batch
    }

    pub fn shape(&self, t: TensorId) -> &[usize] {
        &self.g.tensors[t].shape
    }

    fn tensor(&mut self, name: String, shape: Vec<usize>, role: TensorRole) -> TensorId {
        assert!(
            shape.iter().all(|&d| d > 0),
            "tensor {name}: zero dimension in {shape:?}"
        );
        self.g.tensors.push(Tensor { name, shape, role });
        self.g.tensors.len() - 1
    }

    /// A network input (images, token ids).
    pub fn input(&mut self, name: &str, shape: Vec<usize>) -> TensorId {
        self.tensor(name.to_string(), shape, TensorRole::Input)
    }

    pub fn weight(&mut self, name: &str, shape: Vec<usize>) -> TensorId {
        self.tensor(name.to_string(), shape, TensorRole::Weight)
    }

    fn activation(&mut self, name: String, shape: Vec<usize>) -> TensorId {
        self.tensor(name, shape, TensorRole::Activation)
    }

    /// Starts a residual/inception/recurrent block: nodes added until `end_block` carry it.
    pub fn begin_block(&mut self, label: &str) {
        self.g.blocks.push(label.to_string());
        self.block = Some(self.g.blocks.len() - 1);
    }

    pub fn end_block(&mut self) {
        self.block = None;
    }

    fn node(
        &mut self,
        name: &str,
        op: Op,
        inputs: Vec<TensorId>,
        weights: Vec<TensorId>,
        out_shapes: Vec<Vec<usize>>,
    ) -> Vec<TensorId> {
        let outputs: Vec<TensorId> = out_shapes
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let n = if i == 0 {
                    name.to_string()
                } else {
                    format!("{name}.out{i}")
                };
                self.activation(n, s)
            })
            .collect();
        self.g.nodes.push(Node {
            name: name.to_string(),
            op,
            inputs,
            weights,
            outputs: outputs.clone(),
            saved: Vec::new(),
            block: self.block,
            layer_name: None,
        });
        outputs
    }

    fn one(
        &mut self,
        name: &str,
        op: Op,
        inputs: Vec<TensorId>,
        weights: Vec<TensorId>,
    ) -> TensorId {
        let shape = self.shape(inputs[0]).to_vec();
        self.node(name, op, inputs, weights, vec![shape])[0]
    }

    fn nchw(&self, x: TensorId) -> [usize; 4] {
        match *self.shape(x) {
            [n, c, h, w] => [n, c, h, w],
            ref s => panic!("expected an NCHW tensor, got {s:?}"),
        }
    }

    /// Square conv without bias (a norm follows).
    #[allow(clippy::too_many_arguments)]
    pub fn conv(
        &mut self,
        name: &str,
        x: TensorId,
        cout: usize,
        k: usize,
        stride: usize,
        pad: usize,
        groups: usize,
    ) -> TensorId {
        self.conv_with(name, x, cout, k, stride, pad, groups, false)
    }

    /// Square conv with a bias vector (detection heads).
    pub fn conv_bias(
        &mut self,
        name: &str,
        x: TensorId,
        cout: usize,
        k: usize,
        stride: usize,
        pad: usize,
    ) -> TensorId {
        self.conv_with(name, x, cout, k, stride, pad, 1, true)
    }

    /// A conv of any geometry (bundle layers), without bias.
    pub fn conv_geom(&mut self, name: &str, x: TensorId, geom: ConvGeometry) -> TensorId {
        let [n, _, _, _] = self.nchw(x);
        let [ho, wo] = geom.output_hw();
        let shape = vec![
            geom.out_channels,
            geom.in_channels / geom.groups,
            geom.kernel[0],
            geom.kernel[1],
        ];
        let w = self.weight(&format!("{name}.weight"), shape);
        let out = vec![n, geom.out_channels, ho, wo];
        self.node(name, Op::Conv(geom), vec![x], vec![w], vec![out])[0]
    }

    /// Square conv of any stride, padding and groups, with or without a bias vector.
    #[allow(clippy::too_many_arguments)]
    pub fn conv_with(
        &mut self,
        name: &str,
        x: TensorId,
        cout: usize,
        k: usize,
        stride: usize,
        pad: usize,
        groups: usize,
        bias: bool,
    ) -> TensorId {
        let [n, c, h, w] = self.nchw(x);
        let geom = ConvGeometry::conv(c, cout, k, stride, pad, groups, [h, w]);
        if let Err(e) = geom.validate() {
            panic!("conv {name}: {e}");
        }
        let [ho, wo] = geom.output_hw();
        let mut weights =
            vec![self.weight(&format!("{name}.weight"), vec![cout, c / groups, k, k])];
        if bias {
            weights.push(self.weight(&format!("{name}.bias"), vec![cout]));
        }
        self.node(
            name,
            Op::Conv(geom),
            vec![x],
            weights,
            vec![vec![n, cout, ho, wo]],
        )[0]
    }

    /// Batch norm over channels (dim 1): scale and shift are one [2C] weight tensor.
    pub fn bn(&mut self, name: &str, x: TensorId) -> TensorId {
        let c = self.shape(x)[1];
        let w = self.weight(&format!("{name}.weight"), vec![2 * c]);
        self.one(name, Op::BatchNorm, vec![x], vec![w])
    }

    /// Layer norm over the last dimension.
    pub fn layernorm(&mut self, name: &str, x: TensorId) -> TensorId {
        let rank = self.shape(x).len();
        let d = self.shape(x).last().copied().unwrap_or(0);
        let w = self.weight(&format!("{name}.weight"), vec![2 * d]);
        let op = Op::LayerNorm {
            axis: rank.saturating_sub(1),
            epsilon: 1e-5,
        };
        self.one(name, op, vec![x], vec![w])
    }

    pub fn act(&mut self, name: &str, x: TensorId, kind: ActKind) -> TensorId {
        self.one(name, Op::Activation(kind), vec![x], vec![])
    }

    pub fn pool(
        &mut self,
        name: &str,
        x: TensorId,
        kind: PoolKind,
        k: usize,
        stride: usize,
        pad: usize,
    ) -> TensorId {
        self.pool_window(name, x, kind, PoolWindow::square(k, stride, pad))
    }

    /// Pooling with any window (Caffe's ceil mode, asymmetric padding).
    pub fn pool_window(
        &mut self,
        name: &str,
        x: TensorId,
        kind: PoolKind,
        window: PoolWindow,
    ) -> TensorId {
        let [n, c, h, w] = self.nchw(x);
        let Some([ho, wo]) = window.output_hw([h, w]) else {
            panic!("pool {name}: window does not fit a {h}x{w} input")
        };
        let op = Op::Pool { kind, window };
        self.node(name, op, vec![x], vec![], vec![vec![n, c, ho, wo]])[0]
    }

    /// Local response normalization (Caffe's LRN, ONNX's across channels).
    pub fn lrn(
        &mut self,
        name: &str,
        x: TensorId,
        size: usize,
        alpha: f32,
        region: LrnRegion,
    ) -> TensorId {
        let op = Op::Lrn {
            size,
            alpha,
            beta: 0.75,
            bias: 1.0,
            region,
        };
        self.one(name, op, vec![x], vec![])
    }

    /// Global average pool to [N, C].
    pub fn global_pool(&mut self, name: &str, x: TensorId) -> TensorId {
        let [n, c, _, _] = self.nchw(x);
        self.node(name, Op::GlobalPool, vec![x], vec![], vec![vec![n, c]])[0]
    }

    /// Fully connected over the last dimension; an NCHW input is flattened per sample.
    pub fn fc(&mut self, name: &str, x: TensorId, out: usize, bias: bool) -> TensorId {
        let mut shape = self.shape(x).to_vec();
        if shape.len() == 4 {
            shape = vec![shape[0], shape[1] * shape[2] * shape[3]];
        }
        let inf = shape.last().copied().unwrap_or(0);
        if let Some(last) = shape.last_mut() {
            *last = out;
        }
        let mut weights = vec![self.weight(&format!("{name}.weight"), vec![out, inf])];
        if bias {
            weights.push(self.weight(&format!("{name}.bias"), vec![out]));
        }
        let op = Op::Fc {
            in_features: inf,
            out_features: out,
            tokens: 1,
        };
        self.node(name, op, vec![x], weights, vec![shape])[0]
    }

    /// Fully connected over the last dimension of a `[.., T, in]` input whose `tokens` T
    /// vectors of a sample each cross the layer (a transformer's projection).
    pub fn fc_tokens(
        &mut self,
        name: &str,
        x: TensorId,
        out: usize,
        bias: bool,
        tokens: usize,
    ) -> TensorId {
        let y = self.fc(name, x, out, bias);
        if let Some(Node {
            op: Op::Fc { tokens: t, .. },
            ..
        }) = self.g.nodes.last_mut()
        {
            *t = tokens;
        }
        y
    }

    /// Annotates the last node (an fc layer) with its transformer role and heads.
    pub fn annotate(&mut self, role: &'static str, heads: Option<usize>) {
        if let Some(n) = self.g.nodes.last() {
            let layer = n.layer_name.clone().unwrap_or_else(|| n.name.clone());
            self.roles.push(LayerAnnot { layer, role, heads });
        }
    }

    /// RMS normalization over the last dimension (a [d] scale, no bias).
    pub fn rmsnorm(&mut self, name: &str, x: TensorId) -> TensorId {
        let rank = self.shape(x).len();
        let d = self.shape(x).last().copied().unwrap_or(0);
        let w = self.weight(&format!("{name}.weight"), vec![d]);
        let op = Op::RmsNorm {
            axis: rank.saturating_sub(1),
            epsilon: 1e-5,
        };
        self.one(name, op, vec![x], vec![w])
    }

    /// Element-wise product of tensors of one shape (a gated feed-forward's gate x up).
    pub fn mul(&mut self, name: &str, xs: &[TensorId]) -> TensorId {
        let s = self.shape(xs[0]).to_vec();
        for &x in xs {
            assert_eq!(self.shape(x), &s[..], "mul {name}: shapes differ");
        }
        self.node(name, Op::Mul, xs.to_vec(), vec![], vec![s])[0]
    }

    /// Concatenation along `axis` (a K/V cache along the sequence, a class token); the
    /// other dimensions are the last input's (a [1, 1, d] class token before [B, T, d]).
    pub fn concat_axis(&mut self, name: &str, xs: &[TensorId], axis: usize) -> TensorId {
        let mut s = self.shape(xs[xs.len() - 1]).to_vec();
        s[axis] = xs.iter().map(|&x| self.shape(x)[axis]).sum();
        self.node(name, Op::Concat { axis }, xs.to_vec(), vec![], vec![s])[0]
    }

    /// `x` plus a weight of one sample's shape (a learned position embedding), broadcast
    /// over the batch.
    pub fn add_weight(&mut self, name: &str, x: TensorId, w: TensorId) -> TensorId {
        let s = self.shape(x).to_vec();
        assert_eq!(self.shape(w)[1..], s[1..], "add {name}: shapes differ");
        self.node(name, Op::Add, vec![x, w], vec![], vec![s])[0]
    }

    /// A slice of `width` elements of the last dimension (Q, K or V of a packed
    /// projection).
    pub fn slice_last(&mut self, name: &str, x: TensorId, width: usize) -> TensorId {
        let mut s = self.shape(x).to_vec();
        if let Some(l) = s.last_mut() {
            assert!(width <= *l, "slice {name}: wider than its input");
            *l = width;
        }
        self.node(name, Op::Slice, vec![x], vec![], vec![s])[0]
    }

    /// ONNX Reshape of `x` to `shape` (same element count).
    pub fn reshape(&mut self, name: &str, x: TensorId, shape: Vec<usize>) -> TensorId {
        assert_eq!(
            self.g.tensors[x].elements(),
            shape.iter().map(|&d| d as u64).product::<u64>(),
            "reshape {name}: element count"
        );
        let op = Op::Reshape {
            shape: shape.iter().map(|&d| d as i64).collect(),
        };
        self.node(name, op, vec![x], vec![], vec![shape])[0]
    }

    /// ONNX Transpose: output dimension i is input dimension `perm[i]`.
    pub fn transpose(&mut self, name: &str, x: TensorId, perm: Vec<usize>) -> TensorId {
        let s: Vec<usize> = perm.iter().map(|&p| self.shape(x)[p]).collect();
        self.node(name, Op::Transpose { perm }, vec![x], vec![], vec![s])[0]
    }

    /// Element `index` of `axis` (removed): a sequence's class token or last token.
    pub fn gather(&mut self, name: &str, x: TensorId, axis: usize, index: usize) -> TensorId {
        let mut s = self.shape(x).to_vec();
        s.remove(axis);
        let op = Op::Gather {
            axis,
            indices: vec![index],
            keep_axis: false,
        };
        self.node(name, op, vec![x], vec![], vec![s])[0]
    }

    pub fn add(&mut self, name: &str, xs: &[TensorId]) -> TensorId {
        let s = self.shape(xs[0]).to_vec();
        for &x in xs {
            assert_eq!(self.shape(x), &s[..], "add {name}: shapes differ");
        }
        self.node(name, Op::Add, xs.to_vec(), vec![], vec![s])[0]
    }

    /// Concatenation along channels (dim 1 of NCHW, the last dim otherwise).
    pub fn concat(&mut self, name: &str, xs: &[TensorId]) -> TensorId {
        let mut s = self.shape(xs[0]).to_vec();
        let axis = if s.len() == 4 { 1 } else { s.len() - 1 };
        s[axis] = xs.iter().map(|&x| self.shape(x)[axis]).sum();
        self.node(name, Op::Concat { axis }, xs.to_vec(), vec![], vec![s])[0]
    }

    /// Stacks tensors of equal shape [r, d] along rows -> [sum r, d] (time steps).
    pub fn stack(&mut self, name: &str, xs: &[TensorId]) -> TensorId {
        let mut s = self.shape(xs[0]).to_vec();
        s[0] = xs.iter().map(|&x| self.shape(x)[0]).sum();
        self.node(name, Op::Concat { axis: 0 }, xs.to_vec(), vec![], vec![s])[0]
    }

    /// One of `parts` equal channel slices of `x`.
    pub fn slice(&mut self, name: &str, x: TensorId, parts: usize) -> TensorId {
        let mut s = self.shape(x).to_vec();
        assert_eq!(s[1] % parts, 0, "slice {name}: channels not divisible");
        s[1] /= parts;
        self.node(name, Op::Slice, vec![x], vec![], vec![s])[0]
    }

    pub fn upsample(&mut self, name: &str, x: TensorId, factor: usize) -> TensorId {
        let [n, c, h, w] = self.nchw(x);
        let op = Op::Upsample { factor };
        self.node(
            name,
            op,
            vec![x],
            vec![],
            vec![vec![n, c, h * factor, w * factor]],
        )[0]
    }

    pub fn softmax(&mut self, name: &str, x: TensorId) -> TensorId {
        let axis = self.shape(x).len() - 1;
        self.one(name, Op::Softmax { axis }, vec![x], vec![])
    }

    /// Batched product of two activations: `b` products of [m, k] x [k, n] -> out [b*m, n]
    /// laid out as `out_shape`.
    #[allow(clippy::too_many_arguments)]
    pub fn matmul(
        &mut self,
        name: &str,
        a: TensorId,
        bt: TensorId,
        batch: usize,
        m: usize,
        k: usize,
        n: usize,
        out_shape: Vec<usize>,
    ) -> TensorId {
        assert_eq!(
            out_shape.iter().product::<usize>(),
            batch * m * n,
            "matmul {name}: output shape"
        );
        let op = Op::MatMul { batch, m, k, n };
        self.node(name, op, vec![a, bt], vec![], vec![out_shape])[0]
    }

    /// Embedding lookup of `ids` (any shape) in `table` [vocab, dim] -> [ids elements, dim].
    pub fn embedding(&mut self, name: &str, ids: TensorId, table: TensorId) -> TensorId {
        let (vocab, dim) = match *self.shape(table) {
            [v, d] => (v, d),
            ref s => panic!("embedding {name}: table shape {s:?}"),
        };
        let rows = self.g.tensors[ids].elements() as usize;
        let op = Op::Embedding { vocab, dim };
        self.node(name, op, vec![ids], vec![table], vec![vec![rows, dim]])[0]
    }

    /// Weights of an LSTM layer: [4H, I+H] and a [4H] bias, shared by all its time steps.
    pub fn lstm_weights(&mut self, name: &str, input: usize, hidden: usize) -> [TensorId; 2] {
        [
            self.weight(&format!("{name}.weight"), vec![4 * hidden, input + hidden]),
            self.weight(&format!("{name}.bias"), vec![4 * hidden]),
        ]
    }

    /// One time step: x [N, I], optional (h, c) of the previous step -> (h, c).
    pub fn lstm_cell(
        &mut self,
        name: &str,
        x: TensorId,
        state: Option<(TensorId, TensorId)>,
        weights: [TensorId; 2],
        step: usize,
    ) -> (TensorId, TensorId) {
        let n = self.shape(x)[0];
        let input = self.shape(x)[1];
        let hidden = self.g.tensors[weights[1]].shape[0] / 4;
        let mut inputs = vec![x];
        if let Some((h, c)) = state {
            inputs.extend([h, c]);
        }
        let op = Op::Lstm {
            input,
            hidden,
            step,
        };
        let outs = self.node(
            name,
            op,
            inputs,
            weights.to_vec(),
            vec![vec![n, hidden], vec![n, hidden]],
        );
        let gates = self.activation(format!("{name}.gates"), vec![n, 4 * hidden]);
        if let Some(cell) = self.g.nodes.last_mut() {
            cell.saved.push(gates);
        }
        (outs[0], outs[1])
    }

    /// Lists the last node among the crossbar layers as `layer` (a network whose crossbar
    /// layers are known by other names than its modules: vgg16's `conv1_1`).
    pub fn list_as(&mut self, layer: &str) {
        if let Some(n) = self.g.nodes.last_mut() {
            n.layer_name = Some(layer.to_string());
        }
    }

    /// A copy node that reshapes `x` to `shape` (bundle glue between layers).
    pub fn glue(&mut self, name: &str, x: TensorId, shape: Vec<usize>) -> TensorId {
        self.node(name, Op::Glue, vec![x], vec![], vec![shape])[0]
    }

    /// The first output of the node called `name` (for routes to earlier layers).
    pub fn tensor_of_node(&self, name: &str) -> TensorId {
        let n = self.g.nodes.iter().find(|n| n.name == name);
        n.unwrap_or_else(|| panic!("no node {name}")).outputs[0]
    }

    /// Marks a tensor as a network output.
    pub fn output(&mut self, t: TensorId) {
        self.g.outputs.push(t);
    }

    /// The finished graph, checked.
    pub fn finish(self) -> Graph {
        self.finish_annotated().0
    }

    /// The finished graph, checked, and the roles of its annotated layers.
    pub fn finish_annotated(self) -> (Graph, Vec<LayerAnnot>) {
        if let Err(e) = self.g.validate() {
            panic!("graph {}: {e}", self.g.name);
        }
        (self.g, self.roles)
    }
}
