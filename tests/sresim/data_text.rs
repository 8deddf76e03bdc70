//! Text from a data file (a CSV cell, a bundle folder's name) reaches neither the terminal
//! nor an SVG raw: its control characters are escaped by the one function
//! `bounds::text::printable` (docs/errors.md, "Text from data files").

use crate::common::*;
use std::process::Command;

const ESC: char = '\u{1b}';

/// No byte a terminal obeys (C0 but line breaks, DEL) in `out`.
fn no_control(out: &[u8]) -> bool {
    !out.iter().any(|&b| (b < 0x20 && b != b'\n') || b == 0x7f)
}

#[test]
fn compare_prints_cells_with_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.csv", "layer,mode,cycles\nc1,sre,5\n");
    let b = write(
        dir.path(),
        "b.csv",
        &format!("layer,mode,cycles\n\"c1{ESC}[2J\",sre,5\n"),
    );
    let o = sresim(&["compare", s(&a), s(&b)]);
    assert!(!o.status.success());
    assert!(no_control(&o.stdout) && no_control(&o.stderr), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("added in NEW: layer=c1\\u{1b}[2J mode=sre"),
        "{out}"
    );
}

#[test]
fn plot_draws_a_series_with_control_characters_as_well_formed_xml() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write(
        dir.path(),
        "ctrl.csv",
        &format!("x,y,mode\n1,1,a{ESC}[2J\u{7}\n2,2,a{ESC}[2J\u{7}\n1,3,b\u{0}c\n2,4,b\u{0}c\n"),
    );
    let svg = dir.path().join("p.svg");
    run_ok(&[
        "plot",
        s(&csv),
        "--x",
        "x",
        "--y",
        "y",
        "--series",
        "mode",
        "-o",
        s(&svg),
    ]);
    let text = std::fs::read(&svg).unwrap();
    // XML 1.0 allows no C0 character but tab, line feed and carriage return.
    assert!(
        !text
            .iter()
            .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')),
        "a control character reached the SVG"
    );
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("a\\u{1b}[2J\\u{7}"), "{text}");
    assert!(text.contains("b\\0c"), "{text}");
}

/// `sresim workloads` run in a folder whose workloads/ holds lenet5-mnist's bundle under
/// the folder name `name`.
fn workloads_beside(name: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("workloads").join(name);
    std::fs::create_dir_all(&bundle).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    for f in ["manifest.json", "tensors.npz"] {
        std::fs::copy(src.join(f), bundle.join(f)).unwrap();
    }
    Command::new(BIN)
        .arg("workloads")
        .current_dir(dir.path())
        .output()
        .unwrap()
}

#[test]
fn workloads_lists_a_bundle_folder_named_with_an_escape_escaped() {
    let o = workloads_beside(&format!("bad{ESC}name"));
    let out = ok(&o);
    assert!(no_control(out.as_bytes()), "{out:?}");
    assert!(out.contains("bad\\u{1b}name"), "{out}");
}

/// A newline in a bundle folder's name is escaped with the name, on its one row: a folder
/// named with line breaks cannot add a forged row to the listing.
#[test]
fn workloads_lists_a_bundle_folder_named_with_a_newline_on_one_row() {
    let forged = "  fake-bundle                    99      999       0.0%        0.0%";
    let o = workloads_beside(&format!("x\n{forged}\n  y"));
    let out = ok(&o);
    assert!(
        !out.lines().any(|l| l.starts_with("  fake-bundle")),
        "{out}"
    );
    let row = out.lines().find(|l| l.contains("fake-bundle")).unwrap();
    assert!(row.starts_with("  x\\n  fake-bundle"), "{row}");
    assert!(row.contains("\\n  y"), "{row}");
}

/// The lines that name a path (`check`'s "ok: ...", the "wrote ..." of run, sweep, plot)
/// print the path as `bounds::text::path` shows it: a folder named with an escape does
/// not reach the terminal raw.
#[test]
fn paths_in_ok_and_wrote_lines_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join(format!("b{ESC}[2Jx"));
    std::fs::create_dir_all(&bundle).unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/lenet5-mnist");
    for f in ["manifest.json", "tensors.npz"] {
        std::fs::copy(src.join(f), bundle.join(f)).unwrap();
    }
    let out = ok(&sresim(&["check", s(&bundle)]));
    assert!(no_control(out.as_bytes()), "{out:?}");
    assert!(out.contains("b\\u{1b}[2Jx"), "{out}");
    let runs = dir.path().join(format!("o{ESC}[2J"));
    let out = ok(&sresim(&["run", "--layers", "conv1", "-o", s(&runs)]));
    assert!(no_control(out.as_bytes()), "{out:?}");
    assert!(out.contains("o\\u{1b}[2J/layers.csv"), "{out}");
    let grid = write(
        dir.path(),
        "g.toml",
        "workloads = [\"lenet5\"]\nmodes = [\"dense\"]\n[axes]\n\"ou.rows\" = [4]\n",
    );
    let sw = dir.path().join(format!("s{ESC}[2J"));
    let out = ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&sw)]));
    assert!(no_control(out.as_bytes()), "{out:?}");
    let out = ok(&sresim(&[
        "plot",
        s(&sw),
        "--x",
        "ou.rows",
        "--y",
        "cycles",
    ]));
    assert!(
        no_control(out.as_bytes()) && out.contains("s\\u{1b}[2J"),
        "{out:?}"
    );
}
