//! A layer's samples through every mode's datapath, a chunk at a time.

use crate::counts::CountTables;
use crate::datapath::{Datapath, Scratch};
use crate::exact::{exact_path, exact_products, twos_correction};
use crate::program::{Program, Writer};
use crate::skip::{Laws, DIRECT_P, LOOKUP_P};
use crate::{Adc, AdcRange, FuncOptions, Metrics};
use crossbar::{AdcBits, Hardware, Mode};
use engine::input::Pass;
use engine::{Prepared, Samples, SimOptions};
use rayon::prelude::*;
use std::sync::OnceLock;
use workload::FloatLayer;

/// A layer's two programs (dense and compacted tilings), built on first use and shared
/// by the modes that read them.
pub struct Layer<'p> {
    prep: &'p Prepared<'p>,
    hw: &'p Hardware,
    sim: SimOptions,
    opts: &'p FuncOptions,
    /// The layer's name as a key word of its draws.
    name: u64,
    dense: OnceLock<Program>,
    compacted: OnceLock<Program>,
    /// Per mode (in the order of [`Mode::ALL`]), the skip sampler's laws of reads.
    laws: [OnceLock<Laws>; 5],
    /// Per mode, the count tables of its fixed OUs, if tabled ([`CountTables::build`]).
    counts: [OnceLock<Option<CountTables>>; 5],
    /// The float layer outputs are compared with, when the workload has one.
    float: Option<FloatLayer>,
}

impl<'p> Layer<'p> {
    pub fn new(
        prep: &'p Prepared<'p>,
        hw: &'p Hardware,
        sim: &SimOptions,
        opts: &'p FuncOptions,
    ) -> Self {
        Layer {
            prep,
            hw,
            sim: *sim,
            opts,
            name: crate::rng::name_word(&prep.spec.name),
            dense: OnceLock::new(),
            compacted: OnceLock::new(),
            laws: Default::default(),
            counts: Default::default(),
            float: None,
        }
    }

    /// Compares every mode's dequantized outputs with `float` (float_rel_rmse): chunks
    /// are then fed with their float inputs ([`LayerRun::feed_float`]).
    pub fn with_float(mut self, float: Option<FloatLayer>) -> Self {
        self.float = float;
        self
    }

    /// The tiling `mode` reads.
    pub fn program(&self, mode: Mode) -> &Program {
        let p = self.prep;
        let w = Writer {
            map: &p.map,
            weights: p.weights,
            device: &self.opts.device,
            layer: self.name,
            words: (p.map.xbar_rows as usize).div_ceil(64),
        };
        if mode.compacted() {
            self.compacted
                .get_or_init(|| Program::compacted(&w, p.comp(), self.opts.decoder))
        } else {
            self.dense.get_or_init(|| Program::dense(&w))
        }
    }

    /// Bytes of the programs built so far, and of their count tables.
    pub fn program_heap_bytes(&self) -> usize {
        let programs: usize = [&self.dense, &self.compacted]
            .iter()
            .filter_map(|p| p.get())
            .map(Program::heap_bytes)
            .sum();
        let tables: usize = self
            .counts
            .iter()
            .filter_map(|t| t.get()?.as_ref())
            .map(CountTables::heap_bytes)
            .sum();
        programs + tables
    }

    /// The ADC step of `mode` (docs/functional.md, "ADC range"): `adc.step`, the step
    /// at which the full OU sum reaches the top code, or the calibrated one.
    fn adc_step(&self, mode: Mode) -> u64 {
        let bits = self.hw.adc_resolution(mode);
        match self.opts.adc_range {
            AdcRange::Step => self.opts.adc_step,
            AdcRange::Full => Adc::step_for(bits, full_sum(self.hw, mode)),
            AdcRange::Percentile(_) => self
                .opts
                .adc_steps
                .iter()
                .find(|(l, m, _)| *m == mode && *l == self.prep.spec.name)
                .map_or(self.opts.adc_step, |e| e.2),
        }
    }

    fn datapath(&self, mode: Mode) -> Datapath<'_> {
        self.datapath_with(
            mode,
            Adc::new(self.hw.adc_resolution(mode), self.adc_step(mode)),
        )
    }

    fn datapath_with(&self, mode: Mode, adc: Adc) -> Datapath<'_> {
        let program = self.program(mode);
        Datapath {
            program,
            plan: &self.prep.plan,
            mode,
            granularity: self.sim.granularity,
            ou_rows: self.hw.ou_rows,
            adc,
            k: self.prep.map.k as usize,
            cell_bits: self.hw.cell_bits as usize,
            device: &self.opts.device,
            layer: self.name,
            laws: self.laws(mode, adc, program),
            counts: self.counts(mode, adc, program),
        }
    }

    /// The count tables of `mode`'s fixed OUs (dense and weight) when its reads take
    /// them ([`CountTables::build`]; `reads`: a sample's reads of each OU).
    fn counts(&self, mode: Mode, adc: Adc, program: &Program) -> Option<&CountTables> {
        if !matches!(mode, Mode::Dense | Mode::Weight) {
            return None;
        }
        let i = Mode::ALL.iter().position(|&m| m == mode)?;
        let plan = &self.prep.plan;
        let reads = self.prep.geom().vectors_per_sample() as u64
            * plan.passes.len() as u64
            * plan.cycles as u64;
        let shape = (
            self.hw.ou_rows as usize,
            self.hw.cell_bits as usize,
            plan.dac_bits,
        );
        self.counts[i]
            .get_or_init(|| CountTables::build(program, &self.opts.device, adc, shape, reads))
            .as_ref()
    }

    /// The skip sampler's laws of `mode`'s reads (None when its reads draw per read):
    /// classes up to the widest read the mode makes (`ou.rows` open wordlines, the whole
    /// tile in ideal) and the largest sum such a read can carry.
    fn laws(&self, mode: Mode, adc: Adc, program: &Program) -> Option<&Laws> {
        let device = &self.opts.device;
        if !device.skips() {
            return None;
        }
        let i = Mode::ALL.iter().position(|&m| m == mode)?;
        Some(self.laws[i].get_or_init(|| {
            let rows = (program.words * 64) as u64;
            let open = match mode {
                Mode::Ideal => rows,
                _ => (self.hw.ou_rows as u64).min(rows),
            };
            let bits = (self.hw.cell_bits, self.prep.plan.dac_bits);
            Laws::new(device, adc, (open, bits.0, bits.1), (DIRECT_P, LOOKUP_P))
        }))
    }

    /// Whether `mode` takes the exact fast path on this layer ([`exact_path`]): its
    /// outputs are then the exact product, computed as one, never OU by OU.
    pub fn is_exact(&self, mode: Mode) -> bool {
        exact_path(self.hw, self.opts, mode, self.prep.map.k as u64) && self.adc_step(mode) == 1
    }

    /// Outputs of one input vector: groups * Cout/G.
    fn outputs(&self) -> usize {
        (self.prep.map.groups * self.prep.map.cols_per_group) as usize
    }
}

/// What a functional run found for one (layer, mode).
#[derive(Debug, Clone, PartialEq)]
pub struct ModeOutput {
    pub mode: Mode,
    pub metrics: Metrics,
    /// Every output, `[N, Cout, Ho*Wo]` row-major, when kept.
    pub outputs: Option<Vec<i64>>,
}

/// A layer in every requested mode, fed a chunk of samples at a time, in order.
pub struct LayerRun<'l> {
    layer: &'l Layer<'l>,
    paths: Vec<Datapath<'l>>,
    /// Per mode: whether it takes the exact fast path.
    exact: Vec<bool>,
    /// Per mode: its drift-compensation gain, if any ([`FuncOptions::gains`]).
    gains: Vec<Option<f64>>,
    results: Vec<ModeOutput>,
    /// Samples fed so far, counted from sample `first` of the layer's input.
    samples: usize,
    /// The layer's sample the run started at (outputs are kept from it on).
    first: usize,
}

/// Outputs computed at once before they are reduced in order: bounds the memory of a
/// chunk whatever its size.
pub(crate) const BATCH_OUTPUTS: usize = 1 << 18;

impl<'l> LayerRun<'l> {
    pub fn new(layer: &'l Layer<'l>, modes: &[Mode]) -> Self {
        Self::starting_at(layer, modes, 0)
    }

    /// A run whose first sample is sample `first` of the layer's input: its vectors are
    /// numbered (and its read draws keyed) as in a run fed every sample before it, so one
    /// sample can be computed on its own (the accuracy path runs samples independently).
    pub fn starting_at(layer: &'l Layer<'l>, modes: &[Mode], first: usize) -> Self {
        let keep = layer.opts.keep_outputs;
        LayerRun {
            layer,
            paths: modes.iter().map(|&m| layer.datapath(m)).collect(),
            exact: modes.iter().map(|&m| layer.is_exact(m)).collect(),
            gains: modes
                .iter()
                .map(|&m| {
                    let name = &layer.prep.spec.name;
                    let g = layer.opts.gains.iter();
                    g.clone()
                        .find(|(l, mode, _)| *mode == m && l == name)
                        .map(|e| e.2)
                })
                .collect(),
            results: modes
                .iter()
                .map(|&mode| ModeOutput {
                    mode,
                    metrics: Metrics::default(),
                    outputs: keep.then(Vec::new),
                })
                .collect(),
            samples: first,
            first,
        }
    }

    /// Computes every vector of `chunk` in every mode and reduces it.
    pub fn feed(&mut self, chunk: Samples) {
        self.feed_float(chunk, &[])
    }

    /// [`LayerRun::feed`], with the float values `floats` the chunk's inputs were
    /// quantized from (`[n, C, H, W]`, as the chunk): each mode's outputs are also
    /// compared with the float layer's, when the layer has one and `floats` is not empty.
    pub fn feed_float(&mut self, chunk: Samples, floats: &[f64]) {
        let prep = self.layer.prep;
        let geom = prep.geom();
        let outs = self.layer.outputs();
        let per_sample = geom.vectors_per_sample();
        let vectors = chunk.vectors(geom);
        if let Some(o) = self.results[0].outputs.as_ref() {
            let need = o.len() + chunk.samples * per_sample * outs;
            for r in &mut self.results {
                if let Some(o) = r.outputs.as_mut() {
                    o.resize(need, 0);
                }
            }
        }
        let batch = (BATCH_OUTPUTS / outs.max(1)).max(1);
        for start in (0..vectors).step_by(batch) {
            let end = (start + batch).min(vectors);
            let (ys, clips) = self.compute(chunk, start..end);
            // Conversions and clips are counted where a converter can clip: a fixed
            // adc.bits (an auto one never does, and its modes may skip the reads on the
            // exact fast path).
            if matches!(self.layer.hw.adc_bits, AdcBits::Fixed(_)) {
                for (r, (conversions, clipped)) in self.results.iter_mut().zip(clips) {
                    r.metrics.adc_conversions += conversions;
                    r.metrics.adc_clips += clipped;
                }
            }
            let float = self.float_outputs(chunk, floats, start..end);
            let step = self
                .layer
                .float
                .as_ref()
                .map_or(0.0, |f| f.weight_step * f.input_step);
            // In vector order: the sums do not depend on threads or chunking.
            let modes = self.paths.len();
            for (i, row) in ys.chunks(outs * (modes + 1)).enumerate() {
                let (exact, rest) = row.split_at(outs);
                let v = self.samples * per_sample + start + i;
                let (n, pos) = (v / per_sample.max(1), v % per_sample.max(1));
                for (m, r) in self.results.iter_mut().enumerate() {
                    let y = &rest[m * outs..][..outs];
                    for (&a, &b) in y.iter().zip(exact) {
                        r.metrics.add(a, b);
                    }
                    if let Some(f) = &float {
                        for (&a, &b) in y.iter().zip(&f[i * outs..][..outs]) {
                            r.metrics.add_float(a as f64 * step, b);
                        }
                    }
                    if let Some(o) = r.outputs.as_mut() {
                        for (c, &a) in y.iter().enumerate() {
                            o[((n - self.first) * outs + c) * per_sample + pos] = a;
                        }
                    }
                }
            }
        }
        self.samples += chunk.samples;
    }

    /// Per vector of `range`: the exact product, then every mode's Y; and per mode the
    /// ADC conversions and clips (integer sums: the same for any split into pieces).
    fn compute(
        &self,
        chunk: Samples,
        range: std::ops::Range<usize>,
    ) -> (Vec<i64>, Vec<(u64, u64)>) {
        let prep = self.layer.prep;
        let geom = prep.geom();
        // Vectors are numbered over the layer's samples, whatever the chunking.
        let first_vector = self.samples * geom.vectors_per_sample();
        let outs = self.layer.outputs();
        let k = prep.map.k as usize;
        let groups = prep.map.groups as usize;
        let stride = outs * (self.paths.len() + 1);
        let twos_digits =
            prep.plan.dac_bits > 1 && matches!(prep.plan.passes[0], Pass::TwosComplement { .. });
        // The exact product of every vector, as one matrix product.
        let exact = exact_products(prep.weights, k, groups, range.len(), |i, x| {
            chunk.fill_vector(geom, range.start + i, x)
        });
        let read = self.exact.iter().any(|&e| !e);
        let mut ys = vec![0i64; range.len() * stride];
        let piece = (range.len() / (rayon::current_num_threads() * 4)).clamp(1, 64);
        let modes = self.paths.len();
        let clips = ys
            .par_chunks_mut(stride * piece)
            .enumerate()
            .map(|(p, block)| {
                let mut vector = vec![0i32; if read { k * groups } else { 0 }];
                // No scratch for a mode on the fast path: it copies the exact product.
                let mut scratch: Vec<Option<Scratch>> = self
                    .paths
                    .iter()
                    .zip(&self.exact)
                    .map(|(d, &e)| (!e).then(|| Scratch::new(d, outs)))
                    .collect();
                for (i, row) in block.chunks_mut(stride).enumerate() {
                    let v = range.start + p * piece + i;
                    let want = &exact[(v - range.start) * outs..][..outs];
                    let (exact, rest) = row.split_at_mut(outs);
                    exact.copy_from_slice(want);
                    if read {
                        chunk.fill_vector(geom, v, &mut vector);
                    }
                    let index = (first_vector + v) as u64;
                    for (((dp, s), y), gain) in self
                        .paths
                        .iter()
                        .zip(&mut scratch)
                        .zip(rest.chunks_mut(outs))
                        .zip(&self.gains)
                    {
                        let Some(s) = s else {
                            y.copy_from_slice(want);
                            continue;
                        };
                        dp.vector(&vector, index, s);
                        if twos_digits {
                            twos_correction(
                                prep.weights,
                                &vector,
                                k,
                                prep.plan.applied_bits,
                                s.acc(),
                            );
                        }
                        for (o, &a) in y.iter_mut().zip(s.acc().iter()) {
                            *o = a.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                        }
                        if let Some(g) = *gain {
                            // Compensated: round(gain * Y), saturating.
                            y.iter_mut()
                                .for_each(|o| *o = (g * *o as f64).round() as i64);
                        }
                    }
                }
                scratch
                    .iter()
                    .map(|s| s.as_ref().map_or((0, 0), Scratch::clip_counts))
                    .collect::<Vec<_>>()
            })
            .reduce(
                || vec![(0, 0); modes],
                |a, b| {
                    a.iter()
                        .zip(&b)
                        .map(|(x, y)| (x.0 + y.0, x.1 + y.1))
                        .collect()
                },
            );
        (ys, clips)
    }

    /// The float layer's outputs of the vectors of `range` (None without a float layer
    /// or float inputs): Y_float = sum over k of x * w, in f64.
    fn float_outputs(
        &self,
        chunk: Samples,
        floats: &[f64],
        range: std::ops::Range<usize>,
    ) -> Option<Vec<f64>> {
        let f = self.layer.float.as_ref()?;
        if floats.is_empty() {
            return None;
        }
        let geom = self.layer.prep.geom();
        let k = self.layer.prep.map.k as usize;
        let groups = self.layer.prep.map.groups as usize;
        let outs = self.layer.outputs();
        let ng = outs / groups.max(1);
        debug_assert_eq!(floats.len(), chunk.input.len());
        let mut ys = vec![0.0; range.len() * outs];
        ys.par_chunks_mut(outs.max(1)).enumerate().for_each_init(
            || vec![0.0f64; k * groups],
            |x, (i, y)| {
                workload::im2col_vector(geom, floats, range.start + i, x);
                for (o, y) in y.iter_mut().enumerate() {
                    let x = &x[(o / ng.max(1)) * k..][..k];
                    let w = &f.weights[o * k..][..k];
                    *y = x.iter().zip(w).map(|(&a, &b)| a * b as f64).sum();
                }
            },
        );
        Some(ys)
    }

    /// Every mode's metrics (and outputs, when kept), in the order of the modes given.
    /// (Their ADC clips are those of the vectors fed.)
    pub fn finish(self) -> Vec<ModeOutput> {
        self.results
    }
}

/// The drift-compensation gain of each of `modes` (docs/functional.md, "Programming
/// noise, drift and relaxation"): over `samples` of the layer's input, sum |Y_exact| / sum |Y|, Y the
/// mode's outputs read with `opts`' device (its time, its draws, no gains) and Y_exact
/// the exact product; 1 where sum |Y| is 0. Sums in vector order: deterministic.
pub fn compensation_gains(
    prep: &Prepared,
    hw: &Hardware,
    sim: &SimOptions,
    opts: &FuncOptions,
    modes: &[Mode],
    samples: Samples,
) -> Vec<(Mode, f64)> {
    let o = FuncOptions {
        keep_outputs: true,
        gains: Default::default(),
        ..opts.clone()
    };
    let layer = Layer::new(prep, hw, sim, &o);
    let mut run = LayerRun::new(&layer, modes);
    run.feed(samples);
    let geom = prep.geom();
    let (k, groups) = (prep.map.k as usize, prep.map.groups as usize);
    let exact = exact_products(prep.weights, k, groups, samples.vectors(geom), |i, x| {
        samples.fill_vector(geom, i, x)
    });
    let abs_sum = |y: &[i64]| y.iter().map(|&v| (v as f64).abs()).sum::<f64>();
    let want = abs_sum(&exact);
    run.finish()
        .into_iter()
        .map(|r| {
            let got = r.outputs.as_deref().map_or(0.0, abs_sum);
            (r.mode, if got > 0.0 { want / got } else { 1.0 })
        })
        .collect()
}

/// The largest bitline sum a read of `mode` can produce: its OU height (the whole
/// crossbar for ideal) times the top cell level times the top digit.
pub fn full_sum(hw: &Hardware, mode: Mode) -> u64 {
    hw.ou_height(mode) as u64 * ((1u64 << hw.cell_bits) - 1) * ((1u64 << hw.dac_bits) - 1)
}

/// The ADC step of each of `modes` for `range` (docs/functional.md, "ADC range"),
/// calibrated on `samples` of the layer's input: every read of the mode's datapath with
/// the ideal device (so the step is the same for every device draw) and an ADC that
/// cannot clip, the non-zero ideal sums counted, and the step at which
/// `adc.bits` reach the P-th percentile of them (nearest rank). `Step` and `Full` need
/// no samples: their steps are returned as [`Layer`] computes them.
pub fn calibrate(
    prep: &Prepared,
    hw: &Hardware,
    sim: &SimOptions,
    modes: &[Mode],
    samples: Samples,
    range: AdcRange,
) -> Vec<(Mode, u64)> {
    let ideal = FuncOptions {
        adc_range: AdcRange::Step,
        ..FuncOptions::default()
    };
    let layer = Layer::new(prep, hw, sim, &ideal);
    let geom = prep.geom();
    let outs = layer.outputs();
    let (k, groups) = (prep.map.k as usize, prep.map.groups as usize);
    let vectors = samples.vectors(geom);
    modes
        .iter()
        .map(|&mode| {
            let bits = hw.adc_resolution(mode);
            let p = match range {
                AdcRange::Step => return (mode, 1),
                AdcRange::Full => return (mode, Adc::step_for(bits, full_sum(hw, mode))),
                AdcRange::Percentile(p) => p,
            };
            let full = full_sum(hw, mode);
            // The histogram holds sums up to HISTOGRAM_TOP; larger ones count as the full
            // sum (a percentile among them gives the full range: nothing it covers clips).
            let top = full.min(HISTOGRAM_TOP);
            let auto = Hardware {
                adc_bits: crossbar::AdcBits::Auto,
                ..*hw
            };
            let dp = layer.datapath_with(mode, Adc::new(auto.adc_resolution(mode), 1));
            let hist = (0..vectors)
                .into_par_iter()
                .fold(
                    || {
                        (
                            Scratch::recording(&dp, outs, top as usize),
                            vec![0i32; k * groups],
                        )
                    },
                    |(mut s, mut v), i| {
                        samples.fill_vector(geom, i, &mut v);
                        dp.vector(&v, i as u64, &mut s);
                        (s, v)
                    },
                )
                .map(|(mut s, _)| s.take_histogram())
                .reduce(
                    || vec![0u64; top as usize + 1],
                    |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
                );
            let mut f = percentile(&hist, p);
            if f >= HISTOGRAM_TOP {
                f = full;
            }
            (mode, Adc::step_for(bits, f))
        })
        .collect()
}

/// The largest sum a calibration histogram holds an entry for (512 KiB of counts).
const HISTOGRAM_TOP: u64 = (1 << 16) - 1;

/// The P-th percentile (nearest rank) of the values counted in `hist` (hist[v]: how many
/// are v), ignoring zeros: the smallest v with at least ceil(P/100 * n) of the n non-zero
/// values at most v; 0 without any.
pub fn percentile(hist: &[u64], p: f64) -> u64 {
    let n: u64 = hist.iter().skip(1).sum();
    if n == 0 {
        return 0;
    }
    let rank = ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0;
    for (v, &c) in hist.iter().enumerate().skip(1) {
        seen += c;
        if seen >= rank {
            return v as u64;
        }
    }
    (hist.len() - 1) as u64
}

#[cfg(test)]
mod tests;
