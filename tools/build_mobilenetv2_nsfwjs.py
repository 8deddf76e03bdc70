#!/usr/bin/env python3
"""Builds workloads/mobilenetv2-nsfwjs (and the pruned variant): the real MobileNetV2
image classifier shipped in the npm package nsfwjs, run on real photos.

    python3 tools/build_mobilenetv2_nsfwjs.py --check-tfjs          # committed: china.jpg only
    python3 tools/build_mobilenetv2_nsfwjs.py --prune magnitude --sparsity 0.5 \
        --out workloads/mobilenetv2-nsfwjs-pruned                   # committed pruned variant
    python3 tools/build_mobilenetv2_nsfwjs.py --images china flower --out DIR   # full, not committed

Steps: `npm pack nsfwjs@VERSION` into a temporary directory; node reads the package's
model.min.js (Keras 2.2.4 layer topology + tfjs weights manifest) and its base64 weight
shard; the uint8-quantized weights are dequantized (value = min + scale * q, per tensor, as
tfjs does); the Keras graph becomes an ONNX graph (tools/sresim_export/tfjs_keras.py) and
goes through the common exporter, which folds each BatchNormalization into its conv and
captures the real (ReLU6) activations in onnxruntime. Photos are scikit-learn's bundled
sample images, preprocessed as nsfwjs does: RGB / 255, bilinear resize to 224x224 with
align_corners (the whole image, aspect ratio not kept). --check-tfjs runs the original
model in TensorFlow.js (npm @tensorflow/tfjs, pure-JS CPU backend) on the same photos and
fails unless every captured layer input and the output agree with it.
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import onnx  # noqa: E402

from sresim_export import export, write_bundle  # noqa: E402
from sresim_export.export import sha256_file  # noqa: E402
from sresim_export.tfjs_keras import dequantize, to_onnx  # noqa: E402

VERSION = "4.4.0"
TFJS_VERSION = "4.22.0"
CLASSES = ["Drawing", "Hentai", "Neutral", "Porn", "Sexy"]
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

DUMP_JS = """
const dir = process.argv[1];
const m = require(dir + '/model.min.js');
const fs = require('fs');
fs.writeFileSync(process.argv[2], JSON.stringify(m));
const shards = fs.readdirSync(dir).filter(f => f.startsWith('group1-shard')).sort();
fs.writeFileSync(process.argv[3], shards.map(f => require(dir + '/' + f)).join('\\n'));
"""


def fetch_model(tmp):
    """Returns (topology, weights dict, description) of nsfwjs's mobilenet_v2 model."""
    subprocess.run(["npm", "pack", f"nsfwjs@{VERSION}", "--pack-destination", tmp, "--silent"],
                   check=True, stdout=subprocess.DEVNULL)
    tgz = os.path.join(tmp, f"nsfwjs-{VERSION}.tgz")
    with tarfile.open(tgz) as tar:
        tar.extractall(tmp, filter="data")
    mdir = os.path.join(tmp, "package", "dist", "models", "mobilenet_v2")
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
(async () => {
  await tf.setBackend('cpu');
  const model = await tf.loadLayersModel(tf.io.fromMemory({modelTopology: m.modelTopology,
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
    nhwc.astype(np.float32).tofile(os.path.join(work, "x.f32"))
    with open(os.path.join(work, "spec.json"), "w") as f:
        json.dump({"shape": list(nhwc.shape), "tensors": sorted(set(feeds.values())), "output": output}, f)
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


def load_photos(names):
    from sklearn.datasets import load_sample_image

    batch = []
    for n in names:
        img = load_sample_image(f"{n}.jpg").astype(np.float64) / 255.0
        batch.append(resize_bilinear_align_corners(img, (224, 224)).transpose(2, 0, 1))
    return np.stack(batch).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description="build the mobilenetv2-nsfwjs workload bundle")
    ap.add_argument("--images", nargs="+", default=["china"], choices=["china", "flower"])
    ap.add_argument("--prune", choices=["none", "magnitude", "ssl"], default="none")
    ap.add_argument("--sparsity", type=float, default=0.0)
    ap.add_argument("--prune-all", action="store_true",
                    help="also prune Conv1, the depthwise convs and the classifier dense_3")
    ap.add_argument("--check-tfjs", action="store_true",
                    help="also run the original model in tfjs (npm @tensorflow/tfjs) and compare")
    ap.add_argument("--out", default=os.path.join(REPO, "workloads", "mobilenetv2-nsfwjs"))
    args = ap.parse_args()
    pruned = args.prune != "none"
    name = "mobilenetv2-nsfwjs" + ("-pruned" if pruned else "")

    with tempfile.TemporaryDirectory() as tmp:
        topology, weights, pkg = fetch_model(tmp)
        model = to_onnx(topology, weights)
        path = os.path.join(tmp, "mobilenetv2_nsfwjs.onnx")
        onnx.save(model, path)
        photos = load_photos(args.images)
        desc = {"files": [f"{n}.jpg" for n in args.images],
                "origin": "scikit-learn sample images (sklearn.datasets.load_sample_image)",
                "preprocess": "RGB / 255, bilinear resize to 224x224 with align_corners (as nsfwjs)"}
        exclude = set() if args.prune_all else {"Conv1", "dense_3"}
        res = export(path, photos, desc, args.prune if pruned else None, args.sparsity, exclude,
                     prune_depthwise=args.prune_all)
        if args.check_tfjs:
            if pruned:
                raise SystemExit("error: --check-tfjs compares the unpruned model only")
            res.provenance["checked_against_tfjs"] = check_against_tfjs(tmp, topology, photos, res)
    probs = next(iter(res.outputs.values()))
    res.provenance["package"] = pkg
    res.provenance["builder"] = "tools/build_mobilenetv2_nsfwjs.py " + " ".join(sys.argv[1:])
    res.provenance["predictions"] = {
        img: {c: round(float(p), 4) for c, p in zip(CLASSES, row)} for img, row in zip(args.images, probs)}
    prune_txt = (f", magnitude-pruned at export to {args.sparsity:.0%} per layer without fine-tuning"
                 if pruned else "")
    source = (f"MobileNetV2 of npm nsfwjs@{VERSION} (uint8 weights dequantized, BatchNorm folded){prune_txt}; "
              f"inputs: real photos {', '.join(args.images)}.jpg from scikit-learn, ReLU6 activations "
              f"captured in onnxruntime; rebuild: python3 {res.provenance['builder']}")
    write_bundle(args.out, name, source, res.layers, res.provenance)
    lines = []
    for img, row in zip(args.images, probs):
        top = sorted(zip(CLASSES, row), key=lambda t: -t[1])
        lines.append(f"{img}.jpg: " + ", ".join(f"{c} {p:.3f}" for c, p in top))
        print(lines[-1])
    write_readme(args.out, name, res, lines, " ".join(sys.argv[1:]))
    print(f"wrote {args.out}: {len(res.layers)} layers")


def write_readme(out, name, res, predictions, argv):
    prov = res.provenance
    pr = prov.get("pruning")
    rows = []
    for entry, t in res.layers:
        w, x = t[entry["weight"]], t[entry["input"]]
        rows.append(f"| {entry['name']} | {entry['kind']} | {list(w.shape)} | {entry.get('groups', 1)} | "
                    f"{list(x.shape)} | {np.mean(w == 0):.1%} | {np.mean(x == 0):.1%} |")
    pruning = ("none: the weights are the shipped ones (dequantized, BatchNorm folded)." if not pr else
               f"{pr['method']} to {pr['target_sparsity']:.0%} per layer at export, **no fine-tuning** "
               f"(no training data for this model here); left dense: {', '.join(pr['excluded']) or 'none'}"
               f"{'' if pr['depthwise_pruned'] else ' and the 17 depthwise convs'}.")
    chk = prov.get("checked_against_tfjs")
    check = "" if not chk else (
        f"\n\nConversion check (`--check-tfjs`): the original model files run in {chk['reference']} "
        f"on the same input give every captured layer input to within {chk['max_abs_diff_layer_inputs']:.1e} "
        f"(max |difference|; activations reach 6 and beyond in the residual sums), the same zero pattern "
        f"except {chk['zero_pattern_mismatches']} element(s) that sit at the rounding limit, and the "
        f"output probabilities to within {chk['max_abs_diff_output']:.1e}.")
    text = f"""# {name}

The real MobileNetV2 image classifier (5 classes: {', '.join(CLASSES)}) that ships in the npm
package `nsfwjs@{VERSION}` (`dist/models/mobilenet_v2`: Keras 2.2.4 topology and uint8-quantized
weights, tarball sha256 `{prov['package']['tarball_sha256']}`), run on real photos.

Rebuild (deterministic, about ten seconds; needs npm, node and network access to the npm registry):
`{("python3 tools/build_mobilenetv2_nsfwjs.py " + argv).strip()}`

## Weights
Dequantized per tensor as tfjs does (min + scale * q). The quantizer placed zero exactly on a
level (min / scale is an integer for every kernel), so weights quantized to that level are
exactly 0: that is the "weight zeros" column below, a property of the shipped model. Each
BatchNormalization is folded into its convolution (weight * gamma / sqrt(var + eps)), as an
inference deployment would.
Pruning: {pruning}
The stride-2 convolutions follow Keras's ZeroPadding2D((0, 1), (0, 1)): their captured
input is the padded tensor (225x225, 113x113, ...) with `padding` [0, 0].

## Inputs
{', '.join(prov['inputs']['files'])}: scikit-learn's bundled sample photos
(`sklearn.datasets.load_sample_image`), preprocessed as nsfwjs does: RGB / 255, bilinear resize
of the whole image to 224x224 with align_corners. Every layer input is the real tensor
entering it (after ReLU6, or the linear bottleneck / residual sum for the 1x1 expansions),
captured in onnxruntime. Model output on these photos (sanity check):

{chr(10).join('- ' + l for l in predictions)}{check}

## Variants (rebuilt by their command, not committed: one 224x224 photo is already ~20 MB)
- Both photos (china.jpg, flower.jpg; ~35 MB):
  `python3 tools/build_mobilenetv2_nsfwjs.py --images china flower --out /tmp/mobilenetv2-nsfwjs-2`
- Magnitude-pruned: `python3 tools/build_mobilenetv2_nsfwjs.py --prune magnitude --sparsity 0.5
  --out /tmp/mobilenetv2-nsfwjs-pruned` prunes the 1x1 convs and dense_1/dense_2 to 50% per layer,
  keeping Conv1, the depthwise convs and dense_3 dense (`--prune-all` prunes those too), with no
  fine-tuning, and captures the pruned network's activations. Without fine-tuning the network
  degrades: on china.jpg it still predicts Neutral but with 0.52 (Drawing 0.46), against 0.997
  dense; at 70% the two photos give nearly the same output, i.e. the network has collapsed.
  About 18 MB for one photo.

## Layers ({len(res.layers)}: 52 conv incl. 17 depthwise, 3 fc)
| layer | kind | weight | groups | input | weight zeros | input zeros |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
