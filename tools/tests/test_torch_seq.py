"""Standard PyTorch transformers, without torch: the eight fixtures of
fixtures/make_torch_seq.py (nn.TransformerEncoderLayer, nn.TransformerEncoder,
nn.MultiheadAttention and transformers' BERT, each trained on the digits-as-tokens task and
written by both of torch's exporters) go through tools/export_onnx.py unedited. Their
projections over the 64 pixel tokens are fc layers with `tokens` (the attention's output
projection over [T*N, D] too), the embedding is a lookup of the int64 ids, mean pooling a
GlobalAveragePool, and the graph computes onnxruntime's outputs on batches of samples;
sresim checks, runs and scores them with the float top-1 onnxruntime gets."""

import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
FX = os.path.join(HERE, "fixtures")
INPUTS = os.path.join(FX, "seq_inputs.npy")
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import read_bundle  # noqa: E402
from sresim_export.layout import Batch, constant_first, find_batch_axes, first_shape  # noqa: E402
from sresim_export.netexec import run_graph  # noqa: E402
from sresim_export.schema import find_binary  # noqa: E402
from test_torch_fixture import export  # noqa: E402

with open(os.path.join(FX, "seq_labels.txt")) as f:
    LABELS = f.read().strip()
Y = np.array([int(v) for v in LABELS.split(",")])

# fixture: (crossbar layers, tokens of the projections, the exporter's opset)
FIXTURES = {
    "seq_layer": (5, 64, 17), "seq_encoder": (9, 65, 17), "seq_mha": (3, 64, 14), "seq_bert": (14, 64, 17),
    "seq_layer_dynamo": (5, 64, None), "seq_encoder_dynamo": (9, 65, None),
    "seq_mha_dynamo": (3, 64, None), "seq_bert_dynamo": (14, 64, None),
}


def model(name):
    return os.path.join(FX, f"{name}.onnx")


def ort_logits(name, x=None):
    x = np.load(INPUTS) if x is None else x
    return ort.InferenceSession(model(name)).run(None, {"input": x})[0]


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Every fixture exported with its labels: {name: (bundle dir, stderr)}."""
    out = {}
    for name in FIXTURES:
        d = tmp_path_factory.mktemp(name) / "b"
        r = export(d, "--labels", LABELS, model=model(name), inputs=INPUTS)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        out[name] = (str(d), r.stderr)
    return out


def test_the_fixtures_are_what_torch_writes_unedited():
    for name, (_, _, opset) in FIXTURES.items():
        m = onnx.load(model(name))
        assert m.producer_name == "pytorch", name
        if opset:
            assert m.opset_import[0].version == opset, name
        x = next(i for i in m.graph.input if i.name == "input")
        assert x.type.tensor_type.elem_type == onnx.TensorProto.INT64, name
        ops = {n.op_type for n in m.graph.node}
        assert "Gather" in ops and "Softmax" in ops, name
    ts = {n.op_type for n in onnx.load(model("seq_mha")).graph.node}
    # opset 14: LayerNorm written out, mean pooling as ReduceMean, the heads' reshapes
    assert {"ReduceMean", "Pow", "Sqrt", "Unsqueeze", "Squeeze", "Transpose"} <= ts
    layer = {n.op_type for n in onnx.load(model("seq_layer")).graph.node}
    assert {"Unsqueeze", "Squeeze", "ReduceMean", "Gemm", "Shape", "Cast"} <= layer
    bert = {n.op_type for n in onnx.load(model("seq_bert")).graph.node}
    assert {"Where", "Equal", "Expand", "ConstantOfShape"} <= bert
    bert_d = {n.op_type for n in onnx.load(model("seq_bert_dynamo")).graph.node}
    assert {"IsNaN", "Where"} <= bert_d


def test_projections_are_token_layers_and_the_graph_is_batch_first(bundles):
    for name, (layers, tokens, _) in FIXTURES.items():
        m, t = read_bundle(bundles[name][0])
        assert len(m["layers"]) == layers, name
        seq = [l for l in m["layers"] if l.get("tokens")]
        # every projection but the classifier (and BERT's pooler) runs over the tokens
        assert len(seq) == layers - (2 if "bert" in name else 1), name
        for l in seq:
            assert l["tokens"] == tokens, (name, l["name"])
            assert t[l["input"]].shape == (16, tokens, l["in_features"]), (name, l["name"])
        ops = [n["op"] for n in m["graph"]]
        assert "MatMul" in ops and "Softmax" in ops, name
        # the embedding: a lookup of the int64 token ids in a constant table
        g = t[m["graph_input"]]
        assert g.dtype == np.int64 and g.shape == (16, 64), name
        look = [n for n in m["graph"] if n["op"] == "Gather" and "indices" not in n]
        assert look and look[0]["inputs"][1] == m["graph_input"], name
        assert t[look[0]["inputs"][0]].shape == (17, 16), name
        # no batch axis anywhere but first: a Reshape keeps it as its first entry
        for n in m["graph"]:
            if n["op"] == "Transpose":
                assert n["perm"][0] == 0, (name, n)
        # netexec runs all 16 samples as one batch: onnxruntime's outputs, one at a time
        got = run_graph(m, t, g)[m["graph_output"]]
        np.testing.assert_allclose(got, ort_logits(name), rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(got, t["graph.reference"], rtol=1e-4, atol=1e-5, err_msg=name)


def test_the_attention_output_over_tokens_times_batch_is_t_tokens_of_n_samples(bundles):
    """torch's MultiheadAttention projects [T*N, D] (a Gemm): one layer of 64 tokens."""
    m, t = read_bundle(bundles["seq_layer"][0])
    out_proj = next(l for l in m["layers"] if l["name"] == "enc_self_attn_Gemm")
    assert out_proj["tokens"] == 64 and t[out_proj["input"]].shape == (16, 64, 16)
    # the trace of sample 3 is what onnxruntime computes for that sample alone
    mm = onnx.load(model("seq_layer"))
    gemm = next(n for n in mm.graph.node if n.op_type == "Gemm" and n.name == "/enc/self_attn/Gemm")
    mm.graph.output.append(helper.make_tensor_value_info(gemm.input[0], onnx.TensorProto.FLOAT, None))
    x = np.load(INPUTS)[3:4]
    want = ort.InferenceSession(mm.SerializeToString()).run([gemm.input[0]], {"input": x})[0]
    np.testing.assert_allclose(t[out_proj["input"]][3], want.reshape(64, 16), rtol=1e-6)


def test_mean_pooling_is_a_global_average_pool(bundles):
    for name in ("seq_layer", "seq_mha", "seq_mha_dynamo"):
        m, _ = read_bundle(bundles[name][0])
        ops = [n["op"] for n in m["graph"]]
        assert "GlobalAveragePool" in ops, name


def test_float_top1_is_onnxruntimes(bundles):
    for name in FIXTURES:
        m, t = read_bundle(bundles[name][0])
        want = float(np.mean(np.argmax(ort_logits(name), 1) == Y))
        got = float(np.mean(np.argmax(t["graph.reference"], 1) == t[m["labels"]]))
        assert got == want, name
        # trained: well above chance (10%) on these 16 test digits
        assert want >= 0.6, (name, want)


def test_sresim_checks_runs_and_scores_every_fixture(bundles, tmp_path):
    binary = find_binary()
    if binary is None:
        pytest.skip("no built sresim binary (cargo build)")
    for name in FIXTURES:
        b = bundles[name][0]
        r = subprocess.run([binary, "check", b], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith("ok: "), r.stderr
        r = subprocess.run([binary, "run", "--workload", b, "--modes", "dense,sre", "-q"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "activation-by-activation MatMul ops run off the crossbar" in r.stderr
        out = tmp_path / name
        r = subprocess.run([binary, "accuracy", "--workload", b, "--modes", "sre", "--out", str(out), "-q"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        s = json.loads((out / "summary.json").read_text())
        want = float(np.mean(np.argmax(ort_logits(name), 1) == Y))
        assert s["top1_float"] == pytest.approx(want), name
        r = subprocess.run([binary, "accuracy", "--workload", b, "--float-logits", str(tmp_path / f"{name}.npy")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        np.testing.assert_allclose(np.load(tmp_path / f"{name}.npy"), ort_logits(name),
                                   rtol=1e-4, atol=1e-5, err_msg=name)


def test_float_samples_for_token_ids_are_refused_in_one_line(tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.load(INPUTS).astype(np.float32) + 0.5)
    r = export(tmp_path / "b", model=model("seq_layer"), inputs=str(x))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: inputs: input input [N, 64] int64 takes integers (token ids)"), r.stderr
    # whole numbers stored as floats are token ids
    np.save(x, np.load(INPUTS).astype(np.float32))
    r = export(tmp_path / "c", "--no-graph", model=model("seq_layer"), inputs=str(x))
    assert r.returncode == 0, r.stderr


def test_a_fixed_batch_with_the_batch_inside_is_refused_naming_the_tensor(tmp_path):
    m = onnx.load(model("seq_mha"))
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    path = tmp_path / "fixed.onnx"
    onnx.save(m, path)
    r = export(tmp_path / "b", "--labels", LABELS, model=str(path), inputs=INPUTS)
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip().splitlines()[-1]
    assert "cannot tell which axis of" in line and "export the model with a dynamic batch axis" in line, line
    assert not (tmp_path / "b").exists()


def test_batch_axes_from_two_batch_sizes():
    v1 = {"a": np.zeros((1, 5, 3)), "b": np.zeros((5, 1, 3)), "c": np.zeros((5, 3)), "k": np.zeros(3),
          "odd": np.zeros((2, 3))}
    v2 = {"a": np.zeros((2, 5, 3)), "b": np.zeros((5, 2, 3)), "c": np.zeros((10, 3)), "k": np.zeros(3),
          "odd": np.zeros((3, 3))}
    b = find_batch_axes(v1, v2)
    assert b == {"a": Batch(0, 1), "b": Batch(1, 1), "c": Batch(0, 5), "odd": None}
    assert first_shape([5, 1, 3], b["b"]) == [1, 5, 3]
    assert first_shape([5, 3], b["c"]) == [1, 5, 3]
    # batch 1 only: a leading 1 is the batch
    assert find_batch_axes(v1, None) == {"a": Batch(0, 1)}
    # a constant [T, 1, D] beside a sequence-first [T, N, D]: [1, T, D]; [D] stays
    pos = np.arange(10.0).reshape(5, 1, 2)
    np.testing.assert_array_equal(constant_first(pos, None, 3, Batch(1, 1)), pos.reshape(1, 5, 2))
    assert constant_first(np.ones(2), None, 3, Batch(1, 1)).shape == (2,)
    with pytest.raises(ValueError, match="varies along the batch axis"):
        constant_first(np.ones((5, 2, 2)), None, 3, Batch(1, 1))
