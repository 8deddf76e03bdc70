//! `merge` and `sweep --resume` check the cells a sweep derives from other cells of the
//! same point (docs/errors.md, "Output directories"): `passes` of 1 or 2, one
//! `input_cycles` per point, `speedup_vs_dense` 1 on a dense row and the dense row's
//! cycles over the row's elsewhere, `energy_saving_vs_dense` 1 - E / E_dense, `time_ns`
//! the cycles times one clock, `busy_cycles` at most `cycles`, `energy_pj` the sum of its
//! components; in CSV and in Parquet. An honest sharded sweep of every mode still merges
//! to the unsharded bytes.

use crate::common;
use common::{col, fails, ok, read_csv, s, sresim, write};

use std::path::Path;

/// Every mode (dense first, so that a point's first row is dense), both signed encodings
/// (one and two passes) and two OU heights.
const GRID: &str = r#"
workloads = ["lenet5"]
modes = ["dense", "weight", "activation", "sre", "ideal"]
samples = 1
[axes]
"ou.rows" = [2, 4]
"input.signed_encoding" = ["twos-complement", "sign-magnitude"]
"#;

/// A tampering of the rows: (row, column, value; `+1` is the row's cycles plus one), the
/// column the refusal names and what it says.
const CASES: [(usize, &str, &str, &str, &str); 9] = [
    (0, "passes", "7", "passes", "is not a number of passes"),
    (
        0,
        "input_cycles",
        "99",
        "input_cycles",
        "differs from the point's other",
    ),
    (0, "speedup_vs_dense", "2", "speedup_vs_dense", "is not 1"),
    (
        3,
        "speedup_vs_dense",
        "0",
        "speedup_vs_dense",
        "is not the dense row's cycles over",
    ),
    (
        3,
        "energy_saving_vs_dense",
        "0.125",
        "energy_saving_vs_dense",
        "is not 1 - energy_pj",
    ),
    (3, "time_ns", "1", "time_ns", "is not the row's cycles"),
    // 0 as sresim writes it (a cell such as `1e-400`, which reads as 0, is refused for
    // its form before: merge_domains.rs).
    (3, "time_ns", "0", "time_ns", "is not the row's cycles"),
    (
        3,
        "busy_cycles",
        "+1",
        "busy_cycles",
        "is above the row's cycles",
    ),
    (
        3,
        "e_adc_pj",
        // Written as sresim writes 1e300 (`tampered`).
        "1e300",
        "energy_pj",
        "is not the sum of the row's e_*_pj",
    ),
];

fn tampered(h: &[String], rows: &[Vec<String>], case: usize) -> Vec<Vec<String>> {
    let (r, column, value, _, _) = CASES[case];
    let mut rows = rows.to_vec();
    let value = match value {
        "+1" => (rows[r][col(h, "cycles")].parse::<u64>().unwrap() + 1).to_string(),
        // A number in the form a writer prints it (no exponent).
        "1e300" => 1e300_f64.to_string(),
        v => v.to_string(),
    };
    rows[r][col(h, column)] = value;
    rows
}

fn refused(e: &str, file: &str, case: usize) {
    let (_, _, _, named, why) = CASES[case];
    assert!(
        e.contains(&format!("{file}: point "))
            && e.contains(&format!(": {named}: '"))
            && e.contains(why),
        "case {case}: {e}"
    );
}

fn write_csv(dir: &Path, from: &Path, h: &[String], rows: &[Vec<String>]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(from.join("sweep.json"), dir.join("sweep.json")).unwrap();
    let mut w = csv::Writer::from_path(dir.join("points.csv")).unwrap();
    w.write_record(h).unwrap();
    for r in rows {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
}

fn write_parquet(dir: &Path, from: &Path, cols: &[columnar::Column], rows: &[Vec<String>]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(from.join("sweep.json"), dir.join("sweep.json")).unwrap();
    let file = std::fs::File::create(dir.join("points.parquet")).unwrap();
    let mut w = columnar::Writer::new(file, cols.to_vec()).unwrap();
    for r in rows {
        w.row(r).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn merge_and_resume_refuse_derived_cells_that_contradict_their_point() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let grid = write(dir.path(), "g.toml", GRID);
    let sweep = |out: &Path, more: &[&str]| {
        let mut a = vec![
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(out),
            "-q",
            "--threads",
            "1",
        ];
        a.extend(more);
        ok(&sresim(&a));
    };
    let (full, fullpq) = (d("full"), d("fullpq"));
    sweep(&full, &[]);
    sweep(&fullpq, &["--format", "parquet"]);
    sweep(&d("sh0"), &["--shard", "0/2"]);
    sweep(&d("sh1"), &["--shard", "1/2", "--format", "parquet"]);
    // Honest shards (every mode, one and two passes) merge to the unsharded bytes.
    ok(&sresim(&[
        "merge",
        s(&d("sh0")),
        s(&d("sh1")),
        "-o",
        s(&d("m")),
    ]));
    assert_eq!(
        std::fs::read(d("m").join("points.csv")).unwrap(),
        std::fs::read(full.join("points.csv")).unwrap()
    );
    let (sh0, sh1, mpq) = (d("sh0"), d("sh1"), d("mpq"));
    ok(&sresim(&[
        "merge",
        s(&sh0),
        s(&sh1),
        "-o",
        s(&mpq),
        "--format",
        "parquet",
    ]));
    assert_eq!(
        std::fs::read(d("mpq").join("points.parquet")).unwrap(),
        std::fs::read(fullpq.join("points.parquet")).unwrap()
    );
    let (h, rows) = read_csv(&full.join("points.csv"));
    let passes = col(&h, "passes");
    assert!(
        rows.iter().any(|r| r[passes] == "2") && rows.iter().any(|r| r[passes] == "1"),
        "the grid has one- and two-pass layers"
    );
    let rd =
        columnar::Reader::new(std::fs::File::open(fullpq.join("points.parquet")).unwrap()).unwrap();
    let cols = rd.columns().to_vec();
    for case in 0..CASES.len() {
        let rows = tampered(&h, &rows, case);
        // merge, CSV and Parquet.
        let (c, p) = (d(&format!("c{case}")), d(&format!("p{case}")));
        write_csv(&c, &full, &h, &rows);
        write_parquet(&p, &fullpq, &cols, &rows);
        for (input, file) in [(&c, "points.csv"), (&p, "points.parquet")] {
            let out = d(&format!("o{case}{file}"));
            let e = fails(&sresim(&["merge", s(input), "-o", s(&out)]));
            refused(
                &e,
                &format!("{}/{file}", input.file_name().unwrap().to_str().unwrap()),
                case,
            );
            assert!(!out.exists(), "{e}");
        }
        // resume, CSV and Parquet: refused, the table left as it was.
        for (input, file, format) in [(&c, "points.csv", "csv"), (&p, "points.parquet", "parquet")]
        {
            let before = std::fs::read(input.join(file)).unwrap();
            let a = [
                "sweep",
                "-g",
                s(&grid),
                "-o",
                s(input),
                "--resume",
                "-q",
                "--format",
                format,
            ];
            let e = fails(&sresim(&a));
            refused(&e, file, case);
            assert_eq!(
                std::fs::read(input.join(file)).unwrap(),
                before,
                "case {case}"
            );
        }
    }
}
