//! Synthetic inputs, made as real-valued tensors and quantized with the arithmetic real
//! data takes ([`quant::quantize_inputs`](crate::quant::quantize_inputs)).
//!
//! A tensor is generated sample by sample from one sequential stream, so it can be
//! streamed without being held: a first pass over all held samples finds max|x| (and,
//! for the image, the sign) without storing them; a second pass regenerates the same
//! stream from its start and quantizes a chunk of samples at a time with that max.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use super::params::{tensor_rng, SynthParams, Tensor};
use crate::geometry::ConvGeometry;
use crate::quant::{quantize_inputs, unsigned_max, FloatStats, QuantInputs};
use crate::source::SampleSink;

/// What kind of tensor enters a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A dense, signed, mean/std-normalized image (the network's first layer).
    Image,
    /// Post-ReLU activations: >= 0, a fraction `act_sparsity` of exact zeros (after a
    /// conv's ReLU, or a transformer feed-forward's: the input of its down-projection).
    PostRelu,
    /// Dense signed activations, N(0, 1), without zeros: what a transformer's LayerNorm
    /// (or its attention) hands the Q, K, V, attention-output and feed-forward-up layers.
    Dense,
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

/// The real values of one layer's input, sample after sample, from the tensor's stream
/// (stream id tag 2, chunk 0): the same sequence however the samples are consumed.
struct Generator<'g> {
    geom: &'g ConvGeometry,
    kind: InputKind,
    sparsity: f64,
    rng: ChaCha8Rng,
    grid: Vec<f64>,
}

impl<'g> Generator<'g> {
    fn new(
        geom: &'g ConvGeometry,
        layer_index: usize,
        kind: InputKind,
        params: &SynthParams,
    ) -> Self {
        let [h, w] = geom.input_hw;
        Generator {
            geom,
            kind,
            sparsity: params.act_sparsity,
            rng: tensor_rng(params.seed, layer_index, Tensor::Inputs, 0),
            grid: vec![0.0; GRID.min(h) * GRID.min(w)],
        }
    }

    /// Appends the next sample's `C * H * W` values to `x`.
    fn sample(&mut self, x: &mut Vec<f64>) {
        match self.kind {
            InputKind::Image => self.image(x),
            InputKind::PostRelu => self.post_relu(x),
            InputKind::Dense => self.dense(x),
        }
    }

    /// N(0, 1) values, one per element.
    fn dense(&mut self, x: &mut Vec<f64>) {
        for _ in 0..self.geom.input_elements() {
            x.push(self.rng.sample(StandardNormal));
        }
    }

    /// Smooth pixels in [0, 1] (a random GRID x GRID field, bilinearly upsampled, plus a
    /// little noise), normalized per channel as image networks expect: (p - mean) / std.
    fn image(&mut self, x: &mut Vec<f64>) {
        let [h, w] = self.geom.input_hw;
        let (gh, gw) = (GRID.min(h), GRID.min(w));
        let (grid, rng) = (&mut self.grid, &mut self.rng);
        for c in 0..self.geom.in_channels {
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

    /// Rectified activations: zero with probability `sparsity`, else |z|, z ~ N(0, 1).
    fn post_relu(&mut self, x: &mut Vec<f64>) {
        for _ in 0..self.geom.input_elements() {
            x.push(if self.rng.gen::<f64>() < self.sparsity {
                0.0
            } else {
                self.rng.sample::<f64, _>(StandardNormal).abs()
            });
        }
    }
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

/// Post-ReLU values: kept values below max / (2^bits - 1) are raised to it, so every kept
/// value quantizes to at least 1 and the zero fraction survives quantization. The floor
/// is below max, so it does not change max|x|.
fn relu_floor(max: f64, bits: u32) -> f64 {
    max / unsigned_max(bits) as f64
}

#[inline]
fn raise(v: f64, floor: f64) -> f64 {
    if v > 0.0 {
        v.max(floor)
    } else {
        v
    }
}

/// Input [samples, C, H, W] of layer `layer_index`, quantized over the whole tensor
/// (held in memory: tests and small tensors; [`stream_synth_inputs`] streams it).
pub fn synth_inputs(
    geom: &ConvGeometry,
    layer_index: usize,
    samples: usize,
    input_bits: u32,
    kind: InputKind,
    params: &SynthParams,
) -> QuantInputs {
    let mut gen = Generator::new(geom, layer_index, kind, params);
    let mut x = Vec::with_capacity(samples * geom.input_elements());
    for _ in 0..samples {
        gen.sample(&mut x);
    }
    if kind == InputKind::PostRelu {
        let max = x.iter().fold(0.0f64, |m, &v| m.max(v));
        let floor = relu_floor(max, input_bits);
        x.iter_mut().for_each(|v| *v = raise(*v, floor));
    }
    // Finite by construction, so quantization cannot fail.
    #[allow(clippy::expect_used)]
    quantize_inputs(&x, input_bits).expect("synthetic inputs are finite")
}

/// Pass 1: signedness and max|x| over all `held` samples, generated and dropped one by
/// one. With `sign_only`, stops at the first negative value (max is then partial).
fn synth_stats(
    geom: &ConvGeometry,
    layer_index: usize,
    held: usize,
    kind: InputKind,
    params: &SynthParams,
    sign_only: bool,
) -> anyhow::Result<FloatStats> {
    let mut gen = Generator::new(geom, layer_index, kind, params);
    let mut stats = FloatStats::default();
    let mut x = Vec::with_capacity(geom.input_elements());
    for _ in 0..held {
        x.clear();
        gen.sample(&mut x);
        for &v in &x {
            stats.push(v)?;
        }
        if sign_only && stats.signed {
            break;
        }
    }
    Ok(stats)
}

/// Whether the input tensor of all `held` samples has a negative element: never for
/// post-ReLU inputs (|z| >= 0); for the image, generated until the first negative value.
pub fn synth_signed(
    geom: &ConvGeometry,
    layer_index: usize,
    held: usize,
    kind: InputKind,
    params: &SynthParams,
) -> anyhow::Result<bool> {
    Ok(match kind {
        InputKind::PostRelu => false,
        InputKind::Image | InputKind::Dense => {
            synth_stats(geom, layer_index, held, kind, params, true)?.signed
        }
    })
}

/// Streams the first `samples` of the `held` samples of [`synth_inputs`] to `sink`, at
/// most `chunk` samples per call, with the values [`synth_inputs`] gives for all held
/// samples. When `chunk` covers all held samples the tensor is made once, whole;
/// otherwise in two passes over the stream (see the module documentation), holding one
/// chunk.
#[allow(clippy::too_many_arguments)]
pub fn stream_synth_inputs(
    geom: &ConvGeometry,
    layer_index: usize,
    held: usize,
    samples: usize,
    input_bits: u32,
    kind: InputKind,
    params: &SynthParams,
    chunk: usize,
    sink: &mut SampleSink<'_>,
) -> anyhow::Result<()> {
    let per = geom.input_elements();
    let samples = samples.min(held);
    let chunk = chunk.max(1);
    if chunk >= held {
        let q = synth_inputs(geom, layer_index, held, input_bits, kind, params);
        if samples > 0 {
            sink(&q.values[..samples * per])?;
        }
        return Ok(());
    }
    let stats = synth_stats(geom, layer_index, held, kind, params, false)?;
    let scale = stats.scale(input_bits);
    let floor = relu_floor(stats.max, input_bits);
    let mut gen = Generator::new(geom, layer_index, kind, params);
    let mut x = Vec::with_capacity(per);
    let mut out = Vec::with_capacity(chunk.min(samples) * per);
    for s in 0..samples {
        x.clear();
        gen.sample(&mut x);
        match kind {
            InputKind::PostRelu => out.extend(x.iter().map(|&v| scale.quantize(raise(v, floor)))),
            InputKind::Image | InputKind::Dense => out.extend(x.iter().map(|&v| scale.quantize(v))),
        }
        if (s + 1) % chunk == 0 || s + 1 == samples {
            sink(&out)?;
            out.clear();
        }
    }
    Ok(())
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
