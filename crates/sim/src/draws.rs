//! Monte Carlo device draws of the accuracy path (docs/accuracy.md, "Device draws"): the
//! seed of each draw, whether a device draws anything at all, and the mean, standard
//! deviation and Student-t 95% confidence interval of a figure over the draws.

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

/// The figures an interval is reported for, and the suffixes of its columns.
pub const FIGURES: [&str; 3] = ["top1", "agreement", "output_rel_rmse"];
pub const SUFFIXES: [&str; 4] = ["mean", "std", "ci_low", "ci_high"];

/// The interval columns: `top1_mean`, `top1_std`, `top1_ci_low`, `top1_ci_high`, then
/// `agreement_*` and `output_rel_rmse_*`.
pub fn columns() -> Vec<String> {
    FIGURES
        .iter()
        .flat_map(|f| SUFFIXES.iter().map(move |s| format!("{f}_{s}")))
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
