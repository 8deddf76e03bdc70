"""scripts/check-docs: how a documented transcript is compared and which blocks it runs."""
import importlib.machinery
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load():
    path = os.path.join(ROOT, "scripts", "check-docs")
    loader = importlib.machinery.SourceFileLoader("check_docs", path)
    spec = importlib.util.spec_from_loader("check_docs", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


cd = load()


def test_a_transcript_matches_line_by_line_with_ellipses():
    assert cd.matches(["a", "b"], ["a", "b"])
    assert not cd.matches(["a", "b"], ["a", "c"])
    assert not cd.matches(["a"], ["a", "extra"])
    assert cd.matches(["...", "last"], ["x", "y", "last"])
    assert cd.matches(["...", "last"], ["last"])
    assert not cd.matches(["...", "last"], ["x", "y"])
    assert cd.matches(["cycles 12 -> 13 (+8%), ..."], ["cycles 12 -> 13 (+8%), time 1 -> 2"])
    assert not cd.matches(["cycles 12 -> 14 (+8%), ..."], ["cycles 12 -> 13 (+8%), time"])


def test_blocks_that_run_sresim_are_found_and_skips_need_a_reason(tmp_path, monkeypatch):
    md = tmp_path / "doc.md"
    md.write_text(
        "text\n```sh\nsresim run --samples 1\n```\n"
        "<!-- check-docs: skip: needs your own model -->\n```sh\nsresim run --workload m\n```\n"
        "```\nsresim (src/: main.rs)   a diagram, not a command\n```\n"
        "```text\n$ sresim workloads\nlenet5\n```\n")
    monkeypatch.setattr(cd, "ROOT", str(tmp_path))
    found = list(cd.blocks("doc.md"))
    assert [(line, skip) for line, _, skip in found] == [
        (2, None), (6, "needs your own model"), (12, None)]
    assert cd.transcript(found[2][1]) == [("sresim workloads", ["lenet5"])]
    assert cd.normalize("target/release/sresim run") == "sresim run"
    assert cd.normalize("cargo run --release -- run") == "sresim run"
