//! The finite gate: every figure an output holds passes here before it is written or
//! printed. A figure that is NaN or infinite, or a float turned into a count that would
//! saturate (2^64 - 1 and above), is refused with a description naming the figure; the
//! caller adds the config key that scales it when it knows one (the configuration is
//! refused, since a finite but huge or tiny key is what makes a figure overflow).
//!
//! JSON cannot hold NaN or infinity (serde_json writes `null`), so a document is checked
//! through the figures it is built from, never after it was built.

use std::fmt;

/// A figure that an output cannot hold.
#[derive(Debug, Clone, PartialEq)]
pub struct NotFinite {
    /// What the figure is: `energy_pj of conv1 (sre)`.
    pub figure: String,
    /// Its value as it would have been written: `inf`, `NaN`, `1e300 cycles`.
    pub value: String,
}

impl fmt::Display for NotFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} would be {}, not a finite number",
            self.figure, self.value
        )
    }
}

/// `v`, or the refusal of figure `figure` when it is not finite.
pub fn check(figure: impl FnOnce() -> String, v: f64) -> Result<f64, NotFinite> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(NotFinite {
            figure: figure(),
            value: format!("{v}"),
        })
    }
}

/// Every value of `values` finite, or the refusal of the first that is not, named by
/// `figure(index)`.
pub fn check_all(values: &[f64], figure: impl FnOnce(usize) -> String) -> Result<(), NotFinite> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(NotFinite {
            figure: figure(i),
            value: format!("{}", values[i]),
        }),
    }
}

/// A non-negative float (a time in cycles, say) as a u64, rounded up: refused when it is
/// not finite, negative or at least `limit` (at most 2^64 - 1: a cast would saturate
/// there, and sums of such counts would wrap).
pub fn to_count(figure: impl FnOnce() -> String, v: f64, limit: u64) -> Result<u64, NotFinite> {
    let c = v.ceil();
    if c.is_finite() && c >= 0.0 && c < limit as f64 {
        Ok(c as u64)
    } else {
        Err(NotFinite {
            figure: figure(),
            value: format!("{v:e}"),
        })
    }
}

/// The cells of a table row (text, as a CSV writes it): a cell that reads as a number
/// must be finite, and an integer cell below 2^64 - 1 (a saturated count). `header`
/// names the columns, `text` says which hold names (a layer called `inf` is a name),
/// `row_name` names the row in the refusal.
pub fn check_row<S: AsRef<str>>(
    header: &[&str],
    row: &[S],
    text: impl Fn(&str) -> bool,
    row_name: impl Fn() -> String,
) -> Result<(), NotFinite> {
    for (col, cell) in header.iter().zip(row) {
        if text(col) {
            continue;
        }
        let cell = cell.as_ref();
        let bad = match cell.parse::<f64>() {
            Ok(x) if !x.is_finite() => true,
            Ok(_) => cell.parse::<u64>() == Ok(u64::MAX),
            Err(_) => false,
        };
        if bad {
            return Err(NotFinite {
                figure: format!("{col} of {}", row_name()),
                value: cell.to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_refuses_nan_infinity_and_saturation() {
        assert_eq!(check(|| "x".into(), 1.5), Ok(1.5));
        let e = check(|| "time_ns of conv1".into(), f64::INFINITY).unwrap_err();
        assert_eq!(
            e.to_string(),
            "time_ns of conv1 would be inf, not a finite number"
        );
        assert!(check_all(&[1.0, f64::NAN], |i| format!("y[{i}]"))
            .unwrap_err()
            .to_string()
            .starts_with("y[1] would be NaN"));
        assert_eq!(to_count(|| "c".into(), 2.1, u64::MAX), Ok(3));
        assert!(to_count(|| "c".into(), 1e300, u64::MAX).is_err());
        assert!(to_count(|| "c".into(), -1.0, u64::MAX).is_err());
        assert!(to_count(|| "c".into(), 2e19, u64::MAX).is_err());
        let h = ["layer", "cycles", "energy_pj"];
        let name = || "conv1".to_string();
        let text = |c: &str| c == "layer";
        assert_eq!(check_row(&h, &["a", "3", "1.5"], text, name), Ok(()));
        assert_eq!(check_row(&h, &["NaN", "3", ""], text, name), Ok(()));
        let e = check_row(&h, &["a", "3", "inf"], text, name).unwrap_err();
        assert_eq!(e.figure, "energy_pj of conv1");
        let e = check_row(&h, &["a", "18446744073709551615", "1"], text, name).unwrap_err();
        assert_eq!(e.figure, "cycles of conv1");
    }
}
