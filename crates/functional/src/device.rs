//! Non-ideal devices (docs/functional.md, "Non-ideal devices"): what a read of real cells returns.
//!
//! In one read, in this order: stuck-at faults (when the cells are programmed), the
//! conductance of each cell g(c) = c + g_off with lognormal variation, the bitline
//! current I, read noise growing with sqrt(I), IR-drop attenuation growing with the
//! wordlines open, and the reference column that removes the nominal off current; or,
//! with an error table, a draw of the observed sum from the table's row. Every draw is a
//! counter-based function of the seed and its key ([`crate::rng`]).

use crate::rng::{hash, mix, normal, uniform};
use std::collections::HashMap;

/// The `[device]` settings; [`Device::default`] is the ideal device.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// R > 1: a cell at level c conducts c + L / (R - 1); None: no off current.
    pub on_off_ratio: Option<f64>,
    /// Lognormal programming variation: G = g(c) * exp(sigma * z).
    pub sigma: f64,
    pub stuck_at_0: f64,
    pub stuck_at_1: f64,
    /// Read noise: I + read_noise * sqrt(I) * z' per bitline per read.
    pub read_noise: f64,
    /// Attenuation max(0, 1 - ir_drop * open).
    pub ir_drop: f64,
    pub error_table: Option<ErrorTable>,
    pub seed: u64,
    /// How read noise is drawn (the same law either way).
    pub sampler: Sampler,
    /// Programming noise by target conductance, drift and relaxation over time
    /// ([`crate::aging`]): off by default.
    pub aging: crate::aging::Aging,
    /// `device.drift_compensation`: each layer's outputs scaled by a gain calibrated on
    /// calibration samples at read time ([`crate::compensation_gains`]).
    pub drift_compensation: bool,
    /// ADC offset, gain error and INL, DAC noise: off by default.
    pub converter: crate::adc::Converter,
    /// `device.levels`: each level's conductance law as its source states it (replaces
    /// `on_off_ratio` and `sigma`); none by default.
    pub levels: crate::levels::Levels,
    /// `device.reference`: what the reference column's off current does over time.
    pub reference: Reference,
}

/// `device.reference`: the reference column that removes the off current
/// (docs/functional.md, "Non-ideal devices").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reference {
    /// Off cells of the same device, trimmed to the nominal off current when programmed
    /// and drifting with the device after: at time t the mean conductance of a cell at
    /// the bottom level under the drift law (the default).
    #[default]
    Device,
    /// The nominal off current at every time (a reference that does not age).
    Nominal,
}

impl Reference {
    pub const NAMES: [&'static str; 2] = ["device", "nominal"];

    /// The reference named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "device" => Some(Reference::Device),
            "nominal" => Some(Reference::Nominal),
            _ => None,
        }
    }
}

/// `device.sampler`: how read noise is drawn (docs/functional.md, "Samplers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sampler {
    /// Each read's code drawn from the closed-form law of its class of read: one
    /// uniform per read looked up in an alias table where codes change often, geometric
    /// gaps per class (a draw only where a code changes) where they rarely do; the same
    /// law of every read as `PerRead`, other draws (the default).
    #[default]
    Skip,
    /// A normal draw per read that carries current, keyed by the read: the draws of
    /// every release before the default changed, bit for bit.
    PerRead,
}

impl Sampler {
    pub const NAMES: [&'static str; 2] = ["skip", "per-read"];

    /// The sampler named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "skip" => Some(Sampler::Skip),
            "per-read" => Some(Sampler::PerRead),
            _ => None,
        }
    }
}

impl Default for Device {
    fn default() -> Self {
        Device {
            on_off_ratio: None,
            sigma: 0.0,
            stuck_at_0: 0.0,
            stuck_at_1: 0.0,
            read_noise: 0.0,
            ir_drop: 0.0,
            error_table: None,
            seed: 1,
            sampler: Sampler::default(),
            aging: crate::aging::Aging {
                drift_t0_s: DRIFT_T0_S,
                ..Default::default()
            },
            drift_compensation: false,
            converter: Default::default(),
            levels: Default::default(),
            reference: Reference::default(),
        }
    }
}

/// The default `device.drift_t0_s` (seconds): the first read after programming of the
/// PCM drift law ([`crate::aging`]).
pub const DRIFT_T0_S: f64 = 20.0;

/// Key words that tell the kinds of draws apart (crate::aging uses 4..=7).
const STUCK: u64 = 1;
const VARIATION: u64 = 2;
const READ: u64 = 3;
const DAC: u64 = 8;

impl Device {
    /// The first invalid setting as `key: message`.
    pub fn validate(&self) -> Result<(), String> {
        let prob = |key: &str, p: f64| {
            if (0.0..=1.0).contains(&p) {
                Ok(())
            } else {
                Err(format!(
                    "{key}: {} is not a probability in [0, 1]",
                    bounds::finite::short(p)
                ))
            }
        };
        let non_neg = |key: &str, x: f64| {
            if x.is_finite() && x >= 0.0 {
                Ok(())
            } else {
                Err(format!(
                    "{key}: {} is not a finite number >= 0",
                    bounds::finite::short(x)
                ))
            }
        };
        if let Some(r) = self.on_off_ratio {
            if !(r.is_finite() && r > 1.0) {
                return Err(format!(
                    "device.on_off_ratio: {} is not a ratio > 1 (0 leaves it unset)",
                    bounds::finite::short(r)
                ));
            }
        }
        non_neg("device.sigma", self.sigma)?;
        prob("device.stuck_at_0", self.stuck_at_0)?;
        prob("device.stuck_at_1", self.stuck_at_1)?;
        if self.stuck_at_0 + self.stuck_at_1 > 1.0 {
            return Err(format!(
                "device.stuck_at_1: stuck_at_0 + stuck_at_1 = {} exceeds 1",
                bounds::finite::short(self.stuck_at_0 + self.stuck_at_1)
            ));
        }
        non_neg("device.read_noise", self.read_noise)?;
        non_neg("device.ir_drop", self.ir_drop)?;
        if self.levels.active() {
            if self.on_off_ratio.is_some() {
                return Err("device.on_off_ratio: not with device.levels (the table's lowest state is the off current)".into());
            }
            if self.sigma > 0.0 {
                return Err(
                    "device.sigma: not with device.levels (the table gives each level's spread)"
                        .into(),
                );
            }
            if !self.aging.prog_noise.is_empty() {
                return Err("device.prog_noise: not with device.levels (the table gives each level's programming spread)".into());
            }
        }
        self.aging.validate()?;
        self.converter.validate()
    }

    /// Whether reads are exact (no setting changes a value).
    pub fn is_ideal(&self) -> bool {
        self.stuck_at_0 == 0.0
            && self.stuck_at_1 == 0.0
            && !self.analog()
            && self.error_table.is_none()
            && self.converter.is_ideal()
    }

    /// Whether reads need the analog path (anything but stuck-at faults, no table).
    pub fn analog(&self) -> bool {
        self.error_table.is_none()
            && (self.on_off_ratio.is_some()
                || self.sigma > 0.0
                || self.levels.active()
                || self.read_noise > 0.0
                || self.ir_drop > 0.0
                || self.aging.active()
                || !self.converter.is_ideal())
    }

    /// Whether each cell's conductance must be computed (variation, off current,
    /// programming noise, drift or relaxation), or a read goes through the converter
    /// errors (which the per-cell read applies).
    pub fn per_cell(&self) -> bool {
        self.error_table.is_none()
            && (self.on_off_ratio.is_some()
                || self.sigma > 0.0
                || self.levels.active()
                || self.aging.active()
                || !self.converter.is_ideal())
    }

    /// Whether read noise is drawn by the skip sampler: read noise on ideal cells (stuck-at
    /// faults allowed, they are in the cells); variation, an off current or an error
    /// table draw per read whatever the sampler (docs/functional.md, "Samplers").
    pub fn skips(&self) -> bool {
        self.sampler == Sampler::Skip
            && self.read_noise > 0.0
            && self.error_table.is_none()
            && !self.per_cell()
    }

    /// g_off = L / (R - 1), 0 without an on/off ratio; with `device.levels` the bottom
    /// level's mean conductance in cell levels.
    pub fn g_off(&self, top: u32) -> f64 {
        if self.levels.active() {
            return self.levels.g_off(top);
        }
        self.on_off_ratio.map_or(0.0, |r| top as f64 / (r - 1.0))
    }

    /// The reference column's current per unit of applied digit: [`Device::g_off`], at
    /// `device.time_s` times the mean drift of an off cell with `device.reference =
    /// device` (exactly g_off without drift, at time 0, or with a nominal reference).
    pub fn reference_off(&self, top: u32) -> f64 {
        let g_off = self.g_off(top);
        if self.reference == Reference::Nominal || g_off == 0.0 {
            return g_off;
        }
        let drift = self.aging.mean_drift(g_off / (top as f64 + g_off));
        if drift == 1.0 {
            g_off
        } else {
            g_off * drift
        }
    }

    /// The level a cell holds after stuck-at faults. `cell` = (layer, polarity, k, n, s).
    #[inline]
    pub fn programmed(&self, cell: [u64; 5], level: u32, top: u32) -> u32 {
        if self.stuck_at_0 == 0.0 && self.stuck_at_1 == 0.0 {
            return level;
        }
        let u = uniform(hash(
            self.seed,
            &[STUCK, cell[0], cell[1], cell[2], cell[3], cell[4]],
        ));
        if u < self.stuck_at_0 {
            0
        } else if u < self.stuck_at_0 + self.stuck_at_1 {
            top
        } else {
            level
        }
    }

    /// The conductance of a programmed cell at `level` (`g_top`: the top level's,
    /// L + g_off), at `device.time_s`. With `device.levels` the level's law replaces
    /// g(c) and the lognormal `sigma` (the top level L is g_top - g_off).
    #[inline]
    pub fn conductance(&self, cell: [u64; 5], level: u32, g_off: f64, g_top: f64) -> f64 {
        if self.levels.active() {
            let top = (g_top - g_off).round() as u32;
            let law = self.levels.law(level, top);
            let z = normal(hash(
                self.seed,
                &[VARIATION, cell[0], cell[1], cell[2], cell[3], cell[4]],
            ));
            let g0 = law.draw(z);
            if !self.aging.active() {
                return g0;
            }
            return self.aging.conductance(self.seed, cell, law.mean, g0, g_top);
        }
        let g = level as f64 + g_off;
        let g0 = if self.sigma == 0.0 || g == 0.0 {
            g
        } else {
            let z = normal(hash(
                self.seed,
                &[VARIATION, cell[0], cell[1], cell[2], cell[3], cell[4]],
            ));
            g * (self.sigma * z).exp()
        };
        if !self.aging.active() {
            return g0;
        }
        self.aging.conductance(self.seed, cell, g, g0, g_top)
    }

    /// The digit a DAC applies to physical row `row` in the read cycle of `base`
    /// ([`Device::read_base`]): d + dac.noise z, z per row and cycle.
    #[inline]
    pub fn drive(&self, base: u64, row: usize, d: u32) -> f64 {
        let noise = self.converter.dac_noise;
        if noise == 0.0 {
            return d as f64;
        }
        d as f64 + noise * normal(hash(base, &[DAC, row as u64]))
    }

    /// The part of a read's key shared by the columns of one OU: (layer, conv group, row
    /// tile, vector, pass, cycle).
    #[inline]
    pub fn read_base(
        &self,
        layer: u64,
        group: u32,
        tile: u32,
        vector: u64,
        pass: u64,
        cycle: u32,
    ) -> u64 {
        Device::read_cycle(self.read_tile(layer, group, tile, vector, pass), cycle)
    }

    /// The words of [`Device::read_base`] before the cycle, hashed (shared by a tile's
    /// input cycles in one pass).
    #[inline]
    pub fn read_tile(&self, layer: u64, group: u32, tile: u32, vector: u64, pass: u64) -> u64 {
        hash(
            self.seed,
            &[READ, layer, group as u64, tile as u64, vector, pass],
        )
    }

    /// [`Device::read_base`] from [`Device::read_tile`]: the hash's last word, the cycle.
    #[inline(always)]
    pub fn read_cycle(tile: u64, cycle: u32) -> u64 {
        mix(tile ^ cycle as u64)
    }

    /// The hash of a read's whole key: [`Device::read_base`], then (polarity, physical
    /// column, OU index) packed into one word (column in bits 0..32, polarity bit 32,
    /// OU index from bit 33: one-to-one for the OU indices of any crossbar, fewer than
    /// 2^31) and mixed once: the reads of one tile and cycle get distinct hashes, as
    /// the mixer is a bijection. `column`: the column's [`Device::read_word`].
    #[inline(always)]
    pub fn read_hash(base: u64, column: u64, ou: u64) -> u64 {
        mix(base ^ (ou << 33 | column))
    }

    /// A column's bits of [`Device::read_hash`]'s word: its physical column in bits
    /// 0..32, its polarity (1: negative) in bit 32.
    pub fn read_word(neg: bool, column: u32) -> u64 {
        (neg as u64) << 32 | column as u64
    }

    /// S' of a read of current `current` with `open` wordlines driven and `drive` =
    /// sum of the digits applied (the reference column's off current is drive * g_off);
    /// `read` is the read's hash ([`Device::read_hash`]).
    #[inline]
    pub fn analog_sum(&self, current: f64, open: u32, drive: u64, g_off: f64, read: u64) -> f64 {
        self.attenuation(open) * self.noisy(current, read) - drive as f64 * g_off
    }

    /// I + read_noise * sqrt(I) * z' (I itself without read noise or current).
    #[inline(always)]
    pub fn noisy(&self, current: f64, read: u64) -> f64 {
        if self.read_noise > 0.0 && current > 0.0 {
            current + self.read_noise * current.sqrt() * normal(read)
        } else {
            current
        }
    }

    /// The IR-drop factor max(0, 1 - ir_drop * open) of a read with `open` wordlines.
    #[inline(always)]
    pub fn attenuation(&self, open: u32) -> f64 {
        (1.0 - self.ir_drop * open as f64).max(0.0)
    }

    /// The table's draw for an ideal sum `s` read with `open` wordlines.
    #[inline]
    pub fn table_sum(&self, t: &ErrorTable, s: u64, open: u32, read: u64) -> f64 {
        let Some(rows) = t.rows.get(&(open, s)) else {
            return s as f64;
        };
        let u = uniform(read);
        rows.iter()
            .find(|(cum, _)| u < *cum)
            .or(rows.last())
            .map_or(s as f64, |&(_, o)| o)
    }
}

/// A DL-RSim-style error table: per (open wordlines, ideal sum), the distribution of
/// the observed sum.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorTable {
    /// (open, ideal) -> (cumulative probability, observed sum), in file order.
    rows: HashMap<(u32, u64), Vec<(f64, f64)>>,
    /// The largest open_wordlines the table describes.
    pub max_open: u32,
}

impl ErrorTable {
    /// Parses CSV `open_wordlines,ideal_sum,observed_sum,probability`; errors name the
    /// file (`label`), the line and the field.
    pub fn parse(text: &str, label: &str) -> Result<Self, String> {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(text.as_bytes());
        let want = ["open_wordlines", "ideal_sum", "observed_sum", "probability"];
        let header = r.headers().map_err(|e| format!("{label}: line 1: {e}"))?;
        if header.iter().collect::<Vec<_>>() != want {
            return Err(format!("{label}: line 1: header is not {}", want.join(",")));
        }
        let mut rows: HashMap<(u32, u64), Vec<(f64, f64)>> = HashMap::new();
        let mut order: Vec<(u32, u64, u64)> = Vec::new();
        for rec in r.records() {
            let rec = rec.map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                format!("{label}: line {line}: {e}")
            })?;
            let line = rec.position().map_or(0, |p| p.line());
            let at = |i: usize| format!("{label}: line {line}: {}", want[i]);
            if rec.len() != 4 {
                return Err(format!(
                    "{label}: line {line}: {} fields, expected 4",
                    rec.len()
                ));
            }
            let open: u32 = rec[0]
                .parse()
                .map_err(|_| format!("{}: '{}' is not a count of wordlines", at(0), &rec[0]))?;
            let ideal: u64 = rec[1]
                .parse()
                .map_err(|_| format!("{}: '{}' is not a non-negative integer", at(1), &rec[1]))?;
            let observed: f64 = rec[2]
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite())
                .ok_or_else(|| format!("{}: '{}' is not a finite number", at(2), &rec[2]))?;
            let p: f64 = rec[3]
                .parse()
                .ok()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| {
                    format!("{}: '{}' is not a probability in [0, 1]", at(3), &rec[3])
                })?;
            let entry = rows.entry((open, ideal)).or_default();
            if entry.is_empty() {
                order.push((open, ideal, line));
            }
            let cum = entry.last().map_or(0.0, |e| e.0) + p;
            entry.push((cum, observed));
        }
        for (open, ideal, line) in order {
            let total = rows[&(open, ideal)].last().map_or(0.0, |e| e.0);
            if (total - 1.0).abs() > 1e-6 {
                return Err(format!(
                    "{label}: line {line}: probability: the rows of open_wordlines {open}, ideal_sum {ideal} sum to {total}, not 1"
                ));
            }
        }
        let max_open = rows.keys().map(|k| k.0).max().unwrap_or(0);
        Ok(ErrorTable { rows, max_open })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_and_name_the_line_and_field_at_fault() {
        let ok = "open_wordlines,ideal_sum,observed_sum,probability\n2,1,1,0.75\n2,1,2,0.25\n";
        let t = ErrorTable::parse(ok, "t.csv").unwrap();
        assert_eq!(t.max_open, 2);
        let bad = |body: &str| {
            ErrorTable::parse(
                &format!("open_wordlines,ideal_sum,observed_sum,probability\n{body}"),
                "t.csv",
            )
            .unwrap_err()
        };
        assert_eq!(
            bad("2,1,1,0.5\n2,1,2,0.25\n"),
            "t.csv: line 2: probability: the rows of open_wordlines 2, ideal_sum 1 sum to 0.75, not 1"
        );
        assert_eq!(
            bad("2,1,1,1.5\n"),
            "t.csv: line 2: probability: '1.5' is not a probability in [0, 1]"
        );
        assert_eq!(
            bad("2,x,1,1\n"),
            "t.csv: line 2: ideal_sum: 'x' is not a non-negative integer"
        );
        assert_eq!(
            bad("2,1,1,1\n3,1\n").split(':').take(2).collect::<Vec<_>>(),
            ["t.csv", " line 3"]
        );
        assert!(ErrorTable::parse("a,b\n", "t.csv")
            .unwrap_err()
            .starts_with("t.csv: line 1: header"));
    }

    #[test]
    fn settings_are_validated_with_their_key() {
        let bad = |f: fn(&mut Device)| {
            let mut d = Device::default();
            f(&mut d);
            d.validate().unwrap_err()
        };
        assert!(Device::default().validate().is_ok());
        assert!(
            bad(|d| d.stuck_at_0 = 1.5).starts_with("device.stuck_at_0: 1.5 is not a probability")
        );
        assert!(bad(|d| d.sigma = -0.1).starts_with("device.sigma: -0.1"));
        assert!(bad(|d| d.on_off_ratio = Some(1.0)).starts_with("device.on_off_ratio"));
        assert!(bad(|d| {
            d.stuck_at_0 = 0.6;
            d.stuck_at_1 = 0.6
        })
        .starts_with("device.stuck_at_1: stuck_at_0 + stuck_at_1"));
        assert!(bad(|d| d.read_noise = f64::NAN).starts_with("device.read_noise"));
    }

    #[test]
    fn a_read_attenuates_adds_noise_and_removes_the_off_current() {
        let d = Device {
            ir_drop: 0.1,
            ..Device::default()
        };
        // 3 wordlines open: 0.7 * 10 - 0 = 7.
        assert!((d.analog_sum(10.0, 3, 4, 0.0, 0) - 7.0).abs() < 1e-12);
        assert_eq!(d.analog_sum(10.0, 20, 4, 0.0, 0), 0.0);
        let off = Device::default();
        // reference column: 4 digits x g_off 0.5 removed.
        assert_eq!(off.analog_sum(12.0, 3, 4, 0.5, 0), 10.0);
        let noisy = Device {
            read_noise: 0.5,
            ..Device::default()
        };
        // The tile's words hashed once, then the cycle: the hash of all seven words.
        let whole = hash(noisy.seed, &[READ, 1, 2, 3, 4, 5, 6]);
        assert_eq!(noisy.read_base(1, 2, 3, 4, 5, 6), whole);
        let key = Device::read_hash(
            noisy.read_base(1, 2, 3, 4, 5, 6),
            Device::read_word(false, 7),
            8,
        );
        let a = noisy.analog_sum(9.0, 2, 0, 0.0, key);
        assert_eq!(a, noisy.analog_sum(9.0, 2, 0, 0.0, key));
        assert_ne!(a, 9.0);
        assert_eq!(noisy.analog_sum(0.0, 0, 0, 0.0, key), 0.0);
        // stuck-at: p0 = 1 -> every cell 0; p1 = 1 -> every cell at the top level.
        let s0 = Device {
            stuck_at_0: 1.0,
            ..Device::default()
        };
        let s1 = Device {
            stuck_at_1: 1.0,
            ..Device::default()
        };
        assert_eq!(s0.programmed([1, 0, 2, 3, 0], 2, 3), 0);
        assert_eq!(s1.programmed([1, 0, 2, 3, 0], 0, 3), 3);
    }
}
