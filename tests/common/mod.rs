//! What the binary-level tests share: running `sresim` and reading what it answers.
// Each test module of tests/sresim/ uses a part of this module.
#![allow(dead_code)]
// Tests make their fixtures and read outputs with std::fs.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::process::{Command, Output};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_sresim");

/// Runs `sresim ARGS` from the repository root (where relative paths in ARGS start).
pub fn sresim(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

/// The standard output of a command that must succeed.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The one `error: ` line of a command that must fail as a user mistake: exit status 1,
/// no panic.
pub fn fails(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "succeeded: {e}");
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.starts_with("error: ") && e.lines().count() == 1, "{e:?}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A CSV file's header and rows.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// The index of column `name` in `header`.
pub fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

/// Runs `sresim ARGS`, which must succeed; its standard output.
pub fn run_ok(args: &[&str]) -> String {
    ok(&sresim(args))
}

/// Runs `sresim ARGS`, which must fail with one `error: ` line; that line.
pub fn run_fails(args: &[&str]) -> String {
    fails(&sresim(args))
}

/// Writes `text` to `dir/name`; the path.
pub fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The files under `under` (a folder relative to `root`, "." for all) that git tracks in
/// the checkout at `root`, as paths under `root`, sorted; a file deleted from the work tree
/// is left out. Tests read the repository through this, so that what a user writes into
/// the tree (`out/`, `workloads/mynet`) is never part of a test. Outside a git checkout
/// (a source archive, or no git) every file under `under` is listed but `target/` and
/// dot-directories.
pub fn tracked_files(root: &Path, under: &str) -> Vec<std::path::PathBuf> {
    let listed = Command::new("git")
        .args(["ls-files", "-z", "--", under])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success());
    let mut files: Vec<std::path::PathBuf> = match listed {
        Some(o) => o
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
            .filter(|p| p.is_file())
            .collect(),
        None => {
            let mut out = Vec::new();
            walk_files(&root.join(under), &mut out);
            out
        }
    };
    files.sort();
    files
}

fn walk_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk_files(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

/// The repository's tracked bundles: every `workloads/*/manifest.json`'s folder, sorted.
pub fn tracked_bundles() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    tracked_files(root, "workloads")
        .into_iter()
        .filter(|p| {
            p.file_name().is_some_and(|f| f == "manifest.json")
                && p.parent()
                    .and_then(Path::parent)
                    .is_some_and(|d| d == root.join("workloads"))
        })
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect()
}

/// Every entry of `dir` (dot files too) with its bytes, sorted by name: what a test
/// compares to say a refused command left a directory as it was.
pub fn entries(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            (n, std::fs::read(&p).unwrap_or_default())
        })
        .collect();
    v.sort();
    v
}

/// A run that takes a fraction of a second (one synthetic sample of lenet5, quiet): the
/// command tests of output directories give it their own flags.
pub const QUICK_RUN: &[&str] = &[
    "run",
    "-q",
    "-w",
    "lenet5",
    "--synthetic-inputs",
    "--samples",
    "1",
];
