//! The float products of a block of input vectors, as a register-tiled matrix product
//! whose every output is summed over k in order from -0.0 with one rounding per
//! multiply and per add (no fused multiply-add): the bits of `Iterator::sum` over the
//! terms, whatever the tile, the block, the CPU features or the threads.

/// Output columns of a tile (one AVX register pair of f64).
const COLS: usize = 8;
/// Vectors of a tile.
const ROWS: usize = 4;

/// Weights of one conv group packed for [`products`]: panels of [`COLS`] output columns,
/// each `[k, COLS]` row-major, the last one padded with zeros.
pub struct Packed {
    k: usize,
    cols: usize,
    panels: Vec<f64>,
}

impl Packed {
    /// `w(r, c)`: the weight of row r (of k) and output column c (of `cols`).
    pub fn new(k: usize, cols: usize, w: impl Fn(usize, usize) -> f64) -> Packed {
        let n = cols.div_ceil(COLS);
        let mut panels = vec![0.0; n * k * COLS];
        for (p, panel) in panels.chunks_mut((k * COLS).max(1)).enumerate() {
            for (r, row) in panel.chunks_mut(COLS).enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    let c = p * COLS + j;
                    if c < cols {
                        *v = w(r, c);
                    }
                }
            }
        }
        Packed { k, cols, panels }
    }
}

/// `y[v * stride + c] = sum over r of x[v * width + r] * w(r, c)` for the `rows` vectors
/// of `x` (each `width` >= k values, the first k read) and every column c of `w`.
pub fn products(w: &Packed, x: &[f64], width: usize, rows: usize, y: &mut [f64], stride: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above).
        unsafe { products_avx512(w, x, width, rows, y, stride) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX (checked just above).
        unsafe { products_avx(w, x, width, rows, y, stride) };
        return;
    }
    products_any(w, x, width, rows, y, stride)
}

/// Calls `tile(panel, vectors)` for each panel of `w` and each whole tile of `R` vectors of
/// `x`, writing the tile's outputs to `y`; returns how many vectors the whole tiles cover
/// (k > 0).
#[inline(always)]
fn whole_tiles<const R: usize>(
    w: &Packed,
    x: &[f64],
    width: usize,
    rows: usize,
    y: &mut [f64],
    stride: usize,
    mut tile: impl FnMut(&[f64], &[&[f64]; R]) -> [[f64; COLS]; R],
) -> usize {
    let k = w.k;
    let full = rows / R * R;
    for (p, panel) in w.panels.chunks_exact(k * COLS).enumerate() {
        let c0 = p * COLS;
        let nc = COLS.min(w.cols - c0);
        for v in (0..full).step_by(R) {
            let xs: [&[f64]; R] = std::array::from_fn(|i| &x[(v + i) * width..][..k]);
            for (i, out) in tile(panel, &xs).iter().enumerate() {
                y[(v + i) * stride + c0..][..nc].copy_from_slice(&out[..nc]);
            }
        }
    }
    full
}

/// [`products`] of integer-valued `x` and `w` with every partial sum below 2^53 in
/// magnitude (`max|x| * max|w| * k < 2^53`): each output is then its exact integer sum in
/// whatever order and rounding the terms are added, so fused multiply-adds may be used
/// (AVX-512), which [`products`] may not.
pub fn exact_products(
    w: &Packed,
    x: &[f64],
    width: usize,
    rows: usize,
    y: &mut [f64],
    stride: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above).
        unsafe { exact_products_avx512(w, x, width, rows, y, stride) };
        return;
    }
    products(w, x, width, rows, y, stride)
}

/// [`exact_products`] with [`products_avx512`]'s tiles and a fused multiply-add per term.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn exact_products_avx512(
    w: &Packed,
    x: &[f64],
    width: usize,
    rows: usize,
    y: &mut [f64],
    stride: usize,
) {
    use std::arch::x86_64::*;
    const R: usize = 2 * ROWS;
    if w.k == 0 {
        return products_any(w, x, width, rows, y, stride);
    }
    let full = whole_tiles::<R>(w, x, width, rows, y, stride, |panel, xs| {
        let mut acc = [_mm512_setzero_pd(); R];
        for (r, wr) in panel.chunks_exact(COLS).enumerate() {
            // SAFETY: wr holds COLS = 8 values; an unaligned load.
            let w0 = _mm512_loadu_pd(wr.as_ptr());
            for i in 0..R {
                acc[i] = _mm512_fmadd_pd(_mm512_set1_pd(xs[i][r]), w0, acc[i]);
            }
        }
        let mut out = [[0.0f64; COLS]; R];
        for (o, a) in out.iter_mut().zip(&acc) {
            // SAFETY: o holds COLS = 8 values.
            _mm512_storeu_pd(o.as_mut_ptr(), *a);
        }
        out
    });
    if full < rows {
        let (xt, yt) = (&x[full * width..], &mut y[full * stride..]);
        products_avx(w, xt, width, rows - full, yt, stride)
    }
}

/// [`products_avx`] with one 8-wide AVX-512 register per vector of a tile and twice the
/// vectors: the same multiplies and adds in the same order, so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn products_avx512(
    w: &Packed,
    x: &[f64],
    width: usize,
    rows: usize,
    y: &mut [f64],
    stride: usize,
) {
    use std::arch::x86_64::*;
    const R: usize = 2 * ROWS;
    if w.k == 0 {
        return products_any(w, x, width, rows, y, stride);
    }
    let full = whole_tiles::<R>(w, x, width, rows, y, stride, |panel, xs| {
        let mut acc = [_mm512_set1_pd(-0.0); R];
        for (r, wr) in panel.chunks_exact(COLS).enumerate() {
            // SAFETY: wr holds COLS = 8 values; an unaligned load.
            let w0 = _mm512_loadu_pd(wr.as_ptr());
            for i in 0..R {
                acc[i] = _mm512_add_pd(acc[i], _mm512_mul_pd(_mm512_set1_pd(xs[i][r]), w0));
            }
        }
        let mut out = [[0.0f64; COLS]; R];
        for (o, a) in out.iter_mut().zip(&acc) {
            // SAFETY: o holds COLS = 8 values.
            _mm512_storeu_pd(o.as_mut_ptr(), *a);
        }
        out
    });
    if full < rows {
        let (xt, yt) = (&x[full * width..], &mut y[full * stride..]);
        products_avx(w, xt, width, rows - full, yt, stride)
    }
}

/// [`products_any`] with its full tiles in AVX registers: the same multiplies and adds in
/// the same order (separate instructions, no fused multiply-add), so the same bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn products_avx(
    w: &Packed,
    x: &[f64],
    width: usize,
    rows: usize,
    y: &mut [f64],
    stride: usize,
) {
    use std::arch::x86_64::*;
    if w.k == 0 {
        return products_any(w, x, width, rows, y, stride);
    }
    let full = whole_tiles::<ROWS>(w, x, width, rows, y, stride, |panel, xs| {
        let mut acc = [[_mm256_set1_pd(-0.0); 2]; ROWS];
        for (r, wr) in panel.chunks_exact(COLS).enumerate() {
            // SAFETY: wr holds COLS = 8 values; unaligned loads.
            let w0 = _mm256_loadu_pd(wr.as_ptr());
            let w1 = _mm256_loadu_pd(wr.as_ptr().add(4));
            for i in 0..ROWS {
                let a = _mm256_set1_pd(xs[i][r]);
                acc[i][0] = _mm256_add_pd(acc[i][0], _mm256_mul_pd(a, w0));
                acc[i][1] = _mm256_add_pd(acc[i][1], _mm256_mul_pd(a, w1));
            }
        }
        let mut out = [[0.0f64; COLS]; ROWS];
        for (o, a) in out.iter_mut().zip(&acc) {
            // SAFETY: o holds COLS = 8 values.
            _mm256_storeu_pd(o.as_mut_ptr(), a[0]);
            _mm256_storeu_pd(o.as_mut_ptr().add(4), a[1]);
        }
        out
    });
    // The tail vectors the portable way.
    if full < rows {
        let (xt, yt) = (&x[full * width..], &mut y[full * stride..]);
        products_any(w, xt, width, rows - full, yt, stride)
    }
}

#[inline(always)]
fn products_any(w: &Packed, x: &[f64], width: usize, rows: usize, y: &mut [f64], stride: usize) {
    let k = w.k;
    if k == 0 {
        for v in 0..rows {
            y[v * stride..][..w.cols].fill(-0.0);
        }
        return;
    }
    for (p, panel) in w.panels.chunks(k * COLS).enumerate() {
        let c0 = p * COLS;
        let nc = COLS.min(w.cols - c0);
        let mut v = 0;
        while v + ROWS <= rows {
            let xs: [&[f64]; ROWS] = std::array::from_fn(|i| &x[(v + i) * width..][..k]);
            let mut acc = [[-0.0f64; COLS]; ROWS];
            for (r, wr) in panel.chunks_exact(COLS).enumerate() {
                for i in 0..ROWS {
                    let a = xs[i][r];
                    for j in 0..COLS {
                        acc[i][j] += a * wr[j];
                    }
                }
            }
            for (i, a) in acc.iter().enumerate() {
                y[(v + i) * stride + c0..][..nc].copy_from_slice(&a[..nc]);
            }
            v += ROWS;
        }
        for v in v..rows {
            let xs = &x[v * width..][..k];
            let mut acc = [-0.0f64; COLS];
            for (&a, wr) in xs.iter().zip(panel.chunks_exact(COLS)) {
                for j in 0..COLS {
                    acc[j] += a * wr[j];
                }
            }
            y[v * stride + c0..][..nc].copy_from_slice(&acc[..nc]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Integer-valued products under the 2^53 bound are the exact i64 sums, with
        /// values up to 16 bits and more (partial sums far beyond 2^31).
        #[test]
        fn exact_products_are_integer_sums(
            k in 0usize..30, cols in 1usize..20, rows in 1usize..20, seed in 0u64..1000,
            max in prop::sample::select(vec![3i64, 65535, 1 << 24]),
        ) {
            let mut s = seed;
            let mut next = |m: i64| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                match (s >> 60) % 4 { 0 => m, 1 => -m, _ => ((s >> 20) % (2 * m as u64 + 1)) as i64 - m }
            };
            let width = k + 1;
            let x: Vec<i64> = (0..rows * width).map(|_| next(max)).collect();
            let wv: Vec<i64> = (0..k * cols).map(|_| next(32767)).collect();
            let packed = Packed::new(k, cols, |r, c| wv[r * cols + c] as f64);
            let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            let mut y = vec![f64::NAN; rows * cols];
            exact_products(&packed, &xf, width, rows, &mut y, cols);
            for v in 0..rows {
                for c in 0..cols {
                    let want: i64 = (0..k).map(|r| x[v * width + r] * wv[r * cols + c]).sum();
                    prop_assert_eq!(y[v * cols + c], want as f64);
                    prop_assert_eq!(y[v * cols + c] as i64, want);
                }
            }
        }

        /// Every output has the bits of `Iterator::sum` over its terms (signed zeros
        /// included), for any number of vectors and columns (tails of both tiles).
        #[test]
        fn products_are_sequential_sums(
            k in 0usize..20, cols in 1usize..20, rows in 1usize..11, seed in 0u64..1000,
        ) {
            let mut s = seed;
            let mut next = || {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                match (s >> 60) % 4 { 0 => 0.0, 1 => -0.0, _ => (s >> 11) as f64 / (1u64 << 53) as f64 * 2e3 - 1e3 }
            };
            let width = k + 2;
            let x: Vec<f64> = (0..rows * width).map(|_| next()).collect();
            let wv: Vec<f64> = (0..k * cols).map(|_| next()).collect();
            let packed = Packed::new(k, cols, |r, c| wv[r * cols + c]);
            let stride = cols + 1;
            let mut y = vec![f64::NAN; rows * stride];
            products(&packed, &x, width, rows, &mut y, stride);
            // The portable loops (the tails of the vectorized ones, and CPUs without AVX).
            let mut portable = vec![f64::NAN; rows * stride];
            products_any(&packed, &x, width, rows, &mut portable, stride);
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&portable), bits(&y));
            for v in 0..rows {
                for c in 0..cols {
                    let want: f64 = (0..k).map(|r| x[v * width + r] * wv[r * cols + c]).sum();
                    prop_assert_eq!(y[v * stride + c].to_bits(), want.to_bits());
                }
                prop_assert!(y[v * stride + cols].is_nan(), "wrote past the columns");
            }
        }
    }
}
