#!/usr/bin/env python3
"""Builds workloads/fmnist-vit: a small vision transformer trained here on Fashion-MNIST
and exported through `sresim_export.from_torch`.

    python3 tools/build_fmnist_vit.py [--out workloads/fmnist-vit] [--sresim target/release/sresim]

Data: Debian's dataset-fashion-mnist, loaded as tools/build_fmnist_cnn.py loads it (a
seeded permutation picks TRAIN of the 60,000 training images; the graph input is the first
GRAPH_SAMPLES test images with their labels, the layer traces the first SAMPLES).
Network: 7x7 patches (a conv of stride 7: 16 tokens) of width DIM, a class token and
learned positional embeddings, DEPTH pre-norm encoder blocks (separate Q, K, V and output
projections, HEADS heads, a GELU feed-forward of width MLP), a final LayerNorm and a linear
head on the class token. Training in PyTorch on one CPU thread, seeded, deterministic
kernels: AdamW with a cosine learning rate. Needs torch besides tools/requirements.txt,
and a built sresim: the README's top-1 figures are `sresim accuracy`'s.
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
from sresim_export import ssl_train as st  # noqa: E402
from sresim_export.bundle import write_file  # noqa: E402

SEED = 20261202
TRAIN = 30000
GRAPH_SAMPLES = 2000
CHECK_SAMPLES = 100
SAMPLES = 8
PATCH, DIM, HEADS, DEPTH, MLP = 7, 32, 4, 3, 64
EPOCHS, LR, DECAY, BATCH = 6, 3e-3, 0.05, 128


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.dh = heads, dim // heads
        self.scale = self.dh ** -0.5
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x):
        n, t, d = x.shape

        def split(y):
            return y.reshape(n, t, self.heads, self.dh).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        a = torch.softmax((q @ k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.o((a @ v).transpose(1, 2).reshape(n, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.fc1, self.fc2 = nn.Linear(dim, mlp), nn.Linear(mlp, dim)
        self.gelu = nn.GELU()

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    """Input: [N, 1, 28, 28] pixels times `input_scale` (1/255 in training, folded into the
    patch embedding for export so that the graph input is raw 0..255 pixels)."""

    def __init__(self, patch=PATCH, dim=DIM, heads=HEADS, depth=DEPTH, mlp=MLP, classes=10, size=28):
        super().__init__()
        tokens = (size // patch) ** 2
        self.patch = nn.Conv2d(1, dim, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, tokens + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*(Block(dim, heads, mlp) for _ in range(depth)))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        x = self.ln(self.blocks(x))
        return self.head(x[:, 0])


def evaluate(net, x, y, batch=500):
    net.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            right += int((net(torch.from_numpy(x[i:i + batch])).argmax(1).numpy() == y[i:i + batch]).sum())
    return right / len(x)


def train(run, net, x, y, rng):
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=DECAY)
    steps = EPOCHS * math.ceil(len(x) / BATCH)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(EPOCHS):
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
            total += float(loss.detach()) * len(sel)
        accs = " / ".join(f"{evaluate(net, xe, ye):.4f}" for xe, ye in run.evals)
        run.log(f"epoch {epoch + 1}/{EPOCHS}: loss {total / len(x):.4f}, top-1 (torch float32) {accs}, "
                f"{time.time() - t0:.0f} s")


def trained_model(cache=None):
    """(model with 1/255 folded into its patch embedding, training log lines, float top-1 on
    all 10,000 test images, the data); trains, or loads `cache` when it exists."""
    xtr, ytr, xte, yte, digests = fm.load()
    net = ViT()
    if cache and os.path.exists(cache):
        saved = torch.load(cache)
        net.load_state_dict(saved["state"])
        lines, acc = saved["log"], saved["acc"]
    else:
        st.deterministic(SEED)
        net = ViT()
        rng = np.random.default_rng(SEED)
        sel = rng.permutation(len(xtr))[:TRAIN]
        x, y = (xtr[sel] / 255.0).astype(np.float32), ytr[sel]
        xt = (xte / 255.0).astype(np.float32)
        run = st.Run([(xt, yte), (xt[:GRAPH_SAMPLES], yte[:GRAPH_SAMPLES])])
        run.log(f"ViT {sum(p.numel() for p in net.parameters())} parameters; top-1 on the 10,000 test "
                f"images / the first {GRAPH_SAMPLES}")
        train(run, net, x, y, rng)
        acc = evaluate(net, xt, yte)
        lines = run.lines
        if cache:
            state = {"state": net.state_dict(), "log": lines, "acc": acc}
            write_file(cache, lambda f: torch.save(state, f))
    with torch.no_grad():
        net.patch.weight /= 255.0
    return net.eval(), lines, acc, (xte, yte, digests)


ARCH = (f"{PATCH}x{PATCH} patches of the 28x28 image (a conv of stride {PATCH}: {(28 // PATCH) ** 2} tokens) "
        f"embedded to width {DIM}, a learned class token and positional embedding ({(28 // PATCH) ** 2 + 1} "
        f"tokens); {DEPTH} pre-norm encoder blocks (LayerNorm, {HEADS}-head self-attention with separate "
        f"Q, K, V and output projections, LayerNorm, a feed-forward {DIM}->{MLP}->{DIM} with GELU, "
        f"residual adds); a final LayerNorm; a linear head (10 classes) on the class token")


def main():
    from sresim_export import from_torch, trained

    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="build the fmnist-vit workload bundle")
    ap.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "workloads", "fmnist-vit")))
    ap.add_argument("--sresim", help="the sresim binary that measures top-1 (default target/release/sresim)")
    ap.add_argument("--cache", help="a file keeping the trained weights (trains only when it is absent)")
    args = ap.parse_args()
    binary = trained.sresim_binary(args.sresim)
    os.environ.setdefault("SRESIM", binary)
    t0 = time.time()
    torch.set_num_threads(1)
    net, log_lines, acc, (xte, yte, digests) = trained_model(args.cache)
    traces = xte[:SAMPLES].reshape(-1, 1, 28, 28).astype(np.float32)
    graph_x = np.ascontiguousarray(xte[:GRAPH_SAMPLES].reshape(-1, 1, 28, 28))
    written = from_torch(net, traces, args.out, labels=yte[:GRAPH_SAMPLES], graph_inputs=graph_x,
                         name="fmnist-vit")
    print(written, f"float top-1 on the graph input (onnxruntime) {written.top1:.4f}")
    trained.write_text(args.out, "train.log", "\n".join(log_lines) + "\n")
    rows = trained.accuracy_rows(binary, args.out, [GRAPH_SAMPLES, CHECK_SAMPLES])
    m = written.manifest
    sha = "\n".join(f"  - `{k}` sha256 `{v}`" for k, v in digests.items())
    note = ("The off-crossbar attention products: `sresim run --workload workloads/fmnist-vit` prints "
            "them in a `note:` line (their multiply-accumulates a sample, beside the crossbar layers').")
    text = f"""# fmnist-vit

A small vision transformer trained here on Fashion-MNIST, exported with
`sresim_export.from_torch` (torch.onnx at opset 17, in memory).

Rebuild (deterministic on one machine: seeded, one thread, deterministic torch kernels;
training takes a few minutes on one core, train.log has each epoch's time):
`python3 tools/build_fmnist_vit.py` (needs
`apt-get install dataset-fashion-mnist`, torch besides tools/requirements.txt, and a built
sresim, `--sresim PATH` or target/release/sresim: the top-1 figures below are measured with it).
The training log is train.log.

## Where the weights come from
- Data: Debian's `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist), loaded as
  tools/build_fmnist_cnn.py loads it:
{sha}
- Training set: {TRAIN} of the 60,000 training images, picked by a permutation seeded with
  {SEED}; pixels / 255.
- Network ({sum(p.numel() for p in net.parameters())} parameters): {ARCH}.
- Training in PyTorch {torch.__version__} (CPU, one thread): AdamW, batch {BATCH}, learning rate {LR}
  with a cosine decay to 0 over {EPOCHS} epochs, weight decay {DECAY}.
- The graph input is raw pixels 0..255 stored as uint8; the 1/255 of training is folded into
  the patch embedding's weights.

## On the crossbars and off them
The patch embedding is a conv layer (16 output positions). Every projection over the
sequence (Q, K, V, the attention output and both feed-forward layers of each block:
MatMuls of the [N, 17, {DIM}] sequence by a constant weight) is an fc layer with `tokens` 17:
each token is one input vector of the crossbar. The head reads the class token only (an
ordinary fc layer). The attention scores (Q K^T) and the context (softmax x V) multiply two
activations: no weight to program, so they are not crossbar layers; `sresim accuracy`
computes them in float, and no cycle, count or energy of `sresim run` includes them.
{note}

## Accuracy
Graph input: the first {GRAPH_SAMPLES} of the 10,000 Fashion-MNIST test images, with their labels.

{trained.accuracy_table("fmnist-vit", rows)}
torch's float32 top-1 on all 10,000 test images: {acc:.2%}; onnxruntime's float top-1 on the
graph input (the exporter's): {written.top1:.2%}.

## Layers
Layer traces: the first {SAMPLES} test images (labels {yte[:SAMPLES].tolist()}), each layer's input captured
in onnxruntime ({len(m["layers"])} layers, every one dense).

| layer | kind | weight | input vectors a sample |
|---|---|---|---|
{layer_rows_from_manifest(m)}
"""
    trained.write_text(args.out, "README.md", text)
    print(f"wrote {args.out} in {time.time() - t0:.0f} s")


def layer_rows_from_manifest(m):
    rows = []
    for e in m["layers"]:
        if e["kind"] == "conv":
            shape = [e["out_channels"], e["in_channels"] // e["groups"]] + e["kernel"]
            h = (e["input_shape"][1] - e["kernel"][0]) // e["stride"][0] + 1
            w = (e["input_shape"][2] - e["kernel"][1]) // e["stride"][1] + 1
            vectors = h * w
        else:
            shape, vectors = [e["out_features"], e["in_features"]], e.get("tokens", 1)
        rows.append(f"| {e['name']} | {e['kind']} | {shape} | {vectors} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--train-only":
        torch.set_num_threads(1)
        trained_model(sys.argv[2])
    else:
        main()
