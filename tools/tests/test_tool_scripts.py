"""The scripts of tools/ beside the exporter (aihwkit_compare.py, float_reference.py,
ort_per_sample.py) refuse a mistake in one line `error: ...` with exit status 2, as the
exporter does (docs/errors.md, "The exporter's refusals are one line"): no traceback, no
usage text; aihwkit_compare.py checks its --out before anything runs, and a failing
sresim call leaves sresim's own line alone. None of these needs torch or aihwkit."""

import os
import stat
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
ROOT = os.path.dirname(TOOLS)
LENET = os.path.join(ROOT, "workloads", "lenet5-mnist")


def tool(name, *args, cwd=None):
    return subprocess.run([sys.executable, os.path.join(TOOLS, name), *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def one_line(r):
    """The run failed with status 2 and one stderr line `error: ...`; returns the line."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    return r.stderr.strip()


def fake_sresim(tmp_path, body):
    """An executable standing for sresim: leaves `ran` beside it, then runs `body`."""
    path = tmp_path / "fake-sresim"
    path.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_aihwkit_compare_refuses_its_out_before_running_anything(tmp_path, kind):
    out = tmp_path / "out.csv"
    if kind == "fifo":
        os.mkfifo(out)
    else:
        out.mkdir()
    sresim = fake_sresim(tmp_path, "exit 0")
    line = one_line(tool("aihwkit_compare.py", "--sresim", sresim, "--bundle", LENET,
                         "--out", out, "--samples", 2, "--only", "sresim"))
    assert line.startswith(f"error: --out: {out}: "), line
    assert not (tmp_path / "ran").exists(), "sresim ran before --out was checked"


def test_aihwkit_compare_leaves_a_failing_sresim_its_own_line(tmp_path):
    sresim = fake_sresim(tmp_path, "echo 'error: --workload /nonexistent: no such bundle' >&2; exit 1")
    out = tmp_path / "a.csv"
    r = tool("aihwkit_compare.py", "--sresim", sresim, "--bundle", "/nonexistent",
             "--out", out, "--only", "sresim")
    assert (tmp_path / "ran").exists()
    assert one_line(r) == "error: --workload /nonexistent: no such bundle"
    assert not out.exists()


def test_aihwkit_compare_names_a_missing_sresim(tmp_path):
    line = one_line(tool("aihwkit_compare.py", "--out", "a.csv", "--only", "sresim", cwd=tmp_path))
    assert line == "error: target/release/sresim: No such file or directory", line
    assert not (tmp_path / "a.csv").exists()


@pytest.mark.parametrize("flag", ["--samples=0", "--draws=-1", "--sresim-draws=0", "--bogus"])
def test_aihwkit_compare_refuses_a_bad_flag_in_one_line(tmp_path, flag):
    one_line(tool("aihwkit_compare.py", "--out", tmp_path / "a.csv", flag))


@pytest.mark.parametrize("script", ["float_reference.py", "ort_per_sample.py"])
def test_perf_scripts_refuse_a_bundle_that_is_not_one(tmp_path, script):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert "/nonexistent" in one_line(tool(script, "/nonexistent"))
    assert str(fifo) in one_line(tool(script, fifo))
    # a bundle directory whose manifest is a FIFO: refused, not read (which would block)
    d = tmp_path / "b"
    d.mkdir()
    os.mkfifo(d / "manifest.json")
    (d / "tensors.npz").write_bytes(b"x")
    assert f"{d / 'manifest.json'}: is a FIFO" in one_line(tool(script, d))
    os.unlink(d / "manifest.json")
    (d / "manifest.json").write_text("{}")
    assert f"{d / 'tensors.npz'}: not a readable .npz archive" in one_line(tool(script, d))


@pytest.mark.parametrize("script,flag", [
    ("float_reference.py", "--samples=0"), ("float_reference.py", "--samples=-1"),
    ("float_reference.py", "--batch=0"), ("float_reference.py", "--bogus"),
    ("ort_per_sample.py", "--samples=0"), ("ort_per_sample.py", "--passes=-1"),
    ("ort_per_sample.py", "--bogus"),
])
def test_perf_scripts_refuse_a_bad_flag_in_one_line(script, flag):
    line = one_line(tool(script, LENET, flag))
    assert line.endswith("; see --help"), line


def test_float_reference_names_a_garbage_onnx(tmp_path):
    pytest.importorskip("onnxruntime")
    bad = tmp_path / "m.onnx"
    bad.write_bytes(b"not a model at all")
    line = one_line(tool("float_reference.py", LENET, "--onnx", bad, "--samples", 2))
    assert line.startswith(f"error: --onnx: {bad}: "), line
    assert f"{tmp_path / 'none.onnx'}: cannot read" in one_line(
        tool("float_reference.py", LENET, "--onnx", tmp_path / "none.onnx", "--samples", 2))


def test_float_reference_still_runs_a_bundle():
    r = tool("float_reference.py", LENET, "--samples", 4, "--batch", 3)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("lenet5-mnist: 4 samples, top-1 "), r.stdout


def test_float_reference_checks_the_bundle_against_its_manifest(tmp_path):
    # a weight sresim refuses (`sresim check`: shape does not match geometry) is named with
    # its file before anything is computed, not left to numpy's matmul error
    import numpy as np

    b = tmp_path / "b"
    b.mkdir()
    (b / "manifest.json").write_bytes(open(os.path.join(LENET, "manifest.json"), "rb").read())
    with np.load(os.path.join(LENET, "tensors.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["conv2.weight"] = np.zeros((50, 20, 5, 0), np.float32)
    np.savez(b / "tensors.npz", **arrays)
    line = one_line(tool("float_reference.py", b, "--samples", 2))
    assert line == (f"error: {b / 'tensors.npz'}: conv2.weight: shape [50,20,5,0] does not "
                    "match geometry [50,20,5,5]"), line
    arrays["conv2.weight"] = np.zeros((50, 20, 5, 5), np.float32)
    arrays["fc1.bias"] = np.zeros(7, np.float32)
    np.savez(b / "tensors.npz", **arrays)
    line = one_line(tool("float_reference.py", b, "--samples", 2))
    assert line == (f"error: {b / 'tensors.npz'}: fc1.bias: shape [7] does not match "
                    "geometry [500]"), line


def test_float_reference_refuses_more_samples_than_the_bundle_holds():
    # sresim's rule and words: `sresim accuracy --samples 501` on lenet5-mnist
    line = one_line(tool("float_reference.py", LENET, "--samples", 501))
    assert line == "error: --samples 501: the graph input of lenet5-mnist holds 500 samples", line


@pytest.mark.parametrize("flag", ["--threads=0", "--threads=-1"])
def test_float_reference_refuses_threads_below_one(flag):
    line = one_line(tool("float_reference.py", LENET, flag))
    assert "argument --threads" in line and "must be at least 1" in line, line


def to_full(args, unbuffered):
    """Runs a tool with its stdout on /dev/full, PYTHONUNBUFFERED as given (a write that
    fails at once, or only when the buffer is flushed)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    with open("/dev/full", "w") as full:
        return subprocess.run([sys.executable, *map(str, args)], stdout=full,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120)


@pytest.mark.parametrize("unbuffered", ["1", None])
@pytest.mark.parametrize("script", ["export_onnx.py", "float_reference.py", "ort_per_sample.py",
                                    "aihwkit_compare.py"])
def test_help_to_a_full_stdout_is_one_line(script, unbuffered):
    # argparse swallowed the failed write (status 0) or Python reported it at exit (120)
    r = to_full([os.path.join(TOOLS, script), "--help"], unbuffered)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr == "error: stdout: cannot write: No space left on device\n", r.stderr


@pytest.mark.parametrize("unbuffered", ["1", None])
def test_a_tools_output_to_a_full_stdout_names_stdout(unbuffered):
    # it said `error: None: ...` (the OSError's missing file name), or 120 at exit
    r = to_full([os.path.join(TOOLS, "float_reference.py"), LENET, "--samples", 2], unbuffered)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr == "error: stdout: cannot write: No space left on device\n", r.stderr


def test_float_reference_names_a_layer_whose_input_does_not_fit(tmp_path):
    # weight and manifest agree (fc1 of 799 features) but the graph feeds it 800: the
    # layer and its input are named, not numpy's matmul error
    import json

    import numpy as np

    b = tmp_path / "b"
    b.mkdir()
    with open(os.path.join(LENET, "manifest.json")) as f:
        m = json.load(f)
    next(l for l in m["layers"] if l["name"] == "fc1")["in_features"] = 799
    (b / "manifest.json").write_text(json.dumps(m))
    with np.load(os.path.join(LENET, "tensors.npz")) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["fc1.weight"] = np.zeros((500, 799), np.float32)
    np.savez(b / "tensors.npz", **arrays)
    line = one_line(tool("float_reference.py", b, "--samples", 2))
    assert line.startswith(f"error: {b / 'manifest.json'}: graph: layer fc1: its input "), line
    assert line.endswith(" is [800] a sample, the layer takes 799 features"), line


@pytest.mark.parametrize("mark", [".sresim-commit", ".sresim-commit-export"])
def test_float_reference_refuses_a_bundle_with_an_unfinished_replacement(tmp_path, mark):
    # the bundle reader of the tools read a bundle a kill left half replaced (and
    # reported a reference from it, exit 0) where `sresim check` refuses it
    import shutil

    b = tmp_path / "b"
    shutil.copytree(LENET, b)
    (b / mark).write_text("sresim-commit 2\nwriter export\npid 42\n")
    line = one_line(tool("float_reference.py", b, "--samples", 2))
    assert line.startswith(f"error: {b / 'manifest.json'}: cannot open: {b} holds an "
                           f"unfinished replacement of its files ({mark})"), line
