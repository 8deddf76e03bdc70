#!/usr/bin/env python3
"""Builds workloads/fmnist-resnet20 and workloads/fmnist-resnet20-pruned: a CIFAR-size
residual network (ResNet-20: three stages of 16, 32 and 64 channels) trained here on
Fashion-MNIST, dense, and the same network magnitude-pruned and fine-tuned, both exported
through `sresim_export.from_torch`.

    python3 tools/build_fmnist_resnet.py [--out-dir workloads] [--sresim target/release/sresim]
        [--cache FILE]
    python3 tools/build_fmnist_resnet.py --train-only FILE    # trains into the cache FILE only

Data: Debian's dataset-fashion-mnist, loaded as tools/build_fmnist_cnn.py loads it. A
seeded permutation picks TRAIN of the 60,000 training images (the only images training
sees); the held-out labelled test part is the 10,000 test images: the graph input is the
first GRAPH_SAMPLES of them with their labels, the layer traces the first SAMPLES.
Network: He et al.'s CIFAR ResNet-20 (a 3x3 stem conv, three stages of three basic blocks,
two 3x3 convs each with BatchNorm, a residual add and ReLU; stride 2 and a 1x1 projection
shortcut where a stage begins; global average pooling; a linear head), run on the 28x28
images as they are (no padding to 32x32): 31.0 M multiply-accumulates an image (40.5 M at
32x32). BatchNorm is folded into the convs at export (the deployed weights).
Training in PyTorch on one CPU thread, seeded, deterministic kernels: SGD with momentum and
a cosine learning rate. Pruning: every 3x3 conv of the residual blocks (18 of the 22
crossbar layers: all but the stem, the two 1x1 shortcuts and the head) keeps the largest
|w| of its BatchNorm-folded weight (`sresim_export.prune.magnitude`, what the exporter's
`--prune magnitude` does), then FT_EPOCHS of fine-tuning with the zeros held. Needs torch
besides tools/requirements.txt, and a built sresim: the READMEs' top-1 figures are
`sresim accuracy`'s.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import build_fmnist_cnn as fm  # noqa: E402
from sresim_export import prune as prune_mod  # noqa: E402
from sresim_export import ssl_train as st  # noqa: E402
from sresim_export.bundle import write_file  # noqa: E402

SEED = 20261207
TRAIN = 20000
GRAPH_SAMPLES = 1000
CHECK_SAMPLES = 100
SAMPLES = 2
EPOCHS, LR, DECAY, BATCH = 5, 0.1, 5e-4, 128
SPARSITY = 0.6
FT_EPOCHS, FT_LR = 2, 0.02
NAMES = ("fmnist-resnet20", "fmnist-resnet20-pruned")
STAGES = (16, 32, 64)
BLOCKS = 3


class Block(nn.Module):
    """A basic residual block: conv-BN-ReLU, conv-BN, plus the shortcut (identity, or a 1x1
    conv of the stride with BN where the shape changes), then ReLU."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + (x if self.shortcut is None else self.shortcut(x)))


class ResNet20(nn.Module):
    """Input: [N, 1, 28, 28] pixels times `input_scale` (1/255 in training, folded into the
    stem conv for export so that the graph input is raw 0..255 pixels)."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(1, STAGES[0], 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(STAGES[0])
        blocks, cin = [], STAGES[0]
        for s, cout in enumerate(STAGES):
            for b in range(BLOCKS):
                blocks.append(Block(cin, cout, 2 if s > 0 and b == 0 else 1))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.blocks(torch.relu(self.bn(self.stem(x))))
        return self.head(torch.flatten(self.pool(x), 1))


def macs(size=28):
    """Multiply-accumulates of one image at `size` x `size` (convs and the head)."""
    total, hw, cin = size * size * STAGES[0] * 9, size, STAGES[0]
    for s, cout in enumerate(STAGES):
        for b in range(BLOCKS):
            stride = 2 if s > 0 and b == 0 else 1
            hw = (hw - 1) // stride + 1
            total += hw * hw * cout * (cin * 9 + cout * 9 + (cin if stride != 1 or cin != cout else 0))
            cin = cout
    return total + cin * 10


def pruned_convs(net):
    """(name, conv, its BatchNorm) of every conv pruned: the 3x3 convs of the blocks."""
    out = []
    for i, blk in enumerate(net.blocks):
        out += [(f"blocks.{i}.conv1", blk.conv1, blk.bn1), (f"blocks.{i}.conv2", blk.conv2, blk.bn2)]
    return out


def evaluate(net, x, y, batch=500):
    return st.evaluate(net, x, y, batch)


def train(run, net, x, y, rng, epochs, lr, what, masks=()):
    """SGD (momentum 0.9, weight decay on every parameter) with a cosine learning rate from
    `lr` to 0 over `epochs`; `masks` (parameter, 0/1 tensor) are applied after every step,
    so pruned weights stay exactly 0. Logs each epoch's loss and top-1 on the graph input."""
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=DECAY)
    steps = epochs * math.ceil(len(x) / BATCH)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    loss_fn = nn.CrossEntropyLoss()
    xg, yg = run.evals[1]
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(len(x))
        total, t0 = 0.0, time.time()
        for i in range(0, len(x), BATCH):
            sel = order[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(net(torch.from_numpy(x[sel])), torch.from_numpy(y[sel]))
            loss.backward()
            opt.step()
            sched.step()
            with torch.no_grad():
                for p, mask in masks:
                    p.mul_(mask)
            total += float(loss.detach()) * len(sel)
        run.log(f"{what} epoch {epoch + 1}/{epochs}: loss {total / len(x):.4f}, top-1 (torch float32) on the "
                f"first {GRAPH_SAMPLES} test images {evaluate(net, xg, yg):.4f}, {time.time() - t0:.0f} s")


def folded(conv, bn):
    """The conv's weight with its BatchNorm's scale folded in (what the bundle holds)."""
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    return (conv.weight * scale[:, None, None, None]).detach().numpy()


def prune_magnitude(net):
    """Prunes `net` in place: each of pruned_convs keeps the largest |w| of its folded
    weight (SPARSITY of each zeroed); returns the masks."""
    masks = []
    with torch.no_grad():
        for _, conv, bn in pruned_convs(net):
            keep = prune_mod.magnitude(folded(conv, bn), SPARSITY) != 0
            mask = torch.from_numpy(keep.astype(np.float32))
            conv.weight.mul_(mask)
            masks.append((conv.weight, mask))
    return masks


def trained_models(cache=None):
    """((dense, pruned) models in eval mode with 1/255 folded into their stem, training log
    lines, (dense, pruned) torch float top-1 on all 10,000 test images, the data); trains,
    or loads `cache` when it exists."""
    xtr, ytr, xte, yte, digests = fm.load()
    dense, pruned = ResNet20(), ResNet20()
    if cache and os.path.exists(cache):
        saved = torch.load(cache)
        dense.load_state_dict(saved["dense"])
        pruned.load_state_dict(saved["pruned"])
        lines, accs = saved["log"], saved["accs"]
    else:
        st.deterministic(SEED)
        dense = ResNet20()
        rng = np.random.default_rng(SEED)
        sel = rng.permutation(len(xtr))[:TRAIN]
        x, y = (xtr[sel] / 255.0).astype(np.float32), ytr[sel]
        xt = (xte / 255.0).astype(np.float32)
        run = st.Run([(xt, yte), (xt[:GRAPH_SAMPLES], yte[:GRAPH_SAMPLES])])
        run.log(f"ResNet-20 {sum(p.numel() for p in dense.parameters())} parameters, {macs()} MACs an image at "
                f"28x28; {TRAIN} training images; top-1 on the 10,000 test images / the first {GRAPH_SAMPLES}; "
                f"torch {torch.__version__}, one thread")
        t0 = time.time()
        train(run, dense, x, y, rng, EPOCHS, LR, "dense")
        run.log(f"dense: trained in {time.time() - t0:.0f} s")
        run.top1("dense", dense)
        pruned.load_state_dict(dense.state_dict())
        masks = prune_magnitude(pruned)
        kept = sum(int(m.sum()) for _, m in masks)
        total = sum(m.numel() for _, m in masks)
        run.top1(f"magnitude-pruned ({total - kept} of {total} block conv weights zero), before fine-tuning",
                 pruned)
        t0 = time.time()
        train(run, pruned, x, y, rng, FT_EPOCHS, FT_LR, "pruned fine-tuning", masks)
        run.log(f"pruned: fine-tuned in {time.time() - t0:.0f} s")
        accs = (run.top1("dense", dense)[0], run.top1("pruned, fine-tuned", pruned)[0])
        lines = run.lines
        if cache:
            state = {"dense": dense.state_dict(), "pruned": pruned.state_dict(), "log": lines, "accs": accs}
            write_file(cache, lambda f: torch.save(state, f))
    for net in (dense, pruned):
        with torch.no_grad():
            net.stem.weight /= 255.0
        net.eval()
    return (dense, pruned), lines, accs, (xte, yte, digests)


def layer_rows(written):
    """README rows of the bundle `written` (trained.mac_rows) and its total MACs."""
    from sresim_export import read_bundle

    manifest, tensors = read_bundle(written.path)
    return TRAINED.mac_rows(manifest, tensors)


def readme(name, written, rows, acc, about, pruned):
    layers, macs_total = layer_rows(written)
    sha = "\n".join(f"  - `{k}` sha256 `{v}`" for k, v in DIGESTS.items())
    m = written.manifest
    prune_text = f"""
## Pruning
From the trained dense weights (workloads/{NAMES[0]}): every 3x3 conv of the nine residual
blocks (18 of the {len(m['layers'])} crossbar layers) keeps the {1 - SPARSITY:.0%} of its weights of largest |w|,
ranked on the BatchNorm-folded weight the bundle holds (`sresim_export.prune.magnitude`, what
the exporter's `--prune magnitude --sparsity {SPARSITY}` does per layer); the stem conv, the two
1x1 shortcuts and the head stay dense. Then {FT_EPOCHS} epochs of fine-tuning (SGD, momentum 0.9,
learning rate {FT_LR} with a cosine decay to 0, weight decay {DECAY}) with the pruned weights held
at 0 (the masks applied after every step). The bundle is exported without `--prune`: its zeros
are the fine-tuned network's.
""" if pruned else ""
    return f"""# {name}

A CIFAR-size residual network (ResNet-20: three stages of 16, 32 and 64 channels), trained
here on Fashion-MNIST{", magnitude-pruned and fine-tuned" if pruned else ", dense"}, exported with
`sresim_export.from_torch` (torch.onnx at opset 17, in memory; BatchNorm folded into the convs).
{about} {macs_total / 1e6:.1f} M multiply-accumulates an image
on the crossbars (the images stay 28x28: not padded to 32x32, where the same network takes
{macs(32) / 1e6:.1f} M).

Rebuild (deterministic on one machine: seeded, one thread, deterministic torch kernels;
train.log has each epoch's time on the machine that built the committed bundles, under
load): `python3 tools/build_fmnist_resnet.py` writes both workloads/{NAMES[0]} and
workloads/{NAMES[1]} (needs `apt-get install dataset-fashion-mnist`, torch besides
tools/requirements.txt, and a built sresim, `--sresim PATH` or target/release/sresim: the
top-1 figures below are measured with it). The training log of both networks is train.log.

## Where the weights come from
- Data: Debian's `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist), loaded as
  tools/build_fmnist_cnn.py loads it:
{sha}
- Training set: {TRAIN} of the 60,000 training images, picked by a permutation seeded with
  {SEED}; pixels / 255. No test image is trained on.
- Held-out labelled test set: the 10,000 test images; the graph input is the first
  {GRAPH_SAMPLES} of them (t10k #0-{GRAPH_SAMPLES - 1}) with their labels, the layer traces the
  first {SAMPLES} (few, to keep the bundle small: its float32 traces are {SAMPLES} x 22 layer inputs).
- Network ({PARAMS} parameters before folding): {ARCH}.
- Training in PyTorch {torch.__version__} (CPU, one thread): SGD, momentum 0.9, batch {BATCH},
  learning rate {LR} with a cosine decay to 0 over {EPOCHS} epochs, weight decay {DECAY}. A few
  epochs only (the build's budget was about 30 minutes of one core): the network is not
  trained to convergence.
- The graph input is raw pixels 0..255 stored as uint8; the 1/255 of training is folded into
  the stem conv's weights.
{prune_text}
## Accuracy
Graph input: the first {GRAPH_SAMPLES} of the 10,000 Fashion-MNIST test images, with their labels.

{TRAINED.accuracy_table(name, rows)}
torch's float32 top-1 on all 10,000 test images: {acc:.2%}; onnxruntime's float top-1 on the
graph input (the exporter's): {written.top1:.2%}.

## Layers
Layer traces: the first {SAMPLES} test images (labels {LABELS}), each layer's input captured in
onnxruntime ({len(m["layers"])} layers: the stem, 18 block convs, 2 shortcuts, the head).

| layer | kind | weight | weight zeros | MACs an image |
|---|---|---|---|---|
{chr(10).join(layers)}
"""


ARCH = ("a 3x3 stem conv 1->16 with BatchNorm and ReLU; three stages of three basic blocks "
        "(conv 3x3, BatchNorm, ReLU, conv 3x3, BatchNorm, plus the shortcut, ReLU) of 16, 32 and 64 "
        "channels at 28x28, 14x14 and 7x7, the first block of stages 2 and 3 of stride 2 with a 1x1 "
        "conv of stride 2 and BatchNorm as its shortcut; global average pooling; a linear head 64->10")
DIGESTS, PARAMS, LABELS, TRAINED = {}, 0, [], None


def main():
    global DIGESTS, PARAMS, LABELS, TRAINED
    from sresim_export import from_torch, trained

    TRAINED = trained
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="build the fmnist-resnet20 and fmnist-resnet20-pruned workload bundles")
    ap.add_argument("--out-dir", default=os.path.normpath(os.path.join(here, "..", "workloads")))
    ap.add_argument("--sresim", help="the sresim binary that measures top-1 (default target/release/sresim)")
    ap.add_argument("--cache", help="a file keeping the trained weights (trains only when it is absent)")
    args = ap.parse_args()
    binary = trained.sresim_binary(args.sresim)
    os.environ.setdefault("SRESIM", binary)
    t0 = time.time()
    torch.set_num_threads(1)
    nets, log_lines, accs, (xte, yte, digests) = trained_models(args.cache)
    DIGESTS, PARAMS, LABELS = digests, sum(p.numel() for p in nets[0].parameters()), yte[:SAMPLES].tolist()
    traces = xte[:SAMPLES].reshape(-1, 1, 28, 28).astype(np.float32)
    graph_x = np.ascontiguousarray(xte[:GRAPH_SAMPLES].reshape(-1, 1, 28, 28))
    about = {
        NAMES[0]: f"The dense network; workloads/{NAMES[1]} is the same network magnitude-pruned and fine-tuned.",
        NAMES[1]: f"The network of workloads/{NAMES[0]}, its block convs magnitude-pruned to "
                  f"{SPARSITY:.0%} and fine-tuned.",
    }
    for name, net, acc, pruned in zip(NAMES, nets, accs, (False, True)):
        out = os.path.join(args.out_dir, name)
        written = from_torch(net, traces, out, labels=yte[:GRAPH_SAMPLES], graph_inputs=graph_x, name=name)
        print(written, f"float top-1 on the graph input (onnxruntime) {written.top1:.4f}")
        trained.write_text(out, "train.log", "\n".join(log_lines) + "\n")
        rows = trained.accuracy_rows(binary, out, [GRAPH_SAMPLES, CHECK_SAMPLES])
        trained.write_text(out, "README.md", readme(name, written, rows, acc, about[name], pruned))
    print(f"wrote {', '.join(NAMES)} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--train-only":
        torch.set_num_threads(1)
        trained_models(sys.argv[2])
    else:
        main()
