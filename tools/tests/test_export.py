"""The exporter against a numpy forward pass of a small hand-built ONNX model."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)
sys.path.insert(0, HERE)

import tiny_model  # noqa: E402
from sresim_export import read_bundle  # noqa: E402

EXPORT = os.path.join(TOOLS, "export_onnx.py")
ATOL = 1e-4


@pytest.fixture(scope="module")
def model_and_inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tiny")
    p = tiny_model.params(seed=1)
    path = str(d / "tiny.onnx")
    tiny_model.build(path, p)
    x = np.random.default_rng(2).random((3, 3, 12, 12)).astype(np.float32)
    np.save(d / "x.npy", x)
    return d, p, path, x


def run_cli(*args):
    return subprocess.run([sys.executable, EXPORT, *args], capture_output=True, text=True)


def export_bundle(model_and_inputs, name, *extra):
    d, p, path, x = model_and_inputs
    out = d / name
    r = run_cli(path, "--input", str(d / "x.npy"), "--out", str(out), *extra)
    assert r.returncode == 0, r.stderr
    return read_bundle(str(out))


def bn_scale(p):
    return p["gamma"].astype(np.float64) / np.sqrt(p["var"].astype(np.float64) + 1e-5)


def unfold(p, t):
    """Model parameters whose forward pass equals the exported (folded, maybe pruned) model."""
    q = dict(p)
    q["w1"] = (t["conv1.weight"] / bn_scale(p)[:, None, None, None]).astype(np.float32)
    q["w2"], q["w3"], q["fc1"] = t["conv2.weight"], t["conv3.weight"], t["fc1.weight"]
    q["fc2"], q["fc3"] = t["fc2.weight"].T, t["fc3.weight"].T
    return q


def test_layers_geometry_and_order(model_and_inputs):
    m, t = export_bundle(model_and_inputs, "plain")
    names = [l["name"] for l in m["layers"]]
    assert names == ["conv1", "conv2", "conv3", "fc1", "fc2", "fc3"]
    c1, c2, c3, f1, f2, f3 = m["layers"]
    assert (c1["in_channels"], c1["out_channels"], c1["kernel"], c1["stride"], c1["padding"],
            c1["groups"], c1["input_shape"]) == (3, 8, [3, 3], [2, 2], [1, 1], 1, [3, 12, 12])
    assert (c2["groups"], c2["padding"], c2["input_shape"]) == (8, [1, 1], [8, 6, 6])
    # conv3 pads (0,0,1,1): symmetric part 0, one zero row/column folded below/right: 6 -> 7
    assert (c3["groups"], c3["padding"], c3["input_shape"]) == (2, [0, 0], [8, 7, 7])
    assert c3["onnx_pads"] == [0, 0, 1, 1] and c3["padding_folded_into_input"] == [0, 0, 1, 1]
    assert (f1["in_features"], f1["out_features"]) == (36, 10)
    assert (f2["in_features"], f2["out_features"]) == (10, 6)
    assert (f3["in_features"], f3["out_features"]) == (6, 3)
    assert m["samples"] == 3 and isinstance(m["source"], str)
    assert m["provenance"]["batchnorm_folded_into"] == ["conv1"]
    assert m["provenance"]["asymmetric_padding_folded"] == ["conv3"]
    for l in m["layers"]:
        assert t[l["weight"]].dtype == np.float32 and t[l["input"]].dtype == np.float32


def test_weights_match_initializers(model_and_inputs):
    _, p, _, _ = model_and_inputs
    m, t = export_bundle(model_and_inputs, "plain_w")
    np.testing.assert_allclose(t["conv1.weight"], p["w1"] * bn_scale(p)[:, None, None, None], rtol=1e-6)
    np.testing.assert_array_equal(t["conv2.weight"], p["w2"])
    np.testing.assert_array_equal(t["conv3.weight"], p["w3"])
    np.testing.assert_array_equal(t["fc1.weight"], p["fc1"])          # transB=1: stored [out, in]
    np.testing.assert_array_equal(t["fc2.weight"], p["fc2"].T)        # transB=0: B [in, out] transposed
    np.testing.assert_array_equal(t["fc3.weight"], p["fc3"].T)        # MatMul B from a Constant node


def test_captured_inputs_match_numpy_forward(model_and_inputs):
    _, p, _, x = model_and_inputs
    m, t = export_bundle(model_and_inputs, "plain_x")
    acts, _ = tiny_model.forward(x, p)
    for name in ["conv1", "conv2", "fc1", "fc2", "fc3"]:
        np.testing.assert_allclose(t[f"{name}.input"], acts[name], atol=ATOL, err_msg=name)
    padded = np.pad(acts["conv3"], ((0, 0), (0, 0), (0, 1), (0, 1)))
    np.testing.assert_allclose(t["conv3.input"], padded, atol=ATOL)
    assert np.all(t["conv3.input"][:, :, 6, :] == 0) and np.all(t["conv3.input"][:, :, :, 6] == 0)
    # the folded input with padding 0 gives the layer's real output size: (7 - 2) // 2 + 1 = 3
    assert (7 - 2) // 2 + 1 == 3


def test_no_fold_keeps_raw_conv_weight(model_and_inputs):
    _, p, _, _ = model_and_inputs
    m, t = export_bundle(model_and_inputs, "nofold", "--no-fold-bn")
    np.testing.assert_array_equal(t["conv1.weight"], p["w1"])
    assert m["provenance"].get("batchnorm_folded_into") is None


@pytest.mark.parametrize("method,target", [("magnitude", 0.7), ("ssl", 0.6)])
def test_pruned_model_activations_are_captured(model_and_inputs, method, target):
    _, p, _, x = model_and_inputs
    m, t = export_bundle(model_and_inputs, f"pruned_{method}", "--prune", method, "--sparsity", str(target))
    q = unfold(p, t)
    acts, _ = tiny_model.forward(x, q)
    dense, _ = tiny_model.forward(x, p)
    for name in ["conv2", "conv3", "fc1", "fc2", "fc3"]:
        got = t[f"{name}.input"]
        want = acts[name] if name != "conv3" else np.pad(acts[name], ((0, 0), (0, 0), (0, 1), (0, 1)))
        np.testing.assert_allclose(got, want, atol=ATOL, err_msg=name)
    # and they really differ from the unpruned model's activations
    assert not np.allclose(t["fc1.input"], dense["fc1"], atol=1e-3)
    assert m["provenance"]["pruning"]["method"] == method
    for l in m["layers"]:
        s = float(np.mean(t[l["weight"]] == 0))
        assert s >= target - 1e-9, (l["name"], s)
        assert m["provenance"]["pruning"]["per_layer"][l["name"]]["after"] == pytest.approx(s, abs=1e-6)


def test_magnitude_sparsity_is_exact(model_and_inputs):
    m, t = export_bundle(model_and_inputs, "mag", "--prune", "magnitude", "--sparsity", "0.7")
    for l in m["layers"]:
        w = t[l["weight"]]
        assert int(np.sum(w == 0)) == int(np.ceil(0.7 * w.size - 1e-9)), l["name"]


def test_ssl_zeros_are_whole_filters_or_rows(model_and_inputs):
    m, t = export_bundle(model_and_inputs, "ssl", "--prune", "ssl", "--sparsity", "0.6")
    for l in m["layers"]:
        w = t[l["weight"]]
        g = l.get("groups", 1)
        v = w.reshape(g, w.shape[0] // g, -1)                  # [G, filters, rows]
        dead_f = np.all(v == 0, axis=2, keepdims=True)          # whole filter zero
        dead_r = np.all(v == 0, axis=1, keepdims=True)          # whole row zero
        assert np.array_equal(v == 0, dead_f | dead_r), l["name"]
        # overshoot at most one group (the larger of a filter or a row)
        assert np.mean(w == 0) < 0.6 + max(v.shape[1], v.shape[2]) / w.size + 1e-9


def test_prune_exclude_leaves_layer_dense(model_and_inputs):
    _, p, _, _ = model_and_inputs
    m, t = export_bundle(model_and_inputs, "excl", "--prune", "magnitude", "--sparsity", "0.5",
                         "--prune-exclude", "conv1,fc3")
    assert np.all(t["fc3.weight"] != 0) and np.all(t["conv1.weight"] != 0)
    assert np.mean(t["fc1.weight"] == 0) == pytest.approx(0.5)
    d, _, path, _ = model_and_inputs
    r = run_cli(path, "--input", str(d / "x.npy"), "--out", str(d / "excl2"), "--prune", "ssl",
                "--sparsity", "0.5", "--prune-exclude", "conv9")
    assert r.returncode == 2 and r.stderr.startswith("error: --prune-exclude: no layer named conv9")


def test_image_inputs(model_and_inputs, tmp_path):
    from PIL import Image

    _, p, path, _ = model_and_inputs
    rng = np.random.default_rng(5)
    files = []
    for i in range(2):
        f = tmp_path / f"img{i}.png"
        Image.fromarray(rng.integers(0, 256, (20, 16, 3), dtype=np.uint8)).save(f)
        files += ["--input", str(f)]
    r = run_cli(path, *files, "--out", str(tmp_path / "b"), "--mean", "0.5", "0.5", "0.5", "--std", "0.25", "0.25", "0.25")
    assert r.returncode == 0, r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    x = t["conv1.input"]
    assert x.shape == (2, 3, 12, 12)       # resized to the model's 12x12
    # pixel v -> (v/255 - 0.5) / 0.25 lies in [-2, 2]
    assert x.min() >= -2 - 1e-6 and x.max() <= 2 + 1e-6
    assert m["provenance"]["inputs"]["files"] == ["img0.png", "img1.png"]


def test_bad_input_is_one_line_error(model_and_inputs, tmp_path):
    d, _, path, _ = model_and_inputs
    np.save(tmp_path / "bad.npy", np.zeros((2, 5), np.float32))
    r = run_cli(path, "--input", str(tmp_path / "bad.npy"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1
    r = run_cli(str(tmp_path / "missing.onnx"), "--input", str(d / "x.npy"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.startswith("error: ")
    assert not os.path.exists(tmp_path / "o" / "manifest.json")


def test_nhwc_model_with_same_upper_padding(tmp_path):
    """x [N,12,12,3] NHWC -> Transpose -> Conv 3x3 stride 2 auto_pad SAME_UPPER -> Relu -> Flatten -> Gemm.
    SAME_UPPER on 12 with k=3, s=2: out 6, total pad (6-1)*2 + 3 - 12 = 1, all after ->
    padding [0, 0] and one zero row/column folded below/right: captured input 13x13."""
    from onnx import TensorProto, helper, numpy_helper
    import onnx
    from PIL import Image

    rng = np.random.default_rng(9)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    fc = rng.standard_normal((5, 144)).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["xt", "w"], ["c"], name="conv", strides=[2, 2], auto_pad="SAME_UPPER"),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc", transB=1)]
    g = helper.make_graph(nodes, "nhwc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 12, 12, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "m.onnx")
    pixels = rng.integers(0, 256, (12, 12, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(tmp_path / "img.png")
    r = run_cli(str(tmp_path / "m.onnx"), "--input", str(tmp_path / "img.png"), "--layout", "nhwc",
                "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "asymmetric pads" in r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    conv = m["layers"][0]
    assert (conv["padding"], conv["input_shape"], conv["onnx_pads"]) == ([0, 0], [3, 13, 13], [0, 0, 1, 1])
    x = pixels.astype(np.float32).transpose(2, 0, 1)[None] / 255
    np.testing.assert_allclose(t["conv.input"], np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1))), atol=1e-6)
    relu = np.maximum(tiny_model.conv2d(x, w, None, (2, 2), (0, 0, 1, 1)), 0)
    np.testing.assert_allclose(t["fc.input"], relu.reshape(1, -1), atol=ATOL)


def test_every_unmapped_weight_bearing_node_is_noted(tmp_path):
    """x [N,6] -> fc (Gemm) -> Einsum with a constant -> MatMul(constant, activation) -> Relu:
    the Gemm is exported; the Einsum and the left-constant MatMul are noted and listed, the
    Relu (no weight) is not."""
    from onnx import TensorProto, helper, numpy_helper
    import onnx

    rng = np.random.default_rng(7)
    fc, e, left = (rng.standard_normal(s).astype(np.float32) for s in ((4, 6), (4, 3), (2, 1)))
    nodes = [helper.make_node("Gemm", ["x", "fc"], ["a"], name="fc", transB=1),
             helper.make_node("Einsum", ["a", "e"], ["b"], name="mix", equation="ij,jk->ik"),
             helper.make_node("MatMul", ["left", "b"], ["c"], name="lm"),
             helper.make_node("Relu", ["c"], ["y"])]
    g = helper.make_graph(nodes, "n", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in (("fc", fc), ("e", e), ("left", left))])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "m.onnx")
    np.save(tmp_path / "x.npy", rng.standard_normal((1, 6)).astype(np.float32))
    r = run_cli(str(tmp_path / "m.onnx"), "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "note: mix (Einsum) not exported: Einsum is not mapped" in r.stderr
    assert "note: lm (MatMul) not exported: MatMul with a constant left operand is not mapped" in r.stderr
    m, _ = read_bundle(str(tmp_path / "b"))
    assert [l["name"] for l in m["layers"]] == ["fc"]
    assert [(e["node"], e["op"]) for e in m["provenance"]["not_exported"]] == [("mix", "Einsum"), ("lm", "MatMul")]


def test_the_package_imports_without_torch():
    # from_torch imports torch only when called: CI, which has no torch, imports the package
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import sresim_export; "
            "print(callable(sresim_export.from_torch), 'torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code, TOOLS], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False"]
