"""scripts/check-circles: a circle among a crate's files, or a long file, fails the check."""
import importlib.machinery
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load():
    path = os.path.join(ROOT, "scripts", "check-circles")
    loader = importlib.machinery.SourceFileLoader("check_circles", path)
    spec = importlib.util.spec_from_loader("check_circles", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


cc = load()


def crate(root, files):
    """A fake repository with one crate `demo` holding `files` ({path under src/: text})."""
    for name, text in files.items():
        path = root / "crates" / "demo" / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


LIB = "mod a;\nmod b;\nmod c;\npub use a::A;\n"
# a -> b -> c -> a: each takes a name from the next
CIRCLE = {
    "lib.rs": LIB,
    "a.rs": "use crate::b::B;\npub struct A(B);\n",
    "b.rs": "pub struct B;\npub fn f() -> u32 { crate::c::g() }\n",
    "c.rs": "use super::a::A;\npub fn g() -> u32 { let _ = std::mem::size_of::<A>(); 1 }\n",
}


def test_a_circle_of_three_files_fails_and_is_named(tmp_path, capsys):
    root = crate(tmp_path, CIRCLE)
    assert cc.main([str(root), "--allow", ""]) == 1
    out = capsys.readouterr().out
    assert "circle (3 files): crates/demo/src/a.rs crates/demo/src/b.rs crates/demo/src/c.rs" in out
    assert "crates/demo/src/c.rs -> crates/demo/src/a.rs: A" in out
    assert "crates/demo/src/b.rs -> crates/demo/src/c.rs: g" in out


def test_the_same_crate_split_by_direction_of_use_passes(tmp_path, capsys):
    fixed = dict(CIRCLE)
    # c no longer reaches up to a: the circle is a chain a -> b -> c
    fixed["c.rs"] = "pub fn g() -> u32 { 1 }\n"
    root = crate(tmp_path, fixed)
    assert cc.main([str(root), "--allow", ""]) == 0
    assert "no circle" in capsys.readouterr().out


def test_comments_strings_tests_and_reexports_are_not_uses(tmp_path):
    files = {
        "lib.rs": "mod a;\nmod b;\npub use b::B;\n",
        "a.rs": "pub struct A;\n",
        # b names a only in a comment, a string, a test module; lib re-exports b
        "b.rs": (
            "// see crate::a::A\n/* crate::a::A */\npub struct B;\n"
            "pub const S: &str = \"crate::a::A\";\n"
            "#[cfg(test)]\nmod tests {\n    use crate::a::A;\n}\n"
        ),
    }
    root = crate(tmp_path, files)
    files["a.rs"] = "use crate::b::B;\npub struct A(B);\n"
    root = crate(tmp_path, files)
    assert cc.main([str(root), "--allow", ""]) == 0


def test_a_name_of_the_root_counts_as_taken_from_where_it_is_defined(tmp_path, capsys):
    # a takes B through the root's re-export, b takes A: a circle between a and b,
    # not one through lib.rs
    files = {
        "lib.rs": "mod a;\nmod b;\npub use b::B;\n",
        "a.rs": "use crate::B;\npub struct A(B);\n",
        "b.rs": "pub struct B;\npub fn f(_: &crate::a::A) {}\n",
    }
    root = crate(tmp_path, files)
    assert cc.main([str(root), "--allow", ""]) == 1
    assert "circle (2 files): crates/demo/src/a.rs crates/demo/src/b.rs" in capsys.readouterr().out


def test_a_child_module_that_uses_its_parent_while_the_parent_calls_it_is_a_circle(tmp_path):
    files = {
        "lib.rs": "mod walk;\n",
        "walk.rs": "mod reads;\npub struct W;\npub fn go() { reads::read(&W) }\n",
        "walk/reads.rs": "use super::*;\npub fn read(_: &W) {}\n",
    }
    root = crate(tmp_path, files)
    assert cc.main([str(root), "--allow", ""]) == 1


def test_an_allowed_circle_passes_and_a_stale_entry_fails(tmp_path, capsys):
    root = crate(tmp_path, CIRCLE)
    allow = tmp_path / "allow"
    allow.write_text("# known\ncrates/demo/src/c.rs crates/demo/src/a.rs crates/demo/src/b.rs\n")
    assert cc.main([str(root), "--allow", str(allow)]) == 0
    assert "allowed circle (3 files)" in capsys.readouterr().out
    allow.write_text("crates/demo/src/a.rs crates/demo/src/b.rs\n")  # not this circle
    assert cc.main([str(root), "--allow", str(allow)]) == 1
    out = capsys.readouterr().out
    assert "is not a circle now" in out and "circle (3 files)" in out


def test_a_long_file_fails_unless_its_top_says_why_or_it_is_listed(tmp_path, capsys):
    body = "pub fn f() {}\n" * 20
    root = crate(tmp_path, {"lib.rs": "mod big;\n", "big.rs": body})
    assert cc.main([str(root), "--allow", "", "--max-lines", "10"]) == 1
    assert "long file: crates/demo/src/big.rs has 20 lines" in capsys.readouterr().out
    (root / "crates/demo/src/big.rs").write_text("// over 10 lines: one table\n" + body)
    assert cc.main([str(root), "--allow", "", "--max-lines", "10"]) == 0
    # a comment without its reason is no exemption
    (root / "crates/demo/src/big.rs").write_text("// over 10 lines:\n" + body)
    assert cc.main([str(root), "--allow", "", "--max-lines", "10"]) == 1
    allow = tmp_path / "allow"
    allow.write_text("long: crates/demo/src/big.rs\n")
    assert cc.main([str(root), "--allow", str(allow), "--max-lines", "10"]) == 0
    (root / "crates/demo/src/big.rs").write_text("pub fn f() {}\n")
    assert cc.main([str(root), "--allow", str(allow), "--max-lines", "10"]) == 1
    assert "is not a long file now" in capsys.readouterr().out


def test_the_repository_passes_with_its_allow_list():
    assert cc.main([ROOT]) == 0


def test_the_repository_allow_list_is_empty():
    # Every circle and long file it once listed is gone; a new entry is a step back that
    # this test makes visible (the list only shrinks).
    allowed, long = cc.read_allow(os.path.join(ROOT, "scripts", "check-circles.allow"))
    assert allowed == [] and long == []
