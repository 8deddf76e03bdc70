"""What torch.onnx writes for a transformer, without torch: the ViT of
fixtures/make_torch_vit.py (opset 17) exports to the committed bundle
tests/fixtures/torch-vit; its projections over the sequence are fc layers with `tokens`,
its attention products MatMul nodes off the crossbar, its LayerNormalization, GELU (as
Div, Erf, Add, Mul), class token (Concat of a Constant) and positional embedding (Add of
a Constant) graph nodes, and the graph computes what onnxruntime does. sresim opens it,
reports the attention MatMuls as off the crossbar, and its float path matches onnxruntime.
"""

import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
FX = os.path.join(HERE, "fixtures")
MODEL = os.path.join(FX, "torch_vit.onnx")
INPUTS = os.path.join(FX, "torch_vit_inputs.npy")
COMMITTED = os.path.join(REPO, "tests", "fixtures", "torch-vit")
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import read_bundle  # noqa: E402
from sresim_export.netexec import run_graph  # noqa: E402
from sresim_export.schema import find_binary  # noqa: E402
from test_torch_fixture import assert_same_bundle, export as export_model  # noqa: E402

with open(os.path.join(FX, "torch_vit_labels.txt")) as f:
    LABELS = f.read().strip()


def export(out, *extra, model=MODEL):
    return export_model(out, *extra, model=model, inputs=INPUTS)


def test_the_fixture_is_torchs_transformer():
    m = onnx.load(MODEL)
    assert m.producer_name == "pytorch" and m.opset_import[0].version == 17
    ops = [n.op_type for n in m.graph.node]
    for op in ("LayerNormalization", "Erf", "Softmax", "Expand", "Gather"):
        assert op in ops, op
    # 6 projections by a constant and 2 products of two activations
    assert ops.count("MatMul") == 8


def test_the_committed_bundle_is_what_the_exporter_writes(tmp_path):
    r = export(tmp_path / "b", "--labels", LABELS)
    assert r.returncode == 0, r.stderr
    assert_same_bundle(tmp_path / "b", COMMITTED)


def test_projections_are_token_layers_and_attention_stays_off_the_crossbar():
    m, t = read_bundle(COMMITTED)
    kinds = [(l["kind"], l.get("tokens")) for l in m["layers"]]
    # patch conv, Q, K, V, output, fc1, fc2 over 10 tokens, the head on the class token
    assert kinds == [("conv", None)] + [("fc", 10)] * 6 + [("fc", None)]
    for l in m["layers"]:
        if l.get("tokens"):
            assert t[l["input"]].shape == (12, 10, l["in_features"])
    ops = [n["op"] for n in m["graph"]]
    assert ops.count("layer") == 8 and ops.count("MatMul") == 2
    for op in ("LayerNormalization", "Transpose", "Gather", "Constant", "Div", "Erf", "Softmax"):
        assert op in ops, op
    # every Constant names a float array of the bundle
    for n in m["graph"]:
        if n["op"] == "Constant":
            assert t[n["value"]].dtype == np.float32
    # the class token: a Constant of batch 1 concatenated before the 9 patch tokens
    cat = next(n for n in m["graph"] if n["op"] == "Concat")
    assert t[cat["inputs"][0]].shape == (1, 1, 16) and cat["axis"] == 1
    x = t[m["graph_input"]]
    want = ort.InferenceSession(MODEL).run(None, {"x": x})[0]
    got = run_graph(m, t, x)[m["graph_output"]]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(np.argmax(want, 1), [int(v) for v in LABELS.split(",")])


def test_unsupported_transformer_attributes_are_refused_in_one_line(tmp_path):
    m = onnx.load(MODEL)
    ln = next(n for n in m.graph.node if n.op_type == "LayerNormalization")
    ln.attribute.append(onnx.helper.make_attribute("stash_type", 0))
    bad = tmp_path / "bad.onnx"
    onnx.save(m, bad)
    r = export(tmp_path / "b", "--labels", LABELS, model=str(bad))
    assert r.returncode != 0
    line = r.stderr.strip().splitlines()[-1]
    assert "(LayerNormalization): attribute stash_type 0 is not supported" in line, r.stderr
    assert not (tmp_path / "b").exists()
    # without labels the layer traces are written alone, with that line
    r = export(tmp_path / "c", model=str(bad))
    assert r.returncode == 0, r.stderr
    assert "no network graph written (layer traces only)" in r.stderr
    m2, _ = read_bundle(str(tmp_path / "c"))
    assert "graph" not in m2 and len(m2["layers"]) == 8


def test_sresim_runs_the_bundle_and_its_float_path_matches_onnxruntime(tmp_path):
    binary = find_binary()
    if binary is None:
        pytest.skip("no built sresim binary (cargo build)")
    r = subprocess.run([binary, "run", "--workload", COMMITTED, "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "2 activation-by-activation MatMul ops run off the crossbar" in r.stderr
    assert "3200 multiply-accumulates a sample" in r.stderr   # 2 x (2 heads x 10 x 8 x 10)
    out = tmp_path / "float.npy"
    r = subprocess.run([binary, "accuracy", "--workload", COMMITTED, "--float-logits", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m, t = read_bundle(COMMITTED)
    np.testing.assert_allclose(np.load(out), t["graph.reference"], rtol=1e-4, atol=1e-5)


def test_a_sequence_of_one_token_is_a_token_layer_too(tmp_path):
    """[N, 1, D] x [D, E] + bias: an fc layer with tokens 1 whose graph keeps the token axis."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1, 3])
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="proj"),
             helper.make_node("Add", ["m", "b"], ["y"], name="bias")]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w, b]),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = str(tmp_path / "one.onnx")
    onnx.save(model, path)
    inputs = tmp_path / "x.npy"
    np.save(inputs, rng.standard_normal((3, 1, 4)).astype(np.float32))
    r = export_model(tmp_path / "b", "--labels", "0,1,2", model=path, inputs=str(inputs))
    assert r.returncode == 0, r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    assert m["layers"][0]["tokens"] == 1 and t[m["layers"][0]["input"]].shape == (3, 1, 4)
    got = run_graph(m, t, t[m["graph_input"]])[m["graph_output"]]
    np.testing.assert_allclose(got, t["graph.reference"], rtol=1e-5, atol=1e-6)
