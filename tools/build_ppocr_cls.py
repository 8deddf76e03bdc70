#!/usr/bin/env python3
"""Builds workloads/ppocr-cls-mobilenetv3: PaddleOCR's text-direction classifier (a
MobileNetV3-style CNN, ch_ppocr_mobile_v2.0_cls) as shipped in ONNX form by the PyPI
package rapidocr-onnxruntime, run through tools/export_onnx.py's exporter.

    python3 tools/build_ppocr_cls.py [--out workloads/ppocr-cls-mobilenetv3]

The wheel is fetched with `pip download --no-deps rapidocr-onnxruntime==VERSION` into a
temporary directory and the model is read from it (the package is not installed).

Inputs: text-line images as the classifier sees them in the OCR pipeline (48 px high,
up to 192 px wide, RGB). There is no image with text among the bundled sample data, so
each line is made here: a real photo background (a 48-pixel-high crop of scikit-learn's
china.jpg, at a fixed position) with an English sentence drawn on it in Pillow's bundled
font (Aileron); every second line is rotated by 180 degrees. The committed bundle has the
first two lines (--lines 2, 4 MB); --lines 6 makes all six (12 MB, not committed). Preprocessing is
rapidocr's: resize to height 48 keeping the aspect ratio (width capped at 192),
(x / 255 - 0.5) / 0.5, zero padding on the right up to 192.
"""

from __future__ import annotations

import argparse
import glob
import math
import os
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from PIL import Image, ImageDraw, ImageFont  # noqa: E402

from sresim_export import export, write_bundle  # noqa: E402
from sresim_export.bundle import write_file, write_text_file  # noqa: E402
from sresim_export.export import network  # noqa: E402
from sresim_export.export import sha256_file  # noqa: E402

VERSION = "1.4.4"
MODEL = "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ALL_LINES = [  # (text, crop origin (y, x) in china.jpg, rotated by 180 degrees)
    ("Sparse ReRAM Engine", (20, 40), False),
    ("crossbar rows and columns", (60, 240), True),
    ("operation units skip zeros", (120, 200), False),
    ("weights and activations", (250, 200), True),
    ("Summer Palace, Beijing", (330, 20), False),
    ("dynamic OU formation", (380, 250), True),
]
LINES = ALL_LINES[:2]


def fetch_model(tmp):
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp,
                    f"rapidocr-onnxruntime=={VERSION}"], check=True)
    (wheel,) = glob.glob(os.path.join(tmp, "rapidocr_onnxruntime-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extract(MODEL, tmp)
    return os.path.join(tmp, MODEL), os.path.basename(wheel), sha256_file(wheel)


def text_line(text, origin, rotate):
    """An RGB text-line image: a 48 x (text width + 16) crop of china.jpg with `text` on it."""
    from sklearn.datasets import load_sample_image

    photo = load_sample_image("china.jpg")
    font = ImageFont.load_default(size=30)
    width = int(math.ceil(font.getlength(text))) + 16
    y, x = origin
    crop = Image.fromarray(photo[y:y + 48, x:x + width])
    if crop.width < width:
        raise ValueError(f"crop at {origin} too narrow for {text!r}")
    draw = ImageDraw.Draw(crop)
    mean = np.asarray(crop).mean()
    draw.text((8, 6), text, font=font, fill=(0, 0, 0) if mean > 110 else (255, 255, 255))
    return crop.rotate(180) if rotate else crop


def preprocess(img, h=48, w=192):
    """rapidocr TextClassifier.resize_norm_img, with Pillow's bilinear resize."""
    ratio = img.width / img.height
    rw = min(w, int(math.ceil(h * ratio)))
    x = np.asarray(img.resize((rw, h), Image.BILINEAR), dtype=np.float32).transpose(2, 0, 1) / 255
    out = np.zeros((3, h, w), np.float32)
    out[:, :, :rw] = (x - 0.5) / 0.5
    return out


def main():
    ap = argparse.ArgumentParser(description="build the ppocr-cls-mobilenetv3 workload bundle")
    ap.add_argument("--out", default=os.path.join(REPO, "workloads", "ppocr-cls-mobilenetv3"))
    ap.add_argument("--lines", type=int, default=2, choices=range(1, len(ALL_LINES) + 1),
                    help="how many text lines (default 2, the committed bundle; 6 = all)")
    ap.add_argument("--save-lines", help="also save the text-line images as PNG in this directory")
    args = ap.parse_args()
    global LINES
    LINES = ALL_LINES[:args.lines]
    images = [text_line(*line) for line in LINES]
    if args.save_lines:
        os.makedirs(args.save_lines, exist_ok=True)
        for i, img in enumerate(images):
            write_file(os.path.join(args.save_lines, f"line{i}.png"),
                       lambda f, img=img: img.save(f, format="PNG"), "--save-lines")
    batch = np.stack([preprocess(img) for img in images])
    with tempfile.TemporaryDirectory() as tmp:
        model_path, wheel, wheel_sha = fetch_model(tmp)
        desc = {"what": "text lines: crops of scikit-learn's china.jpg with a sentence drawn in Pillow's "
                        "bundled font; every second line rotated 180 degrees",
                "lines": [{"text": t, "crop_origin": list(o), "rotated_180": r} for t, o, r in LINES],
                "preprocess": "rapidocr: height 48, aspect kept, width <= 192, (x/255-0.5)/0.5, right zero pad"}
        res = export(model_path, batch, desc)
        # the network graph: the same lines, labelled upright (class 0) or rotated (class 1)
        net = network(res, batch, [1 if r else 0 for _, _, r in LINES])
    probs = next(iter(res.outputs.values()))
    prov_cmd = "python3 tools/build_ppocr_cls.py" + ("" if args.lines == 2 else f" --lines {args.lines}")
    labels = ["0", "180"]
    preds = [labels[int(i)] for i in probs.argmax(1)]
    res.provenance.update({"package": {"wheel": wheel, "sha256": wheel_sha, "file": MODEL},
                           "predictions": [{"label": p, "p": round(float(pr.max()), 4)} for p, pr in zip(preds, probs)],
                           "builder": prov_cmd})
    source = (f"PaddleOCR text-direction classifier ch_ppocr_mobile_v2.0_cls (ONNX, from PyPI "
              f"rapidocr-onnxruntime=={VERSION}), BatchNorm folded; inputs: {len(LINES)} text lines drawn on "
              f"crops of china.jpg (every second one rotated 180 degrees); rebuild: {prov_cmd}")
    write_bundle(args.out, "ppocr-cls-mobilenetv3", source, res.layers, res.provenance, network=net)
    write_readme(args.out, res, preds, probs)
    for (t, _, r), p, pr in zip(LINES, preds, probs):
        print(f"{t!r} rotated={r}: predicted {p} ({pr.max():.3f})")
    print(f"wrote {args.out}: {len(res.layers)} layers")


def write_readme(out, res, preds, probs):
    prov = res.provenance
    rows = "\n".join(
        f"| {e['name']} | {e['kind']} | {list(t[e['weight']].shape)} | {e.get('groups', 1)} | "
        f"{list(t[e['input']].shape)} | {np.mean(t[e['input']] == 0):.1%} |" for e, t in res.layers)
    lines = "\n".join(f"| {t} | {'yes' if r else 'no'} | {p} ({pr.max():.3f}) |"
                      for (t, _, r), p, pr in zip(LINES, preds, probs))
    text = f"""# ppocr-cls-mobilenetv3

PaddleOCR's text-direction classifier `ch_ppocr_mobile_v2.0_cls` (a MobileNetV3-style CNN with
squeeze-excitation blocks and hard-swish; it tells whether a text line is upright, `0`, or
upside down, `180`), exactly as the PyPI wheel `rapidocr-onnxruntime=={VERSION}` ships it
(`{MODEL}`, wheel sha256 `{prov['package']['sha256']}`), exported with the common ONNX exporter.

Rebuild (deterministic, a few seconds; needs pip access to PyPI): `{prov['builder']}`.
`python3 tools/build_ppocr_cls.py --lines 6 --out DIR` makes the six-line version (12 MB, not committed).

## Weights
The ONNX model's constants; each BatchNormalization folded into its convolution. Not pruned.
The squeeze-excitation 1x1 convolutions run on 1x1 maps (after global average pooling) and are
listed as conv layers with input [C, 1, 1]; the final MatMul (200 -> 2) is the fc layer.

## Inputs (what they are, honestly)
The bundled sample data has no photo with text, so the {len(LINES)} text lines are made by the
builder: a 48-pixel-high crop of scikit-learn's real photo china.jpg with an English sentence
drawn on it in Pillow's bundled font (Aileron, 30 px), every second one rotated by 180 degrees;
then rapidocr's own preprocessing (height 48, aspect ratio kept, width at most 192,
(x / 255 - 0.5) / 0.5, zeros on the right up to 192). Every layer input is the real tensor
entering it, captured in onnxruntime. The classifier gets them right:

| text | rotated 180 | predicted (probability) |
|---|---|---|
{lines}

## Layers ({len(res.layers)})
| layer | kind | weight | groups | input | input zeros |
|---|---|---|---|---|---|
{rows}
"""
    write_text_file(os.path.join(out, "README.md"), text)


if __name__ == "__main__":
    main()
