"""What the builders of trained workloads share (tools/build_fmnist_cnn.py,
tools/build_lenet5_mnist_ssl.py): exporting a trained chain network with raw 8-bit pixels
as its graph input, measuring the bundle's top-1 with `sresim accuracy`, and the tables of
the bundle README. No torch here: ssl_train.py trains, this module only exports.

The graph input is stored as uint8 pixels 0..255 (docs/interfaces.md allows integer
arrays), a quarter of float32's size; the network was trained on pixels / 255, and that
1/255 is folded into the first layer's weights (ssl_train.to_onnx), so the float network
and its per-layer quantization (a max-scaled range, docs/model.md section 2) are the same.
"""

from __future__ import annotations

import csv
import os
import subprocess
import tempfile

import numpy as np

from .bundle import write_text_file
from .export import export, network

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def export_chain(model_path, traces, graph_x, labels, desc):
    """Exports the ONNX chain at `model_path` with layer traces of `traces` (uint8 images
    [N, 1, H, W]) and the graph input `graph_x` (uint8 [M, 1, H, W]) with `labels`.
    Returns (ExportResult, network dict) with the graph input kept as uint8."""
    if graph_x.dtype != np.uint8 or traces.dtype != np.uint8:
        raise ValueError("export_chain takes uint8 pixels")
    res = export(model_path, traces.astype(np.float32), desc)
    net = network(res, graph_x.astype(np.float32), labels)
    net["arrays"][net["graph_input"]] = np.ascontiguousarray(graph_x)
    return res, net


def sresim_binary(path=None):
    """The sresim binary to measure with: `path`, else target/release/sresim; an error
    saying how to build it when absent."""
    binary = path or os.path.join(REPO, "target", "release", "sresim")
    if not os.path.exists(binary):
        raise SystemExit(f"error: {binary}: no sresim binary; build it first (cargo build --release) "
                         f"or pass --sresim PATH: the README's top-1 figures are measured with it")
    return binary


def accuracy(binary, bundle, samples):
    """(float top-1, quantized top-1) of `sresim accuracy --modes none` on the first
    `samples` graph-input samples of `bundle`, as accuracy.csv's quantized TOTAL row says."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "acc")
        subprocess.run([binary, "accuracy", "--workload", bundle, "--samples", str(samples),
                        "--modes", "none", "--out", out, "-q"], check=True)
        with open(os.path.join(out, "accuracy.csv")) as f:
            row = next(r for r in csv.DictReader(f) if r["layer"] == "TOTAL" and r["mode"] == "quantized")
    return float(row["top1_float"]), float(row["top1"])


def accuracy_rows(binary, bundle, sizes):
    """README table rows of `accuracy` for each sample count of `sizes` (the first row is
    the whole graph input, the others the figures tests/sresim/trained_workloads.rs checks)."""
    rows = []
    for i, n in enumerate(sizes):
        fl, q = accuracy(binary, bundle, n)
        what = "all graph-input images" if i == 0 else f"first {n} (checked by tests/sresim/trained_workloads.rs)"
        rows.append(f"| {what} | {n} | {fl:.2%} | {q:.2%} |")
    return rows


def structure_rows(res):
    """README table rows: per layer, its shape, weight sparsity and the SSL groups
    (filters, channels, filter shapes; fc rows and columns) that are entirely zero."""
    rows = []
    for entry, tensors in res.layers:
        w = tensors[entry["weight"]] != 0
        zero = f"{1 - w.mean():.2%}"
        if w.ndim == 4:
            groups = (f"filters {int((~w.any(axis=(1, 2, 3))).sum())}/{w.shape[0]}, "
                      f"channels {int((~w.any(axis=(0, 2, 3))).sum())}/{w.shape[1]}, "
                      f"shapes {int((~w.any(axis=0)).sum())}/{int(np.prod(w.shape[1:]))}")
        else:
            groups = (f"rows {int((~w.any(axis=1)).sum())}/{w.shape[0]}, "
                      f"columns {int((~w.any(axis=0)).sum())}/{w.shape[1]}")
        rows.append(f"| {entry['name']} | {entry['kind']} | {list(w.shape)} | {zero} | {groups} |")
    zeros = sum(int((t[e["weight"]] == 0).sum()) for e, t in res.layers)
    size = sum(t[e["weight"]].size for e, t in res.layers)
    rows.append(f"| all | | {size} weights | {zeros / size:.2%} | |")
    return rows


def write(out, name, spec, params, traces, graph_x, labels, desc, source, provenance, log_lines, binary,
          check_samples):
    """Exports the chain `spec` with `params` (ssl_train.numpy_params, trained on pixels /
    255) as bundle `name` in `out`, with its train.log; returns (ExportResult, README
    accuracy rows measured by `sresim accuracy` on the whole graph input and on its first
    `check_samples`)."""
    from . import write_bundle
    from .ssl_train import to_onnx

    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, f"{name}.onnx")
        to_onnx(spec, params, list(graph_x.shape[1:]), model_path, input_scale=1 / 255)
        res, net = export_chain(model_path, traces, graph_x, labels, desc)
    res.provenance.update(provenance)
    write_bundle(out, name, source, res.layers, res.provenance, network=net)
    write_text(out, "train.log", "\n".join(log_lines) + "\n")
    return res, accuracy_rows(binary, out, [len(graph_x), check_samples])


def layer_macs(entry, weight):
    """Multiply-accumulates of one sample through the layer `entry` (a manifest layer)
    with `weight`: a conv's output positions times its weight's size, an fc's weight size
    times its tokens."""
    if entry["kind"] != "conv":
        return int(weight.size) * int(entry.get("tokens", 1))
    pos = 1
    for i, size in enumerate(entry["input_shape"][1:]):
        pad, dil, k, st = (entry.get(key, [d, d])[i] for key, d in
                           (("padding", 0), ("dilation", 1), ("kernel", 1), ("stride", 1)))
        pos *= (size + 2 * pad - dil * (k - 1) - 1) // st + 1
    return pos * int(weight.size)


def mac_rows(manifest, tensors):
    """README table rows: per layer, its weight shape, weight zero fraction and
    multiply-accumulates a sample; then the totals. Returns (rows, total MACs)."""
    rows, total_w, total_z, total_m = [], 0, 0, 0
    for e in manifest["layers"]:
        w = tensors[e["weight"]]
        m = layer_macs(e, w)
        zeros = int((w == 0).sum())
        total_w, total_z, total_m = total_w + w.size, total_z + zeros, total_m + m
        rows.append(f"| {e['name']} | {e['kind']} | {list(w.shape)} | {zeros / w.size:.2%} | {m} |")
    rows.append(f"| all | | {total_w} weights | {total_z / total_w:.2%} | {total_m} |")
    return rows, total_m


def ssl_section(h, accs, n_graph):
    """The README section describing SSL with the hyper-parameters `h` (a dict: epochs, lr,
    lasso, threshold, ft_epochs, ft_lr, ft_lr_end, decay; optional lasso_mult, the per-layer
    factors) and torch's top-1 at each step."""
    rows = "\n".join(f"| {k.replace('_', ' ')} | {v[0]:.2%} | {v[1]:.2%} |" for k, v in accs.items())
    mult = h.get("lasso_mult")
    per_layer = ("" if not mult else "\n   each layer's groups scaled by its factor (" +
                 ", ".join(f"{k} x{v}" for k, v in mult.items()) + "; the others x1);")
    return f"""
## Structured sparsity learning
From the dense weights (tools/sresim_export/ssl_train.py; Wen et al., NIPS 2016):
1. {h['epochs']} epochs of SGD (momentum 0.9, lr {h['lr']}, no weight decay) on the cross-entropy plus
   {h['lasso']} x the group lasso: every conv weight's filters W[n,:,:,:], channels W[:,c,:,:] and filter
   shapes W[:,c,r,s] (the crossbar's unrolled rows), every fc weight's rows and columns, each
   group's L2 norm weighted by sqrt(group size);{per_layer}
2. every group whose RMS is below {h['threshold']} x its layer's weight RMS set to zero (the network's
   input channel and the class outputs are kept); a removed filter takes its bias and the next
   layer's channel along (and a channel nothing reads, its filter);
3. {h['ft_epochs']} epochs of fine-tuning (lr {h['ft_lr']}->{h['ft_lr_end']}, weight decay {h['decay']}) with the zeros held.

| torch float32 top-1 | whole test set | first {n_graph} (the graph input) |
|---|---|---|
{rows}
"""


def accuracy_table(name, rows):
    """The README's accuracy table and the command that measured it."""
    return f"""| `sresim accuracy` | samples | float top-1 | 16-bit quantized top-1 |
|---|---|---|---|
{chr(10).join(rows)}

Measured with `target/release/sresim accuracy --workload workloads/{name} --samples N --modes none`
(the default config: 16-bit weights and inputs); `--modes dense` on the default, ideal device
gives the quantized figure (the datapath is exact)."""


def layers_table(res):
    return f"""Zero groups: filters (output channels), channels (input channels) and filter shapes (one
(c, r, s) across all filters: an unrolled crossbar row); fc rows and columns.

| layer | kind | weight | weight sparsity | zero groups |
|---|---|---|---|---|
{chr(10).join(structure_rows(res))}"""


def write_text(out, name, text):
    """A text file of a bundle directory (README.md, train.log), through the one writer."""
    write_text_file(os.path.join(out, name), text)


