"""Finding the crossbar-mapped layers of an ONNX graph.

A layer is a 2-D Conv whose weight is a constant, a Gemm whose B is a constant, or a
MatMul whose right operand is a constant 2-D matrix. For each one we record the node,
the name of the tensor that enters it (captured later by running the model), the weight
as the bundle stores it, and how to write a changed weight back into the model.

Graph rewrites done before that (both keep the model's outputs, to float rounding):
- Constant nodes holding a tensor become initializers (exporters from Paddle and some
  Keras converters store weights that way);
- `fold_batchnorm`: a BatchNormalization that alone consumes a Conv's output is folded
  into that Conv's weight and bias, as an inference deployment would do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper


@dataclass
class LayerRef:
    name: str                 # node name (made unique), used as the bundle layer name
    kind: str                 # "conv" or "fc"
    node_index: int
    input_tensor: str         # tensor entering the layer
    weight_init: str          # initializer holding the weight
    transposed: bool          # bundle weight = initializer.T (fc only)
    weight: np.ndarray        # bundle layout: conv [Cout, Cin/G, R, S], fc [out, in]
    stride: tuple = (1, 1)
    pads: tuple = (0, 0, 0, 0)  # (top, left, bottom, right); see resolve_pads
    auto_pad: str = "NOTSET"
    dilation: tuple = (1, 1)
    groups: int = 1
    notes: list = field(default_factory=list)


def initializers(model):
    return {t.name: t for t in model.graph.initializer}


def get_init(model, name):
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    raise KeyError(name)


def set_init(model, name, array):
    for i, t in enumerate(model.graph.initializer):
        if t.name == name:
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(
                np.ascontiguousarray(array).astype(numpy_helper.to_array(t).dtype), name))
            return
    raise KeyError(name)


def constants_to_initializers(model):
    """Moves tensor-valued Constant nodes into the initializer list, in place."""
    keep = []
    for node in model.graph.node:
        attr = {a.name: a for a in node.attribute}
        if node.op_type == "Constant" and "value" in attr and len(node.output) == 1:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(attr["value"].t)
            tensor.name = node.output[0]
            model.graph.initializer.append(tensor)
        else:
            keep.append(node)
    del model.graph.node[:]
    model.graph.node.extend(keep)


def _consumers(model):
    users = {}
    for i, node in enumerate(model.graph.node):
        for name in node.input:
            users.setdefault(name, []).append(i)
    return users


def fold_batchnorm(model):
    """Folds Conv -> BatchNormalization pairs, in place. Returns the folded conv names."""
    inits = initializers(model)
    users = _consumers(model)
    graph_outputs = {o.name for o in model.graph.output}
    producer = {out: i for i, n in enumerate(model.graph.node) for out in n.output}
    drop, folded = set(), []
    for bi, bn in enumerate(model.graph.node):
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1:
            continue
        ci = producer.get(bn.input[0])
        if ci is None:
            continue
        conv = model.graph.node[ci]
        if conv.op_type != "Conv" or users.get(conv.output[0]) != [bi]:
            continue
        if conv.output[0] in graph_outputs or conv.input[1] not in inits:
            continue
        if any(name not in inits for name in bn.input[1:5]):
            continue
        if len(users.get(conv.input[1], [])) != 1:
            continue  # shared weight: leave it alone
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (get_init(model, n).astype(np.float64) for n in bn.input[1:5])
        w = get_init(model, conv.input[1]).astype(np.float64)
        b = get_init(model, conv.input[2]).astype(np.float64) if len(conv.input) > 2 and conv.input[2] else np.zeros(w.shape[0])
        scale = gamma / np.sqrt(var + eps)
        w_new = (w * scale[:, None, None, None]).astype(np.float32)
        b_new = ((b - mean) * scale + beta).astype(np.float32)
        set_init(model, conv.input[1], w_new)
        bias_name = f"{conv.input[1]}__folded_bias"
        model.graph.initializer.append(numpy_helper.from_array(b_new, bias_name))
        del conv.input[2:]
        conv.input.append(bias_name)
        conv.output[0] = bn.output[0]
        drop.add(bi)
        folded.append(conv.name or conv.output[0])
    keep = [n for i, n in enumerate(model.graph.node) if i not in drop]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    remove_unused_initializers(model)
    return folded


def remove_unused_initializers(model):
    used = {name for node in model.graph.node for name in node.input}
    used |= {o.name for o in model.graph.output}
    gone = {t.name for t in model.graph.initializer if t.name not in used}
    keep = [t for t in model.graph.initializer if t.name not in gone]
    del model.graph.initializer[:]
    model.graph.initializer.extend(keep)
    # old models list initializers among the graph inputs too: drop the removed ones
    keep_inputs = [i for i in model.graph.input if i.name not in gone]
    del model.graph.input[:]
    model.graph.input.extend(keep_inputs)


def _attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _same_pads(size, kernel, stride, dilation, upper):
    out = -(-size // stride)
    total = max((out - 1) * stride + dilation * (kernel - 1) + 1 - size, 0)
    small = total // 2
    return (small, total - small) if upper else (total - small, small)


def resolve_pads(layer, input_hw):
    """(top, left, bottom, right) pads of a conv, given its input [H, W] (auto_pad
    SAME_UPPER/SAME_LOWER depend on it, as in the ONNX spec)."""
    if layer.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        upper = layer.auto_pad == "SAME_UPPER"
        r, s = layer.weight.shape[2:]
        ph = _same_pads(input_hw[0], r, layer.stride[0], layer.dilation[0], upper)
        pw = _same_pads(input_hw[1], s, layer.stride[1], layer.dilation[1], upper)
        return (ph[0], pw[0], ph[1], pw[1])
    if layer.auto_pad == "VALID":
        return (0, 0, 0, 0)
    return tuple(int(p) for p in layer.pads)


def find_layers(model):
    """The crossbar-mapped layers in execution order, and the nodes that look like layers
    but cannot be mapped (non-constant weight, 1-D/3-D conv), as (name, reason)."""
    inits = initializers(model)
    layers, skipped, used = [], [], set()
    for idx, node in enumerate(model.graph.node):
        if node.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        base = node.name or f"{node.op_type.lower()}_{idx}"
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        a = _attrs(node)
        if node.op_type == "Conv":
            if node.input[1] not in inits:
                skipped.append((name, "conv weight is not a constant"))
                continue
            w = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
            if w.ndim != 4:
                skipped.append((name, f"only 2-D convolutions are mapped (weight rank {w.ndim})"))
                continue
            auto = a.get("auto_pad", b"NOTSET")
            auto = auto.decode() if isinstance(auto, bytes) else auto
            pads = tuple(a.get("pads", [0, 0, 0, 0])) if auto == "NOTSET" else (0, 0, 0, 0)
            layers.append(LayerRef(name, "conv", idx, node.input[0], node.input[1], False, w,
                                   stride=tuple(a.get("strides", [1, 1])), pads=pads,
                                   dilation=tuple(a.get("dilations", [1, 1])),
                                   groups=int(a.get("group", 1)), auto_pad=auto))
        elif node.op_type == "Gemm":
            if node.input[1] not in inits:
                skipped.append((name, "Gemm B is not a constant"))
            elif a.get("transA", 0):
                skipped.append((name, "Gemm with transA=1 is not mapped"))
            else:
                b = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
                trans = not a.get("transB", 0)
                layers.append(LayerRef(name, "fc", idx, node.input[0], node.input[1], trans,
                                       b.T if trans else b))
        elif node.input[1] in inits:
            b = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
            if b.ndim != 2:
                skipped.append((name, f"MatMul weight of rank {b.ndim} is not mapped"))
            else:
                layers.append(LayerRef(name, "fc", idx, node.input[0], node.input[1], True, b.T))
        elif node.input[0] in inits:
            skipped.append((name, "MatMul with a constant left operand is not mapped"))
    return layers, skipped
