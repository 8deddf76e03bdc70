//! Synthetic inputs, made as real-valued tensors and quantized by
//! [`quant::quantize_inputs`](crate::quant::quantize_inputs), the path real data takes.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use super::{tensor_rng, SynthParams, Tensor};
use crate::geometry::ConvGeometry;
use crate::quant::{quantize_inputs, unsigned_max, QuantInputs};

/// What kind of tensor enters a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A dense, signed, mean/std-normalized image (the network's first layer).
    Image,
    /// Post-ReLU activations: >= 0, a fraction `act_sparsity` of exact zeros.
    PostRelu,
}

impl InputKind {
    /// Layer 0 sees the image; every later layer sees activations.
    pub fn for_layer(index: usize) -> Self {
        if index == 0 {
            InputKind::Image
        } else {
            InputKind::PostRelu
        }
    }
}

/// Per-channel mean and std of ImageNet RGB, cycled over channels.
const MEAN: [f64; 3] = [0.485, 0.456, 0.406];
const STD: [f64; 3] = [0.229, 0.224, 0.225];
/// Side of the coarse random grid an image channel is interpolated from.
const GRID: usize = 8;

/// Input [samples, C, H, W] of layer `layer_index`, quantized over the whole tensor.
pub fn synth_inputs(
    geom: &ConvGeometry,
    layer_index: usize,
    samples: usize,
    input_bits: u32,
    kind: InputKind,
    params: &SynthParams,
) -> QuantInputs {
    let mut rng = tensor_rng(params.seed, layer_index, Tensor::Inputs, 0);
    let n = samples * geom.input_elements();
    let x = match kind {
        InputKind::Image => image(geom, samples, &mut rng),
        InputKind::PostRelu => post_relu(n, params.act_sparsity, input_bits, &mut rng),
    };
    // Finite by construction, so quantization cannot fail.
    #[allow(clippy::expect_used)]
    quantize_inputs(&x, input_bits).expect("synthetic inputs are finite")
}

/// Smooth pixels in [0, 1] (a random GRID x GRID field, bilinearly upsampled, plus a
/// little noise), normalized per channel as image networks expect: (p - mean) / std.
fn image(geom: &ConvGeometry, samples: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let [h, w] = geom.input_hw;
    let (gh, gw) = (GRID.min(h), GRID.min(w));
    let mut x = Vec::with_capacity(samples * geom.input_elements());
    let mut grid = vec![0.0f64; gh * gw];
    for _ in 0..samples {
        for c in 0..geom.in_channels {
            grid.iter_mut().for_each(|v| *v = rng.gen::<f64>());
            for y in 0..h {
                let (y0, y1, fy) = lerp_pos(y, h, gh);
                for xx in 0..w {
                    let (x0, x1, fx) = lerp_pos(xx, w, gw);
                    let top = grid[y0 * gw + x0] * (1.0 - fx) + grid[y0 * gw + x1] * fx;
                    let bot = grid[y1 * gw + x0] * (1.0 - fx) + grid[y1 * gw + x1] * fx;
                    let noise: f64 = rng.sample(StandardNormal);
                    let p = (top * (1.0 - fy) + bot * fy + 0.05 * noise).clamp(0.0, 1.0);
                    x.push((p - MEAN[c % 3]) / STD[c % 3]);
                }
            }
        }
    }
    x
}

/// Grid cells around output position `i` of `n`, and the weight of the second one.
fn lerp_pos(i: usize, n: usize, g: usize) -> (usize, usize, f64) {
    if n <= 1 || g <= 1 {
        return (0, 0, 0.0);
    }
    let t = i as f64 * (g - 1) as f64 / (n - 1) as f64;
    let i0 = (t.floor() as usize).min(g - 2);
    (i0, i0 + 1, t - i0 as f64)
}

/// Rectified activations: zero with probability `sparsity`, else |z|, z ~ N(0, 1).
/// Kept values below max / (2^bits - 1) are raised to it, so every kept value quantizes
/// to at least 1 and the zero fraction survives quantization.
fn post_relu(n: usize, sparsity: f64, bits: u32, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let mut x: Vec<f64> = (0..n)
        .map(|_| {
            if rng.gen::<f64>() < sparsity {
                0.0
            } else {
                rng.sample::<f64, _>(StandardNormal).abs()
            }
        })
        .collect();
    let max = x.iter().fold(0.0f64, |m, &v| m.max(v));
    let floor = max / unsigned_max(bits) as f64;
    for v in x.iter_mut().filter(|v| **v > 0.0) {
        *v = v.max(floor);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zero_fraction(q: &[i32]) -> f64 {
        q.iter().filter(|&&v| v == 0).count() as f64 / q.len() as f64
    }

    #[test]
    fn post_relu_zero_fraction_survives_quantization() {
        // 2 samples x 32 x 16 x 16 = 16,384 values: sigma of the fraction 0.004.
        let g = ConvGeometry::conv(32, 8, 3, 1, 1, 1, [16, 16]);
        for (s, bits) in [(0.5, 16), (0.8, 4), (0.0, 8)] {
            let p = SynthParams {
                act_sparsity: s,
                ..Default::default()
            };
            let q = synth_inputs(&g, 2, 2, bits, InputKind::PostRelu, &p);
            assert!(!q.signed);
            assert_eq!(q.values.len(), 16_384);
            assert!(
                (zero_fraction(&q.values) - s).abs() < 0.02,
                "s={s} bits={bits}"
            );
            assert_eq!(*q.values.iter().max().unwrap() as i64, unsigned_max(bits));
        }
        let p = SynthParams {
            act_sparsity: 1.0,
            ..Default::default()
        };
        assert!(synth_inputs(&g, 2, 1, 8, InputKind::PostRelu, &p)
            .values
            .iter()
            .all(|&v| v == 0));
    }

    #[test]
    fn image_is_dense_signed_and_smooth() {
        let g = ConvGeometry::conv(3, 8, 3, 1, 1, 1, [32, 32]);
        let q = synth_inputs(&g, 0, 1, 16, InputKind::Image, &SynthParams::default());
        assert!(q.signed);
        assert!(zero_fraction(&q.values) < 0.01);
        assert_eq!(q.values.iter().map(|v| v.abs()).max().unwrap(), 32767);
        // Neighbouring pixels differ far less than random pairs would.
        let plane = &q.values[..32 * 32];
        let d: f64 = plane
            .windows(2)
            .map(|p| (p[1] - p[0]).abs() as f64)
            .sum::<f64>()
            / 1023.0;
        let spread = (plane.iter().max().unwrap() - plane.iter().min().unwrap()) as f64;
        assert!(d < 0.15 * spread, "{d} vs {spread}");
    }

    #[test]
    fn same_seed_same_inputs() {
        let g = ConvGeometry::fc(64, 10);
        let p = SynthParams::default();
        let a = synth_inputs(&g, 1, 4, 8, InputKind::PostRelu, &p);
        assert_eq!(a, synth_inputs(&g, 1, 4, 8, InputKind::PostRelu, &p));
        let b = synth_inputs(
            &g,
            1,
            4,
            8,
            InputKind::PostRelu,
            &SynthParams { seed: 7, ..p },
        );
        assert_ne!(a.values, b.values);
        // An fc layer has a 1x1 "image": the generator still works for layer 0.
        assert_eq!(
            synth_inputs(&g, 0, 2, 8, InputKind::Image, &p).values.len(),
            128
        );
    }
}

#[cfg(test)]
mod golden {
    use super::*;

    /// FNV-1a over the quantized values, then the sign bit.
    pub(crate) fn fnv(q: &QuantInputs) -> u64 {
        q.values.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &v| {
            (h ^ v as u32 as u64).wrapping_mul(0x100_0000_01b3)
        }) ^ q.signed as u64
    }

    /// Digests recorded from the generator before inputs were streamed: streaming must
    /// not change a single value of any seed's tensor.
    #[test]
    fn values_are_those_of_the_whole_tensor_generator() {
        let p = SynthParams::default();
        let p2 = SynthParams {
            seed: 9,
            act_sparsity: 0.3,
            ..p
        };
        let conv = |c, h, w| ConvGeometry::conv(c, 8, 3, 1, 1, 1, [h, w]);
        let cases = [
            (
                conv(3, 32, 32),
                0,
                3,
                8,
                InputKind::Image,
                p,
                0xd2ab_a91e_1cfe_7206,
            ),
            (
                conv(1, 5, 7),
                0,
                4,
                16,
                InputKind::Image,
                p2,
                0xe560_060e_ca2c_be72,
            ),
            (
                ConvGeometry::fc(10, 2),
                0,
                5,
                4,
                InputKind::Image,
                p,
                0x4e96_9a93_f40b_b530,
            ),
            (
                conv(16, 9, 9),
                3,
                3,
                8,
                InputKind::PostRelu,
                p,
                0xc7c1_e391_cefb_2c40,
            ),
            (
                ConvGeometry::fc(37, 2),
                2,
                6,
                3,
                InputKind::PostRelu,
                p2,
                0x4042_f287_20c6_f50e,
            ),
        ];
        for (g, i, n, b, k, p, want) in cases {
            assert_eq!(fnv(&synth_inputs(&g, i, n, b, k, &p)), want, "{g:?} {k:?}");
        }
    }
}
