//! Counter-based random draws (docs/functional.md, "Non-ideal devices"): every draw is a pure
//! function of the seed and its key, computed when needed and never stored, so results
//! do not depend on threads, on chunking, or on which other layers run.
//!
//! The key's words are folded through the SplitMix64 finalizer (a bijective 64-bit
//! mixer): h = mix(h ^ word) for each word, starting from mix(seed).

/// SplitMix64's finalizer.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The hash of `words` under `seed`.
#[inline]
pub fn hash(seed: u64, words: &[u64]) -> u64 {
    words.iter().fold(mix(seed), |h, &w| mix(h ^ w))
}

/// A stable 64-bit name of a layer (FNV-1a), the first word of every key of its draws.
pub fn name_word(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What [`wyrand`]'s state advances by per output (odd).
pub const WY_STEP: u64 = 0xa076_1d64_78bd_642f;

/// Output `k` of the counter-based generator started at `state`: wyrand's k-th output
/// (Wang Yi's wyrand: the state advanced by [`WY_STEP`] k times, then [`wymix`]). One
/// multiplication per 64 random bits: the skip sampler's alias tables draw each read
/// from one output, `state` a [`mix`] of the reads' shared key.
#[inline(always)]
pub fn wyrand(state: u64, k: u64) -> u64 {
    wymix(state.wrapping_add(k.wrapping_mul(WY_STEP)))
}

/// wyrand's output of an advanced state `s`: the 128-bit product of `s` and of `s` with
/// other bits flipped, folded to 64 bits by xor.
#[inline(always)]
pub fn wymix(s: u64) -> u64 {
    let t = (s as u128) * ((s ^ 0xe703_7ed1_a0b4_28db) as u128);
    (t >> 64) as u64 ^ t as u64
}

/// A uniform draw in [0, 1) from the 53 high bits of `h`.
#[inline]
pub fn uniform(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Layers of the ziggurat of [`normal`].
const ZIG: usize = 128;

/// The ziggurat of the standard normal (Marsaglia and Tsang, with Doornik's layer
/// table): `x[i]` is the right edge of layer i (x[0] the base strip's equivalent width,
/// x[1] the tail's start r, x[ZIG] = 0); `ratio[i]` = x[i + 1] / x[i].
pub struct Ziggurat {
    x: [f64; ZIG + 1],
    ratio: [f64; ZIG],
    /// x[i] * 2^-52 (exact: a power-of-two scaling).
    x_scaled: [f64; ZIG],
    /// ceil(ratio[i] * 2^52): for an integer k, |k| < limit[i] exactly when
    /// |k * 2^-52| < ratio[i].
    limit: [i64; ZIG],
}

const ZIG_R: f64 = 3.442_619_855_899;
const ZIG_V: f64 = 9.912_563_035_262_17e-3;

static ZIGGURAT: std::sync::LazyLock<Ziggurat> = std::sync::LazyLock::new(|| {
    let mut x = [0.0; ZIG + 1];
    let mut f = (-0.5 * ZIG_R * ZIG_R).exp();
    x[0] = ZIG_V / f;
    x[1] = ZIG_R;
    for i in 2..ZIG {
        x[i] = (-2.0 * (ZIG_V / x[i - 1] + f).ln()).sqrt();
        f = (-0.5 * x[i] * x[i]).exp();
    }
    let mut ratio = [0.0; ZIG];
    let (mut x_scaled, mut limit) = ([0.0; ZIG], [0i64; ZIG]);
    let two52 = (1u64 << 52) as f64;
    for i in 0..ZIG {
        ratio[i] = x[i + 1] / x[i];
        x_scaled[i] = x[i] / two52;
        limit[i] = (ratio[i] * two52).ceil() as i64;
    }
    Ziggurat {
        x,
        ratio,
        x_scaled,
        limit,
    }
});

/// A standard normal draw from `h`, by the ziggurat: the low 7 bits of `h` pick a layer
/// and its high 53 bits a signed uniform, which 98.8% of the time is the answer scaled
/// by the layer's width. The rare rejections (wedges and the tail beyond 3.44) draw more
/// uniforms from keys derived from `h`, so the draw stays a pure function of `h`.
#[inline]
pub fn normal(h: u64) -> f64 {
    normal_with(ziggurat(), h)
}

/// The ziggurat's tables, for [`normal_with`] (looked up once, not per draw).
#[inline]
pub fn ziggurat() -> &'static Ziggurat {
    &ZIGGURAT
}

/// [`normal`] with the tables `z` of [`ziggurat`]: the same draw.
#[inline(always)]
pub fn normal_with(z: &Ziggurat, h: u64) -> f64 {
    let i = (h & (ZIG as u64 - 1)) as usize;
    // u = 2 * uniform(h) - 1 is k * 2^-52 exactly, with the integer k below: the test
    // |u| < ratio[i] and the draw u * x[i] are done on k, in integers and with one
    // product, and give the same bits as on u (a shorter chain of dependent operations).
    let k = (h >> 11) as i64 - (1 << 52);
    if k.abs() < z.limit[i] {
        return k as f64 * z.x_scaled[i];
    }
    normal_slow(h)
}

/// The rejection loop of [`normal`], from its first draw on.
#[cold]
fn normal_slow(h: u64) -> f64 {
    let z = &*ZIGGURAT;
    let mut h = h;
    let mut next = move || {
        h = mix(h ^ 0x5851_f42d_4c95_7f2d);
        h
    };
    let mut cur = h;
    loop {
        let i = (cur & (ZIG as u64 - 1)) as usize;
        let u = 2.0 * uniform(cur) - 1.0;
        if u.abs() < z.ratio[i] {
            return u * z.x[i];
        }
        if i == 0 {
            // The tail beyond r (Marsaglia): x = ln(u1) / r <= 0, accepted when
            // -2 ln(u2) >= x^2; the draw is r - x (mirrored for a negative u).
            loop {
                let x = (1.0 - uniform(next())).ln() / ZIG_R;
                let y = (1.0 - uniform(next())).ln();
                if -2.0 * y >= x * x {
                    return if u < 0.0 { x - ZIG_R } else { ZIG_R - x };
                }
            }
        }
        let x = u * z.x[i];
        let f0 = (-0.5 * (z.x[i] * z.x[i] - x * x)).exp();
        let f1 = (-0.5 * (z.x[i + 1] * z.x[i + 1] - x * x)).exp();
        if f1 + uniform(next()) * (f0 - f1) < 1.0 {
            return x;
        }
        cur = next();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_keyed_and_distributed() {
        assert_eq!(hash(1, &[2, 3]), hash(1, &[2, 3]));
        assert_ne!(hash(1, &[2, 3]), hash(1, &[3, 2]));
        assert_ne!(hash(1, &[2, 3]), hash(2, &[2, 3]));
        let n = 200_000u64;
        let (mut s, mut s2, mut u) = (0.0, 0.0, 0.0);
        for i in 0..n {
            let z = normal(hash(7, &[i]));
            assert!(z.is_finite());
            s += z;
            s2 += z * z;
            u += uniform(hash(8, &[i]));
        }
        let n = n as f64;
        assert!((s / n).abs() < 0.01, "mean {}", s / n);
        assert!((s2 / n - 1.0).abs() < 0.02, "variance {}", s2 / n);
        assert!((u / n - 0.5).abs() < 0.005, "uniform mean {}", u / n);
    }

    #[test]
    fn the_integer_layer_test_is_the_float_one() {
        // normal_with's first layer test and draw, on k, against the definition on u,
        // for hashes at every layer's edge (k = +-limit, +-limit - 1) and random ones.
        let z = ziggurat();
        let mut hs: Vec<u64> = (0..200_000u64).map(|i| hash(3, &[i])).collect();
        for i in 0..ZIG as i64 {
            for k in [
                z.limit[i as usize],
                z.limit[i as usize] - 1,
                0,
                (1 << 52) - 1,
            ] {
                for k in [k, -k] {
                    let top = ((k + (1 << 52)) as u64).min((1 << 53) - 1);
                    hs.push(top << 11 | i as u64);
                }
            }
        }
        let (mut fast, mut slow) = (0, 0);
        for h in hs {
            let i = (h & (ZIG as u64 - 1)) as usize;
            let u = 2.0 * uniform(h) - 1.0;
            if u.abs() < z.ratio[i] {
                assert_eq!(normal_with(z, h).to_bits(), (u * z.x[i]).to_bits(), "h {h}");
                fast += 1;
            } else {
                assert_eq!(normal_with(z, h).to_bits(), normal_slow(h).to_bits());
                slow += 1;
            }
        }
        assert!(fast > 100_000 && slow > 1_000, "{fast} {slow}");
    }

    #[test]
    fn normal_draws_follow_the_normal_cdf_into_the_tails() {
        // Counts below each point against Phi, over 10^6 draws: the ziggurat's layers,
        // wedges and tail are all exercised (P(|z| > 3.44) ~ 5.8e-4).
        let n = 1_000_000u64;
        let points = [
            -4.0, -3.44, -3.0, -2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 2.0, 3.0, 3.44, 4.0,
        ];
        let phi = [
            3.167e-5, 2.882e-4, 1.350e-3, 2.275e-2, 0.158_655, 0.308_538, 0.5, 0.617_911,
            0.841_345, 0.977_250, 0.998_650, 0.999_712, 0.999_968,
        ];
        let mut below = [0u64; 13];
        let mut s4 = 0.0;
        for i in 0..n {
            let z = normal(hash(11, &[i]));
            s4 += z * z * z * z;
            for (b, &p) in below.iter_mut().zip(&points) {
                *b += (z < p) as u64;
            }
        }
        for ((&b, &p), &x) in below.iter().zip(&phi).zip(&points) {
            let f = b as f64 / n as f64;
            // Four binomial standard deviations.
            let tol = 4.0 * (p * (1.0 - p) / n as f64).sqrt();
            assert!((f - p).abs() < tol, "P(z < {x}) = {f}, Phi = {p}");
        }
        // Fourth moment 3 (a uniform or a clipped normal would fail it).
        assert!(
            (s4 / n as f64 - 3.0).abs() < 0.05,
            "E z^4 = {}",
            s4 / n as f64
        );
        assert_eq!(normal(12345), normal(12345));
    }
}
