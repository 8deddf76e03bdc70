"""The network graph of a bundle: the ONNX -> graph conversion (netgraph.py), the numpy
executor (netexec.py) against onnxruntime, every committed bundle's graph against its
stored onnxruntime outputs, and sresim's float path against the same outputs (when a built
sresim binary is there)."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import tiny_model  # noqa: E402
from sresim_export import read_bundle  # noqa: E402
from sresim_export.export import export, network  # noqa: E402
from sresim_export.netexec import calibrate, run_graph  # noqa: E402
from sresim_export.schema import find_binary  # noqa: E402

import export_onnx  # noqa: E402


def rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def tracked_manifests():
    """workloads/*/manifest.json that git tracks (a user's untracked workloads/mynet is not
    a committed bundle); outside a git checkout, every one there is."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "workloads"], cwd=REPO,
                             capture_output=True, check=True).stdout.decode()
        paths = [p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [os.path.join("workloads", n, "manifest.json") for n in os.listdir(os.path.join(REPO, "workloads"))]
    return sorted(p.split("/")[1] for p in paths
                  if p.count("/") == 2 and p.endswith("/manifest.json") and os.path.exists(os.path.join(REPO, p)))


def bundles_with_graph():
    out = []
    for name in tracked_manifests():
        with open(os.path.join(REPO, "workloads", name, "manifest.json")) as f:
            if "graph" in json.load(f):
                out.append(name)
    return out


def test_only_tracked_bundles_are_listed(tmp_path, monkeypatch):
    """An untracked workloads/mynet (what docs/exporting.md's example writes) is not read."""
    root = tmp_path / "repo"
    for name in ("net", "mynet"):
        (root / "workloads" / name).mkdir(parents=True)
        (root / "workloads" / name / "manifest.json").write_text("{}")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "workloads/net/manifest.json"], cwd=root, check=True)
    monkeypatch.setattr(sys.modules[__name__], "REPO", str(root))
    assert tracked_manifests() == ["net"]


def mobile_like(path, seed=1):
    """A model with the ops of the committed MobileNets: a PaddlePaddle hard-swish
    (Add 3, Clip 0..6, Div 6, Mul), a squeeze-excitation block (GlobalAveragePool, 1x1 convs,
    per-channel bias as Add of a Reshape of a constant, HardSigmoid, Mul), a residual Sum,
    a ZeroPadding-style Pad, average and max pooling, Concat, a Transpose + Flatten of a 1x1
    map, a Shape-computed Reshape, MatMul + Add bias, Softmax."""
    rng = np.random.default_rng(seed)
    f = lambda *s: (0.5 * rng.standard_normal(s)).astype(np.float32)  # noqa: E731
    c = lambda name, v: helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(v), name))  # noqa: E731
    init = {"w1": f(6, 3, 3, 3), "b1": f(6), "se1": f(6, 6, 1, 1), "se1_off": f(6), "se2": f(6, 6, 1, 1),
            "w3": f(6, 6, 3, 3), "fcw": f(12, 4), "fcb": f(4)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        c("three", np.float32(3)), c("zero", np.float32(0)), c("six", np.float32(6)),
        helper.make_node("Add", ["c1", "three"], ["a3"]),
        helper.make_node("Clip", ["a3", "zero", "six"], ["cl"]),
        helper.make_node("Div", ["cl", "six"], ["dv"]),
        helper.make_node("Mul", ["c1", "dv"], ["hs"]),
        helper.make_node("GlobalAveragePool", ["hs"], ["gap"]),
        helper.make_node("Conv", ["gap", "se1"], ["s1"], name="se1"),
        c("off_shape", np.array([1, 6, 1, 1], np.int64)),
        helper.make_node("Reshape", ["se1_off", "off_shape"], ["off"]),
        helper.make_node("Add", ["s1", "off"], ["s1b"]),
        helper.make_node("Relu", ["s1b"], ["s1r"]),
        helper.make_node("Conv", ["s1r", "se2"], ["s2"], name="se2"),
        helper.make_node("HardSigmoid", ["s2"], ["gate"], alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["hs", "gate"], ["se"]),
        helper.make_node("Sum", ["se", "hs"], ["res"]),
        c("pads", np.array([0, 0, 0, 0, 0, 0, 1, 1], np.int64)),
        helper.make_node("Pad", ["res", "pads"], ["padded"], mode="constant"),
        helper.make_node("Conv", ["padded", "w3"], ["c3"], name="conv3", strides=[2, 2]),
        c("lo", np.float32(0)), c("hi", np.float32(6)),
        helper.make_node("Clip", ["c3", "lo", "hi"], ["r6"]),
        helper.make_node("MaxPool", ["r6"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["r6"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Concat", ["mp", "ap"], ["cat"], axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["g2"]),
        helper.make_node("Transpose", ["g2"], ["nhwc"], perm=[0, 2, 3, 1]),
        helper.make_node("Flatten", ["nhwc"], ["flat"], axis=1),
        helper.make_node("Shape", ["flat"], ["shp"]),
        c("st0", np.array([0], np.int64)), c("st1", np.array([1], np.int64)),
        helper.make_node("Slice", ["shp", "st0", "st1"], ["nb"]),
        c("minus1", np.array([-1], np.int64)),
        helper.make_node("Concat", ["nb", "minus1"], ["newshape"], axis=0),
        helper.make_node("Reshape", ["flat", "newshape"], ["flat2"]),
        helper.make_node("MatMul", ["flat2", "fcw"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "fcb"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=1),
    ]
    g = helper.make_graph(nodes, "mobile_like",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 9, 9])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 4])],
                          [numpy_helper.from_array(v, k) for k, v in init.items()])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def network_of(path, x, labels=None):
    res = export(path, x, {}, log=lambda *a: None)
    net = network(res, x, labels)
    manifest = {"layers": [e for e, _ in res.layers], **{k: v for k, v in net.items() if k != "arrays"}}
    tensors = {k: v for _, t in res.layers for k, v in t.items()}
    tensors.update(net["arrays"])
    return manifest, tensors, net, res


@pytest.mark.parametrize("which", ["tiny", "mobile_like"])
def test_numpy_executor_matches_onnxruntime(tmp_path, which):
    path = str(tmp_path / f"{which}.onnx")
    if which == "tiny":
        tiny_model.build(path, tiny_model.params())
        x = np.random.default_rng(2).standard_normal((5, 3, 12, 12)).astype(np.float32)
    else:
        mobile_like(path)
        x = np.random.default_rng(3).standard_normal((5, 3, 9, 9)).astype(np.float32)
    manifest, tensors, net, res = network_of(path, x)
    ops = {n["op"] for n in net["graph"]}
    if which == "mobile_like":
        # every rewrite happened: no constant operand, no Div/Shape/Transpose left
        assert {"HardSwish", "HardSigmoid", "Mul", "Add", "Pad", "Concat", "Reshape", "Softmax"} <= ops
        assert {"se1.bias", "fc.bias"} <= set(net["arrays"])
    if which == "tiny":
        assert "Pad" in ops   # conv3's asymmetric padding, folded into its captured input
    env = run_graph(manifest, tensors, x)
    ref = net["arrays"]["graph.reference"]
    assert rel_err(env[net["graph_output"]], ref) < 1e-4
    # the graph's layer inputs are the captured traces
    seen = {}
    run_graph(manifest, tensors, x, lambda name, v: seen.setdefault(name, v))
    for entry, arrays in res.layers:
        assert rel_err(seen[entry["name"]], arrays[entry["input"]]) < 1e-4, entry["name"]


def test_calibration_is_the_range_over_samples(tmp_path):
    path = str(tmp_path / "tiny.onnx")
    tiny_model.build(path, tiny_model.params())
    x = np.random.default_rng(4).standard_normal((6, 3, 12, 12)).astype(np.float32)
    manifest, tensors, net, res = network_of(path, x)
    one = calibrate(manifest, tensors, x[:1])
    both = calibrate(manifest, tensors, x)
    for entry, arrays in res.layers:
        v = arrays[entry["input"]]
        signed = bool(v.min() < 0)
        want = float(np.abs(v).max()) if signed else float(v.max())
        top, s = net["calibration"][entry["name"]]
        assert s == signed and abs(top - want) <= 1e-6 * want
        assert both[entry["name"]][0] >= one[entry["name"]][0]


def test_unsupported_op_names_the_node(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="fc"),
             helper.make_node("Neg", ["m"], ["y"], name="the_neg")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]),
                              opset_imports=[helper.make_opsetid("", 13)])
    path = str(tmp_path / "neg.onnx")
    onnx.save(model, path)
    with pytest.raises(ValueError, match="the_neg.*Neg"):
        network_of(path, np.ones((2, 4), np.float32))


def test_export_onnx_writes_the_graph_and_labels(tmp_path):
    path = str(tmp_path / "tiny.onnx")
    tiny_model.build(path, tiny_model.params())
    x = np.random.default_rng(5).standard_normal((3, 3, 12, 12)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "bundle"
    assert export_onnx.main([path, "--input", str(tmp_path / "x.npy"), "--out", str(out), "--labels", "2,0,1"]) == 0
    manifest, tensors = read_bundle(str(out))
    assert manifest["graph_input"] in tensors and tensors[manifest["labels"]].tolist() == [2, 0, 1]
    assert all("input_max" in l and "input_signed" in l for l in manifest["layers"])
    env = run_graph(manifest, tensors, tensors[manifest["graph_input"]])
    assert rel_err(env[manifest["graph_output"]], tensors["graph.reference"]) < 1e-4
    # without the graph the layer part is the same
    assert export_onnx.main([path, "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "plain"),
                             "--no-graph"]) == 0
    plain, plain_t = read_bundle(str(tmp_path / "plain"))
    assert "graph" not in plain
    for a, b in zip(plain["layers"], manifest["layers"]):
        assert a == {k: v for k, v in b.items() if k not in ("input_max", "input_signed")}
        assert plain_t[a["weight"]].tobytes() == tensors[b["weight"]].tobytes()
        assert plain_t[a["input"]].tobytes() == tensors[b["input"]].tobytes()


@pytest.mark.parametrize("name", bundles_with_graph())
def test_committed_graph_matches_onnxruntime(name):
    manifest, tensors = read_bundle(os.path.join(REPO, "workloads", name))
    x = tensors[manifest["graph_input"]]
    env = run_graph(manifest, tensors, x)
    assert rel_err(env[manifest["graph_output"]], tensors["graph.reference"]) < 1e-4


@pytest.mark.parametrize("name", bundles_with_graph())
def test_sresim_float_path_matches_onnxruntime(name, tmp_path):
    binary = find_binary()
    if binary is None:
        pytest.skip("no built sresim binary (cargo build)")
    out = tmp_path / "float.npy"
    run = subprocess.run([binary, "accuracy", "--workload", os.path.join(REPO, "workloads", name),
                          "--float-logits", str(out)], capture_output=True, text=True)
    if "unrecognized subcommand" in run.stderr or "unexpected argument '--float-logits'" in run.stderr:
        pytest.skip(f"{binary} predates `sresim accuracy --float-logits` (rebuild it)")
    assert run.returncode == 0, run.stderr
    manifest, tensors = read_bundle(os.path.join(REPO, "workloads", name))
    got = np.load(out)
    want = tensors["graph.reference"]
    assert got.shape == want.shape
    assert rel_err(got, want) < 1e-4
