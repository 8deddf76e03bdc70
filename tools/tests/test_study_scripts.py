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


# A table a --markdown reads back that is not what the script wrote: one line naming the
# file, nothing on stdout (docs/errors.md, "Scripts": read_table).
SRE_HEAD = ("workload,mode,speedup_vs_dense,energy_saving_vs_dense,rows_driven,"
            "weight_storage_bits,index_storage_bits,e_index_pj,energy_pj,e_ouf_pj\n")
SRE_ROW = "w,{},1,0.5,10,10,1,1,10,1\n"
OU_HEAD = ("workload,mode,device.preset,adc.range,adc.bits,accuracy_samples,accuracy_draws,"
           "ou.rows,top1_quantized,top1_mean,top1_ci_low,top1_ci_high,output_rel_rmse_mean\n")
OU_ROW = "w,sre,ideal,max,4,40,5,2,0.9,0.8,0.7,0.9,0.01\n"
BAD_TABLES = [
    # sre-evaluation: no `workload` column
    ("sre-evaluation", "sre-eval-networks.csv", "a,b\n1,2\n", "no 'workload'"),
    # a dense row without its sre row (the chip table pairs them)
    ("sre-evaluation", "sre-eval-chip.csv",
     "workload,mode,chip_chips,chip_cycles_per_image,speedup_vs_dense,chip_energy_pj\n"
     "x,dense,1,10,1,5\n", "no row with workload = x, mode = sre"),
    # the speed table pairs every mode with dense
    ("sre-evaluation", "sre-eval-pruned-bundles.csv",
     SRE_HEAD + SRE_ROW.format("sre") + SRE_ROW.format("weight"),
     "no row with workload = w, mode = dense"),
    ("sre-evaluation", "sre-eval-networks.csv", SRE_HEAD + "w,dense,1,0.5\n",
     "line 2: 4 cells, the header has 10"),
    ("sre-evaluation", "sre-eval-networks.csv", SRE_HEAD + SRE_ROW.format("dense").replace("10", "ten", 1),
     "line 2: rows_driven 'ten' is not a number"),
    ("sre-evaluation", "sre-eval-networks.csv", b"workload,mode\xff\n", "not UTF-8 text (byte 13"),
    # ou-size-study: short rows, a cell that is no number
    ("ou-size-study", "ou-size-grid.csv", OU_HEAD + "w,sre,ideal,max,4,40\n",
     "line 2: 6 cells, the header has 13"),
    ("ou-size-study", "ou-size-grid.csv", OU_HEAD + OU_ROW.replace("0.8", "x"),
     "line 2: top1_mean 'x' is not a number"),
    ("ou-size-study", "ou-size-grid.csv", b"workload\xc3(\n", "not UTF-8 text (byte 8"),
]


@pytest.mark.parametrize("script, name, text, says", BAD_TABLES)
def test_markdown_refuses_a_table_it_cannot_read(work, script, name, text, says):
    data = work / "data"
    data.mkdir()
    (data / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    before = listing(work)
    p = run(script, ["--markdown", "--data", data], work)
    assert_refused(p, f"{data}/{name}: {says}", before, work)
    assert p.stdout == ""


@pytest.mark.parametrize("script", ["sre-evaluation", "ou-size-study"])
def test_markdown_refuses_a_data_folder_it_cannot_read(work, script):
    """--data that is no folder, or a folder holding none of the tables: refused, rather
    than printing nothing and succeeding."""
    os.mkfifo(work / "fifo")
    (work / "empty").mkdir()
    for data, says in (("/nonexistent", "--data /nonexistent: no such directory"),
                       ("fifo", "--data fifo: exists and is not a directory"),
                       ("empty", "--data empty: holds none of the tables")):
        before = listing(work)
        p = run(script, ["--markdown", "--data", data], work)
        assert_refused(p, says, before, work)
        assert p.stdout == ""


def test_plot_only_refuses_a_short_row(work):
    (work / "f.csv").write_text("workload,device,ou_rows,mode,func_rel_rmse\nw,d,4\n")
    before = listing(work)
    p = run("functional-study", ["lenet5", "--out", "f", "--plot-only"], work)
    assert_refused(p, "f.csv: line 2: 3 cells, the header has 5", before, work)


HEADER = "workload,preset,ou.rows,mode,cycles,energy_pj,top1,agreement,output_rel_rmse,samples"


@pytest.mark.parametrize("text, says", [
    # its columns in another order: the new rows would be written misaligned under them
    (",".join(reversed(HEADER.split(","))) + "\n", "not a table of this script (its header is not"),
    # a last row without its newline: the new row would be glued on
    (HEADER + "\nx,ideal,4,dense,1,1,1,1,1,1", "its last line does not end in a newline"),
    (HEADER + "\nx,ideal,4\n", "line 2: 3 cells, the header has 10"),
    (b"workload,preset\xff\n", "not UTF-8 text (byte 15 is 0xff)"),
])
def test_accuracy_study_appends_only_to_a_table_as_it_wrote_it(work, text, says):
    out = work / "a.csv"
    raw = text if isinstance(text, bytes) else text.encode()
    out.write_bytes(raw)
    before = listing(work)
    p = run("accuracy-study", ["--out", out, *ACC], work)
    assert_refused(p, f"--out {out}: {says}", before, work)
    assert out.read_bytes() == raw


# Stands for sresim refusing what `accuracy` refuses of --workload and --samples, and
# failing any `run` (the study's runs, and the preset probe): a refusal must come first.
FAKE_ACCURACY = """#!/bin/sh
[ "$1" = --version ] && { echo "sresim 0.0.0"; exit 0; }
case "$1 $*" in
  accuracy*--workload\\ lenet5\\ *)
    echo "error: --workload lenet5: a built-in network has synthetic weights and no graph input" >&2
    exit 1;;
  accuracy*--samples\\ 100000*)
    echo "error: --samples 100000: the graph input of b holds 500 samples" >&2
    exit 1;;
  accuracy*) exit 0;;
esac
echo "error: ran before the refusal" >&2
exit 1
"""


@pytest.mark.parametrize("args, says", [
    (["--workload", "b", "--samples", "100000"],
     "--samples 100000: the graph input of b holds 500 samples"),
    (["--workload", "lenet5"], "--workload lenet5: a built-in network"),
    (["--workload", "b", "--samples", "99999999999999999999"],
     "--samples: 99999999999999999999 is more than sresim counts"),
])
def test_accuracy_study_checks_workload_and_samples_before_any_run(work, args, says):
    fake = work / "sresim"
    fake.write_text(FAKE_ACCURACY)
    before = listing(work)
    p = run("accuracy-study", ["--out", "a.csv", "--bin", fake, *args], work)
    assert_refused(p, says, before, work)


@pytest.mark.parametrize("script", ["accuracy-study", "functional-study", "ou-size-study",
                                    "transformer-study", "sre-evaluation"])
def test_a_script_run_through_a_symlink_finds_its_guards(work, script):
    """scripts/study_guards.py is found from the script's real folder: a script linked
    elsewhere (as check-docs links scripts/) still refuses a mistake in one line."""
    link = work / "linked"
    link.symlink_to(os.path.join(ROOT, "scripts", script))
    p = subprocess.run([sys.executable, str(link), "--frobnicate"], capture_output=True,
                       text=True, cwd=work)
    assert p.returncode == 2
    # the one-line usage error of study_guards' Parser, naming the link as the program
    assert p.stderr.startswith("error: ") and p.stderr.endswith("(see linked --help)\n"), \
        p.stderr
    assert len(p.stderr.splitlines()) == 1


@pytest.mark.parametrize("unbuffered", ["1", None])
@pytest.mark.parametrize("script", ["accuracy-study", "sre-evaluation", "adc-survey-fit",
                                    "functional-study", "ou-size-study", "transformer-study"])
def test_help_to_a_full_stdout_is_one_line(tmp_path, script, unbuffered):
    # --help exits in argparse before `main`: its failed write was swallowed (status 0), or
    # told by Python at exit in two lines (status 120); now as the scripts' own output
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), "--help"],
                           stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert p.stderr == "error: stdout: cannot write: No space left on device\n", p.stderr
    assert os.listdir(tmp_path) == []
    # and to a stdout that takes it, the usage as before
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", script), "--help"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert p.returncode == 0 and p.stdout.startswith(f"usage: {script}"), p.stderr
