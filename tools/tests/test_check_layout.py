"""scripts/check-layout finds what it should: a binary [dependencies] entry other than the
driver crates, clap and anyhow; and prints a crate's files by floor from the import graph
of scripts/check-circles (which owns the circle and long-file checks, tested in
test_check_circles.py)."""

import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-layout"


def run(root, *args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
    )


def manifest(root, deps):
    (root / "Cargo.toml").write_text(
        '[package]\nname = "x"\n\n[dependencies]\n' + "".join(f"{d}.workspace = true\n" for d in deps)
    )


def test_a_binary_over_the_drivers_passes(tmp_path):
    manifest(tmp_path, ["commands", "sweep", "search", "clap", "anyhow"])
    r = run(tmp_path)
    assert r.returncode == 0, r.stdout
    assert r.stdout.strip() == "ok"


def test_a_binary_that_depends_on_a_model_crate_fails_and_names_it(tmp_path):
    manifest(tmp_path, ["commands", "clap", "functional"])
    r = run(tmp_path)
    assert r.returncode == 1
    assert "Cargo.toml: [dependencies] functional: the binary depends only on" in r.stdout


def test_floors_put_each_file_above_what_it_imports(tmp_path):
    src = tmp_path / "crates" / "x" / "src"
    src.mkdir(parents=True)
    (src / "lib.rs").write_text("mod low;\nmod mid;\npub use mid::m;\n")
    (src / "low.rs").write_text("pub struct L;\n")
    (src / "mid.rs").write_text("use crate::low::L;\npub fn m(_: L) {}\n")
    r = run(tmp_path, "--floors", "crates/x")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [l.split() for l in r.stdout.splitlines()]
    floors = {l[1]: int(l[0]) for l in lines}
    assert floors["low.rs"] == 1
    assert floors["mid.rs"] == 2
    assert floors["lib.rs"] == 1  # a re-export is not a use
