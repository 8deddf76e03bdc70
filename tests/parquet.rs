//! `--format parquet`: the same run, sweep and merge written as CSV and as Parquet read
//! back to the same numbers; `compare` and `plot` read both; combinations that cannot
//! work are refused with one line.

use sresim::sweep::table::Table;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_sresim");

fn sresim(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("binary runs")
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn fails(o: &Output) -> String {
    assert!(!o.status.success(), "unexpected success");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

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
