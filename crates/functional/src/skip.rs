//! Read noise drawn only where it changes a code (docs/functional.md, "Samplers").
//!
//! A read of ideal sum I with `open` wordlines open returns, under read noise r and IR
//! drop, the code of S' = a (I + r sqrt(I) z), a = max(0, 1 - ir_drop * open): given
//! (I, open) that code has a closed-form law ([`Law`]). Its noise-free code
//! ADC(a I) — the law's mode whenever the ADC does not clip, and the "base" of the
//! construction in every case — is returned by most reads; a read returns another code
//! with probability p(I, open). Reads of one class (I, open) in one stream (a vector of
//! a layer, read in the datapath's fixed order) are independent: the positions of the
//! reads that return another code are a Bernoulli(p) sequence, drawn as geometric gaps,
//! and each such code is drawn from the law conditioned on differing from the base. So
//! one draw per changed code, not one per read, with the law of every read unchanged.
//! A class whose p exceeds [`DIRECT_P`] (strong noise) or whose reads can clip the ADC,
//! and a read whose class is beyond the table, draws its own noise as the per-read
//! sampler does.

use crate::adc::Adc;
use crate::alias::{Lookup, MAX_CLASSES};
use crate::device::Device;
use crate::math::{phi, phi_upper};
use crate::rng::{hash, mix, uniform};
use std::sync::OnceLock;

/// A class whose reads change their code with probability above this draws per read
/// (the skip would cost a draw for most reads anyway).
pub(crate) const DIRECT_P: f64 = 0.1;

/// A mode whose loudest class changes its code with probability at least this draws
/// every read from alias tables ([`crate::alias`]): one hash and a lookup per read.
pub(crate) const LOOKUP_P: f64 = 0.01;

/// Most codes a law keeps besides its base: a class whose law needs more (very strong
/// noise) draws per read.
const MAX_ERRS: usize = 32;

/// The number of classes of a mode's table and the largest sum it holds: reads of up to
/// `open` wordlines of `cell_bits`-bit cells driven with `dac_bits`-bit digits; with IR
/// drop (`by_open`), a class per (open, sum).
pub(crate) fn classes(open: u64, cell_bits: u32, dac_bits: u32, by_open: bool) -> (usize, u64) {
    let top = (1u64 << cell_bits.min(63)) - 1;
    let digit = (1u64 << dac_bits.min(63)) - 1;
    let max_sum = open.saturating_mul(top).saturating_mul(digit);
    let stride = max_sum.saturating_add(1);
    let n = if by_open {
        stride.saturating_mul(open.saturating_add(1))
    } else {
        stride
    };
    (n.min(MAX_CLASSES as u64) as usize, max_sum)
}

/// Upper bound of the bytes a table of `n` classes takes: its laws and alias tables
/// (shared by the threads of a mode) and, per thread, the classes' states.
pub(crate) fn table_bytes(n: usize, threads: usize) -> u128 {
    let law = std::mem::size_of::<OnceLock<Law>>() + MAX_ERRS * 16 + crate::alias::MAX_BYTES;
    let state = std::mem::size_of::<State>();
    n as u128 * (law as u128 + state as u128 * threads.max(1) as u128)
}

/// The conditional law is cut where the rest of a tail is below this fraction of p
/// (far below the 2^-53 resolution of the uniform draw that selects a code).
const TRUNC: f64 = 1e-17;

/// Key word of the skip sampler's streams.
const SKIP: u64 = 4;

/// The law of the code of a read of ideal sum `sum` with `open` wordlines open.
#[derive(Debug)]
pub(crate) struct Law {
    /// The noise-free code ADC(a I).
    pub base: u64,
    /// P(code != base).
    pub p: f64,
    /// ln(1 - p); 0 when p is 0 (no read of the class changes its code).
    ln_q: f64,
    /// A gap of at least `block` reads has probability `q_block` = (1 - p)^block: a
    /// draw in it is settled without a logarithm ([`Law::gap`]); 0 for no block.
    block: u64,
    q_block: f64,
    /// p > the sampler's threshold: every read draws its own noise.
    pub direct: bool,
    /// The codes other than the base, most likely first, with their cumulative
    /// probability conditioned on differing from the base (the last is 1). Empty when
    /// `direct` or p = 0.
    errs: Box<[(f64, u64)]>,
}

impl Law {
    /// The law of ADC(a (I + r sqrt(I) z)) for the device's r and a, I = `sum`.
    pub fn new(dev: &Device, adc: Adc, sum: u64, open: u32, direct_p: f64) -> Law {
        let a = dev.attenuation(open);
        let i = sum as f64;
        let base = adc.convert_real(a * i);
        let step = adc.step as f64;
        let (mu, sigma) = (a * i / step, a * dev.read_noise * i.sqrt() / step);
        let b = base / adc.step;
        let top = adc.max_count;
        let never = Law {
            base,
            p: 0.0,
            ln_q: 0.0,
            block: 0,
            q_block: 0.0,
            direct: false,
            errs: Box::new([]),
        };
        if !(sigma > 0.0 && sigma.is_finite()) {
            return never;
        }
        // Count m is read for m - 1/2 <= S'/step < m + 1/2; 0 below 1/2, top from top - 1/2.
        let z = |x: f64| (x - mu) / sigma;
        let below = if b > 0 { phi(z(b as f64 - 0.5)) } else { 0.0 };
        let above = if b < top {
            phi_upper(z(b as f64 + 0.5))
        } else {
            0.0
        };
        let p = below + above;
        if p == 0.0 {
            return never;
        }
        let direct = p > direct_p;
        let mut errs: Vec<(f64, u64)> = Vec::new();
        if !direct {
            // Downwards from b - 1: P(count <= m) = phi(z(m + 1/2)).
            let mut m = b;
            while m > 0 {
                m -= 1;
                let le = phi(z(m as f64 + 0.5));
                if le < p * TRUNC {
                    break;
                }
                let pm = if m == 0 {
                    le
                } else {
                    le - phi(z(m as f64 - 0.5))
                };
                errs.push((pm, m));
            }
            // Upwards from b + 1: P(count >= m) = phi_upper(z(m - 1/2)).
            let mut m = b;
            while m < top {
                m += 1;
                let ge = phi_upper(z(m as f64 - 0.5));
                if ge < p * TRUNC {
                    break;
                }
                let pm = if m == top {
                    ge
                } else {
                    ge - phi_upper(z(m as f64 + 0.5))
                };
                errs.push((pm, m));
            }
            errs.sort_by(|x, y| y.0.total_cmp(&x.0));
            let total: f64 = errs.iter().map(|e| e.0).sum();
            let mut cum = 0.0;
            for e in &mut errs {
                cum += e.0;
                *e = (cum / total, e.1 * adc.step);
            }
            if let Some(last) = errs.last_mut() {
                last.0 = 1.0;
            }
        }
        let direct = direct || errs.len() > MAX_ERRS;
        if direct {
            errs.clear();
        }
        // A read of the class clips with probability P(S'/step >= top + 1/2): a class
        // whose reads can clip (beyond the cut of the tails) draws per read, so a read
        // the sampler settles clips only when its sum is noise-free and clips (the ADC's
        // count of clips stays exact). Its law is kept ([`code_law`]).
        let direct = direct || phi_upper(z(top as f64 + 0.5)) >= p * TRUNC;
        let ln_q = (-p).ln_1p();
        // Blocks of about 0.02 / p reads (when that is 64 or more): 98% of gaps are
        // drawn with one comparison.
        let block = (0.02 / p).min(1e15) as u64;
        let (block, q_block) = if block >= 64 {
            (block, (block as f64 * ln_q).exp())
        } else {
            (0, 0.0)
        };
        Law {
            base,
            p,
            ln_q,
            block,
            q_block,
            direct,
            errs: errs.into_boxed_slice(),
        }
    }

    /// Reads of the class before the next one that changes its code, from the hash
    /// `h`: geometric, P(gap >= k) = (1 - p)^k, drawn as floor(ln v / ln(1 - p)) for v
    /// uniform in (0, 1] (gap >= k exactly when v <= (1 - p)^k). With a block, a v at
    /// most (1 - p)^block says only "no change in the next `block` reads": the second
    /// value is then true, and as the gap is memoryless a fresh one is drawn after them.
    #[inline]
    fn gap(&self, h: u64) -> (u64, bool) {
        if self.ln_q == 0.0 {
            return (u64::MAX, true);
        }
        let v = 1.0 - uniform(h);
        if v <= self.q_block {
            return (self.block, true);
        }
        // (saturating at u64::MAX)
        ((v.ln() / self.ln_q) as u64, false)
    }

    /// A code other than the base, from the hash `h`.
    #[inline]
    fn error(&self, h: u64) -> u64 {
        let u = uniform(h);
        self.errs
            .iter()
            .find(|e| u < e.0)
            .or(self.errs.last())
            .map_or(self.base, |e| e.1)
    }
}

/// Every code of a read of ideal sum `sum` with `open` wordlines open, with its
/// probability under the closed-form law (the base's is 1 - p; codes whose probability
/// is negligible, see [`TRUNC`], are left out).
pub fn code_law(dev: &Device, adc: Adc, sum: u64, open: u32) -> Vec<(u64, f64)> {
    let law = Law::new(dev, adc, sum, open, f64::INFINITY);
    let mut out = vec![(law.base, 1.0 - law.p)];
    let mut prev = 0.0;
    for &(cum, code) in law.errs.iter() {
        out.push((code, (cum - prev) * law.p));
        prev = cum;
    }
    out.sort_by_key(|e| e.0);
    out
}

/// The laws of one mode's reads, per class (I, or (open, I) under IR drop), each built
/// on first use and shared by the threads.
#[derive(Debug)]
pub(crate) struct Laws {
    device: Device,
    adc: Adc,
    /// Classes are (open, I) (IR drop: the law depends on open), else I.
    by_open: bool,
    /// Sums a class table holds per open: the largest sum of a read, plus 1.
    stride: usize,
    direct_p: f64,
    classes: Box<[OnceLock<Law>]>,
    /// Every class's alias table, when the mode's reads are loud enough to draw one
    /// uniform each ([`Lookup`]); None: gaps per class.
    pub lookup: Option<Lookup>,
}

impl Laws {
    /// The laws of reads of at most `open` wordlines of `cell_bits`-bit cells driven
    /// with `dac_bits`-bit digits ([`classes`]).
    /// `lookup_p`: the largest p of a class from which the mode's reads draw from alias
    /// tables ([`Lookup::new`]; infinity: never).
    pub fn new(
        device: &Device,
        adc: Adc,
        (open, cell_bits, dac_bits): (u64, u32, u32),
        (direct_p, lookup_p): (f64, f64),
    ) -> Self {
        let by_open = device.ir_drop > 0.0;
        let (n, max_sum) = classes(open, cell_bits, dac_bits, by_open);
        let stride = max_sum.saturating_add(1);
        let device = Device {
            error_table: None,
            ..device.clone()
        };
        let whole = if by_open { open } else { 0 };
        let lookup = Lookup::new(&device, adc, (whole, max_sum), lookup_p);
        Laws {
            device,
            adc,
            by_open,
            stride: stride.min(MAX_CLASSES as u64) as usize,
            direct_p,
            classes: (0..n).map(|_| OnceLock::new()).collect(),
            lookup,
        }
    }

    /// Classes in the table.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// The class of a read, when it is in the table.
    #[inline(always)]
    pub fn class(&self, sum: u64, open: u32) -> Option<usize> {
        let s = sum as usize;
        if s >= self.stride {
            return None;
        }
        let c = if self.by_open {
            open as usize * self.stride + s
        } else {
            s
        };
        (c < self.classes.len()).then_some(c)
    }

    /// The law of class `c`.
    #[inline]
    fn law(&self, c: usize) -> &Law {
        self.classes[c].get_or_init(|| {
            let (sum, open) = if self.by_open {
                (c % self.stride, c / self.stride)
            } else {
                (c, 0)
            };
            Law::new(
                &self.device,
                self.adc,
                sum as u64,
                open as u32,
                self.direct_p,
            )
        })
    }
}

/// A class's place in the current stream.
#[derive(Debug, Clone, Copy, Default)]
struct State {
    /// The stream this state belongs to (0: none yet).
    epoch: u64,
    /// Reads of the class left before the next changed code, or, when `restart`, before
    /// a fresh gap is drawn.
    gap: u64,
    restart: bool,
    base: u64,
    /// The class's key in the stream, and its draws so far.
    key: u64,
    n: u64,
    direct: bool,
}

impl State {
    #[inline(always)]
    fn next(&mut self) -> u64 {
        let h = mix(self.key ^ self.n);
        self.n += 1;
        h
    }
}

/// Per-thread state of the skip sampler: where each class is in the current stream.
pub(crate) struct Skip {
    states: Vec<State>,
    epoch: u64,
    stream: u64,
}

impl Skip {
    pub fn new(laws: Option<&Laws>) -> Self {
        Skip {
            // One more: the class of every read beyond the table.
            states: vec![State::default(); laws.map_or(0, |l| l.len() + 1)],
            epoch: 0,
            stream: 0,
        }
    }

    /// Starts the stream of vector `vector` of layer `layer`: every class starts
    /// afresh, its draws keyed by (seed, layer, vector, class, draw number).
    #[inline]
    pub fn start(&mut self, seed: u64, layer: u64, vector: u64) {
        self.epoch += 1;
        self.stream = hash(seed, &[SKIP, layer, vector]);
    }

    /// The code of the next read of class `c` and whether the read draws its own noise
    /// instead (its class's p is above the threshold, or `c` is [`Laws::len`]: a read
    /// beyond the table; the code is then meaningless). Branches only where a code
    /// changes or a class starts its stream: a read that draws per read is told so
    /// without one (its class's gap never runs out).
    #[inline(always)]
    pub fn code(&mut self, laws: &Laws, c: usize) -> (u64, bool) {
        if self.states[c].epoch != self.epoch {
            self.init(laws, c);
        }
        let st = &mut self.states[c];
        if st.gap > 0 {
            st.gap -= 1;
            return (st.base, st.direct);
        }
        (Self::changed(st, laws.law(c)), false)
    }

    /// Class `c`'s state at the start of the stream.
    #[cold]
    #[inline(never)]
    fn init(&mut self, laws: &Laws, c: usize) {
        let (base, direct) = match c < laws.len() {
            true => {
                let law = laws.law(c);
                (law.base, law.direct)
            }
            false => (0, true),
        };
        self.states[c] = State {
            epoch: self.epoch,
            // A class that draws per read never runs out of its gap.
            gap: if direct { u64::MAX } else { 0 },
            restart: true,
            base,
            key: mix(self.stream ^ c as u64),
            n: 0,
            direct,
        };
    }

    /// The read at the end of a gap: a changed code, or, after a block without one, the
    /// first read of a fresh gap.
    #[cold]
    #[inline(never)]
    fn changed(st: &mut State, law: &Law) -> u64 {
        loop {
            if !st.restart {
                let code = law.error(st.next());
                (st.gap, st.restart) = law.gap(st.next());
                return code;
            }
            (st.gap, st.restart) = law.gap(st.next());
            if st.gap > 0 {
                st.gap -= 1;
                return st.base;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{hash, mix};

    /// The closed-form law of a read against reads drawn one by one as the per-read
    /// sampler draws them (Device::analog_sum, then the ADC): a chi-square goodness of
    /// fit over 4 * 10^5 reads per case. The statistic is compared with the 1 - 10^-6
    /// quantile of its chi-square law (Wilson-Hilferty), so a correct law fails with
    /// probability about 10^-6 per case (the seeds are fixed: it passes or fails always).
    #[test]
    fn the_closed_form_law_matches_direct_draws() {
        let cases = [
            // (read_noise, ir_drop, adc bits, step, sum, open)
            (0.2, 0.0, 8, 1, 9, 3),
            (0.2, 0.0, 8, 1, 27, 9),
            (0.05, 0.0, 8, 1, 40, 9),
            (0.3, 0.04, 8, 1, 12, 6),
            (0.3, 0.07, 8, 1, 20, 5),
            (0.25, 0.0, 3, 1, 7, 4),
            (0.4, 0.0, 2, 1, 5, 2),
            (0.3, 0.01, 8, 2, 13, 5),
            (1.5, 0.0, 8, 1, 4, 4),
        ];
        let n = 400_000u64;
        for (ci, &(rn, ir, bits, step, sum, open)) in cases.iter().enumerate() {
            let dev = Device {
                read_noise: rn,
                ir_drop: ir,
                ..Device::default()
            };
            let adc = Adc::new(bits, step);
            let law = code_law(&dev, adc, sum, open);
            let total: f64 = law.iter().map(|e| e.1).sum();
            assert!((total - 1.0).abs() < 1e-12, "case {ci}: sums to {total}");
            let mut counts = std::collections::BTreeMap::<u64, u64>::new();
            for i in 0..n {
                let key = mix(hash(99, &[ci as u64, i]));
                let s = dev.analog_sum(sum as f64, open, 0, 0.0, key);
                *counts.entry(adc.convert_real(s)).or_default() += 1;
            }
            let (stat, df) = chi_square_fit(&law, &counts, n);
            assert!(
                stat < chi_square_quantile(df, 4.753),
                "case {ci}: chi-square {stat} on {df} df; law {law:?}; counts {counts:?}"
            );
        }
    }

    /// Pearson's statistic of observed `counts` against `law`, bins of expected count
    /// below 5 merged into one; (statistic, degrees of freedom).
    fn chi_square_fit(
        law: &[(u64, f64)],
        counts: &std::collections::BTreeMap<u64, u64>,
        n: u64,
    ) -> (f64, usize) {
        let mut bins = Vec::new();
        let (mut rest_e, mut rest_o) = (0.0, 0.0);
        for &(code, p) in law {
            let e = p * n as f64;
            let o = counts.get(&code).copied().unwrap_or(0) as f64;
            if e >= 5.0 {
                bins.push((e, o));
            } else {
                rest_e += e;
                rest_o += o;
            }
        }
        let seen: u64 = law.iter().filter_map(|e| counts.get(&e.0)).sum();
        rest_o += (n - seen) as f64;
        if rest_e >= 5.0 || rest_o > 0.0 {
            bins.push((rest_e.max(1e-300), rest_o));
        }
        let stat = bins.iter().map(|(e, o)| (o - e) * (o - e) / e).sum();
        (stat, bins.len().saturating_sub(1).max(1))
    }

    /// Wilson-Hilferty's approximation of the chi-square quantile on `df` degrees of
    /// freedom at the standard normal quantile `z`.
    pub(crate) fn chi_square_quantile(df: usize, z: f64) -> f64 {
        let k = df as f64;
        let c = 2.0 / (9.0 * k);
        k * (1.0 - c + z * c.sqrt()).powi(3)
    }

    #[test]
    fn laws_of_hand_computed_reads() {
        let dev = Device {
            read_noise: 0.1,
            ..Device::default()
        };
        let adc = Adc::new(8, 1);
        // I = 4: sigma 0.2, P(|z| >= 2.5) = 0.0124193; codes 3 and 5 equally likely.
        let l = Law::new(&dev, adc, 4, 2, DIRECT_P);
        assert_eq!(l.base, 4);
        assert!((l.p - 0.012_419_330_651_552_318).abs() < 1e-12, "{}", l.p);
        // Codes 3 and 5 first (each half of p), then 2 and 6 (z = 7.5: 3e-14 each);
        // 1 and 7 (z = 12.5) are below the cut.
        let codes: Vec<u64> = l.errs.iter().map(|e| e.1).collect();
        assert_eq!(codes.len(), 4, "{codes:?}");
        assert_eq!([codes[0].min(codes[1]), codes[0].max(codes[1])], [3, 5]);
        assert!((l.errs[0].0 - 0.5).abs() < 1e-9, "{:?}", l.errs);
        // A clipped read: 2-bit ADC (counts 0..3), I = 3: only the lower tail errs.
        let l = Law::new(&dev, Adc::new(2, 1), 3, 1, DIRECT_P);
        assert_eq!(l.base, 3);
        assert!(l.errs.iter().all(|e| e.1 < 3));
        // Its reads can clip (P(S' >= 3.5) = 0.0019): the class draws per read.
        assert!(l.direct);
        // A read far below the top cannot clip: the sampler settles it.
        assert!(!Law::new(&dev, Adc::new(2, 1), 1, 1, DIRECT_P).direct);
        // IR drop shifts the base: a = 1 - 0.1 * 3 = 0.7, 0.7 * 10 = 7.
        let ir = Device {
            read_noise: 0.01,
            ir_drop: 0.1,
            ..Device::default()
        };
        assert_eq!(Law::new(&ir, adc, 10, 3, DIRECT_P).base, 7);
        // No attenuation left: nothing conducts, nothing changes.
        let l = Law::new(&ir, adc, 10, 10, DIRECT_P);
        assert_eq!((l.base, l.p), (0, 0.0));
        // Strong noise draws per read.
        let loud = Device {
            read_noise: 1.0,
            ..Device::default()
        };
        assert!(Law::new(&loud, adc, 9, 3, DIRECT_P).direct);
        // Gaps: P(gap >= k) = (1 - p)^k; a p of 0 never changes a code.
        let l = Law::new(&dev, adc, 4, 2, DIRECT_P);
        let draws = 200_000u64;
        assert_eq!(l.block, 0);
        let mean = (0..draws)
            .map(|i| l.gap(hash(5, &[i])).0 as f64)
            .sum::<f64>()
            / draws as f64;
        let want = (1.0 - l.p) / l.p;
        // The geometric's sd is sqrt(1 - p) / p: 5 standard errors.
        let tol = 5.0 * (1.0 - l.p).sqrt() / l.p / (draws as f64).sqrt();
        assert!((mean - want).abs() < tol, "mean gap {mean}, want {want}");
        let quiet = Device {
            read_noise: 1e-3,
            ..Device::default()
        };
        assert_eq!(
            Law::new(&quiet, adc, 4, 2, DIRECT_P).gap(7),
            (u64::MAX, true)
        );
        // Blocks: P(no change in a block) = (1 - p)^block, and within one the gap is
        // the plain geometric's.
        let rare = Device {
            read_noise: 0.05,
            ..Device::default()
        };
        let l = Law::new(&rare, adc, 4, 2, DIRECT_P);
        assert!(l.block >= 64, "p {} block {}", l.p, l.block);
        let gaps: Vec<(u64, bool)> = (0..draws).map(|i| l.gap(hash(6, &[i]))).collect();
        let whole = gaps.iter().filter(|g| g.1).count() as f64 / draws as f64;
        let want = (l.block as f64 * (-l.p).ln_1p()).exp();
        let sd = (want * (1.0 - want) / draws as f64).sqrt();
        assert!((whole - want).abs() < 5.0 * sd, "{whole} {want}");
        assert!(gaps
            .iter()
            .all(|g| g.1 == (g.0 == l.block) && g.0 <= l.block));
    }

    #[test]
    fn classes_index_the_table_and_stay_inside_it() {
        let adc = Adc::new(8, 1);
        let plain = Device {
            read_noise: 0.1,
            ..Device::default()
        };
        let laws = Laws::new(&plain, adc, (9, 2, 1), (DIRECT_P, f64::INFINITY));
        assert_eq!(laws.len(), 28);
        assert_eq!(laws.class(27, 9), Some(27));
        assert_eq!(laws.class(28, 1), None);
        let ir = Device {
            ir_drop: 0.01,
            ..plain
        };
        let laws = Laws::new(&ir, adc, (9, 2, 1), (DIRECT_P, f64::INFINITY));
        assert_eq!(laws.len(), 280);
        assert_eq!(laws.class(5, 2), Some(61));
        assert_eq!(laws.law(61).base, Law::new(&ir, adc, 5, 2, DIRECT_P).base);
        let big = Laws::new(&ir, adc, (128, 2, 1), (DIRECT_P, f64::INFINITY));
        assert_eq!(big.len(), MAX_CLASSES);
        assert_eq!(big.class(384, 128), None);
    }
}
