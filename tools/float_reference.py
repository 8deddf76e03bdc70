#!/usr/bin/env python3
"""Float reference inference of a bundle's network graph with numpy (float64), for the
speed comparison of docs/perf.md ("The accuracy path against a float inference").

    OMP_NUM_THREADS=1 tools/float_reference.py workloads/lenet5-mnist --samples 500

Runs the first SAMPLES samples of the graph input through the graph (the ops of the
bundled lenet5-mnist: crossbar layers as conv/fc products plus bias, MaxPool,
AveragePool, Relu, Reshape, Flatten), prints top-1 against the labels, and checks the
logits against the bundle's `graph.reference` when it has one. Needs only numpy.
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np


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
    n, c, h, w = x.shape
    ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    win = np.stack(
        [x[:, :, i : i + sh * ho : sh, j : j + sw * wo : sw] for i in range(kh) for j in range(kw)]
    )
    return win.max(axis=0) if kind == "max" else win.mean(axis=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--samples", type=int)
    a = ap.parse_args()
    m = json.loads((a.bundle / "manifest.json").read_text())
    t = np.load(a.bundle / "tensors.npz")
    layers = {l["name"]: l for l in m["layers"]}
    x = t["graph.input"].astype(np.float64)
    if a.samples is not None:
        x = x[: a.samples]
    n = x.shape[0]
    env = {"graph.input": x}
    nodes = m["graph"]
    for node in nodes:
        op, xin = node["op"], env[node["inputs"][0]]
        if op == "layer":
            l = layers[node["layer"]]
            w = t[l["weight"]].astype(np.float64)
            bn = l["name"] + ".bias"
            b = t[bn].astype(np.float64) if bn in t.files else None
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
        elif op in ("Reshape", "Flatten"):
            y = xin.reshape(n, -1)
        else:
            sys.exit(f"error: {a.bundle}: graph: op {op} is not supported here")
        env[node["output"]] = y
    logits = env[nodes[-1]["output"]]
    pred = logits.reshape(n, -1).argmax(axis=1)
    line = f"{m['name']}: {n} samples"
    if "graph.labels" in t.files:
        line += f", top-1 {np.mean(pred == t['graph.labels'][:n]):.4f}"
    if "graph.reference" in t.files:
        ref = t["graph.reference"][:n].astype(np.float64)
        line += f", max |logit - reference| {np.abs(logits.reshape(n, -1) - ref).max():.2e}"
    print(line)


if __name__ == "__main__":
    main()
