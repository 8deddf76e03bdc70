"""The exporter's one writer (sresim_export.bundle.commit) and the refusals before it:
non-finite tensors and calibrated ranges are refused naming the tensor, a zero-byte model
gets its own message, a destination that is a link or FIFO is left alone, and a writer
killed between its two renames leaves a journal that the next write completes (the same
scheme as sresim's outdir crate, docs/errors.md "Output directories")."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)

from sresim_export.bundle import JOURNAL, fc_layer, read_bundle, write_bundle  # noqa: E402

EXPORT = os.path.join(TOOLS, "export_onnx.py")


def layer(weight_fill=0.5, input_fill=1.0):
    w = np.full((3, 4), weight_fill, np.float32)
    x = np.full((2, 4), input_fill, np.float32)
    return fc_layer("fc1", w, x)


def listing(d):
    return sorted(os.listdir(d))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_weight_is_refused_naming_it(tmp_path, bad):
    entry, arrays = layer()
    arrays["fc1.weight"][1, 2] = bad
    with pytest.raises(ValueError, match=r"^fc1\.weight: 1 of 12 values are NaN or infinite"):
        write_bundle(tmp_path / "b", "n", "s", [(entry, arrays)])
    assert not (tmp_path / "b").exists() or listing(tmp_path / "b") == []


def test_an_input_calibrated_to_a_non_finite_range_is_refused(tmp_path):
    entry, arrays = layer()
    network = {"calibration": {"fc1": (float("-inf"), False)}, "arrays": {}}
    with pytest.raises(ValueError, match=r"^fc1: its input calibrates to input_max = -inf"):
        write_bundle(tmp_path / "b", "n", "s", [(entry, arrays)], network=network)
    network["calibration"]["fc1"] = (float("nan"), True)
    with pytest.raises(ValueError, match=r"^fc1: its input calibrates to input_max = nan"):
        write_bundle(tmp_path / "b", "n", "s", [(entry, arrays)], network=network)


def test_the_cli_refuses_a_zero_byte_model_with_its_own_message(tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 3, 4, 4), np.float32))
    r = subprocess.run([sys.executable, EXPORT, str(model), "--input", str(x), "--out",
                        str(tmp_path / "b")], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr == f"error: {model}: empty file (0 bytes), not an ONNX model\n"
    assert not (tmp_path / "b").exists()


def test_a_link_or_fifo_destination_is_refused_and_left_alone(tmp_path):
    b = tmp_path / "b"
    b.mkdir()
    (tmp_path / "elsewhere.json").write_text("kept")
    os.symlink(tmp_path / "elsewhere.json", b / "manifest.json")
    with pytest.raises(ValueError, match="manifest.json: is a symbolic link"):
        write_bundle(b, "n", "s", [layer()])
    assert os.path.islink(b / "manifest.json")
    assert (tmp_path / "elsewhere.json").read_text() == "kept"
    assert listing(b) == ["manifest.json"], "no temporary left"
    os.unlink(b / "manifest.json")
    os.mkfifo(b / "tensors.npz")
    with pytest.raises(ValueError, match="tensors.npz: not a regular file"):
        write_bundle(b, "n", "s", [layer()])
    assert listing(b) == ["tensors.npz"]


KILLED = """
import sys
sys.path.insert(0, {tools!r})
import numpy as np
from sresim_export.bundle import fc_layer, write_bundle
w = np.full((3, 4), 2.0, np.float32)
write_bundle({out!r}, "new", "s", [fc_layer("fc1", w, np.ones((2, 4), np.float32))])
"""


def test_a_kill_between_the_renames_is_completed_by_the_next_write(tmp_path):
    b = tmp_path / "b"
    write_bundle(b, "old", "s", [layer()])
    env = dict(os.environ, SRESIM_TEST_ABORT_AFTER_RENAMES="1")
    r = subprocess.run([sys.executable, "-c", KILLED.format(tools=TOOLS, out=str(b))], env=env)
    assert r.returncode < 0, "killed by a signal"
    # The journal marks the mix: new tensors.npz beside the old manifest.json.
    assert JOURNAL in listing(b)
    assert json.loads((b / "manifest.json").read_text())["name"] == "old"
    # The next write completes the replacement first, then writes its own.
    write_bundle(b, "third", "s", [layer(weight_fill=3.0)])
    assert listing(b) == ["manifest.json", "tensors.npz"]
    manifest, tensors = read_bundle(b)
    assert manifest["name"] == "third"
    assert float(tensors["fc1.weight"][0, 0]) == 3.0


def test_recovery_alone_rolls_forward(tmp_path):
    from sresim_export.bundle import recover

    b = tmp_path / "b"
    write_bundle(b, "old", "s", [layer()])
    env = dict(os.environ, SRESIM_TEST_ABORT_AFTER_RENAMES="1")
    subprocess.run([sys.executable, "-c", KILLED.format(tools=TOOLS, out=str(b))], env=env)
    recover(str(b))
    manifest, tensors = read_bundle(b)
    assert manifest["name"] == "new"
    assert float(tensors["fc1.weight"][0, 0]) == 2.0
    assert listing(b) == ["manifest.json", "tensors.npz"]
