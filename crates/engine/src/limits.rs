//! Limits checked before a layer is loaded or simulated, from its geometry alone.
//!
//! - **Counts.** Every event count of section 8 and the cycles of section 7 are u64 sums.
//!   [`layer_bounds`] gives an upper bound of each, computed in u128 from the geometry,
//!   the hardware and the options (worst case over what the data could be: every row
//!   active, two passes under sign-magnitude); [`check_network`] refuses a network where
//!   any bound, or any per-mode sum over layers (the TOTAL rows), exceeds `u64::MAX`.
//!   A refused network is one whose counts *could* overflow; a network that passes can
//!   never overflow, whatever its weights and inputs.
//! - **Mapping.** Row and column indices of the mapping are u32: K + crossbar.rows and
//!   the columns of a polarity array + crossbar.cols must fit.
//! - **Memory.** [`layer_bytes`] estimates the peak bytes of loading, mapping and
//!   compressing one layer; a layer above `limits.max_layer_bytes` is refused.

use crate::input::SignedEncoding;
use crate::options::SimOptions;
use crossbar::{Hardware, Mode};
use std::fmt;
use workload::ConvGeometry;

/// Why a network is refused before it is simulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitError {
    /// A count of `layer` (or of the TOTAL rows) could exceed u64.
    Overflow {
        layer: String,
        count: &'static str,
        bound: u128,
    },
    /// An index of the mapping would not fit u32.
    Mapping { layer: String, what: String },
    /// Loading the layer would need more memory than the cap.
    Memory { layer: String, need: u128, cap: u64 },
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::Overflow {
                layer,
                count,
                bound,
            } => {
                let sum = if layer == "TOTAL" {
                    " summed over layers"
                } else {
                    ""
                };
                write!(
                    f,
                    "{layer}: counts would overflow u64 ({count}{sum} could reach {:.3e}, more than the largest u64 {:.3e})",
                    *bound as f64,
                    u64::MAX as f64
                )
            }
            LimitError::Mapping { layer, what } => {
                write!(f, "{layer}: too large to map: {what}")
            }
            LimitError::Memory { layer, need, cap } => write!(
                f,
                "{layer}: needs about {} to load, more than limits.max_layer_bytes = {} ({})",
                workload::bundle::fmt_bytes(*need),
                workload::bundle::fmt_bytes(*cap as u128),
                workload::bundle::raise_layer_bytes_hint(*need)
            ),
        }
    }
}

impl std::error::Error for LimitError {}

/// Upper bounds of every count of one layer over the given modes, named as the fields of
/// `energy::Events` (and the columns of layers.csv).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds(pub Vec<(&'static str, u128)>);

impl Bounds {
    pub fn get(&self, name: &str) -> Option<u128> {
        self.0.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
    }

    /// The first count above u64::MAX.
    pub fn overflowing(&self) -> Option<(&'static str, u128)> {
        self.0.iter().copied().find(|&(_, v)| v > u64::MAX as u128)
    }
}

fn ceil(a: u128, b: u128) -> u128 {
    a.div_ceil(b.max(1))
}

/// Saturating product: bounds are only compared with u64::MAX, so saturating at
/// u128::MAX keeps every comparison right and nothing can overflow.
fn mul(xs: &[u128]) -> u128 {
    xs.iter().fold(1u128, |a, &x| a.saturating_mul(x))
}

/// ceil(log2 n), 0 for n <= 1.
fn ceil_log2(n: u128) -> u128 {
    if n <= 1 {
        0
    } else {
        (128 - (n - 1).leading_zeros()) as u128
    }
}

/// The column structure of section 3, counted (not built).
struct Shape {
    /// Rows of a group's matrix.
    k: u128,
    /// Physical columns of one polarity array of one group.
    pol_cols: u128,
    /// Column blocks over all groups and both polarities.
    blocks: u128,
    /// Column groups over all groups and both polarities.
    col_groups: u128,
    /// Physical columns over all groups and both polarities.
    cols: u128,
    /// Dense row tiles per block.
    tiles: u128,
}

fn shape(geom: &ConvGeometry, hw: &Hardware) -> Shape {
    let u = |x: usize| x as u128;
    let g = u(geom.groups);
    let k = mul(&[
        u(geom.in_channels / geom.groups.max(1)),
        u(geom.kernel[0]),
        u(geom.kernel[1]),
    ]);
    let pol_cols = mul(&[
        u(geom.out_channels / geom.groups.max(1)),
        hw.cells_per_weight() as u128,
    ]);
    let (xc, oc) = (hw.xbar_cols as u128, hw.ou_cols as u128);
    let per_pol_groups =
        mul(&[pol_cols / xc.max(1), ceil(xc, oc)]).saturating_add(ceil(pol_cols % xc.max(1), oc));
    Shape {
        k,
        pol_cols,
        blocks: mul(&[2, g, ceil(pol_cols, xc)]),
        col_groups: mul(&[2, g, per_pol_groups]),
        cols: mul(&[2, g, pol_cols]),
        tiles: ceil(k, hw.xbar_rows as u128),
    }
}

/// Upper bounds of every count of one layer replaying `samples` samples, over `modes`.
pub fn layer_bounds(
    geom: &ConvGeometry,
    samples: u64,
    hw: &Hardware,
    opts: &SimOptions,
    modes: &[Mode],
) -> Bounds {
    let s = shape(geom, hw);
    let [ho, wo] = geom.output_hw();
    let vectors = mul(&[samples as u128, ho as u128, wo as u128]);
    // Signedness is known only once the data is read: assume the worst.
    let passes: u128 = match opts.encoding {
        SignedEncoding::SignMagnitude => 2,
        SignedEncoding::TwosComplement => 1,
    };
    let applied = hw.input_bits as u128;
    let steps = mul(&[vectors, passes, ceil(applied, hw.dac_bits as u128)]);
    // Per (vector, pass, cycle), a column group covers at most K rows of each tile in
    // ceil(rows / ou.rows) OUs: at most ceil(K / ou.rows) + tiles OUs over the tiles.
    let ous_per_group = ceil(s.k, hw.ou_rows as u128).saturating_add(s.tiles);
    let ou_ops_grouped = mul(&[steps, s.col_groups, ous_per_group]);
    let ideal_ops = mul(&[steps, s.tiles, s.blocks]);
    let (adc, idx) = (hw.adc_per_crossbar as u128, hw.index_rows_per_cycle as u128);
    // A slow stage raises every II to at least its cycles.
    let slow = opts.pipeline.slow_stage.map_or(1, |s| s.cycles as u128);
    let mut ou_ops = 0;
    let mut busy = 0;
    for &m in modes {
        let (ops, ii) = match m {
            Mode::Ideal => (ideal_ops, ceil(hw.xbar_cols as u128, adc).max(1)),
            m if m.compacted() => (
                ou_ops_grouped,
                ceil(hw.ou_cols as u128, adc)
                    .max(ceil(hw.ou_rows as u128, idx))
                    .max(1),
            ),
            _ => (ou_ops_grouped, ceil(hw.ou_cols as u128, adc).max(1)),
        };
        ou_ops = ou_ops.max(ops);
        busy = busy.max(mul(&[ops, ii.max(slow)]));
    }
    let rows_driven = mul(&[steps, s.col_groups, s.k]);
    let index_bits = ceil_log2(s.k);
    let in_elems = mul(&[
        geom.in_channels as u128,
        geom.input_hw[0] as u128,
        geom.input_hw[1] as u128,
    ]);
    let out_elems = mul(&[geom.out_channels as u128, ho as u128, wo as u128]);
    Bounds(vec![
        ("vectors", vectors),
        ("ou_ops", ou_ops),
        ("rows_driven", rows_driven),
        ("cells_read", mul(&[steps, s.k, s.cols])),
        ("adc_conversions", mul(&[steps, s.cols, ous_per_group])),
        ("index_reads", rows_driven),
        ("index_bits_read", mul(&[rows_driven, index_bits])),
        ("ous_formed", ou_ops),
        ("ir_bits", mul(&[vectors, passes, applied, s.k, s.blocks])),
        ("or_bits", mul(&[vectors, s.tiles, s.cols, 32])),
        (
            "edram_bits",
            mul(&[
                samples as u128,
                in_elems.saturating_add(out_elems),
                hw.input_bits as u128,
            ]),
        ),
        (
            "weight_storage_bits",
            mul(&[s.k, s.cols, hw.cell_bits as u128]),
        ),
        ("index_storage_bits", mul(&[s.col_groups, s.k, index_bits])),
        ("crossbars", mul(&[s.tiles, s.blocks])),
        ("busy_cycles", busy),
        // W + L - 1, with room for a pipeline fill per barrier interval (the cycle
        // engine's finite queues) and a slow stage's depth.
        (
            "cycles",
            busy.saturating_add(mul(&[7 + slow, steps.saturating_add(1)])),
        ),
    ])
}

/// Checks the u32 index space of the mapping (section 3 as built by `crossbar::LayerMap`).
pub fn check_mapping(name: &str, geom: &ConvGeometry, hw: &Hardware) -> Result<(), LimitError> {
    let s = shape(geom, hw);
    let max = u32::MAX as u128;
    let err = |what: String| {
        Err(LimitError::Mapping {
            layer: name.to_string(),
            what,
        })
    };
    if s.k + hw.xbar_rows as u128 > max {
        return err(format!(
            "K = {} rows per group (expected K + crossbar.rows <= {max})",
            s.k
        ));
    }
    if s.pol_cols + hw.xbar_cols as u128 > max {
        return err(format!(
            "{} columns per polarity array (expected columns + crossbar.cols <= {max})",
            s.pol_cols
        ));
    }
    if s.blocks > max || s.tiles > max {
        return err(format!(
            "{} column blocks x {} row tiles (expected each <= {max})",
            s.blocks, s.tiles
        ));
    }
    Ok(())
}

/// Most distinct column-group widths of one layer: every group of a block is ou.cols
/// wide but the last of each block (crossbar.cols mod ou.cols) and the last of the last
/// block of a polarity array; the fast engine keeps one issue table per width.
const MAX_WIDTHS: u128 = 3;

/// Vectors of one piece of the fast engine's parallel counting (`fast::dynamic`): each
/// piece keeps its counts and barrier until the chunk is merged.
pub const FAST_PIECE_VECTORS: u128 = 256;

/// Estimated peak bytes of one layer while it is simulated, `samples` samples of input
/// held at once, by every allocation that grows with the workload or the hardware:
/// its arrays as loaded (`workload::bundle::array_bytes`), the mapping and the
/// compression of its column groups, the fast engine's lookup tables (per column-group
/// width, one issue time per row count up to crossbar.rows), the results of each piece
/// of a chunk's vectors (counts and a barrier of one u64 per crossbar), and each worker
/// thread's vector, masks, per-crossbar issue counters and barrier.
pub fn layer_bytes(geom: &ConvGeometry, samples: u64, hw: &Hardware, threads: usize) -> u128 {
    estimate(geom, samples, hw, threads, None)
}

/// [`layer_bytes`] of a layer simulated a window of `blocks` column blocks (of each
/// polarity, in one conv group) at a time ([`crate::columns`]): the weights and the
/// compression of one window, the mapping of the whole layer beside the window's, the
/// inputs and every thread's vector as for the whole layer, the results and barriers of
/// the window's crossbars; and what the windows' barriers keep to combine into the
/// layer's W ([`window_trace_bytes`], added by the caller).
pub fn window_bytes(
    geom: &ConvGeometry,
    samples: u64,
    hw: &Hardware,
    threads: usize,
    blocks: u128,
) -> u128 {
    estimate(geom, samples, hw, threads, Some(blocks))
}

/// What a windowed layer's barriers keep ([`pipeline::Barrier::traced`]): under sync
/// `bit` one u64 per barrier interval of every vector of the run (passes x input
/// cycles of each), under `vector` one per vector, under `none` nothing; for each mode
/// that looks at inputs, the running maxima, the trace of the window in flight and the
/// traces of its pieces being merged (three copies).
pub fn window_trace_bytes(
    geom: &ConvGeometry,
    samples: u64,
    hw: &Hardware,
    opts: &SimOptions,
    modes: &[Mode],
) -> u128 {
    let [ho, wo] = geom.output_hw();
    let vectors = mul(&[samples as u128, ho as u128, wo as u128]);
    let per_vector = match opts.sync {
        pipeline::Sync::None => 0,
        pipeline::Sync::Vector => 1,
        pipeline::Sync::Bit => mul(&[2, ceil(hw.input_bits as u128, hw.dac_bits as u128)]),
    };
    let dynamic = modes.iter().filter(|m| m.skips_inputs()).count() as u128;
    mul(&[vectors, per_vector, dynamic, 3, 8])
}

fn estimate(
    geom: &ConvGeometry,
    samples: u64,
    hw: &Hardware,
    threads: usize,
    window: Option<u128>,
) -> u128 {
    let s = shape(geom, hw);
    let threads = threads.max(1) as u128;
    // The mapping: 8 bytes per physical column, a header per block.
    let whole_mapping = mul(&[s.cols, 8]).saturating_add(mul(&[s.blocks, 64]));
    let (arrays, col_groups, blocks, mapping) = match window {
        None => (
            workload::bundle::array_bytes(geom, samples as u128),
            s.col_groups,
            s.blocks,
            whole_mapping,
        ),
        Some(b) => {
            let (xc, oc) = (hw.xbar_cols as u128, hw.ou_cols as u128);
            let cpw = hw.cells_per_weight() as u128;
            let ng = (geom.out_channels / geom.groups.max(1)) as u128;
            // The logical columns a window of b blocks reads (weight-major: its
            // physical columns' weights and the two it may share with its neighbours).
            let window_cols = match hw.layout {
                crossbar::Layout::WeightMajor => (mul(&[b, xc]) / cpw.max(1)).saturating_add(2),
                crossbar::Layout::SliceMajor => mul(&[b, xc]),
            }
            .min(ng);
            let weights = mul(&[s.k, window_cols]);
            let whole = workload::bundle::array_bytes(geom, samples as u128);
            let inputs = whole.saturating_sub(workload::bundle::array_bytes(geom, 0));
            let blocks = mul(&[2, b]).min(s.blocks);
            let cols = mul(&[2, b, xc]).min(s.cols);
            let col_groups = mul(&[2, b, ceil(xc, oc)]).min(s.col_groups);
            let mapping = whole_mapping
                .saturating_add(mul(&[cols, 8]))
                .saturating_add(mul(&[blocks, 64]));
            (
                mul(&[weights, 12]).saturating_add(inputs),
                col_groups,
                blocks,
                mapping,
            )
        }
    };
    // Compression: per column group, its non-zero rows (u32 each, K at most) and a bit
    // mask of K rows.
    let compression = mul(&[col_groups, s.k.saturating_mul(5).saturating_add(64)]);
    // The sre tables: OUs per row count and, per width, issue time per row count.
    let rows = hw.xbar_rows as u128 + 1;
    let tables = mul(&[rows, 8, MAX_WIDTHS + 1]);
    // A barrier or an issue vector: one u64 per crossbar, plus the counts.
    let crossbars = mul(&[s.tiles, blocks]);
    let barrier = mul(&[crossbars, 8]).saturating_add(128);
    // The pieces of one chunk: ceil(vectors / 256), or about 8 per thread when fewer.
    let [ho, wo] = geom.output_hw();
    let vectors = mul(&[samples as u128, ho as u128, wo as u128]);
    let pieces = ceil(vectors, FAST_PIECE_VECTORS).saturating_add(mul(&[threads, 16]));
    let results = mul(&[pieces, barrier]);
    // Per thread: the vector of all groups (i32) and its masks (a byte per row, bits of
    // a few classes), the per-crossbar issue counters and a barrier.
    let groups = geom.groups as u128;
    let per_thread = mul(&[s.k, groups, 5])
        .saturating_add(mul(&[crossbars, 8]))
        .saturating_add(barrier);
    arrays
        .saturating_add(compression)
        .saturating_add(mapping)
        .saturating_add(tables)
        .saturating_add(results)
        .saturating_add(per_thread.saturating_mul(threads))
}

/// Column blocks per polarity array of one conv group (section 3).
pub fn blocks_per_array(geom: &ConvGeometry, hw: &Hardware) -> u128 {
    ceil(shape(geom, hw).pol_cols, hw.xbar_cols as u128)
}

/// How a layer fits `cap` bytes: whole (None), or the most column blocks a window may
/// hold (`Some(b)`, b >= 1) when the whole layer does not fit and its workload can load
/// its weights by columns; `Err(need)` with the bytes of the smallest way it could run.
#[allow(clippy::too_many_arguments)]
pub fn fit(
    geom: &ConvGeometry,
    held: u64,
    samples: u64,
    hw: &Hardware,
    opts: &SimOptions,
    modes: &[Mode],
    threads: usize,
    cap: u64,
    by_columns: bool,
) -> Result<Option<u128>, u128> {
    let whole = layer_bytes(geom, held, hw, threads);
    if whole <= cap as u128 {
        return Ok(None);
    }
    if !by_columns {
        return Err(whole);
    }
    let trace = window_trace_bytes(geom, samples, hw, opts, modes);
    let need = |b: u128| window_bytes(geom, held, hw, threads, b).saturating_add(trace);
    let per = blocks_per_array(geom, hw);
    if need(1) > cap as u128 {
        return Err(need(1));
    }
    // The largest b in 1..=per that fits: need grows with b.
    let (mut lo, mut hi) = (1u128, per.max(1));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if need(mid) <= cap as u128 {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(Some(lo))
}

/// One layer of [`check_network`]: its name, geometry and the samples of its input held
/// in memory at once (a chunk, [`workload::chunk_samples`]).
pub struct LayerRef<'a> {
    pub name: &'a str,
    pub geom: &'a ConvGeometry,
    pub held_samples: u64,
    /// Whether its workload can load its weights a window of columns at a time
    /// (synthetic weights): a layer that does not fit whole then runs in windows.
    pub by_columns: bool,
}

/// Checks every layer (mapping, memory of its weights and a chunk of samples, count
/// bounds over all `samples`) and the per-mode sums over layers, before anything is
/// loaded or simulated. `max_layer_bytes` is `limits.max_layer_bytes`. Returns, per
/// layer, how it runs ([`fit`]): whole (None) or in windows of at most that many column
/// blocks.
pub fn check_network(
    layers: &[LayerRef],
    samples: u64,
    hw: &Hardware,
    opts: &SimOptions,
    modes: &[Mode],
    max_layer_bytes: u64,
    threads: usize,
) -> Result<Vec<Option<u128>>, LimitError> {
    let mut total: Vec<(&'static str, u128)> = Vec::new();
    let mut plan = Vec::with_capacity(layers.len());
    for l in layers {
        check_mapping(l.name, l.geom, hw)?;
        // Counts first: a layer that can never be simulated is told so, rather than to
        // raise a memory cap.
        let b = layer_bounds(l.geom, samples, hw, opts, modes);
        if let Some((count, bound)) = b.overflowing() {
            return Err(LimitError::Overflow {
                layer: l.name.to_string(),
                count,
                bound,
            });
        }
        let fits = fit(
            l.geom,
            l.held_samples,
            samples,
            hw,
            opts,
            modes,
            threads,
            max_layer_bytes,
            l.by_columns,
        );
        match fits {
            Ok(p) => plan.push(p),
            Err(need) => {
                return Err(LimitError::Memory {
                    layer: l.name.to_string(),
                    need,
                    cap: max_layer_bytes,
                })
            }
        }
        if total.is_empty() {
            total = b.0.clone();
        } else {
            for (t, (_, v)) in total.iter_mut().zip(&b.0) {
                t.1 = t.1.saturating_add(*v);
            }
        }
    }
    match Bounds(total).overflowing() {
        Some((count, bound)) => Err(LimitError::Overflow {
            layer: "TOTAL".into(),
            count,
            bound,
        }),
        None => Ok(plan),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{simulate, EngineKind, Prepared};
    use proptest::prelude::*;
    use workload::{LayerKind, LayerSpec, QuantLayer};

    fn layer(geom: ConvGeometry, samples: usize, seed: u64, signed: bool) -> QuantLayer {
        // A small LCG: weights in -7..=7 with zeros, inputs >= 0 (or signed).
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = |m: i64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as i64 % m) as i32
        };
        let weights = (0..geom.weight_elements()).map(|_| next(15) - 7).collect();
        let input = (0..samples * geom.input_elements())
            .map(|_| if signed { next(9) - 4 } else { next(5) })
            .collect();
        QuantLayer {
            spec: LayerSpec {
                name: "l".into(),
                kind: LayerKind::Conv,
                geom,
            },
            weights,
            input,
            samples,
            signed,
        }
    }

    fn events_by_name(e: &energy::Events) -> Vec<(&'static str, u64)> {
        vec![
            ("vectors", e.vectors),
            ("ou_ops", e.ou_ops),
            ("rows_driven", e.rows_driven),
            ("cells_read", e.cells_read),
            ("adc_conversions", e.adc_conversions),
            ("index_reads", e.index_reads),
            ("index_bits_read", e.index_bits_read),
            ("ous_formed", e.ous_formed),
            ("ir_bits", e.ir_bits),
            ("or_bits", e.or_bits),
            ("edram_bits", e.edram_bits),
            ("weight_storage_bits", e.weight_storage_bits),
            ("index_storage_bits", e.index_storage_bits),
            ("crossbars", e.crossbars),
            ("busy_cycles", e.busy_cycles),
            ("cycles", e.cycles),
        ]
    }

    fn small_hw() -> Hardware {
        Hardware {
            xbar_rows: 8,
            xbar_cols: 8,
            cell_bits: 2,
            ou_rows: 3,
            ou_cols: 2,
            weight_bits: 4,
            input_bits: 4,
            dac_bits: 1,
            adc_per_crossbar: 1,
            index_rows_per_cycle: 2,
            ..Hardware::default()
        }
    }

    #[test]
    fn dense_bounds_are_exact_where_dense_is_exact() {
        // conv 4 -> 6, 3x3, groups 2, 5x5 input, pad 1 -> 5x5 output; 2 samples, unsigned.
        // K = 2*9 = 18; cpw = ceil(3/2) = 2; a polarity array of a group has 3*2 = 6
        // columns: 1 block, 3 column groups of 2; 2 groups x 2 polarities: 4 blocks,
        // 12 column groups, 24 columns; dense row tiles ceil(18/8) = 3.
        // vectors 2*25 = 50; steps = 50 x 1 pass x 4 cycles = 200.
        // cells_read = 200 * 18 * 24 = 86400; rows_driven = 200 * 12 * 18 = 43200;
        // crossbars 3 * 4 = 12; ir_bits = 50 * 4 * 18 * 4 = 14400;
        // or_bits = 50 * 3 * 24 * 32 = 115200.
        let hw = small_hw();
        let geom = ConvGeometry::conv(4, 6, 3, 1, 1, 2, [5, 5]);
        let opts = SimOptions::default();
        let b = layer_bounds(&geom, 2, &hw, &opts, &[Mode::Dense]);
        let want = [
            ("cells_read", 86_400),
            ("rows_driven", 43_200),
            ("crossbars", 12),
            ("ir_bits", 14_400),
            ("or_bits", 115_200),
        ];
        for (name, v) in want {
            assert_eq!(b.get(name), Some(v), "{name}");
        }
        let l = layer(geom, 2, 1, false);
        let prep = Prepared::new(&l, &hw, &opts);
        let e = simulate(&prep, &hw, &opts, Mode::Dense, EngineKind::Fast, None).unwrap();
        for (name, v) in events_by_name(&e) {
            if let Some((_, w)) = want.iter().find(|(n, _)| *n == name) {
                assert_eq!(v as u128, *w, "{name}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every count of every mode stays within its bound, for random layers, hardware,
        /// encodings and data.
        #[test]
        fn counts_never_exceed_their_bounds(
            cin_g in 1usize..4, cout_g in 1usize..5, groups in 1usize..3, k in 1usize..4,
            hw_in in 3usize..7, pad in 0usize..2, stride in 1usize..3, samples in 1usize..3,
            ou_rows in 1u32..5, ou_cols in 1u32..4, xbar in 4u32..9, signed: bool,
            sign_mag: bool, seed: u64, adc in 1u32..3, idx in 1u32..4,
        ) {
            let geom = ConvGeometry::conv(cin_g * groups, cout_g * groups, k, stride, pad, groups, [hw_in, hw_in]);
            prop_assume!(geom.validate().is_ok());
            let hw = Hardware {
                xbar_rows: xbar, xbar_cols: xbar, ou_rows, ou_cols,
                adc_per_crossbar: adc, index_rows_per_cycle: idx, ..small_hw()
            };
            let opts = SimOptions {
                encoding: if sign_mag { SignedEncoding::SignMagnitude } else { SignedEncoding::TwosComplement },
                ..SimOptions::default()
            };
            let l = layer(geom.clone(), samples, seed, signed);
            let prep = Prepared::new(&l, &hw, &opts);
            for mode in Mode::ALL {
                let b = layer_bounds(&geom, samples as u64, &hw, &opts, &[mode]);
                for engine in [EngineKind::Fast, EngineKind::Cycle] {
                    let e = simulate(&prep, &hw, &opts, mode, engine, None).unwrap();
                    for (name, v) in events_by_name(&e) {
                        let bound = b.get(name).unwrap();
                        prop_assert!(v as u128 <= bound, "{engine} {mode} {name}: {v} > {bound}");
                    }
                }
            }
        }
    }

    #[test]
    fn overflowing_layers_and_totals_are_refused() {
        let hw = Hardware::default();
        let opts = SimOptions::default();
        let modes = Mode::ALL;
        // vgg16 conv1_2-like: 64 -> 64, 3x3 on 224x224; K = 576, 64 x 8 cells = 512
        // columns per polarity (4 blocks, 64 groups), x2 polarities: 1024 columns.
        // cells_read = samples * 50176 * 16 * 576 * 1024 = samples * 4.7e11: 2^26 samples
        // reach 3.2e19 > 1.8e19.
        let geom = ConvGeometry::conv(64, 64, 3, 1, 1, 1, [224, 224]);
        let one = [LayerRef {
            name: "conv1_2",
            geom: &geom,
            held_samples: 1,
            by_columns: false,
        }];
        let no_mem_cap = u64::MAX;
        assert_eq!(
            check_network(&one, 1 << 20, &hw, &opts, &modes, no_mem_cap, 1),
            Ok(vec![None])
        );
        let e = check_network(&one, 1 << 26, &hw, &opts, &modes, no_mem_cap, 1).unwrap_err();
        assert!(
            matches!(&e, LimitError::Overflow { layer, .. } if layer == "conv1_2"),
            "{e:?}"
        );
        assert!(e
            .to_string()
            .starts_with("conv1_2: counts would overflow u64 ("));
        // The largest count per sample is index_bits_read = rows_driven x ceil(log2 576)
        // = 802816 * 128 * 576 * 10 = 5.9e11: 2^24 samples (9.9e18) fit one layer, not
        // two of them summed (2.0e19).
        let two: Vec<LayerRef> = (0..2)
            .map(|_| LayerRef {
                name: "c",
                geom: &geom,
                held_samples: 1,
                by_columns: false,
            })
            .collect();
        assert_eq!(
            check_network(&two[..1], 1 << 24, &hw, &opts, &modes, no_mem_cap, 1),
            Ok(vec![None])
        );
        let e = check_network(&two, 1 << 24, &hw, &opts, &modes, no_mem_cap, 1).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("TOTAL: counts would overflow u64 ("),
            "{e}"
        );
        assert!(
            e.to_string().contains(" summed over layers could reach "),
            "{e}"
        );
        // Absurd geometry saturates instead of overflowing u128.
        let huge = ConvGeometry::conv(1 << 30, 1 << 30, 1, 1, 1 << 30, 1, [1 << 30, 1 << 30]);
        let b = layer_bounds(&huge, u64::MAX, &hw, &opts, &modes);
        assert_eq!(b.get("cells_read"), Some(u128::MAX));
    }

    #[test]
    fn mapping_and_memory_limits() {
        let hw = Hardware::default();
        // K = 2^30 * 2 * 2 = 2^32 rows per group does not fit u32.
        let g = ConvGeometry::conv(1 << 30, 2, 2, 1, 0, 1, [2, 2]);
        let e = check_mapping("big", &g, &hw).unwrap_err();
        assert_eq!(
            e.to_string(),
            "big: too large to map: K = 4294967296 rows per group (expected K + crossbar.rows <= 4294967295)"
        );
        // fc 1000 -> 10, 1 sample: arrays (10000 + 1000) * 12 = 132000 B; 8 cells per
        // weight -> 80 columns per polarity: 1 block, 10 column groups each, 20 in all;
        // compression 20 * (1000*5 + 64) = 101280; mapping 160*8 + 2*64 = 1408;
        // sre tables 129 row counts * 8 B * 4 = 4128; 8 tiles * 2 blocks = 16
        // crossbars, a barrier 16*8 + 128 = 256 B; 1 vector: 1 + 16 pieces * 256 = 4352;
        // per thread 1000*5 + 16*8 + 256 = 5384 -> 248552 B with 1 thread.
        let fc = ConvGeometry::fc(1000, 10);
        assert_eq!(layer_bytes(&fc, 1, &hw, 1), 248_552);
        let l = [LayerRef {
            name: "fc",
            geom: &fc,
            held_samples: 1,
            by_columns: false,
        }];
        let opts = SimOptions::default();
        assert!(check_network(&l, 1, &hw, &opts, &Mode::ALL, 248_552, 1).is_ok());
        // Memory is that of the samples held at once, not of all samples replayed.
        assert!(check_network(&l, 1 << 20, &hw, &opts, &Mode::ALL, 248_552, 1).is_ok());
        let e = check_network(&l, 1, &hw, &opts, &Mode::ALL, 248_551, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "fc: needs about 242.7 KiB to load, more than limits.max_layer_bytes = 242.7 KiB (raise it, e.g. --set limits.max_layer_bytes=262144)"
        );
    }

    #[test]
    fn memory_grows_with_output_positions_and_crossbar_rows() {
        let hw = Hardware::default();
        // A 1x1 input padded by 2^20: (2^21 + 1)^2 = 4.4e12 output positions of one
        // sample, whose pieces (256 vectors each, a 144-byte barrier of 2 crossbars
        // and the counts) need 2.5 TB: refused under the default 4 GiB.
        let pad = 1 << 20;
        let g = ConvGeometry::conv(1, 2, 1, 1, pad, 1, [1, 1]);
        let positions = ((2 * pad + 1) as u128).pow(2);
        let need = layer_bytes(&g, 1, &hw, 1);
        assert!(need >= positions / 256 * 144, "{need}");
        assert!(need > 4 << 30);
        // The tables of the fast engine grow with crossbar.rows (4 tables of a u64 per
        // row count), never with crossbar.rows x ou.cols.
        let tall = Hardware {
            xbar_rows: 65536,
            ou_rows: 65536,
            ..Hardware::default()
        };
        let fc = ConvGeometry::fc(10, 10);
        let small = layer_bytes(&fc, 1, &hw, 1);
        assert_eq!(layer_bytes(&fc, 1, &tall, 1) - small, (65536 - 128) * 8 * 4);
        let wide = Hardware {
            xbar_cols: 65536,
            ou_cols: 65536,
            ..tall
        };
        assert!(layer_bytes(&fc, 1, &wide, 1) < small + (3 << 20));
    }
}
