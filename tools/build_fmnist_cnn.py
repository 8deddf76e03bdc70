#!/usr/bin/env python3
"""Builds workloads/fmnist-cnn and workloads/fmnist-cnn-ssl: a 4-conv CNN trained here on
Fashion-MNIST, dense, and the same network pruned with Structured Sparsity Learning.

    python3 tools/build_fmnist_cnn.py [--out-dir workloads] [--sresim target/release/sresim]

Data: Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist, the idx files of
Zalando's release). A seeded permutation picks TRAIN of the 60,000 training images; the
graph input is the first GRAPH_SAMPLES of the 10,000 test images with their labels, and
the layer traces are the first SAMPLES of them. Training in PyTorch on one CPU thread
(tools/sresim_export/ssl_train.py): dense with SGD, then SSL from the dense weights (group
lasso on filters, channels and filter shapes; groups below a threshold zeroed; fine-tuned
with the zeros held). Needs torch besides tools/requirements.txt, and a built sresim:
the README's top-1 figures are `sresim accuracy`'s.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from sresim_export import ssl_train as st  # noqa: E402
from sresim_export import trained  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
FILES = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
SEED = 20261202
TRAIN = 20000
GRAPH_SAMPLES = 2000
CHECK_SAMPLES = 100
SAMPLES = 8
EPOCHS, LR, LR_END, DECAY, BATCH = 8, 0.05, 0.005, 5e-4, 64
SSL_EPOCHS, SSL_LR, LASSO, THRESHOLD = 2, 0.01, 3e-4, 0.2
FT_EPOCHS, FT_LR, FT_LR_END = 3, 0.01, 0.001
SSL = {"epochs": SSL_EPOCHS, "lr": SSL_LR, "lasso": LASSO, "threshold": THRESHOLD, "ft_epochs": FT_EPOCHS,
       "ft_lr": FT_LR, "ft_lr_end": FT_LR_END, "decay": DECAY}
SPEC = [("conv", "conv1", 1, 16, 3, 1), ("relu",), ("maxpool", 2),
        ("conv", "conv2", 16, 32, 3, 1), ("relu",),
        ("conv", "conv3", 32, 32, 3, 1), ("relu",), ("maxpool", 2),
        ("conv", "conv4", 32, 64, 3, 1), ("relu",), ("maxpool", 2),
        ("flatten",), ("fc", "fc1", 576, 64), ("relu",), ("fc", "fc2", 64, 10)]
HW_AFTER = {"conv4": 9}   # conv4's 64 channels reach fc1 as 3x3 maps (576 = 64 x 9)
ARCH = ("conv1 1->16 3x3 pad 1, ReLU, maxpool 2 (28->14); conv2 16->32 3x3 pad 1, ReLU; "
        "conv3 32->32 3x3 pad 1, ReLU, maxpool 2 (14->7); conv4 32->64 3x3 pad 1, ReLU, "
        "maxpool 2 (7->3, floor); flatten; fc1 576->64, ReLU; fc2 64->10")


def idx(name, offset):
    with gzip.open(os.path.join(DATA, name)) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def load():
    if not os.path.isdir(DATA):
        raise SystemExit(f"error: {DATA}: absent; apt-get install dataset-fashion-mnist")
    xtr = idx(FILES[0], 16).reshape(-1, 1, 28, 28)
    ytr = idx(FILES[1], 8).astype(np.int64)
    xte = idx(FILES[2], 16).reshape(-1, 1, 28, 28)
    yte = idx(FILES[3], 8).astype(np.int64)
    digests = {}
    for name in FILES:
        with open(os.path.join(DATA, name), "rb") as f:
            digests[name] = hashlib.sha256(f.read()).hexdigest()
    return xtr, ytr, xte, yte, digests


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="build the fmnist-cnn and fmnist-cnn-ssl workload bundles")
    ap.add_argument("--out-dir", default=os.path.normpath(os.path.join(here, "..", "workloads")))
    ap.add_argument("--sresim", help="the sresim binary that measures top-1 (default target/release/sresim)")
    args = ap.parse_args()
    binary = trained.sresim_binary(args.sresim)
    t0 = time.time()
    xtr, ytr, xte, yte, digests = load()
    st.deterministic(SEED)
    rng = np.random.default_rng(SEED)
    sel = rng.permutation(len(xtr))[:TRAIN]
    x, y = (xtr[sel] / 255.0).astype(np.float32), ytr[sel]
    xt = (xte / 255.0).astype(np.float32)
    run = st.Run([(xt, yte), (xt[:GRAPH_SAMPLES], yte[:GRAPH_SAMPLES])])
    run.log(f"top-1 on the 10,000 test images / the first {GRAPH_SAMPLES}")
    net = st.ChainNet(SPEC)
    accs = {"dense": st.train_dense(run, net, x, y, rng, EPOCHS, LR, LR_END, DECAY, BATCH)}
    dense_log = list(run.lines)
    dense_params = st.numpy_params(net)
    accs.update(st.train_ssl(run, net, x, y, rng, SSL, HW_AFTER, BATCH))
    ssl_params = st.numpy_params(net)

    common = dict(xte=xte, yte=yte, digests=digests, binary=binary)
    build(os.path.join(args.out_dir, "fmnist-cnn"), "fmnist-cnn", dense_params, dense_log,
          {"dense": accs["dense"]}, False, **common)
    build(os.path.join(args.out_dir, "fmnist-cnn-ssl"), "fmnist-cnn-ssl", ssl_params, run.lines, accs,
          True, **common)
    print(f"wrote both bundles in {time.time() - t0:.0f} s")


def build(out, name, params, log_lines, accs, pruned, xte, yte, digests, binary):
    desc = {"files": FILES[2:], "sha256": {k: digests[k] for k in FILES[2:]},
            "what": f"the first {SAMPLES} Fashion-MNIST test images (t10k #0-{SAMPLES - 1}), raw pixels 0..255",
            "labels": yte[:SAMPLES].tolist()}
    prov = {
        "training": {"framework": "torch (CPU, 1 thread, deterministic algorithms)", "seed": SEED,
                     "data": "Debian dataset-fashion-mnist", "train_images": TRAIN, "epochs": EPOCHS,
                     "lr": [LR, LR_END], "momentum": 0.9, "weight_decay": DECAY, "batch": BATCH},
        "test_accuracy_torch": {k: {"test_10000": v[0], f"test_first_{GRAPH_SAMPLES}": v[1]} for k, v in accs.items()},
        "builder": "tools/build_fmnist_cnn.py",
    }
    if pruned:
        prov["ssl"] = SSL
    what = "pruned with structured sparsity learning and fine-tuned" if pruned else "dense"
    source = (f"4-conv CNN trained in torch on {TRAIN} Fashion-MNIST training images (Debian dataset-fashion-mnist), "
              f"{what}; graph input: the first {GRAPH_SAMPLES} test images with labels; layer traces: the first "
              f"{SAMPLES}; rebuild: python3 tools/build_fmnist_cnn.py")
    res, rows = trained.write(out, name, SPEC, params, xte[:SAMPLES], xte[:GRAPH_SAMPLES], yte[:GRAPH_SAMPLES],
                              desc, source, prov, log_lines, binary, CHECK_SAMPLES)
    title = ("the same network pruned with structured sparsity learning (SSL) and fine-tuned" if pruned
             else "dense (the unpruned network that fmnist-cnn-ssl starts from)")
    sha = "\n".join(f"  - `{k}` sha256 `{v}`" for k, v in digests.items())
    text = f"""# {name}

A 4-conv CNN trained on Fashion-MNIST, {title}.
Harder than lenet5-mnist: below 90% top-1 in float (lenet5-mnist: 95-96%).

Rebuild both fmnist bundles (deterministic on one machine: seeded, one thread,
deterministic torch kernels; about 10 minutes): `python3 tools/build_fmnist_cnn.py`
(needs `apt-get install dataset-fashion-mnist`, `pip install torch==2.10.0` besides
tools/requirements.txt, and `cargo build --release`: the top-1 figures below are measured
with that binary). The training log is train.log.

## Where the weights come from
- Data: Debian's `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist), 10 classes
  ({", ".join(CLASSES)}):
{sha}
- Training set: {TRAIN} of the 60,000 training images, picked by a permutation seeded with
  {SEED}; pixels / 255.
- Network: {ARCH}.
- Training in PyTorch 2.10 (CPU, one thread): SGD, momentum 0.9, batch {BATCH}, learning rate
  {LR} falling linearly to {LR_END} over {EPOCHS} epochs, weight decay {DECAY}.
- The graph input is raw pixels 0..255 stored as uint8; the 1/255 of training is folded into
  conv1's weights.
{trained.ssl_section(SSL, accs, GRAPH_SAMPLES) if pruned else ""}
## Accuracy
Graph input: the first {GRAPH_SAMPLES} of the 10,000 Fashion-MNIST test images, with their labels.

{trained.accuracy_table(name, rows)}
torch's float32 top-1 on all 10,000 test images: {accs['fine_tuned' if pruned else 'dense'][0]:.2%}.

## Layers
Layer traces: the first {SAMPLES} test images (labels {desc['labels']}), each layer's input
captured in onnxruntime. {trained.layers_table(res)}
"""
    trained.write_text(out, "README.md", text)


if __name__ == "__main__":
    main()
