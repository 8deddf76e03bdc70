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
    /// Its position in the values or the row checked (0 for a single value).
    pub index: usize,
    /// What the figure is: `energy_pj of conv1 (sre)`.
    pub figure: String,
    /// Its value as it would have been written: `inf`, `NaN`, `6.2e302`.
    pub value: String,
    /// Why it cannot be written.
    pub problem: Problem,
}

/// Why a figure cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// NaN or infinite.
    NotFinite,
    /// A count at or above this limit (a cast to u64 would saturate, a sum wrap).
    AboveLimit(u64),
    /// A count written as 2^64 - 1: saturated on its way.
    Saturated,
}

impl fmt::Display for NotFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (fig, v) = (&self.figure, &self.value);
        match self.problem {
            Problem::NotFinite => write!(f, "{fig} would be {v}, not a finite number"),
            Problem::AboveLimit(u64::MAX) => {
                write!(f, "{fig} would be {v}, more than a 64-bit count holds")
            }
            Problem::AboveLimit(l) => write!(f, "{fig} would be {v}, more than the limit of {l}"),
            Problem::Saturated => write!(f, "{fig} would be {v}, a count saturated at 2^64 - 1"),
        }
    }
}

/// `x` as a message prints a number sresim checked: the shortest text that reads back as
/// it, in exponent form when the plain form is longer (`1e-320`, `-1e308`, not 300
/// digits), plain otherwise (`0.5`, `2`, `NaN`, `inf`).
pub fn short(x: f64) -> String {
    let plain = x.to_string();
    let exp = format!("{x:e}");
    match exp.len() < plain.len() {
        true => exp,
        false => plain,
    }
}

/// `v`, or the refusal of figure `figure` when it is not finite.
pub fn check(figure: impl FnOnce() -> String, v: f64) -> Result<f64, NotFinite> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(NotFinite {
            index: 0,
            figure: figure(),
            value: format!("{v}"),
            problem: Problem::NotFinite,
        })
    }
}

/// Every value of `values` finite, or the refusal of the first that is not, named by
/// `figure(index)`.
pub fn check_all(values: &[f64], figure: impl FnOnce(usize) -> String) -> Result<(), NotFinite> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(NotFinite {
            index: i,
            figure: figure(i),
            value: format!("{}", values[i]),
            problem: Problem::NotFinite,
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
            index: 0,
            figure: figure(),
            value: format!("{v:e}"),
            problem: if v.is_nan() || v < 0.0 {
                Problem::NotFinite
            } else {
                Problem::AboveLimit(limit)
            },
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
    for (i, (col, cell)) in header.iter().zip(row).enumerate() {
        if text(col) {
            continue;
        }
        let cell = cell.as_ref();
        let problem = match cell.parse::<f64>() {
            Ok(x) if !x.is_finite() => Some(Problem::NotFinite),
            Ok(_) if cell.parse::<u64>() == Ok(u64::MAX) => Some(Problem::Saturated),
            _ => None,
        };
        if let Some(problem) = problem {
            return Err(NotFinite {
                index: i,
                figure: format!("{col} of {}", row_name()),
                value: cell.to_string(),
                problem,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_reads_back_and_is_never_long() {
        for (x, want) in [
            (1e-320, "1e-320"),
            (-1e308, "-1e308"),
            (0.5, "0.5"),
            (2.0, "2"),
            (1234.5, "1234.5"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(short(x), want);
        }
        for x in [5e-324, 1.7976931348623157e308, 0.1 + 0.2, -3.3e-7] {
            assert_eq!(short(x).parse::<f64>().unwrap(), x);
            assert!(short(x).len() <= 24, "{x}");
        }
    }

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
        assert_eq!(
            to_count(|| "c".into(), 1e300, u64::MAX)
                .unwrap_err()
                .to_string(),
            "c would be 1e300, more than a 64-bit count holds"
        );
        assert!(to_count(|| "c".into(), -1.0, u64::MAX).is_err());
        assert!(to_count(|| "c".into(), 2e19, u64::MAX).is_err());
        let h = ["layer", "cycles", "energy_pj"];
        let name = || "conv1".to_string();
        let text = |c: &str| c == "layer";
        assert_eq!(check_row(&h, &["a", "3", "1.5"], text, name), Ok(()));
        assert_eq!(check_row(&h, &["NaN", "3", ""], text, name), Ok(()));
        let e = check_row(&h, &["a", "3", "inf"], text, name).unwrap_err();
        assert_eq!((e.index, e.figure.as_str()), (2, "energy_pj of conv1"));
        let e = check_row(&h, &["a", "18446744073709551615", "1"], text, name).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cycles of conv1 would be 18446744073709551615, a count saturated at 2^64 - 1"
        );
    }
}
