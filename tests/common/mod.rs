//! What the binary-level tests share: running `sresim` and reading what it answers.
// Each test file uses a part of this module.
#![allow(dead_code)]

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
