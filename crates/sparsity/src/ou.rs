//! Dynamic OU formation: an OU is built from the next `ou.rows` rows that need driving.

/// Walks `rows` in order, keeps those `active` says must be driven, and cuts them into
/// OUs of at most `ou_rows` rows. Returns the rows of each OU, one by one.
pub fn form_ous(
    rows: impl IntoIterator<Item = u32>,
    active: impl Fn(u32) -> bool,
    ou_rows: u32,
) -> Vec<Vec<u32>> {
    let mut ous = Vec::new();
    let mut current = Vec::with_capacity(ou_rows as usize);
    for k in rows {
        if active(k) {
            current.push(k);
            if current.len() == ou_rows as usize {
                ous.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        ous.push(current);
    }
    ous
}

/// Rows of each OU when `n` rows are cut into OUs of `ou_rows`: full OUs, then the rest.
pub fn ou_sizes(n: u32, ou_rows: u32) -> impl Iterator<Item = u32> {
    let full = n / ou_rows;
    let rest = n % ou_rows;
    std::iter::repeat_n(ou_rows, full as usize).chain((rest > 0).then_some(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_ous_from_active_rows_only() {
        // rows 0..10, active = even rows -> 0,2,4,6,8 -> OUs of 2: [0,2],[4,6],[8]
        let ous = form_ous(0..10, |k| k % 2 == 0, 2);
        assert_eq!(ous, vec![vec![0, 2], vec![4, 6], vec![8]]);
        assert!(form_ous(0..10, |_| false, 2).is_empty());
        assert_eq!(ou_sizes(20, 9).collect::<Vec<_>>(), [9, 9, 2]);
        assert_eq!(ou_sizes(0, 9).count(), 0);
    }
}
