//! Byte sizes and bandwidths as an architect writes them: `16MiB`, `1GB`, `512KiB`, `inf`,
//! `900GB/s`, `1.5TB/s`.
//!
//! Binary prefixes (KiB, MiB, GiB, TiB) are powers of 1024, decimal ones (KB, MB, GB, TB)
//! powers of 1000; a bare number is bytes. The unit letter `B` means bytes; a lowercase
//! `b` means bits and is refused (`900Gb/s` is not 900 GB/s), to avoid the Gb/GB
//! confusion. Prefixes are case-insensitive.

use std::fmt;

/// An on-chip capacity in bytes; `None` is an unbounded buffer (`inf`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Capacity(pub Option<u64>);

impl Capacity {
    pub const INFINITE: Capacity = Capacity(None);

    pub fn bytes(n: u64) -> Self {
        Capacity(Some(n))
    }

    /// The capacity as a number the buffer can compare against (u64::MAX for `inf`).
    pub fn limit(self) -> u64 {
        self.0.unwrap_or(u64::MAX)
    }

    pub fn is_infinite(self) -> bool {
        self.0.is_none()
    }
}

impl fmt::Display for Capacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => write!(f, "inf"),
            Some(b) => write!(f, "{}", format_bytes(b as f64)),
        }
    }
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '_'))
        .unwrap_or(s.len());
    // A trailing 'e'/'E' belongs to the unit only if no exponent digits follow; unit letters
    // never start with e, so a plain parse decides.
    let num: f64 = s[..end].replace('_', "").parse().ok()?;
    Some((num, s[end..].trim()))
}

fn unit_factor(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    Some(match u.as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

fn parse_bytes_f64(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t).ok_or_else(|| format!("'{s}' is not a size"))?;
    if unit.ends_with('b') {
        return Err(format!(
            "'{s}': a lowercase b means bits; sizes and bandwidths are in bytes (B, e.g. 900GB/s)"
        ));
    }
    let f = unit_factor(unit).ok_or_else(|| {
        format!("'{s}': unknown unit '{unit}' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    })?;
    let v = num * f;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("'{s}' is not a non-negative size"));
    }
    Ok(v)
}

/// Parses a capacity: `16MiB`, `1GB`, `512KiB`, `0`, `inf`.
pub fn parse_capacity(s: &str) -> Result<Capacity, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("infinite") {
        return Ok(Capacity::INFINITE);
    }
    let v = parse_bytes_f64(t)?;
    if v.fract() != 0.0 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    if v >= u64::MAX as f64 {
        return Err(format!("'{s}' is too large (use inf)"));
    }
    Ok(Capacity::bytes(v as u64))
}

/// Parses a bandwidth in bytes per second: `900GB/s`, `1.5TB/s`, `900GB` (per second implied).
pub fn parse_bandwidth(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let body = t
        .strip_suffix("/s")
        .or_else(|| t.strip_suffix("/S"))
        .or_else(|| t.strip_suffix("ps"))
        .unwrap_or(t);
    let v = parse_bytes_f64(body)?;
    if v <= 0.0 {
        return Err(format!("'{s}': bandwidth must be positive"));
    }
    Ok(v)
}

/// `16 MiB`, `1.50 GiB`, `512 B`: binary prefixes, three significant digits.
pub fn format_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{} {}", trim_decimals(v, 2), UNITS[i])
}

/// `v` with at most `places` decimals, trailing zeros dropped (`1.50` -> `1.5`, `16.00` -> `16`).
fn trim_decimals(v: f64, places: usize) -> String {
    let s = format!("{v:.places$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `900 GB/s`: decimal prefixes, as bandwidths are quoted.
pub fn format_bandwidth(bps: f64) -> String {
    const UNITS: [&str; 5] = ["B/s", "KB/s", "MB/s", "GB/s", "TB/s"];
    let mut v = bps;
    let mut i = 0;
    while v >= 1000.0 && i + 1 < UNITS.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{} {}", trim_decimals(v, 3), UNITS[i])
}

/// Seconds with a fitting unit (`12.3 ms`).
pub fn format_seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.3} us", s * 1e6)
    } else {
        format!("{:.1} ns", s * 1e9)
    }
}

/// Units of time in nanoseconds, for [`Column`].
pub const NANOSECONDS: &[(&str, f64)] = &[("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)];
/// Units of time in seconds.
pub const SECONDS: &[(&str, f64)] = &[("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)];
/// Units of energy in picojoules.
pub const PICOJOULES: &[(&str, f64)] = &[
    ("pJ", 1.0),
    ("nJ", 1e3),
    ("uJ", 1e6),
    ("mJ", 1e9),
    ("J", 1e12),
];
/// Units of bandwidth in bytes per second (decimal prefixes, as bandwidths are quoted).
pub const BYTES_PER_S: &[(&str, f64)] = &[
    ("B/s", 1.0),
    ("KB/s", 1e3),
    ("MB/s", 1e6),
    ("GB/s", 1e9),
    ("TB/s", 1e12),
];
/// Units of bytes (binary prefixes, as capacities are quoted).
pub const BYTES: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

/// A column of a printed table in one unit and one precision, so that its numbers line
/// up and compare at a glance: the largest unit of `units` in which the column's largest
/// value is at least 1, each value with `decimals` decimals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    pub unit: &'static str,
    pub divisor: f64,
    pub decimals: usize,
}

impl Column {
    /// The column of `values` (its largest magnitude picks the unit).
    pub fn fit(
        values: impl IntoIterator<Item = f64>,
        units: &[(&'static str, f64)],
        decimals: usize,
    ) -> Column {
        let largest = values
            .into_iter()
            .map(f64::abs)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let (unit, divisor) = units
            .iter()
            .rev()
            .find(|u| largest >= u.1)
            .or(units.first())
            .copied()
            .unwrap_or(("", 1.0));
        Column {
            unit,
            divisor,
            decimals,
        }
    }

    /// `v` in the column's unit: `12.127 ms`.
    pub fn show(&self, v: f64) -> String {
        format!("{:.*} {}", self.decimals, v / self.divisor, self.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_takes_one_unit_and_one_precision() {
        let c = Column::fit([871.652e9, 1.4e12, 1.32e12], BYTES_PER_S, 2);
        let shown: Vec<String> = [871.652e9, 1.4e12].iter().map(|&v| c.show(v)).collect();
        assert_eq!(shown, ["0.87 TB/s", "1.40 TB/s"]);
        let t = Column::fit([5.334628e6, 1.263368e6], NANOSECONDS, 3);
        assert_eq!(t.show(5.334628e6), "5.335 ms");
        assert_eq!(Column::fit([0.5], PICOJOULES, 3).show(0.5), "0.500 pJ");
        assert_eq!(Column::fit([], SECONDS, 1).unit, "ns");
        assert_eq!(
            Column::fit([0.004, 2e-6], SECONDS, 3).show(2e-6),
            "0.002 ms"
        );
    }

    #[test]
    fn capacities_parse_with_binary_and_decimal_prefixes() {
        assert_eq!(parse_capacity("16MiB"), Ok(Capacity::bytes(16 << 20)));
        assert_eq!(parse_capacity("512KiB"), Ok(Capacity::bytes(512 << 10)));
        assert_eq!(parse_capacity("1GB"), Ok(Capacity::bytes(1_000_000_000)));
        assert_eq!(parse_capacity("1.5 KiB"), Ok(Capacity::bytes(1536)));
        assert_eq!(parse_capacity("4096"), Ok(Capacity::bytes(4096)));
        assert_eq!(parse_capacity("0"), Ok(Capacity::bytes(0)));
        assert_eq!(parse_capacity("inf"), Ok(Capacity::INFINITE));
        assert!(parse_capacity("16Mb/s").is_err());
        // A lowercase b is bits, never read as bytes.
        for bits in ["900Gb/s", "900gb/s", "900Gbps", "1.5Tb/s", "100b/s", "8Kib"] {
            let e = parse_bandwidth(bits).unwrap_err();
            assert!(e.contains("lowercase b means bits"), "{bits}: {e}");
        }
        assert!(parse_capacity("16Mb").is_err());
        assert_eq!(parse_bandwidth("900gB/s"), Ok(900e9));
        assert_eq!(parse_bandwidth("900GBps"), Ok(900e9));
        assert!(parse_capacity("sixteen").is_err());
        assert!(parse_capacity("1.3B").is_err());
        assert!(parse_capacity("-1MiB").is_err());
    }

    #[test]
    fn bandwidths_parse_and_reject_zero() {
        assert_eq!(parse_bandwidth("900GB/s"), Ok(900e9));
        assert_eq!(parse_bandwidth("1.5TB/s"), Ok(1.5e12));
        assert_eq!(
            parse_bandwidth("100 GiB/s"),
            Ok(100.0 * (1u64 << 30) as f64)
        );
        assert_eq!(parse_bandwidth("25GB"), Ok(25e9));
        assert!(parse_bandwidth("0GB/s").unwrap_err().contains("positive"));
        assert!(parse_bandwidth("fast").is_err());
    }

    #[test]
    fn formatting_is_readable() {
        assert_eq!(format_bytes(16.0 * 1024.0 * 1024.0), "16 MiB");
        assert_eq!(format_bytes(1536.0), "1.5 KiB");
        assert_eq!(format_bandwidth(900e9), "900 GB/s");
        assert_eq!(format_bandwidth(1.5e12), "1.5 TB/s");
        assert_eq!(Capacity::INFINITE.to_string(), "inf");
    }
}
