//! The ADC of docs/functional.md, "The datapath in the code's words": a bitline sum to a code.

/// The largest double below one half.
const HALF_BELOW: f64 = 0.499_999_999_999_999_94;

/// code = clamp(round(S / step), 0, 2^bits - 1) * step, round half away from zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Adc {
    /// Positive integer, in cell levels (1: every level distinct).
    pub step: u64,
    /// Largest count, 2^bits - 1.
    pub max_count: u64,
    /// The smallest integer sum that clips: ceil((max_count + 1/2) * step).
    clip_from: u64,
    /// (max_count + 1/2) * step: a real sum at least this clips.
    clip_real: f64,
}

impl Adc {
    pub fn new(bits: u32, step: u64) -> Self {
        let max_count = (1u64 << bits) - 1;
        let twice = (2 * max_count as u128 + 1) * step as u128;
        Adc {
            step,
            max_count,
            clip_from: twice.div_ceil(2).min(u64::MAX as u128) as u64,
            clip_real: (max_count as f64 + 0.5) * step as f64,
        }
    }

    /// Whether the conversion of an ideal sum clips: round(s / step) passes max_count,
    /// i.e. s >= (max_count + 1/2) * step (docs/functional.md, "ADC range").
    #[inline(always)]
    pub fn clips(&self, s: u64) -> bool {
        s >= self.clip_from
    }

    /// [`Self::clips`] of a real sum.
    #[inline(always)]
    pub fn clips_real(&self, s: f64) -> bool {
        s >= self.clip_real
    }

    /// The smallest step at which `bits` bits reach a sum of `range` with their top
    /// code: max(1, ceil(range / (2^bits - 1))). Such an ADC never clips a sum up to
    /// `range`.
    pub fn step_for(bits: u32, range: u64) -> u64 {
        let top = (1u64 << bits) - 1;
        range.div_ceil(top).max(1)
    }

    /// The code of an ideal (integer, non-negative) bitline sum.
    #[inline]
    pub fn convert(&self, s: u64) -> u64 {
        let count = if self.step == 1 {
            s
        } else {
            // round(s / step) half away from zero, for s >= 0.
            (2 * s as u128 + self.step as u128) as u64 / (2 * self.step)
        };
        count.min(self.max_count) * self.step
    }

    /// Whether [`Self::convert_real`] is [`Self::count_below_2_53`] of the sum itself.
    #[inline]
    pub fn unit(&self) -> bool {
        self.step == 1 && self.max_count < 1 << 53
    }

    /// clamp(round(x), 0, max_count) for max_count < 2^53, without a branch: NaN and
    /// every x <= 0 are below one half (count 0); min(max_count) before truncating is
    /// min after it, as max_count is an integer a double holds exactly.
    #[inline(always)]
    pub fn count_below_2_53(&self, x: f64) -> u64 {
        debug_assert!(self.max_count < 1 << 53);
        let y = x + HALF_BELOW;
        let y = if y > 0.0 { y } else { 0.0 };
        let m = self.max_count as f64;
        let y = if y < m { y } else { m };
        // SAFETY: 0 <= y <= max_count < 2^53, a value an i64 holds: the cast
        // truncates without the checks of a saturating one.
        let count = unsafe { y.to_int_unchecked::<i64>() };
        count as u64
    }

    /// [`Self::count_below_2_53`] for max_count < 2^31: the same count, truncated through
    /// a 32-bit integer (a conversion AVX has for four doubles at a time).
    #[inline(always)]
    pub fn count_below_2_31(&self, x: f64) -> u64 {
        debug_assert!(self.max_count < 1 << 31);
        let y = x + HALF_BELOW;
        let y = if y > 0.0 { y } else { 0.0 };
        let m = self.max_count as f64;
        let y = if y < m { y } else { m };
        // SAFETY: 0 <= y <= max_count < 2^31, a value an i32 holds.
        let count = unsafe { y.to_int_unchecked::<i32>() };
        count as u64
    }

    /// The code of a real bitline sum (a non-ideal device): negative sums read 0.
    #[inline]
    pub fn convert_real(&self, s: f64) -> u64 {
        let x = if self.step == 1 {
            s
        } else {
            s / self.step as f64
        };
        if self.max_count < 1 << 53 {
            return self.count_below_2_53(x) * self.step;
        }
        // NaN and sums below one half read 0.
        if x.is_nan() || x <= 0.0 {
            return 0;
        }
        // round(x) for x > 0 without a call to libm's round: the largest double below
        // one half added, then truncated (the cast, which saturates); exact at every
        // half and beyond 2^52, as `f64::round` is.
        let count = (x + HALF_BELOW) as u64;
        count.min(self.max_count) * self.step
    }
}

/// Converter errors (docs/functional.md, "Converter errors"): an ADC's offset, gain error
/// and integral non-linearity, and the input DAC's noise. All 0 (empty) by default.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Converter {
    /// `adc.offset`: added to every conversion's input, in LSB (counts).
    pub offset: f64,
    /// `adc.gain_error`: the input is scaled by 1 + gain_error.
    pub gain_error: f64,
    /// `adc.inl`: INL in LSB at evenly spaced points of the count range [0, 2^bits - 1]
    /// (the first at 0, the last at the top count), interpolated linearly. Empty: none.
    pub inl: Vec<f64>,
    /// `dac.noise`: each driven row's digit d becomes d + noise z (in DAC LSB), z drawn
    /// per row per read cycle.
    pub dac_noise: f64,
}

impl Converter {
    /// Whether every error is off.
    pub fn is_ideal(&self) -> bool {
        self.offset == 0.0 && self.gain_error == 0.0 && self.inl.is_empty() && self.dac_noise == 0.0
    }

    /// Whether the ADC's transfer is changed (offset, gain or INL).
    pub fn adc_errors(&self) -> bool {
        self.offset != 0.0 || self.gain_error != 0.0 || !self.inl.is_empty()
    }

    /// The first invalid setting as `key: message`.
    pub fn validate(&self) -> Result<(), String> {
        if !self.offset.is_finite() {
            return Err(format!(
                "adc.offset: {} is not a finite number",
                self.offset
            ));
        }
        if !(self.gain_error.is_finite() && self.gain_error > -1.0) {
            return Err(format!(
                "adc.gain_error: {} is not a finite number > -1",
                self.gain_error
            ));
        }
        if let Some(x) = self.inl.iter().find(|x| !x.is_finite()) {
            return Err(format!("adc.inl: {x} is not a finite number of LSB"));
        }
        if self.inl.len() == 1 {
            return Err("adc.inl: one point; give at least 2 (the first at count 0, the last at the top count)".into());
        }
        if !(self.dac_noise.is_finite() && self.dac_noise >= 0.0) {
            return Err(format!(
                "dac.noise: {} is not a finite number >= 0",
                self.dac_noise
            ));
        }
        Ok(())
    }

    /// The INL at count position `x` (linear between the table's points, held beyond).
    pub fn inl_at(&self, x: f64, max_count: u64) -> f64 {
        let n = self.inl.len();
        if n < 2 {
            return 0.0;
        }
        let pos = (x / max_count as f64 * (n - 1) as f64).clamp(0.0, (n - 1) as f64);
        let i = (pos.floor() as usize).min(n - 2);
        let f = pos - i as f64;
        self.inl[i] + f * (self.inl[i + 1] - self.inl[i])
    }

    /// The sum the ADC sees for a bitline sum `s` (cell levels): with x = s / step in
    /// counts, x' = (1 + gain_error) x + offset + INL(x), returned as x' * step.
    #[inline]
    pub fn adc_input(&self, s: f64, adc: &Adc) -> f64 {
        let step = adc.step as f64;
        let x = s / step;
        let y = (1.0 + self.gain_error) * x + self.offset + self.inl_at(x, adc.max_count);
        y * step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_half_away_and_clips() {
        // 3 bits: counts 0..=7. step 1: identity below 7.
        let a = Adc::new(3, 1);
        assert_eq!([0, 5, 7, 8, 100].map(|s| a.convert(s)), [0, 5, 7, 7, 7]);
        // step 2: 3 -> round(1.5) = 2 -> 4; 5 -> round(2.5) = 3 -> 6; 1 -> round(.5) = 1 -> 2
        let b = Adc::new(3, 2);
        assert_eq!(
            [0, 1, 2, 3, 5, 14, 15, 40].map(|s| b.convert(s)),
            [0, 2, 2, 4, 6, 14, 14, 14]
        );
        assert_eq!(
            [-3.0, 2.9, 3.0, 1e30].map(|s| b.convert_real(s)),
            [0, 2, 4, 14]
        );
        // The same rounding as f64::round, at halves, near them and far away.
        let d = Adc::new(63, 1);
        let mut h = 7u64;
        for i in 0..100_000u64 {
            h = crate::rng::mix(h ^ i);
            let x = match i % 4 {
                0 => (h >> 40) as f64 + 0.5,
                1 => crate::rng::uniform(h) * 8.0,
                2 => f64::from_bits(h >> 2),
                _ => ((h >> 11) as f64 + 0.5) * (1u64 << (i % 11)) as f64,
            };
            assert_eq!(
                d.convert_real(x),
                (x.round() as u64).min(d.max_count),
                "{x}"
            );
        }
        for x in [
            0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            4_503_599_627_370_497.0,
        ] {
            assert_eq!(d.convert_real(x), x.round() as u64, "{x}");
        }
        // The branch-free path (max_count < 2^53) against the definition, at every
        // kind of input including NaN, infinities, negatives and clipping.
        for bits in [1u32, 3, 8, 20, 52, 53, 63] {
            for step in [1u64, 2, 3] {
                let a = Adc::new(bits, step);
                if a.max_count.checked_mul(step).is_none() {
                    continue;
                }
                let mut h = bits as u64 * 31 + step;
                for i in 0..20_000u64 {
                    h = crate::rng::mix(h ^ i);
                    let x = match i % 6 {
                        0 => (h >> 40) as f64 + 0.5 - 2.0,
                        1 => crate::rng::uniform(h) * 40.0 - 4.0,
                        2 => f64::from_bits(h),
                        3 => [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0][(h % 4) as usize],
                        4 => ((h >> 11) as f64) * (1u64 << (i % 13)) as f64,
                        _ => (h >> (i % 64)) as f64 + 0.5,
                    };
                    let v = x / step as f64;
                    let want = if v.is_nan() || v <= 0.0 {
                        0
                    } else {
                        (v.round() as u64).min(a.max_count) * step
                    };
                    assert_eq!(a.convert_real(x), want, "bits {bits} step {step} x {x}");
                }
            }
        }
        let c = Adc::new(32, 1);
        assert_eq!(c.convert(u32::MAX as u64 + 5), u32::MAX as u64);
    }

    #[test]
    fn a_sum_clips_iff_its_code_is_not_its_rounded_count() {
        for bits in [1u32, 2, 3, 5] {
            for step in [1u64, 2, 3, 7] {
                let a = Adc::new(bits, step);
                for s in 0..200u64 {
                    let unclamped = (2 * s + step) / (2 * step);
                    assert_eq!(a.clips(s), unclamped > a.max_count, "{bits} {step} {s}");
                    let x = s as f64 + 0.25;
                    let clipped_real = (x / step as f64).round() as u64 > a.max_count;
                    assert_eq!(a.clips_real(x), clipped_real, "{bits} {step} {x}");
                }
            }
        }
        // 2 bits reach 27 (a 9-row OU of 2-bit cells) with step 9: 3 * 9 = 27.
        assert_eq!(Adc::step_for(2, 27), 9);
        assert_eq!(Adc::step_for(5, 27), 1);
        assert_eq!(Adc::step_for(4, 0), 1);
        assert!(!Adc::new(2, 9).clips(27) && !Adc::new(2, 9).clips(31));
        assert!(Adc::new(2, 9).clips(32));
    }
}
