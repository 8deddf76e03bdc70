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


# A journal is data, not an instruction: recovery touches only the exporter's files, their
# temporaries `.NAME.tmp.PID.N` and old links `.NAME.old.PID.N` of the journal's pid, in the
# bundle directory, after the destination checks of a first write; anything else is refused
# in one line, nothing touched (the rules of sresim's recovery, crates/outdir/src/recover.rs).

def planted(tmp_path):
    """A bundle `b` beside a directory `beside` holding a victim file, a dot file and a
    dot-named temporary; returns (b, beside)."""
    b, beside = tmp_path / "b", tmp_path / "beside"
    write_bundle(b, "old", "s", [layer()])
    beside.mkdir()
    (beside / "victim").write_text("victim")
    (beside / ".profile").write_text("profile")
    (beside / ".t").write_text("planted")
    (b / ".manifest.json.tmp.42.1").write_text("planted")
    return b, beside


def snapshot(*dirs):
    out = {}
    for d in dirs:
        for n in sorted(os.listdir(d)):
            p = os.path.join(d, n)
            out[p] = os.readlink(p) if os.path.islink(p) else open(p, "rb").read()
    return out


def refused(b, beside, journal, want):
    from sresim_export.bundle import recover

    (b / JOURNAL).write_text(journal)
    before = snapshot(b, beside)
    with pytest.raises(ValueError) as e:
        recover(str(b))
    msg = str(e.value)
    assert "\n" not in msg and ".sresim-commit: refused, nothing changed: " in msg and want in msg, msg
    assert snapshot(b, beside) == before


def v2(writer, body):
    return f"sresim-commit 2\nwriter {writer}\npid 42\n{body}"


def test_planted_journals_naming_paths_elsewhere_touch_nothing(tmp_path):
    b, beside = planted(tmp_path)
    # The earlier format (three absolute paths a file): a file beside the bundle replaced,
    # a dot file elsewhere removed as an "old link", a path through "..".
    refused(b, beside, f"{beside}/.t\n{beside}/victim\n\n", "written by an earlier")
    refused(b, beside, f"{b}/.manifest.json.tmp.42.1\n{b}/manifest.json\n{beside}/.profile\n",
            "written by an earlier")
    refused(b, beside, f"{b}/../beside/.t\n{b}/../beside/victim\n\n", "written by an earlier")
    # This format: only the exporter's two names, in the bundle directory.
    refused(b, beside, v2("export", f"file 0 1 - {beside}/victim\n"), "not a file the exporter writes")
    refused(b, beside, v2("export", "file 0 1 - ../beside/victim\n"), "not a file the exporter writes")
    refused(b, beside, v2("export", "file 0 1 2 .profile\n"), "not a file the exporter writes")
    refused(b, beside, v2("export", "file 1 1 - manifest.json\n"), 'not "file 0 TMP OLD NAME"')
    refused(b, beside, v2("export", f"dir {beside}\nfile 0 1 - manifest.json\n"), "not a file line")
    # Another command's files, and another command's journal: left to sresim.
    refused(b, beside, v2("export", "file 0 1 - layers.csv\n"), "layers.csv is not a file the exporter writes")
    refused(b, beside, v2("run", "file 0 1 - layers.csv\n"), "written by sresim's 'run'")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="making a file of another user needs root")
def test_files_of_another_user_are_never_moved(tmp_path):
    b, beside = planted(tmp_path)
    other = 54321
    # A temporary someone else planted, under a journal its writer could have written.
    os.chown(b / ".manifest.json.tmp.42.1", other, -1)
    refused(b, beside, v2("export", "file 0 2 - tensors.npz\nfile 0 1 - manifest.json\n"),
            f"{b}/.manifest.json.tmp.42.1 is owned by user {other}, not by this user (0)")
    # A journal of another user.
    os.chown(b / ".manifest.json.tmp.42.1", 0, -1)
    (b / JOURNAL).write_text(v2("export", "file 0 2 - tensors.npz\nfile 0 1 - manifest.json\n"))
    os.chown(b / JOURNAL, other, -1)
    from sresim_export.bundle import recover
    before = snapshot(b, beside)
    with pytest.raises(ValueError, match=f"refused, nothing changed: owned by user {other}"):
        recover(str(b))
    assert snapshot(b, beside) == before
    # The user's own journal and temporary recover.
    os.chown(b / JOURNAL, 0, -1)
    recover(str(b))
    assert (b / "manifest.json").read_text() == "planted" and not (b / JOURNAL).exists()


def test_a_journal_of_one_file_is_refused(tmp_path):
    # No writer journals one file (one file is one rename): completing it would replace
    # one file of the bundle alone, beside the old tensors.npz.
    b, beside = planted(tmp_path)
    refused(b, beside, v2("export", "file 0 1 - manifest.json\n"),
            "it names one file (manifest.json), and a writer journals only a replacement of two files or more")
    assert json.loads((b / "manifest.json").read_text())["name"] == "old"


def test_a_journal_that_would_replace_one_file_alone_is_refused(tmp_path):
    # The exporter renames in the journal's line order and records no old link it did not
    # make: a journal whose later temporary is gone while its earlier one is there, or
    # whose recorded old link is gone, is no writer's state; completing it replaced the
    # manifest alone, beside the old tensors.npz.
    b, beside = planted(tmp_path)
    refused(b, beside, v2("export", "file 0 1 - manifest.json\nfile 0 2 - tensors.npz\n"),
            "after it in the journal, is gone: a writer renames its temporaries in the journal's order")
    (b / ".tensors.npz.tmp.42.2").write_text("planted")
    (b / ".tensors.npz.old.42.4").write_text("old link")
    refused(b, beside, v2("export", "file 0 1 3 manifest.json\nfile 0 2 4 tensors.npz\n"),
            ".manifest.json.old.42.3: the old link it records for manifest.json is gone")
    refused(b, beside, v2("export", "file 0 1 - manifest.json\nfile 0 2 1 tensors.npz\n"),
            "1 numbers two of its files")
    assert json.loads((b / "manifest.json").read_text())["name"] == "old"


def killed_after(b, renames):
    """The bundle `b` replaced by a writer killed after `renames` renames; its journal."""
    env = dict(os.environ, SRESIM_TEST_ABORT_AFTER_RENAMES=str(renames))
    r = subprocess.run([sys.executable, "-c", KILLED.format(tools=TOOLS, out=str(b))], env=env)
    assert r.returncode < 0, "killed by a signal"
    return (b / JOURNAL).read_text()


@pytest.mark.parametrize("edit", ["pid", "swap"])
def test_a_real_journal_with_its_pid_or_names_edited_is_refused(tmp_path, edit):
    # A kill after the first rename (new tensors.npz beside the old manifest.json), its
    # journal's pid edited or its two names swapped: none of the temporaries it names is
    # there, so it was completed by renaming nothing and removed, the mixed bundle left
    # unmarked. Another temporary of its names stands where its own is gone: refused.
    from sresim_export.bundle import recover

    b, beside = tmp_path / "b", tmp_path / "beside"
    beside.mkdir()
    write_bundle(b, "old", "s", [layer()])
    text = killed_after(b, 1)
    if edit == "pid":
        pid = int(text.split("\npid ")[1].split("\n")[0])
        edited = text.replace(f"\npid {pid}\n", f"\npid {pid + 1}\n")
    else:
        edited = (text.replace("manifest.json", "@").replace("tensors.npz", "manifest.json")
                  .replace("@", "tensors.npz"))
    assert edited != text
    refused(b, beside, edited, "its pid or names are not its writer's")
    (b / JOURNAL).write_text(text)
    recover(str(b))
    assert read_bundle(b)[0]["name"] == "new"
    assert listing(b) == ["manifest.json", "tensors.npz"]


@pytest.mark.parametrize("renames", [0, 1])
def test_stale_temporaries_leave_a_real_journal_recoverable(tmp_path, renames):
    # Temporaries of writers killed before their journal (dot files nothing removes) beside
    # a real journal: it is completed, they are left as they are.
    from sresim_export.bundle import recover

    b = tmp_path / "b"
    write_bundle(b, "old", "s", [layer()])
    stale = [".manifest.json.tmp.1.0", ".tensors.npz.tmp.1.1"]
    for n in stale:
        (b / n).write_text("stale")
    killed_after(b, renames)
    recover(str(b))
    assert read_bundle(b)[0]["name"] == "new"
    assert listing(b) == sorted(["manifest.json", "tensors.npz"] + stale)


def test_recovery_checks_destinations_like_a_first_write(tmp_path):
    b, beside = planted(tmp_path)
    os.unlink(b / "manifest.json")
    os.symlink(beside / "victim", b / "manifest.json")
    refused(b, beside, v2("export", "file 0 1 - manifest.json\nfile 0 2 - tensors.npz\n"),
            "manifest.json: is a symbolic link")
    os.unlink(b / "manifest.json")
    os.unlink(b / ".manifest.json.tmp.42.1")
    os.symlink(beside / "victim", b / ".manifest.json.tmp.42.1")
    refused(b, beside, v2("export", "file 0 1 - manifest.json\nfile 0 2 - tensors.npz\n"),
            ".manifest.json.tmp.42.1: not a regular file")
    # A symbolic link as a directory component of the bundle: the link is followed to the
    # bundle the user named, and nothing outside it is named.
    os.unlink(b / ".manifest.json.tmp.42.1")
    (b / ".manifest.json.tmp.42.1").write_text("new")
    (b / ".tensors.npz.old.42.3").write_text("old link")
    os.symlink(b, tmp_path / "via")
    from sresim_export.bundle import recover
    (b / JOURNAL).write_text(v2("export", "file 0 2 3 tensors.npz\nfile 0 1 - manifest.json\n"))
    recover(str(tmp_path / "via"))
    assert listing(b) == ["manifest.json", "tensors.npz"]
    assert (b / "manifest.json").read_text() == "new"
    assert snapshot(beside)[str(beside / "victim")] == b"victim"


def test_a_writer_waits_for_readers_and_is_refused_by_a_writer(tmp_path):
    import fcntl
    import threading
    import time

    b = tmp_path / "b"
    write_bundle(b, "old", "s", [layer()])
    fd = os.open(b, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        threading.Timer(0.3, lambda: fcntl.flock(fd, fcntl.LOCK_UN)).start()
        start = time.monotonic()
        write_bundle(b, "new", "s", [layer()])
        assert time.monotonic() - start >= 0.25, "waited for the reader"
        assert json.loads((b / "manifest.json").read_text())["name"] == "new"
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(ValueError, match="another process is writing this directory"):
            write_bundle(b, "third", "s", [layer()])
        assert json.loads((b / "manifest.json").read_text())["name"] == "new"
    finally:
        os.close(fd)


def test_sresim_completes_a_journal_the_exporter_left(tmp_path):
    """One format, one set of rules: a writer of sresim opening the directory of a killed
    export completes its renames (writer `export`, the bundle's two names)."""
    from sresim_export.schema import find_binary

    binary = find_binary()
    if binary is None:
        pytest.skip("no sresim binary (build it, or set SRESIM)")
    b = tmp_path / "b"
    write_bundle(b, "old", "s", [layer()])
    env = dict(os.environ, SRESIM_TEST_ABORT_AFTER_RENAMES="1")
    subprocess.run([sys.executable, "-c", KILLED.format(tools=TOOLS, out=str(b))], env=env)
    journal = (b / JOURNAL).read_text()
    assert journal.startswith("sresim-commit 2\nwriter export\npid "), journal
    r = subprocess.run([binary, "run", "-w", "lenet5", "--synthetic-inputs", "--samples", "1", "-q",
                        "-o", str(b)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    manifest, _ = read_bundle(b)
    assert manifest["name"] == "new"
    assert JOURNAL not in listing(b)
    assert not [n for n in listing(b) if n.startswith(".")]


def test_a_manifest_naming_a_key_twice_is_refused(tmp_path):
    b = tmp_path / "b"
    write_bundle(b, "old", "s", [layer()])
    text = (b / "manifest.json").read_text()
    (b / "manifest.json").write_text(text.replace('"name": "old"', '"name": "old", "name": "new"', 1))
    with pytest.raises(ValueError, match=r"manifest.json: name: the key appears twice"):
        read_bundle(b)
