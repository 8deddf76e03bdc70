#!/usr/bin/env python3
"""Builds workloads/mobilenetv2-nsfwjs and workloads/mobilenetv2-nsfwjs-pruned: the real
MobileNetV2 image classifier shipped in the npm package nsfwjs, run on a real photo.

    python3 tools/build_mobilenetv2_nsfwjs.py --check-tfjs                    # committed, 96x96
    python3 tools/build_mobilenetv2_nsfwjs.py --prune magnitude --sparsity 0.3  # committed pruned
    python3 tools/build_mobilenetv2_nsfwjs.py --size 224 --out DIR            # nsfwjs's own 224x224
    python3 tools/build_mobilenetv2_nsfwjs.py --images china flower --out DIR   # both photos

Steps: `npm pack nsfwjs@VERSION` into a temporary directory; node reads the package's
model.min.js (Keras 2.2.4 layer topology + tfjs weights manifest) and its base64 weight
shard; the uint8-quantized weights are dequantized (value = min + scale * q, per tensor, as
tfjs does); the Keras graph becomes an ONNX graph (tools/sresim_export/tfjs_keras.py) with
an input of --size x --size (nsfwjs itself uses 224; the committed bundles use 96, one of the
sizes Keras ships MobileNetV2 for, to stay small; at_size() keeps the head a global average)
and goes through the
common exporter, which folds each BatchNormalization into its conv and captures the real
(ReLU6) activations in onnxruntime. Photos are scikit-learn's bundled sample images,
preprocessed as nsfwjs does: RGB / 255, bilinear resize to size x size with align_corners
(the whole image, aspect ratio not kept). --check-tfjs runs the original model in
TensorFlow.js (npm @tensorflow/tfjs, pure-JS CPU backend; its input layer set to the same
size) on the same photos and fails unless every captured layer input and the output agree
with it. Every build also reports the predictions on both sample photos (the unpruned
model's and, when pruning, the pruned model's at several levels), for the README.
"""

from __future__ import annotations

import argparse
import base64
import copy
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from sresim_export import export, write_bundle  # noqa: E402
from sresim_export.bundle import write_file, write_onnx, write_text_file  # noqa: E402
from sresim_export.export import network  # noqa: E402
from sresim_export.export import sha256_file  # noqa: E402
from sresim_export.tfjs_keras import dequantize, to_onnx  # noqa: E402

VERSION = "4.4.0"
TFJS_VERSION = "4.22.0"
CLASSES = ["Drawing", "Hentai", "Neutral", "Porn", "Sexy"]
PHOTOS = ["china", "flower"]
NATIVE_SIZE = 224      # what nsfwjs resizes photos to
DEFAULT_SIZE = 96      # the committed bundles (small enough to commit)
SWEEP = (0.2, 0.3, 0.4, 0.5)   # pruning levels whose predictions the README reports
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

DUMP_JS = """
const dir = process.argv[1];
const m = require(dir + '/model.min.js');
const fs = require('fs');
fs.writeFileSync(process.argv[2], JSON.stringify(m));
const shards = fs.readdirSync(dir).filter(f => f.startsWith('group1-shard')).sort();
fs.writeFileSync(process.argv[3], shards.map(f => require(dir + '/' + f)).join('\\n'));
"""


def fetch_model(tmp, model="mobilenet_v2"):
    """Returns (topology, weights dict, description) of one of nsfwjs's models
    (`dist/models/MODEL`: mobilenet_v2, inception_v3)."""
    subprocess.run(["npm", "pack", f"nsfwjs@{VERSION}", "--pack-destination", tmp, "--silent"],
                   check=True, stdout=subprocess.DEVNULL)
    tgz = os.path.join(tmp, f"nsfwjs-{VERSION}.tgz")
    with tarfile.open(tgz) as tar:
        tar.extractall(tmp, filter="data")
    mdir = os.path.join(tmp, "package", "dist", "models", model)
    js, b64 = os.path.join(tmp, "model.json"), os.path.join(tmp, "shards.b64")
    subprocess.run(["node", "-e", DUMP_JS, mdir, js, b64], check=True)
    with open(js) as f:
        model = json.load(f)
    with open(b64) as f:
        data = b"".join(base64.b64decode(s) for s in f.read().split("\n"))
    weights = dequantize(model["weightsManifest"], data)
    desc = {"package": f"nsfwjs@{VERSION} (npm)", "tarball_sha256": sha256_file(tgz),
            "files": sorted(os.path.relpath(p, os.path.join(tmp, "package"))
                            for p in glob.glob(os.path.join(mdir, "*.js"))),
            "weights": "uint8-quantized per tensor, dequantized as min + scale * q"}
    return model["modelTopology"], weights, desc


CHECK_JS = """
const [pkgDir, modelDir, workDir] = process.argv.slice(1);
const tf = require(pkgDir + '/node_modules/@tensorflow/tfjs');
const fs = require('fs');
const m = require(modelDir + '/model.min.js');
const shards = fs.readdirSync(modelDir).filter(f => f.startsWith('group1-shard')).sort();
const buf = Buffer.concat(shards.map(f => Buffer.from(require(modelDir + '/' + f), 'base64')));
const spec = JSON.parse(fs.readFileSync(workDir + '/spec.json'));
const topology = JSON.parse(fs.readFileSync(workDir + '/topology.json'));  // at_size(), or as shipped
(async () => {
  await tf.setBackend('cpu');
  const model = await tf.loadLayersModel(tf.io.fromMemory({modelTopology: topology,
    weightSpecs: m.weightsManifest.flatMap(g => g.weights),
    weightData: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)}));
  const raw = fs.readFileSync(workDir + '/x.f32');
  const x = tf.tensor4d(new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4), spec.shape);
  const names = spec.tensors.concat([spec.output]);
  const probe = tf.model({inputs: model.inputs, outputs: names.map(n => model.getLayer(n).output)});
  const outs = probe.predict(x);
  for (let i = 0; i < names.length; i++)
    fs.writeFileSync(workDir + '/' + names[i] + '.f32', Buffer.from((await outs[i].data()).buffer));
})();
"""


def check_against_tfjs(tmp, topology, photos, res):
    """Runs the original tfjs model (npm @tensorflow/tfjs, pure-JS CPU backend) on the same
    photos and compares every captured layer input and the output with it."""
    pkg = os.path.join(tmp, "tfjs")
    subprocess.run(["npm", "install", "--prefix", pkg, "--no-audit", "--no-fund", "--silent",
                    f"@tensorflow/tfjs@{TFJS_VERSION}"], check=True, stdout=subprocess.DEVNULL)
    layers = {l["name"]: l for l in topology["model_config"]["config"]["layers"]}
    feeds = {e["name"]: layers[e["name"]]["inbound_nodes"][0][0][0] for e, _ in res.layers}
    output = topology["model_config"]["config"]["output_layers"][0][0]
    work = os.path.join(tmp, "check")
    os.makedirs(work)
    nhwc = photos.transpose(0, 2, 3, 1)
    data = nhwc.astype(np.float32).tobytes()
    write_file(os.path.join(work, "x.f32"), lambda f: f.write(data))
    write_text_file(os.path.join(work, "spec.json"), json.dumps(
        {"shape": list(nhwc.shape), "tensors": sorted(set(feeds.values())), "output": output}))
    write_text_file(os.path.join(work, "topology.json"), json.dumps(topology))
    mdir = os.path.join(tmp, "package", "dist", "models", "mobilenet_v2")
    subprocess.run(["node", "-e", CHECK_JS, pkg, mdir, work], check=True)
    worst, zero_mismatch = 0.0, 0
    for entry, t in res.layers:
        ours = t[entry["input"]]
        ref = np.fromfile(os.path.join(work, feeds[entry["name"]] + ".f32"), np.float32)
        ref = ref.reshape(ours.shape[0], *ours.shape[2:], ours.shape[1]).transpose(0, 3, 1, 2) \
            if ours.ndim == 4 else ref.reshape(ours.shape)
        worst = max(worst, float(np.max(np.abs(ours - ref))))
        zero_mismatch += int(np.sum((ours == 0) != (ref == 0)))
    ref_out = np.fromfile(os.path.join(work, output + ".f32"), np.float32).reshape(-1, len(CLASSES))
    out_diff = float(np.max(np.abs(next(iter(res.outputs.values())) - ref_out)))
    result = {"reference": f"@tensorflow/tfjs@{TFJS_VERSION} (npm, pure-JS cpu backend)",
              "max_abs_diff_layer_inputs": worst, "zero_pattern_mismatches": zero_mismatch,
              "max_abs_diff_output": out_diff}
    print(f"checked against tfjs: layer inputs max |diff| {worst:.2e}, zero-pattern mismatches "
          f"{zero_mismatch}, output max |diff| {out_diff:.2e}")
    if worst > 1e-3 or out_diff > 1e-4:
        raise SystemExit("error: the ONNX conversion does not match tfjs")
    return result


def final_map(size):
    """Side of the last feature map for a size x size input: five stride-2 stages, each a
    ZeroPadding2D((0, 1), (0, 1)) then a valid 3x3 conv, n -> (n + 1 - 3) // 2 + 1."""
    for _ in range(5):
        size = (size - 2) // 2 + 1
    return size


def at_size(topology, size):
    """The Keras topology with a size x size input. nsfwjs's head is AveragePooling2D(7, 7)
    on the 7x7 map of a 224x224 input, i.e. a global average; at another size the pooling
    window becomes the whole final map, so it stays the global average (as Keras's own
    MobileNetV2 head). Everything else is convolutional and does not depend on the size."""
    topology = copy.deepcopy(topology)
    side = final_map(size)
    pools = 0
    for layer in topology["model_config"]["config"]["layers"]:
        c = layer["config"]
        if layer["class_name"] == "InputLayer":
            c["batch_input_shape"] = [None, size, size, c["batch_input_shape"][3]]
        elif layer["class_name"] == "AveragePooling2D":
            if c["pool_size"] != [final_map(NATIVE_SIZE)] * 2 or c["padding"] != "valid":
                raise ValueError(f"{layer['name']}: expected the 7x7 global average pooling head")
            c["pool_size"] = c["strides"] = [side, side]
            pools += 1
    if pools != 1:
        raise ValueError(f"expected one AveragePooling2D head, found {pools}")
    return topology


def resize_bilinear_align_corners(img, size):
    """tf.image.resizeBilinear(img, size, alignCorners=true) for an [H, W, C] array."""
    h, w = img.shape[:2]
    ys = np.arange(size[0]) * ((h - 1) / (size[0] - 1))
    xs = np.arange(size[1]) * ((w - 1) / (size[1] - 1))
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]
    top = img[y0][:, x0] * (1 - fx) + img[y0][:, x1] * fx
    bot = img[y1][:, x0] * (1 - fx) + img[y1][:, x1] * fx
    return top * (1 - fy) + bot * fy


def load_photos(names, size):
    """[N, 3, size, size] float32: the photos as nsfwjs preprocesses them."""
    from sklearn.datasets import load_sample_image

    batch = []
    for n in names:
        img = load_sample_image(f"{n}.jpg").astype(np.float64) / 255.0
        batch.append(resize_bilinear_align_corners(img, (size, size)).transpose(2, 0, 1))
    return np.stack(batch).astype(np.float32)


def top(row, k=3):
    """'Neutral 0.997, Drawing 0.003, ...': the k most probable classes of one output row."""
    best = sorted(zip(CLASSES, row), key=lambda t: -t[1])[:k]
    return ", ".join(f"{c} {p:.3f}" for c, p in best)


def weight_zeros(layers):
    """Fraction of exactly-zero weights over all exported layers."""
    ws = [t[e["weight"]] for e, t in layers]
    return sum(int(np.sum(w == 0)) for w in ws) / sum(w.size for w in ws)


def prediction_table(path, size, method, levels, exclude, prune_all):
    """For each pruning level (0 = unpruned): (level, weight zeros, [output row per photo
    in PHOTOS]), each from the same export as the bundle (same size, method, exclusions)."""
    photos = load_photos(PHOTOS, size)
    rows = []
    for level in levels:
        res = export(path, photos, {}, method if level > 0 else None, level, exclude,
                     log=lambda *a: None, prune_depthwise=prune_all)
        rows.append((level, weight_zeros(res.layers), next(iter(res.outputs.values()))))
    return rows


def main():
    ap = argparse.ArgumentParser(description="build the mobilenetv2-nsfwjs workload bundles")
    ap.add_argument("--images", nargs="+", default=["china"], choices=PHOTOS)
    ap.add_argument("--size", type=int, default=DEFAULT_SIZE,
                    help=f"input height and width (default {DEFAULT_SIZE}; nsfwjs uses {NATIVE_SIZE})")
    ap.add_argument("--prune", choices=["none", "magnitude", "ssl"], default="none")
    ap.add_argument("--sparsity", type=float, default=0.0)
    ap.add_argument("--prune-all", action="store_true",
                    help="also prune Conv1, the depthwise convs and the classifier dense_3")
    ap.add_argument("--check-tfjs", action="store_true",
                    help="also run the original model in tfjs (npm @tensorflow/tfjs) and compare")
    ap.add_argument("--out", help="bundle directory (default: workloads/NAME)")
    args = ap.parse_args()
    if args.size < 32:
        raise SystemExit(f"error: --size {args.size}: MobileNetV2 needs at least 32x32 (5 stride-2 stages)")
    pruned = args.prune != "none"
    if pruned and not 0 < args.sparsity < 1:
        raise SystemExit(f"error: --sparsity {args.sparsity}: pruning needs a target in (0, 1)")
    name = ("mobilenetv2-nsfwjs" + ("-pruned" if pruned else "")
            + ("" if args.size == DEFAULT_SIZE else f"-{args.size}"))
    out = args.out or os.path.join(REPO, "workloads", name)
    exclude = set() if args.prune_all else {"Conv1", "dense_3"}
    levels = [0.0] + (sorted(set(SWEEP) | {args.sparsity}) if pruned else [])

    with tempfile.TemporaryDirectory() as tmp:
        shipped, weights, pkg = fetch_model(tmp)
        topology = at_size(shipped, args.size)
        path = os.path.join(tmp, "mobilenetv2_nsfwjs.onnx")
        write_onnx(path, to_onnx(topology, weights))
        photos = load_photos(args.images, args.size)
        desc = {"files": [f"{n}.jpg" for n in args.images],
                "origin": "scikit-learn sample images (sklearn.datasets.load_sample_image)",
                "preprocess": f"RGB / 255, bilinear resize to {args.size}x{args.size} with "
                              f"align_corners (as nsfwjs, which uses {NATIVE_SIZE}x{NATIVE_SIZE})"}
        res = export(path, photos, desc, args.prune if pruned else None, args.sparsity, exclude,
                     prune_depthwise=args.prune_all)
        # the network graph's input: every sample photo (no labels: no ground truth here)
        net = network(res, load_photos(PHOTOS, args.size))
        if args.check_tfjs:
            if pruned:
                raise SystemExit("error: --check-tfjs compares the unpruned model only")
            res.provenance["checked_against_tfjs"] = check_against_tfjs(tmp, topology, photos, res)
        table = prediction_table(path, args.size, args.prune, levels, exclude, args.prune_all)
        native = None
        if args.size != NATIVE_SIZE:
            nat_path = os.path.join(tmp, "mobilenetv2_nsfwjs_native.onnx")
            write_onnx(nat_path, to_onnx(shipped, weights))
            native = prediction_table(nat_path, NATIVE_SIZE, None, [0.0], exclude, args.prune_all)[0][2]
    probs = next(iter(res.outputs.values()))
    res.provenance["package"] = pkg
    res.provenance["input_size"] = [args.size, args.size]
    res.provenance["builder"] = "tools/build_mobilenetv2_nsfwjs.py " + " ".join(sys.argv[1:])
    res.provenance["predictions"] = {
        img: {c: round(float(p), 4) for c, p in zip(CLASSES, row)} for img, row in zip(args.images, probs)}
    prune_txt = (f", {args.prune}-pruned at export to {args.sparsity:.0%} per layer without fine-tuning"
                 if pruned else "")
    source = (f"MobileNetV2 of npm nsfwjs@{VERSION} (uint8 weights dequantized, BatchNorm folded){prune_txt}; "
              f"inputs: real photos {', '.join(args.images)}.jpg from scikit-learn at {args.size}x{args.size}, "
              f"ReLU6 activations captured in onnxruntime; rebuild: python3 {res.provenance['builder']}")
    write_bundle(out, name, source, res.layers, res.provenance, network=net)
    for img, row in zip(args.images, probs):
        print(f"{img}.jpg: {top(row)}")
    write_readme(out, name, res, args, table, native)
    print(f"wrote {out}: {len(res.layers)} layers")


def write_readme(out, name, res, args, table, native):
    prov = res.provenance
    pr = prov.get("pruning")
    size = args.size
    rows, stride2, dw, fc = [], [], 0, 0
    for entry, t in res.layers:
        w, x = t[entry["weight"]], t[entry["input"]]
        rows.append(f"| {entry['name']} | {entry['kind']} | {list(w.shape)} | {entry.get('groups', 1)} | "
                    f"{list(x.shape)} | {np.mean(w == 0):.1%} | {np.mean(x == 0):.1%} |")
        fc += entry["kind"] == "fc"
        dw += entry.get("groups", 1) > 1
        if entry.get("stride") == [2, 2]:
            stride2.append(f"{x.shape[2]}x{x.shape[3]}")
    pruning = ("none: the weights are the shipped ones (dequantized, BatchNorm folded)." if not pr else
               f"{pr['method']} to {pr['target_sparsity']:.0%} per layer at export, **no fine-tuning** "
               f"(no training data for this model here); left dense: {', '.join(pr['excluded']) or 'none'}"
               f"{'' if pr['depthwise_pruned'] else ' and the depthwise convs'}. Over all {len(rows)} "
               f"layers {weight_zeros(res.layers):.1%} of the weights are zero "
               f"(unpruned: {table[0][1]:.1%}).")
    chk = prov.get("checked_against_tfjs")
    mism = chk and chk["zero_pattern_mismatches"]
    check = "" if not chk else (
        f"\n\nConversion check (`--check-tfjs`): the original model files, run in {chk['reference']} "
        f"at {size}x{size} on the same input, give every captured layer input to within "
        f"{chk['max_abs_diff_layer_inputs']:.1e} (max |difference|; activations reach 6 and beyond in the "
        f"residual sums), the same zero pattern"
        + (f" except {mism} element(s) that sit at the rounding limit" if mism else "")
        + f", and the output probabilities to within {chk['max_abs_diff_output']:.1e}.")
    def mark(photo):
        return f"{photo}.jpg" + (" (in this bundle)" if photo in args.images else "")

    if pr:
        head = "| pruning target | weight zeros | " + " | ".join(mark(p) for p in PHOTOS) + " |"
        lines = [head, "|---|---|" + "---|" * len(PHOTOS)]
        for level, zeros, outs in table:
            b = "**" if level == pr["target_sparsity"] else ""
            label = "none (shipped weights)" if level == 0 else f"{level:.0%}"
            cells = [label, f"{zeros:.1%}"] + [top(r) for r in outs]
            lines.append("| " + " | ".join(f"{b}{c}{b}" for c in cells) + " |")
        predictions = (
            f"Top-3 outputs on both sample photos at {size}x{size}, before pruning and at several "
            f"{pr['method']} pruning levels (same exclusions, no fine-tuning); this bundle's level in "
            f"bold. Both photos are ordinary scenes, so Neutral is the plausible answer:\n\n"
            + "\n".join(lines) + "\n\n" + PRUNE_NOTE)
    else:
        lines = ["| photo | at this bundle's " + f"{size}x{size} |"
                 + (f" at nsfwjs's {NATIVE_SIZE}x{NATIVE_SIZE} |" if native is not None else ""),
                 "|---|---|" + ("---|" if native is not None else "")]
        for i, p in enumerate(PHOTOS):
            lines.append(f"| {mark(p)} | {top(table[0][2][i])} |"
                         + (f" {top(native[i])} |" if native is not None else ""))
        predictions = ("Model output (top 3) on both sample photos; both are ordinary scenes, so Neutral "
                       "is the plausible answer:\n\n" + "\n".join(lines))
    nat, side = final_map(NATIVE_SIZE), final_map(size)
    size_note = "." if size == NATIVE_SIZE else (
        f" where nsfwjs uses {NATIVE_SIZE}x{NATIVE_SIZE},\nto keep the bundle small (the "
        f"activations shrink with the square of the size). Everything\nbefore the classifier head is "
        f"convolutional, so the same weights run at any size. The head\naverages the final "
        f"{nat}x{nat} map of a {NATIVE_SIZE}x{NATIVE_SIZE} input with AveragePooling2D({nat}, {nat}), "
        f"i.e. a global\naverage; at {size}x{size} the final map is {side}x{side} and the builder "
        f"sets the window to {side}x{side}, so it\nstays the global average (the head of Keras's own "
        f"MobileNetV2). The original tfjs model\nwith its input layer set to {size}x{size} and that "
        f"window gives the same tensors (below).")
    photos_txt = "a real photo" if len(args.images) == 1 else f"{len(args.images)} real photos"
    text = f"""# {name}

The real MobileNetV2 image classifier (5 classes: {', '.join(CLASSES)}) that ships in
the npm package `nsfwjs@{VERSION}` (`dist/models/mobilenet_v2`: Keras 2.2.4 topology and
uint8-quantized weights, tarball sha256
`{prov['package']['tarball_sha256']}`),
{'pruned at export and ' if pr else ''}run on {photos_txt} at {size}x{size}.

Rebuild (deterministic, under a minute; needs npm, node and network access to the npm registry):
`{("python3 tools/build_mobilenetv2_nsfwjs.py " + " ".join(sys.argv[1:])).strip()}`

## Weights
Dequantized per tensor as tfjs does (min + scale * q). The quantizer placed zero exactly on a
level (min / scale is an integer for every kernel), so weights quantized to that level are
exactly 0: that is most of the "weight zeros" column below in the unpruned layers, a property
of the shipped model. Each BatchNormalization is folded into its convolution
(weight * gamma / sqrt(var + eps)), as an inference deployment would.
Pruning: {pruning}
The stride-2 convolutions follow Keras's ZeroPadding2D((0, 1), (0, 1)): their captured
input is the padded tensor ({', '.join(stride2)}) with `padding` [0, 0].

## Inputs
{', '.join(prov['inputs']['files'])}: scikit-learn's bundled sample photos
(`sklearn.datasets.load_sample_image`), preprocessed as nsfwjs does (RGB / 255, bilinear resize
of the whole image with align_corners), to {size}x{size}{size_note}
Every layer input is the real tensor entering it (after ReLU6, or the linear bottleneck /
residual sum for the 1x1 expansions), captured in onnxruntime.

{predictions}{check}

## Variants (rebuilt by their command, not committed)
{VARIANTS}

## Layers ({len(rows)}: {len(rows) - fc} conv incl. {dw} depthwise, {fc} fc)
| layer | kind | weight | groups | input | weight zeros | input zeros |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    write_text_file(os.path.join(out, "README.md"), text)


PRUNE_NOTE = """Pruning without fine-tuning degrades this network quickly: as the level rises the outputs
drift towards Drawing, flower.jpg first. The committed workloads/mobilenetv2-nsfwjs-pruned uses
magnitude 30%, the highest level tried at which china.jpg stays confidently Neutral (flower.jpg,
not in the bundle, is already a near tie there). A fine-tuned pruned MobileNetV2 would tolerate
more; this bundle holds the pruned weights of a real network on a real photo, not a tuned sparse
model."""

VARIANTS = """The committed bundles use one photo at 96x96 to stay small (workloads/README.md); the same
builder makes the larger ones (sizes of tensors.npz measured):
- nsfwjs's own input size, 224x224 (~20 MB): `python3 tools/build_mobilenetv2_nsfwjs.py --size 224 --check-tfjs --out /tmp/mobilenetv2-nsfwjs-224`
- both photos, china.jpg and flower.jpg, at 224x224 (~36 MB): `python3 tools/build_mobilenetv2_nsfwjs.py --size 224 --images china flower --out /tmp/mobilenetv2-nsfwjs-224-2`
- the pruned variant at 224x224 (~19 MB): `python3 tools/build_mobilenetv2_nsfwjs.py --size 224 --prune magnitude --sparsity 0.3 --out /tmp/mobilenetv2-nsfwjs-pruned-224`
- `--prune ssl` prunes structurally (whole filters and rows) instead; `--prune-all` also prunes
  Conv1, the depthwise convs and dense_3."""


if __name__ == "__main__":
    main()
