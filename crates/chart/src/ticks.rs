//! Where an axis's ticks go and how they read: at round values only, never at the data's
//! own values. A linear axis steps by 1, 2 or 5 times a power of ten; a logarithmic axis
//! labels its decades (or 1, 2 and 5 in each decade when it spans two decades or less)
//! with unlabelled minor ticks between, and never two ticks with the same label. Each axis
//! takes no more labels than its length holds ([`fit`]).

/// The ticks of one axis: labelled values, unlabelled minor values (light grid lines).
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    pub major: Vec<f64>,
    pub minor: Vec<f64>,
}

/// `m` x 10^`e`, computed so that it prints as typed (0.3, not 0.30000000000000004).
fn scaled(m: i64, e: i32) -> f64 {
    if e >= 0 {
        m as f64 * 10f64.powi(e)
    } else {
        m as f64 / 10f64.powi(-e)
    }
}

/// The label of a tick value: plain from 0.001 to 99999 ("0.25", "16", "20000"), else
/// as 2e5 or 1.5e-4.
pub fn label(v: f64) -> String {
    if v == 0.0 {
        "0".to_string()
    } else if v.abs() >= 1e5 || v.abs() < 1e-3 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// At most `max` (at least 2) ticks over [lo, hi] at multiples of 1, 2 or 5 x 10^e.
pub fn linear(lo: f64, hi: f64, max: usize) -> Ticks {
    let max = max.max(2);
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        return Ticks {
            major: vec![lo],
            minor: Vec::new(),
        };
    }
    let raw = (hi - lo) / max as f64;
    let mut e = raw.log10().floor() as i32;
    loop {
        for m in [1i64, 2, 5] {
            let step = scaled(m, e);
            let k0 = (lo / step - 1e-9).ceil() as i64;
            let k1 = (hi / step + 1e-9).floor() as i64;
            if k1 - k0 < max as i64 {
                let major = (k0..=k1).map(|k| scaled(k * m, e)).collect();
                return Ticks {
                    major,
                    minor: Vec::new(),
                };
            }
        }
        e += 1;
    }
}

/// At most `max` (at least 2) labelled ticks over [lo, hi], 0 < lo < hi, on a log axis.
pub fn log(lo: f64, hi: f64, max: usize) -> Ticks {
    let max = max.max(2);
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return linear(lo, hi, max);
    }
    let inside = |v: &f64| *v >= lo * (1.0 - 1e-12) && *v <= hi * (1.0 + 1e-12);
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let in_decades = |ms: &[i64]| -> Vec<f64> {
        (d0..=d1)
            .flat_map(|e| ms.iter().map(move |&m| scaled(m, e)))
            .filter(inside)
            .collect()
    };
    let decades: Vec<f64> = in_decades(&[1]);
    let one_two_five = in_decades(&[1, 2, 5]);
    if one_two_five.len() < 2 {
        // Too short a range for two of 1, 2 and 5: round linear values.
        return linear(lo, hi, max);
    }
    if hi / lo <= 100.0 * (1.0 + 1e-12) && one_two_five.len() <= max {
        return Ticks {
            major: one_two_five,
            minor: in_decades(&[3, 4, 6, 7, 8, 9]),
        };
    }
    // Decades; every n-th one when they are too many to label, and then no minor ticks
    // (eight lines per decade would pile up).
    let every = decades.len().div_ceil(max);
    let major: Vec<f64> = decades
        .iter()
        .copied()
        .filter(|v| (v.log10().round() as i64).rem_euclid(every as i64) == 0)
        .collect();
    let minor = if every == 1 && decades.len() <= 8 {
        in_decades(&[2, 3, 4, 5, 6, 7, 8, 9])
    } else if every > 1 {
        decades
            .iter()
            .copied()
            .filter(|v| !major.contains(v))
            .collect()
    } else {
        Vec::new()
    };
    Ticks { major, minor }
}

/// Estimated width in pixels of `text` at font size `size`: 0.6 em a character, a
/// generous average for sans-serif digits, letters and punctuation.
pub fn text_width(text: &str, size: u32) -> f64 {
    text.chars().count() as f64 * 0.6 * size as f64
}

/// The ticks of an axis `length` pixels long whose labels sit side by side (`across`:
/// an x axis) or one above the other (a y axis), font `size`: the most (up to 10) that
/// leave a gap of at least half a label between neighbours.
pub fn fit(lo: f64, hi: f64, log_scale: bool, length: f64, across: bool, size: u32) -> Ticks {
    let make = |max| {
        if log_scale {
            log(lo, hi, max)
        } else {
            linear(lo, hi, max)
        }
    };
    for max in (2..=10).rev() {
        let t = make(max);
        let extent = |v: &f64| {
            if across {
                text_width(&label(*v), size)
            } else {
                size as f64
            }
        };
        let widest = t.major.iter().map(extent).fold(0.0, f64::max);
        if t.major.len() as f64 * widest * 1.5 <= length {
            return t;
        }
    }
    make(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_and_cover_the_range() {
        assert_eq!(linear(0.0, 10.0, 6).major, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear(0.0, 1.0, 6).major, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(linear(0.0, 1.0, 5).major, [0.0, 0.5, 1.0]);
        assert_eq!(
            linear(1.2, 1.45, 6).major,
            [1.2, 1.25, 1.3, 1.35, 1.4, 1.45]
        );
        assert_eq!(linear(-3.0, 7.0, 3).major, [0.0, 5.0]);
        // A value of the data never becomes a label unless it is round.
        let t = linear(1.31444818765766, 2.9, 8);
        assert!(t.major.iter().all(|v| label(*v).len() <= 4), "{t:?}");
    }

    #[test]
    fn labels_print_as_typed() {
        let l: Vec<String> = linear(0.0, 0.7, 8).major.into_iter().map(label).collect();
        assert_eq!(l, ["0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]);
        assert_eq!(label(2e5), "2e5");
        assert_eq!(label(1.5e-4), "1.5e-4");
        assert_eq!(label(20000.0), "20000");
        assert_eq!(label(-0.0), "0");
    }

    #[test]
    fn log_axes_label_decades_once_with_minor_ticks_between() {
        // Two decades or less: 1, 2 and 5 of each decade, the rest minor.
        let t = log(2.0, 32.0, 10);
        assert_eq!(t.major, [2.0, 5.0, 10.0, 20.0]);
        assert_eq!(t.minor, [3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 30.0]);
        // Many decades: only the decades, minors between when they are few.
        let t = log(1e3, 1e7, 10);
        assert_eq!(t.major, [1e3, 1e4, 1e5, 1e6, 1e7]);
        assert_eq!(t.minor.len(), 4 * 8);
        // Too many decades for the labels: every other one, no pile of minor lines.
        let t = log(1e-6, 1e12, 6);
        assert!(t.major.len() <= 6 && t.minor.len() < 19, "{t:?}");
        // No label twice, on any range.
        for (lo, hi) in [
            (9.5, 10.5),
            (8.0, 12.0),
            (0.9, 1.2e6),
            (1e-3, 2e-3),
            (3.0, 300.0),
        ] {
            let labels: Vec<String> = log(lo, hi, 8).major.into_iter().map(label).collect();
            let mut d = labels.clone();
            d.dedup();
            assert_eq!(d, labels, "{lo}..{hi}");
            assert!(labels.len() >= 2, "{lo}..{hi}: {labels:?}");
        }
    }

    #[test]
    fn fitted_x_labels_leave_room_between_them() {
        for (lo, hi) in [(0.0, 1e9), (1.0, 2.0), (-1e-5, 3e-5), (123456.0, 123999.0)] {
            let t = fit(lo, hi, false, 400.0, true, 13);
            let widest = t
                .major
                .iter()
                .map(|v| text_width(&label(*v), 13))
                .fold(0.0, f64::max);
            let gap = 400.0 / (hi - lo) * (t.major[1] - t.major[0]);
            assert!(gap >= widest, "{lo}..{hi}: {t:?}");
        }
    }
}
