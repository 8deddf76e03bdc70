"""One export, from a loaded model and its input batch to a checked bundle on disk: what
tools/export_onnx.py does after reading its arguments, and what `from_torch` does after
torch.onnx has written the model in memory (torch_api.py). Both go through
`export_bundle`, so a model exported either way gives the same bundle.

Steps: export (export.py: fold, find layers, prune, capture), the float top-1 that pruning
cost (with labels), the network graph (unless refused: then layer traces only, with a line
saying why; with labels, which only the graph can use, an error and nothing written), then publish (schema.publish_bundle:
staging directory, `sresim check` or the schema mirror, then the files replace `out`).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from . import prune as prune_mod
from .bundle import check_file_destination, check_out_dir, stage_file, write_bundle
from .export import describe, export, network, pruning_cost, top1


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _stderr(message):
    print(message, file=sys.stderr)


class Written:
    """What export_bundle wrote: `path`, `name`, `layers` and `samples` (counts), `top1`
    (the float model's top-1 on the inputs, a fraction, when labels were given and the first
    output is [N, classes]; else None), `top1_before_pruning` (likewise, when pruned),
    `checked` (`sresim check`'s `ok: ...` line, None when only the schema mirror checked)
    and the `manifest` written."""

    def __init__(self, path, manifest, checked, top1=None, top1_before_pruning=None):
        self.path = path
        self.manifest = manifest
        self.name = manifest["name"]
        self.layers = len(manifest["layers"])
        self.samples = manifest["samples"]
        self.checked = checked
        self.top1 = top1
        self.top1_before_pruning = top1_before_pruning

    def __str__(self):
        return f"wrote {self.path}: {plural(self.layers, 'layer')}, {plural(self.samples, 'sample')}"

    def __repr__(self):
        return (f"Written(path={self.path!r}, layers={self.layers}, samples={self.samples}, "
                f"top1={self.top1!r})")


def check_labels(labels, n, what="labels"):
    """`labels` as an int64 array of n class indices (None stays None)."""
    if labels is None:
        return None
    arr = np.asarray(labels)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{what}: expected a 1-D array of integer class indices, got "
                         f"{arr.dtype} {list(arr.shape)}")
    if len(arr) != n:
        raise ValueError(f"{what}: {len(arr)} labels for {n} inputs")
    if arr.size and arr.min() < 0:
        i = int(np.argmax(arr < 0))
        raise ValueError(f"{what}: label {i} is {int(arr[i])}: a class index is 0 or more")
    return arr.astype(np.int64)


def export_bundle(model, batch, out, name, input_desc, *, labels=None, prune=None,
                  sparsity=0.0, prune_exclude=(), prune_depthwise=True, fold_bn=True,
                  graph=True, feeds=None, model_info=None, exporter="tools/export_onnx.py",
                  save_model=None, save_model_flag="--save-model", graph_batch=None, log=_stderr):
    """Exports `model` (an ONNX file, or its bytes with `model_info`, see export.load_model)
    run on `batch` ([N, ...] float32) as the bundle `out` named `name`; returns Written.
    `labels`: N class indices or None; `prune`: None, "magnitude" or "ssl" to `sparsity`
    per layer (in (0, 1)), or "N:M" (e.g. "2:4", sparsity left 0: it is 1 - N/M); `graph=False` writes the layer traces only; `save_model` saves
    the (folded, pruned) ONNX model that was run (through bundle.stage_file; `save_model_flag`
    names it in messages). `graph_batch` ([M, ...], float or uint8
    pixels, stored as given) is the graph input instead of `batch`, which then gives the
    layer traces only; `labels` are then M labels of it, `top1` is measured on it and no
    pruning cost is printed. Notes go to `log` (stderr by default).
    Raises ValueError (one line) on anything refused; `out` is then left as it was;
    numpy's floating-point warnings are not printed (what they warn of is refused by the
    checks of values.py, naming the node)."""
    with np.errstate(all="ignore"):
        return _export_bundle(model, batch, out, name, input_desc, labels=labels, prune=prune,
                              sparsity=sparsity, prune_exclude=prune_exclude,
                              prune_depthwise=prune_depthwise, fold_bn=fold_bn, graph=graph,
                              feeds=feeds, model_info=model_info, exporter=exporter,
                              save_model=save_model, save_model_flag=save_model_flag,
                              graph_batch=graph_batch, log=log)


def _export_bundle(model, batch, out, name, input_desc, *, labels, prune, sparsity,
                   prune_exclude, prune_depthwise, fold_bn, graph, feeds, model_info, exporter,
                   save_model, save_model_flag, graph_batch, log):
    out = os.fspath(out)
    # Destinations are checked before anything runs: a refusal costs no export.
    check_out_dir(out)
    if save_model:
        check_file_destination(save_model, save_model_flag)
    nm = prune_mod.parse_nm(prune)
    if prune not in (None, "magnitude", "ssl") and nm is None:
        raise ValueError(f"prune {prune!r}: expected none, magnitude, ssl or N:M such as 2:4")
    if nm:
        if sparsity:
            raise ValueError(f"sparsity {sparsity}: not used with prune {prune}, whose sparsity is "
                             f"1 - N/M = {1 - nm[0] / nm[1]:g}; give one of them")
    elif prune and not 0 < sparsity < 1:
        raise ValueError(f"sparsity must be in (0, 1) when pruning, got {sparsity}")
    labels = check_labels(labels, len(batch) if graph_batch is None else len(graph_batch))
    res = export(model, batch, input_desc, prune, sparsity, set(prune_exclude), fold_bn=fold_bn,
                 log=log, prune_depthwise=prune_depthwise, feeds=feeds, model_info=model_info,
                 exporter=exporter)
    cost = pruning_cost(res, labels) if graph_batch is None else None
    if cost is not None:
        what = f"{prune} along the inputs" if nm else f"{prune}, sparsity {sparsity}"
        log(f"pruning ({what}, no fine-tuning): float top-1 on the "
            f"{plural(len(labels), 'labelled input')} {100 * cost[0]:.1f}% before, "
            f"{100 * cost[1]:.1f}% after")
    net = None
    if graph:
        try:
            if graph_batch is None:
                net = network(res, batch, labels)
            else:
                g = np.asarray(graph_batch)
                net = network(res, g if g.dtype.kind in "iu" and g.dtype != np.uint8 else g.astype(np.float32),
                              labels)
                net["arrays"][net["graph_input"]] = np.ascontiguousarray(graph_batch)
        except ValueError as e:
            if labels is not None:
                # labels label the graph's samples: a bundle without its graph could not
                # use them, so nothing is written rather than a bundle `accuracy` refuses
                raise ValueError(f"{e}; the labels need the network graph: without --labels "
                                 f"(from_torch: labels=None) the layer traces are written alone") from None
            log(f"no network graph written (layer traces only): {e}")
    # The model is written to its temporary first, so that a write that fails (a full disk,
    # `ulimit -f`) leaves the bundle as it was too; it is renamed after the bundle.
    staged = (stage_file(save_model, lambda f: f.write(res.model.SerializeToString()),
                         save_model_flag)
              if save_model else None)
    try:
        manifest, checked = _publish(out, name, res, net)
    except BaseException:
        if staged:
            staged.discard()
        raise
    if staged:
        staged.commit()
    if checked:
        log(f"sresim check: {checked}")
    else:
        log("note: no sresim binary found (set SRESIM, or build it): the bundle was checked "
            "against the bundle schema only")
    outputs = res.outputs if net is None or graph_batch is None else {"": net["arrays"]["graph.reference"]}
    return Written(out, manifest, checked,
                   top1=None if labels is None else top1(outputs, labels),
                   top1_before_pruning=cost[0] if cost else None)


def _publish(out, name, res, net):
    from .schema import publish_bundle

    return publish_bundle(out, lambda d: write_bundle(
        d, name, describe(res.provenance, name), res.layers, res.provenance, network=net))
