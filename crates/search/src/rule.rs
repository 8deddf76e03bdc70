//! The sequential rule of `sresim search` (docs/search.md, "The sequential test").
//!
//! Each sample i of a design point gives one paired difference
//! X_i = c_q(i) - c_p(i) in {-1, 0, 1}: whether the quantized network classified it
//! right, minus whether the design point (on a device draw of the sample's own) did.
//! The X_i are i.i.d. with mean Δ, the expected top-1 drop of the point against the
//! quantized network. Two one-sided tests of the budget δ run side by side, each a
//! test supermartingale (a product of bets, Waudby-Smith and Ramdas, "Estimating means
//! of bounded random variables by betting", JRSS B 2024):
//!
//! - **within** (null Δ >= δ): wealth Π (1 + λ_i (δ - X_i)); reaching 1/α says Δ < δ;
//! - **outside** (null Δ <= δ): wealth Π (1 + λ_i (X_i - δ)); reaching 1/α says Δ > δ.
//!
//! Under its null a wealth is a non-negative supermartingale started at 1, so by Ville's
//! inequality it ever reaches 1/α with probability at most α, however many samples are
//! looked at and whenever the looking stops: the rule may stop a point at any look.
//! The bet λ_i is predictable (from X_1..X_{i-1} only): the approximate growth-rate
//! adaptive bet (aGRAPA) gap / (variance + gap²), gap the distance of the running mean
//! to δ on the side the test bets on, clipped to [0, [`CAP`] / room], room the most a
//! bet can lose per unit (so a wealth never falls below 1 - CAP of itself in one step).

/// The verdict on one design point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Top-1 drop below the budget, at the confidence asked.
    Within,
    /// Top-1 drop above the budget, at the confidence asked.
    Outside,
    /// Neither, with every sample the cap allows.
    Undecided,
}

impl Verdict {
    /// The word points.csv and the table write.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::Outside => "outside",
            Verdict::Undecided => "undecided",
        }
    }
}

/// The largest bet, as a fraction of the bet that could lose everything in one step.
pub const CAP: f64 = 0.9;

/// The prior variance of X (half-weight of one sample) in the running variance, so the
/// first bets are moderate.
const PRIOR_VAR: f64 = 0.25;

/// Which way a test bets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Bets that the mean is above m (null: mean <= m).
    Above,
    /// Bets that the mean is below m (null: mean >= m).
    Below,
}

/// One test martingale of the mean of X in [-1, 1] against `m`.
#[derive(Debug, Clone)]
pub struct Bet {
    m: f64,
    side: Side,
    threshold: f64,
    log_wealth: f64,
    n: u64,
    sum: f64,
    /// Sum of (X_i - running mean before X_i)².
    sq: f64,
    crossed: Option<u64>,
}

impl Bet {
    /// A test of `m` (in (-1, 1)) on `side` at level `alpha` (in (0, 1)).
    pub fn new(m: f64, side: Side, alpha: f64) -> Bet {
        Bet {
            m,
            side,
            threshold: (1.0 / alpha).ln(),
            log_wealth: 0.0,
            n: 0,
            sum: 0.0,
            sq: 0.0,
            crossed: None,
        }
    }

    /// Bets on the next observation `x` (in [-1, 1]).
    pub fn push(&mut self, x: f64) {
        let k = (self.n + 1) as f64;
        // Shrunk towards 0 (no drop) by one pseudo-observation.
        let mean = self.sum / k;
        let var = (PRIOR_VAR + self.sq) / k;
        let (gap, room, payoff) = match self.side {
            Side::Above => (mean - self.m, 1.0 + self.m, x - self.m),
            Side::Below => (self.m - mean, 1.0 - self.m, self.m - x),
        };
        let lambda = (gap / (var + gap * gap)).clamp(0.0, CAP / room);
        self.log_wealth += (lambda * payoff).ln_1p();
        self.sq += (x - mean) * (x - mean);
        self.sum += x;
        self.n += 1;
        if self.crossed.is_none() && self.log_wealth >= self.threshold {
            self.crossed = Some(self.n);
        }
    }

    /// The observation count at which the wealth first reached 1/α.
    pub fn crossed(&self) -> Option<u64> {
        self.crossed
    }

    /// The wealth now.
    pub fn wealth(&self) -> f64 {
        self.log_wealth.exp()
    }
}

/// The two tests of one design point against the budget, and the running mean.
#[derive(Debug, Clone)]
pub struct Test {
    within: Bet,
    outside: Bet,
    n: u64,
    sum: f64,
}

impl Test {
    /// Tests of `budget` (in (0, 1)) at level `alpha` each.
    pub fn new(budget: f64, alpha: f64) -> Test {
        Test {
            within: Bet::new(budget, Side::Below, alpha),
            outside: Bet::new(budget, Side::Above, alpha),
            n: 0,
            sum: 0.0,
        }
    }

    /// The next paired difference.
    pub fn push(&mut self, x: f64) {
        self.within.push(x);
        self.outside.push(x);
        self.n += 1;
        self.sum += x;
    }

    /// The verdict so far: the test that reached 1/α first (both at once: undecided).
    pub fn verdict(&self) -> Verdict {
        match (self.within.crossed(), self.outside.crossed()) {
            (Some(a), Some(b)) if a < b => Verdict::Within,
            (Some(a), Some(b)) if b < a => Verdict::Outside,
            (Some(_), None) => Verdict::Within,
            (None, Some(_)) => Verdict::Outside,
            _ => Verdict::Undecided,
        }
    }

    /// The observation count at which the verdict was reached.
    pub fn decided_at(&self) -> Option<u64> {
        match self.verdict() {
            Verdict::Within => self.within.crossed(),
            Verdict::Outside => self.outside.crossed(),
            Verdict::Undecided => None,
        }
    }

    /// Observations so far.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Their mean (0 with none).
    pub fn mean(&self) -> f64 {
        self.sum / self.n.max(1) as f64
    }
}

/// Grid step of [`bounds`].
pub const BOUND_STEP: f64 = 0.001;

/// The confidence sequence's bounds of the mean of `xs` at level `alpha` on each side:
/// every m on a grid of [`BOUND_STEP`] in (-1, 1) is tested on both sides with the bets
/// of [`Bet`] over all of `xs` (in order); low is the least m no `Above` test rejected,
/// high the largest m no `Below` test rejected (each scan stops at the first kept m), each moved one grid step outward (and
/// kept in [-1, 1]). Each bound holds with probability 1 - alpha at any stopping time.
pub fn bounds(xs: &[f64], alpha: f64) -> (f64, f64) {
    let steps = (1.0 / BOUND_STEP).round() as i64;
    let grid = || (1 - steps..steps).map(|k| k as f64 * BOUND_STEP);
    let kept = |side: Side| {
        grid().filter(move |&m| {
            let mut b = Bet::new(m, side, alpha);
            for &x in xs {
                b.push(x);
                if b.crossed().is_some() {
                    return false;
                }
            }
            true
        })
    };
    let low = kept(Side::Above).next().map_or(1.0, |m| m - BOUND_STEP);
    let high = kept(Side::Below)
        .next_back()
        .map_or(-1.0, |m| m + BOUND_STEP);
    (low.max(-1.0), high.min(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_ties_decide_within_a_half_budget_by_hand() {
        // budget 0.5, alpha 0.5 (threshold wealth 2), X = 0, 0:
        // bet 1: mean 0, var 0.25, gap 0.5: λ = 0.5 / (0.25 + 0.25) = 1 (cap 0.9 / 0.5),
        //        wealth 1 + 1 * 0.5 = 1.5;
        // bet 2: mean 0, var 0.25 / 2, λ = 0.5 / (0.125 + 0.25) = 4/3,
        //        wealth 1.5 * (1 + 2/3) = 2.5 >= 2: within after 2 samples.
        let mut t = Test::new(0.5, 0.5);
        t.push(0.0);
        assert!((t.within.wealth() - 1.5).abs() < 1e-12);
        assert_eq!(t.verdict(), Verdict::Undecided);
        t.push(0.0);
        assert!((t.within.wealth() - 2.5).abs() < 1e-12);
        assert_eq!(t.verdict(), Verdict::Within);
        assert_eq!(t.decided_at(), Some(2));
        // The outside test never bet: its gap was negative.
        assert_eq!(t.outside.wealth(), 1.0);
        // A loss first: X = 1 with λ = 1 halves the within wealth (1 + 1 * (0.5 - 1)).
        let mut t = Test::new(0.5, 0.5);
        t.push(1.0);
        assert!((t.within.wealth() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bounds_hold_the_mean_and_narrow_with_samples() {
        let xs = vec![0.0; 400];
        let (lo, hi) = bounds(&xs, 0.05);
        assert!(lo < 0.0 && hi > 0.0, "{lo} {hi}");
        assert!(hi < 0.02, "{hi}");
        let (lo2, hi2) = bounds(&xs[..50], 0.05);
        assert!(lo2 <= lo && hi2 >= hi);
        // All ones: the mean is 1 and the upper bound is the edge.
        let (lo, hi) = bounds(&[1.0; 100], 0.05);
        assert_eq!(hi, 1.0);
        assert!(lo > 0.9, "{lo}");
    }
}
