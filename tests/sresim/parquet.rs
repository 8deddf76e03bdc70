//! `--format parquet`: the same run, sweep and merge written as CSV and as Parquet read
//! back to the same numbers; `compare` and `plot` read both; combinations that cannot
//! work are refused with one line.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs
// Test helpers outside #[test] functions unwrap too: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;
use common::{fails, ok, s, sresim};

use std::path::Path;
use sweep::table::Table;

/// The two tables have the same header, and every cell is the same text or the same
/// number (a float read back prints in its shortest form).
fn same_numbers(a: &Table, b: &Table) {
    assert_eq!(a.header, b.header);
    assert_eq!(a.rows.len(), b.rows.len());
    assert!(!a.rows.is_empty());
    let mut numbers = 0;
    for (ra, rb) in a.rows.iter().zip(&b.rows) {
        for ((x, y), h) in ra.iter().zip(rb).zip(&a.header) {
            match (x.parse::<f64>(), y.parse::<f64>()) {
                (Ok(p), Ok(q)) => {
                    assert_eq!(p.to_bits(), q.to_bits(), "{h}: {x} vs {y}");
                    numbers += 1;
                }
                _ => assert_eq!(x, y, "{h}"),
            }
        }
    }
    assert!(numbers > a.rows.len() * 10, "{numbers} numeric cells");
}

#[test]
fn a_run_in_parquet_holds_the_numbers_of_its_csv_and_compare_and_plot_read_it() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let run = ["run", "-q", "--modes", "dense,sre", "--engine", "cycle"];
    ok(&sresim(&[&run[..], &["-o", s(&a)]].concat()));
    ok(&sresim(
        &[&run[..], &["-o", s(&b), "--format", "parquet"]].concat(),
    ));
    assert!(!b.join("layers.csv").exists());
    let (csv, pq) = (a.join("layers.csv"), b.join("layers.parquet"));
    let bytes = std::fs::read(&pq).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    same_numbers(&Table::read(&csv).unwrap(), &Table::read(&pq).unwrap());
    // The columns are typed: counts unsigned, energy float, names text, empty cells null.
    let rd = columnar::Reader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    let kind = |name: &str| {
        rd.columns()
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.kind)
            .unwrap()
    };
    assert_eq!(kind("cycles"), columnar::Kind::Count);
    assert_eq!(kind("energy_pj"), columnar::Kind::Float);
    assert_eq!(kind("layer"), columnar::Kind::Text);
    let out = ok(&sresim(&["compare", s(&csv), s(&pq)]));
    assert!(out.contains("0 changed"), "{out}");
    ok(&sresim(&["compare", s(&b), s(&a)]));
    let svg = t.path().join("c.svg");
    ok(&sresim(&[
        "plot",
        s(&b),
        "--x",
        "mode",
        "--y",
        "cycles",
        "-o",
        s(&svg),
    ]));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    // A CSV run into the Parquet run's directory leaves one table, not two.
    ok(&sresim(&[&run[..], &["-o", s(&b)]].concat()));
    assert!(b.join("layers.csv").exists() && !pq.exists());
    // Both in one directory (by hand) is ambiguous for compare.
    std::fs::copy(a.join("layers.csv"), a.join("layers.parquet")).unwrap();
    let e = fails(&sresim(&["compare", s(&a), s(&b)]));
    assert!(
        e.contains("holds both layers.csv and layers.parquet"),
        "{e}"
    );
    // A CSV named .parquet is read as what it is; a damaged Parquet file is one line.
    std::fs::write(&pq, b"PAR1 not really").unwrap();
    let e = fails(&sresim(&["compare", s(&csv), s(&pq)]));
    assert!(e.contains("not a readable Parquet table"), "{e}");
}

#[test]
fn a_sweep_and_a_merge_of_parquet_shards_hold_the_numbers_of_the_csv_sweep() {
    let t = tempfile::tempdir().unwrap();
    let grid = t.path().join("g.toml");
    std::fs::write(
        &grid,
        "workloads = [\"lenet5\"]\nmodes = [\"dense\", \"sre\"]\nsamples = 1\n[axes]\n\
         \"ou.rows\" = [8, 16]\n\"synth.weight_sparsity\" = [0.5, 0.7]\n\
         \"synth.structure\" = [\"unstructured\", \"ssl\"]\n",
    )
    .unwrap();
    let d = |n: &str| t.path().join(n);
    let sweep = |out: &Path, more: &[&str]| {
        sresim(&[&["sweep", "-q", "-g", s(&grid), "-o", s(out)], more].concat())
    };
    ok(&sweep(&d("csv"), &[]));
    ok(&sweep(&d("pq"), &["--format", "parquet"]));
    let pq = d("pq").join("points.parquet");
    assert!(pq.exists() && !d("pq").join("points.csv").exists());
    let csv = d("csv").join("points.csv");
    same_numbers(&Table::read(&csv).unwrap(), &Table::read(&d("pq")).unwrap());
    let rd = columnar::Reader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    let kinds: Vec<(String, columnar::Kind)> = rd
        .columns()
        .iter()
        .take(5)
        .map(|c| (c.name.clone(), c.kind))
        .collect();
    use columnar::Kind::*;
    let want = [
        ("point", Text),
        ("workload", Text),
        ("ou.rows", Int),
        ("synth.weight_sparsity", Float),
        ("synth.structure", Text),
    ];
    assert_eq!(kinds, want.map(|(n, k)| (n.to_string(), k)));
    // sweep.json describes the grid; it lists no point.
    let json = std::fs::read_to_string(d("pq").join("sweep.json")).unwrap();
    assert!(json.contains("\"point_count\": 8") && json.contains("\"table\": \"parquet\""));
    assert!(!json.contains("\"id\""), "{json}");
    // Shards in Parquet merge to the bytes of the unsharded Parquet sweep, and to the
    // bytes of the CSV sweep when merged to CSV.
    for i in 0..2 {
        let shard = format!("{i}/2");
        ok(&sweep(
            &d(&format!("s{i}")),
            &["--format", "parquet", "--shard", &shard],
        ));
    }
    let shards = [d("s0"), d("s1")];
    let merge = |out: &Path, format: &str| {
        sresim(&[
            "merge",
            s(&shards[0]),
            s(&shards[1]),
            "-o",
            s(out),
            "--format",
            format,
        ])
    };
    ok(&merge(&d("m-pq"), "parquet"));
    assert_eq!(
        std::fs::read(d("m-pq").join("points.parquet")).unwrap(),
        std::fs::read(&pq).unwrap()
    );
    ok(&merge(&d("m-csv"), "csv"));
    assert_eq!(
        std::fs::read(d("m-csv").join("points.csv")).unwrap(),
        std::fs::read(&csv).unwrap()
    );
    // Resuming in the other format is refused with one line, in either direction.
    let e = fails(&sweep(&d("csv"), &["--resume", "--format", "parquet"]));
    assert!(e.contains("started with --format csv"), "{e}");
    let e = fails(&sweep(&d("pq"), &["--resume"]));
    assert!(e.contains("started with --format parquet"), "{e}");
    // A finished Parquet sweep resumes to nothing to do, unchanged.
    let out = ok(&sweep(&d("pq"), &["--resume", "--format", "parquet"]));
    let _ = out;
    assert_eq!(
        std::fs::read(&pq).unwrap(),
        std::fs::read(d("m-pq").join("points.parquet")).unwrap()
    );
}

#[test]
fn a_sweep_json_that_lists_every_point_is_upgraded_by_resume_and_refused_by_merge() {
    let t = tempfile::tempdir().unwrap();
    let grid = t.path().join("g.toml");
    std::fs::write(
        &grid,
        "workloads = [\"lenet5\"]\nmodes = [\"dense\"]\nsamples = 1\n[axes]\n\"ou.rows\" = [8, 16]\n",
    )
    .unwrap();
    let out = t.path().join("o");
    ok(&sresim(&["sweep", "-q", "-g", s(&grid), "-o", s(&out)]));
    // The earlier format: the same fields and a list of points, without the description.
    let path = out.join("sweep.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o.insert("format".into(), "sresim-sweep-1".into());
    for k in ["point_count", "workloads", "values", "explicit", "table"] {
        o.remove(k);
    }
    o.insert(
        "points".into(),
        serde_json::json!([{"id": "x", "workload": "lenet5", "values": ["8"], "rows": 1}]),
    );
    std::fs::write(&path, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    let m = t.path().join("m");
    let e = fails(&sresim(&["merge", s(&out), "-o", s(&m)]));
    assert!(
        e.contains("sresim-sweep-1") && e.contains("--resume"),
        "{e}"
    );
    ok(&sresim(&[
        "sweep",
        "-q",
        "-g",
        s(&grid),
        "-o",
        s(&out),
        "--resume",
    ]));
    ok(&sresim(&["merge", s(&out), "-o", s(&m)]));
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("sresim-sweep-2"));
}

#[test]
fn the_memory_models_layers_table_in_parquet_holds_the_numbers_of_its_csv() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    let args = [
        "memory",
        "--workload",
        "resnet18",
        "--capacity",
        "16MiB,inf",
    ];
    ok(&sresim(&[&args[..], &["--out", s(&a)]].concat()));
    let out = ok(&sresim(
        &[&args[..], &["--out", s(&b), "--format", "parquet"]].concat(),
    ));
    assert!(out.contains("memory_layers.parquet"), "{out}");
    assert!(!b.join("memory_layers.csv").exists());
    let pq = b.join("memory_layers.parquet");
    let csv = Table::read(&a.join("memory_layers.csv")).unwrap();
    let parquet = Table::read(&pq).unwrap();
    // The unbounded buffer is `inf` in the CSV and a null (an empty cell) in Parquet.
    let cap = csv
        .header
        .iter()
        .position(|h| h == "capacity_bytes")
        .unwrap();
    let mut unbounded = 0;
    let mut with_inf = csv.clone();
    for (r, p) in with_inf.rows.iter_mut().zip(&parquet.rows) {
        if r[cap] == "inf" {
            assert_eq!(p[cap], "", "an unbounded buffer is a null");
            r[cap] = String::new();
            unbounded += 1;
        }
    }
    assert!(unbounded > 0 && unbounded < csv.rows.len());
    same_numbers(&with_inf, &parquet);
    let rd = columnar::Reader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    let kind = |n: &str| rd.columns().iter().find(|c| c.name == n).unwrap().kind;
    assert_eq!(kind("read_bytes"), columnar::Kind::Count);
    assert_eq!(kind("time_s"), columnar::Kind::Float);
    assert_eq!(kind("capacity_bytes"), columnar::Kind::Count);
}
