//! `merge` and `sweep --resume` check every numeric cell of a shard against its column's
//! domain (docs/errors.md, "Output directories"): a top-1 of 1.7 or -0.2, an agreement of
//! 3, a drop of -4, a saving above 1, an interval whose low end is above its high end is
//! refused naming the file, the point's row and the column; in CSV and in Parquet.

use crate::common;
use common::{col, fails, ok, read_csv, s, sresim, write};

use std::path::Path;

/// One point with every bounded column: functional, accuracy and three device draws,
/// dense beside sre (`energy_saving_vs_dense`).
const GRID: &str = r#"
workloads = ["lenet5-mnist"]
modes = ["dense", "sre"]
samples = 1
layers = ["fc2"]
functional = true
accuracy = true
accuracy_samples = 24
draws = 3
[set]
"device.seed" = 9
"device.read_noise" = 2.0
"#;

/// The cells to tamper: column, value, what the refusal says.
const CASES: [(&str, &str, &str); 8] = [
    ("top1", "1.7", "outside the quantity's domain [0, 1]"),
    ("top1", "-0.2", "outside the quantity's domain [0, 1]"),
    ("agreement", "3.0", "outside the quantity's domain [0, 1]"),
    (
        "top1_drop_mean",
        "-4",
        "outside the quantity's domain [-1, 1]",
    ),
    (
        "func_exact_frac",
        "1.5",
        "outside the quantity's domain [0, 1]",
    ),
    (
        "energy_saving_vs_dense",
        "1.25",
        "outside the quantity's domain (-inf, 1]",
    ),
    (
        "top1_ci_high",
        "1.01",
        "outside the quantity's domain [0, 1]",
    ),
    // Inside [0, 1], but above the row's top1_ci_high (set to 0 below).
    ("top1_ci_low", "0.5", "is above top1_ci_high '0'"),
];

/// The rows of `table` with `column` of the first row that fills it set to `value`
/// (and, for an interval's low end, the high end set to 0).
fn tampered(h: &[String], rows: &[Vec<String>], column: &str, value: &str) -> Vec<Vec<String>> {
    let mut rows = rows.to_vec();
    let c = col(h, column);
    let row = rows.iter_mut().find(|r| !r[c].is_empty()).unwrap();
    row[c] = value.to_string();
    if column == "top1_ci_low" {
        row[col(h, "top1_ci_high")] = "0".to_string();
    }
    rows
}

fn write_csv(dir: &Path, from: &Path, h: &[String], rows: &[Vec<String>]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(from.join("sweep.json"), dir.join("sweep.json")).unwrap();
    let text: String = std::iter::once(h)
        .chain(rows.iter().map(|r| r.as_slice()))
        .map(|r| format!("{}\n", r.join(",")))
        .collect();
    std::fs::write(dir.join("points.csv"), text).unwrap();
}

#[test]
fn merge_and_resume_refuse_cells_outside_their_columns_domain() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let grid = write(dir.path(), "g.toml", GRID);
    let full = d("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    // The untouched sweep merges to its own bytes.
    ok(&sresim(&["merge", s(&full), "-o", s(&d("m0"))]));
    assert_eq!(
        std::fs::read(d("m0").join("points.csv")).unwrap(),
        std::fs::read(full.join("points.csv")).unwrap()
    );
    let (h, rows) = read_csv(&full.join("points.csv"));
    for (i, (column, value, why)) in CASES.into_iter().enumerate() {
        let shard = d(&format!("t{i}"));
        write_csv(&shard, &full, &h, &tampered(&h, &rows, column, value));
        let out = d(&format!("m{}", i + 1));
        let e = fails(&sresim(&["merge", s(&shard), "-o", s(&out)]));
        assert!(
            e.contains(&format!("t{i}/points.csv: point "))
                && e.contains(&format!(": {column}: '{value}' "))
                && e.contains(why),
            "{column}={value}: {e}"
        );
        assert!(!out.exists(), "{e}");
    }
    // `sweep --resume` keeps a complete point only after the same check.
    let cut = d("t0");
    let before = std::fs::read(cut.join("points.csv")).unwrap();
    let e = fails(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&cut),
        "--resume",
        "-q",
    ]));
    assert!(
        e.contains("points.csv: point ") && e.contains(": top1: '1.7' is outside"),
        "{e}"
    );
    assert_eq!(std::fs::read(cut.join("points.csv")).unwrap(), before);
}

#[test]
fn merge_refuses_a_parquet_cell_outside_its_columns_domain() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let grid = write(dir.path(), "g.toml", GRID);
    let full = d("full");
    ok(&sresim(&[
        "sweep",
        "-g",
        s(&grid),
        "-o",
        s(&full),
        "-q",
        "--format",
        "parquet",
    ]));
    let pq = full.join("points.parquet");
    ok(&sresim(&[
        "merge",
        s(&full),
        "-o",
        s(&d("m0")),
        "--format",
        "parquet",
    ]));
    assert_eq!(
        std::fs::read(d("m0").join("points.parquet")).unwrap(),
        std::fs::read(&pq).unwrap()
    );
    let mut rd = columnar::Reader::new(std::fs::File::open(&pq).unwrap()).unwrap();
    let cols = rd.columns().to_vec();
    let h: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
    let mut rows = Vec::new();
    let mut row = Vec::new();
    while rd.next_row(&mut row).unwrap() {
        rows.push(row.clone());
    }
    for (i, (column, value, why)) in [CASES[0], CASES[3], CASES[7]].into_iter().enumerate() {
        let shard = d(&format!("t{i}"));
        std::fs::create_dir_all(&shard).unwrap();
        std::fs::copy(full.join("sweep.json"), shard.join("sweep.json")).unwrap();
        let file = std::fs::File::create(shard.join("points.parquet")).unwrap();
        let mut w = columnar::Writer::new(file, cols.clone()).unwrap();
        for r in tampered(&h, &rows, column, value) {
            w.row(&r).unwrap();
        }
        w.finish().unwrap();
        let out = d(&format!("m{}", i + 1));
        let e = fails(&sresim(&["merge", s(&shard), "-o", s(&out)]));
        assert!(
            e.contains(&format!("t{i}/points.parquet: point ")) && e.contains(why),
            "{column}={value}: {e}"
        );
        assert!(!out.exists(), "{e}");
    }
}

/// The accuracy cells against the grid and their own row (docs/errors.md, "Output
/// directories"): draws and samples out of range, differing between the rows of a point
/// or from the grid's (which `--resume` reads), a std above what fractions can spread,
/// a mean outside its own interval, a number in a form sresim never writes.
#[test]
fn merge_and_resume_refuse_accuracy_cells_against_the_grid_or_their_row() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let grid = write(dir.path(), "g.toml", GRID);
    let full = d("full");
    ok(&sresim(&["sweep", "-g", s(&grid), "-o", s(&full), "-q"]));
    let (h, rows) = read_csv(&full.join("points.csv"));
    let first = |column: &str| {
        rows.iter()
            .position(|r| !r[col(&h, column)].is_empty())
            .unwrap()
    };
    let cell = |r: usize, column: &str| rows[r][col(&h, column)].parse::<f64>().unwrap();
    // A mean outside its row's interval: below a low end above 0, else above a high end
    // below 1 (the interval of a fraction lies in [0, 1]).
    let m = first("top1_mean");
    let outside = match cell(m, "top1_ci_low") > 0.0 {
        true => "0",
        false => "1",
    };
    assert!(cell(m, "top1_ci_low") > 0.0 || cell(m, "top1_ci_high") < 1.0);
    // (column, value, what merge says, what --resume says)
    let cases: [(&str, &str, &str, &str); 8] = [
        (
            "accuracy_draws",
            "4294967296",
            "is not a number of device draws (2 to 10000",
            "is not a number of device draws",
        ),
        (
            "accuracy_draws",
            "4",
            "'3' differs from '4' in the point's row",
            "is not the grid's draws (3)",
        ),
        (
            "accuracy_samples",
            "99999",
            "'24' differs from '99999' in the point's row",
            "is not the grid's accuracy_samples (24)",
        ),
        ("top1_std", "0.9", "is above 0.61237", "is above 0.61237"),
        (
            "top1_mean",
            outside,
            "is outside the row's own interval [top1_ci_low, top1_ci_high]",
            "outside the row's own interval",
        ),
        (
            "top1",
            "1e-400",
            "is not a number as sresim writes one (it writes this one as 0)",
            "not a number as sresim writes one",
        ),
        (
            "top1",
            "+0.5",
            "is not a number as sresim writes one (it writes this one as 0.5)",
            "not a number as sresim writes one",
        ),
        (
            "agreement",
            ".5",
            "is not a number as sresim writes one (it writes this one as 0.5)",
            "not a number as sresim writes one",
        ),
    ];
    for (i, (column, value, merge_says, resume_says)) in cases.into_iter().enumerate() {
        let shard = d(&format!("a{i}"));
        let mut t = rows.clone();
        t[first(column)][col(&h, column)] = value.to_string();
        write_csv(&shard, &full, &h, &t);
        let out = d(&format!("am{i}"));
        let e = fails(&sresim(&["merge", s(&shard), "-o", s(&out)]));
        assert!(
            e.contains(&format!("a{i}/points.csv: point "))
                && e.contains(&format!(": {column}: '"))
                && e.contains(merge_says),
            "merge {column}={value}: {e}"
        );
        assert!(!out.exists(), "{e}");
        let before = std::fs::read(shard.join("points.csv")).unwrap();
        let e = fails(&sresim(&[
            "sweep",
            "-g",
            s(&grid),
            "-o",
            s(&shard),
            "--resume",
            "-q",
        ]));
        assert!(
            e.contains(&format!("a{i}/points.csv: point "))
                && e.contains(&format!(": {column}: '{value}' "))
                && e.contains(resume_says),
            "resume {column}={value}: {e}"
        );
        assert_eq!(std::fs::read(shard.join("points.csv")).unwrap(), before);
    }
}
