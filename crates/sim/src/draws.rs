//! Monte Carlo device draws of the accuracy path (docs/accuracy.md, "Device draws"): the
//! seed of each draw, whether a device draws anything at all, and the mean, standard
//! deviation and 95% confidence interval of a figure over the draws: Student's t, kept
//! inside the figure's domain ([0, 1] for a proportion, with a width even when the draws
//! agree; >= 0 for an error). The one place an interval of draws is computed.

use functional::Device;

/// The most device draws a run or a grid point may ask for (`--draws`, a grid's `draws`).
pub const MAX_DRAWS: u32 = 10_000;

/// The `device.seed` of draw `d` of a run seeded `seed`: draw 0 is `seed` itself (one
/// draw is the single-draw run), draw d >= 1 is `mix(mix(seed) ^ d)`, `mix` the SplitMix64
/// finalizer of the device's own draws. A pure function: the same draws on every thread
/// count, shard split and machine.
pub fn seed(seed: u64, d: u32) -> u64 {
    if d == 0 {
        seed
    } else {
        functional::rng::hash(seed, &[d as u64])
    }
}

/// Whether the device's figures depend on its seed: programming variation or noise,
/// a level table's spreads, stuck-at faults, read noise, a drift exponent's spread, 1/f noise, relaxation, DAC
/// noise or an error table draw from it; an off current, IR drop, a drift without
/// spread and ADC offset, gain and INL alone are deterministic, and so is the ideal device (every draw is then the same).
pub fn random(d: &Device) -> bool {
    d.sigma > 0.0
        || d.levels.random()
        || d.stuck_at_0 > 0.0
        || d.stuck_at_1 > 0.0
        || d.read_noise > 0.0
        || d.error_table.is_some()
        || !d.aging.prog_noise.is_empty()
        || d.aging.drift_nu.iter().any(|r| r[2] > 0.0)
        || !d.aging.drift_noise.is_empty()
        || !d.aging.relax.is_empty()
        || d.converter.dac_noise > 0.0
}

/// The 0.975 quantile of Student's t with 1..=30 degrees of freedom (the usual table,
/// nine decimals).
const T975: [f64; 30] = [
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
];

/// The 0.975 quantile of the standard normal.
const Z975: f64 = 1.959963984540054;

/// The 0.975 quantile of Student's t with `df` >= 1 degrees of freedom: the table up to
/// 30, beyond it the Cornish-Fisher expansion in 1/df to the fourth order (error below
/// 1e-6 from 31 on).
pub fn t975(df: u32) -> f64 {
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(&t) = T975.get(df as usize - 1) {
        return t;
    }
    let (z, v) = (Z975, df as f64);
    let z2 = z * z;
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
}

/// A figure over K draws: its mean, sample standard deviation (K - 1 in the
/// denominator) and the 95% interval mean +- t(0.975, K - 1) * std / sqrt(K).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub std: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// The interval of `values` (None when there are fewer than two, or one is not
    /// finite). Sums in the order given: the same bits for the same draws.
    pub fn of(values: &[f64]) -> Option<Interval> {
        let k = values.len();
        if k < 2 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = values.iter().sum::<f64>() / k as f64;
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        let std = (ss / (k - 1) as f64).sqrt();
        let half = t975(k as u32 - 1) * std / (k as f64).sqrt();
        Some(Interval {
            mean,
            std,
            low: mean - half,
            high: mean + half,
        })
    }

    /// The interval of a proportion (top-1, agreement: a fraction of `trials` samples)
    /// over K device draws at fixed samples, kept inside [0, 1] and never of zero width:
    /// [`Interval::proportion_with`] with the draws as the only source (`binomial` 0).
    pub fn proportion(values: &[f64], trials: u64) -> Option<Interval> {
        Interval::proportion_with(values, trials, 0.0)
    }

    /// The interval of a proportion p over K draws `values` of a fraction of `trials`
    /// samples each: the p with (mean - p)^2 <= t^2 (binomial p (1 - p) + b), t the
    /// Student quantile of [`Interval::of`], b the variance of the mean over the draws,
    /// s^2 / K, with s at least 1 / (trials sqrt K) (one sample of one draw changed: what
    /// K draws that all agree cannot rule out), and the result clipped to [0, 1].
    ///
    /// With `binomial` 0 (the device draws alone) it is the Student interval of
    /// [`Interval::of`], bit for bit wherever the draws differ and it lies inside [0, 1];
    /// draws that all agree get a width of about 2 t / (trials K) instead of none. A
    /// variance proportional to p (1 - p) — the sampling of the images, `binomial` = 1 /
    /// trials — makes it a score interval (Wilson's when the draws agree), inside [0, 1]
    /// by construction.
    pub fn proportion_with(values: &[f64], trials: u64, binomial: f64) -> Option<Interval> {
        let i = Interval::of(values)?;
        let k = values.len() as f64;
        let floor = 1.0 / (trials.max(1) as f64 * k.sqrt());
        let s = i.std.max(floor);
        let b = s * s / k;
        let t = t975(values.len() as u32 - 1);
        let (low, high) = if binomial == 0.0 {
            // The Student interval's own expression (its bits), with the floored s.
            let half = t * s / k.sqrt();
            (i.mean - half, i.mean + half)
        } else {
            score(i.mean, binomial, b, t)
        };
        Some(Interval {
            low: low.max(0.0),
            high: high.min(1.0),
            ..i
        })
    }

    /// The interval of a figure that cannot be negative (an output's relative error) over
    /// K draws: [`Interval::of`] with its low end clipped to 0.
    pub fn nonnegative(values: &[f64]) -> Option<Interval> {
        Interval::of(values).map(|i| Interval {
            low: i.low.max(0.0),
            ..i
        })
    }

    /// The interval of K identical draws of `v` (a device that draws nothing): std 0.
    pub fn constant(v: f64) -> Interval {
        Interval {
            mean: v,
            std: 0.0,
            low: v,
            high: v,
        }
    }

    /// mean, std, ci_low, ci_high as CSV cells.
    pub fn cells(i: Option<Interval>) -> [String; 4] {
        match i {
            Some(i) => [i.mean, i.std, i.low, i.high].map(|v| format!("{v}")),
            None => Default::default(),
        }
    }
}

/// The spread of a table `y[d][i]` of per-sample figures (1 or 0: the sample right or
/// not; a paired difference in {-1, 0, 1}) over K device draws d and M samples i, both
/// sampled from their populations (a crossed design): the mean, the sample variance of the
/// M per-sample means (over the draws) and of the K per-draw means (over the samples).
/// The variance of the mean is then about `images / M + draws / K`: each term holds the
/// interaction's share once, so the sum counts it twice, var(interaction) / (M K) too much
/// (a little wide, never narrow). None with fewer than 2 samples, rows of unequal length
/// or a value that is not finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossed {
    pub mean: f64,
    /// Sample variance (M - 1) of the per-sample means over the draws.
    pub images: f64,
    /// Sample variance (K - 1) of the per-draw means over the samples (0 for K = 1).
    pub draws: f64,
    pub k: usize,
    pub m: usize,
}

impl Crossed {
    /// The spread of `y` (K rows of M values), summed in row order: the same bits for the
    /// same table.
    pub fn of(y: &[Vec<f64>]) -> Option<Crossed> {
        let k = y.len();
        let m = y.first()?.len();
        if m < 2
            || y.iter()
                .any(|r| r.len() != m || r.iter().any(|v| !v.is_finite()))
        {
            return None;
        }
        let total: f64 = y.iter().flat_map(|r| r.iter()).sum();
        let mean = total / (k * m) as f64;
        let images = (0..m)
            .map(|i| {
                let r = y.iter().map(|row| row[i]).sum::<f64>() / k as f64;
                (r - mean) * (r - mean)
            })
            .sum::<f64>()
            / (m - 1) as f64;
        let draws = if k > 1 {
            y.iter()
                .map(|row| {
                    let c = row.iter().sum::<f64>() / m as f64;
                    (c - mean) * (c - mean)
                })
                .sum::<f64>()
                / (k - 1) as f64
        } else {
            0.0
        };
        Some(Crossed {
            mean,
            images,
            draws,
            k,
            m,
        })
    }

    /// The draws' variance of the mean, s^2 / K, with s at least 1 / (M sqrt K) (one
    /// sample of one draw changed) when the K > 1 draws are drawn (`random`); 0 when the
    /// draws are one computation.
    fn draw_term(&self, random: bool) -> f64 {
        if !random || self.k < 2 {
            return 0.0;
        }
        let k = self.k as f64;
        let floor = 1.0 / (self.m as f64 * k.sqrt());
        let s2 = self.draws.max(floor * floor);
        s2 / k
    }

    /// The Student quantile for a sum of the two variance terms, with Welch and
    /// Satterthwaite's degrees of freedom (v1 + v2)^2 / (v1^2 / (M - 1) + v2^2 / (K - 1)),
    /// rounded down (a little wide).
    fn t(&self, v_images: f64, v_draws: f64) -> f64 {
        let mut den = v_images * v_images / (self.m - 1) as f64;
        if self.k > 1 {
            den += v_draws * v_draws / (self.k - 1) as f64;
        }
        let sum = v_images + v_draws;
        let df = if den > 0.0 {
            (sum * sum / den).floor()
        } else {
            (self.m - 1) as f64
        };
        t975(df.clamp(1.0, u32::MAX as f64) as u32)
    }
}

impl Interval {
    /// The 95% interval of a proportion (top-1, agreement) over **the samples and the
    /// device draws**: what a fresh set of samples from the same population, read on fresh
    /// draws of the device, would average. `y[d][i]` is 1 when sample i is right in draw
    /// d, else 0; `random` says the device draws anything (else `y` is one draw, the same
    /// in all). The p with (mean - p)^2 <= t^2 (a p (1 - p) + b) ([`score`]), inside [0, 1]
    /// by construction and never of zero width:
    ///
    /// - a p (1 - p), the samples' term: the variance of the per-sample means over the
    ///   draws is written as rho p (1 - p), a = rho / M; rho = images / (mean (1 - mean)),
    ///   at least 1 / K (the samples alike and the draws independent), and 1 when every
    ///   sample is right in every draw or wrong in every draw (nothing tells then how the
    ///   draws would split: Wilson's interval over M samples);
    /// - b, the draws' term: the variance of the per-draw means over K, floored as
    ///   [`Interval::proportion`] floors it (0 for a device that draws nothing);
    /// - t: Student's quantile with Satterthwaite's degrees of freedom of the two terms,
    ///   the samples' term taken at (mean M + 1) / (M + 2) rather than the mean, so that
    ///   samples all right (a term of 0) do not leave the draws' K - 1 degrees alone.
    ///
    /// `std` is the standard error sqrt(a mean (1 - mean) + b).
    pub fn over_samples(y: &[Vec<f64>], random: bool) -> Option<Interval> {
        let c = Crossed::of(y)?;
        let (p, m) = (c.mean, c.m as f64);
        let inside = p > 0.0 && p < 1.0;
        let rho = if inside {
            (c.images / (p * (1.0 - p))).max(1.0 / c.k as f64)
        } else {
            1.0
        };
        let a = rho / m;
        let b = c.draw_term(random);
        let shrunk = (p * m + 1.0) / (m + 2.0);
        let t = c.t(a * shrunk * (1.0 - shrunk), b);
        let (low, high) = score(p, a, b, t);
        // The roots hold the mean (at 1 or 0 one of them is it, up to rounding).
        Some(Interval {
            mean: p,
            std: (a * p * (1.0 - p) + b).sqrt(),
            low: low.clamp(0.0, p),
            high: high.clamp(p, 1.0),
        })
    }

    /// The 95% interval of a paired difference between two paths on the same samples
    /// (`y[d][i]` in {-1, 0, 1}: the quantized network right on sample i minus the mode
    /// right on it in draw d; its mean is the top-1 drop), over the samples and the draws:
    /// mean +- t sqrt(images / M + draws / K), t as in [`Interval::over_samples`], each
    /// variance at least that of one sample of one draw changed (images 1 / (K^2 M), draws
    /// as [`Interval::proportion`]), clipped to [-1, 1]. Never of zero width.
    pub fn paired(y: &[Vec<f64>], random: bool) -> Option<Interval> {
        let c = Crossed::of(y)?;
        let (k, m) = (c.k as f64, c.m as f64);
        let v_images = c.images.max(1.0 / (k * k * m)) / m;
        let v_draws = c.draw_term(random);
        let t = c.t(v_images, v_draws);
        let se = (v_images + v_draws).sqrt();
        Some(Interval {
            mean: c.mean,
            std: se,
            low: (c.mean - t * se).max(-1.0),
            high: (c.mean + t * se).min(1.0),
        })
    }
}

/// The p with (mean - p)^2 <= t^2 (a p (1 - p) + b): the roots of
/// (1 + t^2 a) p^2 - (2 mean + t^2 a) p + mean^2 - t^2 b, i.e.
/// (mean + t^2 a / 2 +- t sqrt(a mean (1 - mean) + t^2 a^2 / 4 + b (1 + t^2 a))) / (1 + t^2 a).
/// With b = 0 it is Wilson's score interval of `mean` over 1 / a trials; with a = 0,
/// mean +- t sqrt(b).
pub fn score(mean: f64, a: f64, b: f64, t: f64) -> (f64, f64) {
    let t2a = t * t * a;
    let center = mean + t2a / 2.0;
    let half = t * (a * mean * (1.0 - mean) + t2a * a / 4.0 + b * (1.0 + t2a)).sqrt();
    ((center - half) / (1.0 + t2a), (center + half) / (1.0 + t2a))
}

/// The columns of the intervals over the samples and the draws
/// ([`Interval::over_samples`]) and of the paired top-1 drop against the quantized
/// network ([`Interval::paired`]), after those of [`FIGURES`] in [`columns`].
pub const SAMPLE_COLUMNS: [&str; 7] = [
    "top1_samples_ci_low",
    "top1_samples_ci_high",
    "agreement_samples_ci_low",
    "agreement_samples_ci_high",
    "top1_drop_mean",
    "top1_drop_ci_low",
    "top1_drop_ci_high",
];

/// The figures an interval is reported for, and the suffixes of its columns.
pub const FIGURES: [&str; 3] = ["top1", "agreement", "output_rel_rmse"];
pub const SUFFIXES: [&str; 4] = ["mean", "std", "ci_low", "ci_high"];

/// The interval columns: `top1_mean`, `top1_std`, `top1_ci_low`, `top1_ci_high`, then
/// `agreement_*` and `output_rel_rmse_*` (the device draws at fixed samples), then
/// [`SAMPLE_COLUMNS`].
pub fn columns() -> Vec<String> {
    FIGURES
        .iter()
        .flat_map(|f| SUFFIXES.iter().map(move |s| format!("{f}_{s}")))
        .chain(SAMPLE_COLUMNS.iter().map(|c| c.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The t density's integral from 0 to t by Simpson's rule (4000 panels).
    fn t_cdf(t: f64, df: f64) -> f64 {
        let ln_gamma = |x: f64| {
            // Lanczos (g = 7, 9 terms): 1e-15 relative for x > 0.5.
            const C: [f64; 9] = [
                0.999_999_999_999_809_9,
                676.520_368_121_885_1,
                -1_259.139_216_722_402_8,
                771.323_428_777_653_1,
                -176.615_029_162_140_6,
                12.507_343_278_686_905,
                -0.138_571_095_265_720_12,
                9.984_369_578_019_572e-6,
                1.505_632_735_149_311_6e-7,
            ];
            let x = x - 1.0;
            let mut a = C[0];
            let t = x + 7.5;
            for (i, c) in C.iter().enumerate().skip(1) {
                a += c / (x + i as f64);
            }
            0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
        };
        let c = (ln_gamma((df + 1.0) / 2.0)
            - ln_gamma(df / 2.0)
            - 0.5 * (df * std::f64::consts::PI).ln())
        .exp();
        let f = |x: f64| c * (1.0 + x * x / df).powf(-(df + 1.0) / 2.0);
        let n = 4000;
        let h = t / n as f64;
        let mut s = f(0.0) + f(t);
        for i in 1..n {
            s += f(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        0.5 + s * h / 3.0
    }

    #[test]
    fn t_quantiles_against_known_values_and_the_density() {
        // Closed forms: df 1 (Cauchy) tan(pi (p - 1/2)), df 2 (2p - 1) sqrt(2 / (4p(1 - p))).
        let p: f64 = 0.975;
        assert!((t975(1) - (std::f64::consts::PI * (p - 0.5)).tan()).abs() < 1e-8);
        let a = 4.0 * p * (1.0 - p);
        assert!((t975(2) - 2.0 * (p - 0.5) * (2.0 / a).sqrt()).abs() < 1e-8);
        // Printed tables: df 10, 20, 60, 120 and the normal limit.
        for (df, want) in [
            (10, 2.228139),
            (20, 2.085963),
            (40, 2.021075),
            (60, 2.000298),
            (120, 1.979930),
        ] {
            assert!((t975(df) - want).abs() < 2e-6, "df {df}: {}", t975(df));
        }
        assert!((t975(1_000_000) - Z975).abs() < 1e-5);
        // Every tabulated value, and the expansion beyond, puts 97.5% of the density
        // below it; the quantile falls with df.
        for df in 1..=45u32 {
            let c = t_cdf(t975(df), df as f64);
            assert!((c - 0.975).abs() < 2e-6, "df {df}: cdf {c}");
            assert!(t975(df + 1) < t975(df));
        }
        assert_eq!(t975(0), f64::INFINITY);
    }

    #[test]
    fn interval_by_hand() {
        // 1, 2, 3: mean 2, std 1, half-width 4.302652730 / sqrt(3).
        let i = Interval::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((i.mean, i.std), (2.0, 1.0));
        let half = 4.302652730 / 3f64.sqrt();
        assert!((i.low - (2.0 - half)).abs() < 1e-15 && (i.high - (2.0 + half)).abs() < 1e-15);
        assert_eq!(Interval::of(&[1.0]), None);
        assert_eq!(Interval::of(&[1.0, f64::NAN]), None);
        let c = Interval::of(&[0.5; 4]).unwrap();
        assert_eq!(c, Interval::constant(0.5));
        assert_eq!(Interval::cells(None), [""; 4].map(String::from));
    }

    /// A proportion's interval stays inside [0, 1] (K = 2 draws of top-1 0.7 and 0.95
    /// gave [-0.76, 2.41]) and is never of zero width
    /// when the draws agree (it was [x, x]); elsewhere it is the Student interval bit for
    /// bit.
    #[test]
    fn a_proportion_stays_in_its_domain_with_a_width() {
        let i = Interval::proportion(&[0.7, 0.95], 100).unwrap();
        let t = Interval::of(&[0.7, 0.95]).unwrap();
        assert!(t.high > 1.0 && t.low < 0.0, "{t:?}");
        assert_eq!((i.low, i.high, i.mean, i.std), (0.0, 1.0, t.mean, t.std));
        let i = Interval::proportion(&[0.9, 1.0, 1.0], 10).unwrap();
        assert_eq!(i.high, 1.0);
        assert!(i.low > 0.0 && i.low < 0.9, "{i:?}");
        // Inside [0, 1] and with draws that differ by more than one sample: unchanged.
        let v = [0.50, 0.52, 0.48, 0.51];
        assert_eq!(Interval::proportion(&v, 100), Interval::of(&v));
        // Draws that all agree: a width of one sample of one draw, inside [0, 1].
        for (x, m) in [(1.0, 50u64), (0.0, 50), (0.5, 8)] {
            let i = Interval::proportion(&[x; 4], m).unwrap();
            let half = t975(3) / (m as f64 * 4.0);
            assert!(
                i.low >= 0.0 && i.high <= 1.0 && i.high > i.low,
                "{x}: {i:?}"
            );
            assert!((i.high - i.low - if x == 0.5 { 2.0 * half } else { half }).abs() < 1e-15);
            assert_eq!(i.std, 0.0);
        }
        // Property: for any draws on the lattice of M samples, inside [0, 1], containing
        // the mean, of positive width.
        let mut state = 7u64;
        for _ in 0..2000 {
            state = functional::rng::hash(state, &[1]);
            let m = 1 + state % 40;
            let k = 2 + (state >> 8) % 8;
            let v: Vec<f64> = (0..k)
                .map(|j| (functional::rng::hash(state, &[j]) % (m + 1)) as f64 / m as f64)
                .collect();
            let i = Interval::proportion(&v, m).unwrap();
            assert!(
                0.0 <= i.low && i.low <= i.mean && i.mean <= i.high && i.high <= 1.0,
                "{v:?} {i:?}"
            );
            assert!(i.high > i.low, "{v:?} {i:?}");
        }
        // A relative error is never negative.
        let e = Interval::nonnegative(&[0.01, 0.3]).unwrap();
        assert_eq!(
            (e.low, e.high),
            (0.0, Interval::of(&[0.01, 0.3]).unwrap().high)
        );
    }

    /// The solver a later interval (draws and image sampling) will use: Wilson's score
    /// interval when only the binomial term is there (n = 10, 5 successes, z 1.96:
    /// [0.2366, 0.7634]), and inside [0, 1] with both terms.
    #[test]
    fn the_score_solver_is_wilsons_for_a_binomial_variance() {
        let (lo, hi) = score(0.5, 0.1, 0.0, 1.959963984540054);
        assert!(
            (lo - 0.236593).abs() < 1e-6 && (hi - 0.763407).abs() < 1e-6,
            "{lo} {hi}"
        );
        let (lo, hi) = score(1.0, 0.1, 0.0, 1.959963984540054);
        assert!(
            (lo - 0.722467).abs() < 1e-6 && (hi - 1.0).abs() < 1e-12,
            "{lo} {hi}"
        );
        assert_eq!(score(0.3, 0.0, 0.04, 2.0), (0.3 - 0.4, 0.3 + 0.4));
        let i = Interval::proportion_with(&[1.0, 1.0, 1.0], 20, 1.0 / 20.0).unwrap();
        assert!(i.low > 0.5 && i.low < 0.95 && i.high == 1.0, "{i:?}");
    }

    /// A 2-draw, 3-sample table by hand: per-sample means 1, 1/2, 1/2 (variance 1/12),
    /// per-draw means 2/3, 2/3 (variance 0, floored to one sample of one draw:
    /// (1 / (3 sqrt 2))^2). The paired interval: variances 1/36 and 1/36, Satterthwaite's
    /// df (1/18)^2 / ((1/36)^2 / 2 + (1/36)^2) = 2.67, so t(0.975, 2); clipped at 1.
    #[test]
    fn crossed_spread_and_paired_interval_by_hand() {
        let y = vec![vec![1.0, 0.0, 1.0], vec![1.0, 1.0, 0.0]];
        let c = Crossed::of(&y).unwrap();
        assert!((c.mean - 2.0 / 3.0).abs() < 1e-15);
        assert!(
            (c.images - 1.0 / 12.0).abs() < 1e-15 && c.draws == 0.0,
            "{c:?}"
        );
        let d = Interval::paired(&y, true).unwrap();
        let se = (1.0f64 / 18.0).sqrt();
        assert!((d.std - se).abs() < 1e-15);
        assert!(
            (d.low - (2.0 / 3.0 - t975(2) * se)).abs() < 1e-12 && d.high == 1.0,
            "{d:?}"
        );
        // Rows of unequal length, one sample, a NaN: no interval.
        assert_eq!(Crossed::of(&[vec![1.0, 0.0], vec![1.0]]), None);
        assert_eq!(Crossed::of(&[vec![1.0]]), None);
        assert_eq!(Crossed::of(&[vec![1.0, f64::NAN]]), None);
        // The samples' interval of the same table: a score interval around 2/3, inside
        // [0, 1] (3 samples and t(0.975, 2): its low end reaches 0).
        let i = Interval::over_samples(&y, true).unwrap();
        assert!(
            0.0 <= i.low && i.low < 2.0 / 3.0 && 2.0 / 3.0 < i.high && i.high <= 1.0,
            "{i:?}"
        );
    }

    #[test]
    fn draw_zero_is_the_seed_and_the_others_differ() {
        assert_eq!(seed(7, 0), 7);
        let s: Vec<u64> = (0..100).map(|d| seed(7, d)).collect();
        let mut u = s.clone();
        u.sort_unstable();
        u.dedup();
        assert_eq!(u.len(), 100);
        assert_ne!(seed(8, 1), seed(7, 1));
        assert!(!random(&Device::default()));
        assert!(!random(&Device {
            ir_drop: 0.01,
            on_off_ratio: Some(10.0),
            ..Device::default()
        }));
        assert!(random(&Device {
            read_noise: 0.01,
            ..Device::default()
        }));
        // A level table draws when a state has a spread.
        let table = |sd: f64| Device {
            levels: functional::Levels::new(
                functional::LevelSpace::Conductance,
                vec![vec![10.0, sd], vec![40.0, sd]],
                vec![],
            )
            .unwrap(),
            ..Device::default()
        };
        assert!(random(&table(0.5)));
        assert!(!random(&table(0.0)));
    }
}
