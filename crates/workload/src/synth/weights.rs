//! Synthetic weights, generated directly as quantized integers.
//!
//! A kept weight is w = z, z ~ N(0, 1); the layer is then quantized exactly as section 2
//! would quantize it: q = round(z / max|z| * (2^(b-1) - 1)), so the largest magnitude is
//! exactly 2^(b-1) - 1. A kept weight that would round to 0 becomes +-1 (it was kept, so
//! it is non-zero). max|z| is found by a first pass over the random streams and the values
//! by a second pass over the same streams: no float copy of the tensor is ever held.

use rand::seq::index;
use rand::Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;

use super::{tensor_rng, Structure, SynthParams, Tensor, CHUNK};
use crate::geometry::ConvGeometry;
use crate::quant::signed_max;

/// Which filters and unrolled rows survive SSL-like structured pruning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslPlan {
    /// Per output channel (filter): true if kept.
    pub kept_filters: Vec<bool>,
    /// Per group g and row k at `g * K + k`: true if kept (for all filters of group g).
    pub kept_rows: Vec<bool>,
}

/// Splits a target zero fraction `s` between whole rows and whole filters.
///
/// Each group loses round(r * K) rows, r = 1 - sqrt(1 - s); the number of kept filters is
/// then chosen so that kept filters x kept rows comes closest to (1 - s) * Cout * K. For
/// s < 1 at least one filter and one row per group are kept; s = 1 removes everything.
pub fn ssl_plan(geom: &ConvGeometry, layer_index: usize, params: &SynthParams) -> SslPlan {
    let (cout, k, groups) = (geom.out_channels, geom.k_rows(), geom.groups);
    let s = params.weight_sparsity;
    let mut rng = tensor_rng(params.seed, layer_index, Tensor::WeightStructure, 0);
    let (rows_removed, filters_kept) = if s >= 1.0 {
        (k, 0)
    } else {
        let r = 1.0 - (1.0 - s).sqrt();
        let removed = ((r * k as f64).round() as usize).min(k - 1);
        let target = (1.0 - s) * (cout * k) as f64 / (k - removed) as f64;
        (removed, (target.round() as usize).clamp(1, cout))
    };
    let mut kept_filters = vec![true; cout];
    for i in index::sample(&mut rng, cout, cout - filters_kept) {
        kept_filters[i] = false;
    }
    let mut kept_rows = vec![true; groups * k];
    for g in 0..groups {
        for i in index::sample(&mut rng, k, rows_removed) {
            kept_rows[g * k + i] = false;
        }
    }
    SslPlan {
        kept_filters,
        kept_rows,
    }
}

/// Calls `visit(flat index, z)` for every kept weight of flat range chunk `c` (elements
/// c * CHUNK .. (c + 1) * CHUNK), in order, from that chunk's stream. Two calls visit the
/// same sequence.
fn for_each_kept(
    geom: &ConvGeometry,
    layer_index: usize,
    params: &SynthParams,
    plan: Option<&SslPlan>,
    c: usize,
    mut visit: impl FnMut(usize, f64),
) {
    let mut rng = tensor_rng(params.seed, layer_index, Tensor::Weights, c);
    let range = c * CHUNK..((c + 1) * CHUNK).min(geom.weight_elements());
    match plan {
        None => {
            let s = params.weight_sparsity;
            for i in range {
                // gen::<f64>() is in [0, 1): s = 0 keeps all, s = 1 keeps none.
                if rng.gen::<f64>() >= s {
                    visit(i, rng.sample(StandardNormal));
                }
            }
        }
        Some(plan) => {
            let (k, cpg) = (geom.k_rows(), geom.cols_per_group());
            for i in range {
                let (o, r) = (i / k, i % k);
                if plan.kept_filters[o] && plan.kept_rows[(o / cpg) * k + r] {
                    visit(i, rng.sample(StandardNormal));
                }
            }
        }
    }
}

/// Weights [Cout, Cin/G, R, S] of layer `layer_index`, quantized to `weight_bits`.
/// Chunks are generated in parallel; the result does not depend on the thread count.
pub fn synth_weights(
    geom: &ConvGeometry,
    layer_index: usize,
    weight_bits: u32,
    params: &SynthParams,
) -> Vec<i32> {
    let plan = match params.structure {
        Structure::Unstructured => None,
        Structure::Ssl => Some(ssl_plan(geom, layer_index, params)),
    };
    let plan = plan.as_ref();
    let chunks = geom.weight_elements().div_ceil(CHUNK);
    let max = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut m = 0.0f64;
            for_each_kept(geom, layer_index, params, plan, c, |_, z| {
                m = m.max(z.abs())
            });
            m
        })
        .reduce(|| 0.0, f64::max);
    let mut q = vec![0i32; geom.weight_elements()];
    if max == 0.0 {
        return q;
    }
    let scale = signed_max(weight_bits) as f64;
    q.par_chunks_mut(CHUNK).enumerate().for_each(|(c, out)| {
        let base = c * CHUNK;
        for_each_kept(geom, layer_index, params, plan, c, |i, z| {
            let v = ((z / max) * scale).round() as i32;
            out[i - base] = if v != 0 {
                v
            } else if z < 0.0 {
                -1
            } else {
                1
            };
        });
    });
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zero_fraction(q: &[i32]) -> f64 {
        q.iter().filter(|&&v| v == 0).count() as f64 / q.len() as f64
    }

    fn params(s: f64, structure: Structure) -> SynthParams {
        SynthParams {
            weight_sparsity: s,
            structure,
            ..Default::default()
        }
    }

    #[test]
    fn unstructured_zero_fraction_and_exact_max() {
        // 64 x 64 x 3 x 3 = 36,864 weights: the std of the zero fraction is
        // sqrt(0.7 * 0.3 / 36864) = 0.0024, so 0.01 is > 4 sigma.
        let g = ConvGeometry::conv(64, 64, 3, 1, 1, 1, [8, 8]);
        for (s, bits) in [(0.7, 8), (0.3, 16), (0.0, 4)] {
            let q = synth_weights(&g, 3, bits, &params(s, Structure::Unstructured));
            assert!(
                (zero_fraction(&q) - s).abs() < 0.01,
                "s={s}: {}",
                zero_fraction(&q)
            );
            let m = signed_max(bits) as i32;
            assert_eq!(q.iter().map(|v| v.abs()).max().unwrap(), m);
            assert!(q.iter().all(|v| v.abs() <= m));
        }
        let all = synth_weights(&g, 3, 8, &params(1.0, Structure::Unstructured));
        assert!(all.iter().all(|&v| v == 0));
    }

    #[test]
    fn magnitudes_are_bell_shaped() {
        // Half-normal scaled by max|z| (~4.4 sigma for 36,864 draws): the median kept
        // magnitude is 0.674 sigma, i.e. well below a quarter of the maximum.
        let g = ConvGeometry::conv(64, 64, 3, 1, 1, 1, [8, 8]);
        let q = synth_weights(&g, 0, 16, &params(0.0, Structure::Unstructured));
        let mut mags: Vec<i32> = q.iter().map(|v| v.abs()).collect();
        mags.sort_unstable();
        let median = mags[mags.len() / 2] as f64 / 32767.0;
        assert!((0.1..0.25).contains(&median), "{median}");
        let neg = q.iter().filter(|&&v| v < 0).count() as f64 / q.len() as f64;
        assert!((neg - 0.5).abs() < 0.02);
    }

    #[test]
    fn ssl_zeros_are_whole_filters_and_rows() {
        // grouped: Cout 32, G 2, K = 16/2 * 9 = 72 rows per group.
        let g = ConvGeometry::conv(16, 32, 3, 1, 1, 2, [6, 6]);
        let p = params(0.7, Structure::Ssl);
        let q = synth_weights(&g, 5, 8, &p);
        let plan = ssl_plan(&g, 5, &p);
        let (k, cpg) = (g.k_rows(), g.cols_per_group());
        for o in 0..32 {
            for r in 0..k {
                let kept = plan.kept_filters[o] && plan.kept_rows[(o / cpg) * k + r];
                assert_eq!(q[o * k + r] != 0, kept, "filter {o} row {r}");
            }
        }
        // r = 1 - sqrt(0.3) = 0.452: 33 of 72 rows removed per group; kept filters
        // round(0.3 * 32 * 72 / 39) = round(17.7) = 18 -> zeros 1 - 18*39/(32*72) = 0.695.
        assert_eq!(plan.kept_filters.iter().filter(|&&b| b).count(), 18);
        assert_eq!(plan.kept_rows[..k].iter().filter(|&&b| !b).count(), 33);
        assert!((zero_fraction(&q) - 0.6953).abs() < 1e-3);
        assert_eq!(q.iter().map(|v| v.abs()).max().unwrap(), 127);
    }

    #[test]
    fn ssl_depthwise_keeps_something_and_tracks_target() {
        // depthwise: 96 groups of 1 filter x 9 rows.
        let g = ConvGeometry::conv(96, 96, 3, 1, 1, 96, [7, 7]);
        for s in [0.2, 0.5, 0.9, 0.99] {
            let q = synth_weights(&g, 1, 8, &params(s, Structure::Ssl));
            let z = zero_fraction(&q);
            assert!(z < 1.0 && (z - s).abs() < 0.06, "s={s}: {z}");
        }
    }

    #[test]
    fn seeds_decide_the_tensor() {
        let g = ConvGeometry::fc(300, 40);
        let p = params(0.5, Structure::Unstructured);
        let a = synth_weights(&g, 2, 8, &p);
        assert_eq!(a, synth_weights(&g, 2, 8, &p));
        assert_ne!(a, synth_weights(&g, 2, 8, &SynthParams { seed: 2, ..p }));
        assert_ne!(a, synth_weights(&g, 3, 8, &p)); // another layer index
        let s = params(0.5, Structure::Ssl);
        assert_eq!(synth_weights(&g, 2, 8, &s), synth_weights(&g, 2, 8, &s));
        assert_ne!(
            synth_weights(&g, 2, 8, &s),
            synth_weights(&g, 2, 8, &SynthParams { seed: 9, ..s })
        );
    }

    #[test]
    fn chunked_generation_ignores_the_thread_count() {
        // 1,100,000 weights: two chunks of the random streams.
        let g = ConvGeometry::fc(1100, 1000);
        let run = |threads: usize, p: SynthParams| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| synth_weights(&g, 7, 16, &p))
        };
        for structure in [Structure::Unstructured, Structure::Ssl] {
            let p = params(0.7, structure);
            let one = run(1, p);
            assert_eq!(one, run(3, p));
            assert!((zero_fraction(&one) - 0.7).abs() < 0.01);
            assert_eq!(one.iter().map(|v| v.abs()).max().unwrap(), 32767);
        }
        // The second chunk is not a copy of the first.
        let u = run(2, params(0.0, Structure::Unstructured));
        assert_ne!(u[..1000], u[CHUNK..CHUNK + 1000]);
    }
}
