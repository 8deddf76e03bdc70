"""A numpy executor of a bundle's network graph (netgraph.py), in float64.

It runs the graph the way sresim's float path does: no quantization, exact products, a
whole batch at once (every op here is per sample). Used to calibrate each crossbar layer's
input range (`input_max`, `input_signed`) on the float network, and by the tests as the
reference that sresim's executor and onnxruntime are compared with.
"""

from __future__ import annotations

import math

import numpy as np

from .tconv import conv2d

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _pool(x, node, reduce):
    k = node["kernel_shape"]
    st = node.get("strides", [1] * len(k))
    pads = node.get("pads", [0] * 2 * len(k))
    dil = node.get("dilations", [1] * len(k))
    if node.get("ceil_mode", 0):
        raise ValueError(f"node {node['output']}: ceil_mode is not supported")
    fill = -np.inf if reduce == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=fill)
    ones = np.pad(np.ones(x.shape[2:]), ((pads[0], pads[2]), (pads[1], pads[3])))
    h, w = xp.shape[2:]
    ho = (h - dil[0] * (k[0] - 1) - 1) // st[0] + 1
    wo = (w - dil[1] * (k[1] - 1) - 1) // st[1] + 1
    windows, counts = [], []
    for i in range(k[0]):
        for j in range(k[1]):
            sl = (slice(i * dil[0], i * dil[0] + (ho - 1) * st[0] + 1, st[0]),
                  slice(j * dil[1], j * dil[1] + (wo - 1) * st[1] + 1, st[1]))
            windows.append(xp[:, :, sl[0], sl[1]])
            counts.append(ones[sl[0], sl[1]])
    if reduce == "max":
        return np.max(windows, axis=0)
    total = np.sum(windows, axis=0)
    if node.get("count_include_pad", 0):
        return total / (k[0] * k[1])
    return total / np.sum(counts, axis=0)


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def run_graph(manifest, tensors, x, on_layer_input=None):
    """Runs the graph of `manifest` on the batch `x` ([M, ...]) in float64; returns
    {tensor name: array} with every tensor computed. `on_layer_input(name, array)` is
    called with each crossbar layer's input."""
    layers = {l["name"]: l for l in manifest["layers"]}
    env = {manifest["graph_input"]: np.asarray(x, np.float64)}
    for node in manifest["graph"]:
        op = node["op"]
        if op == "Constant":
            env[node["output"]] = np.asarray(tensors[node["value"]], np.float64)
            continue
        xs = [env[i] for i in node.get("inputs", [])]
        v = xs[0] if xs else None
        if op == "layer":
            layer = layers[node["layer"]]
            w = np.asarray(tensors[layer["weight"]], np.float64)
            if on_layer_input is not None:
                on_layer_input(layer["name"], v)
            if layer["kind"] == "conv":
                y = conv2d(v, w, layer["stride"], layer["padding"], layer["dilation"], layer["groups"])
            elif v.ndim == 3:
                y = v @ w.T                       # [N, T, in] -> [N, T, out]
            else:
                y = v.reshape(len(v), -1) @ w.T
            bias = tensors.get(f"{layer['name']}.bias")
            if bias is not None:
                if layer["kind"] == "fc":
                    y = y + np.asarray(bias, np.float64)   # per output feature, the last axis
                else:
                    y = y + np.asarray(bias, np.float64).reshape([1, -1] + [1] * (y.ndim - 2))
        elif op == "Relu":
            y = np.maximum(v, 0)
        elif op == "Clip":
            y = np.clip(v, node.get("min", -np.inf), node.get("max", np.inf))
        elif op == "LeakyRelu":
            y = np.where(v >= 0, v, v * node.get("alpha", 0.01))
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-v))
        elif op == "HardSigmoid":
            y = np.clip(node.get("alpha", 0.2) * v + node.get("beta", 0.5), 0, 1)
        elif op == "HardSwish":
            y = v * np.clip(v / 6 + 0.5, 0, 1)
        elif op == "Tanh":
            y = np.tanh(v)
        elif op in ("MaxPool", "AveragePool"):
            y = _pool(v, node, "max" if op == "MaxPool" else "avg")
        elif op == "GlobalAveragePool":
            y = v.mean(axis=tuple(range(2, v.ndim)), keepdims=True)
        elif op == "Flatten":
            axis = node.get("axis", 1)
            y = v.reshape(int(np.prod(v.shape[:axis])), -1)
        elif op == "Add":
            y = xs[0] + xs[1]
        elif op == "Mul":
            y = xs[0] * xs[1]
        elif op == "Sub":
            y = xs[0] - xs[1]
        elif op == "Div":
            y = xs[0] / xs[1]
        elif op == "Concat":
            n = max(len(a) for a in xs if a.ndim)      # a constant of batch 1 repeats per sample
            xs = [np.broadcast_to(a, (n,) + a.shape[1:]) if a.shape[0] == 1 else a for a in xs]
            y = np.concatenate(xs, axis=node["axis"])
        elif op == "Erf":
            y = _erf(v)
        elif op == "Sqrt":
            y = np.sqrt(v)
        elif op == "Gelu":
            y = 0.5 * v * (1 + _erf(v / math.sqrt(2)))
        elif op == "LayerNormalization":
            axis = node.get("axis", -1) % v.ndim
            dims = tuple(range(axis, v.ndim))
            mean = v.mean(axis=dims, keepdims=True)
            var = ((v - mean) ** 2).mean(axis=dims, keepdims=True)
            y = (v - mean) / np.sqrt(var + node.get("epsilon", 1e-5)) * xs[1]
            if len(xs) > 2:
                y = y + xs[2]
        elif op == "Transpose":
            y = np.transpose(v, node["perm"])
        elif op == "MatMul":
            y = np.matmul(xs[0], xs[1])
        elif op == "Gather" and "indices" not in node:
            # an embedding: rows of a constant table picked by integer token ids
            ids = xs[1]
            if np.any(ids != np.round(ids)) or np.any(ids < 0) or np.any(ids >= len(v)):
                raise ValueError(f"node {node['output']}: token ids outside the table's {len(v)} rows")
            y = np.take(v, ids.astype(np.int64), axis=0)
        elif op == "Gather":
            y = np.take(v, node["indices"], axis=node.get("axis", 0))
        elif op == "Softmax":
            y = _softmax(v, node.get("axis", -1))
        elif op == "Pad":
            p = node["pads"]
            half = len(p) // 2
            y = np.pad(v, [(p[i], p[i + half]) for i in range(half)], constant_values=node.get("value", 0.0))
        elif op == "Reshape":
            shape = list(node["shape"])
            y = v.reshape([len(v)] + shape[1:])
        else:
            raise ValueError(f"node {node['output']}: op {op} is not supported")
        env[node["output"]] = y
    return env


def calibrate(manifest, tensors, x, batch=64, outputs=None):
    """{layer name: (input_max, input_signed)} over the samples `x`, on the float network:
    signed iff some input value is negative; the max is max(x) for an unsigned input and
    max|x| for a signed one (docs/model.md §2), over every sample. `outputs`, a list, gets
    the graph output of each batch of samples."""
    lo, hi = {}, {}

    def seen(name, v):
        lo[name] = min(lo.get(name, np.inf), float(v.min()))
        hi[name] = max(hi.get(name, -np.inf), float(v.max()))

    for i in range(0, len(x), batch):
        env = run_graph(manifest, tensors, x[i:i + batch], seen)
        if outputs is not None:
            outputs.append(env[manifest["graph_output"]])
    out = {}
    for name in hi:
        signed = lo[name] < 0
        out[name] = (max(hi[name], -lo[name]) if signed else hi[name], signed)
    return out
