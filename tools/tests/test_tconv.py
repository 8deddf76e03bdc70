"""ConvTranspose exported as a conv layer over the zero-inserted input: the recorded input
trace and the layer's product through the manifest geometry, against onnxruntime."""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)
sys.path.insert(0, HERE)

import tiny_model  # noqa: E402
from sresim_export import read_bundle, tconv  # noqa: E402

EXPORT = os.path.join(TOOLS, "export_onnx.py")


def run_cli(*args):
    return subprocess.run([sys.executable, EXPORT, *args], capture_output=True, text=True)


def build(path, tc_attrs, cin=4, cout=6, groups=2, k=(3, 2), integer=False, seed=0, hw=5):
    """x [N,3,hw,hw] -> conv0 1x1 (3->cin) -> Relu -> up: ConvTranspose(**tc_attrs) + bias -> y.
    Returns the weights; `up`'s input and output are graph outputs too (t, y)."""
    rng = np.random.default_rng(seed)
    draw = (lambda *s: rng.integers(-3, 4, s).astype(np.float32)) if integer else \
        (lambda *s: rng.standard_normal(s).astype(np.float32))
    w0, w = draw(cin, 3, 1, 1), draw(cin, cout // groups, *k)
    b = draw(cout)
    nodes = [helper.make_node("Conv", ["x", "w0"], ["c0"], name="conv0"),
             helper.make_node("Relu", ["c0"], ["t"]),
             helper.make_node("ConvTranspose", ["t", "w", "b"], ["y"], name="up", group=groups,
                              kernel_shape=list(k), **tc_attrs)]
    g = helper.make_graph(nodes, "tc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w, "w"),
                           numpy_helper.from_array(b, "b")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


def ort_run(path, x):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    y, t = sess.run(["y", "t"], {"x": x})
    return y.astype(np.float64), t.astype(np.float64)


CASES = [  # (attributes, kernel, groups, leading pads the test expects onnxruntime to apply)
    (dict(strides=[2, 2]), (2, 2), 1, (0, 0)),                         # PP-OCR's upsampling
    (dict(strides=[2, 3], pads=[1, 0, 0, 1]), (3, 2), 2, (1, 0)),
    (dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 0]), (3, 3), 2, (1, 1)),
    (dict(strides=[3, 2], dilations=[2, 1], pads=[0, 1, 2, 0]), (3, 2), 1, (0, 1)),
    (dict(strides=[1, 1], pads=[1, 1, 1, 1]), (3, 3), 2, (1, 1)),        # stride 1: no zeros inserted
    (dict(strides=[2, 2], pads=[3, 0, 0, 3]), (3, 3), 1, (3, 0)),        # pad > k-1: the rebuilt input is cropped
    (dict(strides=[2, 2], auto_pad="SAME_UPPER"), (3, 3), 2, (0, 0)),     # total pad 1: at the end
    (dict(strides=[2, 2], auto_pad="SAME_LOWER"), (3, 3), 2, (1, 1)),     # total pad 1: at the start
    (dict(strides=[2, 2], output_shape=[10, 10]), (3, 3), 1, (1, 1)),
    (dict(strides=[2, 2]), (2, 2), 2, (0, 0)),
]


def canvas(t, stride, kernel, dilation, heads, out_hw):
    """The full conv input written from first principles: t's pixels at stride, offset by
    d*(k-1) - head, zeros elsewhere, with the size whose stride-1 conv gives out_hw."""
    n, c, h, w = t.shape
    reach = [dilation[a] * (kernel[a] - 1) for a in range(2)]
    size = [out_hw[a] + reach[a] for a in range(2)]
    off = [reach[a] - heads[a] for a in range(2)]
    big = np.zeros((n, c, size[0] + 2 * 20, size[1] + 2 * 20))
    mask = np.zeros_like(big, dtype=bool)
    at = (slice(None), slice(None), slice(20 + off[0], 20 + off[0] + (h - 1) * stride[0] + 1, stride[0]),
          slice(20 + off[1], 20 + off[1] + (w - 1) * stride[1] + 1, stride[1]))
    big[at], mask[at] = t, True
    crop = (slice(None), slice(None), slice(20, 20 + size[0]), slice(20, 20 + size[1]))
    return big[crop], mask[crop]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_transposed_conv_trace_and_product(tmp_path, case):
    """Odd cases use small integers (the product must then be exact), even ones floats."""
    attrs, k, groups, heads = CASES[case]
    integer = case % 2 == 1
    path = str(tmp_path / "m.onnx")
    w, b = build(path, attrs, k=k, groups=groups, integer=integer, seed=case)
    rng = np.random.default_rng(10 + case)
    x = (rng.integers(0, 3, (2, 3, 5, 5)) if integer else rng.random((2, 3, 5, 5))).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = run_cli(path, "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "not exported" not in r.stderr
    m, tensors = read_bundle(str(tmp_path / "b"))
    assert [l["name"] for l in m["layers"]] == ["conv0", "up"]
    up = m["layers"][1]
    assert (up["stride"], up["dilation"], up["groups"]) == ([1, 1], attrs.get("dilations", [1, 1]), groups)
    assert (up["in_channels"], up["out_channels"], up["kernel"]) == (4, 6, list(k))
    assert m["provenance"]["not_exported"] == []
    y, t = ort_run(path, x)
    xb, wb = tensors["up.input"].astype(np.float64), tensors["up.weight"].astype(np.float64)
    ph, pw = up["padding"]
    assert list(xb.shape[1:]) == up["input_shape"]

    # the trace: onnxruntime's activation at stride, every other element zero
    stride = attrs.get("strides", [1, 1])
    full = np.pad(xb, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    want, pixel = canvas(t, stride, k, attrs.get("dilations", [1, 1]), heads, y.shape[2:])
    assert full.shape == want.shape
    assert np.all(full[~pixel] == 0)               # inserted zeros and padding: exactly zero
    np.testing.assert_allclose(full, want, rtol=1e-6, atol=1e-7)

    # the product through the manifest's geometry (independent loop convolution)
    got = tiny_model.conv2d(xb, wb, b, up["stride"], (ph, pw, ph, pw), groups=groups, dilation=up["dilation"])
    assert got.shape == y.shape
    if integer:
        np.testing.assert_array_equal(got, y)   # small integers: exact in float32 and float64
    else:
        np.testing.assert_allclose(got, y, atol=1e-4)
    info = m["provenance"]["transposed_convs"]["up"]
    assert info["zero_insertion"] == stride and info["max_abs_error_vs_onnxruntime"] < 1e-4


def test_weight_rearrangement_hand_example():
    # Cin 2, Cout 2, 2 groups (one channel each), 2x2 kernel; W'[o, 0] = W[o, 0] flipped
    w = np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2)
    got = tconv.to_conv_weight(w, 2)
    np.testing.assert_array_equal(got[0, 0], [[3, 2], [1, 0]])
    np.testing.assert_array_equal(got[1, 0], [[7, 6], [5, 4]])
    # one group: channels swap, [Cin=2, Cout=3] -> [3, 2]
    w = np.random.default_rng(0).standard_normal((2, 3, 2, 3)).astype(np.float32)
    got = tconv.to_conv_weight(w, 1)
    assert got.shape == (3, 2, 2, 3)
    assert got[2, 1, 0, 0] == w[1, 2, 1, 2]


@pytest.mark.parametrize("seed", range(6))
def test_weight_rearrangement_round_trip(seed):
    rng = np.random.default_rng(seed)
    g = int(rng.integers(1, 4))
    w = rng.standard_normal((g * int(rng.integers(1, 4)), int(rng.integers(1, 4)),
                             int(rng.integers(1, 4)), int(rng.integers(1, 4)))).astype(np.float32)
    c = tconv.to_conv_weight(w, g)
    assert c.shape[0] == w.shape[1] * g and c.shape[1] == w.shape[0] // g
    np.testing.assert_array_equal(tconv.from_conv_weight(c, g), w)


def test_one_pixel_hand_example():
    # a 2x2 input, 2x2 kernel, stride 2: each pixel scatters a 2x2 block of value * kernel
    t = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    w = np.array([[[[1.0, 10.0], [100.0, 1000.0]]]])
    xb, pad, info = tconv.conv_input(t, {"strides": [2, 2]}, (2, 2), (4, 4))
    assert pad == [1, 1] and info["padding_folded_into_input"] == [0, 0, 0, 0]
    np.testing.assert_array_equal(xb[0, 0], [[1, 0, 2], [0, 0, 0], [3, 0, 4]])
    out = tconv.conv2d(xb, tconv.to_conv_weight(w, 1), (1, 1), pad)
    want = np.kron(t[0, 0], w[0, 0])
    np.testing.assert_array_equal(out[0, 0], want)


def test_pruned_transposed_conv_is_written_back(tmp_path):
    """--prune: the bundle's pruned conv weight, mapped back, is what the model ran."""
    path = str(tmp_path / "m.onnx")
    build(path, dict(strides=[2, 2], pads=[1, 0, 0, 1]), k=(3, 3), groups=2)
    x = np.random.default_rng(3).random((1, 3, 5, 5)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = run_cli(path, "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "b"), "--prune",
                "magnitude", "--sparsity", "0.5", "--save-model", str(tmp_path / "run.onnx"))
    assert r.returncode == 0, r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    wb = t["up.weight"]
    assert np.mean(wb == 0) >= 0.5
    ran = {i.name: numpy_helper.to_array(i) for i in onnx.load(tmp_path / "run.onnx").graph.initializer}
    np.testing.assert_array_equal(tconv.to_conv_weight(ran["w"], 2), wb)
    y, _ = ort_run(str(tmp_path / "run.onnx"), x)
    ph, pw = m["layers"][1]["padding"]
    got = tconv.conv2d(t["up.input"], wb, (1, 1), (ph, pw), (1, 1), 2) + ran["b"][None, :, None, None]
    np.testing.assert_allclose(got, y, atol=1e-4)
