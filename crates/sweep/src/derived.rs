//! The cells a sweep's writer derives from other cells of the same point (docs/errors.md,
//! "Output directories", merged rows), checked again by `merge` and `sweep --resume`
//! after each cell's type and domain ([`super::recheck`]). Merge is not a re-simulation:
//! the figures a shard computed (cycles, events, energy components) are taken as
//! written; what follows from them, or from the point's one config, must follow:
//!
//! - `energy_pj` is the sum of the row's `e_*_pj` components (`energy::Breakdown::total`,
//!   summed in column order; within 4 ulps of the sum of the components' magnitudes);
//! - `speedup_vs_dense` is 1 on a dense row, else the dense row's `cycles` (of the same
//!   layer, or the dense TOTAL) over the row's, and `energy_saving_vs_dense` is 1 minus
//!   the row's `energy_pj` over the dense row's: both recomputed from those cells and
//!   compared bit for bit (the writer prints the shortest text that reads back as its
//!   number, so the cells read back as exactly what it computed);
//! - `busy_cycles` is at most `cycles` (a layer's cycles are its busy cycles plus the
//!   pipeline's fill, a TOTAL's the sums of its layers');
//! - `time_ns` is `cycles` x `timing.cycle_ns`, one clock for every row of the point:
//!   sweep.json does not hold the config, so the clock is the median of the rows' ratios
//!   and each row's `time_ns` must be its `cycles` times it within 4 ulps (0 for 0
//!   cycles);
//! - `passes` is 1 or 2, 2 only on a signed layer (sign-magnitude inputs), and one
//!   encoding for the point: every signed row has the same `passes`;
//! - `input_cycles` is ceil(applied bits / `dac.bits`) (docs/model.md), the applied bits
//!   `input_bits` (one pass) or `input_bits - 1` (two): every row of the point with the
//!   same `passes` has the same `input_cycles`, at least 1, and a two-pass row's is the
//!   one-pass rows' or one less. The one that differs from the most rows is named;
//! - the figures over device draws: each `<f>_mean` inside its row's `[<f>_ci_low,
//!   <f>_ci_high]`, and `top1_std`, `agreement_std` at most sqrt(K / (K - 1)) / 2, the
//!   largest sample standard deviation of K = `accuracy_draws` fractions.

use anyhow::Result;
use csv::ByteRecord;
use std::collections::HashMap;
use std::path::Path;

/// Relative tolerance of the float identities that are not recomputed bit for bit.
const ULPS: f64 = 4.0 * f64::EPSILON;

/// Checks the derived cells of `rows` (point `id` in `path`; `names` the table's
/// columns, `modes` the grid's, one row per mode and layer, TOTAL rows last).
pub fn check(
    names: &[String],
    modes: &[String],
    path: &Path,
    id: &str,
    rows: &[ByteRecord],
) -> Result<()> {
    let p = path.display();
    let col = |name: &str| names.iter().position(|n| n == name);
    let text = |row: &ByteRecord, i: usize| -> String {
        row.get(i)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .unwrap_or_default()
    };
    let num = |row: &ByteRecord, i: Option<usize>| -> Option<f64> {
        std::str::from_utf8(row.get(i?)?).ok()?.parse().ok()
    };
    let count = |row: &ByteRecord, i: Option<usize>| -> Option<u64> {
        std::str::from_utf8(row.get(i?)?).ok()?.parse().ok()
    };
    let refuse = |r: usize, i: usize, why: String| -> anyhow::Error {
        anyhow::anyhow!(
            "{p}: point {id}, its row {}: {}: '{}' {why}",
            r + 1,
            names[i],
            bounds::text::printable(&text(&rows[r], i))
        )
    };
    let m = modes.len().max(1);
    let dense = modes.iter().position(|x| x == "dense");
    let (cycles, energy, busy) = (col("cycles"), col("energy_pj"), col("busy_cycles"));
    let parts: Vec<Option<usize>> = energy::Breakdown::COLUMNS.iter().map(|c| col(c)).collect();
    for (r, row) in rows.iter().enumerate() {
        let dense_row = dense.and_then(|d| rows.get(r - r % m + d));
        let is_dense = dense == Some(r % m);
        // energy_pj: the sum of its components, in column order.
        if let (Some(i), Some(e)) = (energy, num(row, energy)) {
            if parts.iter().all(Option::is_some) {
                let values: Vec<f64> = parts.iter().filter_map(|&c| num(row, c)).collect();
                if values.len() == parts.len() {
                    let sum: f64 = values.iter().sum();
                    let scale: f64 = values.iter().map(|v| v.abs()).sum();
                    if (sum - e).abs() > ULPS * scale {
                        return Err(refuse(
                            r,
                            i,
                            format!("is not the sum of the row's e_*_pj components ({sum})"),
                        ));
                    }
                }
            }
        }
        if let Some(i) = col("speedup_vs_dense") {
            if let (Some(s), Some(c)) = (num(row, Some(i)), count(row, cycles)) {
                let want = match is_dense {
                    true => Some(1.0),
                    false => dense_row
                        .and_then(|d| count(d, cycles))
                        .filter(|_| c > 0)
                        .map(|d| d as f64 / c as f64),
                };
                if let Some(w) = want.filter(|w| w.to_bits() != s.to_bits()) {
                    let why = match is_dense {
                        true => "is not 1 (a dense row's own cycles over its cycles)".into(),
                        false => format!("is not the dense row's cycles over this row's ({w})"),
                    };
                    return Err(refuse(r, i, why));
                }
            }
        }
        if let Some(i) = col("energy_saving_vs_dense") {
            let de = dense_row.and_then(|d| num(d, energy));
            if let (Some(s), Some(e), Some(de)) = (num(row, Some(i)), num(row, energy), de) {
                let w = 1.0 - e / de;
                if de > 0.0 && w.to_bits() != s.to_bits() {
                    return Err(refuse(
                        r,
                        i,
                        format!("is not 1 - energy_pj / the dense row's energy_pj ({w})"),
                    ));
                }
            }
        }
        if let (Some(i), Some(b), Some(c)) = (busy, count(row, busy), count(row, cycles)) {
            if b > c {
                return Err(refuse(
                    r,
                    i,
                    format!("is above the row's cycles ({c}): busy cycles are part of a layer's"),
                ));
            }
        }
    }
    draw_figures(rows, &col, &num, &count, &refuse)?;
    clock(rows, col("time_ns"), cycles, &num, &count, &refuse)?;
    inputs(
        rows,
        m,
        [col("passes"), col("input_cycles"), col("signed")],
        &count,
        &refuse,
    )
}

type Num<'a, T> = &'a dyn Fn(&ByteRecord, Option<usize>) -> Option<T>;
type Refuse<'a> = &'a dyn Fn(usize, usize, String) -> anyhow::Error;

/// The figures over device draws of an accuracy point: each `<f>_mean` inside its own
/// `[<f>_ci_low, <f>_ci_high]` (an interval is the mean plus and minus a half width,
/// clipped to the figure's domain, which holds the mean), and the `_std` of a fraction
/// (top1, agreement: each draw's value in [0, 1]) at most the largest sample standard
/// deviation K values in [0, 1] can have, sqrt(K / (K - 1)) / 2 (half of them 0, half 1;
/// K the row's `accuracy_draws`), within 4 ulps.
fn draw_figures(
    rows: &[ByteRecord],
    col: &dyn Fn(&str) -> Option<usize>,
    num: Num<f64>,
    count: Num<u64>,
    refuse: Refuse,
) -> Result<()> {
    let draws = col(super::extra::ACCURACY_DRAWS);
    for (r, row) in rows.iter().enumerate() {
        for stem in ["top1", "agreement", "output_rel_rmse", "top1_drop"] {
            let [m, lo, hi] = ["mean", "ci_low", "ci_high"].map(|s| col(&format!("{stem}_{s}")));
            if let (Some(i), Some(v), Some(a), Some(b)) =
                (m, num(row, m), num(row, lo), num(row, hi))
            {
                if !(a <= v && v <= b) {
                    return Err(refuse(
                        r,
                        i,
                        format!("is outside the row's own interval [{stem}_ci_low, {stem}_ci_high] = [{a}, {b}]: an interval holds its mean"),
                    ));
                }
            }
        }
        let Some(k) = count(row, draws).filter(|&k| k >= 2) else {
            continue;
        };
        let most = (k as f64 / (k - 1) as f64).sqrt() / 2.0;
        for stem in ["top1", "agreement"] {
            let s = col(&format!("{stem}_std"));
            if let (Some(i), Some(v)) = (s, num(row, s)) {
                if v > most * (1.0 + ULPS) {
                    return Err(refuse(
                        r,
                        i,
                        format!("is above {most}, the largest standard deviation of {k} draws of a fraction in [0, 1]"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `time_ns` = `cycles` x one clock for the whole point.
fn clock(
    rows: &[ByteRecord],
    time: Option<usize>,
    cycles: Option<usize>,
    num: Num<f64>,
    count: Num<u64>,
    refuse: Refuse,
) -> Result<()> {
    let Some(t) = time else { return Ok(()) };
    let mut ratios: Vec<f64> = rows
        .iter()
        .filter_map(|row| Some((num(row, time)?, count(row, cycles)?)))
        .filter(|&(_, c)| c > 0)
        .map(|(t, c)| t / c as f64)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let clock = ratios.get(ratios.len() / 2).copied();
    for (r, row) in rows.iter().enumerate() {
        let (Some(ns), Some(c)) = (num(row, time), count(row, cycles)) else {
            continue;
        };
        let ok = match (c, clock) {
            (0, _) => ns == 0.0,
            (_, Some(k)) => (ns - c as f64 * k).abs() <= ULPS * ns.abs().max(c as f64 * k),
            (_, None) => true,
        };
        if !ok {
            let why = match clock {
                Some(k) if c > 0 => format!(
                    "is not the row's cycles ({c}) x the point's cycle time ({k} ns, as its other rows have it)"
                ),
                _ => "is not 0, the time of 0 cycles".to_string(),
            };
            return Err(refuse(r, t, why));
        }
    }
    Ok(())
}

/// `passes` and `input_cycles` of the layer rows: [`check`]'s last two items.
fn inputs(
    rows: &[ByteRecord],
    m: usize,
    [passes, cycles, signed]: [Option<usize>; 3],
    count: Num<u64>,
    refuse: Refuse,
) -> Result<()> {
    let (Some(pi), Some(ci)) = (passes, cycles) else {
        return Ok(());
    };
    let layer_rows = rows.len().saturating_sub(m);
    // The value of the most rows of each class, so the row that differs is named.
    let most = |of: &dyn Fn(&ByteRecord) -> Option<u64>| -> Option<u64> {
        let mut n: HashMap<u64, usize> = HashMap::new();
        for row in &rows[..layer_rows] {
            if let Some(v) = of(row) {
                *n.entry(v).or_default() += 1;
            }
        }
        n.into_iter()
            .max_by_key(|&(v, k)| (k, std::cmp::Reverse(v)))
            .map(|(v, _)| v)
    };
    let signed_passes = most(&|row| (count(row, signed)? == 1).then(|| count(row, passes))?);
    for (r, row) in rows[..layer_rows].iter().enumerate() {
        let Some(n) = count(row, passes) else {
            continue;
        };
        let s = count(row, signed);
        if !(1..=2).contains(&n) {
            return Err(refuse(
                r,
                pi,
                "is not a number of passes (a layer runs 1 or 2)".into(),
            ));
        }
        if n == 2 && s == Some(0) {
            return Err(refuse(
                r,
                pi,
                "on an unsigned layer (signed 0), which runs 1 pass".into(),
            ));
        }
        if s == Some(1) && signed_passes.is_some_and(|w| w != n) {
            return Err(refuse(
                r,
                pi,
                format!(
                    "differs from the point's other signed layers ({}): a point has one signed encoding",
                    signed_passes.unwrap_or_default()
                ),
            ));
        }
    }
    let of =
        |k: u64| move |row: &ByteRecord| (count(row, passes)? == k).then(|| count(row, cycles))?;
    let (one, two) = (most(&of(1)), most(&of(2)));
    for (r, row) in rows[..layer_rows].iter().enumerate() {
        let (Some(n), Some(c)) = (count(row, passes), count(row, cycles)) else {
            continue;
        };
        let want = if n == 1 { one } else { two };
        if c == 0 {
            return Err(refuse(
                r,
                ci,
                "is not at least 1 (ceil(applied bits / dac.bits))".into(),
            ));
        }
        if want.is_some_and(|w| w != c) {
            return Err(refuse(
                r,
                ci,
                format!(
                    "differs from the point's other {n}-pass layers ({}): input bits and dac.bits are the point's",
                    want.unwrap_or_default()
                ),
            ));
        }
        if let (2, Some(u)) = (n, one) {
            if c != u && c + 1 != u {
                return Err(refuse(
                    r,
                    ci,
                    format!(
                        "is neither the point's one-pass input_cycles ({u}) nor one less: a two-pass layer applies one bit fewer"
                    ),
                ));
            }
        }
    }
    Ok(())
}
