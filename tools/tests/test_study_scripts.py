"""scripts/*-study and scripts/sre-evaluation: a user mistake (a flag, a --bin that is not
sresim, an --out that cannot be written, a file that is not what it should be) is one
`error: ...` line, a non-zero exit and nothing written (docs/errors.md, "Scripts")."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Stands for sresim: says its version, refuses the device preset "bogus" as sresim
# refuses an unknown --set value, and otherwise succeeds writing nothing at all.
FAKE = """#!/bin/sh
[ "$1" = --version ] && { echo "sresim 0.0.0"; exit 0; }
case "$*" in
  *device.preset=bogus*)
    echo "error: --set device.preset=bogus: device.preset: 'bogus' is not a preset" >&2
    exit 1;;
esac
exit 0
"""


@pytest.fixture
def work(tmp_path):
    """A folder holding the fake sresim and a file that is no sresim; returns it."""
    fake = tmp_path / "sresim"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    other = tmp_path / "other"
    other.write_text("#!/bin/sh\necho hello\n")
    other.chmod(0o755)
    return tmp_path


def run(script, args, cwd):
    args = [str(a).format(tmp=cwd) for a in args]
    return subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), *args],
                          capture_output=True, text=True, cwd=cwd)


def listing(d):
    return sorted(os.path.relpath(os.path.join(r, f), d)
                  for r, ds, fs in os.walk(d) for f in fs + ds)


def assert_refused(p, says, before, cwd):
    assert p.returncode != 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: "), p.stderr
    assert says in lines[0], p.stderr
    assert "Traceback" not in p.stderr and "usage:" not in p.stderr
    assert listing(cwd) == before, "something was written"


ACC = ["--workload", "lenet5", "--bin", "{tmp}/sresim"]
CASES = [
    # accuracy-study: --out is the CSV it appends to
    ("accuracy-study", ["--out", "a.csv", *ACC, "--frobnicate"],
     "unrecognized arguments: --frobnicate"),
    ("accuracy-study", ["--out", "a.csv", *ACC, "--samples"], "--samples: expected one argument"),
    ("accuracy-study", ["--out", "a.csv", *ACC, "--samples", "ten"], "invalid int value: 'ten'"),
    ("accuracy-study", ["--out", "a.csv", *ACC, "--samples", "0"], "--samples: 0 is not"),
    ("accuracy-study", ["--out", "a.csv", *ACC, "--ou-rows", "4,x"], "--ou-rows: 'x' is not"),
    ("accuracy-study", ["--out", "a.csv", *ACC, "--modes", "sre,fast"], "--modes: 'fast'"),
    ("accuracy-study", ["--out", "/dev/full", *ACC], "--out /dev/full: exists and is not a regular"),
    ("accuracy-study", ["--out", "{tmp}", *ACC], "is a directory"),
    ("accuracy-study", ["--out", "sresim/a.csv", *ACC], "sresim is not a directory"),
    ("accuracy-study", ["--out", "/proc/none/a.csv", *ACC], "cannot write in /proc"),
    ("accuracy-study", ["--out", "a.csv", "--workload", "lenet5", "--bin", "{tmp}/none"],
     "--bin {tmp}/none: not an executable file"),
    ("accuracy-study", ["--out", "a.csv", "--workload", "lenet5", "--bin", "{tmp}/other"],
     "--bin {tmp}/other: not sresim"),
    # a preset sresim refuses, though not the first: refused before the first run
    ("accuracy-study", ["--out", "a.csv", *ACC, "--presets", "ideal,bogus"],
     "--presets bogus: device.preset: 'bogus' is not a preset"),
    # sresim gives no table: named, and nothing written
    ("accuracy-study", ["--out", "a.csv", *ACC], "layers.csv: No such file"),
    # transformer-study: --out is the sweep folder
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out", "o", "--frobnicate"],
     "unrecognized arguments: --frobnicate"),
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out"], "--out: expected one argument"),
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out", "o", "--check", "nope"],
     "nope: not a part"),
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out", "/dev/full", "--check"],
     "--out /dev/full: exists and is not a directory"),
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out", "sresim", "--check"],
     "--out sresim: exists and is not a directory"),
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out", "/proc/none", "--check"],
     "cannot write in /proc"),
    ("transformer-study", ["--bin", "{tmp}/none", "--out", "o", "--check"],
     "not an executable file"),
    ("transformer-study", ["--bin", "{tmp}/other", "--out", "o", "--check"], "not sresim"),
    ("transformer-study", ["--bin", "{tmp}/sresim", "--out", "o", "--check", "classes"],
     "points.csv: No such file"),
    # ou-size-study: --out the sweep folders, --data the tables
    ("ou-size-study", ["--bin", "{tmp}/sresim", "--frobnicate"],
     "unrecognized arguments: --frobnicate"),
    ("ou-size-study", ["--bin", "{tmp}/sresim", "--parts", "slice,nope"], "unknown part 'nope'"),
    ("ou-size-study", ["--bin", "{tmp}/sresim", "--parts"], "--parts: expected one argument"),
    ("ou-size-study", ["--bin", "{tmp}/sresim", "--out", "/dev/full", "--quick"],
     "--out /dev/full: exists and is not a directory"),
    ("ou-size-study", ["--bin", "{tmp}/sresim", "--out", "o", "--data", "sresim"],
     "--data sresim: exists and is not a directory"),
    ("ou-size-study", ["--bin", "{tmp}/sresim", "--out", "/proc/none", "--quick"],
     "cannot write in /proc"),
    ("ou-size-study", ["--bin", "{tmp}/none", "--quick"], "not an executable file"),
    ("ou-size-study", ["--bin", "{tmp}/other", "--quick"], "not sresim"),
    # functional-study: --out is the prefix of a .csv and a .svg
    ("functional-study", ["lenet5", "--out", "f", "--bin", "{tmp}/sresim", "--frobnicate"],
     "unrecognized arguments: --frobnicate"),
    ("functional-study", ["--out", "f", "--bin", "{tmp}/sresim"],
     "the following arguments are required: workloads"),
    ("functional-study", ["lenet5 --samples '1", "--out", "f", "--bin", "{tmp}/sresim"],
     "No closing quotation"),
    ("functional-study", ["", "--out", "f", "--bin", "{tmp}/sresim"], "names no workload"),
    ("functional-study", ["lenet5", "--out", "/dev/full/f", "--bin", "{tmp}/sresim"],
     "/dev/full is not a directory"),
    ("functional-study", ["lenet5", "--out", "/proc/none/f", "--bin", "{tmp}/sresim"],
     "cannot write in /proc"),
    ("functional-study", ["lenet5", "--out", "f", "--bin", "{tmp}/none"],
     "not an executable file"),
    ("functional-study", ["lenet5", "--out", "f", "--bin", "{tmp}/other"], "not sresim"),
    # sre-evaluation
    ("sre-evaluation", ["--bin", "{tmp}/none", "--out", "o", "--check"], "not an executable file"),
    ("sre-evaluation", ["--bin", "{tmp}/other", "--out", "o", "--check"], "not sresim"),
    ("sre-evaluation", ["--bin", "{tmp}/sresim", "--out", "/proc/none", "--check"],
     "cannot write in /proc"),
]


@pytest.mark.parametrize("script, args, says", CASES)
def test_a_mistake_is_one_line_and_nothing_is_written(work, script, args, says):
    before = listing(work)
    p = run(script, args, work)
    assert_refused(p, says.format(tmp=work), before, work)
    assert p.stdout == ""


def test_accuracy_study_refuses_a_csv_it_did_not_write_and_leaves_it(work):
    out = work / "a.csv"
    out.write_text("x,y\n1,2\n")
    before = listing(work)
    p = run("accuracy-study", ["--out", out, *ACC], work)
    assert_refused(p, "--out " + str(out) + ": not a table of this script", before, work)
    assert out.read_text() == "x,y\n1,2\n"


def test_a_table_without_its_columns_is_named(work):
    """The tables a script reads back (its own, or one a --markdown reads) that lack a
    column: the file is named, in one line."""
    data = work / "data"
    data.mkdir()
    (data / "ou-size-slice.csv").write_text("workload,mode\nfmnist-cnn,sre\n")
    before = listing(work)
    p = run("ou-size-study", ["--markdown", "--data", data], work)
    assert_refused(p, f"{data}/ou-size-slice.csv: no 'accuracy_samples'", before, work)
    (work / "f.csv").write_text("workload,device\nlenet5,x\n")
    before = listing(work)
    p = run("functional-study", ["lenet5", "--out", "f", "--plot-only"], work)
    assert_refused(p, "f.csv: no 'ou_rows'", before, work)


def test_out_is_printed_escaped(work):
    """A control character of --out reaches the terminal as sresim prints it: escaped."""
    bad = work / "o\x1b[2J"
    bad.write_text("")
    p = run("sre-evaluation", ["--bin", "{tmp}/sresim", "--check", "--out", bad], work)
    assert p.returncode != 0
    assert "\x1b" not in p.stderr
    assert p.stderr.strip() == f"error: {work}/o\\u{{1b}}[2J: exists and is not a directory"
    p = run("accuracy-study", ["--out", "a\n.csv", *ACC, "--modes", "\x07"], work)
    assert p.stderr == "error: --modes: '\\u{7}' is not one of dense, sre, ideal\n"


@pytest.mark.parametrize("text, shown", [
    ("c1\x1b[2J", "c1\\u{1b}[2J"),
    ("a\tb\nc\r\0", "a\\tb\\nc\\r\\0"),
    ("x\x7f\x85\ufffe\uffff", "x\\u{7f}\\u{85}\\u{fffe}\\u{ffff}"),
    ("conv µ \\ \"q\" 层", "conv µ \\ \"q\" 层"),
    ("bad\udcff", "bad\ufffd"),
])
def test_printable_is_sresims_rule(text, shown):
    """The cases of crates/bounds text.rs's own test, and a path byte that is not UTF-8."""
    import importlib.machinery
    import importlib.util
    for script in ("accuracy-study", "transformer-study", "ou-size-study", "sre-evaluation"):
        path = os.path.join(ROOT, "scripts", script)
        loader = importlib.machinery.SourceFileLoader(script.replace("-", "_"), path)
        spec = importlib.util.spec_from_loader(loader.name, loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        assert mod.printable(text) == shown, script
