"""Quantized models from onnxruntime's quantize_static (QDQ and QOperator, per tensor and per
channel): the weights are dequantized exactly, and each layer's bundle input times its
bundle weight gives the quantized model's own layer output. Dynamic quantization and
weights whose scale is computed are refused layer by layer, saying why."""

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
# layer -> (float initializer, axis of its per-channel scale in the stored layout)
WEIGHTS = {"conv1": ("w1", 0), "up": ("w2", 1), "fc1": ("fc", 0), "fc2": ("mm", 1)}


def run_cli(*args):
    return subprocess.run([sys.executable, EXPORT, *args], capture_output=True, text=True)


def float_model(path):
    """x [N,3,8,8] -> conv1 (3->4, 3x3, s2, p1) -> Relu -> up: ConvTranspose (2 groups, s2)
    -> Relu -> MaxPool 4 -> Flatten -> fc1 Gemm transB=1 (16->5) -> Relu -> fc2 MatMul (5->3)."""
    rng = np.random.default_rng(0)
    w = {"w1": rng.standard_normal((4, 3, 3, 3)), "w2": rng.standard_normal((4, 2, 2, 2)),
         "fc": rng.standard_normal((5, 16)), "mm": rng.standard_normal((5, 3))}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("ConvTranspose", ["r1", "w2"], ["c2"], name="up", strides=[2, 2], group=2),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[4, 4], strides=[4, 4]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["g"], name="fc1", transB=1),
             helper.make_node("Relu", ["g"], ["r3"]),
             helper.make_node("MatMul", ["r3", "mm"], ["y"], name="fc2")]
    g = helper.make_graph(nodes, "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
                          [numpy_helper.from_array(v, k) for k, v in w.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return w


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    d = tmp_path_factory.mktemp("quant")
    w = float_model(str(d / "f.onnx"))
    x = np.random.default_rng(1).random((3, 3, 8, 8)).astype(np.float32)
    np.save(d / "x.npy", x)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": s[None]} for s in x])

        def get_next(self):
            return next(self.it, None)

    # reduce_range (7-bit weights) keeps onnxruntime's u8s8 kernels on x86 without VNNI from
    # saturating their 16-bit pair sums, so its QLinearConv output is the exact integer
    # product rounded once, which the comparison below relies on
    out = {}
    for fmt in ("QDQ", "QOperator"):
        for per_channel in (False, True):
            path = str(d / f"{fmt}_{per_channel}.onnx")
            quantize_static(str(d / "f.onnx"), path, Reader(), quant_format=getattr(QuantFormat, fmt),
                            per_channel=per_channel, weight_type=QuantType.QInt8,
                            activation_type=QuantType.QUInt8, reduce_range=True)
            out[(fmt, per_channel)] = path
    return d, w, x, out


def node_by_prefix(model, name):
    return next(n for n in model.graph.node if n.name in (name, f"{name}_quant"))


def dequantized(model, float_name, axis):
    """(q - zero) * scale from the quantized model's initializers, written out here."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    q = inits[f"{float_name}_quantized"].astype(np.int64)
    scale, zero = inits[f"{float_name}_scale"].astype(np.float64), inits[f"{float_name}_zero_point"].astype(np.int64)
    if scale.size > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return ((q - zero) * scale).astype(np.float32), scale


def bundle_layout(name, w):
    if name == "up":
        return tconv.to_conv_weight(w, 2)
    return w.T if name == "fc2" else w


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("per_channel", [False, True])
def test_weights_dequantized_exactly(models, tmp_path, fmt, per_channel):
    d, w, _, paths = models
    r = run_cli(paths[(fmt, per_channel)], "--input", str(d / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "not exported" not in r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    q = onnx.load(paths[(fmt, per_channel)])
    layers = {l["name"].replace("_quant", ""): l for l in m["layers"]}
    assert list(layers) == ["conv1", "up", "fc1", "fc2"]
    deq = m["provenance"].get("dequantized", {})
    for name, (float_name, axis) in WEIGHTS.items():
        got = t[layers[name]["weight"]]
        if fmt == "QOperator" and name == "up":   # QOperator leaves ConvTranspose in float
            np.testing.assert_array_equal(got, bundle_layout(name, w[float_name]))
            continue
        want, scale = dequantized(q, float_name, axis)
        np.testing.assert_array_equal(got, bundle_layout(name, want))
        # and it is the float weight to within half a quantization step
        err = np.abs(bundle_layout(name, want - w[float_name]))
        assert np.all(err <= bundle_layout(name, np.broadcast_to(scale, want.shape)) * 0.5 + 1e-6)
        assert ("per channel" in deq[layers[name]["name"]]["weight"]) == per_channel


def _ort_outputs(path, x, names):
    model = onnx.load(path)
    types = {}
    for node in model.graph.node:
        for o in node.output:
            types[o] = TensorProto.UINT8 if node.op_type in ("QLinearConv", "QLinearMatMul", "QGemm",
                                                              "QuantizeLinear") else TensorProto.FLOAT
    for n in names:
        model.graph.output.append(helper.make_tensor_value_info(n, types[n], None))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip(names, sess.run(names, {"x": x})))


def _product(layer, xb, wb):
    if layer["kind"] == "fc":
        return xb.astype(np.float64) @ wb.astype(np.float64).T
    p = layer["padding"]
    return tiny_model.conv2d(xb, wb, None, layer["stride"], (p[0], p[1], p[0], p[1]), groups=layer["groups"])


@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
def test_layer_product_is_the_quantized_layer_output(models, tmp_path, fmt):
    d, _, x, paths = models
    path = paths[(fmt, True)]
    r = run_cli(path, "--input", str(d / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    q = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in q.graph.initializer}
    nodes = {name: node_by_prefix(q, name) for name in WEIGHTS}
    outs = _ort_outputs(path, x, [n.output[0] for n in nodes.values()])
    for layer in m["layers"]:
        node = nodes[layer["name"].replace("_quant", "")]
        got = _product(layer, t[layer["input"]], t[layer["weight"]])
        y = outs[node.output[0]]
        if node.op_type in ("QLinearConv", "QLinearMatMul", "QGemm"):
            s_at = 7 if node.op_type == "QGemm" else 6
            ys, yz = float(inits[node.input[s_at]]), int(inits[node.input[s_at + 1]])
            unclipped = (y != 0) & (y != 255)
            deq = (y.astype(np.float64) - yz) * ys
            assert unclipped.sum() >= 3   # (Relu is fused: negative outputs clip to 0)
            # integer accumulation, then one rounding to the output scale
            assert np.all(np.abs(deq - got)[unclipped] <= ys * 0.51), node.name
        else:
            np.testing.assert_allclose(got, y, atol=1e-4 * max(1.0, float(np.abs(y).max())), err_msg=node.name)
    # QDQ inputs lie on their quantization grid (they are the dequantized activations)
    if fmt == "QDQ":
        fc2_in = t[m["layers"][3]["input"]].astype(np.float64)
        scale = float(inits["r3_scale"])
        np.testing.assert_allclose(fc2_in / scale, np.round(fc2_in / scale), atol=1e-3)


def test_pruning_a_quantized_weight_writes_zero_points(models, tmp_path):
    d, _, _, paths = models
    path = paths[("QDQ", True)]
    r = run_cli(path, "--input", str(d / "x.npy"), "--out", str(tmp_path / "b"), "--prune", "magnitude",
                "--sparsity", "0.5", "--save-model", str(tmp_path / "run.onnx"))
    assert r.returncode == 0, r.stderr
    _, t = read_bundle(str(tmp_path / "b"))
    ran = onnx.load(tmp_path / "run.onnx")
    orig = onnx.load(path)
    for name, (float_name, axis) in WEIGHTS.items():
        wb = t[f"{name}.weight"]
        assert np.mean(wb == 0) >= 0.5
        want, _ = dequantized(ran, float_name, axis)
        np.testing.assert_array_equal(bundle_layout(name, want), wb)
        before, _ = dequantized(orig, float_name, axis)
        kept = bundle_layout(name, want) != 0
        np.testing.assert_array_equal(bundle_layout(name, before)[kept], wb[kept])


def test_dynamic_quantization_is_named_and_listed(models, tmp_path):
    from onnxruntime.quantization import quantize_dynamic

    d, _, _, _ = models
    part, full = str(tmp_path / "part.onnx"), str(tmp_path / "full.onnx")
    quantize_dynamic(str(d / "f.onnx"), part, op_types_to_quantize=["MatMul"])
    r = run_cli(part, "--input", str(d / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "note: " in r.stderr and "dynamic quantization (MatMulInteger)" in r.stderr
    m, _ = read_bundle(str(tmp_path / "b"))
    assert [l["name"] for l in m["layers"]] == ["conv1", "up"]      # fc1 (Gemm) and fc2 became MatMulInteger
    listed = m["provenance"]["not_exported"]
    assert [e["op"] for e in listed] == ["MatMulInteger"] * 2 and all("scale" in e["reason"] for e in listed)
    assert r.stderr.count(") not exported: ") == 2   # one note per MatMulInteger node

    quantize_dynamic(str(d / "f.onnx"), full, op_types_to_quantize=["Conv", "MatMul", "Gemm"])
    r = run_cli(full, "--input", str(d / "x.npy"), "--out", str(tmp_path / "c"))
    assert r.returncode == 0, r.stderr      # the ConvTranspose stays float: it alone is exported
    assert "dynamic quantization (ConvInteger)" in r.stderr
    m, _ = read_bundle(str(tmp_path / "c"))
    assert [l["name"] for l in m["layers"]] == ["up"]
    assert [e["op"] for e in m["provenance"]["not_exported"]] == ["ConvInteger", "MatMulInteger", "MatMulInteger"]


def _computed_scale_model(path, with_fc):
    rng = np.random.default_rng(4)
    wq = rng.integers(-8, 8, (2, 3, 1, 1)).astype(np.int8)
    fc = rng.standard_normal((4, 18)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["s0", "two"], ["s"]),
             helper.make_node("DequantizeLinear", ["wq", "s"], ["w"], name="dq"),
             helper.make_node("Conv", ["x", "w"], ["c"], name="conv")]
    if with_fc:
        nodes += [helper.make_node("Flatten", ["c"], ["f"]),
                  helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc", transB=1)]
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(np.float32(0.1), "s0"),
             numpy_helper.from_array(np.float32(2), "two")]
    if with_fc:
        inits.append(numpy_helper.from_array(fc, "fc"))
    g = helper.make_graph(nodes, "s", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 3, 3])],
                          [helper.make_tensor_value_info("y" if with_fc else "c", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def test_computed_scale_is_refused_as_quantization(tmp_path):
    """A DequantizeLinear whose scale is computed: the conv is noted, the fc exported; with
    no fc, nothing is left and the error says why."""
    np.save(tmp_path / "x.npy", np.ones((1, 3, 3, 3), np.float32))
    _computed_scale_model(str(tmp_path / "m.onnx"), with_fc=True)
    r = run_cli(str(tmp_path / "m.onnx"), "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert "note: conv (Conv) not exported: quantized weight (DequantizeLinear dq): s not a constant" in r.stderr
    m, _ = read_bundle(str(tmp_path / "b"))
    assert [l["name"] for l in m["layers"]] == ["fc"]
    assert m["provenance"]["not_exported"][0]["node"] == "conv"

    _computed_scale_model(str(tmp_path / "n.onnx"), with_fc=False)
    r = run_cli(str(tmp_path / "n.onnx"), "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "c"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "no layer could be exported: conv (Conv): quantized weight" in r.stderr
    assert not os.path.exists(tmp_path / "c")
