"""What the exporter asks for when a model's input is not one fixed-size tensor: a dynamic
size needs --size, a second input needs --feed; the summary line's counts; file modes."""

import os
import stat
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)
sys.path.insert(0, HERE)

import tiny_model  # noqa: E402
from sresim_export import bundle, read_bundle  # noqa: E402

EXPORT = os.path.join(TOOLS, "export_onnx.py")


def run_cli(*args):
    return subprocess.run([sys.executable, EXPORT, *args], capture_output=True, text=True)


def save(path, nodes, inputs, inits):
    g = helper.make_graph(nodes, "m", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.fixture
def fpn(tmp_path):
    """A dynamic-size model that needs H, W even: a stride-2 branch upsampled and added back
    (as a detector's feature pyramid does)."""
    rng = np.random.default_rng(0)
    w1, w2 = (rng.standard_normal((2, 3, 3, 3)).astype(np.float32) for _ in range(2))
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="full", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["b"], name="half", pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Resize", ["b", "", "sc"], ["bu"], mode="nearest"),
             helper.make_node("Add", ["a", "bu"], ["y"])]
    path = str(tmp_path / "fpn.onnx")
    save(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
         {"w1": w1, "w2": w2, "sc": np.array([1, 1, 2, 2], np.float32)})
    return path


def image(path, h, w):
    from PIL import Image

    Image.fromarray(np.random.default_rng(1).integers(0, 256, (h, w, 3), dtype=np.uint8)).save(path)
    return str(path)


def test_dynamic_size_images_need_size(fpn, tmp_path):
    img = image(tmp_path / "odd.png", 13, 21)
    r = run_cli(fpn, "--input", img, "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "input x [N, 3, H, W] float has a dynamic height/width: pass --size H W" in r.stderr
    assert not os.path.exists(tmp_path / "b")
    r = run_cli(fpn, "--input", img, "--size", "8", "12", "--out", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    m, _ = read_bundle(str(tmp_path / "b"))
    assert [l["input_shape"] for l in m["layers"]] == [[3, 8, 12], [3, 8, 12]]


def test_size_the_model_cannot_run_is_one_line(fpn, tmp_path):
    np.save(tmp_path / "odd.npy", np.zeros((3, 13, 21), np.float32))
    r = run_cli(fpn, "--input", str(tmp_path / "odd.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"error: {fpn}: onnxruntime could not run the model on sample 0 "
                               f"(input x [1, 3, 13, 21])")
    assert "pass --size H W" in r.stderr
    assert not os.path.exists(tmp_path / "b")


@pytest.fixture
def two_inputs(tmp_path):
    """y = conv(x * m): a data input and a mask input."""
    w = np.random.default_rng(2).standard_normal((4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Mul", ["x", "m"], ["xm"]),
             helper.make_node("Conv", ["xm", "w"], ["y"], name="conv")]
    path = str(tmp_path / "two.onnx")
    save(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 6, 6]),
                       helper.make_tensor_value_info("m", TensorProto.FLOAT, ["N", 3, 6, 6])], {"w": w})
    return path, w


def test_two_inputs_say_to_feed_the_other(two_inputs, tmp_path):
    path, w = two_inputs
    x = np.random.default_rng(3).random((2, 3, 6, 6)).astype(np.float32)
    mask = (np.arange(108).reshape(3, 6, 6) % 3 == 0).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "m.npy", mask)
    r = run_cli(path, "--input", str(tmp_path / "x.npy"), "--out", str(tmp_path / "b"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "the model has 2 inputs not given by --feed (x [N, 3, 6, 6] float; m [N, 3, 6, 6] float)" in r.stderr
    assert "--feed NAME=FILE.npy" in r.stderr
    x_in, out = ["--input", str(tmp_path / "x.npy")], ["--out", str(tmp_path / "b")]
    r = run_cli(path, *x_in, "--feed", f"q={tmp_path / 'm.npy'}", *out)
    assert r.returncode == 2 and "--feed q=" in r.stderr and "no input q" in r.stderr
    r = run_cli(path, *x_in, "--feed", f"m={tmp_path / 'm.npy'}", *out)
    assert r.returncode == 0, r.stderr
    m, t = read_bundle(str(tmp_path / "b"))
    np.testing.assert_array_equal(t["conv.input"], x * mask)      # the mask was fed with every sample
    assert m["provenance"]["inputs"]["fixed_inputs"] == {"m": "m.npy"}
    assert m["provenance"]["inputs"]["input"] == "x"
    got = tiny_model.conv2d(t["conv.input"], t["conv.weight"])
    assert got.shape == (2, 4, 4, 4)


def test_summary_counts_are_singular_and_plural(two_inputs, tmp_path):
    path, _ = two_inputs
    np.save(tmp_path / "m.npy", np.ones((3, 6, 6), np.float32))
    np.save(tmp_path / "one.npy", np.ones((3, 6, 6), np.float32))
    np.save(tmp_path / "two.npy", np.ones((2, 3, 6, 6), np.float32))
    feed = ["--feed", f"m={tmp_path / 'm.npy'}"]
    r = run_cli(path, "--input", str(tmp_path / "one.npy"), *feed, "--out", str(tmp_path / "a"))
    assert r.returncode == 0 and r.stdout == f"wrote {tmp_path / 'a'}: 1 layer, 1 sample\n"
    r = run_cli(path, "--input", str(tmp_path / "two.npy"), *feed, "--out", str(tmp_path / "b"))
    assert r.returncode == 0 and r.stdout == f"wrote {tmp_path / 'b'}: 1 layer, 2 samples\n"


def test_bundle_files_are_0644_under_umask_022(tmp_path):
    conv = bundle.conv_layer("c", np.ones((1, 1, 1, 1), np.float32), np.ones((1, 1, 2, 2), np.float32))
    old = os.umask(0o022)
    try:
        bundle.write_bundle(str(tmp_path / "b"), "t", "s", [conv])
    finally:
        os.umask(old)
    for f in ("manifest.json", "tensors.npz"):
        assert stat.S_IMODE(os.stat(tmp_path / "b" / f).st_mode) == 0o644, f
    old = os.umask(0o077)
    try:
        bundle.write_bundle(str(tmp_path / "p"), "t", "s", [conv])
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "p" / "manifest.json").st_mode) == 0o600


# One line naming the file, the node and its attribute or input: no numpy RuntimeWarning,
# no source line, no tensor the exporter derived (`gemm_0.weight`, `graph.reference`), a
# zero-byte .npy named, a FIFO called a FIFO (values.py, files.py).

def _gemm_then(tmp_path, name, after, inits, weight=None):
    w = np.ones((4, 6), np.float32) if weight is None else weight
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h" if after else "y"], transB=1)] + after
    path = str(tmp_path / name)
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(v, k) for k, v in {"w": w, **inits}.items()])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def _one_line_error(r):
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert "Warning" not in r.stderr and "Traceback" not in r.stderr
    return r.stderr.strip()


def test_bad_numbers_are_one_line_naming_the_node(tmp_path):
    x = str(tmp_path / "x.npy")
    np.save(x, np.ones((2, 6), np.float32))
    out = str(tmp_path / "b")
    w = np.ones((4, 6), np.float32)
    w[1, 2] = np.inf
    m = _gemm_then(tmp_path, "inf.onnx", [], {}, weight=w)
    assert _one_line_error(run_cli(m, "--input", x, "--out", out)) == (
        f"error: {m}: node 0 (Gemm -> y): input B (w): 1 of 24 values are NaN or infinite; "
        f"sresim refuses a tensor that is not finite")
    m = _gemm_then(tmp_path, "ln.onnx", [helper.make_node("LayerNormalization", ["h", "s", "b"], ["y"],
                                                          epsilon=-1.0)],
                   {"s": np.ones(4, np.float32), "b": np.zeros(4, np.float32)})
    assert _one_line_error(run_cli(m, "--input", x, "--out", out)) == (
        f"error: {m}: node 1 (LayerNormalization -> y): epsilon: -1 (expected a positive number)")
    m = _gemm_then(tmp_path, "sqrt.onnx", [helper.make_node("Sub", ["h", "c"], ["d"]),
                                           helper.make_node("Sqrt", ["d"], ["y"])],
                   {"c": np.full(4, 100.0, np.float32)})
    e = _one_line_error(run_cli(m, "--input", x, "--out", out))
    assert e.startswith(f"error: {m}: node 2 (Sqrt -> y): its output is NaN or infinite on sample 0"), e
    assert not os.path.exists(out)


def test_input_files_are_checked_to_be_files(tmp_path):
    m = _gemm_then(tmp_path, "m.onnx", [], {})
    out = str(tmp_path / "b")
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    assert _one_line_error(run_cli(m, "--input", str(empty), "--out", out)) == (
        f"error: {empty}: empty file (0 bytes), not a .npy array")
    bad = tmp_path / "bad.npy"
    bad.write_bytes(b"\x93NUMPY garbage")
    assert _one_line_error(run_cli(m, "--input", str(bad), "--out", out)).startswith(
        f"error: {bad}: not a .npy array: ")
    nan = tmp_path / "nan.npy"
    np.save(nan, np.full((1, 6), np.nan, np.float32))
    assert _one_line_error(run_cli(m, "--input", str(nan), "--out", out)) == (
        f"error: {nan}: 6 of 6 values are NaN or infinite")
    # A file that is not a model: protobuf's own message names no file.
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01\x02" * 100)
    x = str(tmp_path / "x.npy")
    np.save(x, np.ones((1, 6), np.float32))
    r = subprocess.run([sys.executable, EXPORT, str(junk), "--input", x, "--out", out],
                       capture_output=True, text=True, timeout=60)
    assert _one_line_error(r).startswith(f"error: {junk}: not a readable ONNX model: "), r.stderr
    fifo = tmp_path / "m.onnx.fifo"
    os.mkfifo(fifo)
    x = str(tmp_path / "x.npy")
    np.save(x, np.ones((1, 6), np.float32))
    r = subprocess.run([sys.executable, EXPORT, str(fifo), "--input", x, "--out", out],
                       capture_output=True, text=True, timeout=60)
    assert _one_line_error(r) == (
        f"error: {fifo}: is a FIFO, not a regular file (a FIFO, socket or device cannot be read)")
    fifo_npy = tmp_path / "f.npy"
    os.mkfifo(fifo_npy)
    r = subprocess.run([sys.executable, EXPORT, m, "--input", str(fifo_npy), "--out", out],
                       capture_output=True, text=True, timeout=60)
    assert _one_line_error(r) == f"error: {fifo_npy}: is a FIFO, not a regular file (a FIFO, socket or device cannot be read)"
    assert not os.path.exists(out)


@pytest.mark.parametrize("flag,value", [("--scale", "nan"), ("--scale", "inf"),
                                        ("--sparsity", "nan"), ("--mean", "-inf")])
def test_a_non_finite_number_flag_is_refused_naming_the_flag(tmp_path, flag, value):
    r = run_cli(str(tmp_path / "m.onnx"), "--input", str(tmp_path / "x.npy"),
                "--out", str(tmp_path / "b"), f"{flag}={value}")
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: argument {flag}: "), r.stderr
    assert "not a finite number" in lines[0], r.stderr
    assert not (tmp_path / "b").exists()


def test_a_wrong_shaped_input_is_refused_naming_its_file(tmp_path):
    m = _gemm_then(tmp_path, "m.onnx", [], {})
    good = tmp_path / "good.npy"
    np.save(good, np.ones((2, 6), np.float32))
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.ones((5,), np.float32))
    out = str(tmp_path / "b")
    e = _one_line_error(run_cli(m, "--input", str(good), "--input", str(wrong), "--out", out))
    assert e.startswith(f"error: {wrong}: input sample shape (5,) does not match model input"), e
    assert not os.path.exists(out)


def _conv8(tmp_path):
    """A model whose input is one 8 x 8 grayscale image (static H, W)."""
    path = str(tmp_path / "c8.onnx")
    save(path, [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
         {"w": np.random.default_rng(0).standard_normal((2, 1, 3, 3)).astype(np.float32)})
    return path


def _limited(*args):
    """run_cli under a 4 GB address space: a resize to 10^10 pixels fails at once rather
    than filling the machine's memory."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, EXPORT, *args], capture_output=True, text=True,
                          preexec_fn=limit, timeout=120)


def test_a_size_is_checked_against_the_model_before_any_image_is_resized(fpn, tmp_path):
    gray = tmp_path / "g.png"
    from PIL import Image
    Image.fromarray(np.random.default_rng(2).integers(0, 256, (8, 8), dtype=np.uint8)).save(gray)
    m, out = _conv8(tmp_path), str(tmp_path / "b")
    # the model's H, W first: 10^10 pixels were resized (and ran out of memory) before
    for size, takes in (("100000 100000", "8 x 8"), ("8 9", "8 x 8")):
        assert _one_line_error(_limited(m, "--input", str(gray), "--grayscale", "--size",
                                        *size.split(), "--out", out)) == (
            f"error: --size {size}: the model input x [1, 1, 8, 8] float takes {takes} images "
            f"(--layout nchw)")
    # a model of any size: the pixels are bounded
    img = image(tmp_path / "c.png", 8, 8)
    assert _one_line_error(_limited(fpn, "--input", img, "--size", "100000", "100000",
                                    "--out", out)) == (
        "error: --size 100000 100000: 10000000000 pixels, more than an image is resized to "
        "(67108864 = 8192 x 8192)")
    # PIL's own "height and width must be > 0" named no flag
    assert _one_line_error(run_cli(m, "--input", str(gray), "--grayscale", "--size", "0", "8",
                                   "--out", out)) == (
        "error: argument --size: 0: must be at least 1; see --help")
    assert not os.path.exists(out)
    r = run_cli(m, "--input", str(gray), "--grayscale", "--size", "8", "8", "--out", out)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("flags,says", [
    # numpy's RuntimeWarning lines (divide by zero, overflow in cast) came before the error
    (["--std", "0"], "argument --std: 0: a std is not 0 (the pixels are divided by it); see --help"),
    (["--std", "1e-300"], "argument --std: 1e-300 is 0 as a float32 (the pixels are divided by "
                          "it); see --help"),
    (["--scale", "1e300"], "argument --scale: 1e300 is beyond the float32 range (|x| up to "
                           "3.402823e+38); see --help"),
    (["--mean=-1e39"], "argument --mean: -1e39 is beyond the float32 range (|x| up to "
                          "3.402823e+38); see --help"),
    # within range, but not the pixels they make
    (["--std", "1e-40"], "{img}: 61 of 64 pixel values are beyond the float32 range (|x| up to "
                         "3.402823e+38) after --scale 0.00392157, --std 1e-40"),
    (["--scale", "1e38", "--mean", "0"], "{img}: 61 of 64 pixel values are beyond the float32 "
                                         "range (|x| up to 3.402823e+38) after --scale 1e+38, "
                                         "--mean 0"),
])
def test_pixel_flags_beyond_float32_are_one_line_without_warnings(tmp_path, flags, says):
    from PIL import Image

    img = tmp_path / "g.png"
    pixels = np.arange(64, dtype=np.uint8).reshape(8, 8) * 4 + 3  # none is 0
    pixels[0, :3] = 0  # 0 / std stays 0
    Image.fromarray(pixels).save(img)
    out = str(tmp_path / "b")
    assert _one_line_error(run_cli(_conv8(tmp_path), "--input", str(img), "--grayscale", *flags,
                                   "--out", out)) == "error: " + says.format(img=img)
    assert not os.path.exists(out)
