#!/usr/bin/env python3
"""Float reference inference of a bundle's network graph with numpy (float64), for the
speed comparison of docs/perf.md ("The accuracy path against a float inference").

    OMP_NUM_THREADS=1 tools/float_reference.py workloads/lenet5-mnist --samples 500
    tools/float_reference.py DIR --onnx MODEL.onnx --threads 1    # onnxruntime, float32

Runs the first SAMPLES samples of the graph input through the graph, BATCH samples at a
time (the ops of the bundled networks: crossbar layers as conv/fc products plus bias,
MaxPool, AveragePool with pads, Relu, Concat, Softmax, Reshape, Flatten), prints top-1
against the labels, and checks the outputs against the bundle's `graph.reference` when it
has one. Needs only numpy. With --onnx, the same samples go through the ONNX model the
bundle was exported from in onnxruntime instead (float32, --threads intra-op threads).
"""
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sresim_export.bundle import read_bundle  # noqa: E402
from sresim_export.cli import Parser, positive_int, run  # noqa: E402
from sresim_export.files import check_file  # noqa: E402


def conv(x, w, b, layer):
    n, c, h, wd = x.shape
    co, cig, r, s = w.shape
    (sh, sw), (ph, pw), (dh, dw) = layer["stride"], layer["padding"], layer["dilation"]
    g = layer["groups"]
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ho = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (s - 1) - 1) // sw + 1
    cols = np.empty((n, c, r, s, ho, wo))
    for i in range(r):
        for j in range(s):
            cols[:, :, i, j] = xp[:, :, i * dh : i * dh + sh * ho : sh, j * dw : j * dw + sw * wo : sw]
    out = []
    cog = co // g
    for gi in range(g):
        cg = cols[:, gi * cig : (gi + 1) * cig].reshape(n, cig * r * s, ho * wo)
        wg = w[gi * cog : (gi + 1) * cog].reshape(cog, -1)
        out.append(np.matmul(wg, cg))
    y = np.concatenate(out, axis=1).reshape(n, co, ho, wo)
    return y if b is None else y + b[None, :, None, None]


def pool(x, node, kind):
    kh, kw = node["kernel_shape"]
    sh, sw = node.get("strides", [1, 1])
    pt, pl, pb, pr = node.get("pads", [0, 0, 0, 0])
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
    n, c, h, w = xp.shape
    ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    win = np.stack(
        [xp[:, :, i : i + sh * ho : sh, j : j + sw * wo : sw] for i in range(kh) for j in range(kw)]
    )
    if kind == "max":
        return win.max(axis=0)
    if node.get("count_include_pad", 0) or not any((pt, pl, pb, pr)):
        return win.mean(axis=0)
    inside = np.pad(np.ones((h - pt - pb, w - pl - pr)), ((pt, pb), (pl, pr)))
    count = sum(inside[i : i + sh * ho : sh, j : j + sw * wo : sw] for i in range(kh) for j in range(kw))
    return win.sum(axis=0) / count


def forward(m, t, layers, x, where="manifest.json"):
    """The graph output of the batch x."""
    n = x.shape[0]
    env = {m["graph_input"]: x}
    for node in m["graph"]:
        op, xin = node["op"], env[node["inputs"][0]]
        if op == "layer":
            l = layers[node["layer"]]
            layer_input(l, xin, node, where)
            w, b = l["w"], l["b"]
            if l["kind"] == "conv":
                y = conv(xin, w, b, l)
            else:
                y = xin.reshape(n, -1) @ w.T + (0 if b is None else b)
        elif op == "MaxPool":
            y = pool(xin, node, "max")
        elif op == "AveragePool":
            y = pool(xin, node, "avg")
        elif op == "Relu":
            y = np.maximum(xin, 0)
        elif op == "Concat":
            y = np.concatenate([env[i] for i in node["inputs"]], axis=node["axis"])
        elif op == "Softmax":
            e = np.exp(xin - xin.max(axis=node.get("axis", -1), keepdims=True))
            y = e / e.sum(axis=node.get("axis", -1), keepdims=True)
        elif op in ("Reshape", "Flatten"):
            y = xin.reshape(n, -1)
        else:
            sys.exit(f"error: graph: op {op} is not supported here")
        env[node["output"]] = y
    return env[m["graph_output"]].reshape(n, -1)


def dims(shape):
    """A shape as sresim prints one: [50,20,5,5]."""
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def check_bundle(path, m, t):
    """What the reference computes with, checked against the manifest before any sample
    runs, as `sresim check` checks it: the graph input and every layer's weight and bias
    present with the shape of the layer's geometry. A refusal names the file and the
    array (numpy's own error names neither); a layer's input is checked as it runs
    (`layer_input`)."""
    man, npz = os.path.join(path, "manifest.json"), os.path.join(path, "tensors.npz")
    for key in ("graph", "graph_input", "graph_output", "layers"):
        if key not in m:
            raise ValueError(f"{man}: no {key!r}: the float reference runs a bundle's network graph")
    gi = m["graph_input"]
    if gi not in t:
        raise ValueError(f"{npz}: no array {gi} (the graph input that manifest.json names)")
    if t[gi].ndim < 2 or len(t[gi]) < 1:
        raise ValueError(f"{npz}: {gi}: shape {dims(t[gi].shape)} holds no sample "
                         "(the graph input is samples x the input's shape)")
    for l in m["layers"]:
        name, w = l.get("name"), l.get("weight")
        try:
            if l["kind"] == "conv":
                want = [l["out_channels"], l["in_channels"] // l["groups"], *l["kernel"]]
            elif l["kind"] == "fc":
                want = [l["out_features"], l["in_features"]]
            else:
                continue  # a kind forward() does not run is refused there, by its op
        except (KeyError, TypeError, ZeroDivisionError) as e:
            raise ValueError(f"{man}: layer {name}: no valid geometry ({type(e).__name__}: {e})") from None
        if w not in t:
            raise ValueError(f"{npz}: no array {w} (the weight of layer {name})")
        if list(t[w].shape) != want:
            raise ValueError(f"{npz}: {w}: shape {dims(t[w].shape)} does not match geometry {dims(want)}")
        bn = f"{name}.bias"
        if bn in t and list(t[bn].shape) != want[:1]:
            raise ValueError(f"{npz}: {bn}: shape {dims(t[bn].shape)} does not match geometry {dims(want[:1])}")
    for key in ("graph.labels", "graph.reference"):
        if key in t and (t[key].ndim < 1 or len(t[key]) != len(t[gi])):
            raise ValueError(f"{npz}: {key}: shape {dims(t[key].shape)}: not one row per sample "
                             f"of {gi} ({len(t[gi])})")


def layer_input(l, x, node, where):
    """The input `x` of layer `l` (a batch) fits its geometry; else one line naming the
    layer and the tensor that feeds it."""
    if l["kind"] == "conv":
        ok = x.ndim == 4 and x.shape[1] == l["in_channels"]
        want = f"{l['in_channels']} channels"
    else:
        ok = int(np.prod(x.shape[1:])) == l["in_features"]
        want = f"{l['in_features']} features"
    if not ok:
        raise ValueError(f"{where}: graph: layer {l['name']}: its input {node['inputs'][0]} is "
                         f"{dims(x.shape[1:])} a sample, the layer takes {want}")


def main(argv=None):
    ap = Parser(description=__doc__.splitlines()[1])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--samples", type=positive_int)
    ap.add_argument("--batch", type=positive_int, default=16, help="samples per batch (default 16)")
    ap.add_argument("--onnx", type=Path, help="run this ONNX model in onnxruntime instead")
    ap.add_argument("--threads", type=positive_int, default=1, help="onnxruntime intra-op threads (default 1)")
    a = ap.parse_args(argv)
    return run(lambda: reference(a))


def reference(a):
    m, t = read_bundle(a.bundle)
    check_bundle(a.bundle, m, t)
    x_all = t[m["graph_input"]]
    # sresim's rule and words (`sresim accuracy --samples`): no more samples than the bundle holds
    if a.samples is not None and a.samples > len(x_all):
        raise ValueError(f"--samples {a.samples}: the graph input of {m.get('name', a.bundle)} "
                         f"holds {len(x_all)} samples")
    n = len(x_all) if a.samples is None else a.samples
    if a.onnx is not None:
        import onnxruntime as ort

        check_file(a.onnx, "an ONNX model")
        so = ort.SessionOptions()
        so.intra_op_num_threads = so.inter_op_num_threads = a.threads
        try:
            sess = ort.InferenceSession(str(a.onnx), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # onnxruntime's refusal names no flag: one line naming the file
            raise ValueError(f"--onnx: {a.onnx}: not a model onnxruntime runs: {e}") from None
        name = sess.get_inputs()[0].name
        infer = lambda x: sess.run(None, {name: x.astype(np.float32)})[0].reshape(len(x), -1)  # noqa: E731
    else:
        layers = {}
        for l in m["layers"]:
            bn = l["name"] + ".bias"
            layers[l["name"]] = dict(l, w=t[l["weight"]].astype(np.float64),
                                     b=t[bn].astype(np.float64) if bn in t else None)
        man = os.path.join(a.bundle, "manifest.json")
        infer = lambda x: forward(m, t, layers, x.astype(np.float64), man)  # noqa: E731
    outs = [infer(x_all[i : min(i + a.batch, n)]) for i in range(0, n, a.batch)]
    logits = np.concatenate(outs)
    pred = logits.argmax(axis=1)
    line = f"{m['name']}: {n} samples"
    if "graph.labels" in t:
        line += f", top-1 {np.mean(pred == t['graph.labels'][:n]):.4f}"
    if "graph.reference" in t:
        ref = t["graph.reference"][:n].astype(np.float64)
        line += f", max |output - reference| {np.abs(logits - ref).max():.2e}"
    print(line)


if __name__ == "__main__":
    sys.exit(main())
