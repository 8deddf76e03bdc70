#!/usr/bin/env python3
"""The float side of the per-sample ratio of docs/perf.md ("Per sample, in steady state"):
a bundle's network graph as an ONNX model in onnxruntime (float32, the bundle's float
weights), the session built before any timing, batch 1, one thread, timed in process.

    tools/ort_per_sample.py workloads/lenet5-mnist --samples 100 --passes 5

Builds the ONNX model from manifest.json's graph and tensors.npz (crossbar layers as Conv
or Gemm plus bias; MaxPool, AveragePool, GlobalAveragePool, Relu, Softmax, Concat, Reshape,
Flatten, and the Add of two activations: a residual network's), checks
its outputs against the bundle's `graph.reference` when it has one, then runs the first
SAMPLES samples one at a time, PASSES times, and prints one line:

    ort_per_sample_s MEDIAN (passes: P1 P2 ...)

MEDIAN the median over the passes of (the pass's time / SAMPLES), in seconds. Needs numpy,
onnx and onnxruntime (pip; not a CI dependency).
"""
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sresim_export.bundle import read_bundle  # noqa: E402
from sresim_export.cli import Parser, positive_int, run  # noqa: E402


def model_of(m, t):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    layers = {l["name"]: l for l in m["layers"]}
    x = t[m["graph_input"]]
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    for k, node in enumerate(m["graph"]):
        op, ins, out = node["op"], node["inputs"], node["output"]
        if op == "layer":
            l = layers[node["layer"]]
            w = t[l["weight"]].astype(np.float32)
            args = [ins[0], const(f"{l['name']}.w", w)]
            bn = l["name"] + ".bias"
            if bn in t:
                args.append(const(f"{l['name']}.b", t[bn].astype(np.float32)))
            if l["kind"] == "conv":
                (ph, pw) = l["padding"]
                nodes.append(helper.make_node(
                    "Conv", args, [out], strides=l["stride"], pads=[ph, pw, ph, pw],
                    dilations=l["dilation"], group=l["groups"]))
            elif l["kind"] == "fc" and "tokens" not in l:
                flat = f"flat{k}"
                nodes.append(helper.make_node("Flatten", [ins[0]], [flat], axis=1))
                nodes.append(helper.make_node("Gemm", [flat] + args[1:], [out], transB=1))
            else:
                sys.exit(f"error: {l['name']}: a {l['kind']} layer over tokens is not supported here")
        elif op in ("MaxPool", "AveragePool"):
            attrs = {a: node[a] for a in ("kernel_shape", "strides", "pads", "count_include_pad") if a in node}
            nodes.append(helper.make_node(op, ins, [out], **attrs))
        elif op in ("Relu", "GlobalAveragePool"):
            nodes.append(helper.make_node(op, ins, [out]))
        elif op == "Add" and len(ins) == 2 and not any(i in t for i in ins):
            nodes.append(helper.make_node("Add", ins, [out]))   # a residual add of two activations
        elif op == "Softmax":
            nodes.append(helper.make_node("Softmax", ins, [out], axis=node.get("axis", -1)))
        elif op == "Concat":
            nodes.append(helper.make_node("Concat", ins, [out], axis=node["axis"]))
        elif op in ("Reshape", "Flatten"):
            nodes.append(helper.make_node("Flatten", ins, [out], axis=1))
        else:
            sys.exit(f"error: graph: op {op} is not supported here")
    g = helper.make_graph(
        nodes, m["name"],
        [helper.make_tensor_value_info(m["graph_input"], TensorProto.FLOAT, [None, *x.shape[1:]])],
        [helper.make_tensor_value_info(m["graph_output"], TensorProto.FLOAT, [None, None])],
        inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def main(argv=None):
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--samples", type=positive_int, default=100)
    ap.add_argument("--passes", type=positive_int, default=5)
    a = ap.parse_args(argv)
    return run(lambda: per_sample(a))


def per_sample(a):
    m, t = read_bundle(a.bundle)
    import onnxruntime as ort

    x = t[m["graph_input"]].astype(np.float32)
    n = min(a.samples, len(x))
    if n < 1:
        sys.exit(f"error: {a.bundle}: the graph input holds no sample")
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    sess = ort.InferenceSession(model_of(m, t), so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    if "graph.reference" in t:
        y = sess.run(None, {name: x[:n]})[0].reshape(n, -1)
        ref = t["graph.reference"][:n]
        err = np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-30)
        if err > 1e-4:
            sys.exit(f"error: {a.bundle}: onnxruntime differs from graph.reference by {err:.2e} (relative)")
    samples = [x[i : i + 1] for i in range(n)]
    sess.run(None, {name: samples[0]})  # warm-up
    per = []
    for _ in range(a.passes):
        start = time.perf_counter()
        for s in samples:
            sess.run(None, {name: s})
        per.append((time.perf_counter() - start) / n)
    print(f"ort_per_sample_s {statistics.median(per):.6e} (passes: {' '.join(f'{p:.3e}' for p in per)})")


if __name__ == "__main__":
    sys.exit(main())
