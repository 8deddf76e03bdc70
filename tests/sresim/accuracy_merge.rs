//! `sresim accuracy --sample-range` and `sresim accuracy-merge` (docs/accuracy.md,
//! "Shards"): the merged accuracy.csv, summary.json and printed table are those of the
//! unsharded run byte for byte, with device draws and a clipping ADC; a shard prints one
//! line and writes no figures.
// Test code: a failed unwrap is a failed test, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests read outputs with std::fs.
#![allow(clippy::disallowed_methods)]

use crate::common;
use common::{run_ok as ok, s};

const RUN: [&str; 13] = [
    "accuracy",
    "--samples",
    "4",
    "--modes",
    "dense,sre",
    "--set",
    "device.read_noise=0.2",
    "--set",
    "adc.bits=6",
    "--draws",
    "2",
    "--layers",
    "conv2,fc*",
];

/// The table a command printed, without its closing `wrote ...` line.
fn table(stdout: &str) -> String {
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.last().unwrap().starts_with("wrote "), "{stdout}");
    lines[..lines.len() - 1].join("\n")
}

#[test]
fn merged_shards_write_the_unsharded_outputs() {
    let t = tempfile::tempdir().unwrap();
    let full = t.path().join("full");
    let mut args = RUN.to_vec();
    args.extend(["--out", s(&full)]);
    let full_table = table(&ok(&args));
    let mut shards = Vec::new();
    for (i, (range, threads)) in [("0..1", "2"), ("1..4", "1")].into_iter().enumerate() {
        let dir = t.path().join(format!("shard{i}"));
        let mut args = RUN.to_vec();
        args.extend([
            "--sample-range",
            range,
            "--threads",
            threads,
            "--out",
            s(&dir),
        ]);
        let line = ok(&args);
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(line.contains(&format!("samples {} of 4", range)), "{line}");
        assert!(!dir.join("accuracy.csv").exists());
        shards.push(dir);
    }
    let merged = t.path().join("merged");
    // Shards in any order.
    let out = ok(&[
        "accuracy-merge",
        s(&shards[1]),
        s(&shards[0]),
        "--out",
        s(&merged),
    ]);
    assert_eq!(table(&out), full_table);
    let same_as_full = |dir: &std::path::Path| {
        for f in ["accuracy.csv", "summary.json"] {
            let (a, b) = (full.join(f), dir.join(f));
            let read = |p: &std::path::Path| std::fs::read(p).unwrap();
            assert_eq!(read(&a), read(&b), "{}", b.display());
        }
    };
    same_as_full(&merged);
    // docs/examples/slurm-accuracy.sh: its array tasks (the last first), then its merge.
    let slurm = t.path().join("slurm");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/examples/slurm-accuracy.sh"
    );
    let job = |step: &str, task: Option<usize>| {
        let mut c = std::process::Command::new("sh");
        c.arg(script)
            .arg(step)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("SAMPLES", "4")
            .env("OUT", &slurm)
            .env("N", "3")
            .env("ACCURACY_ARGS", RUN[3..].join(" "))
            .env("SRESIM", common::BIN)
            .env("SLURM_CPUS_PER_TASK", "1");
        if let Some(i) = task {
            c.env("SLURM_ARRAY_TASK_ID", i.to_string());
        }
        common::ok(&c.output().unwrap())
    };
    for i in [2, 0, 1] {
        job("task", Some(i));
    }
    job("merge", None);
    same_as_full(&slurm);
    // The clip and draw columns are there: the case is the one it means to be.
    let csv = std::fs::read_to_string(full.join("accuracy.csv")).unwrap();
    assert!(csv.starts_with("network,") && csv.contains("adc_clip_frac") && csv.contains(",draw,"));
}

/// shard.json's fingerprint is a hash anyone can compute again: a field edited in every
/// shard with the fingerprint recomputed agrees between the shards, so each field is
/// range-checked where it is parsed (docs/errors.md). Each edit is refused in one line
/// naming the file and the field, and nothing is written.
#[test]
fn a_shard_field_out_of_its_range_is_refused_even_with_its_fingerprint_recomputed() {
    use sim::accuracy_shard::Manifest;
    let t = tempfile::tempdir().unwrap();
    let mut shards = Vec::new();
    for (i, range) in ["0..1", "1..4"].into_iter().enumerate() {
        let dir = t.path().join(format!("a{i}"));
        let mut args = RUN.to_vec();
        args.extend(["--sample-range", range, "-q", "--out", s(&dir)]);
        ok(&args);
        shards.push(dir);
    }
    let read = |d: &std::path::Path| -> (String, Manifest) {
        let text = std::fs::read_to_string(d.join("shard.json")).unwrap();
        let m = serde_json::from_str(&text).unwrap();
        (text, m)
    };
    let originals: Vec<(String, Manifest)> = shards.iter().map(|d| read(d)).collect();
    type Edit = fn(&mut Manifest);
    let edits: [(Edit, &str); 12] = [
        (
            |m| m.network = "n\u{1b}[2J".into(),
            "network: 'n\\u{1b}[2J'",
        ),
        (|m| m.draws = 0, "draws: 0 is not a number of device draws"),
        (
            |m| m.draws = 10001,
            "draws: 10001 is not a number of device draws",
        ),
        (|m| m.draw_seeds = vec![], "draw_seeds: not the seeds"),
        (|m| m.draws_computed = 7, "draws_computed: 7 is neither 1"),
        (
            |m| m.classes = 1 << 63,
            "classes: 9223372036854775808 is more outputs",
        ),
        (|m| m.layers = vec![], "layers: empty"),
        (
            |m| m.layers = vec!["nope".into()],
            "layers: 'nope' is not one of",
        ),
        (
            |m| m.config_values["ou"]["rows"] = serde_json::json!(-1),
            "config_values: ou.rows: invalid value: integer `-1`",
        ),
        // config_values pass every check of a config file, not only its types.
        (
            |m| m.config_values["ou"]["rows"] = serde_json::json!(0),
            "config_values: ou.rows: ",
        ),
        (
            |m| m.config_values["precision"]["input_bits"] = serde_json::json!(64),
            "config_values: precision.input_bits",
        ),
        // A key naming a file is never opened (/etc/passwd is no table), and the other
        // keys are still checked beside it.
        (
            |m| {
                m.config_values["energy"]["table"] = serde_json::json!("/etc/passwd");
                m.config_values["ou"]["rows"] = serde_json::json!(0);
            },
            "config_values: ou.rows: ",
        ),
    ];
    let merged = t.path().join("am");
    for (edit, want) in edits {
        for (d, (_, m)) in shards.iter().zip(&originals) {
            let mut m = m.clone();
            edit(&mut m);
            m.fingerprint = m.hash();
            std::fs::write(d.join("shard.json"), serde_json::to_string(&m).unwrap()).unwrap();
        }
        let o = common::sresim(&[
            "accuracy-merge",
            s(&shards[0]),
            s(&shards[1]),
            "--out",
            s(&merged),
        ]);
        let e = common::fails(&o);
        assert_eq!(e.lines().count(), 1, "{want}: {e}");
        assert!(
            e.contains("a0/shard.json: ") && e.contains(want),
            "{want}: {e}"
        );
        assert!(!e.contains('\u{1b}') && o.stdout.is_empty(), "{e}");
        assert!(!merged.exists());
    }
    // The shards as written merge.
    for (d, (text, _)) in shards.iter().zip(&originals) {
        std::fs::write(d.join("shard.json"), text).unwrap();
    }
    ok(&[
        "accuracy-merge",
        s(&shards[0]),
        s(&shards[1]),
        "-q",
        "--out",
        s(&merged),
    ]);
}

/// A record's `crossbar` flag is the writer's: 1 exactly on a mode's path for a layer of
/// shard.json's `layers`, and a layer off the datapath has datapath figures of 0 (the
/// float path none at all). A records.csv edited against that, with its hash in
/// shard.json recomputed, is refused naming the file, the line and the cell: a quantized
/// row claiming `conv2.crossbar=1` with counts merged into `func_exact_frac=1` on the
/// quantized path, which no unsharded run writes.
#[test]
fn a_record_whose_crossbar_flag_contradicts_its_path_and_layers_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let shard = t.path().join("a0");
    let mut args = RUN.to_vec();
    args.extend(["--sample-range", "0..4", "-q", "--out", s(&shard)]);
    ok(&args);
    let records = std::fs::read(shard.join("records.csv")).unwrap();
    let manifest = std::fs::read_to_string(shard.join("shard.json")).unwrap();
    let merged = t.path().join("am");
    // The shard as written merges.
    ok(&["accuracy-merge", s(&shard), "-q", "--out", s(&merged)]);
    std::fs::remove_dir_all(&merged).unwrap();
    // (path of the row, cells set, the cell named, what the refusal says)
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: [Case; 6] = [
        (
            "quantized",
            &[("conv2.crossbar", "1"), ("conv2.func_outputs", "10"), ("conv2.func_exact", "10")],
            "conv2.crossbar: '1', but `accuracy` writes 0 here (the quantized path has no datapath)",
            "",
        ),
        ("sre", &[("conv2.crossbar", "0")], "conv2.crossbar: '0', but `accuracy` writes 1 here", ""),
        ("dense", &[("conv1.crossbar", "1")], "conv1.crossbar: '1', but `accuracy` writes 0 here", "not one of shard.json's layers"),
        ("quantized", &[("fc1.func_outputs", "10")], "fc1.func_outputs: '10' on a layer off the datapath", ""),
        ("sre", &[("conv1.func_max_abs_err", "3")], "conv1.func_max_abs_err: '3' on a layer off the datapath", ""),
        ("float", &[("fc1.crossbar", "0")], "fc1.crossbar: '0' on the float path", ""),
    ];
    for (path, cells, want, also) in cases {
        let mut r = csv::Reader::from_reader(&records[..]);
        let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let mut rows: Vec<Vec<String>> = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        let line = rows.iter().position(|x| x[2] == path).unwrap();
        for (c, v) in cells {
            rows[line][h.iter().position(|x| x == c).unwrap()] = v.to_string();
        }
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&h).unwrap();
        for x in &rows {
            w.write_record(x).unwrap();
        }
        let bytes = w.into_inner().unwrap();
        // records.csv's hash in shard.json (FNV-1a 64 of its bytes) recomputed.
        let mut x: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &bytes {
            x = (x ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mut m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
        m["records"] = serde_json::json!(format!("{x:016x}"));
        std::fs::write(shard.join("records.csv"), &bytes).unwrap();
        std::fs::write(shard.join("shard.json"), m.to_string()).unwrap();
        let o = common::sresim(&["accuracy-merge", s(&shard), "--out", s(&merged)]);
        let e = common::fails(&o);
        let at = format!("a0/records.csv: line {}: ", line + 2);
        assert!(
            e.contains(&at) && e.contains(want) && e.contains(also),
            "{path} {cells:?}: {e}"
        );
        assert!(!merged.exists(), "{e}");
    }
}
