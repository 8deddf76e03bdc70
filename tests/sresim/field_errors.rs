//! An error names the field, not only the file: a shard.json field of the wrong type or
//! range, a nested config key (`digital.occupancy.exp`) by its own name and the `--set`
//! that gave it, a file named by `digital.table` that is not TOML as that key's file with
//! its line (docs/errors.md).

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// Runs `sresim ARGS` in `dir`; its one `error: ` line.
fn fails_in(dir: &Path, args: &[&str]) -> String {
    fails(
        &Command::new(BIN)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap(),
    )
}

#[test]
fn a_shard_json_field_of_the_wrong_type_or_range_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = Command::new(BIN)
        .args([
            "accuracy",
            "--samples",
            "3",
            "--modes",
            "dense",
            "-q",
            "--sample-range",
            "0..3",
            "--out",
            "s0",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let path = d.join("s0/shard.json");
    let good = std::fs::read_to_string(&path).unwrap();
    let m: serde_json::Value = serde_json::from_str(&good).unwrap();
    for (field, value, want) in [
        (
            "records",
            "null",
            "records: invalid type: null, expected a string",
        ),
        ("classes", "-1", "classes: invalid value: integer `-1`"),
        (
            "range",
            "[0, 18446744073709551616]",
            "range[1]: invalid type: floating point",
        ),
    ] {
        assert!(m.get(field).is_some(), "shard.json has no {field}");
        let mut bad = m.clone();
        bad[field] = serde_json::from_str(value).unwrap();
        // serde_json prints 2^64 as a float; the text is what a person would type.
        let text = bad
            .to_string()
            .replace("1.8446744073709552e19", "18446744073709551616");
        std::fs::write(&path, text).unwrap();
        let e = fails_in(d, &["accuracy-merge", "s0", "--out", "m"]);
        assert!(
            e.contains(&format!("s0/shard.json: {want}")),
            "{field}: {e}"
        );
    }
}

#[test]
fn a_nested_config_key_is_named_by_itself_and_its_set() {
    for v in ["1.5", "-1", "nan", "1e300"] {
        let set = format!("digital.occupancy.exp={v}");
        let e = run_fails(&["run", "-w", "lenet5", "-q", "--set", &set]);
        assert!(
            e.starts_with(&format!("error: --set {set}: digital.occupancy.exp: ")),
            "{e}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "c.toml", "[digital.occupancy]\nexp = nan\n");
    let e = run_fails(&["run", "-w", "lenet5", "-q", "-c", s(&c)]);
    assert!(
        e.starts_with(&format!("error: {}: digital.occupancy.exp: ", c.display())),
        "{e}"
    );
}

#[test]
fn a_table_file_that_is_not_toml_is_named_as_its_keys_file_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "passwd",
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n",
    );
    let set = format!("digital.table={}", f.display());
    let e = run_fails(&["run", "-w", "lenet5", "-q", "--set", &set]);
    assert!(
        e.starts_with(&format!(
            "error: --set {set}: digital.table: {}: line 1: ",
            f.display()
        )),
        "{e}"
    );
}

/// A config key written as a table where a value is expected has no failing leaf of its
/// own: the error names the key by the path the reading was at (`timing.cycle_ns`), not
/// only serde's `invalid type: map, expected f64`.
#[test]
fn a_config_key_written_as_a_table_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (
            "[timing.cycle_ns]\nx = 1\n",
            "timing.cycle_ns: invalid type: map",
        ),
        ("ou = {rows = {a = 1}}\n", "ou.rows: invalid type: map"),
        (
            "[digital.occupancy.exp]\nx = 1\n",
            "digital.occupancy.exp: ",
        ),
        (
            "[limits.max_layer_bytes]\nx = 1\n",
            "limits.max_layer_bytes: ",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(d.join("c.toml"), text).unwrap();
        let e = fails_in(d, &["run", "-c", "c.toml", "-q"]);
        assert_eq!(e.lines().count(), 1, "{text}: {e}");
        assert!(e.contains(&format!("c.toml: {want}")), "{text}: {e}");
    }
}
