//! The exact integer product a layer's datapath must reproduce (docs/functional.md,
//! "The datapath in the code's words", the invariant), and the digital correction of two's-complement inputs
//! read with multi-bit digits.

/// Y[g*Ng + n] = sum over k of x[g*K + k] * q_w[(g*Ng + n) * K + k].
pub fn exact_product(weights: &[i32], vector: &[i32], k: usize, groups: usize, out: &mut [i64]) {
    let ng = out.len() / groups.max(1);
    for (o, y) in out.iter_mut().enumerate() {
        let g = o / ng.max(1);
        let x = &vector[g * k..][..k];
        let w = &weights[o * k..][..k];
        *y = x.iter().zip(w).map(|(&a, &b)| a as i64 * b as i64).sum();
    }
}

/// With dac.bits > 1 every digit of a two's-complement pass value u = q + 2^B * sign is
/// read unsigned; the shift-and-add subtracts 2^B * sum over k of sign_k * q_w[k, n].
pub(crate) fn twos_correction(
    weights: &[i32],
    vector: &[i32],
    k: usize,
    bits: u32,
    acc: &mut [i128],
) {
    let groups = vector.len() / k.max(1);
    let ng = acc.len() / groups.max(1);
    for g in 0..groups {
        for (r, &x) in vector[g * k..][..k].iter().enumerate() {
            if x >= 0 {
                continue;
            }
            for n in 0..ng {
                let o = g * ng + n;
                acc[o] -= (weights[o * k + r] as i128) << bits;
            }
        }
    }
}

/// Whether the exact product of a layer fits an i64: (weight_bits - 1) + input_bits +
/// ceil(log2 K) <= 63.
pub fn fits_i64(weight_bits: u32, input_bits: u32, k: u64) -> bool {
    (weight_bits - 1) + input_bits + crossbar::ceil_log2(k) <= 63
}
