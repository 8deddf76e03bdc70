"""ONNX graph helpers: initializers, graph rewrites, conv padding.

Graph rewrites done before the layers are found (layers.py); both keep the model's
outputs, to float rounding:
- Constant nodes holding a tensor become initializers (exporters from Paddle and some
  Keras converters store weights that way);
- `fold_batchnorm`: a BatchNormalization that alone consumes a Conv's output is folded
  into that Conv's weight and bias, as an inference deployment would do.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper


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
    """Moves tensor-valued Constant nodes into the initializer list, in place; an Identity
    of an initializer becomes a copy of it (torch.onnx writes one for a weight equal to an
    earlier one, as the layers of an untrained nn.TransformerEncoder are)."""
    keep = []
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        attr = {a.name: a for a in node.attribute}
        if node.op_type == "Constant" and "value" in attr and len(node.output) == 1:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(attr["value"].t)
            tensor.name = node.output[0]
            model.graph.initializer.append(tensor)
            inits[tensor.name] = tensor
        elif node.op_type == "Identity" and len(node.output) == 1 and node.input[0] in inits:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(inits[node.input[0]])
            tensor.name = node.output[0]
            model.graph.initializer.append(tensor)
            inits[tensor.name] = tensor
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
