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


# The survey's data: every node and energy the fit takes is a number it can take, and the
# fit needs two of each term; else one line naming the cell (or the rule), never a
# traceback, a numpy warning or an lstsq that spins forever (a node of 0 gave it -inf).
# The script runs whole (its main, its exit status), pandas' reader of the spreadsheet
# replaced by the sheets made here (openpyxl need not be installed).
DRIVER = """
import runpy, sys
import pandas as pd
sheets = {s: pd.read_pickle(f"{sys.argv[2]}.{s}.pkl") for s in ("ISSCC", "VLSI")}
pd.read_excel = lambda path, sheet_name: sheets[sheet_name]
script, sys.argv = sys.argv[1], ["adc-survey-fit", sys.argv[2]]
runpy.run_path(script, run_name="__main__")
"""


def run_on(tmp_path, isscc, vlsi):
    for name, sheet in (("ISSCC", isscc), ("VLSI", vlsi)):
        sheet.to_pickle(tmp_path / f"s.xlsx.{name}.pkl")
    (tmp_path / "s.xlsx").write_bytes(b"stands for the spreadsheet")
    return subprocess.run([sys.executable, "-c", DRIVER, SCRIPT, "s.xlsx"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)


def _cell(sheet, row, column, value):
    """`sheet` with the cell of spreadsheet row `row` (the header is row 1) set to `value`."""
    sheet = sheet.copy()
    if isinstance(value, str):  # text in a column of numbers, as a spreadsheet may hold
        sheet[column] = sheet[column].astype(object)
    sheet.loc[row - 2, column] = value
    return sheet


@pytest.mark.parametrize("sheet,row,column,value,says", [
    # 0 passed `node <= 90 nm`: log(0) = -inf, and lstsq ran forever
    ("ISSCC", 4, "TECHNOLOGY", 0.0, "sheet ISSCC row 4: TECHNOLOGY 0 is not a node size "
                                     "(micrometres, 0.0001 or more)"),
    # log of a negative node is NaN: numpy's LinAlgError traceback
    ("VLSI", 7, "TECHNOLOGY", -0.065, "sheet VLSI row 7: TECHNOLOGY -0.065 is not a node size "
                                      "(micrometres, 0.0001 or more)"),
    ("ISSCC", 2, "TECHNOLOGY", 1e-300, "sheet ISSCC row 2: TECHNOLOGY 1e-300 is not a node size "
                                       "(micrometres, 0.0001 or more)"),
    # finite, so it was fitted: "x128302764371446988800.00 per effective bit"
    ("ISSCC", 41, "P/fsnyq [pJ]", 1e308, "sheet ISSCC row 41: P/fsnyq [pJ] 1e+308 is not the "
                                         "energy of a converter (a positive number of pJ, "
                                         "1e-06 to 1e+06)"),
    ("VLSI", 3, "P/fsnyq [pJ]", 0.0, "sheet VLSI row 3: P/fsnyq [pJ] 0 is not the energy of a "
                                     "converter (a positive number of pJ, 1e-06 to 1e+06)"),
    ("VLSI", 3, "P/fsnyq [pJ]", -2.5, "sheet VLSI row 3: P/fsnyq [pJ] -2.5 is not the energy "
                                      "of a converter (a positive number of pJ, 1e-06 to 1e+06)"),
])
def test_a_kept_converter_whose_node_or_energy_is_no_such_figure_is_named(
        tmp_path, sheet, row, column, value, says):
    pytest.importorskip("pandas")
    pytest.importorskip("scipy")
    sheets = {"ISSCC": _survey(40, 1), "VLSI": _survey(40, 2)}
    sheets[sheet] = _cell(sheets[sheet], row, column, value)
    assert refused(run_on(tmp_path, sheets["ISSCC"], sheets["VLSI"])) == f"error: s.xlsx: {says}"


def test_a_blank_node_or_energy_is_a_converter_without_that_figure_passed_over(tmp_path):
    pytest.importorskip("pandas")
    pytest.importorskip("scipy")
    isscc = _cell(_cell(_survey(40, 1), 5, "TECHNOLOGY", "n/a"), 9, "P/fsnyq [pJ]", None)
    p = run_on(tmp_path, isscc, _survey(40, 2))
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.startswith("converters: 78 (nodes [28, 40, 65, 90] nm)\n"), p.stdout


def _all(survey, column, value):
    return survey.assign(**{column: value})


@pytest.mark.parametrize("make,says", [
    # lstsq of a rank-deficient matrix has no residuals: `res[0]` was an IndexError traceback
    (lambda s: _all(s, "TECHNOLOGY", 0.065),
     "all 80 converters of ISAAC's class share one node (65 nm): the fit needs two"),
    (lambda s: _all(s, "SNDR_hf [dB]", 45.5),
     "all 80 converters of ISAAC's class share one SNDR (45.5 dB): the fit needs two"),
    (lambda s: _all(s, "fsnyq [Hz]", 1e9),
     "all 80 converters of ISAAC's class share one sampling rate (1e+09 Hz): the fit "
     "needs two"),
    # two nodes a spreadsheet's float noise apart are one node (its fit printed
    # `node^18103135407.96` over "nodes [28] nm")
    (lambda s: s.assign(TECHNOLOGY=[0.028] * 79 + [0.028000000001]),
     "all 80 converters of ISAAC's class share one node (28 nm): the fit needs two"),
    # two nodes, two SNDRs, but the node says the SNDR: ln(node) and ENOB are dependent
    (lambda s: s.assign(TECHNOLOGY=[0.028, 0.065] * 40, **{"SNDR_hf [dB]": [40.0, 50.0] * 40}),
     "the 80 converters' ln(node), ENOB and ln(fs) are linearly dependent (rank 3 of 4): the "
     "fit cannot tell them apart"),
])
def test_a_fit_the_converters_do_not_determine_is_one_line(tmp_path, make, says):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("scipy")
    both = make(pd.concat([_survey(40, 1), _survey(40, 2)], ignore_index=True))
    assert refused(run_on(tmp_path, both.iloc[:40], both.iloc[40:])) == f"error: s.xlsx: {says}"
