"""PaddleOCR v4's text detector (ch_PP-OCRv4_det_infer.onnx from the PyPI package
rapidocr-onnxruntime, tools/requirements.txt): 62 Conv and 2 ConvTranspose layers, all
exported; the transposed ones reproduce onnxruntime's output through the bundle geometry."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)
sys.path.insert(0, HERE)

import tiny_model  # noqa: E402
from sresim_export import read_bundle  # noqa: E402

EXPORT = os.path.join(TOOLS, "export_onnx.py")
SPEC = importlib.util.find_spec("rapidocr_onnxruntime")
pytestmark = pytest.mark.skipif(SPEC is None, reason="rapidocr-onnxruntime (the detector's package, "
                                "in tools/requirements.txt) is not installed")


@pytest.fixture(scope="module")
def det(tmp_path_factory):
    from PIL import Image
    from sklearn.datasets import load_sample_image

    d = tmp_path_factory.mktemp("det")
    Image.fromarray(load_sample_image("china.jpg")).save(d / "china.png")
    model = os.path.join(os.path.dirname(SPEC.origin), "models", "ch_PP-OCRv4_det_infer.onnx")
    return d, model


def run_cli(*args):
    return subprocess.run([sys.executable, EXPORT, *args], capture_output=True, text=True)


def test_dynamic_size_without_size_says_pass_size(det):
    d, model = det
    r = run_cli(model, "--input", str(d / "china.png"), "--out", str(d / "nosize"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: ") and "dynamic height/width: pass --size H W" in r.stderr
    assert not os.path.exists(d / "nosize")


def test_both_transposed_convs_exported_and_match_onnxruntime(det):
    d, model = det
    norm = ["--mean", "0.485", "0.456", "0.406", "--std", "0.229", "0.224", "0.225"]
    r = run_cli(model, "--input", str(d / "china.png"), "--size", "64", "96", *norm, "--out", str(d / "b"))
    assert r.returncode == 0, r.stderr
    assert "not exported" not in r.stderr
    assert r.stdout.strip().endswith("64 layers, 1 sample")
    m, t = read_bundle(str(d / "b"))
    names = [l["name"] for l in m["layers"]]
    tc = [n for n in names if "ConvTranspose" in n]
    assert tc == ["p2o.ConvTranspose.0", "p2o.ConvTranspose.2"] and len(names) == 64
    assert m["provenance"]["not_exported"] == []
    first = m["layers"][names.index(tc[0])]
    # the 16x24 map (1/4 of 64x96), zero-inserted to 31x47, padding 1: a 32x48 output
    assert (first["input_shape"], first["stride"], first["padding"]) == ([24, 31, 47], [1, 1], [1, 1])
    x = t[f"{tc[0]}.input"]
    assert np.all(x[:, :, 1::2, :] == 0) and np.all(x[:, :, :, 1::2] == 0)

    # onnxruntime's ConvTranspose output, from the model as shipped
    onnx_model = onnx.load(model)
    out = next(n.output[0] for n in onnx_model.graph.node if n.name == tc[0])
    onnx_model.graph.output.append(helper.make_tensor_value_info(out, onnx.TensorProto.FLOAT, None))
    sess = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    inp = t[f"{names[0]}.input"]               # the first conv's input is the preprocessed image
    (y,) = sess.run([out], {sess.get_inputs()[0].name: inp})
    got = tiny_model.conv2d(x, t[f"{tc[0]}.weight"], None, (1, 1), (1, 1, 1, 1))
    np.testing.assert_allclose(got, y, atol=1e-4 * max(1.0, float(np.abs(y).max())))
    for name in tc:
        assert m["provenance"]["transposed_convs"][name]["max_abs_error_vs_onnxruntime"] < 1e-3
