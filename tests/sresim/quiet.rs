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

/// `sresim ARGS` with stderr a pipe (as in a batch job) and progress lines every
/// `ms` milliseconds: its stderr.
fn logged(args: &[&str], ms: u64) -> String {
    let o = std::process::Command::new(common::BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SRESIM_PROGRESS_INTERVAL_MS", ms.to_string())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The (done, total) of progress lines `prefix: DONE/TOTAL UNIT...`.
fn counts(err: &str, prefix: &str, unit: &str) -> Vec<(f64, f64)> {
    let num = |s: &str| {
        let s = s.trim();
        let (v, m) = match s.split_once(' ') {
            Some((v, "k")) => (v, 1e3),
            Some((v, "M")) => (v, 1e6),
            Some((v, "G")) => (v, 1e9),
            Some((v, "T")) => (v, 1e12),
            _ => (s, 1.0),
        };
        v.parse::<f64>().unwrap() * m
    };
    err.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(|rest| {
            let (counted, _) = rest.split_once(&format!(" {unit}")).unwrap();
            let (done, total) = counted.split_once('/').unwrap();
            (num(done), num(total))
        })
        .collect()
}

#[test]
fn without_a_terminal_long_commands_print_progress_lines_and_q_silences_them() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("g.toml");
    std::fs::write(
        &grid,
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\n[axes]\n\"ou.rows\" = [4, 8, 9]\n",
    )
    .unwrap();
    let sw = dir.path().join("sweep");
    let search_grid = dir.path().join("s.toml");
    std::fs::write(
        &search_grid,
        "accuracy = true\nworkloads = [\"lenet5-mnist\"]\nmodes = [\"sre\"]\naccuracy_samples = 40\n[axes]\n\"ou.rows\" = [9, 128]\n[search]\nfirst_samples = 20\n",
    )
    .unwrap();
    let found = dir.path().join("search");
    let search = [
        "search",
        "--grid",
        s(&search_grid),
        "-o",
        s(&found),
        "--budget",
        "0.05",
    ];
    let run = ["run", "--workload", "lenet5", "--samples", "4"];
    let sweep = ["sweep", "--grid", s(&grid), "--out", s(&sw)];
    let accuracy = [
        "accuracy",
        "--workload",
        "lenet5-mnist",
        "--samples",
        "20",
        "--modes",
        "dense",
    ];
    for (args, prefix, unit) in [
        (&run[..], "sresim run lenet5: ", "MACs"),
        (&sweep[..], "sresim sweep: ", "points"),
        (&accuracy[..], "sresim accuracy: ", "samples x draws"),
        (&search[..], "sresim search: ", "points"),
    ] {
        if args[0] == "sweep" {
            let _ = std::fs::remove_dir_all(&sw);
        }
        let err = logged(args, 5);
        let seen = counts(&err, prefix, unit);
        // At least one line while it ran and the closing one, each DONE/TOTAL with the
        // rate and the time so far; the closing line says all of it was done.
        assert!(seen.len() >= 2, "{args:?}: {err}");
        let during: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(prefix) && l.contains("/s, "))
            .collect();
        assert!(!during.is_empty(), "{args:?}: {err}");
        for l in &during {
            assert!(l.contains(" so far, "), "{l}");
        }
        let (done, total) = seen[seen.len() - 1];
        assert!(done == total && total > 0.0, "{args:?}: {err}");
        assert!(err.lines().last().unwrap().contains(" after "), "{err}");
        assert!(
            seen.windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 == w[1].1),
            "{seen:?}"
        );
        // -q: not a line.
        if args[0] == "sweep" {
            let _ = std::fs::remove_dir_all(&sw);
        }
        // (search's own line per point stays without -q, as before.)
        let quiet = logged(&[args, &["-q"]].concat(), 5);
        assert_eq!(quiet, "", "{args:?}");
    }
    // With the interval of a batch log (15 s), a run of a moment prints none.
    let err = logged(&run, 15_000);
    assert!(!err.contains("sresim run"), "{err}");
}
