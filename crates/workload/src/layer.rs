//! A quantized layer ready for mapping, and im2col input vectors generated on the fly.

use crate::geometry::{ConvGeometry, LayerSpec};

/// A layer's integer weights and the signedness of its whole input tensor: everything of
/// a layer but its inputs, which are streamed ([`crate::Workload::stream_inputs`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    pub spec: LayerSpec,
    /// [Cout, Cin/G, R, S] row-major, |q| <= 2^(weight_bits-1) - 1.
    pub weights: Vec<i32>,
    /// True iff any input element of the whole tensor (all held samples) is negative.
    pub signed: bool,
}

/// One layer with integer weights and integer inputs (after section 2 quantization).
#[derive(Debug, Clone, PartialEq)]
pub struct QuantLayer {
    pub spec: LayerSpec,
    /// [Cout, Cin/G, R, S] row-major, |q| <= 2^(weight_bits-1) - 1.
    pub weights: Vec<i32>,
    /// [N, C, H, W] row-major, the first `samples` samples.
    pub input: Vec<i32>,
    pub samples: usize,
    /// True iff any input element of the whole tensor is negative.
    pub signed: bool,
}

impl QuantLayer {
    pub fn geom(&self) -> &ConvGeometry {
        &self.spec.geom
    }

    /// Input vectors of the layer: N * Ho * Wo.
    pub fn vectors(&self) -> usize {
        self.samples * self.geom().vectors_per_sample()
    }

    /// Weight q[n][k] of group `g`, logical column `n` (within the group), row `k`.
    #[inline]
    pub fn weight(&self, g: usize, n: usize, k: usize) -> i32 {
        let geom = self.geom();
        let col = g * geom.cols_per_group() + n;
        self.weights[col * geom.k_rows() + k]
    }

    /// Fills `out` (length groups * K) with input vector `v`: group g's rows at
    /// `out[g*K .. (g+1)*K]`, row k = (c*R + r)*S + s. Padded positions are 0.
    pub fn fill_vector(&self, v: usize, out: &mut [i32]) {
        im2col_vector(self.geom(), &self.input, v, out)
    }
}

/// im2col of one output position without materializing the layer's matrix (of integer
/// inputs, or of the float inputs they were quantized from).
pub fn im2col_vector<T: Copy + Default>(geom: &ConvGeometry, input: &[T], v: usize, out: &mut [T]) {
    let [h, w] = geom.input_hw;
    let [ho_n, wo_n] = geom.output_hw();
    let [r_n, s_n] = geom.kernel;
    let per_sample = ho_n * wo_n;
    let (n, pos) = (v / per_sample, v % per_sample);
    let (ho, wo) = (pos / wo_n, pos % wo_n);
    let sample = &input[n * geom.input_elements()..(n + 1) * geom.input_elements()];
    let (pad_w, dil_w) = (geom.padding[1] as isize, geom.dilation[1] as isize);
    let iw0 = (wo * geom.stride[1]) as isize - pad_w;
    // The kernel row lies wholly inside the input row: one copy (the common case).
    let inside = dil_w == 1 && iw0 >= 0 && iw0 as usize + s_n <= w;
    let mut k = 0;
    for c in 0..geom.in_channels {
        let plane = &sample[c * h * w..(c + 1) * h * w];
        for r in 0..r_n {
            let ih =
                (ho * geom.stride[0] + r * geom.dilation[0]) as isize - geom.padding[0] as isize;
            let dst = &mut out[k..k + s_n];
            k += s_n;
            if ih < 0 || ih as usize >= h {
                dst.fill(T::default());
                continue;
            }
            let row = &plane[ih as usize * w..(ih as usize + 1) * w];
            if inside {
                dst.copy_from_slice(&row[iw0 as usize..iw0 as usize + s_n]);
                continue;
            }
            for (s, d) in dst.iter_mut().enumerate() {
                let iw = iw0 + s as isize * dil_w;
                *d = if iw >= 0 && (iw as usize) < w {
                    row[iw as usize]
                } else {
                    T::default()
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn im2col_with_padding_and_stride() {
        // 1 channel 3x3 input 1..9, kernel 2x2, stride 2, pad 1 -> output 2x2.
        let g = ConvGeometry::conv(1, 1, 2, 2, 1, 1, [3, 3]);
        assert_eq!(g.output_hw(), [2, 2]);
        let input: Vec<i32> = (1..=9).collect();
        let mut out = [0; 4];
        // position (0,0): rows -1..0, cols -1..0 -> [pad, pad, pad, x(0,0)=1]
        im2col_vector(&g, &input, 0, &mut out);
        assert_eq!(out, [0, 0, 0, 1]);
        // position (1,1): rows 1..2, cols 1..2 -> [5, 6, 8, 9]
        im2col_vector(&g, &input, 3, &mut out);
        assert_eq!(out, [5, 6, 8, 9]);
    }

    proptest::proptest! {
        /// The copying fast path agrees with the definition element by element.
        #[test]
        fn im2col_matches_the_definition(
            c in 1usize..4, r in 1usize..4, s in 1usize..4, st in 1usize..3,
            pad in 0usize..3, dil in 1usize..3, h in 1usize..7, w in 1usize..7,
        ) {
            let g = ConvGeometry {
                in_channels: c, out_channels: 1, kernel: [r, s], stride: [st, st],
                padding: [pad, pad], dilation: [dil, dil], groups: 1, input_hw: [h, w],
            };
            proptest::prop_assume!(g.validate().is_ok());
            let input: Vec<i32> = (1..=(c * h * w) as i32).collect();
            let [ho, wo] = g.output_hw();
            let mut out = vec![0; g.k_rows()];
            for v in 0..ho * wo {
                im2col_vector(&g, &input, v, &mut out);
                let (oy, ox) = (v / wo, v % wo);
                for (k, &got) in out.iter().enumerate() {
                    let (ch, rr, ss) = (k / (r * s), k / s % r, k % s);
                    let iy = (oy * st + rr * dil) as isize - pad as isize;
                    let ix = (ox * st + ss * dil) as isize - pad as isize;
                    let want = if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                        input[ch * h * w + iy as usize * w + ix as usize]
                    } else {
                        0
                    };
                    proptest::prop_assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn grouped_vector_is_group_major() {
        // 2 channels, groups 2, 1x1 kernel: group g row 0 is channel g.
        let g = ConvGeometry::conv(2, 2, 1, 1, 0, 2, [1, 2]);
        let input = vec![10, 11, 20, 21];
        let mut out = [0; 2];
        im2col_vector(&g, &input, 1, &mut out);
        assert_eq!(out, [11, 21]);
    }
}
