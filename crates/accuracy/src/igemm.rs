//! The exact integer products of a block of quantized input vectors, as a register-tiled
//! matrix product in 32-bit integer lanes: two 16-bit inputs times two 16-bit weights
//! added into a lane per instruction (AVX-512 VNNI `vpdpwssd`, or AVX2 `vpmaddwd` and an
//! add). Used only where every value fits 16 bits and every partial sum fits 32
//! ([`fits`]): then each output is the exact integer sum whatever the order of its
//! terms, so the same as `functional::exact_product`'s, on any CPU and thread count.

/// Output columns of a tile (one AVX-512 register of 32-bit lanes).
const COLS: usize = 16;
/// Vectors of a tile.
const ROWS: usize = 8;

/// Whether the products of inputs of magnitude at most `max_x` by weights of magnitude
/// at most `max_w` over `k` rows are exact in this kernel: both fit a 16-bit lane
/// (|v| <= 2^15 - 1) and max_x * max_w * max(k, 2) < 2^31 bounds every partial sum of
/// a 32-bit lane (a pair's two products included).
pub fn fits(max_x: u64, max_w: u64, k: usize) -> bool {
    const LANE: u64 = (1 << 15) - 1;
    max_x <= LANE
        && max_w <= LANE
        && (max_x as u128) * (max_w as u128) * (k.max(2) as u128) < 1u128 << 31
}

/// Two 16-bit values in one word: `lo` in the low half (as `vpmaddwd` pairs them).
#[inline(always)]
fn pair(lo: i32, hi: i32) -> u32 {
    (lo as u16 as u32) | ((hi as u16 as u32) << 16)
}

/// The pair of 16-bit values of a word.
#[inline(always)]
fn unpair(v: u32) -> (i64, i64) {
    (v as u16 as i16 as i64, (v >> 16) as u16 as i16 as i64)
}

/// Writes `x` (values that fit 16 bits) as pairs: `out[p]` holds x[2p] and x[2p + 1] (0
/// past the end); `out` has `x.len().div_ceil(2)` words.
pub fn pack_pairs(x: &[i32], out: &mut [u32]) {
    for (o, c) in out.iter_mut().zip(x.chunks(2)) {
        *o = pair(c[0], c.get(1).copied().unwrap_or(0));
    }
}

/// Weights of one conv group packed for [`products`]: panels of [`COLS`] output columns,
/// each `[pairs, COLS]` of words holding rows 2p and 2p + 1; the last panel and an odd
/// k padded with zeros.
pub struct PackedInt {
    pairs: usize,
    cols: usize,
    panels: Vec<u32>,
}

impl PackedInt {
    /// `w(r, c)`: the weight of row r (of k) and output column c (of `cols`), which must
    /// fit 16 bits ([`fits`]).
    pub fn new(k: usize, cols: usize, w: impl Fn(usize, usize) -> i32) -> PackedInt {
        let pairs = k.div_ceil(2);
        let n = cols.div_ceil(COLS);
        let mut panels = vec![0u32; n * pairs * COLS];
        let at = |r: usize, c: usize| if r < k { w(r, c) } else { 0 };
        for (p, panel) in panels.chunks_mut((pairs * COLS).max(1)).enumerate() {
            for (r, row) in panel.chunks_mut(COLS).enumerate() {
                for (j, v) in row.iter_mut().enumerate() {
                    let c = p * COLS + j;
                    if c < cols {
                        *v = pair(at(2 * r, c), at(2 * r + 1, c));
                    }
                }
            }
        }
        PackedInt {
            pairs,
            cols,
            panels,
        }
    }
}

/// `y[v * stride + c] = sum over r of x_v[r] * w(r, c)` for the `rows` vectors of `x`,
/// each `width` >= pairs words of [`pack_pairs`] (the first pairs read), and every
/// column c of `w`; exact under [`fits`].
pub fn products(w: &PackedInt, x: &[u32], width: usize, rows: usize, y: &mut [i64], stride: usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512vnni") {
        // SAFETY: the CPU has AVX-512F and VNNI (checked just above; VNNI implies F).
        unsafe { products_vnni(w, x, width, rows, y, stride) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        unsafe { products_avx2(w, x, width, rows, y, stride) };
        return;
    }
    products_any(w, x, width, rows, y, stride)
}

/// Calls `tile(panel, vectors)` for each panel of `w` and each whole tile of `R` vectors,
/// writing the tile's outputs to `y`; returns how many vectors the whole tiles cover.
#[inline(always)]
fn whole_tiles<const R: usize>(
    w: &PackedInt,
    x: &[u32],
    width: usize,
    rows: usize,
    y: &mut [i64],
    stride: usize,
    mut tile: impl FnMut(&[u32], &[&[u32]; R]) -> [[i32; COLS]; R],
) -> usize {
    let pairs = w.pairs;
    let full = rows / R * R;
    for (p, panel) in w.panels.chunks_exact(pairs * COLS).enumerate() {
        let c0 = p * COLS;
        let nc = COLS.min(w.cols - c0);
        for v in (0..full).step_by(R) {
            let xs: [&[u32]; R] = std::array::from_fn(|i| &x[(v + i) * width..][..pairs]);
            for (i, out) in tile(panel, &xs).iter().enumerate() {
                for (d, &s) in y[(v + i) * stride + c0..][..nc].iter_mut().zip(out) {
                    *d = s as i64;
                }
            }
        }
    }
    full
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vnni")]
unsafe fn products_vnni(
    w: &PackedInt,
    x: &[u32],
    width: usize,
    rows: usize,
    y: &mut [i64],
    stride: usize,
) {
    use std::arch::x86_64::*;
    if w.pairs == 0 {
        return products_any(w, x, width, rows, y, stride);
    }
    let full = whole_tiles::<ROWS>(w, x, width, rows, y, stride, |panel, xs| {
        let mut acc = [_mm512_setzero_si512(); ROWS];
        for (p, wp) in panel.chunks_exact(COLS).enumerate() {
            // SAFETY: wp holds COLS = 16 words; an unaligned load.
            let w0 = _mm512_loadu_si512(wp.as_ptr().cast());
            for i in 0..ROWS {
                let a = _mm512_set1_epi32(xs[i][p] as i32);
                acc[i] = _mm512_dpwssd_epi32(acc[i], a, w0);
            }
        }
        let mut out = [[0i32; COLS]; ROWS];
        for (o, a) in out.iter_mut().zip(&acc) {
            // SAFETY: o holds COLS = 16 lanes.
            _mm512_storeu_si512(o.as_mut_ptr().cast(), *a);
        }
        out
    });
    if full < rows {
        let (xt, yt) = (&x[full * width..], &mut y[full * stride..]);
        products_avx2(w, xt, width, rows - full, yt, stride)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn products_avx2(
    w: &PackedInt,
    x: &[u32],
    width: usize,
    rows: usize,
    y: &mut [i64],
    stride: usize,
) {
    use std::arch::x86_64::*;
    const R: usize = ROWS / 2;
    if w.pairs == 0 {
        return products_any(w, x, width, rows, y, stride);
    }
    let full = whole_tiles::<R>(w, x, width, rows, y, stride, |panel, xs| {
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        for (p, wp) in panel.chunks_exact(COLS).enumerate() {
            // SAFETY: wp holds COLS = 16 words; unaligned loads.
            let w0 = _mm256_loadu_si256(wp.as_ptr().cast());
            let w1 = _mm256_loadu_si256(wp.as_ptr().add(8).cast());
            for i in 0..R {
                let a = _mm256_set1_epi32(xs[i][p] as i32);
                acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(a, w0));
                acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(a, w1));
            }
        }
        let mut out = [[0i32; COLS]; R];
        for (o, a) in out.iter_mut().zip(&acc) {
            // SAFETY: o holds COLS = 16 lanes.
            _mm256_storeu_si256(o.as_mut_ptr().cast(), a[0]);
            _mm256_storeu_si256(o.as_mut_ptr().add(8).cast(), a[1]);
        }
        out
    });
    if full < rows {
        let (xt, yt) = (&x[full * width..], &mut y[full * stride..]);
        products_any(w, xt, width, rows - full, yt, stride)
    }
}

/// The plain loops, in i64 (the tails of the vectorized ones, and other CPUs).
fn products_any(w: &PackedInt, x: &[u32], width: usize, rows: usize, y: &mut [i64], stride: usize) {
    let pairs = w.pairs;
    for v in 0..rows {
        let xs = &x[v * width..][..pairs];
        for c in 0..w.cols {
            let (panel, j) = (c / COLS, c % COLS);
            let ws = &w.panels[panel * pairs * COLS..][..pairs * COLS];
            y[v * stride + c] = xs
                .iter()
                .zip(ws.chunks_exact(COLS))
                .map(|(&a, wr)| {
                    let ((a0, a1), (b0, b1)) = (unpair(a), unpair(wr[j]));
                    a0 * b0 + a1 * b1
                })
                .sum();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every output is the plain i64 sum of its terms, in every kernel, for any number
        /// of vectors, columns and rows (tails of both tiles, odd k), with values up to
        /// the bound of [`fits`].
        #[test]
        fn products_are_exact_sums(
            k in 0usize..40, cols in 1usize..40, rows in 1usize..20, seed in 0u64..1000,
            wide in proptest::bool::ANY,
        ) {
            let mut s = seed;
            let (max_x, max_w) = if wide { (255, 127) } else { (32767, 3) };
            prop_assume!(fits(max_x, max_w, k));
            let mut next = |m: u64| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // The extremes often: they make the largest partial sums.
                match (s >> 60) % 4 {
                    0 => m as i32,
                    1 => -(m as i32),
                    _ => ((s >> 20) % (2 * m + 1)) as i32 - m as i32,
                }
            };
            let x: Vec<i32> = (0..rows * k).map(|_| next(max_x)).collect();
            let wv: Vec<i32> = (0..k * cols).map(|_| next(max_w)).collect();
            let packed = PackedInt::new(k, cols, |r, c| wv[r * cols + c]);
            let width = k.div_ceil(2) + 1;
            let mut xp = vec![u32::MAX; rows * width];
            for v in 0..rows {
                pack_pairs(&x[v * k..][..k], &mut xp[v * width..][..k.div_ceil(2)]);
            }
            let stride = cols + 1;
            let want: Vec<i64> = (0..rows * stride)
                .map(|i| {
                    let (v, c) = (i / stride, i % stride);
                    if c == cols {
                        return -1;
                    }
                    (0..k).map(|r| x[v * k + r] as i64 * wv[r * cols + c] as i64).sum()
                })
                .collect();
            let mut y = vec![-1i64; rows * stride];
            products(&packed, &xp, width, rows, &mut y, stride);
            prop_assert_eq!(&y, &want);
            let mut portable = vec![-1i64; rows * stride];
            products_any(&packed, &xp, width, rows, &mut portable, stride);
            prop_assert_eq!(&portable, &want);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut avx2 = vec![-1i64; rows * stride];
                // SAFETY: the CPU has AVX2 (checked just above).
                unsafe { products_avx2(&packed, &xp, width, rows, &mut avx2, stride) };
                prop_assert_eq!(&avx2, &want);
            }
        }
    }

    #[test]
    fn the_bound_admits_eight_bit_layers_and_refuses_overflow() {
        assert!(fits(255, 127, 66_000));
        assert!(!fits(255, 127, 66_400));
        assert!(!fits(32768, 1, 2));
        assert!(!fits(1, 32768, 2));
        // A pair of two extreme products: 2 * 32767^2 < 2^31.
        assert!(fits(32767, 32767, 1));
        assert!(fits(32767, 32767, 2));
        assert!(!fits(32767, 32767, 3));
    }
}
