//! Where an axis's ticks go and how they read. With few distinct values on a numeric x
//! axis (at most [`MAX_DATA_TICKS`], each of at most [`MAX_DATA_DIGITS`] significant
//! digits: settings, not measurements), the ticks sit at the data's own values (2, 4, 8,
//! 16, 32 rather than 2, 5, 10, 20), on a linear or a logarithmic axis alike; values whose
//! labels would touch a neighbour's become unlabelled grid lines. Otherwise ticks sit at
//! round values: a linear axis steps by 1, 2 or 5 times a power of ten; a logarithmic
//! axis labels its decades (or 1, 2 and 5 in each decade when it spans three decades or
//! less and they fit) with unlabelled minor ticks between, and never two ticks with the
//! same label.
//!
//! An axis takes the most labels that leave at least [`GAP_EM`] of empty space between
//! any two neighbours, judged at their positions in pixels (a logarithmic axis spaces
//! 1, 2 and 5 unevenly) with [`text_width`]'s estimate of each label ([`choose`]).

/// The ticks of one axis: labelled values, unlabelled minor values (light grid lines).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ticks {
    pub major: Vec<f64>,
    pub minor: Vec<f64>,
}

/// The most distinct data values an x axis labels at the values themselves.
pub const MAX_DATA_TICKS: usize = 12;

/// The most significant digits of a data value labelled as a tick: more, and the values
/// are measurements rather than settings, and the axis takes round ticks.
pub const MAX_DATA_DIGITS: usize = 4;

/// The significant digits of `v` written shortest (128: 3, 0.25: 2, 6.567371: 7).
pub fn significant_digits(v: f64) -> usize {
    let text = format!("{:e}", v.abs());
    let mantissa = text.split('e').next().unwrap_or("");
    mantissa.chars().filter(char::is_ascii_digit).count()
}

/// Empty space left between two neighbouring labels, in ems of their font.
pub const GAP_EM: f64 = 0.8;

/// Average width of a character, in ems: wider than a digit of the common sans-serif
/// fonts (DejaVu Sans 0.636, Liberation Sans 0.556) and than most letters, so that an
/// estimate errs on the wide side.
pub const CHAR_EM: f64 = 0.65;

/// `m` x 10^`e` as the double nearest to it: parsed from its decimal text, so that it
/// prints as typed (0.3, not 0.30000000000000004) and holds at the ends of the range
/// (1e308, 1e-320) where a power of ten computed in floating point overflows to inf or
/// underflows to 0.
fn scaled(m: i64, e: i32) -> f64 {
    format!("{m}e{e}").parse().unwrap_or(0.0)
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
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo || !(hi - lo).is_finite() {
        return Ticks {
            major: vec![lo],
            minor: Vec::new(),
        };
    }
    let raw = (hi - lo) / max as f64;
    let mut e = raw.log10().floor() as i32;
    // At most a few rounds: each raises the step tenfold.
    for _ in 0..700 {
        for m in [1i64, 2, 5] {
            let step = scaled(m, e);
            if step <= 0.0 || !step.is_finite() {
                continue;
            }
            let k0 = (lo / step - 1e-9).ceil();
            let k1 = (hi / step + 1e-9).floor();
            // Multiples beyond 2^53 are no longer exact integers: no round ticks there.
            if k0.abs() > 9e15 || k1.abs() > 9e15 {
                continue;
            }
            let (k0, k1) = (k0 as i64, k1 as i64);
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
    Ticks {
        major: vec![lo, hi],
        minor: Vec::new(),
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
            .filter(|v| *v > 0.0 && v.is_finite())
            .filter(inside)
            .collect()
    };
    let decades: Vec<f64> = in_decades(&[1]);
    let one_two_five = in_decades(&[1, 2, 5]);
    if one_two_five.len() < 2 {
        // Too short a range for two of 1, 2 and 5: round linear values.
        return linear(lo, hi, max);
    }
    if hi / lo <= 1000.0 * (1.0 + 1e-12) && one_two_five.len() <= max {
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
    if major.len() < 2 {
        return linear(lo, hi, max);
    }
    let minor = if every == 1 && decades.len() <= 8 {
        in_decades(&[2, 3, 4, 5, 6, 7, 8, 9])
    } else if every > 1 && every <= 4 {
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

/// The size in pixels at which text of font size `size` is drawn: plotters writes an
/// SVG `font-size` of `size / 1.24`.
pub fn rendered(size: u32) -> f64 {
    size as f64 / 1.24
}

/// Estimated width in pixels of `text` drawn at font size `size` ([`CHAR_EM`] a
/// character).
pub fn text_width(text: &str, size: u32) -> f64 {
    text.chars().count() as f64 * CHAR_EM * rendered(size)
}

/// Whether labels `labels` at pixel positions `at` (along the axis, any order) leave
/// [`GAP_EM`] between neighbours: side by side (`across`, an x axis: each as wide as its
/// text) or one above the other (a y axis: each a line high).
pub fn apart(labels: &[(f64, String)], across: bool, size: u32) -> bool {
    let em = rendered(size);
    let extent = |t: &str| if across { text_width(t, size) } else { em };
    let mut v: Vec<&(f64, String)> = labels.iter().collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v.windows(2).all(|w| {
        let need = (extent(&w[0].1) + extent(&w[1].1)) / 2.0 + GAP_EM * em;
        w[1].0 - w[0].0 >= need
    })
}

/// The ticks of an axis over [lo, hi] (logarithmic or not) whose labels are drawn at
/// pixel `pos(v)`, side by side (`across`) or one above the other, at font `size`:
/// - with at most [`MAX_DATA_TICKS`] distinct `data` values, at those values, as many
///   as fit (the first and the last always; the others in order, each labelled when it
///   clears the one labelled before and the last; unlabelled ones become minor lines);
/// - otherwise (or when fewer than two data values fit) at round values, the most (up
///   to 10 labels) that [`apart`] accepts.
pub fn choose(
    (lo, hi): (f64, f64),
    log_scale: bool,
    data: &[f64],
    pos: &dyn Fn(f64) -> f64,
    across: bool,
    size: u32,
) -> Ticks {
    let placed =
        |vals: &[f64]| -> Vec<(f64, String)> { vals.iter().map(|&v| (pos(v), label(v))).collect() };
    let mut values: Vec<f64> = data
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v >= lo && *v <= hi)
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    // Settings (2, 9, 32, 0.25, 4096) label well; measurements (6.5673710982912) do not.
    let short = values
        .iter()
        .all(|&v| significant_digits(v) <= MAX_DATA_DIGITS);
    if short && values.len() >= 2 && values.len() <= MAX_DATA_TICKS {
        let last = values[values.len() - 1];
        let mut major = vec![values[0]];
        for &v in &values[1..values.len() - 1] {
            let with: Vec<f64> = major.iter().copied().chain([v, last]).collect();
            if apart(&placed(&with), across, size) {
                major.push(v);
            }
        }
        major.push(last);
        if apart(&placed(&major), across, size) {
            let minor = values
                .iter()
                .copied()
                .filter(|v| !major.contains(v))
                .collect();
            return Ticks { major, minor };
        }
    }
    let make = |max| {
        if log_scale {
            log(lo, hi, max)
        } else {
            linear(lo, hi, max)
        }
    };
    for max in (2..=10).rev() {
        let t = make(max);
        if apart(&placed(&t.major), across, size) {
            return t;
        }
    }
    // Not even two round labels fit: the lower end alone.
    let t = make(2);
    Ticks {
        major: t.major.into_iter().take(1).collect(),
        minor: Vec::new(),
    }
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
    fn the_ends_of_the_double_range_give_finite_ticks() {
        // Decades at the ends of the range: 1e-320 is a subnormal, 1e308 near the top.
        let t = log(5e-324, 1.7e308, 10);
        assert!(t.major.len() >= 2, "{t:?}");
        assert!(t.major.iter().all(|v| v.is_finite() && *v > 0.0), "{t:?}");
        assert!(
            t.major[0] < 1e-300 && t.major[t.major.len() - 1] > 1e250,
            "{t:?}"
        );
        assert!(
            t.minor.len() < 50,
            "no pile of grid lines: {}",
            t.minor.len()
        );
        let t = linear(-1.7e308, 1.7e308, 6);
        assert!(t.major.iter().all(|v| v.is_finite()), "{t:?}");
        let t = linear(0.0, 5e-324, 4);
        assert!(t.major.iter().all(|v| v.is_finite()), "{t:?}");
    }

    /// Pixels of a 600-pixel axis over [lo, hi], linear or logarithmic.
    fn pixels(lo: f64, hi: f64, log: bool) -> impl Fn(f64) -> f64 {
        move |v| match log {
            true => 600.0 * (v / lo).ln() / (hi / lo).ln(),
            false => 600.0 * (v - lo) / (hi - lo),
        }
    }

    #[test]
    fn few_distinct_values_are_the_ticks_on_either_scale() {
        let data = [2.0, 4.0, 8.0, 16.0, 32.0, 4.0, 8.0];
        for log in [false, true] {
            let pos = pixels(1.8, 36.0, log);
            let t = choose((1.8, 36.0), log, &data, &pos, true, 13);
            assert_eq!(t.major, [2.0, 4.0, 8.0, 16.0, 32.0], "log {log}");
            assert!(t.minor.is_empty());
        }
        // Values too close to label both: the later one is an unlabelled line, the last
        // value is labelled.
        let close = [1000.0, 1001.0, 1500.0, 2000.0];
        let t = choose(
            (990.0, 2010.0),
            false,
            &close,
            &pixels(990.0, 2010.0, false),
            true,
            13,
        );
        assert_eq!(t.major, [1000.0, 1500.0, 2000.0]);
        assert_eq!(t.minor, [1001.0]);
        // Measurements, however few: round ticks.
        let measured = [6.5673710982912, 13.013104949734402, 73.30111238348802];
        let t = choose(
            (5.0, 80.0),
            true,
            &measured,
            &pixels(5.0, 80.0, true),
            true,
            13,
        );
        assert!(t.major.iter().all(|v| significant_digits(*v) == 1), "{t:?}");
        assert_eq!(
            (significant_digits(128.0), significant_digits(0.25)),
            (3, 2)
        );
        // Many distinct values: round ticks.
        let many: Vec<f64> = (1..=40).map(f64::from).collect();
        let t = choose(
            (0.0, 41.0),
            false,
            &many,
            &pixels(0.0, 41.0, false),
            true,
            13,
        );
        assert!(t.major.iter().all(|v| v % 5.0 == 0.0), "{t:?}");
    }

    #[test]
    fn chosen_labels_leave_room_between_them() {
        for (lo, hi, log) in [
            (0.0, 1e9, false),
            (1.0, 2.0, false),
            (-1e-5, 3e-5, false),
            (123456.0, 123999.0, false),
            (1.6e5, 2.2e7, true),
            (1e-4, 0.7, true),
            (2.0, 5.0, true),
        ] {
            let pos = pixels(lo, hi, log);
            for across in [true, false] {
                let length = if across { 600.0 } else { 300.0 };
                let p = |v: f64| pos(v) * length / 600.0;
                let t = choose((lo, hi), log, &[], &p, across, 13);
                let placed: Vec<(f64, String)> =
                    t.major.iter().map(|&v| (p(v), label(v))).collect();
                assert!(apart(&placed, across, 13), "{lo}..{hi}: {t:?}");
                assert!(!t.major.is_empty());
            }
        }
    }
}
