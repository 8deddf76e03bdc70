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

use super::params::{tensor_rng, Structure, SynthParams, Tensor, CHUNK};
use super::roles::ZeroLines;
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
/// same sequence. A weight `lines` zeroes is drawn as usual (the stream stays aligned with
/// the layer without pruned heads) but not visited.
fn for_each_kept(
    geom: &ConvGeometry,
    layer_index: usize,
    params: &SynthParams,
    plan: Option<&SslPlan>,
    lines: &ZeroLines,
    c: usize,
    mut visit: impl FnMut(usize, f64),
) {
    let mut rng = tensor_rng(params.seed, layer_index, Tensor::Weights, c);
    let range = c * CHUNK..((c + 1) * CHUNK).min(geom.weight_elements());
    let k = geom.k_rows();
    let lined = !lines.is_empty();
    match plan {
        None => {
            let s = params.weight_sparsity;
            for i in range {
                // gen::<f64>() is in [0, 1): s = 0 keeps all, s = 1 keeps none.
                if rng.gen::<f64>() >= s {
                    let z = rng.sample(StandardNormal);
                    if !(lined && lines.zeroes(i / k, i % k)) {
                        visit(i, z);
                    }
                }
            }
        }
        Some(plan) => {
            let cpg = geom.cols_per_group();
            for i in range {
                let (o, r) = (i / k, i % k);
                if plan.kept_filters[o] && plan.kept_rows[(o / cpg) * k + r] {
                    let z = rng.sample(StandardNormal);
                    if !(lined && lines.zeroes(o, r)) {
                        visit(i, z);
                    }
                }
            }
        }
    }
}

/// max|z| over the kept weights of a tensor generated in `chunks` chunks: `kept(c, visit)`
/// calls `visit(flat index, z)` for every kept weight of chunk c, the same sequence every
/// time. Chunks run in parallel; the result does not depend on the thread count.
fn max_abs<F>(chunks: usize, kept: &F) -> f64
where
    F: Fn(usize, &mut dyn FnMut(usize, f64)) + Sync,
{
    (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut m = 0.0f64;
            kept(c, &mut |_, z| m = m.max(z.abs()));
            m
        })
        .reduce(|| 0.0, f64::max)
}

/// The quantized values of flat elements `range` of a tensor generated in chunks of
/// `chunk_len` elements (`kept` as in [`max_abs`]), scaled by `max`: the chunks that
/// overlap the range are drawn again, in parallel, and only the range is written.
fn fill_range<F>(
    range: std::ops::Range<usize>,
    chunk_len: usize,
    max: f64,
    weight_bits: u32,
    kept: &F,
) -> Vec<i32>
where
    F: Fn(usize, &mut dyn FnMut(usize, f64)) + Sync,
{
    let mut q = vec![0i32; range.len()];
    if max == 0.0 || range.is_empty() {
        return q;
    }
    let scale = signed_max(weight_bits) as f64;
    // The piece of `q` each overlapping chunk writes, with the flat index it starts at.
    let mut pieces: Vec<(usize, usize, &mut [i32])> = Vec::new();
    let mut rest = &mut q[..];
    let mut at = range.start;
    while at < range.end {
        let c = at / chunk_len;
        let end = ((c + 1) * chunk_len).min(range.end);
        let (piece, tail) = rest.split_at_mut(end - at);
        pieces.push((c, at, piece));
        rest = tail;
        at = end;
    }
    pieces.into_par_iter().for_each(|(c, base, out)| {
        let end = base + out.len();
        kept(c, &mut |i, z| {
            if i < base || i >= end {
                return;
            }
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

/// Weights [Cout, Cin/G, R, S] of layer `layer_index`, quantized to `weight_bits`.
/// Chunks are generated in parallel; the result does not depend on the thread count.
pub fn synth_weights(
    geom: &ConvGeometry,
    layer_index: usize,
    weight_bits: u32,
    params: &SynthParams,
) -> Vec<i32> {
    synth_weights_zeroing(
        geom,
        layer_index,
        weight_bits,
        params,
        &ZeroLines::default(),
    )
}

/// [`synth_weights`] with the columns and rows `lines` names zero (pruned heads): the
/// other weights follow the structure as without them, and the layer is quantized over
/// the weights that remain.
pub fn synth_weights_zeroing(
    geom: &ConvGeometry,
    layer_index: usize,
    weight_bits: u32,
    params: &SynthParams,
    lines: &ZeroLines,
) -> Vec<i32> {
    SynthColumns::new(geom, layer_index, weight_bits, params, lines).columns(0..geom.out_channels)
}

/// What a structure decides over a whole layer before any value is written.
#[derive(Debug, Clone)]
enum Plan {
    /// Unstructured, or SSL with its plan.
    Kept(Option<SslPlan>),
    /// Magnitude pruning: the (|z|, index) cutoff.
    Magnitude(Option<(f64, usize)>),
    /// N:M, columns per stream.
    NM { n: u32, m: u32, cols: usize },
}

/// A layer's synthetic weights, written a range of output channels (columns of the
/// crossbar matrix) at a time: the structure's plan and the quantization scale (max|z|
/// of the kept weights) are computed once over the whole layer, from the same streams
/// as [`synth_weights_zeroing`], so every range holds exactly the values the whole
/// tensor holds there. A range redraws only the streams (chunks) it overlaps.
#[derive(Debug, Clone)]
pub struct SynthColumns<'a> {
    geom: &'a ConvGeometry,
    layer_index: usize,
    weight_bits: u32,
    params: &'a SynthParams,
    lines: &'a ZeroLines,
    plan: Plan,
    max: f64,
}

impl<'a> SynthColumns<'a> {
    pub fn new(
        geom: &'a ConvGeometry,
        layer_index: usize,
        weight_bits: u32,
        params: &'a SynthParams,
        lines: &'a ZeroLines,
    ) -> Self {
        let plan = match params.structure {
            Structure::Unstructured => Plan::Kept(None),
            Structure::Ssl => Plan::Kept(Some(ssl_plan(geom, layer_index, params))),
            Structure::Magnitude => {
                Plan::Magnitude(magnitude_cutoff(geom, layer_index, params, lines))
            }
            Structure::NM { n, m } => Plan::NM {
                n,
                m,
                cols: (CHUNK / geom.k_rows().max(1)).max(1),
            },
        };
        let mut w = SynthColumns {
            geom,
            layer_index,
            weight_bits,
            params,
            lines,
            plan,
            max: 0.0,
        };
        w.max = max_abs(w.chunks(), &|c, visit| w.kept(c, visit));
        w
    }

    /// Elements per stream.
    fn chunk_len(&self) -> usize {
        match self.plan {
            Plan::NM { cols, .. } => cols * self.geom.k_rows().max(1),
            _ => CHUNK,
        }
    }

    fn chunks(&self) -> usize {
        self.geom.weight_elements().div_ceil(self.chunk_len())
    }

    /// Calls `visit(flat index, z)` for every kept weight of chunk `c`, in order.
    fn kept(&self, c: usize, visit: &mut dyn FnMut(usize, f64)) {
        let (geom, li, params, lines) = (self.geom, self.layer_index, self.params, self.lines);
        match &self.plan {
            Plan::Kept(plan) => for_each_kept(geom, li, params, plan.as_ref(), lines, c, visit),
            Plan::Magnitude(cut) => for_each_drawn(geom, li, params, lines, c, |i, z| {
                if above(*cut, z.abs(), i) {
                    visit(i, z)
                }
            }),
            &Plan::NM { n, m, cols } => {
                for_each_kept_nm(geom, li, params, lines, (n, m), cols, c, visit)
            }
        }
    }

    /// Output channels `cols` of the layer, `[cols.len(), Cin/G, R, S]` row-major.
    pub fn columns(&self, cols: std::ops::Range<usize>) -> Vec<i32> {
        let k = self.geom.k_rows();
        let range = cols.start * k..cols.end.min(self.geom.out_channels) * k;
        fill_range(
            range,
            self.chunk_len(),
            self.max,
            self.weight_bits,
            &|c, visit| self.kept(c, visit),
        )
    }
}

/// Calls `visit(flat index, z)` for every weight of chunk `c` (CHUNK elements of the
/// weights stream, one N(0, 1) draw each) that `lines` does not zero.
fn for_each_drawn(
    geom: &ConvGeometry,
    layer_index: usize,
    params: &SynthParams,
    lines: &ZeroLines,
    c: usize,
    mut visit: impl FnMut(usize, f64),
) {
    let mut rng = tensor_rng(params.seed, layer_index, Tensor::Weights, c);
    let k = geom.k_rows();
    let lined = !lines.is_empty();
    for i in c * CHUNK..((c + 1) * CHUNK).min(geom.weight_elements()) {
        let z: f64 = rng.sample(StandardNormal);
        if !(lined && lines.zeroes(i / k, i % k)) {
            visit(i, z);
        }
    }
}

/// Bins of the |z| histogram of magnitude pruning, over [0, MAG_RANGE).
const MAG_BINS: usize = 1 << 16;
const MAG_RANGE: f64 = 8.0;

fn mag_bin(a: f64) -> usize {
    ((a * (MAG_BINS as f64 / MAG_RANGE)) as usize).min(MAG_BINS - 1)
}

/// Whether (|z|, index) is kept by magnitude pruning with cutoff `cut`: the zeros are the
/// pairs up to the cutoff in (|z|, flat index) order; None keeps every weight.
#[inline]
fn above(cut: Option<(f64, usize)>, a: f64, i: usize) -> bool {
    match cut {
        None => true,
        Some((za, zi)) => a > za || (a == za && i > zi),
    }
}

/// The (|z|, flat index) of the last weight magnitude pruning zeroes: the
/// ceil(weight_sparsity x E - 1e-9)-th smallest of the E weights `lines` leaves, in
/// (|z|, index) order (None when it zeroes none). A histogram of |z| over all chunks
/// finds the bin of that weight; a second pass sorts that bin's few weights.
fn magnitude_cutoff(
    geom: &ConvGeometry,
    layer_index: usize,
    params: &SynthParams,
    lines: &ZeroLines,
) -> Option<(f64, usize)> {
    let chunks = geom.weight_elements().div_ceil(CHUNK);
    let hist = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut h = vec![0u64; MAG_BINS];
            for_each_drawn(geom, layer_index, params, lines, c, |_, z| {
                h[mag_bin(z.abs())] += 1
            });
            h
        })
        .reduce(
            || vec![0u64; MAG_BINS],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    let eligible: u64 = hist.iter().sum();
    let need = (params.weight_sparsity * eligible as f64 - 1e-9)
        .ceil()
        .max(0.0) as u64;
    if need == 0 {
        return None;
    }
    let need = need.min(eligible);
    let (mut below, mut bin) = (0u64, 0usize);
    while below + hist[bin] < need {
        below += hist[bin];
        bin += 1;
    }
    let mut inside: Vec<(f64, usize)> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut v = Vec::new();
            for_each_drawn(geom, layer_index, params, lines, c, |i, z| {
                if mag_bin(z.abs()) == bin {
                    v.push((z.abs(), i))
                }
            });
            v
        })
        .reduce(Vec::new, |mut a, b| {
            a.extend(b);
            a
        });
    inside.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    inside.get((need - below - 1) as usize).copied()
}

/// Calls `visit(flat index, z)` for every weight N:M keeps in column chunk `c` (columns
/// c * cols .. (c + 1) * cols, from its own stream, tag 3): each column draws its K values
/// in row order, and of every M consecutive rows keeps the N of largest |z| (ties: the
/// earlier row; a last, shorter group keeps at most N).
#[allow(clippy::too_many_arguments)]
fn for_each_kept_nm(
    geom: &ConvGeometry,
    layer_index: usize,
    params: &SynthParams,
    lines: &ZeroLines,
    (n, m): (u32, u32),
    cols: usize,
    c: usize,
    mut visit: impl FnMut(usize, f64),
) {
    let mut rng = tensor_rng(params.seed, layer_index, Tensor::ColumnWeights, c);
    let k = geom.k_rows();
    let (n, m) = (n as usize, m as usize);
    let lined = !lines.is_empty();
    let mut z = vec![0.0f64; k];
    let mut order: Vec<usize> = Vec::with_capacity(m);
    for o in c * cols..((c + 1) * cols).min(geom.out_channels) {
        z.iter_mut().for_each(|v| *v = rng.sample(StandardNormal));
        for g in (0..k).step_by(m) {
            let end = (g + m).min(k);
            order.clear();
            order.extend(g..end);
            order.sort_by(|&a, &b| z[b].abs().total_cmp(&z[a].abs()).then(a.cmp(&b)));
            order.truncate(n);
            order.sort_unstable();
            for &r in &order {
                if !(lined && lines.zeroes(o, r)) {
                    visit(o * k + r, z[r]);
                }
            }
        }
    }
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

    /// Any range of output channels holds exactly the whole tensor's values there, for
    /// every structure, across stream boundaries (1.1 M weights: two chunks of the
    /// weights streams; N:M streams of whole columns) and with pruned heads' lines.
    #[test]
    fn column_ranges_are_the_whole_tensors_values() {
        let g = ConvGeometry::fc(1100, 1000);
        let mut lines = ZeroLines {
            columns: vec![false; 1000],
            ..Default::default()
        };
        lines.columns[7] = true;
        lines.columns[954] = true;
        let none = ZeroLines::default();
        for structure in [
            Structure::Unstructured,
            Structure::Ssl,
            Structure::Magnitude,
            Structure::NM { n: 2, m: 4 },
        ] {
            for lines in [&none, &lines] {
                let p = params(0.6, structure);
                let whole = synth_weights_zeroing(&g, 4, 12, &p, lines);
                let cols = SynthColumns::new(&g, 4, 12, &p, lines);
                for (a, b) in [(0, 1000), (0, 1), (953, 955), (900, 1000), (1, 999), (5, 5)] {
                    assert_eq!(
                        cols.columns(a..b),
                        whole[a * 1100..b * 1100],
                        "{structure} {a}..{b}"
                    );
                }
            }
        }
        // A grouped conv: output channels of the second group.
        let g = ConvGeometry::conv(16, 32, 3, 1, 1, 2, [6, 6]);
        let p = params(0.5, Structure::Unstructured);
        let whole = synth_weights(&g, 1, 8, &p);
        let k = g.k_rows();
        let cols = SynthColumns::new(&g, 1, 8, &p, &none);
        assert_eq!(cols.columns(17..29), whole[17 * k..29 * k]);
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

    /// The flat indices magnitude pruning must zero, by brute force: every drawn weight
    /// `lines` leaves, sorted by (|z|, index), the first ceil(s x E) of them.
    fn magnitude_zeros_by_sorting(
        g: &ConvGeometry,
        index: usize,
        p: &SynthParams,
        lines: &ZeroLines,
    ) -> Vec<usize> {
        let mut all = Vec::new();
        for c in 0..g.weight_elements().div_ceil(CHUNK) {
            for_each_drawn(g, index, p, lines, c, |i, z| all.push((z.abs(), i)));
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let need = (p.weight_sparsity * all.len() as f64 - 1e-9).ceil() as usize;
        let mut z: Vec<usize> = all[..need].iter().map(|&(_, i)| i).collect();
        z.sort_unstable();
        z
    }

    #[test]
    fn magnitude_zeroes_exactly_the_smallest_weights() {
        // 1,100,000 weights: two chunks of the stream, the histogram merged over both.
        let big = ConvGeometry::fc(1100, 1000);
        let conv = ConvGeometry::conv(16, 32, 3, 1, 1, 2, [6, 6]);
        for (g, s) in [(&big, 0.6), (&conv, 0.5), (&conv, 0.7), (&conv, 0.0)] {
            let p = params(s, Structure::Magnitude);
            let q = synth_weights(g, 4, 8, &p);
            let zeros: Vec<usize> = (0..q.len()).filter(|&i| q[i] == 0).collect();
            // The requested sparsity within rounding: ceil(s x size) zeros, no more.
            assert_eq!(
                zeros.len(),
                (s * q.len() as f64 - 1e-9).ceil() as usize,
                "s={s}"
            );
            assert_eq!(
                zeros,
                magnitude_zeros_by_sorting(g, 4, &p, &ZeroLines::default())
            );
            assert_eq!(q.iter().map(|v| v.abs()).max().unwrap(), 127);
        }
        // No small kept weight: at 70% the smallest kept |z| is the 0.7 quantile of a
        // half-normal (1.036), about 1.036 / 3.4 of the largest (~3.4 for 2,304 draws): at
        // 8 bits |q| near 39; unstructured keeps weights of every size (|q| = 1 too).
        let p = params(0.7, Structure::Magnitude);
        let q = synth_weights(&conv, 4, 8, &p);
        let min_kept = q
            .iter()
            .filter(|&&v| v != 0)
            .map(|v| v.abs())
            .min()
            .unwrap();
        assert!((25..55).contains(&min_kept), "{min_kept}");
        let u = synth_weights(&conv, 4, 8, &params(0.7, Structure::Unstructured));
        assert!(
            u.iter()
                .filter(|&&v| v != 0)
                .map(|v| v.abs())
                .min()
                .unwrap()
                < 5
        );
        assert!(
            synth_weights(&conv, 4, 8, &params(1.0, Structure::Magnitude))
                .iter()
                .all(|&v| v == 0)
        );
    }

    /// Every group of M consecutive rows of every column holds at most N non-zeros, and
    /// exactly min(N, group length) (kept weights are never zero).
    fn check_n_m(q: &[i32], g: &ConvGeometry, n: usize, m: usize) {
        let k = g.k_rows();
        for o in 0..g.out_channels {
            for start in (0..k).step_by(m) {
                let end = (start + m).min(k);
                let nz = (start..end).filter(|&r| q[o * k + r] != 0).count();
                assert_eq!(nz, n.min(end - start), "column {o} rows {start}..{end}");
            }
        }
    }

    #[test]
    fn n_m_keeps_n_of_every_m_inputs() {
        let p = |n, m| params(0.7, Structure::NM { n, m });
        // fc 64 -> 10: the sparsity is 1 - N/M exactly (M divides K).
        let fc = ConvGeometry::fc(64, 10);
        for (n, m) in [(2, 4), (4, 8), (1, 4)] {
            let q = synth_weights(&fc, 3, 8, &p(n, m));
            check_n_m(&q, &fc, n as usize, m as usize);
            assert_eq!(zero_fraction(&q), 1.0 - n as f64 / m as f64);
            assert_eq!(q.iter().map(|v| v.abs()).max().unwrap(), 127);
        }
        // grouped 3x3 conv: K = 8 x 9 = 72 rows per group, groups of 4 along (c, r, s);
        // K = 3 x 9 = 27: a last group of 3 rows keeps 2.
        for g in [
            ConvGeometry::conv(16, 32, 3, 1, 1, 2, [6, 6]),
            ConvGeometry::conv(3, 8, 3, 1, 1, 1, [6, 6]),
        ] {
            let q = synth_weights(&g, 1, 8, &p(2, 4));
            check_n_m(&q, &g, 2, 4);
        }
        // The seed decides which N of each group survive.
        let q = synth_weights(&fc, 3, 16, &p(2, 4));
        assert_ne!(
            q,
            synth_weights(&fc, 3, 16, &SynthParams { seed: 2, ..p(2, 4) })
        );
    }

    #[test]
    fn n_m_ignores_the_thread_count() {
        // 1,100,000 weights, K = 1100: chunks of 953 whole columns, two of them.
        let g = ConvGeometry::fc(1100, 1000);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| synth_weights(&g, 7, 8, &params(0.0, Structure::NM { n: 4, m: 8 })))
        };
        let one = run(1);
        assert_eq!(one, run(3));
        check_n_m(&one, &g, 4, 8);
        // 137 whole groups of 8 lose 4 each; the last group, 4 rows, keeps all 4.
        assert_eq!(zero_fraction(&one), 548.0 / 1100.0);
    }

    #[test]
    fn zero_lines_zero_their_columns_and_rows_only() {
        let g = ConvGeometry::fc(12, 8);
        let lines = ZeroLines {
            columns: (0..8).map(|o| o % 4 == 1).collect(),
            rows: (0..12).map(|k| k >= 9).collect(),
        };
        for structure in [
            Structure::Unstructured,
            Structure::Ssl,
            Structure::Magnitude,
            Structure::NM { n: 2, m: 4 },
        ] {
            let p = params(0.0, structure);
            let full = synth_weights(&g, 2, 16, &p);
            let cut = synth_weights_zeroing(&g, 2, 16, &p, &lines);
            for o in 0..8 {
                for k in 0..12 {
                    let v = cut[o * 12 + k];
                    if lines.zeroes(o, k) {
                        assert_eq!(v, 0, "{structure} column {o} row {k}");
                    } else {
                        // The same draw, quantized over what remains.
                        assert_eq!(v.signum(), full[o * 12 + k].signum(), "{structure}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        /// N:M holds for any geometry, N, M and seed; magnitude pruning zeroes exactly the
        /// ceil(s x size) smallest draws.
        #[test]
        fn structures_hold_their_definitions(
            cin in 1usize..9, cout in 1usize..9, r in 1usize..4, groups in 1usize..3,
            m in 2u32..9, n_frac in 0.0f64..1.0, s in 0.0f64..1.0, seed in 0u64..500,
        ) {
            let g = ConvGeometry::conv(cin * groups, cout * groups, r, 1, r / 2, groups, [4, 4]);
            let n = ((n_frac * (m - 1) as f64) as u32).max(1);
            let p = SynthParams { seed, ..params(s, Structure::NM { n, m }) };
            check_n_m(&synth_weights(&g, 0, 8, &p), &g, n as usize, m as usize);
            let p = SynthParams { seed, ..params(s, Structure::Magnitude) };
            let q = synth_weights(&g, 0, 8, &p);
            let zeros: Vec<usize> = (0..q.len()).filter(|&i| q[i] == 0).collect();
            proptest::prop_assert_eq!(zeros, magnitude_zeros_by_sorting(&g, 0, &p, &ZeroLines::default()));
        }
    }
}
