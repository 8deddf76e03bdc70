#!/usr/bin/env python3
"""Export an ONNX model and real inputs as an sresim workload bundle.

    python3 tools/export_onnx.py model.onnx --input a.png --input b.png --out workloads/mynet
    python3 tools/export_onnx.py model.onnx --input batch.npy --prune magnitude --sparsity 0.7 --out DIR

Images are resized to the model's input size (or --size), scaled by --scale, normalized
with --mean/--std per channel, and laid out NCHW (or --layout nhwc). .npy files are fed
as they are. See docs/exporting.md.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import onnx  # noqa: E402

from sresim_export import describe, export, write_bundle  # noqa: E402
from sresim_export.inputs import load_inputs  # noqa: E402


def _static_dims(model):
    inits = {t.name for t in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in inits]
    dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
            for d in inp.type.tensor_type.shape.dim]
    return dims[1:]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("model", help="ONNX model file")
    ap.add_argument("--input", action="append", required=True, help="image or .npy file (repeatable)")
    ap.add_argument("--out", required=True, help="bundle directory to write")
    ap.add_argument("--name", help="network name (default: model file name)")
    ap.add_argument("--size", type=int, nargs=2, metavar=("H", "W"), help="resize images to H W")
    ap.add_argument("--layout", choices=["nchw", "nhwc"], default="nchw")
    ap.add_argument("--grayscale", action="store_true", help="decode images as one channel")
    ap.add_argument("--scale", type=float, default=1 / 255, help="pixel scale (default 1/255)")
    ap.add_argument("--mean", type=float, nargs="+", help="per-channel mean after scaling")
    ap.add_argument("--std", type=float, nargs="+", help="per-channel std after scaling")
    ap.add_argument("--prune", choices=["none", "magnitude", "ssl"], default="none")
    ap.add_argument("--sparsity", type=float, default=0.0, help="per-layer target sparsity")
    ap.add_argument("--prune-exclude", default="", help="comma-separated layer names left dense")
    ap.add_argument("--prune-keep-depthwise", action="store_true", help="do not prune depthwise convs")
    ap.add_argument("--no-fold-bn", action="store_true", help="keep BatchNormalization separate")
    ap.add_argument("--save-model", help="also save the folded/pruned ONNX model that was run")
    args = ap.parse_args(argv)

    try:
        model = onnx.load(args.model)
        sample_shape = _static_dims(model)
        if args.layout == "nchw":
            size = args.size or (tuple(sample_shape[1:3]) if None not in sample_shape[1:3] else None)
        else:
            size = args.size or (tuple(sample_shape[0:2]) if None not in sample_shape[0:2] else None)
        batch = load_inputs(args.input, sample_shape, size=size, grayscale=args.grayscale,
                            scale=args.scale, mean=args.mean, std=args.std, layout=args.layout)
        method = None if args.prune == "none" else args.prune
        if method and not 0 < args.sparsity < 1:
            raise ValueError("--sparsity must be in (0, 1) when pruning")
        desc = {"files": [os.path.basename(p) for p in args.input],
                "preprocess": {"size": list(size) if size else None, "layout": args.layout,
                               "grayscale": args.grayscale, "scale": args.scale,
                               "mean": args.mean, "std": args.std}}
        exclude = {s for s in args.prune_exclude.split(",") if s}
        res = export(args.model, batch, desc, method, args.sparsity, exclude,
                     fold_bn=not args.no_fold_bn, log=lambda m: print(m, file=sys.stderr),
                     prune_depthwise=not args.prune_keep_depthwise)
        name = args.name or os.path.splitext(os.path.basename(args.model))[0]
        manifest = write_bundle(args.out, name, describe(res.provenance, name), res.layers, res.provenance)
        if args.save_model:
            onnx.save(res.model, args.save_model)
    except Exception as e:  # one line for the user, no traceback
        print(f"error: {e}".splitlines()[0], file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {len(manifest['layers'])} layers, {manifest['samples']} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
