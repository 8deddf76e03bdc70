//! Cells by level (docs/functional.md, "Cells by level"): each conductance state's mean
//! and spread in the space its source states them (`device.levels`,
//! `device.level_space`, `device.level_sigma`).
//!
//! A table's rows are states in order of increasing conductance, in the source's own
//! unit. A table of exactly one row per level (2^cell_bits rows) gives each level its
//! row. Any other table (at least two rows: the lowest and the highest state, and any
//! measured between) places the levels evenly in mean conductance between its first and
//! last rows, and gives a level between two rows the spread interpolated linearly
//! between them in the space's own coordinate (the conductance, log10 of the resistance,
//! or ln of the conductance), each row placed at its mean conductance.
//!
//! The periphery is calibrated on the means: one cell level is
//! `u = (E_top - E_0) / L` of the source's unit (E the mean conductance of a level), the
//! bottom level's mean `E_0 / u` is the off current `g_off` the reference column
//! removes, and a cell's conductance in cell levels is its draw divided by `u`.

/// `device.level_space`: what the two numbers of a row of `device.levels` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LevelSpace {
    /// `[mean, sd]` of the conductance (any one unit, e.g. µS): Gaussian, clamped at 0.
    #[default]
    Conductance,
    /// `[mean, sd]` of log10 of the resistance (any one unit, e.g. kΩ): lognormal.
    Log10Resistance,
    /// `[mean, sd]` of ln of the conductance, or of a read current at one voltage:
    /// lognormal.
    LnConductance,
}

impl LevelSpace {
    pub const NAMES: [&'static str; 3] = ["conductance", "log10_resistance", "ln_conductance"];

    /// The space named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "conductance" => Some(LevelSpace::Conductance),
            "log10_resistance" => Some(LevelSpace::Log10Resistance),
            "ln_conductance" => Some(LevelSpace::LnConductance),
            _ => None,
        }
    }

    /// The factor from the row's spread to the sd of ln G (lognormal spaces).
    fn ln_scale(self) -> f64 {
        match self {
            LevelSpace::Conductance | LevelSpace::LnConductance => 1.0,
            LevelSpace::Log10Resistance => std::f64::consts::LN_10,
        }
    }

    /// The space's coordinate of a state of mean conductance `e` (the source's unit).
    fn coordinate(self, e: f64) -> f64 {
        match self {
            LevelSpace::Conductance => e,
            LevelSpace::Log10Resistance => -e.log10(),
            LevelSpace::LnConductance => e.ln(),
        }
    }
}

/// How a level's conductance spreads about its mean (in cell levels).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spread {
    /// Gaussian of this sd, the conductance clamped at 0.
    Normal(f64),
    /// Lognormal: ln G has this sd.
    LogNormal(f64),
}

/// The law of one level's programmed conductance, in cell levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Law {
    /// The mean conductance.
    pub mean: f64,
    pub spread: Spread,
}

impl Law {
    /// The conductance of a cell whose standard normal draw is `z`: Gaussian
    /// `max(0, mean + sd z)`, or lognormal `mean exp(s z - s^2 / 2)` (its mean `mean`).
    #[inline]
    pub fn draw(&self, z: f64) -> f64 {
        match self.spread {
            Spread::Normal(sd) => (self.mean + sd * z).max(0.0),
            Spread::LogNormal(s) => self.mean * (s * z - 0.5 * s * s).exp(),
        }
    }

    /// The standard deviation of the conductance (the Gaussian's before its clamp).
    pub fn sd(&self) -> f64 {
        match self.spread {
            Spread::Normal(sd) => sd,
            Spread::LogNormal(s) => self.mean * (s * s).exp_m1().sqrt(),
        }
    }
}

/// `device.levels` with its space and its spread polynomial: none by default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Levels {
    space: LevelSpace,
    /// The rows as given: [centre, spread] or [centre] (with `sigma`).
    rows: Vec<Vec<f64>>,
    /// `device.level_sigma`: the sd as a polynomial of the mean conductance (conductance
    /// space only); empty: each row's own spread.
    sigma: Vec<f64>,
    /// Per row: (mean conductance E, coordinate, spread in the space's terms).
    states: Vec<(f64, f64, f64)>,
}

impl Levels {
    /// The table of `rows` in `space`, its spreads from `sigma` when that is not empty;
    /// an empty `rows` is no table. Errors name the key and row at fault.
    pub fn new(space: LevelSpace, rows: Vec<Vec<f64>>, sigma: Vec<f64>) -> Result<Self, String> {
        if rows.is_empty() {
            if !sigma.is_empty() {
                return Err("device.level_sigma: needs device.levels (the levels' means)".into());
            }
            return Ok(Levels::default());
        }
        if let Some(x) = sigma.iter().find(|x| !x.is_finite()) {
            return Err(format!("device.level_sigma: {x} is not a finite number"));
        }
        if !sigma.is_empty() && space != LevelSpace::Conductance {
            return Err(
                "device.level_sigma: a polynomial of the conductance, only with device.level_space = \"conductance\""
                    .into(),
            );
        }
        if rows.len() < 2 {
            return Err(
                "device.levels: at least two rows (the lowest and the highest state)".into(),
            );
        }
        let want = if sigma.is_empty() { 2 } else { 1 };
        let mut states = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            let at = format!("device.levels: row {}", i + 1);
            if r.len() != want {
                return Err(if sigma.is_empty() {
                    format!("{at}: {} values, expected [mean, sd]", r.len())
                } else {
                    format!(
                        "{at}: {} values, expected [mean] (device.level_sigma gives the sd)",
                        r.len()
                    )
                });
            }
            if let Some(x) = r.iter().find(|x| !x.is_finite()) {
                return Err(format!("{at}: {x} is not a finite number"));
            }
            let centre = r[0];
            let spread = if sigma.is_empty() {
                r[1]
            } else {
                crate::math::poly(&sigma, centre).max(0.0)
            };
            if spread < 0.0 {
                return Err(format!("{at}: sd {spread} is below 0"));
            }
            let mean = match space {
                LevelSpace::Conductance => {
                    if centre < 0.0 {
                        return Err(format!("{at}: a mean conductance {centre} below 0"));
                    }
                    centre
                }
                LevelSpace::Log10Resistance | LevelSpace::LnConductance => {
                    let s = spread * space.ln_scale();
                    let median = if space == LevelSpace::Log10Resistance {
                        10f64.powf(-centre)
                    } else {
                        centre.exp()
                    };
                    median * (0.5 * s * s).exp()
                }
            };
            if !(mean.is_finite() && (mean > 0.0 || space == LevelSpace::Conductance)) {
                return Err(format!(
                    "{at}: its mean conductance {mean} is not a finite number > 0"
                ));
            }
            if let Some(&(prev, _, _)) = states.last() {
                if mean <= prev {
                    return Err(format!(
                        "{at}: the rows' mean conductances must increase from row to row (lowest state first)"
                    ));
                }
            }
            let coordinate = if space == LevelSpace::Conductance {
                mean
            } else {
                space.coordinate(mean)
            };
            states.push((mean, coordinate, spread));
        }
        Ok(Levels {
            space,
            rows,
            sigma,
            states,
        })
    }

    /// Whether a table is set.
    pub fn active(&self) -> bool {
        !self.states.is_empty()
    }

    /// Whether a cell's conductance depends on its draw: some state has a spread.
    pub fn random(&self) -> bool {
        self.states.iter().any(|s| s.2 > 0.0) || self.sigma.iter().any(|&c| c != 0.0)
    }

    pub fn space(&self) -> LevelSpace {
        self.space
    }

    pub fn rows(&self) -> &[Vec<f64>] {
        &self.rows
    }

    pub fn sigma(&self) -> &[f64] {
        &self.sigma
    }

    /// (E_0, E_top): the mean conductances of the bottom and top levels.
    fn ends(&self) -> (f64, f64) {
        let first = self.states.first().map_or(0.0, |s| s.0);
        let last = self.states.last().map_or(1.0, |s| s.0);
        (first, last)
    }

    /// One cell level in the source's unit: (E_top - E_0) / L.
    pub fn unit(&self, top: u32) -> f64 {
        let (e0, e1) = self.ends();
        (e1 - e0) / top.max(1) as f64
    }

    /// The bottom level's mean conductance in cell levels: the off current.
    pub fn g_off(&self, top: u32) -> f64 {
        self.ends().0 / self.unit(top)
    }

    /// The law of level `level` of cells whose top level is `top`, in cell levels.
    pub fn law(&self, level: u32, top: u32) -> Law {
        let u = self.unit(top);
        let (mean, spread) = if self.states.len() == top as usize + 1 {
            let s = self.states[level as usize];
            (s.0, s.2)
        } else {
            let (e0, e1) = self.ends();
            let e = e0 + (e1 - e0) * level as f64 / top.max(1) as f64;
            let spread = if self.sigma.is_empty() {
                self.interpolated(e)
            } else {
                crate::math::poly(&self.sigma, e).max(0.0)
            };
            (e, spread)
        };
        let spread = match self.space {
            LevelSpace::Conductance => Spread::Normal(spread / u),
            space => Spread::LogNormal(spread * space.ln_scale()),
        };
        Law {
            mean: mean / u,
            spread,
        }
    }

    /// The spread at mean conductance `e`, linear in the space's coordinate between the
    /// two rows whose means bracket it (the end rows' at and beyond the ends).
    fn interpolated(&self, e: f64) -> f64 {
        let st = &self.states;
        let Some(seg) = st.windows(2).find(|w| e <= w[1].0).or(st.windows(2).last()) else {
            return st.first().map_or(0.0, |s| s.2);
        };
        let (a, b) = (seg[0], seg[1]);
        if e <= a.0 {
            return a.2;
        }
        if e >= b.0 {
            return b.2;
        }
        let x = self.space.coordinate(e);
        let f = (x - a.1) / (b.1 - a.1);
        a.2 + f * (b.2 - a.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_states_in_log10_resistance_make_evenly_spaced_lognormal_levels() {
        // HRS log10 N(2.62, 0.38), LRS log10 N(1.34, 0.06) kohm (DL-RSim).
        let t = Levels::new(
            LevelSpace::Log10Resistance,
            vec![vec![2.62, 0.38], vec![1.34, 0.06]],
            vec![],
        )
        .unwrap();
        let ln10 = std::f64::consts::LN_10;
        let mean = |m: f64, s: f64| 10f64.powf(-m) * (0.5 * (s * ln10).powi(2)).exp();
        let (e0, e1) = (mean(2.62, 0.38), mean(1.34, 0.06));
        // One-bit cells: each state is its row.
        let u = e1 - e0;
        assert!((t.g_off(1) - e0 / u).abs() < 1e-12);
        let hrs = t.law(0, 1);
        assert!((hrs.mean - e0 / u).abs() < 1e-12);
        assert_eq!(hrs.spread, Spread::LogNormal(0.38 * ln10));
        assert_eq!(t.law(1, 1).spread, Spread::LogNormal(0.06 * ln10));
        // Two-bit cells: levels evenly spaced in mean conductance, g(c) = c + g_off.
        for c in 0..=3 {
            let l = t.law(c, 3);
            assert!((l.mean - (c as f64 + t.g_off(3))).abs() < 1e-9, "level {c}");
        }
        // Level 1's spread: linear in log10 R between the rows, at its mean's log10 R.
        let e = e0 + (e1 - e0) / 3.0;
        let f = (-e.log10() + e0.log10()) / (-e1.log10() + e0.log10());
        let want = (0.38 + f * (0.06 - 0.38)) * ln10;
        match t.law(1, 3).spread {
            Spread::LogNormal(s) => assert!((s - want).abs() < 1e-12),
            s => panic!("{s:?}"),
        }
    }

    #[test]
    fn a_polynomial_sd_of_the_conductance_is_the_sources_at_every_level() {
        // CrossSim's RRAM_Milo: sd = 4.782321 - 0.009107 G uS over 50..225 uS.
        let t = Levels::new(
            LevelSpace::Conductance,
            vec![vec![50.0], vec![225.0]],
            vec![4.782321, -0.009107],
        )
        .unwrap();
        for top in [1u32, 3, 15] {
            let u = 175.0 / top as f64;
            for c in 0..=top {
                let g = 50.0 + c as f64 * u;
                let l = t.law(c, top);
                assert!((l.mean * u - g).abs() < 1e-9);
                assert!((l.sd() * u - (4.782321 - 0.009107 * g)).abs() < 1e-12);
            }
        }
        // 225 / 50 = 4.5: g_off = L / 3.5.
        assert!((t.g_off(3) - 3.0 / 3.5).abs() < 1e-12);
    }

    #[test]
    fn one_row_per_level_gives_each_level_its_row() {
        let rows = vec![
            vec![1.0, 0.1],
            vec![3.0, 0.2],
            vec![6.0, 0.3],
            vec![7.0, 0.4],
        ];
        let t = Levels::new(LevelSpace::Conductance, rows.clone(), vec![]).unwrap();
        let u = 2.0; // (7 - 1) / 3
        for (c, r) in rows.iter().enumerate() {
            let l = t.law(c as u32, 3);
            assert_eq!(l.mean, r[0] / u);
            assert_eq!(l.spread, Spread::Normal(r[1] / u));
        }
        // With 1-bit cells the same table's ends are the two levels, the rows between
        // giving nothing but the spread in between.
        assert_eq!(t.law(1, 1).mean, 7.0 / 6.0);
        // A 3-bit cell interpolates: level 2 sits at 1 + 2 * 6 / 7 = 2.714 uS, between
        // rows 1 and 2: 0.1 + (1.714 / 2) * 0.1.
        let l = t.law(2, 7);
        let e = 1.0 + 12.0 / 7.0;
        assert!((l.mean - e / (6.0 / 7.0)).abs() < 1e-12);
        assert!((l.sd() - (0.1 + (e - 1.0) / 2.0 * 0.1) / (6.0 / 7.0)).abs() < 1e-12);
    }

    #[test]
    fn draws_follow_the_law() {
        let l = Law {
            mean: 2.0,
            spread: Spread::LogNormal(0.5),
        };
        // The median of a lognormal of mean 2: 2 exp(-s^2 / 2).
        assert!((l.draw(0.0) - 2.0 * (-0.125f64).exp()).abs() < 1e-15);
        let n = Law {
            mean: 1.0,
            spread: Spread::Normal(0.5),
        };
        assert_eq!(n.draw(1.0), 1.5);
        assert_eq!(n.draw(-3.0), 0.0);
        assert!((l.sd() - 2.0 * (0.25f64.exp_m1()).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn malformed_tables_are_refused_with_their_key_and_row() {
        let c = LevelSpace::Conductance;
        let err = |space, rows: Vec<Vec<f64>>, sigma: Vec<f64>| {
            Levels::new(space, rows, sigma).unwrap_err()
        };
        assert!(err(c, vec![vec![1.0, 0.1]], vec![]).starts_with("device.levels: at least two"));
        assert_eq!(
            err(c, vec![vec![1.0, 0.1], vec![1.0, 0.1]], vec![]),
            "device.levels: row 2: the rows' mean conductances must increase from row to row (lowest state first)"
        );
        assert_eq!(
            err(c, vec![vec![1.0], vec![2.0]], vec![]),
            "device.levels: row 1: 1 values, expected [mean, sd]"
        );
        assert!(err(c, vec![vec![1.0, 0.1], vec![2.0, 0.1]], vec![0.1])
            .starts_with("device.levels: row 1: 2 values, expected [mean]"));
        assert!(err(c, vec![vec![1.0, -0.1], vec![2.0, 0.1]], vec![])
            .starts_with("device.levels: row 1: sd -0.1"));
        assert!(err(c, vec![vec![-1.0, 0.1], vec![2.0, 0.1]], vec![])
            .starts_with("device.levels: row 1: a mean conductance -1"));
        assert!(err(c, vec![vec![f64::NAN, 0.1], vec![2.0, 0.1]], vec![])
            .starts_with("device.levels: row 1: NaN"));
        // Resistance falls as conductance rises: log10 R must decrease.
        assert!(err(
            LevelSpace::Log10Resistance,
            vec![vec![1.34, 0.06], vec![2.62, 0.38]],
            vec![]
        )
        .starts_with("device.levels: row 2: the rows' mean"));
        assert!(err(
            LevelSpace::Log10Resistance,
            vec![vec![2.0], vec![1.0]],
            vec![0.1]
        )
        .starts_with("device.level_sigma: a polynomial"));
        assert!(err(c, vec![], vec![0.1]).starts_with("device.level_sigma: needs"));
        assert!(err(
            LevelSpace::Log10Resistance,
            vec![vec![-400.0, 0.1], vec![-500.0, 0.1]],
            vec![]
        )
        .contains("is not a finite number > 0"));
        assert!(!Levels::default().active());
    }
}
