"""The exporter's promises at its edges (docs/errors.md, "The exporter"): every file it
writes goes through the one writer (bundle.commit, bundle.stage_file), so a FIFO, a
symbolic link or a directory where a file goes is refused in one line naming the flag and
the path, and nothing is written; every refusal is one line `error: ...` naming the file
(a model onnxruntime would reject, an argparse mistake, a write past `ulimit -f`)."""

import os
import re
import resource
import stat
import subprocess
import sys

import onnx
import pytest
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(HERE)
sys.path.insert(0, TOOLS)

from sresim_export import bundle  # noqa: E402

EXPORT = os.path.join(TOOLS, "export_onnx.py")
VIT = os.path.join(HERE, "fixtures", "torch_vit.onnx")
VIT_INPUTS = os.path.join(HERE, "fixtures", "torch_vit_inputs.npy")


def run_cli(*args, timeout=120, fsize=None):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run([sys.executable, EXPORT, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=limit if fsize else None)


def one_line(r):
    """The run failed with status 2 and one stderr line `error: ...`; returns the line."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    return r.stderr.strip()


def vit(*more):
    return [VIT, "--input", VIT_INPUTS, *more]


# --- the one writer: --save-model, --out ---------------------------------------------

def test_a_fifo_as_save_model_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "m.fifo"
    os.mkfifo(fifo)
    # the timeout turns a regression (onnx.save opening the FIFO) into a failure, not a hang
    r = run_cli(*vit("--out", tmp_path / "o", "--save-model", fifo), timeout=120)
    line = one_line(r)
    assert line.startswith(f"error: --save-model: {fifo}: ") and "not a regular file" in line
    assert not (tmp_path / "o").exists()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_as_save_model_leaves_its_target_unchanged(tmp_path):
    target = tmp_path / "target.onnx"
    target.write_bytes(b"the user's file")
    link = tmp_path / "link.onnx"
    link.symlink_to(target)
    line = one_line(run_cli(*vit("--out", tmp_path / "o", "--save-model", link)))
    assert line == f"error: --save-model: {link}: is a symbolic link: the exporter does not replace one"
    assert target.read_bytes() == b"the user's file"
    assert os.path.islink(link) and not (tmp_path / "o").exists()


def test_a_directory_as_save_model_or_a_file_as_out_is_named_with_its_flag(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    line = one_line(run_cli(*vit("--out", tmp_path / "o", "--save-model", d)))
    assert line == f"error: --save-model: {d}: is a directory, not a file: cannot replace it"
    assert not (tmp_path / "o").exists() and os.listdir(d) == []
    f = tmp_path / "file"
    f.write_text("keep")
    line = one_line(run_cli(*vit("--out", f)))
    assert line.startswith(f"error: --out: {f}: exists and is not a directory")
    assert f.read_text() == "keep"


def test_save_model_writes_the_model_whole_and_leaves_no_temporary(tmp_path):
    out, model = tmp_path / "o", tmp_path / "run.onnx"
    model.write_bytes(b"old")
    r = run_cli(*vit("--out", out, "--save-model", model))
    assert r.returncode == 0, r.stderr
    saved = onnx.load(str(model))
    assert {n.op_type for n in saved.graph.node} >= {"Conv", "MatMul", "Softmax"}
    assert sorted(os.listdir(tmp_path)) == ["o", "run.onnx"]
    assert sorted(os.listdir(out)) == ["manifest.json", "tensors.npz"]


def test_a_write_past_the_file_size_limit_names_its_file(tmp_path):
    out = tmp_path / "o"
    line = one_line(run_cli(*vit("--out", out), fsize=20 * 1024))
    assert line == f"error: {out}/tensors.npz: cannot write: File too large", line
    assert sorted(os.listdir(tmp_path)) == []
    # the saved model (24 KB) is written before the bundle: the bundle is left as it was
    model = tmp_path / "run.onnx"
    line = one_line(run_cli(*vit("--out", out, "--save-model", model), fsize=20 * 1024))
    assert line == f"error: --save-model: {model}: cannot write: File too large", line
    assert sorted(os.listdir(tmp_path)) == []


def test_stage_file_refuses_what_commit_refuses_and_cleans_up(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"^--x: .*/f: not a regular file: cannot replace it$"):
        bundle.write_file(fifo, lambda f: f.write(b"x"), "--x")
    dst = tmp_path / "a.bin"
    dst.write_bytes(b"old")

    def fails(f):
        f.write(b"partial")
        raise OSError(28, "No space left on device")

    with pytest.raises(ValueError, match=r"a.bin: cannot write: No space left on device$"):
        bundle.write_file(dst, fails, None)
    assert dst.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.bin", "f"]
    with pytest.raises(ValueError, match="the directory .*/nowhere does not exist"):
        bundle.write_file(tmp_path / "nowhere" / "a", lambda f: f.write(b"x"))
    bundle.write_text_file(dst, "new\n")
    assert dst.read_text() == "new\n" and stat.S_IMODE(os.stat(dst).st_mode) & 0o600 == 0o600


def test_no_other_code_under_tools_writes_a_file():
    """The class, not the instances: onnx.save, np.save, open(..., "w"), os.replace and the
    like appear in bundle.py (the one writer) only."""
    # (`torch.save(obj, f)` and `img.save(f, ...)` write to the handle write_file gives)
    writes = re.compile(r"onnx\.save\(|np\.save\w*\(|torch\.save\([^)]*,\s*(?!f\))\w+\)|os\.replace\(|"
                        r"os\.rename\(|shutil\.(copy|copyfile|copy2|copytree|move)\(|\.tofile\(|(?<!trained)\.write_(text|bytes)\(|"
                        r"\bopen\([^)]*[\"'][wax]b?\+?[\"']|\.save\(os\.path")
    offenders = []
    for root, dirs, files in os.walk(TOOLS):
        dirs[:] = [d for d in dirs if d not in ("tests", "__pycache__")]
        for name in files:
            path = os.path.join(root, name)
            if not name.endswith(".py") or path == bundle.__file__:
                continue
            with open(path) as f:
                for no, line in enumerate(f, 1):
                    if writes.search(line) and not line.lstrip().startswith("#"):
                        offenders.append(f"{os.path.relpath(path, TOOLS)}:{no}: {line.strip()}")
    assert offenders == []


# --- one line for argparse's refusals ----------------------------------------------

@pytest.mark.parametrize("argv", [
    [],
    ["m.onnx"],
    ["m.onnx", "--input", "a.npy", "--out", "o", "--bogus"],
    ["m.onnx", "--input", "a.npy", "--out", "o", "--layout", "nhcw"],
    ["m.onnx", "--input", "a.npy", "--out", "o", "--size", "a", "b"],
    ["m.onnx", "--input", "a.npy", "--out", "o", "--scale", "x"],
])
def test_every_argparse_refusal_is_one_line(argv):
    line = one_line(run_cli(*argv, timeout=60))
    assert "usage:" not in line


def test_negative_labels_are_one_line_naming_the_flag(tmp_path):
    line = one_line(run_cli(*vit("--out", tmp_path / "o", "--labels", "-1,1")))
    assert "--labels" in line and "--labels=-VALUE" in line
    line = one_line(run_cli(*vit("--out", tmp_path / "o", "--labels=" + ",".join(["-1"] + ["1"] * 11))))
    assert line == "error: --labels: label 0 is -1: a class index is 0 or more"
    assert not (tmp_path / "o").exists()


# --- models onnxruntime would reject: the exporter's own checks, one line ----------

def _mutate(tmp_path, name, change):
    m = onnx.load(VIT)
    change(m)
    path = tmp_path / f"{name}.onnx"
    onnx.save(m, str(path))
    return path


def _node(m, name):
    return next(n for n in m.graph.node if n.name == name)


def _set(node, attr, value, attr_type=None):
    for a in [a for a in node.attribute if a.name == attr]:
        node.attribute.remove(a)
    node.attribute.append(helper.make_attribute(attr, value, attr_type=attr_type))


def _drop(m, name):
    m.graph.node.remove(_node(m, name))


def _rename_op(m, name, op):
    _node(m, name).op_type = op


CASES = {
    "perm_empty": (lambda m: _set(_node(m, "/Transpose"), "perm", [], onnx.AttributeProto.INTS),
                   "node /Transpose (Transpose): perm: [] is not a permutation of the input's "
                   "axes (0 given, its input has 3)"),
    "perm_short": (lambda m: _set(_node(m, "/blocks/blocks.0/attn/Transpose"), "perm", [0, 2, 1]),
                   "node /blocks/blocks.0/attn/Transpose (Transpose): perm: [0, 2, 1] is not a "
                   "permutation of the input's axes (3 given, its input has 4)"),
    "dropped": (lambda m: _drop(m, "/Add"),
                "node /blocks/blocks.0/ln1/LayerNormalization (LayerNormalization): input "
                "/Add_output_0 is not a graph input, an initializer or the output of an earlier "
                "node (a node removed or out of order)"),
    "softmax_axis": (lambda m: _set(_node(m, "/blocks/blocks.0/attn/Softmax"), "axis", 7),
                     "node /blocks/blocks.0/attn/Softmax (Softmax): axis: 7 is outside [-4, 3] "
                     "(its input has 4 axes)"),
    "unknown_op": (lambda m: _rename_op(m, "/Add", "Frobnicate"),
                   "node /Add (Frobnicate): unknown op (not an op of ONNX)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_broken_graph_is_one_line_naming_the_file_and_node(tmp_path, case):
    change, want = CASES[case]
    path = _mutate(tmp_path, case, change)
    line = one_line(run_cli(path, "--input", VIT_INPUTS, "--out", tmp_path / "o"))
    assert line == f"error: {path}: {want}"
    assert not (tmp_path / "o").exists()


def test_what_onnxruntime_alone_refuses_is_one_line_naming_the_file_and_node(tmp_path):
    """An op of a domain the exporter leaves to onnxruntime: its multi-line report is one
    line naming the model file and the node."""
    path = _mutate(tmp_path, "ms", lambda m: (_rename_op(m, "/Add", "Frobnicate"),
                                              setattr(_node(m, "/Add"), "domain", "com.microsoft"),
                                              m.opset_import.append(helper.make_opsetid("com.microsoft", 1))))
    line = one_line(run_cli(path, "--input", VIT_INPUTS, "--out", tmp_path / "o"))
    assert line.startswith(f"error: {path}: node /Add (Frobnicate): onnxruntime refuses it: "), line
    assert "[ONNXRuntimeError]" not in line


def test_ort_message_reduces_onnxruntimes_reports_to_one_line():
    from sresim_export.structure import ort_message

    assert ort_message(Exception(
        "[ONNXRuntimeError] : 1 : FAIL : Node (/Concat_2) Op (Concat) [ShapeInferenceError] All "
        "inputs to Concat must have same rank.\n Input 1 has rank 0 != 3")) == (
        "node /Concat_2 (Concat): [ShapeInferenceError] All inputs to Concat must have same "
        "rank. Input 1 has rank 0 != 3")
    assert ort_message(Exception(
        '[ONNXRuntimeError] : 10 : INVALID_GRAPH : This is an invalid model. In Node, ("/Add", '
        'Frobnicate, "", -1) : ("a": tensor(float),) -> ("b",) , Error No Op registered for '
        'Frobnicate with domain_version of 17')) == (
        "node /Add (Frobnicate): Error No Op registered for Frobnicate with domain_version of 17")
    assert ort_message(Exception("[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid model.\n"
                                 "Node input 'x' is not a graph input")) == (
        "onnxruntime refuses the model: Invalid model. Node input 'x' is not a graph input")


def test_the_structure_checks_accept_every_model_the_tests_ship():
    from sresim_export.structure import check_structure

    fixtures = os.path.join(HERE, "fixtures")
    names = sorted(n for n in os.listdir(fixtures) if n.endswith(".onnx"))
    assert len(names) >= 8
    for name in names:
        check_structure(onnx.load(os.path.join(fixtures, name)), name)



# --- inputs: what is wrong is what is said ---------------------------------------------

def test_a_text_file_given_as_npy_is_told_as_not_npy(tmp_path):
    garbage = tmp_path / "garbage.npy"
    garbage.write_text("garbage")
    line = one_line(run_cli(VIT, "--input", garbage, "--out", tmp_path / "o"))
    assert line == (f"error: {garbage}: not a .npy array: it does not begin with the .npy "
                    f"signature (\\x93NUMPY)")
    assert "pickled" not in line
    assert not (tmp_path / "o").exists()


def test_an_all_zero_input_is_told_as_zero_not_as_nan(tmp_path):
    import numpy as np

    shape = np.load(VIT_INPUTS).shape
    zeros = tmp_path / "z.npy"
    np.save(zeros, np.zeros(shape, np.int64))
    line = one_line(run_cli(VIT, "--input", zeros, "--out", tmp_path / "o"))
    assert "is zero on every calibration sample (input_max = 0.0)" in line, line
    assert "NaN" not in line
    assert not (tmp_path / "o").exists()


def _init(m, name):
    return next(t for t in m.graph.initializer if t.name == name)


INIT_CASES = {
    # dims that disagree with the data, raw_data cut short, float32 bytes relabelled FLOAT16
    "dims": (lambda t: t.dims.__setitem__(slice(None), [16, 1, 4]), "1024 bytes of raw_data do not "
             "decode to dims [16, 1, 4] of FLOAT"),
    "short": (lambda t: setattr(t, "raw_data", t.raw_data[:10]), "10 bytes of raw_data do not "
              "decode to dims [16, 1, 4, 4] of FLOAT"),
    "relabelled": (lambda t: setattr(t, "data_type", onnx.TensorProto.FLOAT16), "1024 bytes of "
                   "raw_data do not decode to dims [16, 1, 4, 4] of FLOAT16"),
}


@pytest.mark.parametrize("case", sorted(INIT_CASES))
def test_an_initializer_that_does_not_decode_names_the_file_and_initializer(tmp_path, case):
    change, want = INIT_CASES[case]
    path = _mutate(tmp_path, case, lambda m: change(_init(m, "patch.weight")))
    line = one_line(run_cli(path, "--input", VIT_INPUTS, "--out", tmp_path / "o"))
    assert line.startswith(f"error: {path}: initializer patch.weight: {want} ("), line
    assert not (tmp_path / "o").exists()


def test_an_npy_of_zero_samples_is_told_as_such(tmp_path):
    import numpy as np

    empty = tmp_path / "x.npy"
    np.save(empty, np.load(VIT_INPUTS)[:0])
    line = one_line(run_cli(VIT, "--input", empty, "--out", tmp_path / "o"))
    assert line == f"error: {empty}: 0 samples (shape (0, 1, 12, 12)): a batch holds at least one"
    assert not (tmp_path / "o").exists()


def test_a_float64_input_beyond_float32_is_told_as_such_without_a_warning(tmp_path):
    import numpy as np

    big = tmp_path / "x.npy"
    x = np.load(VIT_INPUTS).astype(np.float64)
    x[3, 0, 2, 5] = -1e300
    np.save(big, x)
    line = one_line(run_cli(VIT, "--input", big, "--out", tmp_path / "o"))
    assert line == (f"error: {big}: 1 of {x.size} values are beyond the float32 range (float32 "
                    f"holds |x| up to 3.402823e+38), such as -1e+300"), line
    assert "NaN" not in line and "Warning" not in line
    assert not (tmp_path / "o").exists()


def test_a_constant_that_does_not_decode_names_the_file_node_and_attribute(tmp_path):
    """A Constant's value goes through the initializers' decoding guard (values.decoded)."""
    def change(m):
        _node(m, "/Constant").attribute[0].t.dims[:] = [3]

    path = _mutate(tmp_path, "const", change)
    line = one_line(run_cli(path, "--input", VIT_INPUTS, "--out", tmp_path / "o"))
    assert line.startswith(f"error: {path}: node 2 (Constant -> /Constant_output_0): value: 8 bytes "
                           f"of raw_data do not decode to dims [3] of INT64 ("), line
    assert not (tmp_path / "o").exists()


def test_a_uint64_input_beyond_int64_is_refused_not_wrapped(tmp_path):
    import numpy as np

    big = tmp_path / "x.npy"
    x = np.zeros(np.load(VIT_INPUTS).shape, np.uint64)
    x[1, 0, 3, 4] = 2**64 - 1  # would become -1 as int64
    np.save(big, x)
    line = one_line(run_cli(VIT, "--input", big, "--out", tmp_path / "o"))
    assert line == (f"error: {big}: 1 of {x.size} values are beyond int64 (up to "
                    f"9223372036854775807), such as 18446744073709551615"), line
    assert not (tmp_path / "o").exists()


def test_as_integers_keeps_what_fits_and_refuses_what_would_wrap():
    """The rule the --input and --feed integer arrays share: exact comparison in the file's
    own type (uint64 2**63 - 1 fits int64; 2**63 does not)."""
    import numpy as np
    from sresim_export.inputs import as_integers

    kept = as_integers(np.array([2**63 - 1, 0], np.uint64), np.int64, "a.npy")
    assert kept.dtype == np.int64 and kept.tolist() == [2**63 - 1, 0]
    with pytest.raises(ValueError, match=r"^a\.npy: 1 of 2 values are beyond int64 \(up to "
                                         r"9223372036854775807\), such as 9223372036854775808$"):
        as_integers(np.array([2**63, 1], np.uint64), np.int64, "a.npy")
    with pytest.raises(ValueError, match=r"^f\.npy: 2 of 3 values are beyond int32 \(down to "
                                         r"-2147483648\), such as -2147483649$"):
        as_integers(np.array([-2**31 - 1, 5, -2**40], np.int64), np.int32, "f.npy")
    with pytest.raises(ValueError, match=r"beyond uint8 \(down to 0\), such as -1$"):
        as_integers(np.array([-1], np.int8), np.uint8, "u.npy")
