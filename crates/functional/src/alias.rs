//! Loud read noise drawn with one uniform per read (docs/functional.md, "Samplers").
//!
//! Where many reads change their code, the skip sampler's gaps cost more than they save:
//! each read then draws its outcome from its class's law with 32 random bits looked up
//! in an alias table (Walker), instead of a normal draw, a square root, a rounding and a
//! clip test. An outcome is the ADC's count, or "clipped" (the top count, counted in
//! `adc_clips`): the table holds the law of the pair, so the clips stay exact.
//!
//! A class's table has K buckets (a power of two); of a read's 32 random bits, the low
//! log2(K) pick one and the others, u, compare with the bucket's threshold: u below it
//! gives the bucket's own outcome, else its alias. Every outcome's probability is so a
//! multiple of 2^-32, and the integer weights are the law's probabilities in those
//! units, their sum exact: each within 2^-32 of the closed form. Outcomes outside 7.5
//! standard deviations of the mean (together below 10^-13) are left out.

use crate::adc::Adc;
use crate::device::Device;
use crate::math::{phi, phi_upper};

/// Most classes a mode keeps a law for (each thread keeps a few words of state per class):
/// a read of a class beyond draws its own noise.
pub(crate) const MAX_CLASSES: usize = 1 << 15;

/// Most buckets of a class's table: a law spread wider (very loud noise) keeps gaps.
const MAX_BUCKETS: usize = 64;

/// Most bytes of a class's table.
pub(crate) const MAX_BYTES: usize = MAX_BUCKETS * 8;

/// Standard deviations of the mean the outcomes of a class reach.
const REACH: f64 = 7.5;

/// Bit of an outcome that says the read clipped (its count is then the top one).
pub(crate) const CLIP: u16 = 1 << 15;

/// The alias tables of every class (open, sum) of a mode: `buckets[class * K + b]` is
/// the threshold times K (bits 0..32, [`alias`]), the bucket's own outcome (32..48) and
/// its alias (48..64).
#[derive(Debug)]
pub(crate) struct Lookup {
    buckets: Box<[u64]>,
    /// log2(K): a bucket holds 2^(32 - kbits) units of probability 2^-32.
    kbits: u32,
    /// Classes per open: the largest sum plus 1.
    stride: usize,
    /// Classes depend on open (IR drop).
    by_open: bool,
}

impl Lookup {
    /// The tables of the reads of at most `open` wordlines (0: classes do not depend on
    /// open) and sums up to `max_sum`, when some class changes its outcome with
    /// probability at least `lookup_p`; None when none does, or the tables would be too
    /// large (more than [`MAX_CLASSES`] classes or [`MAX_BUCKETS`] outcomes, counts
    /// beyond 15 bits).
    pub fn new(dev: &Device, adc: Adc, (open, max_sum): (u64, u64), lookup_p: f64) -> Option<Self> {
        if !lookup_p.is_finite() || adc.max_count >= (CLIP - 1) as u64 {
            return None;
        }
        let stride = max_sum.checked_add(1)?;
        let n = stride.checked_mul(open.checked_add(1)?)?;
        if n > MAX_CLASSES as u64 {
            return None;
        }
        let (stride, n) = (stride as usize, n as usize);
        let laws: Vec<(Vec<(u16, f64)>, f64)> = (0..n)
            .map(|c| outcomes(dev, adc, (c % stride) as u64, (c / stride) as u32))
            .collect();
        let widest = laws.iter().map(|l| l.0.len()).max().unwrap_or(1);
        let k = widest.next_power_of_two();
        let p_max = laws.iter().map(|l| l.1).fold(0.0, f64::max);
        if k > MAX_BUCKETS || p_max < lookup_p {
            return None;
        }
        let mut buckets = Vec::with_capacity(n * k);
        for (law, _) in &laws {
            buckets.extend(alias(law, k));
        }
        Some(Lookup {
            buckets: buckets.into_boxed_slice(),
            kbits: k.trailing_zeros(),
            stride,
            by_open: open > 0,
        })
    }

    /// log2(K): the table of every class has K buckets.
    pub fn kbits(&self) -> u64 {
        self.kbits as u64
    }

    /// The buckets of the classes of reads with `open` wordlines open, with the shape of
    /// the table copied beside them (a read's loop keeps both in registers).
    #[inline(always)]
    pub fn row(&self, open: u32) -> Row<'_> {
        let len = self.stride << self.kbits;
        let at = if self.by_open { open as usize * len } else { 0 };
        Row {
            buckets: &self.buckets[at..at + len],
            kbits: self.kbits as u64,
        }
    }
}

/// The alias tables of the classes of one open ([`Lookup::row`]).
#[derive(Clone, Copy)]
pub(crate) struct Row<'a> {
    buckets: &'a [u64],
    /// log2(K) ([`Lookup::kbits`]), as wide as the words it shifts (one register for
    /// both shifts).
    kbits: u64,
}

impl Row<'_> {
    /// The largest sum the row has classes for.
    #[inline(always)]
    pub fn largest_sum(&self) -> u64 {
        (self.buckets.len() >> self.kbits) as u64 - 1
    }

    /// The outcome of a read of sum `sum` from 32 random bits `v` (the count, [`CLIP`]
    /// set when it clipped): the low log2(K) bits pick a bucket of its class, the others
    /// are compared with the bucket's threshold. KB: log2(K) when known to the loop (it
    /// must be [`Lookup::kbits`]: the shifts and the mask are then constants, not
    /// registers), else 0.
    #[inline(always)]
    pub fn outcome_of<const KB: u64>(&self, sum: u64, v: u32) -> u16 {
        select(self.buckets[self.bucket::<KB>(sum, v)], v)
    }

    /// [`Row::outcome_of`] without the bounds check of the bucket.
    ///
    /// # Safety
    /// `sum` is at most [`Row::largest_sum`].
    #[inline(always)]
    pub unsafe fn outcome_unchecked<const KB: u64>(&self, sum: u64, v: u32) -> u16 {
        let at = self.bucket::<KB>(sum, v);
        debug_assert!(at < self.buckets.len());
        // SAFETY: sum <= largest_sum, so at < (largest_sum + 1) * K, the length.
        let b = unsafe { self.buckets.as_ptr().add(at) };
        #[cfg(target_endian = "little")]
        {
            // The bucket's threshold and the chosen outcome read in place, as the u32
            // of its bytes 0..4 and the u16 of bytes 4..6 (its outcome) or 6..8 (its
            // alias): a compare with memory and one load of the outcome, where the
            // word's shift by 32 or 48 took three operations more.
            // SAFETY: b points to a bucket of the row (a u64: 8 bytes, 8-aligned).
            unsafe {
                let bytes = b.cast::<u8>();
                let alias = v >= bytes.cast::<u32>().read();
                bytes.add(4 + 2 * alias as usize).cast::<u16>().read()
            }
        }
        #[cfg(not(target_endian = "little"))]
        // SAFETY: as above.
        select(unsafe { b.read() }, v)
    }

    /// The index of the bucket of a read of sum `sum` that 32 random bits `v` pick: the
    /// class's first bucket plus v's low log2(K) bits (KB as in [`Row::outcome_of`]).
    #[inline(always)]
    fn bucket<const KB: u64>(&self, sum: u64, v: u32) -> usize {
        debug_assert!(KB == 0 || KB == self.kbits);
        let k = if KB == 0 { self.kbits } else { KB };
        (sum << k | (v as u64 & ((1 << k) - 1))) as usize
    }
}

/// The outcome bucket `b` gives 32 random bits `v`.
#[inline(always)]
fn select(b: u64, v: u32) -> u16 {
    // (u below the threshold, the threshold stored times K: [`alias`].)
    let shift = if (v as u64) < b & 0xffff_ffff { 32 } else { 48 };
    (b >> shift) as u16
}

/// The law of the outcome of a read of ideal sum `sum` with `open` wordlines open
/// (docs/functional.md, "Samplers"), as (outcome, probability) over the counts within
/// [`REACH`] standard deviations of the mean, and P(outcome != the noise-free one).
pub(crate) fn outcomes(dev: &Device, adc: Adc, sum: u64, open: u32) -> (Vec<(u16, f64)>, f64) {
    let a = dev.attenuation(open);
    let i = sum as f64;
    let step = adc.step as f64;
    let (mu, sigma) = (a * i / step, a * dev.read_noise * i.sqrt() / step);
    let top = adc.max_count;
    // Outcome m < top + 1 is count m; m = top + 1 is "clipped". Bin m holds S'/step in
    // [m - 1/2, m + 1/2), bin 0 everything below 1/2, bin top + 1 everything from
    // top + 1/2 (the ADC clips S' >= (top + 1/2) step).
    let value = |m: u64| match m > top {
        true => top as u16 | CLIP,
        false => m as u16,
    };
    let bin = |x: f64| (x + 0.5).floor().clamp(0.0, (top + 1) as f64) as u64;
    if !(sigma > 0.0 && sigma.is_finite()) {
        return (vec![(value(bin(mu)), 1.0)], 0.0);
    }
    let base = bin(mu);
    let lo = bin(mu - REACH * sigma);
    let hi = bin(mu + REACH * sigma);
    let z = |x: f64| (x - mu) / sigma;
    let mut law = Vec::new();
    for m in lo..=hi {
        let (l, h) = (m as f64 - 0.5, m as f64 + 0.5);
        let p = match (m == 0, m == top + 1) {
            (true, true) => 1.0,
            (true, false) => phi(z(h)),
            (false, true) => phi_upper(z(l)),
            // Each difference on the side of the mean where it loses no digits.
            _ if h <= mu => phi(z(h)) - phi(z(l)),
            _ if l >= mu => phi_upper(z(l)) - phi_upper(z(h)),
            _ => 1.0 - phi(z(l)) - phi_upper(z(h)),
        };
        law.push((value(m), p.max(0.0)));
    }
    let total: f64 = law.iter().map(|e| e.1).sum();
    let changed = law
        .iter()
        .filter(|e| e.0 != value(base))
        .map(|e| e.1)
        .sum::<f64>()
        / total;
    (law, changed)
}

/// Walker's alias table of `law` (probabilities summing to about 1) over `k` buckets
/// (a power of two) of 2^32 / k units each, in integers: the weights are the
/// probabilities in units of 2^-32, rounded down, and the units left over go one each to
/// the outcomes that lost the most (largest remainders), so that they sum to 2^32
/// exactly and each is within one unit of the law.
pub(crate) fn alias(law: &[(u16, f64)], k: usize) -> Vec<u64> {
    const TOTAL: u64 = 1 << 32;
    let cap = TOTAL / k as u64;
    let total_p: f64 = law.iter().map(|e| e.1).sum();
    let exact: Vec<f64> = law.iter().map(|e| e.1 / total_p * TOTAL as f64).collect();
    let mut w: Vec<(u16, u64)> = law
        .iter()
        .zip(&exact)
        .map(|(e, &x)| (e.0, x.floor() as u64))
        .collect();
    let short = TOTAL.saturating_sub(w.iter().map(|e| e.1).sum());
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())));
    for &i in order.iter().cycle().take(short as usize) {
        w[i].1 += 1;
    }
    // Padding outcomes of weight 0: always their alias.
    w.resize(k, (law[0].0, 0));
    // (threshold, own, alias) per bucket; a full bucket is its own alias.
    let mut out: Vec<(u64, u16, u16)> = w.iter().map(|&(v, _)| (cap, v, v)).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..k).partition(|&i| w[i].1 < cap);
    let mut left: Vec<u64> = w.iter().map(|e| e.1).collect();
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        out[s] = (left[s], w[s].0, w[l].0);
        left[l] -= cap - left[s];
        if left[l] < cap {
            large.pop();
            small.push(l);
        }
    }
    // The threshold stored times K, against the whole 32 bits of a draw (u below the
    // threshold exactly when u * K + bucket is below threshold * K); a full bucket's
    // (2^32, past 32 bits) is cut to 2^32 - 1, which changes nothing: its alias is itself.
    let kbits = k.trailing_zeros();
    out.iter()
        .map(|&(t, own, al)| {
            let t = (t << kbits).min(u32::MAX as u64);
            debug_assert!(t < u32::MAX as u64 || own == al);
            t | (own as u64) << 32 | (al as u64) << 48
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probability of each outcome an alias table gives, exactly: bucket b's own
    /// outcome with threshold / (2^32 / K), its alias with the rest, each bucket 1 / K.
    fn table_law(buckets: &[u64]) -> std::collections::BTreeMap<u16, f64> {
        let k = buckets.len() as f64;
        let mut law = std::collections::BTreeMap::new();
        for &b in buckets {
            let t = (b & 0xffff_ffff) as f64 / 4_294_967_296.0;
            *law.entry((b >> 32) as u16).or_insert(0.0) += t / k;
            *law.entry((b >> 48) as u16).or_insert(0.0) += (1.0 - t) / k;
        }
        law
    }

    /// Every outcome's probability in the table is the closed form's within 2^-32 (and
    /// the rounding of a double), for quiet, loud, clipping and attenuated reads.
    #[test]
    fn alias_tables_hold_the_law_to_2_pow_minus_32() {
        let adc = Adc::new(5, 1);
        for (rn, ir, sum, open) in [
            (0.2, 0.0, 9, 9),
            (0.2, 0.0, 27, 9),
            (0.02, 0.0, 27, 9),
            (0.5, 0.0, 27, 9),
            (0.2, 0.01, 20, 7),
            (1.0, 0.0, 30, 9),
            (0.2, 0.0, 1, 1),
        ] {
            let dev = Device {
                read_noise: rn,
                ir_drop: ir,
                ..Device::default()
            };
            let (law, p) = outcomes(&dev, adc, sum, open);
            let k = law.len().next_power_of_two();
            let got = table_law(&alias(&law, k));
            let total: f64 = law.iter().map(|e| e.1).sum();
            for &(v, q) in &law {
                let g = got.get(&v).copied().unwrap_or(0.0);
                assert!(
                    (g - q / total).abs() <= 2.0f64.powi(-32) + 1e-15,
                    "rn {rn} sum {sum}: outcome {v:#x} {g} against {q}"
                );
            }
            // Nothing else is drawn, and p is the mass away from the noise-free outcome.
            assert!(got.keys().all(|v| law.iter().any(|e| e.0 == *v)));
            assert!((0.0..=1.0).contains(&p));
        }
    }

    /// Hand-computed laws: read noise 0.1 on a sum of 4 (sigma 0.2): counts 3 and 5 each
    /// P(z >= 2.5) = 0.00620967; a 2-bit ADC at sum 3: P(clipped) = P(z >= 0.5 / 0.1732).
    #[test]
    fn outcome_laws_of_hand_computed_reads() {
        let dev = Device {
            read_noise: 0.1,
            ..Device::default()
        };
        let (law, p) = outcomes(&dev, Adc::new(8, 1), 4, 2);
        let at = |l: &[(u16, f64)], v: u16| l.iter().find(|e| e.0 == v).map_or(0.0, |e| e.1);
        assert!((at(&law, 3) - 0.006_209_665_325_776_159).abs() < 1e-12);
        assert!((at(&law, 5) - at(&law, 3)).abs() < 1e-15);
        assert!((p - 0.012_419_330_651_552_318).abs() < 1e-12, "{p}");
        let (law, _) = outcomes(&dev, Adc::new(2, 1), 3, 1);
        let clip = at(&law, 3 | CLIP);
        let want = phi_upper(0.5 / (0.1 * 3f64.sqrt()));
        assert!((clip - want).abs() < 1e-15, "{clip} {want}");
        // The top count without clipping: S' in [2.5, 3.5), both tails off.
        assert!((at(&law, 3) - (1.0 - 2.0 * want)).abs() < 1e-12);
        // A noise-free clip: IR drop off, read noise 0 is one outcome.
        let quiet = Device::default();
        assert_eq!(
            outcomes(&quiet, Adc::new(2, 1), 5, 1).0,
            vec![(3 | CLIP, 1.0)]
        );
    }

    /// The tables of a mode: None below the threshold, one row per open with IR drop,
    /// and draws that follow the table.
    #[test]
    fn a_modes_tables_are_indexed_by_open_and_sum() {
        let adc = Adc::new(5, 1);
        let loud = Device {
            read_noise: 0.2,
            ir_drop: 0.01,
            ..Device::default()
        };
        assert!(Lookup::new(&loud, adc, (9, 27), f64::INFINITY).is_none());
        let quiet = Device {
            read_noise: 0.01,
            ..Device::default()
        };
        assert!(Lookup::new(&quiet, adc, (0, 27), 0.01).is_none());
        let lk = Lookup::new(&loud, adc, (9, 27), 0.01).unwrap();
        assert_eq!(lk.row(3).buckets.len(), 28 << lk.kbits);
        // Sum 20 with 7 open: the table of that class.
        let (law, _) = outcomes(&loud, adc, 20, 7);
        let want = alias(&law, 1 << lk.kbits);
        let row = lk.row(7);
        assert_eq!(&row.buckets[20 << lk.kbits..21 << lk.kbits], &want[..]);
        // Bucket 1: its own outcome below the threshold, else its alias.
        let b = want[1];
        let at = |u: u32| row.outcome_of::<0>(20, u << lk.kbits | 1);
        let t = b as u32 >> lk.kbits;
        if t > 0 {
            assert_eq!(at(t - 1), (b >> 32) as u16);
        }
        if t < 1 << (32 - lk.kbits) {
            assert_eq!(at(t), (b >> 48) as u16);
        }
    }
}
