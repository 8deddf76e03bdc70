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
            torch.save({"state": net.state_dict(), "log": lines, "acc": acc}, cache)
    with torch.no_grad():
        net.patch.weight /= 255.0
    return net.eval(), lines, acc, (xte, yte, digests)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--train-only":
    torch.set_num_threads(1)
    trained_model(sys.argv[2])
