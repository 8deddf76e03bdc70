"""The network graph of a bundle (docs/exporting.md, "The network graph").

An exported model becomes a list of nodes in execution order whose op names and attribute
meanings are ONNX's (opset 13): Relu, Clip, LeakyRelu, Sigmoid, HardSigmoid, HardSwish,
Tanh, MaxPool, AveragePool, GlobalAveragePool, Flatten, Add, Mul, Concat, Softmax, Pad,
Reshape, plus `{"op": "layer", "layer": NAME}` for a crossbar layer of the bundle (its bias
is the array `NAME.bias`, added after the product). A transformer adds (opset 17):
LayerNormalization, Transpose, MatMul of two activations (off the crossbar), Gather with
constant indices, Sub, Div, Erf, Sqrt, Gelu, and `{"op": "Constant", "value": ARRAY}` for
a constant operand (positional embedding, class token, LayerNorm scale and bias, scalars),
its value the float32 array ARRAY (`graph.const.K`) of tensors.npz. Node inputs name tensors: the graph
input or the output of an earlier node. Constant operands that ONNX 13 passes as inputs
are written as attributes with ONNX's earlier names: Clip `min`/`max`, Pad `pads`/`value`
(and `mode`), Reshape `shape` (the shape of one sample, batch 1, as the graph runs sample
by sample).

What the conversion rewrites, each exactly (to float rounding):
- values that do not depend on the input data (initializers, Constant nodes, a Shape and
  whatever is computed from it) are folded into attributes;
- a layer's bias: Conv's third input, Gemm's C (times beta), or an Add of a constant
  per-channel/per-feature vector that alone consumes the layer's output (per output
  feature, the last axis, for a projection over a sequence);
- the hard-swish pattern x * Clip(x + 3, 0, 6) / 6 (as PaddlePaddle exports it) becomes
  HardSwish; Sum of two inputs becomes Add; Identity, Dropout and float Cast are aliases;
- a Transpose that keeps the order of the elements (it only moves axes of size 1) becomes
  a Reshape;
- a conv whose asymmetric padding the exporter folded into the captured input gets an
  explicit Pad node before it.
Anything else raises a ValueError naming the node.
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .capture import data_input, session

# element-wise ops copied with their attributes (attribute: default)
_COPIED = {
    "Relu": {}, "Sigmoid": {}, "Tanh": {}, "HardSwish": {},
    "LeakyRelu": {"alpha": 0.01},
    "HardSigmoid": {"alpha": 0.2, "beta": 0.5},
    "Softmax": {"axis": -1},
    "Flatten": {"axis": 1},
    "GlobalAveragePool": {},
    "Erf": {}, "Sqrt": {},
}
_ALIASES = {"Identity", "Dropout"}


def _attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, (list, tuple)):
            v = [x.decode() if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def _py(v):
    """A JSON-friendly number or list of an attribute value."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [_py(x) for x in np.asarray(v).tolist()] if isinstance(v, np.ndarray) else [_py(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v


def _scalar(v, where):
    v = np.asarray(v)
    if v.size != 1:
        raise ValueError(f"{where}: expected a scalar constant, got shape {list(v.shape)}")
    return float(v.reshape(-1)[0])


def _evaluate(model, sample, feeds):
    """Runs `model` once on `sample` ([1, ...]) with every node output exposed: {name: array}."""
    m = copy.deepcopy(model)
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    have = {o.name for o in m.graph.output}
    for node in m.graph.node:
        for name in node.output:
            if name and name not in have:
                m.graph.output.append(helper.make_tensor_value_info(name, types.get(name, onnx.TensorProto.FLOAT), None))
                have.add(name)
    inp = data_input(m, feeds)
    sess = session(m)
    names = [o.name for o in sess.get_outputs()]
    values = sess.run(names, {inp.name: sample.astype(np.float32), **feeds})
    out = dict(zip(names, (np.asarray(v) for v in values)))
    out[inp.name] = sample
    return out


class _Builder:
    def __init__(self, model, layer_nodes, folded_pads, sample, feeds):
        self.model = model
        self.feeds = dict(feeds or {})
        self.input = data_input(model, self.feeds).name
        self.values = _evaluate(model, sample, self.feeds)
        self.inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.layer_nodes = layer_nodes          # node index -> bundle layer name
        self.folded_pads = folded_pads          # bundle layer name -> [t, l, b, r] folded
        self.nodes = []
        self.biases = {}                        # bundle layer name -> bias array
        self.alias = {}                         # onnx tensor -> graph tensor
        self.consumers = {}
        for i, n in enumerate(model.graph.node):
            for name in n.input:
                self.consumers.setdefault(name, []).append(i)
        self.data = self._data_tensors()
        self.skip = set()
        self.constants = {}                     # onnx tensor -> graph array name (Constant nodes)
        self.arrays = {}                        # graph array name -> float32 array

    def _data_tensors(self):
        """Tensors whose values depend on the input data (a Shape's output does not)."""
        data = {self.input}
        for n in self.model.graph.node:
            if n.op_type != "Shape" and any(i in data for i in n.input if i):
                data.update(o for o in n.output if o)
        return data

    def const(self, name, node):
        if name in self.data:
            raise ValueError(f"node {node.name or node.op_type} ({node.op_type}): input {name} depends on the "
                             f"input data where a constant is expected")
        if name in self.inits:
            return self.inits[name]
        if name in self.feeds:
            return np.asarray(self.feeds[name])
        return self.values[name]

    def t(self, name):
        return self.alias.get(name, name)

    def operand(self, name, node):
        """The graph tensor of input `name`: itself when it depends on the input data, else
        a Constant node (written once) naming its value as an array of tensors.npz."""
        if name in self.data:
            return self.t(name)
        if name not in self.constants:
            value = np.asarray(self.const(name, node))
            if value.dtype.kind not in "fiub":
                raise ValueError(f"node {node.name or node.output[0]} ({node.op_type}): constant {name} "
                                 f"of type {value.dtype} is not numeric")
            key = f"graph.const.{len(self.constants)}"
            self.constants[name] = key
            self.arrays[key] = value.astype(np.float32)
            self.nodes.append({"op": "Constant", "output": key, "value": key})
        return self.constants[name]

    def shape(self, name):
        return list(self.values[name].shape)

    def emit(self, op, inputs, output, **attrs):
        node = {"op": op, "inputs": [self.t(i) for i in inputs], "output": output}
        node.update({k: _py(v) for k, v in attrs.items() if v is not None})
        self.nodes.append(node)

    def only_consumer(self, tensor):
        users = self.consumers.get(tensor, [])
        return users[0] if len(users) == 1 else None

    def run(self):
        for idx, node in enumerate(self.model.graph.node):
            if idx in self.skip:
                continue
            outs = [o for o in node.output if o]
            if not any(o in self.data for o in outs):
                continue  # folded: its value is a constant
            self.convert(idx, node)
        return self.nodes

    def convert(self, idx, node):
        op, a = node.op_type, _attrs(node)
        data_in = [i for i in node.input if i and i in self.data]
        y = node.output[0]
        where = f"node {node.name or y} ({op})"
        if idx in self.layer_nodes:
            return self.layer(idx, node, data_in)
        if op in _ALIASES or (op == "Cast" and self.values[y].dtype == np.float32):
            self.alias[y] = self.t(node.input[0])
            return
        if op == "Sum":
            if len(data_in) != 2 or len(node.input) != 2:
                raise ValueError(f"{where}: only a Sum of two data tensors is supported")
            return self.emit("Add", data_in, y)
        if op in ("Add", "Mul", "Sub", "Div"):
            if len(data_in) == 2:
                return self.emit(op, data_in, y)
            if op == "Add" and self.hard_swish(idx, node):
                return
            return self.emit_with_constants(op, node, y)
        if op == "Concat":
            if "axis" not in a:
                raise ValueError(f"{where}: Concat without an axis")
            return self.emit_with_constants(op, node, y, axis=a["axis"])
        if op in _COPIED:
            kept = {k: a.get(k, d) for k, d in _COPIED[op].items()}
            return self.emit(op, data_in, y, **kept)
        if op == "Gelu":
            return self.emit(op, data_in, y, approximate=a.get("approximate", "none"))
        if op == "LayerNormalization":
            unknown = sorted(set(a) - {"axis", "epsilon", "stash_type"})
            if unknown or a.get("stash_type", 1) != 1:
                bad = unknown[0] if unknown else f"stash_type {a['stash_type']}"
                raise ValueError(f"{where}: attribute {bad} is not supported (axis, epsilon and stash_type 1 are)")
            return self.emit_with_constants(op, node, y, axis=a.get("axis", -1), epsilon=a.get("epsilon", 1e-5))
        if op == "MatMul":
            if len(data_in) != 2:
                raise ValueError(f"{where}: a MatMul with a constant operand that is not a crossbar layer "
                                 f"is not supported")
            if len(self.shape(node.input[0])) != len(self.shape(node.input[1])) or len(self.shape(y)) < 3:
                raise ValueError(f"{where}: a MatMul of {self.shape(node.input[0])} and "
                                 f"{self.shape(node.input[1])}: two activations of the same rank >= 3 are supported")
            return self.emit(op, data_in, y)
        if op == "Gather":
            if node.input[0] not in self.data or node.input[1] in self.data:
                raise ValueError(f"{where}: only a Gather of constant indices from the data is supported")
            idx_v = np.asarray(self.const(node.input[1], node))
            if idx_v.ndim > 1 or idx_v.dtype.kind not in "iu":
                raise ValueError(f"{where}: indices of shape {list(idx_v.shape)}: a scalar or a list is supported")
            indices = int(idx_v) if idx_v.ndim == 0 else [int(i) for i in idx_v]
            return self.emit(op, [node.input[0]], y, axis=a.get("axis", 0), indices=indices)
        if op == "Clip":
            lo = _scalar(self.const(node.input[1], node), where) if len(node.input) > 1 and node.input[1] else a.get("min")
            hi = _scalar(self.const(node.input[2], node), where) if len(node.input) > 2 and node.input[2] else a.get("max")
            return self.emit("Clip", data_in, y, min=lo, max=hi)
        if op in ("MaxPool", "AveragePool"):
            if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
                raise ValueError(f"{where}: auto_pad {a['auto_pad']} not supported; write explicit pads")
            if any(int(d) != 1 for d in a.get("dilations", [])):
                raise ValueError(f"{where}: dilations {list(a['dilations'])}: dilated pooling is not "
                                 f"supported in a bundle graph")
            kept = {k: a[k] for k in ("kernel_shape", "strides", "pads", "dilations", "ceil_mode",
                                      "count_include_pad") if k in a}
            return self.emit(op, data_in, y, **kept)
        if op == "Pad":
            pads = self.const(node.input[1], node) if len(node.input) > 1 else a["pads"]
            value = _scalar(self.const(node.input[2], node), where) if len(node.input) > 2 and node.input[2] else 0.0
            mode = a.get("mode", "constant")
            if mode != "constant":
                raise ValueError(f"{where}: only constant padding is supported (mode {mode})")
            return self.emit("Pad", data_in, y, pads=pads, mode=mode, value=value)
        if op == "Reshape":
            return self.emit("Reshape", data_in, y, shape=self.shape(y))
        if op == "Transpose":
            src, dst = self.shape(node.input[0]), self.shape(y)
            perm = a.get("perm", list(range(len(src)))[::-1])
            moved = [p for p in perm if src[p] != 1]
            if moved == sorted(moved):
                return self.emit("Reshape", data_in, y, shape=dst)
            if perm[0] != 0:
                raise ValueError(f"{where}: perm {list(perm)} moves the batch axis")
            return self.emit("Transpose", data_in, y, perm=list(perm))
        raise ValueError(f"{where}: op {op} is not supported in a bundle graph")

    def emit_with_constants(self, op, node, output, **attrs):
        """`op` over the node's inputs, its constant ones as Constant nodes."""
        inputs = [self.operand(i, node) for i in node.input if i]
        node_out = {"op": op, "inputs": inputs, "output": output}
        node_out.update({k: _py(v) for k, v in attrs.items() if v is not None})
        self.nodes.append(node_out)

    def layer(self, idx, node, data_in):
        name = self.layer_nodes[idx]
        op = node.op_type
        x = node.input[0]
        y = node.output[0]
        if name in self.folded_pads:
            t, l, b, r = self.folded_pads[name]
            padded = f"{name}.padded_input"
            self.emit("Pad", [x], padded, pads=[0, 0, t, l, 0, 0, b, r], mode="constant", value=0.0)
            x_graph = padded
        else:
            x_graph = self.t(x)
        bias = None
        if op == "Conv" and len(node.input) > 2 and node.input[2]:
            bias = self.const(node.input[2], node).astype(np.float64)
        if op == "Gemm" and len(node.input) > 2 and node.input[2]:
            c = self.const(node.input[2], node).astype(np.float64)
            bias = np.broadcast_to(c * float(_attrs(node).get("beta", 1.0)), self.shape(y)[1:]).copy()
        # an Add of a constant vector that alone consumes the product: the layer's bias
        nxt = self.only_consumer(y)
        if nxt is not None:
            add = self.model.graph.node[nxt]
            other = [i for i in add.input if i != y]
            if add.op_type == "Add" and len(add.input) == 2 and len(other) == 1 and other[0] not in self.data:
                c = np.asarray(self.const(other[0], add), np.float64)
                out_shape = self.shape(y)
                if op == "MatMul" and len(out_shape) == 3:
                    # a projection over a sequence [N, T, out]: a bias per output feature
                    channels = out_shape[2]
                    per = np.broadcast_to(c, out_shape) if np.broadcast_shapes(c.shape, out_shape) == tuple(out_shape) \
                        else np.zeros(0)
                    ref = per[0, 0, :] if per.size else per
                    same = per.size and np.array_equal(per, np.broadcast_to(ref, out_shape))
                else:
                    channels = out_shape[1]
                    per = np.broadcast_to(c, out_shape)
                    ref = per.reshape(out_shape[0], channels, -1)[0, :, 0]
                    same = np.array_equal(per, np.broadcast_to(
                        ref.reshape([1, channels] + [1] * (len(out_shape) - 2)), out_shape))
                if same:
                    bias = ref if bias is None else bias + ref
                    self.skip.add(nxt)
                    y = add.output[0]
        node_out = y
        self.nodes.append({"op": "layer", "layer": name, "inputs": [x_graph], "output": node_out})
        if bias is not None:
            self.biases[name] = np.asarray(bias, np.float32).reshape(-1)

    def hard_swish(self, idx, node):
        """x * Clip(x + 3, 0, 6) / 6 (or * (1/6)), from the Add onwards -> HardSwish."""
        nodes = self.model.graph.node
        x = [i for i in node.input if i in self.data]
        c = [i for i in node.input if i not in self.data]
        if len(x) != 1 or len(c) != 1 or float(np.asarray(self.const(c[0], node)).reshape(-1)[0]) != 3.0 \
                or np.asarray(self.const(c[0], node)).size != 1:
            return False
        x = x[0]
        clip_i = self.only_consumer(node.output[0])
        if clip_i is None or nodes[clip_i].op_type != "Clip":
            return False
        clip = nodes[clip_i]
        lo = _scalar(self.const(clip.input[1], clip), "Clip") if len(clip.input) > 1 else _attrs(clip).get("min")
        hi = _scalar(self.const(clip.input[2], clip), "Clip") if len(clip.input) > 2 else _attrs(clip).get("max")
        if (lo, hi) != (0.0, 6.0):
            return False
        div_i = self.only_consumer(clip.output[0])
        if div_i is None:
            return False
        div = nodes[div_i]
        if div.op_type == "Div" and div.input[0] == clip.output[0]:
            k = float(np.asarray(self.const(div.input[1], div)).reshape(-1)[0])
            if k != 6.0:
                return False
            mul_i, scaled = self.only_consumer(div.output[0]), div.output[0]
            if mul_i is None:
                return False
            mul = nodes[mul_i]
            if mul.op_type != "Mul" or set(mul.input) != {x, scaled}:
                return False
            chain = [clip_i, div_i, mul_i]
        else:
            mul = div
            if mul.op_type != "Mul" or set(mul.input) != {x, clip.output[0]}:
                return False
            div2_i = self.only_consumer(mul.output[0])
            if div2_i is None or nodes[div2_i].op_type != "Div" \
                    or float(np.asarray(self.const(nodes[div2_i].input[1], nodes[div2_i])).reshape(-1)[0]) != 6.0:
                return False
            chain = [clip_i, div_i, div2_i]
            mul = nodes[div2_i]
        self.skip.update(chain)
        self.emit("HardSwish", [x], mul.output[0])
        return True


def network_graph(model, layer_nodes, folded_pads, sample, feeds=None):
    """The bundle graph of `model` (the ONNX model the layers were captured from).
    `layer_nodes`: node index -> bundle layer name; `folded_pads`: layer name ->
    (top, left, bottom, right) padding folded into its captured input; `sample`: one input
    [1, ...] (shapes and folded constants are taken from running it). Returns
    (nodes, graph output name, {layer name: bias}, {array name: value of a Constant node})."""
    b = _Builder(model, layer_nodes, folded_pads, sample, feeds)
    nodes = b.run()
    outputs = [o.name for o in model.graph.output]
    if len(outputs) != 1:
        raise ValueError(f"the model has {len(outputs)} outputs; a bundle graph has one (graph_output)")
    out = b.t(outputs[0])
    if not any(n["output"] == out for n in nodes):
        raise ValueError(f"graph output {outputs[0]} is not computed from the input data")
    return nodes, out, b.biases, b.arrays
