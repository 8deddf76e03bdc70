"""scripts/sre-evaluation: the grids it writes are the study's, and a model change is only
allowed where it cannot overwrite the committed data."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "sre-evaluation")


def load():
    loader = importlib.machinery.SourceFileLoader("sre_evaluation", SCRIPT)
    spec = importlib.util.spec_from_loader("sre_evaluation", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


se = load()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib needs Python 3.11")
def test_every_part_writes_the_grid_it_declares():
    import tomllib
    for name, (_, grid) in se.PARTS.items():
        parsed = tomllib.loads(se.grid_text(grid, {}))
        assert parsed["workloads"] == grid["workloads"], name
        assert parsed["modes"] == grid["modes"], name
        assert parsed.get("set", {}) == grid["set"], name
        assert parsed.get("axes", {}) == grid["axes"], name
        assert parsed.get("points", []) == grid.get("points", []), name
    # a model change joins the fixed keys, typed as the grid types them
    extra = {"energy.index_per_bit_pj": se.typed("0.00808"), "timing.sync": se.typed("bit")}
    parsed = tomllib.loads(se.grid_text(se.PARTS["networks"][1], extra))
    assert parsed["set"]["energy.index_per_bit_pj"] == 0.00808
    assert parsed["set"]["timing.sync"] == "bit"
    assert parsed["set"]["synth.structure"] == "ssl"


def test_values_are_typed_as_a_grid_types_them():
    assert se.typed("8") == 8 and isinstance(se.typed("8"), int)
    assert se.typed("7.68") == 7.68
    assert se.typed("true") is True and se.typed("false") is False
    assert se.typed("auto") == "auto"


def test_every_figure_belongs_to_a_part_and_no_two_share_a_file():
    svgs = [svg for name in se.PLOTS for svg, _ in se.PLOTS[name]]
    assert set(se.PLOTS) <= set(se.PARTS)
    assert len(svgs) == len(set(svgs))
    assert all(svg.startswith("sre-eval-") for svg in svgs)


@pytest.mark.parametrize("args, says", [
    (["--set", "timing.cycle_ns=8"], "error: --set: only with --check"),
    (["--check", "--set", "timing.cycle_ns"], "error: --set: 'timing.cycle_ns' is not KEY=VALUE"),
    (["--parts", "networks,nope"], "error: --parts: unknown part 'nope'"),
])
def test_a_wrong_flag_is_one_error_line_before_anything_runs(tmp_path, args, says):
    # /bin/true stands for sresim: nothing may get as far as running it
    p = subprocess.run([sys.executable, SCRIPT, "--bin", "/bin/true", "--out", str(tmp_path),
                        "--data", str(tmp_path / "data"), *args],
                       capture_output=True, text=True)
    assert p.returncode != 0
    assert p.stderr.strip().startswith(says), p.stderr
    assert not (tmp_path / "data").exists()


FAKE = """#!/bin/sh
# stands for sresim: says its version, refuses every grid as sresim refuses a bad --set
[ "$1" = --version ] && { echo "sresim 0.0.0"; exit 0; }
for a in "$@"; do case "$a" in *.toml) g="$a";; esac; done
echo "error: $g: set: ou.bogus: unknown key (see configs/default.toml)" >&2
exit 1
"""

# stands for sresim refusing a grid at a line of it (as it refuses a string value with a
# control character), and accepting every grid without the key timing.sync
FAKE_LINE = """#!/bin/sh
[ "$1" = --version ] && { echo "sresim 0.0.0"; exit 0; }
for a in "$@"; do case "$a" in *.toml) g="$a";; esac; done
grep -q timing.sync "$g" || exit 0
echo "error: $g: line 5: set.timing.sync: a control character in a string" >&2
exit 1
"""


def check_with_sets(tmp_path, fake_text, *sets):
    """sre-evaluation --fast --check with each of `sets` as a --set, the fake sresim
    `fake_text` standing for sresim: its one error line, after checking that it failed
    and wrote nothing."""
    fake = tmp_path / "sresim"
    fake.write_text(fake_text)
    fake.chmod(0o755)
    out = tmp_path / "out"
    args = [a for kv in sets for a in ("--set", kv)]
    p = subprocess.run([sys.executable, SCRIPT, "--bin", str(fake), "--fast", "--check",
                        "--out", str(out), *args], capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    assert not out.exists()
    return p.stderr.strip()


def test_a_set_sresim_refuses_is_one_line_before_anything_is_written(tmp_path):
    assert check_with_sets(tmp_path, FAKE, "ou.bogus=1") == \
        "error: --set ou.bogus=1: ou.bogus: unknown key (see configs/default.toml)"


def test_a_set_refused_at_a_line_of_the_scratch_grid_names_the_set(tmp_path):
    # The scratch grid is not the user's: the error names the --set that sresim refused
    # (of several), never the grid's file or a line of it.
    assert check_with_sets(tmp_path, FAKE_LINE, "ou.rows=8", "timing.sync=a\x1bb") == \
        "error: --set timing.sync=a\\u{1b}b: timing.sync: a control character in a string"


def test_a_set_value_reaches_sresim_as_written():
    # Control characters, quotes and backslashes go into the grid as TOML escapes.
    import tomllib
    for v in ["a\x1bb", 'q"uote', "back\\slash", "tab\tnl\n", "\x7f", "µ层"]:
        text = se.grid_text({"workloads": ["lenet5"], "modes": ["dense"], "set": {},
                             "axes": {}}, {"k\n\"": v})
        assert tomllib.loads(text)["set"] == {"k\n\"": v}


def test_a_failing_sresim_call_prints_no_traceback(tmp_path):
    # No --set: the first sresim call is a part's sweep, which fails.
    fake = tmp_path / "sresim"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    p = subprocess.run([sys.executable, SCRIPT, "--bin", str(fake), "--check", "--parts",
                        "networks", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize("args, says", [
    (["--out", "/etc/passwd"], "error: /etc/passwd: exists and is not a directory"),
    (["--parts"], "error: argument --parts: expected one argument"),
    (["--frobnicate"], "error: unrecognized arguments: --frobnicate"),
])
def test_a_bad_out_or_usage_is_one_line(tmp_path, args, says):
    p = subprocess.run([sys.executable, SCRIPT, "--bin", "/bin/true", "--check", *args],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode != 0
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith(says), p.stderr


# stands for sresim refusing a grid's [set] value as it does: naming the key by the
# `--set KEY=VALUE` it makes of it (sweep's plan, config's blame_sets)
FAKE_SET = """#!/bin/sh
[ "$1" = --version ] && { echo "sresim 0.0.0"; exit 0; }
for a in "$@"; do case "$a" in *.toml) g="$a";; esac; done
echo "error: $g: set: --set ou.rows=\\"zz\\": ou.rows: invalid type: string \\"zz\\", expected u32" >&2
exit 1
"""


def test_a_set_refused_by_its_value_names_the_flag_once(tmp_path):
    assert check_with_sets(tmp_path, FAKE_SET, "ou.rows=zz") == \
        'error: --set ou.rows=zz: ou.rows: invalid type: string "zz", expected u32'
