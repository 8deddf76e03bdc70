//! Cells as measured (docs/functional.md, "Programming noise, drift and relaxation"):
//! programming noise that depends on the target conductance, and what time since
//! programming does to a cell (PCM's power-law drift with a per-cell exponent and its
//! accumulated 1/f noise, RRAM's relaxation). Every term is off by default; each draw is
//! keyed by the cell ([`crate::rng`]), so a cell keeps its programming error and its drift
//! exponent at every `device.time_s`: a sweep over time ages one array.
//!
//! Units: conductances in cell levels (a cell at level c conducts c + g_off), the top
//! level's `g_top = L + g_off` playing the source's g_max; x = G_target / g_top.

use crate::math::{phi, poly};
use crate::rng::{hash, normal};

/// Kind words of the draws of this module (after those of [`crate::device`]).
const PROG: u64 = 4;
const DRIFT: u64 = 5;
const FLICKER: u64 = 6;
const RELAX: u64 = 7;

/// The smallest x the drift table is looked up at (a cell at 0 conducts nothing, and
/// drifts nothing, whatever its exponent).
const X_MIN: f64 = 1e-7;

/// The cell model of [`crate::Device`] beyond the lognormal `sigma`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Aging {
    /// `device.prog_noise`: sigma_G / g_top = max(0, sum_i c_i x^i), additive Gaussian per
    /// cell, the conductance clamped at 0. Empty: none.
    pub prog_noise: Vec<f64>,
    /// `device.time_s`: seconds since programming.
    pub time_s: f64,
    /// `device.drift_nu`: rows (x, nu_mean, nu_sd), x ascending, interpolated linearly in
    /// ln x (held beyond the ends); a cell's exponent nu = |nu_mean + nu_sd z|, and
    /// G(t) = G_p ((t + t0) / t0)^-nu. Empty: no drift.
    pub drift_nu: Vec<[f64; 3]>,
    /// `device.drift_t0_s`: t0 of the drift law (the first read after programming).
    pub drift_t0_s: f64,
    /// `device.drift_noise`: [q, e, q_max, t_read]: accumulated 1/f noise
    /// G += |G| min(q / max(x_p^e, 1e-3), q_max) sqrt(ln((t + t0 + t_read) / (2 t_read))) z,
    /// x_p = G_p / g_top. Empty: none.
    pub drift_noise: Vec<f64>,
    /// `device.relax`: rows (t, c_0, c_1, ...) of the total deviation's sigma / g_top at
    /// time t (a polynomial in x), t ascending; between rows interpolated linearly in
    /// ln t, held after the last. The relaxation adds the part beyond the first row:
    /// sigma_r^2 = max(0, sigma(x, t)^2 - sigma(x, t_1)^2). Empty: none.
    pub relax: Vec<Vec<f64>>,
    /// `device.relax_hold`: a `time_s` past the last row of `relax` holds that row's
    /// spread; without it such a time is refused (the data end there).
    pub relax_hold: bool,
}

/// Refuses a table whose rows' first values (`what`) do not increase.
fn increasing(key: &str, what: &str, firsts: impl Iterator<Item = f64>) -> Result<(), String> {
    let mut prev = f64::NEG_INFINITY;
    for (i, x) in firsts.enumerate() {
        if x <= prev {
            return Err(format!(
                "{key}: row {}: {what} must increase from row to row",
                i + 1
            ));
        }
        prev = x;
    }
    Ok(())
}

impl Aging {
    /// Whether any term is set.
    pub fn active(&self) -> bool {
        !self.prog_noise.is_empty()
            || !self.drift_nu.is_empty()
            || !self.drift_noise.is_empty()
            || !self.relax.is_empty()
    }

    /// The first invalid setting as `key: message`.
    pub fn validate(&self) -> Result<(), String> {
        let finite = |key: &str, xs: &[f64]| match xs.iter().find(|x| !x.is_finite()) {
            Some(x) => Err(format!("{key}: {x} is not a finite number")),
            None => Ok(()),
        };
        finite("device.prog_noise", &self.prog_noise)?;
        if !(self.time_s.is_finite() && self.time_s >= 0.0) {
            return Err(format!(
                "device.time_s: {} is not a time >= 0 (seconds)",
                bounds::finite::short(self.time_s)
            ));
        }
        if !(self.drift_t0_s.is_finite() && self.drift_t0_s > 0.0) {
            return Err(format!(
                "device.drift_t0_s: {} is not a time > 0 (seconds)",
                bounds::finite::short(self.drift_t0_s)
            ));
        }
        for (i, r) in self.drift_nu.iter().enumerate() {
            finite("device.drift_nu", r)?;
            if r[0] <= 0.0 || r[2] < 0.0 {
                return Err(format!(
                    "device.drift_nu: row {}: x must be > 0 and nu_sd >= 0",
                    i + 1
                ));
            }
        }
        increasing("device.drift_nu", "x", self.drift_nu.iter().map(|r| r[0]))?;
        finite("device.drift_noise", &self.drift_noise)?;
        if !self.drift_noise.is_empty() {
            let d = &self.drift_noise;
            if d.len() != 4 || d.iter().any(|&v| v < 0.0) || d[3] == 0.0 {
                return Err("device.drift_noise: expected [q, exponent, q_max, t_read_s], each >= 0, t_read_s > 0".into());
            }
        }
        for (i, r) in self.relax.iter().enumerate() {
            finite("device.relax", r)?;
            if r.len() < 2 || r[0] <= 0.0 {
                return Err(format!(
                    "device.relax: row {}: expected [t_s > 0, c_0, c_1, ...]",
                    i + 1
                ));
            }
        }
        increasing("device.relax", "t", self.relax.iter().map(|r| r[0]))?;
        if let Some(last) = self.relax.last() {
            if self.time_s > last[0] && !self.relax_hold {
                return Err(format!(
                    "device.time_s: {} s is past the last row of device.relax ({} s), where its data end (set device.relax_hold = true to hold that row's spread beyond it)",
                    self.time_s, last[0]
                ));
            }
        }
        Ok(())
    }

    /// The mean of `((t + t0) / t0)^-nu` over a cell's exponent nu = |N(nu_mean(x),
    /// nu_sd(x))| at `time_s`: the factor by which the drift lowers the mean conductance
    /// of cells at x (1 without drift or at time 0). For Y ~ N(m, s) and l = ln((t + t0)
    /// / t0), E e^(-l|Y|) = e^(-l m + l^2 s^2 / 2) Phi(m / s - l s) + e^(l m + l^2 s^2 / 2)
    /// Phi(-m / s - l s).
    pub fn mean_drift(&self, x: f64) -> f64 {
        let t = self.time_s;
        if self.drift_nu.is_empty() || t <= 0.0 {
            return 1.0;
        }
        let (m, s) = self.nu_law(x);
        let l = ((t + self.drift_t0_s) / self.drift_t0_s).ln();
        if s == 0.0 {
            return (-l * m.abs()).exp();
        }
        let v = 0.5 * l * l * s * s;
        (v - l * m).exp() * phi(m / s - l * s) + (v + l * m).exp() * phi(-m / s - l * s)
    }

    /// (nu_mean, nu_sd) at x, linearly in ln x between the table's rows.
    pub fn nu_law(&self, x: f64) -> (f64, f64) {
        let t = &self.drift_nu;
        let lx = x.max(X_MIN).ln();
        let Some(first) = t.first() else {
            return (0.0, 0.0);
        };
        if lx <= first[0].ln() {
            return (first[1], first[2]);
        }
        for w in t.windows(2) {
            let (a, b) = (w[0][0].ln(), w[1][0].ln());
            if lx <= b {
                let f = (lx - a) / (b - a);
                return (
                    w[0][1] + f * (w[1][1] - w[0][1]),
                    w[0][2] + f * (w[1][2] - w[0][2]),
                );
            }
        }
        t.last().map_or((0.0, 0.0), |l| (l[1], l[2]))
    }

    /// sigma(x, t) / g_top of [`Aging::relax`]: the rows' polynomials at x (each floored
    /// at 0), linearly in ln t between rows, the first row's before it, the last's after.
    pub fn relax_sigma(&self, x: f64, t: f64) -> f64 {
        let r = &self.relax;
        let at = |row: &Vec<f64>| poly(&row[1..], x).max(0.0);
        let Some(first) = r.first() else { return 0.0 };
        if t <= first[0] {
            return at(first);
        }
        for w in r.windows(2) {
            if t <= w[1][0] {
                let f = (t.ln() - w[0][0].ln()) / (w[1][0].ln() - w[0][0].ln());
                return at(&w[0]) + f * (at(&w[1]) - at(&w[0]));
            }
        }
        r.last().map_or(0.0, at)
    }

    /// The conductance of a cell at time `time_s`: `g` its target (level + g_off), `g0`
    /// after the lognormal variation, `g_top` the top level's; in this order:
    /// programming noise, drift, accumulated 1/f noise, relaxation, clamped at 0.
    pub fn conductance(&self, seed: u64, cell: [u64; 5], g: f64, g0: f64, g_top: f64) -> f64 {
        let key = |kind: u64| hash(seed, &[kind, cell[0], cell[1], cell[2], cell[3], cell[4]]);
        let x = if g_top > 0.0 { g / g_top } else { 0.0 };
        let t = self.time_s;
        let mut gp = g0;
        if !self.prog_noise.is_empty() {
            let s = poly(&self.prog_noise, x).max(0.0) * g_top;
            gp = (gp + s * normal(key(PROG))).max(0.0);
        }
        let mut gt = gp;
        if !self.drift_nu.is_empty() && t > 0.0 {
            let (m, sd) = self.nu_law(x);
            let nu = (m + sd * normal(key(DRIFT))).abs();
            let t0 = self.drift_t0_s;
            gt = gp * ((t + t0) / t0).powf(-nu);
        }
        if let [q, e, q_max, t_read] = self.drift_noise[..] {
            let xp = if g_top > 0.0 { gp / g_top } else { 0.0 };
            let qs = (q / xp.powf(e).max(1e-3)).min(q_max);
            let span = ((t + self.drift_t0_s + t_read) / (2.0 * t_read))
                .ln()
                .max(0.0);
            gt += gt.abs() * qs * span.sqrt() * normal(key(FLICKER));
        }
        if let Some(first) = self.relax.first() {
            if t > first[0] {
                let s1 = self.relax_sigma(x, first[0]);
                let st = self.relax_sigma(x, t);
                let sr = (st * st - s1 * s1).max(0.0).sqrt() * g_top;
                gt += sr * normal(key(RELAX));
            }
        }
        gt.max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomials_and_tables_interpolate_as_documented() {
        assert_eq!(poly(&[1.0, 2.0, 3.0], 2.0), 1.0 + 4.0 + 12.0);
        let a = Aging {
            drift_nu: vec![[0.01, 0.1, 0.04], [0.1, 0.05, 0.02]],
            relax: vec![vec![1.0, 0.01], vec![100.0, 0.03]],
            ..Aging::default()
        };
        // Geometric midpoint of x: the arithmetic mean of the rows.
        let (m, s) = a.nu_law((0.01f64 * 0.1).sqrt());
        assert!((m - 0.075).abs() < 1e-12 && (s - 0.03).abs() < 1e-12);
        assert_eq!(a.nu_law(1e-9), (0.1, 0.04));
        assert_eq!(a.nu_law(1.0), (0.05, 0.02));
        assert!((a.relax_sigma(0.5, 10.0) - 0.02).abs() < 1e-12);
        assert_eq!(a.relax_sigma(0.5, 1e6), 0.03);
        assert_eq!(a.relax_sigma(0.5, 0.5), 0.01);
    }

    #[test]
    fn settings_are_validated_with_their_key() {
        let bad = |f: fn(&mut Aging)| {
            let mut a = Aging {
                drift_t0_s: 20.0,
                ..Aging::default()
            };
            f(&mut a);
            a.validate().unwrap_err()
        };
        assert!(bad(|a| a.time_s = -1.0).starts_with("device.time_s"));
        assert!(bad(|a| a.drift_t0_s = 0.0).starts_with("device.drift_t0_s"));
        assert!(bad(|a| a.prog_noise = vec![f64::NAN]).starts_with("device.prog_noise"));
        assert!(bad(|a| a.drift_nu = vec![[0.5, 0.1, 0.0], [0.2, 0.1, 0.0]])
            .starts_with("device.drift_nu: row 2"));
        assert!(bad(|a| a.drift_noise = vec![1.0]).starts_with("device.drift_noise"));
        assert!(bad(|a| a.relax = vec![vec![1.0]]).starts_with("device.relax: row 1"));
        assert!(bad(|a| {
            a.relax = vec![vec![1.0, 0.01], vec![172800.0, 0.02]];
            a.time_s = 172801.0
        })
        .starts_with("device.time_s: 172801 s is past the last row of device.relax (172800 s)"));
        let mut held = Aging {
            drift_t0_s: 20.0,
            relax: vec![vec![1.0, 0.01], vec![172800.0, 0.02]],
            time_s: 172800.0,
            ..Aging::default()
        };
        assert!(held.validate().is_ok());
        held.time_s = 31536000.0;
        held.relax_hold = true;
        assert!(held.validate().is_ok());
    }

    #[test]
    fn the_mean_drift_is_the_exponents_expectation() {
        let mut a = Aging {
            drift_nu: vec![[1.0, 0.05, 0.0]],
            drift_t0_s: 20.0,
            ..Aging::default()
        };
        assert_eq!(a.mean_drift(0.5), 1.0);
        a.time_s = 20.0;
        // No spread: (40 / 20)^-0.05.
        assert!((a.mean_drift(0.5) - 2f64.powf(-0.05)).abs() < 1e-15);
        // With a spread: the closed form against a sum over the folded normal's density.
        a.drift_nu = vec![[1.0, 0.03, 0.04]];
        a.time_s = 86400.0;
        let l = ((86400.0f64 + 20.0) / 20.0).ln();
        let (m, s) = (0.03f64, 0.04f64);
        let n = 200_000;
        let h = 16.0 * s / n as f64;
        let sum: f64 = (0..n)
            .map(|i| {
                let y = m - 8.0 * s + (i as f64 + 0.5) * h;
                let pdf = (-(y - m).powi(2) / (2.0 * s * s)).exp()
                    / (s * (2.0 * std::f64::consts::PI).sqrt());
                (-l * y.abs()).exp() * pdf * h
            })
            .sum();
        assert!(
            (a.mean_drift(0.5) - sum).abs() < 1e-9,
            "{} {sum}",
            a.mean_drift(0.5)
        );
    }

    #[test]
    fn a_cell_ages_by_its_own_draws_and_nothing_moves_at_time_zero() {
        let mut a = Aging {
            drift_nu: vec![[1.0, 0.05, 0.0]],
            drift_t0_s: 20.0,
            ..Aging::default()
        };
        let cell = [1, 0, 2, 3, 0];
        assert_eq!(a.conductance(7, cell, 3.0, 3.0, 3.0), 3.0);
        a.time_s = 20.0;
        // (40 / 20)^-0.05 exactly, no spread.
        let g = a.conductance(7, cell, 3.0, 3.0, 3.0);
        assert!((g - 3.0 * 2f64.powf(-0.05)).abs() < 1e-12);
        // A cell at 0 stays at 0.
        assert_eq!(a.conductance(7, cell, 0.0, 0.0, 3.0), 0.0);
    }
}
