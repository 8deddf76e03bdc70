"""scripts/check-layout finds what it should: a circle between two files of a crate (in
their code, not their test modules), a file over 800 lines, and passes a layered crate."""

import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-layout"


def crate(root, files):
    src = root / "crates" / "x" / "src"
    src.mkdir(parents=True)
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)


def run(root):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), "crates/x"],
        capture_output=True,
        text=True,
    )


def test_a_circle_between_two_files_fails_and_names_both(tmp_path):
    crate(
        tmp_path,
        {
            "lib.rs": "pub mod a;\npub mod b;\n",
            "a.rs": "use crate::b::Thing;\npub struct Other;\n",
            "b.rs": "pub struct Thing;\npub fn f(_: crate::a::Other) {}\n",
        },
    )
    r = run(tmp_path)
    assert r.returncode == 1
    assert "import circle of 2 files" in r.stdout
    assert "a.rs -> crates/x/src/b.rs: Thing" in r.stdout
    assert "b.rs -> crates/x/src/a.rs: Other" in r.stdout


def test_a_circle_through_a_module_file_and_its_child_fails(tmp_path):
    crate(
        tmp_path,
        {
            "lib.rs": "pub mod config;\n",
            "config/mod.rs": "mod keys;\npub struct Config;\npub fn f() { keys::g() }\n",
            "config/keys.rs": "pub fn g() { let _ = super::Config; }\n",
        },
    )
    r = run(tmp_path)
    assert r.returncode == 1, r.stdout
    assert "config/keys.rs -> crates/x/src/config/mod.rs: Config" in r.stdout


def test_layers_pass_and_a_test_module_may_import_upward(tmp_path):
    crate(
        tmp_path,
        {
            "lib.rs": "pub mod low;\npub mod high;\n",
            "low.rs": "pub struct L;\n#[cfg(test)]\nmod tests {\n    use crate::high::h;\n}\n",
            "high.rs": "use crate::low::L;\npub fn h(_: L) {}\n",
        },
    )
    r = run(tmp_path)
    assert r.returncode == 0, r.stdout
    assert r.stdout.strip() == "ok"


def test_a_long_file_fails_unless_its_top_says_why(tmp_path):
    long = "pub fn f() {}\n" * 801
    crate(tmp_path, {"lib.rs": "pub mod big;\n", "big.rs": long})
    r = run(tmp_path)
    assert r.returncode == 1
    assert "big.rs: 801 lines" in r.stdout
    reason = "//! This file is longer than 800 lines because it is one table.\n"
    (tmp_path / "crates/x/src/big.rs").write_text(reason + long)
    assert run(tmp_path).returncode == 0
