"""scripts/adc-survey-fit: a file that is not the survey's spreadsheet, a missing one, a
FIFO, no argument or a stray flag is one `error: ...` line and a non-zero exit, never a
traceback, the module docstring or a read that blocks (docs/errors.md, "Scripts").
No spreadsheet needed: the fit itself is run on a survey made here."""
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "adc-survey-fit")


def run(*args, cwd):
    # the timeout turns a blocking read (a FIFO opened) into a failure, not a hang
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


def refused(p):
    assert p.returncode != 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr and "usage:" not in p.stderr
    assert p.stdout == ""
    return lines[0]


def test_a_missing_file_a_directory_and_a_fifo_are_refused_before_opening(tmp_path):
    assert refused(run("/nonexistent/s.xlsx", cwd=tmp_path)) == (
        "error: /nonexistent/s.xlsx: cannot read: No such file or directory")
    assert refused(run(tmp_path, cwd=tmp_path)) == f"error: {tmp_path}: is a directory, not a file"
    os.mkfifo(tmp_path / "f")
    assert refused(run("f", cwd=tmp_path)) == (
        "error: f: is a FIFO, not a regular file (a FIFO, socket or device cannot be read)")


@pytest.mark.parametrize("content", [b"garbage\n", b"PK\x03\x04garbage", b""])
def test_a_file_that_is_no_spreadsheet_is_named(tmp_path, content):
    (tmp_path / "g.xlsx").write_bytes(content)
    line = refused(run("g.xlsx", cwd=tmp_path))
    assert line.startswith("error: g.xlsx: "), line


@pytest.mark.parametrize("args,says", [
    ((), "error: the following arguments are required: spreadsheet (see adc-survey-fit --help)"),
    (("--bogus",), "error: unrecognized arguments: --bogus (see adc-survey-fit --help)"),
    (("a.xlsx", "b.xlsx"), "error: unrecognized arguments: b.xlsx (see adc-survey-fit --help)"),
])
def test_argument_mistakes_are_one_line_not_the_docstring(tmp_path, args, says):
    assert refused(run(*args, cwd=tmp_path)) == says


def _script():
    loader = importlib.machinery.SourceFileLoader("adc_survey_fit", SCRIPT)
    spec = importlib.util.spec_from_loader("adc_survey_fit", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def _survey(n, seed=0):
    """n SAR converters of ISAAC's class whose energy follows node^0.8 and x1.9 per bit."""
    import numpy as np
    import pandas as pd

    r = np.random.RandomState(seed)
    node = r.choice([0.028, 0.04, 0.065, 0.09], n)
    sndr = r.uniform(31, 55, n)
    fs = np.exp(r.uniform(np.log(4e8), np.log(4e9), n))
    enob = (sndr - 1.76) / 6.02
    pj = np.exp(0.8 * np.log(node * 1000) + np.log(1.9) * enob + 0.1 * np.log(fs) - 8
                + r.normal(0, 0.05, n))
    return pd.DataFrame({"TYPE": "NQ", "ARCHITECTURE": "SAR", "TECHNOLOGY": node,
                         "SNDR_hf [dB]": sndr, "fsnyq [Hz]": fs, "P/fsnyq [pJ]": pj})


def test_the_fit_finds_the_law_of_a_survey_and_refuses_too_few_or_missing_columns(
        tmp_path, monkeypatch, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("scipy")
    mod = _script()
    (tmp_path / "s.xlsx").write_bytes(b"stands for the spreadsheet")
    path = str(tmp_path / "s.xlsx")
    sheets = {"ISSCC": _survey(40, 1), "VLSI": _survey(40, 2)}
    monkeypatch.setattr(pd, "read_excel", lambda p, sheet_name: sheets[sheet_name])
    mod.fit(path)
    out = capsys.readouterr().out
    assert out.startswith("converters: 80 (nodes [28, 40, 65, 90] nm)\n"), out  # both sheets
    node = re.search(r"energy ~ node\^([\d.]+) \(95%: ([\d.]+) \.\. ([\d.]+)\)", out)
    bit = re.search(r"energy x([\d.]+) per effective bit \(95%: ([\d.]+) \.\. ([\d.]+)\)", out)
    assert node and bit, out
    assert float(node[2]) < 0.8 < float(node[3]) and float(bit[2]) < 1.9 < float(bit[3]), out
    survey = sheets["ISSCC"]

    few = _survey(2)
    monkeypatch.setattr(pd, "read_excel", lambda p, sheet_name: few)
    with pytest.raises(mod.Refused, match=r"s\.xlsx: 4 converters of ISAAC's class; the fit "
                                          r"of 4 coefficients needs more than 4"):
        mod.fit(path)
    monkeypatch.setattr(pd, "read_excel", lambda p, sheet_name: survey.drop(columns="TYPE"))
    with pytest.raises(mod.Refused, match=r"s\.xlsx: no 'TYPE'"):
        mod.fit(path)
