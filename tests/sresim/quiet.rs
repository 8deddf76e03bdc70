//! `-q` on every command: nothing on stdout, the same files and exit status.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{s, sresim};

#[test]
fn every_command_takes_q_and_then_prints_nothing_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let (run, svg, mem) = (d("run"), d("p.svg"), d("mem"));
    let grid = d("g.toml");
    std::fs::write(
        &grid,
        "workloads = [\"lenet5\"]\nmodes = [\"sre\"]\n[axes]\n\"ou.rows\" = [8, 9]\n",
    )
    .unwrap();
    let (sw, merged) = (d("sweep"), d("merged"));
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "run",
            "--workload",
            "lenet5",
            "--modes",
            "sre",
            "--out",
            s(&run),
        ],
        vec!["workloads"],
        vec!["check", "lenet5-mnist"],
        vec!["sweep", "--grid", s(&grid), "--out", s(&sw)],
        vec!["merge", s(&sw), "--out", s(&merged)],
        vec![
            "plot",
            s(&run),
            "--x",
            "layer",
            "--y",
            "cycles",
            "-o",
            s(&svg),
        ],
        vec!["compare", s(&run), s(&run)],
        vec![
            "accuracy",
            "--workload",
            "lenet5-mnist",
            "--samples",
            "2",
            "--modes",
            "sre",
        ],
        vec![
            "memory",
            "--workload",
            "workloads/lenet5-mnist",
            "--batch",
            "1",
            "--out",
            s(&mem),
        ],
    ];
    for mut c in commands {
        c.push("-q");
        let o = sresim(&c);
        assert!(
            o.status.success(),
            "{c:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&o.stdout), "", "{c:?}");
    }
    // The files are written as without -q.
    for f in [
        run.join("layers.csv"),
        svg,
        merged.join("points.csv"),
        mem.join("memory_summary.json"),
    ] {
        assert!(f.is_file(), "{f:?}");
    }
    // compare -q still fails when the tables differ.
    let other = d("other");
    let o = sresim(&[
        "run",
        "--workload",
        "lenet5",
        "--modes",
        "sre",
        "--seed",
        "2",
        "--out",
        s(&other),
        "-q",
    ]);
    assert!(o.status.success());
    let o = sresim(&["compare", s(&run), s(&other), "-q"]);
    assert!(!o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
}
