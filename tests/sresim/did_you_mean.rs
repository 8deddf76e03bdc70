//! An unknown name (workload, bundle, mode, config key, device or chip preset) gets the
//! closest known one appended to its one-line error, and nothing when none is close.

// Test code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests make their fixtures with std::fs.
#![allow(clippy::disallowed_methods)]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sresim");

/// The stderr of `sresim args` run in `dir`, which must fail with one line.
fn error_line(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    err.trim_end().to_string()
}

#[test]
fn unknown_names_suggest_the_closest_known_one() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("c.toml"), "[ou]\nrow = 16\n").unwrap();
    std::fs::write(d.path().join("s.toml"), "[ouu]\nrows = 16\n").unwrap();
    std::fs::write(
        d.path().join("g.toml"),
        "workloads = [\"lenet5\"]\n[axes]\n\"ou.row\" = [4]\n",
    )
    .unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--workload", "lenet"], "lenet5"),
        (&["run", "--workload", "vgg61"], "vgg16"),
        (&["run", "--workload", "lenet5-mnsit"], "lenet5-mnist"),
        (&["memory", "--workload", "vgg61"], "vgg16"),
        (&["accuracy", "--workload", "lenet5-mnis"], "lenet5-mnist"),
        (&["check", "lenet5-mnis"], "lenet5-mnist"),
        (
            &["run", "--workload", "lenet5", "--modes", "dense,sree"],
            "sre",
        ),
        (
            &["run", "--workload", "lenet5", "--set", "ou.row=16"],
            "ou.rows",
        ),
        (
            &["run", "--workload", "lenet5", "--set", "uo.rows=16"],
            "ou.rows",
        ),
        (
            &["run", "--workload", "lenet5", "--set", "chip.mesh=2"],
            "chip.mesh_x",
        ),
        (
            &["run", "--workload", "lenet5", "--config", "c.toml"],
            "ou.rows",
        ),
        (&["run", "--workload", "lenet5", "--config", "s.toml"], "ou"),
        (
            &[
                "run",
                "--workload",
                "lenet5",
                "--set",
                "device.preset=ideel",
            ],
            "ideal",
        ),
        (
            &["run", "--workload", "lenet5", "--set", "chip.preset=isac"],
            "isaac",
        ),
        (&["sweep", "--grid", "g.toml", "--out", "o"], "ou.rows"),
    ];
    for (args, want) in cases {
        let line = error_line(d.path(), args);
        assert!(
            line.ends_with(&format!(" (did you mean \"{want}\"?)")),
            "{args:?}: {line}"
        );
    }
    // Nothing close: no guess.
    for args in [
        &["run", "--workload", "inception"][..],
        &["run", "--workload", "lenet5", "--set", "foo.bar=1"],
    ] {
        let line = error_line(d.path(), args);
        assert!(!line.contains("did you mean"), "{args:?}: {line}");
    }
}
