#!/usr/bin/env python3
"""Builds workloads/fmnist-vit-relu and workloads/fmnist-vit-relu-2of4: a small vision
transformer of standard PyTorch modules with a ReLU feed-forward, trained here on
Fashion-MNIST, dense and pruned 2:4 (then fine-tuned), both exported through
`sresim_export.from_torch`.

    python3 tools/build_fmnist_vit_relu.py [--out-dir workloads] [--sresim target/release/sresim]
        [--cache FILE]
    python3 tools/build_fmnist_vit_relu.py --train-only FILE    # trains into the cache FILE only

Training takes about 2 minutes on one idle core (train.log has each epoch's time on the
machine that built the committed bundles, under load).

Data: Debian's dataset-fashion-mnist, loaded as tools/build_fmnist_cnn.py loads it (a
seeded permutation picks TRAIN of the 60,000 training images; the graph input is the first
GRAPH_SAMPLES test images with their labels, the layer traces the first SAMPLES).
Network: 7x7 patches (a conv of stride 7: 16 tokens) of width DIM, a class token and
learned positional embeddings, an `nn.TransformerEncoder` of DEPTH pre-norm
`nn.TransformerEncoderLayer`s (HEADS heads, packed Q/K/V `in_proj`, a feed-forward of width
MLP with ReLU, no dropout), a final LayerNorm and a linear head on the class token.
Training in PyTorch on one CPU thread, seeded, deterministic kernels: AdamW with a cosine
learning rate. Pruning: every Linear weight of the encoder (Q/K/V, the attention output,
both feed-forward layers) keeps the 2 largest |w| of every 4 consecutive inputs of each
output (`sresim_export.prune.n_m`, the exporter's `--prune 2:4`); the patch embedding and
the head stay dense; then FT_EPOCHS of fine-tuning with the zeros held (the masks applied
after every step). Needs torch besides tools/requirements.txt, and a built sresim: the
READMEs' top-1 figures are `sresim accuracy`'s.
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
from build_fmnist_vit import evaluate  # noqa: E402
from sresim_export import prune as prune_mod  # noqa: E402
from sresim_export import ssl_train as st  # noqa: E402
from sresim_export.bundle import write_file  # noqa: E402

SEED = 20261206
TRAIN = 30000
GRAPH_SAMPLES = 2000
CHECK_SAMPLES = 100
SAMPLES = 8
PATCH, DIM, HEADS, DEPTH, MLP = 7, 32, 4, 3, 128
EPOCHS, LR, DECAY, BATCH = 10, 3e-3, 0.05, 128
N, M = 2, 4
FT_EPOCHS, FT_LR = 4, 1e-3
NAMES = ("fmnist-vit-relu", "fmnist-vit-relu-2of4")


class ReluViT(nn.Module):
    """Input: [N, 1, 28, 28] pixels times `input_scale` (1/255 in training, folded into the
    patch embedding for export so that the graph input is raw 0..255 pixels)."""

    def __init__(self, classes=10, size=28):
        super().__init__()
        tokens = (size // PATCH) ** 2
        self.patch = nn.Conv2d(1, DIM, PATCH, stride=PATCH)
        self.cls = nn.Parameter(torch.zeros(1, 1, DIM))
        self.pos = nn.Parameter(torch.randn(1, tokens + 1, DIM) * 0.02)
        layer = nn.TransformerEncoderLayer(DIM, HEADS, MLP, dropout=0.0, activation="relu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, DEPTH, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.ln(self.encoder(x))[:, 0])


def pruned_weights(net):
    """(name, parameter) of every weight pruned N:M: the encoder's Linear weights."""
    out = []
    for i, layer in enumerate(net.encoder.layers):
        for name, p in [("self_attn.in_proj_weight", layer.self_attn.in_proj_weight),
                        ("self_attn.out_proj.weight", layer.self_attn.out_proj.weight),
                        ("linear1.weight", layer.linear1.weight), ("linear2.weight", layer.linear2.weight)]:
            out.append((f"encoder.layers.{i}.{name}", p))
    return out


def train(run, net, x, y, rng, epochs, lr, what, masks=()):
    """AdamW with a cosine learning rate from `lr` to 0 over `epochs`; `masks` (parameter,
    0/1 tensor) are applied after every step, so pruned weights stay exactly 0."""
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=DECAY)
    steps = epochs * math.ceil(len(x) / BATCH)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    loss_fn = nn.CrossEntropyLoss()
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
        accs = " / ".join(f"{evaluate(net, xe, ye):.4f}" for xe, ye in run.evals)
        run.log(f"{what} epoch {epoch + 1}/{epochs}: loss {total / len(x):.4f}, top-1 (torch float32) {accs}, "
                f"{time.time() - t0:.0f} s")


def prune_n_m(net):
    """Prunes `net` N:M in place; returns the masks."""
    masks = []
    with torch.no_grad():
        for _, p in pruned_weights(net):
            w = prune_mod.n_m(p.detach().numpy(), N, M)
            p.copy_(torch.from_numpy(w))
            masks.append((p, torch.from_numpy((w != 0).astype(np.float32))))
    return masks


def trained_models(cache=None):
    """((dense, pruned) models with 1/255 folded into their patch embedding, training log
    lines, (dense, pruned) torch float top-1 on all 10,000 test images, the data); trains,
    or loads `cache` when it exists."""
    xtr, ytr, xte, yte, digests = fm.load()
    dense, pruned = ReluViT(), ReluViT()
    if cache and os.path.exists(cache):
        saved = torch.load(cache)
        dense.load_state_dict(saved["dense"])
        pruned.load_state_dict(saved["pruned"])
        lines, accs = saved["log"], saved["accs"]
    else:
        st.deterministic(SEED)
        dense = ReluViT()
        rng = np.random.default_rng(SEED)
        sel = rng.permutation(len(xtr))[:TRAIN]
        x, y = (xtr[sel] / 255.0).astype(np.float32), ytr[sel]
        xt = (xte / 255.0).astype(np.float32)
        run = st.Run([(xt, yte), (xt[:GRAPH_SAMPLES], yte[:GRAPH_SAMPLES])])
        run.log(f"ReLU ViT {sum(p.numel() for p in dense.parameters())} parameters; top-1 on the 10,000 "
                f"test images / the first {GRAPH_SAMPLES}; torch {torch.__version__}, one thread")
        t0 = time.time()
        train(run, dense, x, y, rng, EPOCHS, LR, "dense")
        run.log(f"dense: trained in {time.time() - t0:.0f} s")
        pruned.load_state_dict(dense.state_dict())
        masks = prune_n_m(pruned)
        kept = sum(int(m.sum()) for _, m in masks)
        total = sum(m.numel() for _, m in masks)
        run.top1(f"pruned {N}:{M} ({total - kept} of {total} encoder weights zero), before fine-tuning", pruned)
        t0 = time.time()
        train(run, pruned, x, y, rng, FT_EPOCHS, FT_LR, f"{N}:{M} fine-tuning", masks)
        run.log(f"{N}:{M}: fine-tuned in {time.time() - t0:.0f} s")
        accs = (evaluate(dense, xt, yte), evaluate(pruned, xt, yte))
        lines = run.lines
        if cache:
            state = {"dense": dense.state_dict(), "pruned": pruned.state_dict(), "log": lines,
                     "accs": accs}
            write_file(cache, lambda f: torch.save(state, f))
    for net in (dense, pruned):
        with torch.no_grad():
            net.patch.weight /= 255.0
        net.eval()
    return (dense, pruned), lines, accs, (xte, yte, digests)


ARCH = (f"{PATCH}x{PATCH} patches of the 28x28 image (a conv of stride {PATCH}: {(28 // PATCH) ** 2} tokens) "
        f"embedded to width {DIM}, a learned class token and positional embedding ({(28 // PATCH) ** 2 + 1} "
        f"tokens); `nn.TransformerEncoder` of {DEPTH} `nn.TransformerEncoderLayer(d_model={DIM}, "
        f"nhead={HEADS}, dim_feedforward={MLP}, dropout=0, activation=\"relu\", batch_first=True, "
        f"norm_first=True)` (pre-norm: LayerNorm, {HEADS}-head self-attention with packed Q/K/V "
        f"projections, residual add, LayerNorm, a feed-forward {DIM}->{MLP}->{DIM} with **ReLU**, "
        f"residual add); a final LayerNorm; a linear head (10 classes) on the class token")


def zero_fraction(a):
    return float(np.mean(np.asarray(a) == 0))


def layer_rows(written, nm):
    """README rows: per layer, its weight shape, weight and input zero fractions and, for
    pruned layers, whether every group of M inputs holds at most N non-zeros."""
    import zipfile

    rows = []
    path = os.path.join(written.path, "tensors.npz")
    with zipfile.ZipFile(path) as z, np.load(path) as t:
        del z
        for e in written.manifest["layers"]:
            w = t[e["weight"]]
            x = t[e["input"]] if e.get("input") else None
            tokens = e.get("tokens", 1) if e["kind"] == "fc" else "-"
            nm_col = ""
            if nm:
                nm_col = "yes" if prune_mod.is_n_m(w, N, M, e.get("groups", 1)) else "no"
            rows.append(f"| {e['name']} | {e['kind']} | {list(w.shape)} | {tokens} | {zero_fraction(w):.2%} | "
                        f"{'' if x is None else f'{zero_fraction(x):.2%}'} |" + (f" {nm_col} |" if nm else ""))
    return rows


def readme(name, written, rows, acc, log_name, dense_name, lines_about, nm):
    m = written.manifest
    head = ("| layer | kind | weight | tokens | weight zeros | input zeros (the 8 traces) |"
            + (f" at most {N} non-zeros in every {M} inputs |" if nm else ""))
    rule = "|---|---|---|---|---|---|" + ("---|" if nm else "")
    sha = "\n".join(f"  - `{k}` sha256 `{v}`" for k, v in DIGESTS.items())
    pruned = f"""
## Pruning
From the trained dense weights (workloads/{dense_name}): every Linear weight of the encoder
(the packed Q/K/V `in_proj`, the attention output projection, both feed-forward layers:
{len(m['layers']) - 2} of the {len(m['layers'])} crossbar layers) pruned {N}:{M} along the input
dimension: of every {M} consecutive inputs of one output (a weight row [out, in]: {M} consecutive
crossbar rows of one column), the {N} of largest |w| kept (`sresim_export.prune.n_m`, what
`--prune {N}:{M}` does at export). The patch embedding and the head stay dense. Then
{FT_EPOCHS} epochs of fine-tuning (AdamW, learning rate {FT_LR} with a cosine decay to 0, weight
decay {DECAY}) with the pruned weights held at 0 (the masks applied after every step). The
bundle is exported without `--prune`: its zeros are the fine-tuned network's.
""" if nm else ""
    return f"""# {name}

A small vision transformer built from standard PyTorch modules (`nn.TransformerEncoderLayer`
with `activation="relu"`), trained here on Fashion-MNIST{", pruned 2:4 and fine-tuned" if nm else ", dense"},
exported with `sresim_export.from_torch` (torch.onnx at opset 17, in memory).
{lines_about}

Rebuild (deterministic on one machine: seeded, one thread, deterministic torch kernels;
{log_name} has each epoch's time): `python3 tools/build_fmnist_vit_relu.py` writes both
workloads/{NAMES[0]} and workloads/{NAMES[1]} (needs `apt-get install dataset-fashion-mnist`,
torch besides tools/requirements.txt, and a built sresim, `--sresim PATH` or
target/release/sresim: the top-1 figures below are measured with it). The training log of
both networks is train.log.

## Where the weights come from
- Data: Debian's `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist), loaded as
  tools/build_fmnist_cnn.py loads it:
{sha}
- Training set: {TRAIN} of the 60,000 training images, picked by a permutation seeded with
  {SEED}; pixels / 255.
- Network ({PARAMS} parameters): {ARCH}.
- Training in PyTorch {torch.__version__} (CPU, one thread): AdamW, batch {BATCH}, learning rate {LR}
  with a cosine decay to 0 over {EPOCHS} epochs, weight decay {DECAY}.
- The graph input is raw pixels 0..255 stored as uint8; the 1/255 of training is folded into
  the patch embedding's weights.
{pruned}
## On the crossbars and off them
The patch embedding is a conv layer (16 output positions). Every projection over the
sequence (the packed Q/K/V projection, the attention output and both feed-forward layers of
each encoder layer) is an fc layer with `tokens` 17: each token is one input vector of the
crossbar. The head reads the class token only. The attention scores (Q K^T) and the
context (softmax x V) multiply two activations: no weight to program, so they are not
crossbar layers (`sresim run` prints them in a `note:`); `sresim accuracy` computes them in
float. The second feed-forward layer of each encoder layer (`linear2`) reads the ReLU's
output: its input zeros below are the activation sparsity of a ReLU feed-forward, measured
on the trained network, not generated.

## Accuracy
Graph input: the first {GRAPH_SAMPLES} of the 10,000 Fashion-MNIST test images, with their labels.

{TRAINED.accuracy_table(name, rows)}
torch's float32 top-1 on all 10,000 test images: {acc:.2%}; onnxruntime's float top-1 on the
graph input (the exporter's): {written.top1:.2%}.

## Layers
Layer traces: the first {SAMPLES} test images (labels {LABELS}), each layer's input captured in
onnxruntime ({len(m["layers"])} layers).

{head}
{rule}
{chr(10).join(layer_rows(written, nm))}
"""


DIGESTS, PARAMS, LABELS, TRAINED = {}, 0, [], None


def main():
    global DIGESTS, PARAMS, LABELS, TRAINED
    from sresim_export import from_torch, trained

    TRAINED = trained
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="build the fmnist-vit-relu and fmnist-vit-relu-2of4 workload bundles")
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
        NAMES[0]: f"The dense network; workloads/{NAMES[1]} is the same network pruned 2:4 and fine-tuned.",
        NAMES[1]: f"The network of workloads/{NAMES[0]}, its encoder's weights pruned 2:4 and fine-tuned.",
    }
    for name, net, acc, nm in zip(NAMES, nets, accs, (False, True)):
        out = os.path.join(args.out_dir, name)
        written = from_torch(net, traces, out, labels=yte[:GRAPH_SAMPLES], graph_inputs=graph_x, name=name)
        print(written, f"float top-1 on the graph input (onnxruntime) {written.top1:.4f}")
        trained.write_text(out, "train.log", "\n".join(log_lines) + "\n")
        rows = trained.accuracy_rows(binary, out, [GRAPH_SAMPLES, CHECK_SAMPLES])
        trained.write_text(out, "README.md", readme(name, written, rows, acc, "train.log", NAMES[0],
                                                    about[name], nm))
    print(f"wrote {', '.join(NAMES)} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--train-only":
        torch.set_num_threads(1)
        trained_models(sys.argv[2])
    else:
        main()
