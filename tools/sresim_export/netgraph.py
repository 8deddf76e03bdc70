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
  explicit Pad node before it;
- every tensor is written batch first (layout.py: the batch axis of each tensor is found
  by running the model at batch 1 and 2), so that torch's sequence-first attention
  (`[T, N, D]`, `[T, N*H, d]`, `[T*N, D]`) becomes ops on batch-first tensors: Reshape,
  Squeeze, Unsqueeze and Flatten are Reshapes, a Transpose's perm and the axis of
  Softmax, Concat, Gather, LayerNormalization, Slice and Split are mapped;
- a Gather of integer token ids from a constant table is an embedding lookup (a Gather
  without `indices`); ReduceMean (ReduceSum) is a GlobalAveragePool (times the count)
  over the reduced axes moved last; Pow by 0.5, 1, 2 or 3 is Sqrt, nothing or Muls;
  Expand of data is an Add of zeros; Slice and Split are Gathers of index lists;
  Where(IsNaN(x), c, x) is x; an integer Cast of token ids is nothing.
Anything else raises a ValueError naming the node.
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .capture import as_input, data_input, session
from .layout import TRIVIAL, Batch, axis_map, constant_first, find_batch_axes, first_shape, to_first

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


def evaluate(model, sample, feeds):
    """Runs `model` once on `sample` ([B, ...], in the data input's type) with every node
    output exposed: {name: array}."""
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
    sample = as_input(sample, inp)
    values = sess.run(names, {inp.name: sample, **feeds})
    out = dict(zip(names, (np.asarray(v) for v in values)))
    out[inp.name] = sample
    return out


_evaluate = evaluate


def batch_axes(model, samples, feeds=None, values1=None):
    """{tensor: layout.Batch or None}: where the batch is in each tensor of `model`, from
    its values at batch 1 (`values1`, or computed on samples[:1]) and at batch 2 (two
    samples; the first twice when there is one). A model that does not run at batch 2
    (its batch is fixed) gets every tensor of leading dimension 1 batch first."""
    feeds = dict(feeds or {})
    if values1 is None:
        try:
            values1 = evaluate(model, samples[:1], feeds)
        except Exception:  # every tensor exposed does not run (a quantized graph): nothing known
            return {}
    two = samples[:2] if len(samples) > 1 else np.concatenate([samples[:1], samples[:1]])
    try:
        values2 = evaluate(model, two, feeds)
    except Exception:  # a fixed batch of 1 (or fixed arrays fed with a batch of 1)
        values2 = None
    return find_batch_axes(values1, values2)


class _Builder:
    def __init__(self, model, layer_nodes, folded_pads, samples, feeds, batch=None):
        self.model = model
        self.feeds = dict(feeds or {})
        self.input = data_input(model, self.feeds).name
        self.values = evaluate(model, samples[:1], self.feeds)
        self.batch = batch if batch is not None else batch_axes(model, samples, self.feeds, self.values)
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
        self.constants = {}                     # (onnx tensor, shape) -> graph array name (Constant nodes)
        self.arrays = {}                        # graph array name -> float32 array
        self.counter = 0                        # names of the nodes a rewrite adds

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

    def b(self, name, where):
        """The batch axis of data tensor `name` (layout.Batch), or a one-line refusal."""
        b = self.batch.get(name, "absent")
        if isinstance(b, Batch):
            return b
        if self.shape(name)[:1] == [1]:
            return TRIVIAL        # not found, but of batch 1 in front: taken as batch first
        raise ValueError(f"{where}: cannot tell which axis of {name} {self.shape(name)} holds the batch "
                         f"(its shape does not grow along one axis with the batch); export the model "
                         f"with a dynamic batch axis")

    def trivial(self, names, where):
        """Whether every data tensor of `names` carries the batch alone on its first axis."""
        return all(self.b(n, where) == TRIVIAL for n in names if n in self.data)

    def fshape(self, name, where="graph"):
        """The batch-first shape (batch 1) of data tensor `name`."""
        return first_shape(self.shape(name), self.b(name, where))

    def fax(self, name, a, where, what="the op"):
        """Batch-first axis of ONNX axis `a` (may be negative) of data tensor `name`; an
        axis that holds the batch is refused."""
        rank = len(self.shape(name))
        if not -rank <= a < rank:
            raise ValueError(f"{where}: axis {a} outside a tensor of rank {rank}")
        a = a % rank
        b = self.b(name, where)
        mapped = axis_map(rank, b)[a]
        if mapped is None or (b.merged and a == b.axis):
            raise ValueError(f"{where}: {what} acts along axis {a} of {name} {self.shape(name)}, which holds "
                             f"the batch")
        return mapped

    def new_name(self, base):
        self.counter += 1
        return f"{base}.sresim{self.counter}"

    def operand(self, name, node, data=None):
        """The graph tensor of input `name`: itself when it depends on the input data, else
        a Constant node (written once) naming its value as an array of tensors.npz, in the
        batch-first form of the data tensor `data` it meets (layout.constant_first)."""
        if name in self.data:
            return self.t(name)
        value = np.asarray(self.const(name, node))
        if value.dtype.kind not in "fiub":
            raise ValueError(f"node {node.name or node.output[0]} ({node.op_type}): constant {name} "
                             f"of type {value.dtype} is not numeric")
        if data is not None and self.b(data, node.name) != TRIVIAL:
            own = self.batch.get(name)
            try:
                value = constant_first(value, own if isinstance(own, Batch) else None,
                                       len(self.shape(data)), self.b(data, node.name))
            except ValueError as e:
                raise ValueError(f"node {node.name or node.output[0]} ({node.op_type}): constant {name}: "
                                 f"{e}") from None
        elif isinstance(self.batch.get(name), Batch) and data is not None:
            value = to_first(value, self.batch[name])
        return self.constant_node(name, value)

    def constant_node(self, name, value):
        key = (name, tuple(np.shape(value)))
        if key not in self.constants:
            array = f"graph.const.{len(self.arrays)}"
            self.constants[key] = array
            self.arrays[array] = np.asarray(value).astype(np.float32)
            self.nodes.append({"op": "Constant", "output": array, "value": array})
        return self.constants[key]

    def shape(self, name):
        return list(self.values[name].shape)

    def emit(self, op, inputs, output, **attrs):
        node = {"op": op, "inputs": [self.t(i) for i in inputs], "output": output}
        node.update({k: _py(v) for k, v in attrs.items() if v is not None})
        self.nodes.append(node)

    def reshape(self, x, y, where):
        """y = x reshaped (Reshape, Squeeze, Unsqueeze, Flatten): one sample's elements keep
        their order, so it is a Reshape to y's batch-first shape, or nothing when the
        shapes agree."""
        src, dst = self.fshape(x, where), self.fshape(y, where)
        if src == dst:
            self.alias[y] = self.t(x)
            return
        self.emit("Reshape", [x], y, shape=dst)

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
        if op in _ALIASES or (op == "Cast" and self.values[y].dtype == np.float32
                              and self.values[node.input[0]].dtype.kind == "f"):
            self.alias[y] = self.t(node.input[0])
            return
        if op == "Cast" and self.values[node.input[0]].dtype.kind in "iu" and self.values[y].dtype.kind in "iu":
            self.alias[y] = self.t(node.input[0])   # integer ids stay ids (read as float64 by sresim)
            return
        if op == "Sum":
            if len(data_in) != 2 or len(node.input) != 2:
                raise ValueError(f"{where}: only a Sum of two data tensors is supported")
            return self.emit("Add", data_in, y)
        if op in ("Add", "Mul", "Sub", "Div"):
            if len(data_in) == 2:
                if not self.trivial(data_in, where) and self.b(data_in[0], where) != self.b(data_in[1], where):
                    raise ValueError(f"{where}: its inputs hold the batch on different axes")
                return self.emit(op, data_in, y)
            if op == "Add" and self.hard_swish(idx, node):
                return
            return self.emit_with_constants(op, node, y)
        if op == "Pow":
            return self.power(node, y, where)
        if op == "Concat":
            if "axis" not in a:
                raise ValueError(f"{where}: Concat without an axis")
            d = data_in[0]
            axis = a["axis"] if self.trivial([d], where) else self.fax(d, a["axis"], where, "Concat")
            return self.emit_with_constants(op, node, y, axis=axis)
        if op in ("Softmax", "Flatten") and not self.trivial(data_in + [y], where):
            if op == "Flatten":
                return self.reshape(data_in[0], y, where)
            return self.emit(op, data_in, y, axis=self.fax(data_in[0], a.get("axis", -1), where, "Softmax"))
        if op in _COPIED:
            if op == "GlobalAveragePool" and not self.trivial(data_in, where):
                raise ValueError(f"{where}: its input {data_in[0]} does not hold the batch first")
            kept = {k: a.get(k, d) for k, d in _COPIED[op].items()}
            return self.emit(op, data_in, y, **kept)
        if op == "Gelu":
            return self.emit(op, data_in, y, approximate=a.get("approximate", "none"))
        if op == "LayerNormalization":
            unknown = sorted(set(a) - {"axis", "epsilon", "stash_type"})
            if unknown or a.get("stash_type", 1) != 1:
                bad = unknown[0] if unknown else f"stash_type {a['stash_type']}"
                raise ValueError(f"{where}: attribute {bad} is not supported (axis, epsilon and stash_type 1 are)")
            x = node.input[0]
            axis = a.get("axis", -1)
            if not self.trivial([x], where):
                b = self.b(x, where)
                rank = len(self.shape(x))
                if (axis % rank) <= b.axis:
                    raise ValueError(f"{where}: it normalizes over the batch axis {b.axis} of {x}")
                axis = self.fax(x, axis, where, "LayerNormalization")
            inputs = [self.t(x)] + [self.operand(i, node) for i in node.input[1:] if i]
            return self.nodes.append({"op": op, "inputs": inputs, "output": y, "axis": _py(axis),
                                      "epsilon": _py(a.get("epsilon", 1e-5))})
        if op == "MatMul":
            if len(data_in) != 2:
                raise ValueError(f"{where}: a MatMul with a constant operand that is not a crossbar layer "
                                 f"is not supported")
            sa, sb = self.fshape(node.input[0], where), self.fshape(node.input[1], where)
            for n, s in ((node.input[0], sa), (node.input[1], sb)):
                bx = self.b(n, where)
                if bx.axis >= len(self.shape(n)) - 2:
                    raise ValueError(f"{where}: the batch of {n} {self.shape(n)} is in a multiplied axis")
            if len(sa) != len(sb) or len(self.fshape(y, where)) < 3:
                raise ValueError(f"{where}: a MatMul of {self.shape(node.input[0])} and "
                                 f"{self.shape(node.input[1])}: two activations of the same rank >= 3 are supported")
            return self.emit(op, data_in, y)
        if op == "Gather":
            return self.gather(node, a, y, where)
        if op in ("Squeeze", "Unsqueeze", "Reshape"):
            if op == "Reshape" and self.trivial([node.input[0], y], where):
                return self.emit("Reshape", data_in, y, shape=self.shape(y))
            return self.reshape(node.input[0], y, where)
        if op in ("ReduceMean", "ReduceSum"):
            return self.reduce(node, a, y, where)
        if op == "Expand":
            return self.expand(node, y, where)
        if op == "Slice":
            return self.slice(node, y, where)
        if op == "Split":
            return self.split(node, a, where)
        if op == "IsNaN":
            return self.nan_guard(node, where)
        if op == "Clip":
            lo = _scalar(self.const(node.input[1], node), where) if len(node.input) > 1 and node.input[1] else a.get("min")
            hi = _scalar(self.const(node.input[2], node), where) if len(node.input) > 2 and node.input[2] else a.get("max")
            return self.emit("Clip", data_in, y, min=lo, max=hi)
        if op in ("MaxPool", "AveragePool"):
            if not self.trivial(data_in, where):
                raise ValueError(f"{where}: its input {data_in[0]} does not hold the batch first")
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
            x = node.input[0]
            if not self.trivial([x], where):
                pads = [int(p) for p in np.asarray(pads).reshape(-1)]
                rank = len(self.shape(x))
                b = self.b(x, where)
                if pads[b.axis] or pads[b.axis + rank]:
                    raise ValueError(f"{where}: it pads the batch axis {b.axis} of {x}")
                begin, end = [0] * len(self.fshape(x)), [0] * len(self.fshape(x))
                for ax in range(rank):
                    m = axis_map(rank, b)[ax]
                    if m is not None:
                        begin[m], end[m] = pads[ax], pads[ax + rank]
                pads = begin + end
            return self.emit("Pad", data_in, y, pads=pads, mode=mode, value=value)
        if op == "Transpose":
            return self.transpose(node, a, y, where)
        raise ValueError(f"{where}: op {op} is not supported in a bundle graph")

    def emit_with_constants(self, op, node, output, **attrs):
        """`op` over the node's inputs, its constant ones as Constant nodes in the batch-first
        form of its (first) data input."""
        data = next(i for i in node.input if i and i in self.data)
        inputs = [self.operand(i, node, data) for i in node.input if i]
        node_out = {"op": op, "inputs": inputs, "output": output}
        node_out.update({k: _py(v) for k, v in attrs.items() if v is not None})
        self.nodes.append(node_out)

    def power(self, node, y, where):
        """Pow with a constant exponent of 1, 2 or 3 (a variance, GELU's x^3): products;
        0.5: Sqrt."""
        x = node.input[0]
        if x not in self.data or node.input[1] in self.data:
            raise ValueError(f"{where}: only a data tensor to a constant power is supported")
        e = _scalar(self.const(node.input[1], node), where)
        if e == 1.0:
            self.alias[y] = self.t(x)
        elif e == 0.5:
            self.emit("Sqrt", [x], y)
        elif e == 2.0:
            self.emit("Mul", [x, x], y)
        elif e == 3.0:
            sq = self.new_name(y)
            self.emit("Mul", [x, x], sq)
            self.nodes.append({"op": "Mul", "inputs": [sq, self.t(x)], "output": y})
        else:
            raise ValueError(f"{where}: exponent {e}: powers 0.5, 1, 2 and 3 are supported")

    def transpose(self, node, a, y, where):
        x = node.input[0]
        src = self.shape(x)
        perm = [int(p) for p in a.get("perm", list(range(len(src)))[::-1])]
        if self.trivial([x, y], where):
            dst = self.shape(y)
            moved = [p for p in perm if src[p] != 1]
            if moved == sorted(moved):
                return self.emit("Reshape", [x], y, shape=dst)
            if perm[0] != 0:
                raise ValueError(f"{where}: perm {list(perm)} moves the batch axis")
            return self.emit("Transpose", [x], y, perm=list(perm))
        bx, by = self.b(x, where), self.b(y, where)
        rank = len(src)
        amap = axis_map(rank, bx)
        if perm[by.axis] != bx.axis or bx.merged != by.merged or bx.m != by.m:
            raise ValueError(f"{where}: the batch of {x} (axis {bx.axis}) does not become the batch of "
                             f"{y} (axis {by.axis})")
        fperm = [0] + [amap[p] for p in perm if amap[p] is not None]
        if bx.merged:
            fperm = [0] + [p + 1 for p in perm]
        fsrc = self.fshape(x, where)
        moved = [p for p in fperm if fsrc[p] != 1]
        if moved == sorted(moved):
            return self.reshape(x, y, where)
        return self.emit("Transpose", [x], y, perm=fperm)

    def gather(self, node, a, y, where):
        data, idx = node.input[0], node.input[1]
        axis = a.get("axis", 0)
        if data not in self.data and idx in self.data:
            # an embedding: rows of a constant table picked by the token ids
            table = np.asarray(self.const(data, node))
            if table.ndim != 2 or axis % 2 != 0:
                raise ValueError(f"{where}: a lookup in a constant of shape {list(table.shape)} along axis "
                                 f"{axis}: an embedding table [vocab, dim] along axis 0 is supported")
            ids = self.values[idx]
            if ids.dtype.kind not in "iu":
                raise ValueError(f"{where}: indices {idx} of type {ids.dtype}: integer token ids are expected")
            if ids.size and (ids.min() < 0 or ids.max() >= len(table)):
                raise ValueError(f"{where}: token id {int(ids.min() if ids.min() < 0 else ids.max())} "
                                 f"outside the table's {len(table)} rows")
            self.b(idx, where)
            return self.nodes.append({"op": "Gather", "inputs": [self.constant_node(data, table), self.t(idx)],
                                      "output": y, "axis": 0})
        if data not in self.data or idx in self.data:
            raise ValueError(f"{where}: only a Gather of constant indices from the data, or of token ids "
                             f"from a constant table, is supported")
        idx_v = np.asarray(self.const(idx, node))
        if idx_v.ndim > 1 or idx_v.dtype.kind not in "iu":
            raise ValueError(f"{where}: indices of shape {list(idx_v.shape)}: a scalar or a list is supported")
        indices = int(idx_v) if idx_v.ndim == 0 else [int(i) for i in idx_v]
        if not self.trivial([data], where):
            axis = self.fax(data, axis, where, "Gather")
        return self.emit("Gather", [data], y, axis=axis, indices=indices)

    def reduce(self, node, a, y, where):
        """ReduceMean (mean pooling over the tokens, a LayerNorm written out at opset < 17)
        and ReduceSum over constant axes: the reduced axes moved last, one axis of them, a
        GlobalAveragePool (the mean), then the output's shape; ReduceSum times the count."""
        x = node.input[0]
        rank = len(self.shape(x))
        if len(node.input) > 1 and node.input[1]:
            axes = [int(v) for v in np.asarray(self.const(node.input[1], node)).reshape(-1)]
        else:
            axes = a.get("axes")
        if not axes:
            if a.get("noop_with_empty_axes", 0):
                self.alias[y] = self.t(x)
                return
            axes = list(range(rank))
        faxes = sorted({self.fax(x, int(v), where, node.op_type) for v in axes})
        fsrc = self.fshape(x, where)
        kept = [d for d in range(1, len(fsrc)) if d not in faxes]
        count = int(np.prod([fsrc[d] for d in faxes]))
        cur = x
        perm = [0] + kept + faxes
        if perm != list(range(len(fsrc))):
            moved = [p for p in perm if fsrc[p] != 1]
            name = self.new_name(y)
            if moved == sorted(moved):
                self.emit("Reshape", [cur], name, shape=[fsrc[p] for p in perm])
            else:
                self.emit("Transpose", [cur], name, perm=perm)
            cur = name
        flat = self.new_name(y)
        self.emit("Reshape", [cur], flat, shape=[1, int(np.prod([fsrc[d] for d in kept])), count])
        pooled = self.new_name(y) if node.op_type == "ReduceSum" else None
        mean = pooled or self.new_name(y)
        self.nodes.append({"op": "GlobalAveragePool", "inputs": [flat], "output": mean})
        if node.op_type == "ReduceSum":
            total = self.new_name(y)
            self.nodes.append({"op": "Mul", "inputs": [mean, self.constant_node(f"{y}.count", np.float32(count))],
                               "output": total})
            mean = total
        self.nodes.append({"op": "Reshape", "inputs": [mean], "output": y, "shape": self.fshape(y, where)})

    def expand(self, node, y, where):
        """Expand of a data tensor: an Add of zeros of the output's shape (exact)."""
        x = node.input[0]
        if x not in self.data:
            raise ValueError(f"{where}: Expand of a constant by data is not supported")
        fy = self.fshape(y, where)
        cur = x
        if len(self.fshape(x, where)) != len(fy):
            fx = self.fshape(x, where)
            cur = self.new_name(y)
            self.emit("Reshape", [x], cur, shape=[1] + [1] * (len(fy) - len(fx)) + fx[1:])
        zeros = self.constant_node(f"{y}.zeros", np.zeros([1] + fy[1:], np.float32))
        self.nodes.append({"op": "Add", "inputs": [self.t(cur), zeros], "output": y})

    def slice(self, node, y, where):
        """Slice of a data tensor along axes that do not hold the batch: a Gather of the
        kept indices on each sliced axis."""
        x = node.input[0]
        shape = self.shape(x)
        rank = len(shape)
        starts = np.asarray(self.const(node.input[1], node)).reshape(-1)
        ends = np.asarray(self.const(node.input[2], node)).reshape(-1)
        axes = (np.asarray(self.const(node.input[3], node)).reshape(-1) if len(node.input) > 3 and node.input[3]
                else np.arange(len(starts)))
        steps = (np.asarray(self.const(node.input[4], node)).reshape(-1) if len(node.input) > 4 and node.input[4]
                 else np.ones(len(starts), np.int64))
        cur = x
        for k, (s0, e0, ax, st) in enumerate(zip(starts, ends, axes, steps)):
            ax = int(ax) % rank
            kept = list(range(shape[ax]))[slice(int(s0), int(e0), int(st))]
            if kept == list(range(shape[ax])):
                continue
            fa = self.fax(x, ax, where, "Slice")
            out = y if k == len(starts) - 1 else self.new_name(y)
            self.nodes.append({"op": "Gather", "inputs": [self.t(cur)], "output": out, "axis": fa,
                               "indices": kept})
            cur = out
        if cur == x:
            self.alias[y] = self.t(x)
        elif cur != y:
            self.alias[y] = cur

    def split(self, node, a, where):
        x = node.input[0]
        rank = len(self.shape(x))
        ax = a.get("axis", 0) % rank
        fa = self.fax(x, ax, where, "Split")
        start = 0
        for out in node.output:
            n = self.shape(out)[ax]
            self.nodes.append({"op": "Gather", "inputs": [self.t(x)], "output": out, "axis": fa,
                               "indices": list(range(start, start + n))})
            start += n

    def nan_guard(self, node, where):
        """Where(IsNaN(x), c, x) (torch's guard after a masked softmax) is x for every
        finite x: the Where becomes x."""
        x = node.input[0]
        users = self.consumers.get(node.output[0], [])
        nodes = self.model.graph.node
        if not users or any(nodes[u].op_type != "Where" or list(nodes[u].input)[0] != node.output[0]
                            or nodes[u].input[2] != x for u in users):
            raise ValueError(f"{where}: IsNaN is supported only as Where(IsNaN(x), c, x), a guard that "
                             f"keeps every finite x")
        for u in users:
            self.skip.add(u)
            self.alias[nodes[u].output[0]] = self.t(x)

    def layer(self, idx, node, data_in):
        name = self.layer_nodes[idx]
        op = node.op_type
        x = node.input[0]
        y = node.output[0]
        where = f"node {node.name or y} ({op})"
        if name in self.folded_pads:
            t, l, b, r = self.folded_pads[name]
            padded = f"{name}.padded_input"
            self.emit("Pad", [x], padded, pads=[0, 0, t, l, 0, 0, b, r], mode="constant", value=0.0)
            x_graph = padded
        else:
            x_graph = self.t(x)
        if not self.trivial([x], where):
            bx = self.b(x, where)
            if op not in ("MatMul", "Gemm") or bx.axis == len(self.shape(x)) - 1:
                raise ValueError(f"{where}: layer {name}: its input {x} {self.shape(x)} holds the batch on "
                                 f"axis {bx.axis}")
            if len(self.fshape(x, where)) > 3:
                raise ValueError(f"{where}: layer {name}: its input {x} is {self.fshape(x, where)} batch first; "
                                 f"[N, in] or [N, tokens, in] is mapped")
        bias = None
        if op == "Conv" and len(node.input) > 2 and node.input[2]:
            bias = self.const(node.input[2], node).astype(np.float64)
        if op == "Gemm" and len(node.input) > 2 and node.input[2]:
            c = self.const(node.input[2], node).astype(np.float64)
            full = np.broadcast_to(c * float(_attrs(node).get("beta", 1.0)), self.shape(y))
            if not np.array_equal(full, np.broadcast_to(full.reshape(-1, full.shape[-1])[0], full.shape)):
                raise ValueError(f"{where}: layer {name}: a bias C that is not one value per output feature")
            bias = full.reshape(-1, full.shape[-1])[0].copy()
        # an Add of a constant vector that alone consumes the product: the layer's bias
        nxt = self.only_consumer(y)
        if nxt is not None:
            add = self.model.graph.node[nxt]
            other = [i for i in add.input if i != y]
            if add.op_type == "Add" and len(add.input) == 2 and len(other) == 1 and other[0] not in self.data:
                c = np.asarray(self.const(other[0], add), np.float64)
                out_shape = self.shape(y)
                if op in ("MatMul", "Gemm") and (len(out_shape) != 2 or not self.trivial([y], where)):
                    # a projection over a sequence: a bias per output feature, the last axis
                    channels = out_shape[-1]
                    try:
                        fits = np.broadcast_shapes(c.shape, out_shape) == tuple(out_shape)
                    except ValueError:
                        fits = False
                    per = np.broadcast_to(c, out_shape) if fits else np.zeros(0)
                    ref = per.reshape(-1, channels)[0] if per.size else per
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
        self.nodes.append({"op": "layer", "layer": name, "inputs": [x_graph], "output": y})
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


def network_graph(model, layer_nodes, folded_pads, samples, feeds=None, batch=None):
    """The bundle graph of `model` (the ONNX model the layers were captured from).
    `layer_nodes`: node index -> bundle layer name; `folded_pads`: layer name ->
    (top, left, bottom, right) padding folded into its captured input; `samples`: one or
    two inputs [B, ...] (shapes and folded constants are taken from running the first;
    both find where the batch is, unless `batch` gives it: batch_axes). Returns
    (nodes, graph output name, {layer name: bias}, {array name: value of a Constant node})."""
    b = _Builder(model, layer_nodes, folded_pads, samples, feeds, batch)
    nodes = b.run()
    outputs = [o.name for o in model.graph.output]
    if len(outputs) != 1:
        raise ValueError(f"the model has {len(outputs)} outputs; a bundle graph has one (graph_output)")
    out = b.t(outputs[0])
    if not any(n["output"] == out for n in nodes):
        raise ValueError(f"graph output {outputs[0]} is not computed from the input data")
    return nodes, out, b.biases, b.arrays
