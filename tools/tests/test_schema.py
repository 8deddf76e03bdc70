"""The exporter's mirror of sresim's bundle rules (sresim_export/schema.py) against the
reader itself: the same edits of the committed torch.onnx fixture bundle give the same
message in both (tools/tests/fixtures/schema_cases.json; tests/sresim/bundles.rs runs the Rust
reader on the same file), and the exporter writes nothing sresim would refuse."""

import copy
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import schema  # noqa: E402

BUNDLE = os.path.join(REPO, "tests", "fixtures", "torch-cnn")
with open(os.path.join(HERE, "fixtures", "schema_cases.json")) as f:
    CASES = json.load(f)["cases"]


def edited(case):
    with open(os.path.join(BUNDLE, "manifest.json")) as f:
        m = json.load(f)
    m = copy.deepcopy(m)
    if case["path"]:
        t = m
        for k in case["path"][:-1]:
            t = t[k]
        t[case["path"][-1]] = case["value"]
    return m


@pytest.mark.parametrize("case", CASES, ids=[c["what"] for c in CASES])
def test_the_mirror_words_each_refusal_as_the_reader_does(case):
    assert schema.manifest_error(edited(case)) == case["error"]


@pytest.mark.parametrize("case", CASES, ids=[c["what"] for c in CASES])
def test_sresim_check_gives_the_recorded_message(case, tmp_path):
    binary = schema.find_binary()
    if binary is None:
        pytest.skip("no built sresim binary (cargo build)")
    (tmp_path / "manifest.json").write_text(json.dumps(edited(case)))
    shutil.copy(os.path.join(BUNDLE, "tensors.npz"), tmp_path)
    try:
        line = schema.check_bundle(str(tmp_path), binary)
    except ValueError as e:
        assert str(e) == f"{tmp_path}/manifest.json: {case['error']}"
        return
    if line is None:
        pytest.skip(f"{binary} predates `sresim check` (rebuild it)")
    assert case["error"] is None and line.startswith(f"ok: {tmp_path}: torch_cnn: 5 layers"), line


def test_write_bundle_refuses_a_manifest_the_reader_would_refuse(tmp_path):
    """write_bundle applies the mirror before writing: nothing reaches the disk."""
    from sresim_export.bundle import conv_layer, write_bundle
    import numpy as np

    layer = conv_layer("c", np.ones((1, 1, 1, 1)), np.ones((1, 1, 2, 2)), extra={"strides": [1, 1]})
    with pytest.raises(ValueError, match=r"manifest.json: layers\[0\]\.strides: unknown key"):
        write_bundle(str(tmp_path / "b"), "n", "s", [layer])
    assert not (tmp_path / "b").exists()


def fake_sresim(tmp_path, answer, code):
    """An executable that answers `sresim check` with `answer` on stderr (or stdout when
    code is 0)."""
    p = tmp_path / "fake-sresim"
    stream = ">&2" if code else ""
    p.write_text(f"#!/bin/sh\necho '{answer}' {stream}\nexit {code}\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return str(p)


def export_fixture(out, binary, *extra):
    fx = os.path.join(HERE, "fixtures")
    env = dict(os.environ, SRESIM=binary)
    return subprocess.run([sys.executable, os.path.join(REPO, "tools", "export_onnx.py"),
                           os.path.join(fx, "torch_cnn.onnx"), "--input", os.path.join(fx, "torch_cnn_inputs.npy"),
                           "--out", str(out), *extra], capture_output=True, text=True, env=env)


def test_a_bundle_sresim_refuses_is_not_written_and_not_called_written(tmp_path):
    out = tmp_path / "net"
    out.mkdir()
    (out / "manifest.json").write_text("earlier")
    binary = fake_sresim(tmp_path, "error: STAGE/manifest.json: graph[2] (MaxPool -> p): x: refused", 1)
    r = export_fixture(out, binary)
    assert r.returncode == 2, r.stderr
    assert "wrote" not in r.stdout
    assert r.stderr.strip().splitlines()[-1].endswith("graph[2] (MaxPool -> p): x: refused")
    assert (out / "manifest.json").read_text() == "earlier"
    assert sorted(os.listdir(out)) == ["manifest.json"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".sresim-bundle.")]


def test_the_check_line_is_printed_and_the_bundle_written(tmp_path):
    out = tmp_path / "net"
    r = export_fixture(out, fake_sresim(tmp_path, "ok: somewhere: fine", 0))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote {out}: 5 layers, 12 samples\n"
    assert "sresim check: ok: somewhere: fine" in r.stderr
    assert sorted(os.listdir(out)) == ["manifest.json", "tensors.npz"]


def test_without_a_binary_the_mirror_checks_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("SRESIM", str(tmp_path / "absent"))
    assert schema.find_binary() is None
    r = export_fixture(tmp_path / "net", str(tmp_path / "absent"))
    assert r.returncode == 0, r.stderr
    assert "checked against the bundle schema only" in r.stderr
