#!/usr/bin/env python3
"""Export an ONNX model and real inputs as an sresim workload bundle.

    python3 tools/export_onnx.py model.onnx --input a.png --input b.png --out workloads/mynet
    python3 tools/export_onnx.py model.onnx --input batch.npy --prune magnitude --sparsity 0.7 --out DIR

Images are resized to the model's input size (or --size), scaled by --scale, normalized
with --mean/--std per channel, and laid out NCHW (or --layout nhwc). .npy files are fed
as they are. See docs/exporting.md.

The bundle also carries the network graph (docs/exporting.md, "The network graph"): the
inputs as the graph input, the layers' input ranges calibrated on them, and --labels when
given; a model whose graph cannot be written (an op outside the list there) gets a line
saying why and a bundle of layer traces only, or, with --labels (which only the graph can
use), an error and nothing written. --no-graph leaves the graph out.

The bundle is written only if sresim would open it: `sresim check` reads it (when a
binary is found: $SRESIM, PATH, or this repository's build), else the schema mirror of
sresim_export/schema.py checks its manifest. With --labels and --prune, the float top-1
before and after pruning is printed.

From Python, `sresim_export.from_torch(module, inputs, out, ...)` exports a torch module
through torch.onnx in memory and writes its bundle through the same code
(sresim_export/pipeline.py).
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from sresim_export.pipeline import check_labels, export_bundle  # noqa: E402
from sresim_export.capture import data_input, describe_input, dims, graph_inputs  # noqa: E402
from sresim_export.bundle import check_file_destination, check_out_dir  # noqa: E402
from sresim_export.files import load_npy, load_onnx  # noqa: E402
from sresim_export.inputs import as_float32, as_integers, load_inputs  # noqa: E402
from sresim_export.cli import Parser, positive_int, run  # noqa: E402


def _labels(text, n):
    """--labels: n comma-separated class indices, or None."""
    if not text:
        return None
    try:
        labels = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"--labels {text}: expected comma-separated integers") from None
    return check_labels(labels, n, "--labels")


def _load_feeds(specs, model):
    """--feed NAME=FILE.npy: {input name: array with its batch axis, in the input's dtype}."""
    from onnx import helper

    feeds = {}
    by_name = {i.name: i for i in graph_inputs(model)}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise ValueError(f"--feed {spec}: expected NAME=FILE.npy")
        if name not in by_name:
            raise ValueError(f"--feed {spec}: the model has no input {name} (inputs: "
                             f"{'; '.join(describe_input(i) for i in by_name.values())})")
        arr = load_npy(path)
        want = dims(by_name[name])
        if arr.ndim == len(want) - 1:
            arr = arr[None]
        if arr.ndim != len(want) or any(w is not None and w != g for w, g in zip(want, arr.shape)):
            raise ValueError(f"--feed {spec}: shape {list(arr.shape)} does not fit input "
                             f"{describe_input(by_name[name])}")
        elem = by_name[name].type.tensor_type.elem_type
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        if dtype == np.float32 and arr.dtype.kind == "f":
            arr = as_float32(arr, path)
        if np.dtype(dtype).kind in "iu" and arr.dtype.kind in "iu":
            arr = as_integers(arr, dtype, path)
        feeds[name] = arr.astype(dtype)
    return feeds


# The most pixels an image is resized to (8192 x 8192): --size is checked against the
# model's H x W and this bound before any image is resized, as a resize to 100000 x 100000
# (40 GB of float32 pixels) exhausted memory before the sample's shape was compared
# (docs/errors.md, "The exporter's refusals are one line").
MAX_PIXELS = 8192 * 8192


def _image_size(args, inp, sample_shape):
    """The H x W images are resized to: --size, else the model's static size. A dynamic
    size with image inputs is an error that says to pass --size. A --size the model's
    static H or W is not, or one beyond MAX_PIXELS, is refused naming the flag."""
    hw = sample_shape[1:3] if args.layout == "nchw" else sample_shape[0:2]
    if args.size:
        h, w = args.size
        if len(sample_shape) == 3 and any(m is not None and m != g for m, g in zip(hw, args.size)):
            takes = " x ".join("any" if m is None else str(m) for m in hw)
            raise ValueError(f"--size {h} {w}: the model input {describe_input(inp)} takes "
                             f"{takes} images (--layout {args.layout})")
        if h * w > MAX_PIXELS:
            raise ValueError(f"--size {h} {w}: {h * w} pixels, more than an image is resized "
                             f"to ({MAX_PIXELS} = 8192 x 8192)")
        return tuple(args.size)
    if len(sample_shape) == 3 and None not in hw:
        return tuple(hw)
    images = [p for p in args.input if os.path.splitext(p)[1].lower() != ".npy"]
    if images and len(sample_shape) == 3:
        raise ValueError(f"{args.model}: input {describe_input(inp)} has a dynamic height/width: "
                         f"pass --size H W to resize the images (e.g. the size the model was "
                         f"trained at), or give .npy inputs of the size wanted")
    return None


def _finite_float(text):
    """A float flag's value: NaN and infinity are refused here, naming the flag (argparse
    adds it), not later as a JSON error in the provenance."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text[:80]}' is not a number") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{text[:80]} is not a finite number")
    return x


FLOAT32_MAX = float(np.finfo(np.float32).max)


def _float32(text):
    """A pixel flag's value (--scale, --mean, --std): finite, and within the float32 range
    the pixels are computed in (a --scale of 1e300 was an infinity, with numpy's warning)."""
    x = _finite_float(text)
    if abs(x) > FLOAT32_MAX:
        raise argparse.ArgumentTypeError(f"{text[:80]} is beyond the float32 range (|x| up to "
                                         f"{FLOAT32_MAX:.7g})")
    return x


def _std(text):
    """--std's value: a float32 the pixels can be divided by (1e-300 is 0 as a float32)."""
    x = _float32(text)
    if np.float32(x) == 0:
        said = ": a std is not 0" if x == 0 else " is 0 as a float32"
        raise argparse.ArgumentTypeError(f"{text[:80]}{said} (the pixels are divided by it)")
    return x


def main(argv=None):
    ap = Parser(description=__doc__.split("\n")[1])
    ap.add_argument("model", help="ONNX model file")
    ap.add_argument("--input", action="append", required=True, help="image or .npy file (repeatable)")
    ap.add_argument("--out", required=True, help="bundle directory to write")
    ap.add_argument("--name", help="network name (default: model file name)")
    ap.add_argument("--size", type=positive_int, nargs=2, metavar=("H", "W"), help="resize images to H W")
    ap.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    ap.add_argument("--grayscale", action="store_true", help="decode images as one channel")
    ap.add_argument("--scale", type=_float32, default=1 / 255, help="pixel scale (default 1/255)")
    ap.add_argument("--mean", type=_float32, nargs="+", help="per-channel mean after scaling")
    ap.add_argument("--std", type=_std, nargs="+", help="per-channel std after scaling")
    ap.add_argument("--prune", default="none",
                    help="none, magnitude, ssl, or N:M semi-structured along the inputs (2:4, 4:8)")
    ap.add_argument("--sparsity", type=_finite_float, default=0.0,
                    help="per-layer target sparsity (magnitude, ssl; N:M sets 1 - N/M)")
    ap.add_argument("--prune-exclude", default="", help="comma-separated layers left dense: ONNX node names or the bundle layer names run prints")
    ap.add_argument("--prune-keep-depthwise", action="store_true", help="do not prune depthwise convs")
    ap.add_argument("--no-fold-bn", action="store_true", help="keep BatchNormalization separate")
    ap.add_argument("--save-model", help="also save the folded/pruned ONNX model that was run")
    ap.add_argument("--feed", action="append", default=[], metavar="NAME=FILE.npy",
                    help="a fixed array for another model input, fed with every sample (repeatable)")
    ap.add_argument("--labels", help="comma-separated class index of each input, in order (for top-1)")
    ap.add_argument("--no-graph", action="store_true", help="do not write the network graph")
    args = ap.parse_args(argv)

    def export():
        # the destinations first: a refusal costs no export
        check_out_dir(args.out, "--out")
        if args.save_model:
            check_file_destination(args.save_model, "--save-model")
        model = load_onnx(args.model)
        feeds = _load_feeds(args.feed, model)
        inp = data_input(model, feeds, where=args.model)
        sample_shape = dims(inp)[1:]
        size = _image_size(args, inp, sample_shape)
        batch = load_inputs(args.input, sample_shape, size=size, grayscale=args.grayscale,
                            scale=args.scale, mean=args.mean, std=args.std, layout=args.layout)
        desc = {"files": [os.path.basename(p) for p in args.input],
                "input": inp.name,
                "preprocess": {"size": list(size) if size else None, "layout": args.layout,
                               "grayscale": args.grayscale, "scale": args.scale,
                               "mean": args.mean, "std": args.std}}
        if args.feed:
            desc["fixed_inputs"] = {f.partition("=")[0]: os.path.basename(f.partition("=")[2])
                                    for f in args.feed}
        print(export_bundle(
            args.model, batch, args.out, args.name or os.path.splitext(os.path.basename(args.model))[0],
            desc, labels=_labels(args.labels, len(batch)),
            prune=None if args.prune == "none" else args.prune, sparsity=args.sparsity,
            prune_exclude={s for s in args.prune_exclude.split(",") if s},
            prune_depthwise=not args.prune_keep_depthwise, fold_bn=not args.no_fold_bn,
            graph=not args.no_graph, feeds=feeds, save_model=args.save_model))

    return run(export, where=args.out)


if __name__ == "__main__":
    sys.exit(main())
