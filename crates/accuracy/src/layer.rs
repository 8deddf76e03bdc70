//! A crossbar layer of the network: its float product, its input quantized with the
//! calibrated range, and its exact integer product.

use crate::gemm::{self, Packed};
use crate::igemm::{self, PackedInt};
use functional::exact_products;
use rayon::prelude::*;
use workload::quant::{signed_max, unsigned_max, InputScale};
use workload::{im2col_vector, ConvGeometry, LayerWeights};

/// Input values of the vectors whose float products one task computes: bounds its buffer
/// (256 KiB of f64) whatever the batch.
const FLOAT_BLOCK_ELEMENTS: usize = 1 << 15;

/// Packed input words of the vectors whose exact products one task computes (128 KiB).
const INT_BLOCK_WORDS: usize = 1 << 15;

/// A crossbar layer with everything the accuracy paths need.
#[derive(Debug, Clone)]
pub struct CrossbarLayer {
    /// Quantized weights (section 2 of docs/model.md) and the calibrated signedness.
    pub quant: LayerWeights,
    /// The float weights, `[Cout, Cin/G, R, S]` row-major (integer bundles: as stored).
    pub weights: Vec<f64>,
    /// q_w -> w: max|w| / (2^(weight_bits-1) - 1) (1 for integer weights).
    pub weight_scale: f64,
    /// Added after the product, one per output channel (`NAME.bias`).
    pub bias: Option<Vec<f64>>,
    /// `input_max` of the manifest: the calibrated input range.
    pub input_max: f64,
}

impl CrossbarLayer {
    pub fn name(&self) -> &str {
        &self.quant.spec.name
    }

    pub fn geom(&self) -> &ConvGeometry {
        &self.quant.spec.geom
    }

    pub fn signed(&self) -> bool {
        self.quant.signed
    }

    /// Outputs of one sample: Cout * Ho * Wo, `[Cout, Ho*Wo]` row-major.
    pub fn outputs(&self) -> usize {
        let g = self.geom();
        g.out_channels * g.vectors_per_sample()
    }

    /// The float products W x of `n` samples (no bias), `[n, Cout, Ho*Wo]`: each output
    /// summed over k in order from -0.0, as `Iterator::sum` adds (the figures of
    /// accuracy.csv depend on the last bit), as a register-tiled product over blocks of
    /// vectors (crate::gemm).
    pub fn float_products(&self, x: &[f64], n: usize) -> Vec<f64> {
        let g = self.geom();
        let k = g.k_rows();
        let per = g.vectors_per_sample();
        let ng = g.cols_per_group().max(1);
        let outs = g.out_channels;
        let width = k * g.groups;
        let packed: Vec<Packed> = (0..g.groups)
            .map(|grp| Packed::new(k, ng, |r, c| self.weights[(grp * ng + c) * k + r]))
            .collect();
        let fill = |first: usize, xs: &mut [f64]| {
            for (i, v) in xs.chunks_mut(width.max(1)).enumerate() {
                im2col_vector(g, x, first + i, v);
            }
        };
        let product = |xs: &[f64], rows: usize, ys: &mut [f64]| {
            for (grp, w) in packed.iter().enumerate() {
                gemm::products(w, &xs[grp * k..], width, rows, &mut ys[grp * ng..], outs);
            }
        };
        let y = blocked(n * per, width, outs, FLOAT_BLOCK_ELEMENTS, fill, product);
        to_channel_major(&y, n, per, outs)
    }

    /// The input quantized with the calibrated range, saturating beyond it: signed
    /// layers to +-(2^(b-1) - 1) over [-max, max], unsigned to 0..2^b - 1 over [0, max].
    pub fn quantize(&self, x: &[f64], bits: u32) -> Vec<i32> {
        let max = self.input_max;
        let lo = if self.signed() { -max } else { 0.0 };
        let scale = InputScale::new(self.signed(), max, bits);
        x.iter()
            .map(|&v| scale.quantize(v.clamp(lo, max)))
            .collect()
    }

    /// q_in -> x: max / (2^b - 1) unsigned, max / (2^(b-1) - 1) signed.
    pub fn input_step(&self, bits: u32) -> f64 {
        let levels = if self.signed() {
            signed_max(bits)
        } else {
            unsigned_max(bits)
        };
        self.input_max / levels as f64
    }

    /// The exact integer products of `n` quantized samples, `[n, Cout, Ho*Wo]`: the
    /// [`CrossbarLayer::exact_vectors`] in channel-major order.
    pub fn exact_products(&self, q: &[i32], n: usize) -> Vec<i64> {
        let g = self.geom();
        to_channel_major(
            &self.exact_vectors(q, n),
            n,
            g.vectors_per_sample(),
            g.out_channels,
        )
    }

    /// The exact integer products of `n` quantized samples vector by vector, `[n, Ho*Wo,
    /// Cout]` (a vector's outputs together), as a batched matrix product: in 32-bit
    /// integer lanes (crate::igemm) where every value and partial sum fits them, else in
    /// f64 or i64 ([`exact_products`]); the same integers either way.
    pub fn exact_vectors(&self, q: &[i32], n: usize) -> Vec<i64> {
        let g = self.geom();
        let max = |v: &[i32]| v.iter().map(|a| a.unsigned_abs() as u64).max().unwrap_or(0);
        let (max_x, max_w) = (max(q), max(&self.quant.weights));
        if igemm::fits(max_x, max_w, g.k_rows()) {
            return self.int_products(q, n);
        }
        if (max_x as u128) * (max_w as u128) * (g.k_rows() as u128) < 1u128 << 53 {
            return self.exact_f64_products(q, n);
        }
        exact_products(
            &self.quant.weights,
            g.k_rows(),
            g.groups,
            n * g.vectors_per_sample(),
            |v, x| im2col_vector(g, q, v, x),
        )
    }

    /// [`CrossbarLayer::exact_vectors`] as a product of doubles (gemm::exact_products),
    /// `[n, Ho*Wo, Cout]`; the caller checked max|x| max|q_w| K < 2^53, so that every
    /// partial sum is an integer a double holds.
    fn exact_f64_products(&self, q: &[i32], n: usize) -> Vec<i64> {
        let g = self.geom();
        let k = g.k_rows();
        let ng = g.cols_per_group().max(1);
        let outs = g.out_channels;
        let width = k * g.groups;
        let w = &self.quant.weights;
        let packed: Vec<Packed> = (0..g.groups)
            .map(|grp| Packed::new(k, ng, |r, c| w[(grp * ng + c) * k + r] as f64))
            .collect();
        let fill = |first: usize, xs: &mut [f64]| {
            let mut vector = vec![0i32; width];
            for (i, v) in xs.chunks_mut(width.max(1)).enumerate() {
                im2col_vector(g, q, first + i, &mut vector);
                for (d, &s) in v.iter_mut().zip(&vector) {
                    *d = s as f64;
                }
            }
        };
        let product = |xs: &[f64], rows: usize, ys: &mut [i64]| {
            let mut yf = vec![0.0f64; ys.len()];
            for (grp, w) in packed.iter().enumerate() {
                gemm::exact_products(w, &xs[grp * k..], width, rows, &mut yf[grp * ng..], outs);
            }
            for (d, &s) in ys.iter_mut().zip(&yf) {
                *d = s as i64;
            }
        };
        let vectors = n * g.vectors_per_sample();
        blocked(vectors, width, outs, FLOAT_BLOCK_ELEMENTS, fill, product)
    }

    /// [`CrossbarLayer::exact_vectors`] in 32-bit lanes, `[n, Ho*Wo, Cout]`; the caller
    /// checked [`igemm::fits`].
    fn int_products(&self, q: &[i32], n: usize) -> Vec<i64> {
        let g = self.geom();
        let k = g.k_rows();
        let pairs = k.div_ceil(2);
        let ng = g.cols_per_group().max(1);
        let outs = g.out_channels;
        let width = pairs * g.groups;
        let w = &self.quant.weights;
        let packed: Vec<PackedInt> = (0..g.groups)
            .map(|grp| PackedInt::new(k, ng, |r, c| w[(grp * ng + c) * k + r]))
            .collect();
        let fill = |first: usize, xs: &mut [u32]| {
            let mut vector = vec![0i32; k * g.groups];
            for (i, v) in xs.chunks_mut(width.max(1)).enumerate() {
                im2col_vector(g, q, first + i, &mut vector);
                for grp in 0..g.groups {
                    igemm::pack_pairs(&vector[grp * k..][..k], &mut v[grp * pairs..][..pairs]);
                }
            }
        };
        let product = |xs: &[u32], rows: usize, ys: &mut [i64]| {
            for (grp, w) in packed.iter().enumerate() {
                igemm::products(
                    w,
                    &xs[grp * pairs..],
                    width,
                    rows,
                    &mut ys[grp * ng..],
                    outs,
                );
            }
        };
        let vectors = n * g.vectors_per_sample();
        blocked(vectors, width, outs, INT_BLOCK_WORDS, fill, product)
    }
}

/// The products of `vectors` input vectors of `width` elements each, `[vectors, outs]`,
/// in blocks of as many vectors as `budget` elements hold (at least one), one block a
/// task: `fill(first, xs)` lays out the block's vectors from vector `first` on, `width`
/// elements a vector, and `product(xs, rows, ys)` writes their `rows` x `outs` outputs.
/// A block's outputs depend on its vectors alone, so the figures do not depend on the
/// blocks or the threads.
fn blocked<X, Y>(
    vectors: usize,
    width: usize,
    outs: usize,
    budget: usize,
    fill: impl Fn(usize, &mut [X]) + Sync,
    product: impl Fn(&[X], usize, &mut [Y]) + Sync,
) -> Vec<Y>
where
    X: Copy + Default,
    Y: Copy + Default + Send,
{
    let block = (budget / width.max(1)).clamp(1, vectors.max(1));
    let mut y = vec![Y::default(); vectors * outs];
    y.par_chunks_mut((block * outs).max(1))
        .enumerate()
        .for_each(|(b, ys)| {
            let rows = ys.len() / outs.max(1);
            let mut xs = vec![X::default(); rows * width];
            fill(b * block, &mut xs);
            product(&xs, rows, ys);
        });
    y
}

/// Side of the square tiles [`to_channel_major`] transposes (of 8-byte values: two
/// tiles are 32 KiB, in the L1 cache).
const TILE: usize = 32;

/// `[n, Ho*Wo, Cout]` (a vector's outputs together) to `[n, Cout, Ho*Wo]`, tile by tile
/// so that both sides are read and written in runs.
pub(crate) fn to_channel_major<T: Copy + Default>(
    y: &[T],
    n: usize,
    per: usize,
    outs: usize,
) -> Vec<T> {
    let mut out = vec![T::default(); y.len()];
    for s in 0..n {
        let (src, dst) = (
            &y[s * per * outs..][..per * outs],
            &mut out[s * per * outs..][..per * outs],
        );
        for p0 in (0..per).step_by(TILE) {
            for o0 in (0..outs).step_by(TILE) {
                for pos in p0..(p0 + TILE).min(per) {
                    let row = &src[pos * outs..][..outs];
                    for o in o0..(o0 + TILE).min(outs) {
                        dst[o * per + pos] = row[o];
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use functional::exact_product;
    use proptest::prelude::*;
    use workload::{LayerKind, LayerSpec};

    /// The float product W x of one sample, one output at a time (the oracle of
    /// [`CrossbarLayer::float_products`]).
    fn float_product(l: &CrossbarLayer, x: &[f64]) -> Vec<f64> {
        let g = l.geom();
        let k = g.k_rows();
        let per = g.vectors_per_sample();
        let ng = g.cols_per_group();
        let mut out = vec![0.0; g.out_channels * per];
        let mut vector = vec![0.0; k * g.groups];
        for pos in 0..per {
            im2col_f64(g, x, pos, &mut vector);
            for o in 0..g.out_channels {
                let grp = o / ng.max(1);
                let xs = &vector[grp * k..][..k];
                let w = &l.weights[o * k..][..k];
                out[o * per + pos] = xs.iter().zip(w).map(|(a, b)| a * b).sum();
            }
        }
        out
    }

    /// The exact product of one sample, vector by vector.
    fn exact(l: &CrossbarLayer, q: &[i32]) -> Vec<i64> {
        let g = l.geom();
        let k = g.k_rows();
        let per = g.vectors_per_sample();
        let mut out = vec![0i64; g.out_channels * per];
        let mut vector = vec![0i32; k * g.groups];
        let mut y = vec![0i64; g.out_channels];
        for pos in 0..per {
            im2col_vector(g, q, pos, &mut vector);
            exact_product(&l.quant.weights, &vector, k, g.groups, &mut y);
            for (o, &v) in y.iter().enumerate() {
                out[o * per + pos] = v;
            }
        }
        out
    }

    /// The float im2col vector of output position `pos` of one sample (the order of
    /// [`workload::im2col_vector`]: channel, kernel row, kernel column; padding reads 0).
    fn im2col_f64(geom: &ConvGeometry, x: &[f64], pos: usize, out: &mut [f64]) {
        let [h, w] = geom.input_hw;
        let [_, wo_n] = geom.output_hw();
        let [r_n, s_n] = geom.kernel;
        let (ho, wo) = (pos / wo_n, pos % wo_n);
        let mut k = 0;
        for c in 0..geom.in_channels {
            for r in 0..r_n {
                let ih = (ho * geom.stride[0] + r * geom.dilation[0]) as isize
                    - geom.padding[0] as isize;
                for s in 0..s_n {
                    let iw = (wo * geom.stride[1] + s * geom.dilation[1]) as isize
                        - geom.padding[1] as isize;
                    out[k] = if ih < 0 || iw < 0 || ih as usize >= h || iw as usize >= w {
                        0.0
                    } else {
                        x[(c * h + ih as usize) * w + iw as usize]
                    };
                    k += 1;
                }
            }
        }
    }

    fn layer(geom: ConvGeometry, weights: Vec<f64>, signed: bool, input_max: f64) -> CrossbarLayer {
        let q = workload::quant::quantize_weights(&weights, 8).unwrap();
        let max = weights.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        CrossbarLayer {
            quant: LayerWeights {
                spec: LayerSpec {
                    name: "l".into(),
                    kind: LayerKind::Conv,
                    geom,
                },
                weights: q,
                signed,
            },
            weights,
            weight_scale: max / 127.0,
            bias: None,
            input_max,
        }
    }

    fn conv(
        cin_g: usize,
        groups: usize,
        cout_g: usize,
        r: usize,
        h: usize,
        stride: usize,
        pad: usize,
    ) -> ConvGeometry {
        ConvGeometry {
            in_channels: cin_g * groups,
            out_channels: cout_g * groups,
            kernel: [r, r],
            stride: [stride, stride],
            padding: [pad, pad],
            dilation: [1, 1],
            groups,
            input_hw: [h, h],
        }
    }

    proptest! {
        /// The float product of integer-valued data equals the exact integer product of
        /// the same values (both read the same im2col vectors).
        #[test]
        fn float_and_exact_products_agree_on_integers(
            cin_g in 1usize..3, groups in 1usize..3, cout_g in 1usize..3,
            r in 1usize..4, h in 3usize..7, stride in 1usize..3, pad in 0usize..2, seed in 0u64..1000,
        ) {
            let geom = conv(cin_g, groups, cout_g, r, h, stride, pad);
            prop_assume!(geom.validate().is_ok());
            let mut s = seed;
            let mut next = || { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((s >> 33) % 7) as i32 - 3 };
            let w: Vec<i32> = (0..geom.weight_elements()).map(|_| next()).collect();
            let x: Vec<i32> = (0..geom.input_elements()).map(|_| next()).collect();
            let mut l = layer(geom, w.iter().map(|&v| v as f64).collect(), true, 3.0);
            l.quant.weights = w;
            let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            let exact: Vec<f64> = exact(&l, &x).iter().map(|&v| v as f64).collect();
            prop_assert_eq!(float_product(&l, &xf), exact);
        }

        /// A batch of samples gives, sample by sample and to the last bit (the sign of
        /// zero included), the products of one sample at a time.
        #[test]
        fn batched_products_equal_one_sample_at_a_time(
            cin_g in 1usize..4, groups in 1usize..3, cout_g in 1usize..6,
            r in 1usize..4, h in 3usize..7, stride in 1usize..3, pad in 0usize..2,
            n in 1usize..5, seed in 0u64..1000,
        ) {
            let geom = conv(cin_g, groups, cout_g, r, h, stride, pad);
            prop_assume!(geom.validate().is_ok());
            let mut s = seed;
            let mut next = || { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0 };
            let w: Vec<f64> = (0..geom.weight_elements()).map(|_| next()).collect();
            // Some exact zeros of either sign: a -0.0 sum must stay -0.0.
            let x: Vec<f64> = (0..n * geom.input_elements())
                .map(|i| match i % 5 { 0 => 0.0, 1 => -0.0, _ => next() * 3.0 })
                .collect();
            let per = geom.input_elements();
            let outs = geom.out_channels * geom.vectors_per_sample();
            let l = layer(geom, w, true, 2.0);
            let batched = l.float_products(&x, n);
            let q = l.quantize(&x, 8);
            let exact_batched = l.exact_products(&q, n);
            for i in 0..n {
                let one = float_product(&l, &x[i * per..][..per]);
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&batched[i * outs..][..outs]), bits(&one));
                prop_assert_eq!(&exact_batched[i * outs..][..outs], &exact(&l, &q[i * per..][..per])[..]);
            }
        }
    }

    proptest! {
        /// The exact products equal the plain i64 sums on every side of the bounds of
        /// the 32-bit kernel (igemm::fits) and of the product of doubles (2^53): small
        /// values through the first, 16-bit ones through the second, larger ones through
        /// functional::exact_products.
        #[test]
        fn exact_products_are_exact_on_both_sides_of_the_lane_bound(
            cin_g in 1usize..4, groups in 1usize..3, cout_g in 1usize..20,
            r in 1usize..4, h in 3usize..8, stride in 1usize..3, pad in 0usize..2,
            n in 1usize..4,
            max_x in prop::sample::select(vec![3i32, 255, 32767, 65535, 1 << 20, i32::MAX]),
            max_w in prop::sample::select(vec![127i32, 32767, 1 << 24]),
            seed in 0u64..1000,
        ) {
            let geom = conv(cin_g, groups, cout_g, r, h, stride, pad);
            prop_assume!(geom.validate().is_ok());
            let mut s = seed;
            let mut next = |m: i32| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (((s >> 20) % (2 * m as u64 + 1)) as i64 - m as i64) as i32
            };
            let w: Vec<i32> = (0..geom.weight_elements()).map(|_| next(max_w)).collect();
            let x: Vec<i32> = (0..n * geom.input_elements()).map(|_| next(max_x)).collect();
            let per = geom.input_elements();
            let outs = geom.out_channels * geom.vectors_per_sample();
            let mut l = layer(geom, w.iter().map(|&v| v as f64).collect(), true, 1.0);
            l.quant.weights = w;
            let got = l.exact_products(&x, n);
            for i in 0..n {
                prop_assert_eq!(&got[i * outs..][..outs], &exact(&l, &x[i * per..][..per])[..]);
            }
        }
    }

    /// The tiled transpose moves every value where the plain loop does, with runs and
    /// tails of tiles on both sides.
    #[test]
    fn channel_major_is_the_transpose_of_each_sample() {
        for (n, per, outs) in [(2, 70, 45), (1, 1, 100), (3, 33, 1), (1, 32, 32)] {
            let y: Vec<usize> = (0..n * per * outs).collect();
            let got = to_channel_major(&y, n, per, outs);
            for s in 0..n {
                for pos in 0..per {
                    for o in 0..outs {
                        let at = s * per * outs;
                        assert_eq!(got[at + o * per + pos], y[at + pos * outs + o]);
                    }
                }
            }
        }
    }

    #[test]
    fn inputs_beyond_the_calibrated_range_saturate() {
        let l = layer(ConvGeometry::fc(3, 1), vec![1.0, 1.0, 1.0], false, 2.0);
        assert_eq!(l.quantize(&[-1.0, 1.0, 5.0], 4), [0, 8, 15]);
        let s = layer(ConvGeometry::fc(3, 1), vec![1.0, 1.0, 1.0], true, 2.0);
        assert_eq!(s.quantize(&[-5.0, 1.0, 5.0], 4), [-7, 4, 7]);
        assert_eq!(s.input_step(4), 2.0 / 7.0);
    }
}
