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

/// A uniform draw in [0, 1) from the 53 high bits of `h`.
#[inline]
pub fn uniform(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal draw from `h` (Box-Muller over two uniforms derived from it).
#[inline]
pub fn normal(h: u64) -> f64 {
    let u1 = 1.0 - uniform(mix(h ^ 0x5851_f42d_4c95_7f2d)); // (0, 1]
    let u2 = uniform(mix(h ^ 0x1405_7b7e_f767_814f));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
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
}
