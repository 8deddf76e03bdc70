"""What torch.onnx writes, without torch: the CNN of fixtures/make_torch_cnn.py (opset 17,
MaxPool with `dilations` [1, 1], a conv with dilation 2) exports to the committed bundle
tests/fixtures/torch-cnn, sresim opens it, and its graph computes what onnxruntime does.
A dilated pool is refused at export, by name, in one line; pruning with labels prints the
float top-1 it cost."""

import json
import os
import re
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
MODEL = os.path.join(FX, "torch_cnn.onnx")
INPUTS = os.path.join(FX, "torch_cnn_inputs.npy")
COMMITTED = os.path.join(REPO, "tests", "fixtures", "torch-cnn")
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import read_bundle  # noqa: E402
from sresim_export.netexec import run_graph  # noqa: E402
from sresim_export.schema import find_binary  # noqa: E402

with open(os.path.join(FX, "torch_cnn_labels.txt")) as f:
    LABELS = f.read().strip()


def export(out, *extra, model=MODEL, inputs=INPUTS):
    return subprocess.run([sys.executable, os.path.join(REPO, "tools", "export_onnx.py"), model,
                           "--input", inputs, "--out", str(out), *extra], capture_output=True, text=True)


def assert_same_bundle(got, want):
    """The bundles `got` and `want` agree: manifests but the tool versions, array names,
    values within float rounding."""
    got_m, got_t = read_bundle(str(got))
    want_m, want_t = read_bundle(want)
    for m in (got_m, want_m):  # the versions of the tools that ran may differ
        for k in ("onnx", "onnxruntime"):
            m["provenance"].pop(k)

    def rounded(v):
        # A calibrated figure (input_max) comes from onnxruntime's kernels, whose last
        # bit differs between CPUs: numbers agree to 12 significant digits.
        if isinstance(v, float):
            return float(f"{v:.12g}")
        if isinstance(v, dict):
            return {k: rounded(x) for k, x in v.items()}
        if isinstance(v, list):
            return [rounded(x) for x in v]
        return v
    got_m, want_m = rounded(got_m), rounded(want_m)
    assert json.dumps(got_m, sort_keys=True) == json.dumps(want_m, sort_keys=True)
    assert sorted(got_t) == sorted(want_t)
    for k in want_t:
        np.testing.assert_allclose(got_t[k], want_t[k], rtol=1e-5, atol=1e-6, err_msg=k)


def test_the_fixture_is_torchs_output():
    m = onnx.load(MODEL)
    assert m.producer_name == "pytorch" and m.opset_import[0].version == 17
    pools = [n for n in m.graph.node if n.op_type == "MaxPool"]
    assert pools and all(helper.get_attribute_value(a) == [1, 1]
                         for n in pools for a in n.attribute if a.name == "dilations")


def test_the_committed_bundle_is_what_the_exporter_writes(tmp_path):
    r = export(tmp_path / "b", "--labels", LABELS)
    assert r.returncode == 0, r.stderr
    assert_same_bundle(tmp_path / "b", COMMITTED)


def test_pool_dilations_of_one_pass_through_and_the_dilated_conv_is_a_layer():
    m, t = read_bundle(COMMITTED)
    pools = [n for n in m["graph"] if n["op"] == "MaxPool"]
    assert len(pools) == 2 and all(n["dilations"] == [1, 1] for n in pools)
    assert [l["dilation"] for l in m["layers"] if l["kind"] == "conv"] == [[1, 1], [2, 2], [1, 1]]
    # the graph, dilated conv included, computes onnxruntime's logits
    x = t[m["graph_input"]]
    want = ort.InferenceSession(MODEL).run(None, {"x": x})[0]
    got = run_graph(m, t, x)[m["graph_output"]]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(np.argmax(want, 1), [int(v) for v in LABELS.split(",")])


def test_sresim_opens_the_bundle_and_its_float_path_matches_onnxruntime(tmp_path):
    binary = find_binary()
    if binary is None:
        pytest.skip("no built sresim binary (cargo build)")
    out = tmp_path / "float.npy"
    r = subprocess.run([binary, "accuracy", "--workload", COMMITTED, "--float-logits", str(out)],
                       capture_output=True, text=True)
    if "unexpected argument '--float-logits'" in r.stderr:
        pytest.skip(f"{binary} predates `sresim accuracy --float-logits` (rebuild it)")
    assert r.returncode == 0, r.stderr
    _, t = read_bundle(COMMITTED)
    np.testing.assert_allclose(np.load(out), t["graph.reference"], rtol=1e-4, atol=1e-5)


def dilated_pool_model(path):
    """The fixture with its first MaxPool dilated (2 x 2, the same output size)."""
    m = onnx.load(MODEL)
    pool = next(n for n in m.graph.node if n.op_type == "MaxPool")
    for a in pool.attribute:
        if a.name == "dilations":
            a.ints[:] = [2, 2]
        if a.name == "pads":
            a.ints[:] = [0, 0, 1, 1]
    onnx.save(m, path)
    return pool.name


def test_a_dilated_pool_is_refused_at_export_by_name(tmp_path):
    model = str(tmp_path / "dilated.onnx")
    name = dilated_pool_model(model)
    r = export(tmp_path / "b", "--labels", LABELS, model=model)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1] == (
        f"error: node {name} (MaxPool): dilations [2, 2]: dilated pooling is not supported in a bundle graph; "
        f"the labels need the network graph: without --labels (from_torch: labels=None) the layer traces "
        f"are written alone")
    assert not (tmp_path / "b").exists()
    # without labels the layer traces are still a bundle; the line says why there is no graph
    r = export(tmp_path / "c", model=model)
    assert r.returncode == 0, r.stderr
    assert f"no network graph written (layer traces only): node {name} (MaxPool): dilations [2, 2]" in r.stderr
    assert "graph" not in read_bundle(str(tmp_path / "c"))[0]


def test_pruning_with_labels_prints_the_float_top1_it_cost(tmp_path):
    saved = str(tmp_path / "pruned.onnx")
    r = export(tmp_path / "b", "--labels", LABELS, "--prune", "ssl", "--sparsity", "0.6",
               "--save-model", saved)
    assert r.returncode == 0, r.stderr
    line = [l for l in r.stderr.splitlines() if "float top-1" in l]
    assert len(line) == 1, r.stderr
    got = re.search(r"([\d.]+)% before, ([\d.]+)% after", line[0])
    labels = np.array([int(v) for v in LABELS.split(",")])
    x = np.load(INPUTS)
    before = np.mean(np.argmax(ort.InferenceSession(MODEL).run(None, {"x": x})[0], 1) == labels)
    after = np.mean(np.argmax(ort.InferenceSession(saved).run(None, {"x": x})[0], 1) == labels)
    assert before == 1.0 and after < before
    assert (float(got[1]), float(got[2])) == (round(100 * before, 1), round(100 * after, 1))
    prov = read_bundle(str(tmp_path / "b"))[0]["provenance"]["pruning"]
    assert (prov["top1_before"], prov["top1_after"]) == (before, after)
    # without labels there is nothing to measure, and no line
    r = export(tmp_path / "c", "--prune", "ssl", "--sparsity", "0.6")
    assert r.returncode == 0 and "top-1" not in r.stderr


def test_prune_exclude_takes_onnx_node_names_and_the_layer_names_run_prints(tmp_path):
    """/conv1/Conv (the ONNX node) and conv1_Conv (the bundle layer, as `run` prints it) name
    the same layer; an unknown name lists the layers as `run` prints them."""
    both = export(tmp_path / "b", "--prune", "magnitude", "--sparsity", "0.5",
                  "--prune-exclude", "/conv1/Conv,fc2_Gemm")
    assert both.returncode == 0, both.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    per = m["provenance"]["pruning"]["per_layer"]
    assert per["/conv1/Conv"].get("excluded") and per["/fc2/Gemm"].get("excluded")
    assert not per["/conv2/Conv"].get("excluded")
    assert np.mean(t["conv1_Conv.weight"] == 0) < 0.5 and np.mean(t["conv2_Conv.weight"] == 0) >= 0.5
    assert m["provenance"]["pruning"]["excluded"] == ["/conv1/Conv", "fc2_Gemm"]
    r = export(tmp_path / "c", "--prune", "magnitude", "--sparsity", "0.5", "--prune-exclude", "conv1")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("error: --prune-exclude: no layer named conv1 (layers: conv1_Conv, conv2_Conv, "
                               "conv3_Conv, fc1_Gemm, fc2_Gemm; the ONNX node names are accepted too)"), r.stderr
