//! The exact integer product a layer's datapath must reproduce (docs/functional.md,
//! "The datapath in the code's words", the invariant), and the digital correction of two's-complement inputs
//! read with multi-bit digits; when a mode's reads are provably exact, the fast path
//! that computes that product directly, batched as a matrix product.

use crate::FuncOptions;
use crossbar::{AdcBits, Hardware, Mode};
use rayon::prelude::*;

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

/// Whether `mode`'s reads of a layer of `k` rows (per conv group) are provably exact, so
/// that its output is the exact product and may be computed as one ([`exact_products`])
/// instead of OU by OU (docs/functional.md, "The exact fast path"): `opts` allows the
/// fast path, the device is ideal (no `[device]` key changes a value, no error table),
/// `adc.step` is 1, `adc.range` is `step`, `adc.bits` is `auto` (a fixed converter is
/// read, so its clips are counted) and the ADC holds the largest sum a
/// read can make: min(rows a read opens, crossbar.rows, K) cells at the top level, each
/// driven with the largest digit, 2^dac.bits - 1.
pub fn exact_path(hw: &Hardware, opts: &FuncOptions, mode: Mode, k: u64) -> bool {
    if !opts.exact_fast_path || !opts.device.is_ideal() || opts.adc_step != 1 {
        return false;
    }
    // A fixed adc.bits is a converter under study: its reads are made, so that its
    // conversions and clips are counted (adc_clip_frac), even where none can clip.
    if opts.adc_range != crate::AdcRange::Step || matches!(hw.adc_bits, AdcBits::Fixed(_)) {
        return false;
    }
    let rows = (hw.ou_height(mode) as u128)
        .min(hw.xbar_rows as u128)
        .min(k as u128);
    let top = (1u128 << hw.cell_bits) - 1;
    let digit = (1u128 << hw.dac_bits) - 1;
    let bits = hw.adc_resolution(mode);
    bits >= 64 || rows * top * digit < 1u128 << bits
}

/// Vectors whose exact products are computed at once by [`exact_products`]: bounds its
/// buffers (a block's vectors as f64 and its outputs) whatever the batch.
const BLOCK_ELEMENTS: usize = 1 << 16;

/// Bytes of one [`exact_products`] block at most: its vectors as i32 and f64, its
/// outputs as f64 (for the memory bound of docs/functional.md, "Memory").
pub(crate) const BLOCK_BYTES: usize = BLOCK_ELEMENTS * 20;

/// The exact products of `n` vectors: `fill(v, x)` writes vector v (`groups * k` inputs,
/// as [`exact_product`] reads them) and the result is `[n, outs]`, row v equal to
/// [`exact_product`] of vector v. Computed block by block as a matrix product in f64,
/// exact when max|x| * max|q_w| * k < 2^53 (every partial sum is then an integer a
/// double holds, in whatever order it is added); otherwise in i64. Parallel over blocks;
/// the result does not depend on the number of threads.
pub fn exact_products<F>(weights: &[i32], k: usize, groups: usize, n: usize, fill: F) -> Vec<i64>
where
    F: Fn(usize, &mut [i32]) + Sync,
{
    let outs = weights.len() / k.max(1);
    let width = k * groups;
    let ng = outs / groups.max(1);
    let mut out = vec![0i64; n * outs];
    if outs == 0 || n == 0 {
        return out;
    }
    let max_w = weights
        .iter()
        .map(|w| w.unsigned_abs() as u128)
        .max()
        .unwrap_or(0);
    // Per conv group, the weights transposed to [k, ng], as f64.
    let wt: Vec<ndarray::Array2<f64>> = (0..groups)
        .map(|g| {
            ndarray::Array2::from_shape_fn((k, ng), |(r, c)| weights[(g * ng + c) * k + r] as f64)
        })
        .collect();
    let block = (BLOCK_ELEMENTS / (width + outs).max(1)).clamp(1, n);
    out.par_chunks_mut(block * outs)
        .enumerate()
        .for_each(|(b, ys)| {
            let rows = ys.len() / outs;
            let mut x = vec![0i32; rows * width];
            for (i, xv) in x.chunks_mut(width.max(1)).enumerate() {
                fill(b * block + i, xv);
            }
            let max_x = x
                .iter()
                .map(|v| v.unsigned_abs() as u128)
                .max()
                .unwrap_or(0);
            if max_x * max_w * (k as u128) < 1 << 53 {
                let xf =
                    ndarray::Array2::from_shape_fn((rows, width), |(i, c)| x[i * width + c] as f64);
                for (g, w) in wt.iter().enumerate() {
                    let y = xf.slice(ndarray::s![.., g * k..(g + 1) * k]).dot(w);
                    for (i, row) in y.outer_iter().enumerate() {
                        for (c, &v) in row.iter().enumerate() {
                            ys[i * outs + g * ng + c] = v as i64;
                        }
                    }
                }
            } else {
                for (xv, y) in x.chunks(width.max(1)).zip(ys.chunks_mut(outs)) {
                    exact_product(weights, xv, k, groups, y);
                }
            }
        });
    out
}
