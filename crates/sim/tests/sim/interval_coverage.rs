//! Coverage of the accuracy intervals (docs/accuracy.md, "What each interval covers")
//! against a truth that none of the intervals' draws or samples built: a synthetic
//! population of samples whose accuracy is known in closed form, read on synthetic device
//! draws. Each repetition draws M samples of the population and K device draws, builds the
//! three intervals of `sresim accuracy --draws K` from the M x K table of right / wrong,
//! and checks them against their own truths:
//!
//! - the device-draw interval (`top1_ci_low`, `top1_ci_high`) against the mean over device
//!   draws **at these samples**, (1 / M) sum of the samples' probabilities of being right
//!   (known from the population's parameters, not from the draws);
//! - the interval over the samples and the draws (`top1_samples_ci_*`) against the
//!   population's top-1;
//! - the paired drop (`top1_drop_*`) against the population's drop against a quantized
//!   network that is one computation per sample.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sim::draws::Interval;

/// Kinds of samples: (weight, quantized network right, the mode's probability of being
/// right on an average chip).
const KINDS: [(f64, f64, f64); 4] = [
    (0.80, 1.0, 0.98),
    (0.10, 1.0, 0.70),
    (0.04, 0.0, 0.30),
    (0.06, 0.0, 0.05),
];

/// Each chip (device draw) shifts every sample's probability by a uniform +-SHIFT: a
/// better or worse chip, the same for all its samples (the draws' own variance).
const SHIFT: f64 = 0.02;

struct Case {
    /// Per repetition: covered by the device-draw interval (of its truth at the samples),
    /// by the interval over samples and draws (of the population's top-1), by the paired
    /// drop's (of the population's drop); and the device-draw interval of the
    /// population's top-1 (what it does not claim to cover).
    covered: [u32; 4],
    reps: u32,
}

fn case(m: usize, k: usize, reps: u32, seed: u64) -> Case {
    let pop_top1: f64 = KINDS.iter().map(|(w, _, mu)| w * mu).sum();
    let pop_q: f64 = KINDS.iter().map(|(w, q, _)| w * q).sum();
    let pop_drop = pop_q - pop_top1;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut covered = [0u32; 4];
    for _ in 0..reps {
        // M samples of the population.
        let samples: Vec<(f64, f64)> = (0..m)
            .map(|_| {
                let mut u: f64 = rng.gen();
                let mut kind = KINDS[KINDS.len() - 1];
                for kd in KINDS {
                    if u < kd.0 {
                        kind = kd;
                        break;
                    }
                    u -= kd.0;
                }
                (kind.1, kind.2)
            })
            .collect();
        let at_samples = samples.iter().map(|s| s.1).sum::<f64>() / m as f64;
        // K chips; y[d][i]: sample i right on chip d.
        let y: Vec<Vec<f64>> = (0..k)
            .map(|_| {
                let shift = rng.gen_range(-SHIFT..SHIFT);
                samples
                    .iter()
                    .map(|s| f64::from(u8::from(rng.gen::<f64>() < s.1 + shift)))
                    .collect()
            })
            .collect();
        let drop: Vec<Vec<f64>> = y
            .iter()
            .map(|row| row.iter().zip(&samples).map(|(c, s)| s.0 - c).collect())
            .collect();
        let top1s: Vec<f64> = y.iter().map(|r| r.iter().sum::<f64>() / m as f64).collect();
        let device = Interval::proportion(&top1s, m as u64).unwrap();
        let over = Interval::over_samples(&y, true).unwrap();
        let paired = Interval::paired(&drop, true).unwrap();
        let has = |i: &Interval, x: f64| i.low <= x && x <= i.high;
        for (c, hit) in covered.iter_mut().zip([
            has(&device, at_samples),
            has(&over, pop_top1),
            has(&paired, pop_drop),
            has(&device, pop_top1),
        ]) {
            *c += u32::from(hit);
        }
        // Each inside its domain and of positive width.
        assert!(0.0 <= device.low && device.high <= 1.0 && device.low < device.high);
        assert!(0.0 <= over.low && over.high <= 1.0 && over.low < over.high);
        assert!(-1.0 <= paired.low && paired.high <= 1.0 && paired.low < paired.high);
    }
    Case { covered, reps }
}

/// 1,000 repetitions a case, three cases (M, K) = (200, 5), (200, 2), (60, 3). Each
/// interval must cover its truth in at least 930 of 1,000 (93%) and at most 990 (the
/// device-draw interval at K = 2: at most 1,000, see below). Measured: device draws 957,
/// 996, 966; samples and draws 963, 984, 960; paired drop 975, 966, 973. With
/// exact 95% coverage, the count is Binomial(1000, 0.95): below 930 with probability
/// 0.0023, above 990 with probability below 1e-12; nine such checks fail together on a
/// fresh seed with probability at most 9 x 0.0023 = 2.1% (a union bound). The seeds
/// here are fixed, so the test itself is deterministic. The device-draw interval, taken
/// as an interval of the population's top-1 (what the single interval was read as before
/// the samples' interval existed), covers it in far fewer: below 850 of 1,000 at K = 5
/// (710 measured; 800 at M = 60, K = 3).
#[test]
fn each_interval_covers_its_own_truth_95_times_in_100() {
    let cases: Vec<(usize, usize, Case)> = [(200, 5, 1), (200, 2, 2), (60, 3, 3)]
        .into_iter()
        .map(|(m, k, seed)| (m, k, case(m, k, 1000, seed)))
        .collect();
    for (m, k, c) in &cases {
        eprintln!("M {m}, K {k}: covered {:?} of {}", c.covered, c.reps);
    }
    for (m, k, c) in cases {
        for (name, n) in ["device draws", "samples and draws", "paired drop"]
            .iter()
            .zip(&c.covered[..3])
        {
            // At K = 2 the device-draw interval is conservative (996 here): its floor,
            // one sample of one draw, widens the Student interval of one degree of
            // freedom exactly where two close draws would make it too narrow.
            let most = if k == 2 && name == &"device draws" {
                1000
            } else {
                990
            };
            assert!(
                (930..=most).contains(n),
                "M {m}, K {k}: the {name} interval covers its truth {n} times in {}",
                c.reps
            );
        }
        if k == 5 {
            assert!(c.covered[3] < 850, "{:?}", c.covered);
        }
    }
}

/// The samples' interval and the paired drop never have zero width and stay in their
/// domain, even when every sample is right in every draw (Wilson's interval over M then:
/// M = 50, all right, [0.925, 1]) or the two paths agree on every sample.
#[test]
fn agreeing_draws_keep_a_width_in_the_domain() {
    let all = vec![vec![1.0; 50]; 4];
    let i = Interval::over_samples(&all, true).unwrap();
    assert_eq!(i.high, 1.0);
    assert!(i.low > 0.9 && i.low < 0.95, "{i:?}");
    let once = Interval::over_samples(&all[..1], false).unwrap();
    // Wilson's lower end over 50 trials all right, 50 / (50 + t^2) with t = t(0.975, 49)
    // = 2.009575 (the samples' 49 degrees of freedom): 0.925268.
    assert!((once.low - 0.925268).abs() < 1e-5, "{once:?}");
    let none = vec![vec![0.0; 50]; 3];
    let d = Interval::paired(&none, true).unwrap();
    assert!(
        d.low < 0.0 && d.high > 0.0 && d.low >= -1.0 && d.high <= 1.0,
        "{d:?}"
    );
    let i = Interval::over_samples(&none, true).unwrap();
    assert!(i.low == 0.0 && i.high > 0.0 && i.high < 0.1, "{i:?}");
    // A table with one sample cannot speak of the samples' spread.
    assert_eq!(Interval::over_samples(&[vec![1.0]], true), None);
}
