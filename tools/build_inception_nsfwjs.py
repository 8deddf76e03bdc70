#!/usr/bin/env python3
"""Builds inceptionv3-nsfwjs, a bundle of a real CNN of over 1 GMAC per image (not
committed: its float weights alone are 95 MB): the InceptionV3 image classifier shipped in
the npm package nsfwjs, with a network graph whose input is many views of real photos.

    python3 tools/build_inception_nsfwjs.py --out /tmp/inceptionv3-nsfwjs --save-onnx /tmp/inceptionv3.onnx
    python3 tools/build_inception_nsfwjs.py --size 299 --samples 100 --out DIR   # nsfwjs's own size

Steps: `npm pack nsfwjs@VERSION` (as tools/build_mobilenetv2_nsfwjs.py, model
`dist/models/inception_v3`: Keras 2.2.4 topology, uint8-quantized weights dequantized as
tfjs does); the Keras graph becomes ONNX (tools/sresim_export/tfjs_keras.py: 94 convs with
BatchNorm folded, 15 channel concatenations, 'same' 3x3 average pools, a 256-128-5 dense
head) at --size x --size; the common exporter captures the layer inputs of the first photo
and writes the network graph over --samples views, labelled Neutral (class 2): both photos
are ordinary scenes. nsfwjs runs this model at 299x299 (5.7 GMAC per image); the default
160x160 (1.28 GMAC) keeps a thousand-sample accuracy run within minutes on a small machine.
The head's AveragePooling2D(8, 8) averages the whole 8x8 map of a 299x299 input; at another
size its window is set to the whole final map, so it stays the global average.

Views: view 0 is china.jpg, view 1 flower.jpg, whole (scikit-learn's bundled photos); the
others are square crops of either photo (side 40% to 100% of the photo's height, at a
random position, mirrored at random; numpy seed 0), each preprocessed as nsfwjs does:
RGB / 255, bilinear resize with align_corners to size x size.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from build_mobilenetv2_nsfwjs import CLASSES, VERSION, fetch_model, resize_bilinear_align_corners, top  # noqa: E402
from sresim_export import export, write_bundle  # noqa: E402
from sresim_export.bundle import write_onnx, write_text_file  # noqa: E402
from sresim_export.export import network  # noqa: E402
from sresim_export.tfjs_keras import to_onnx  # noqa: E402

NATIVE_SIZE = 299
DEFAULT_SIZE = 160
HEAD = "average_pooling2d_10"
NEUTRAL = CLASSES.index("Neutral")


def final_map(size):
    """Side of InceptionV3's last feature map for a size x size input: valid 3x3 convs
    (stride 2, 1, then 1 after the 1x1) and five stride-2 reductions (two max pools, the
    grid reductions of mixed3 and mixed8, and the first conv); 'same' convs keep the size."""
    n = (size - 3) // 2 + 1       # conv2d_1, 3x3 stride 2
    n -= 2                        # conv2d_2, 3x3
    n = (n - 3) // 2 + 1          # max_pooling2d_1
    n -= 2                        # conv2d_5, 3x3 (after the 1x1 conv2d_4)
    for _ in range(3):            # max_pooling2d_2, mixed3, mixed8
        n = (n - 3) // 2 + 1
    return n


def at_size(topology, size):
    """The Keras topology with a size x size input and the head's window the whole final map."""
    topology = copy.deepcopy(topology)
    heads = 0
    for layer in topology["model_config"]["config"]["layers"]:
        c = layer["config"]
        if layer["class_name"] == "InputLayer":
            c["batch_input_shape"] = [None, size, size, c["batch_input_shape"][3]]
        elif layer["name"] == HEAD:
            if c["pool_size"] != [final_map(NATIVE_SIZE)] * 2 or c["padding"] != "valid":
                raise ValueError(f"{HEAD}: expected the 8x8 global average pooling head")
            c["pool_size"] = c["strides"] = [final_map(size)] * 2
            heads += 1
    if heads != 1:
        raise ValueError(f"expected one {HEAD}, found {heads}")
    return topology


def views(count, size, seed=0):
    """[count, 3, size, size] float32: the two photos whole, then random square crops."""
    from sklearn.datasets import load_sample_image

    photos = [load_sample_image(f"{n}.jpg").astype(np.float64) / 255.0 for n in ("china", "flower")]
    rng = np.random.default_rng(seed)
    out = np.empty((count, 3, size, size), np.float32)
    for i in range(count):
        img = photos[i % 2]
        if i >= 2:
            h, w = img.shape[:2]
            side = int(rng.integers(int(0.4 * h), h + 1))
            y, x = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
            img = img[y:y + side, x:x + side]
            if rng.integers(2):
                img = img[:, ::-1]
        out[i] = resize_bilinear_align_corners(img, (size, size)).transpose(2, 0, 1)
    return out


def macs(layers):
    """Multiply-accumulates of one image over the exported crossbar layers."""
    total = 0
    for entry, t in layers:
        w = t[entry["weight"]]
        if entry["kind"] == "fc":
            total += w.size
        else:
            x = t[entry["input"]]
            (r, s), (sh, sw), (ph, pw) = entry["kernel"], entry["stride"], entry["padding"]
            ho = (x.shape[2] + 2 * ph - r) // sh + 1
            wo = (x.shape[3] + 2 * pw - s) // sw + 1
            total += w.size * ho * wo
    return total


def main():
    ap = argparse.ArgumentParser(description="build the inceptionv3-nsfwjs workload bundle")
    ap.add_argument("--out", required=True, help="bundle directory (kept out of git)")
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE,
                    help=f"input height and width (default {DEFAULT_SIZE}; nsfwjs uses {NATIVE_SIZE})")
    ap.add_argument("--samples", type=int, default=1000, help="views in the network graph's input")
    ap.add_argument("--save-onnx", help="also save the ONNX model the bundle comes from (before folding), "
                                        "for tools/float_reference.py --onnx")
    args = ap.parse_args()
    if args.size < 75:
        raise SystemExit(f"error: --size {args.size}: InceptionV3 needs at least 75x75")
    if args.samples < 2:
        raise SystemExit(f"error: --samples {args.samples}: at least the two whole photos")
    x = views(args.samples, args.size)
    with tempfile.TemporaryDirectory() as tmp:
        shipped, weights, pkg = fetch_model(tmp, "inception_v3")
        path = os.path.join(tmp, "inceptionv3_nsfwjs.onnx")
        model = to_onnx(at_size(shipped, args.size), weights)
        write_onnx(path, model)
        if args.save_onnx:
            write_onnx(args.save_onnx, model, "--save-onnx")
        desc = {"files": ["china.jpg"],
                "origin": "scikit-learn sample images (sklearn.datasets.load_sample_image)",
                "preprocess": f"RGB / 255, bilinear resize to {args.size}x{args.size} with align_corners "
                              f"(as nsfwjs, which uses {NATIVE_SIZE}x{NATIVE_SIZE})"}
        res = export(path, x[:1], desc)
        net = network(res, x, [NEUTRAL] * len(x))
    probs = net["arrays"]["graph.reference"]
    top1 = float(np.mean(probs.argmax(1) == NEUTRAL))
    name = "inceptionv3-nsfwjs"
    builder = "tools/build_inception_nsfwjs.py " + " ".join(sys.argv[1:])
    res.provenance.update({"package": pkg, "input_size": [args.size, args.size], "builder": builder,
                           "graph_views": {"count": len(x), "seed": 0, "top1_neutral": round(top1, 4)},
                           "macs_per_image": macs(res.layers)})
    source = (f"InceptionV3 of npm nsfwjs@{VERSION} (uint8 weights dequantized, BatchNorm folded) at "
              f"{args.size}x{args.size}; graph input: {len(x)} views of scikit-learn's china.jpg and "
              f"flower.jpg labelled Neutral; rebuild: python3 {builder}")
    write_bundle(args.out, name, source, res.layers, res.provenance, network=net)
    write_readme(args.out, name, res, probs, top1)
    print(f"china.jpg: {top(probs[0])}; flower.jpg: {top(probs[1])}")
    print(f"wrote {args.out}: {len(res.layers)} layers, {macs(res.layers) / 1e9:.3f} GMAC per image, "
          f"{len(x)} graph samples, float top-1 (Neutral) {top1:.3f}")


def write_readme(out, name, res, probs, top1):
    prov = res.provenance
    size = prov["input_size"][0]
    text = f"""# {name}

The real InceptionV3 image classifier (5 classes: {', '.join(CLASSES)}) that ships in the npm
package `nsfwjs@{VERSION}` (`dist/models/inception_v3`, tarball sha256
`{prov['package']['tarball_sha256']}`), at {size}x{size}: {prov['macs_per_image'] / 1e9:.3f} GMAC
per image over {len(res.layers)} crossbar layers. Built by `python3 {prov['builder']}`
(needs npm, node and network access to the npm registry); not committed.

Layer traces: china.jpg whole. Network graph: {len(probs)} views (the two photos whole,
then random square crops, mirrored at random; seed 0), labelled Neutral; the float network
calls {top1:.1%} of them Neutral. china.jpg: {top(probs[0])}; flower.jpg: {top(probs[1])}.
"""
    write_text_file(os.path.join(out, "README.md"), text)


if __name__ == "__main__":
    main()
