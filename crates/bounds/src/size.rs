//! Sizes declared by files, checked before they are allocated: products with
//! `checked_mul`, compared with a limit. A size that overflows 64 bits and a size above
//! the limit are both refused with one description, `1099511627776 elements, more than
//! the limit of 268435456`, which the caller prefixes with the file and the field.

/// The product of `dims`, or None when it overflows u64.
pub fn product(dims: &[usize]) -> Option<u64> {
    dims.iter()
        .try_fold(1u64, |a, &d| a.checked_mul(u64::try_from(d).ok()?))
}

/// Elements of `shape`, refused when the product overflows or exceeds `limit`.
pub fn elements(shape: &[usize], limit: u64) -> Result<usize, String> {
    let n = product(shape).ok_or("more than 2^64 elements")?;
    at_most(n, limit, "elements")
}

/// `n` (a count of `what`: elements, rows, points, cells) refused above `limit`; as a
/// usize, ready for `Vec::with_capacity`.
pub fn at_most(n: u64, limit: u64, what: &str) -> Result<usize, String> {
    if n > limit {
        return Err(format!("{n} {what}, more than the limit of {limit}"));
    }
    usize::try_from(n).map_err(|_| format!("{n} {what} do not fit this machine's addresses"))
}

/// `a * b` for sizes, or a description of the overflow naming `what`.
pub fn mul(a: usize, b: usize, what: &str) -> Result<usize, String> {
    a.checked_mul(b)
        .ok_or_else(|| format!("{what}: {a} x {b} overflows 64 bits"))
}

/// `a + b` for sizes, or a description of the overflow naming `what`.
pub fn add(a: usize, b: usize, what: &str) -> Result<usize, String> {
    a.checked_add(b)
        .ok_or_else(|| format!("{what}: {a} + {b} overflows 64 bits"))
}

/// Bytes of `elements` elements of `width` bytes, refused above `limit` (the config key
/// that sets the limit is the caller's to name).
pub fn bytes(elements: usize, width: usize, limit: u64) -> Result<u64, String> {
    let b = (elements as u128) * (width as u128);
    if b > limit as u128 {
        return Err(format!(
            "{elements} elements of {width} bytes ({b} bytes), more than the limit of {limit} bytes"
        ));
    }
    Ok(b as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_are_checked_before_they_are_compared() {
        assert_eq!(product(&[2, 3, 4]), Some(24));
        assert_eq!(product(&[]), Some(1));
        assert_eq!(product(&[1 << 32, 1 << 32]), None);
        assert_eq!(elements(&[2, 3], 6), Ok(6));
        assert_eq!(
            elements(&[2, 3], 5),
            Err("6 elements, more than the limit of 5".into())
        );
        // 2^32 x 2^32 wraps to 0 in u64: refused, not taken for an empty array.
        assert_eq!(
            elements(&[1 << 32, 1 << 32], u64::MAX),
            Err("more than 2^64 elements".into())
        );
        assert_eq!(elements(&[0, usize::MAX], 1), Ok(0));
        assert!(mul(usize::MAX, 2, "w").unwrap_err().starts_with("w: "));
        assert_eq!(add(2, 3, "w"), Ok(5));
        assert_eq!(bytes(4, 8, 32), Ok(32));
        assert!(bytes(usize::MAX, 8, u64::MAX).is_err());
    }
}
