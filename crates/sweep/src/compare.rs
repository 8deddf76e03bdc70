//! `sresim compare OLD NEW --tolerance T`: what changed between two result CSVs.
//!
//! Rows are matched by their key columns: those of `point, workload, network, layer,
//! mode` the files have, plus every column that is not a result column — of layers.csv,
//! or a functional, chip or accuracy column ([`super::extra`]) — i.e. the axis columns
//! of a sweep. Numeric cells are equal within a relative tolerance,
//! |new - old| <= T * max(|old|, |new|); other cells must match exactly. Rows present in
//! one file only and columns present in one file only are differences too.

use super::table::Table;
use anyhow::{bail, Result};
use sim::report;
use std::collections::HashMap;

/// Columns that identify a row even though layers.csv has some of them.
const KEYS: [&str; 5] = ["point", "workload", "network", "layer", "mode"];

/// The differences between two tables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// One line per difference, in OLD's row order, then added rows.
    pub lines: Vec<String>,
    pub compared: usize,
    pub changed: usize,
    pub missing: usize,
    pub added: usize,
    pub column_changes: usize,
}

impl Report {
    pub fn differs(&self) -> bool {
        self.changed + self.missing + self.added + self.column_changes > 0
    }

    pub fn summary(&self, tol: f64) -> String {
        format!(
            "{} rows compared: {} changed beyond relative tolerance {}, {} missing from NEW, {} added in NEW, {} column(s) in one file only",
            self.compared,
            self.changed,
            bounds::finite::short(tol),
            self.missing,
            self.added,
            self.column_changes
        )
    }
}

/// Whether `col` identifies a row (a key column) rather than holding a result: a column of
/// [`KEYS`], or one that no report writes as a result (a sweep's axes).
pub fn is_key_column(col: &str) -> bool {
    KEYS.contains(&col) || !(report::is_result_column(col) || super::extra::is_extra_column(col))
}

/// Equal within relative tolerance `tol` (numbers), or identical (anything else).
/// Identical text is always the same, and two cells that are not a number (`NaN`,
/// `nan`: not equal to themselves as floats) are the same too. Two integers are
/// compared as integers, their difference exact (a count above 2^53 is not a float:
/// 9007199254740993 and 9007199254740992 are one float), and two different texts that
/// a float cannot hold (`1e400`, `inf`) are never the same number.
pub fn same(a: &str, b: &str, tol: f64) -> bool {
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (a.parse::<i128>(), b.parse::<i128>()) {
        let diff = x.abs_diff(y);
        return diff == 0 || diff as f64 <= tol * (x.unsigned_abs().max(y.unsigned_abs()) as f64);
    }
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) if x.is_nan() && y.is_nan() => true,
        (Ok(x), Ok(y)) if x.is_infinite() || y.is_infinite() => false,
        (Ok(x), Ok(y)) => x == y || (x - y).abs() <= tol * x.abs().max(y.abs()),
        _ => a == b,
    }
}

/// A changed cell as a line shows it: both values and the relative change. A cell that
/// parses as NaN is told as "not a number" (docs/errors.md, "Text from data files"), and
/// no percentage is computed from it or from an infinity: the line never prints `NaN`.
fn change(a: &str, b: &str) -> String {
    let nan = |s: &str| s.parse::<f64>().is_ok_and(f64::is_nan);
    if nan(a) || nan(b) {
        let shown = |s: &str| match nan(s) {
            true => "not a number".to_string(),
            false => format!("'{s}'"),
        };
        return format!("{} -> {}", shown(a), shown(b));
    }
    // Two integers' change is their exact difference (above 2^53 a float's is 0).
    let percent = match (a.parse::<i128>(), b.parse::<i128>()) {
        (Ok(x), Ok(y)) if x != 0 => Some(100.0 * (y - x) as f64 / x.unsigned_abs() as f64),
        _ => match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) if x != 0.0 => Some(100.0 * (y - x) / x.abs()),
            _ => None,
        },
    };
    match percent {
        // A change too large for a float (1 -> 1e308) is shown without its percentage.
        Some(p) if p.is_finite() => {
            // Three decimals where they say something; a percentage of a million or more,
            // or one that three decimals would show as 0, in exponent form (never 300
            // digits, never a change shown as +0.000%).
            match p == 0.0 || (0.001..1e6).contains(&p.abs()) {
                true => format!("{a} -> {b} ({p:+.3}%)"),
                false => format!("{a} -> {b} ({p:+.3e}%)"),
            }
        }
        _ => format!("'{a}' -> '{b}'"),
    }
}

type Keyed<'a> = (Vec<String>, HashMap<Vec<&'a str>, usize>);

fn keyed<'a>(t: &'a Table, keys: &[String]) -> Result<Keyed<'a>> {
    let idx: Vec<usize> = keys
        .iter()
        .map(|k| t.col(k, "key"))
        .collect::<Result<_>>()?;
    let mut map = HashMap::new();
    let mut order = Vec::new();
    for (r, row) in t.rows.iter().enumerate() {
        let key: Vec<&str> = idx.iter().map(|&i| row[i].as_str()).collect();
        let label = keys
            .iter()
            .zip(&key)
            .filter(|(k, _)| *k != "point")
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        if map.insert(key, r).is_some() {
            let with = if label.is_empty() {
                format!("the same {}", keys.join(", "))
            } else {
                label.clone()
            };
            bail!(
                "{}: line {}: a second row with {with} (rows must differ in their key columns)",
                t.path.display(),
                r + 2
            );
        }
        order.push(label);
    }
    Ok((order, map))
}

/// Compares `new` against `old`, leaving out the columns in `ignore`.
pub fn compare(old: &Table, new: &Table, tol: f64, ignore: &[String]) -> Result<Report> {
    if !(tol.is_finite() && tol >= 0.0) {
        bail!("--tolerance: {tol} is not a non-negative number");
    }
    let cols = |t: &Table| -> Vec<String> {
        t.header
            .iter()
            .filter(|c| !ignore.contains(c))
            .cloned()
            .collect()
    };
    let (oc, nc) = (cols(old), cols(new));
    let keys: Vec<String> = oc.iter().filter(|c| is_key_column(c)).cloned().collect();
    let new_keys: Vec<String> = nc.iter().filter(|c| is_key_column(c)).cloned().collect();
    if keys.is_empty() {
        bail!(
            "--ignore: no key column is left to match rows by (the keys are {} and any axis column)",
            KEYS.join(", ")
        );
    }
    let (mut ks, mut nks) = (keys.clone(), new_keys.clone());
    ks.sort();
    nks.sort();
    if ks != nks {
        bail!(
            "{} and {}: the rows are keyed by different columns ({} vs {}): nothing to match",
            old.path.display(),
            new.path.display(),
            keys.join(","),
            new_keys.join(",")
        );
    }
    let mut rep = Report::default();
    for c in oc.iter().filter(|c| !nc.contains(c)) {
        rep.lines.push(format!("column {c}: only in OLD"));
        rep.column_changes += 1;
    }
    for c in nc.iter().filter(|c| !oc.contains(c)) {
        rep.lines.push(format!("column {c}: only in NEW"));
        rep.column_changes += 1;
    }
    let values: Vec<(usize, usize, &String)> = oc
        .iter()
        .filter(|c| !keys.contains(c) && nc.contains(c))
        .map(|c| Ok((old.col(c, "column")?, new.col(c, "column")?, c)))
        .collect::<Result<_>>()?;
    let (old_labels, old_map) = keyed(old, &keys)?;
    let (new_labels, new_map) = keyed(new, &keys)?;
    for (r, row) in old.rows.iter().enumerate() {
        let key: Vec<&str> = keys
            .iter()
            .map(|k| old.col(k, "key").map(|c| row[c].as_str()))
            .collect::<Result<_>>()?;
        let Some(&nr) = new_map.get(&key) else {
            rep.lines
                .push(format!("missing from NEW: {}", old_labels[r]));
            rep.missing += 1;
            continue;
        };
        rep.compared += 1;
        let nrow = &new.rows[nr];
        let diffs: Vec<String> = values
            .iter()
            .filter(|(i, j, _)| !same(&row[*i], &nrow[*j], tol))
            .map(|(i, j, c)| format!("{c} {}", change(&row[*i], &nrow[*j])))
            .collect();
        if !diffs.is_empty() {
            rep.lines
                .push(format!("changed {}: {}", old_labels[r], diffs.join(", ")));
            rep.changed += 1;
        }
    }
    for (r, row) in new.rows.iter().enumerate() {
        let key: Vec<&str> = keys
            .iter()
            .map(|k| new.col(k, "key").map(|c| row[c].as_str()))
            .collect::<Result<_>>()?;
        if !old_map.contains_key(&key) {
            rep.lines.push(format!("added in NEW: {}", new_labels[r]));
            rep.added += 1;
        }
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_tolerance() {
        // |100 - 101| = 1 <= 0.01 * 101 = 1.01: equal; |100 - 102| = 2 > 1.02: not.
        assert!(same("100", "101", 0.01));
        assert!(!same("100", "102", 0.01));
        assert!(same("0", "0", 0.0));
        assert!(!same("0", "1e-300", 0.5));
        assert!(same("", "", 0.0));
        assert!(!same("", "0", 0.0));
        assert!(same("conv", "conv", 0.0));
        assert_eq!(change("200", "201"), "200 -> 201 (+0.500%)");
        // Huge and tiny changes in exponent form: never 300 digits, never +0.000%.
        assert_eq!(change("1e-10", "1e290"), "1e-10 -> 1e290 (+1.000e302%)");
        assert_eq!(
            change("1", "1.0000000000000002"),
            "1 -> 1.0000000000000002 (+2.220e-14%)"
        );
        assert_eq!(change("1", "0"), "1 -> 0 (-100.000%)");
    }

    /// Counts above 2^53 differ by their exact difference (as floats 2^53 + 1 and 2^53
    /// were one number: a changed count passed at tolerance 0), and two different texts
    /// beyond a float (`1e400`, `inf`) are not the same number; the tolerance prints short.
    #[test]
    fn integers_compare_exactly_and_texts_beyond_a_float_differ() {
        for (a, b) in [
            ("9007199254740993", "9007199254740992"),
            ("123456789012345678", "123456789012345677"),
            ("18446744073709551615", "18446744073709551614"),
            ("1e400", "inf"),
        ] {
            assert!(!same(a, b, 0.0), "{a} {b}");
        }
        assert!(same("18446744073709551615", "18446744073709551614", 1e-18));
        assert!(same("-5", "-5", 0.0) && !same("-5", "5", 0.0));
        assert_eq!(
            change("9007199254740992", "9007199254740993"),
            "9007199254740992 -> 9007199254740993 (+1.110e-14%)"
        );
        let rep = Report {
            lines: vec![],
            compared: 1,
            changed: 0,
            missing: 0,
            added: 0,
            column_changes: 0,
        };
        assert!(
            rep.summary(1e308).contains("tolerance 1e308,"),
            "{}",
            rep.summary(1e308)
        );
    }

    /// A cell that is NaN was shown as `1 -> NaN (+NaN%)`: it is told as not a number,
    /// and two NaN cells are the same.
    #[test]
    fn a_cell_that_is_not_a_number_is_said_so() {
        assert_eq!(change("1", "NaN"), "'1' -> not a number");
        assert_eq!(change("nan", "2"), "not a number -> '2'");
        assert_eq!(change("1", "inf"), "'1' -> 'inf'");
        for (a, b) in [("1", "NaN"), ("NaN", "0"), ("-nan", "3")] {
            assert!(!change(a, b).to_lowercase().contains("nan"), "{a} {b}");
        }
        assert!(same("NaN", "nan", 0.0));
        assert!(!same("NaN", "1", 0.5));
        // Finite cells whose relative change overflows: no `inf` percentage.
        for (a, b) in [("1", "1e308"), ("5e-324", "1"), ("1", "-1e308")] {
            assert_eq!(change(a, b), format!("'{a}' -> '{b}'"));
        }
    }

    /// The digital unit's columns (and every other result column of layers.csv) are
    /// results: a run with another `digital.lanes` used to match no row ("0 changed, 70
    /// missing, 70 added"), its digital figures taken for keys.
    #[test]
    fn every_result_column_of_a_run_is_compared_not_a_key() {
        for c in sim::digital::COLUMNS
            .iter()
            .chain(&sim::chip::CHIP_COLUMNS)
            .chain(&sim::functional::COLUMNS)
            .chain(&sim::report::header())
        {
            assert!(
                !is_key_column(c) || KEYS.contains(c),
                "{c} would be a key column"
            );
        }
        assert!(is_key_column("ou.rows"));
        let table = |digital: &str| Table {
            path: "t.csv".into(),
            header: [
                "network",
                "layer",
                "mode",
                "cycles",
                "digital_cycles",
                "combined_cycles",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![["vit", "TOTAL", "dense", "100", digital, digital]
                .map(String::from)
                .to_vec()],
        };
        let r = compare(&table("7"), &table("9"), 0.0, &[]).unwrap();
        assert_eq!((r.compared, r.changed, r.missing, r.added), (1, 1, 0, 0));
        assert!(
            r.lines[0].contains("digital_cycles 7 -> 9"),
            "{:?}",
            r.lines
        );
    }

    /// A column named twice was read by its first copy only: `a,a,b` tables that differ
    /// in the second `a` compared equal. The header check refuses it for compare and plot.
    #[test]
    fn a_column_named_twice_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("d.csv");
        std::fs::write(&p, "layer,cycles,cycles\nx,1,2\n").unwrap();
        let e = Table::read(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("d.csv: header: column 3 is named \"cycles\" again (a table names each column once)"),
            "{e}"
        );
        let e = super::super::plot_table::Source::open(&p)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("column 3 is named \"cycles\" again"), "{e}");
    }
}
