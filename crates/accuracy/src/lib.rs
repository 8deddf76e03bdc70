//! End-to-end accuracy (docs/accuracy.md): a bundle's network graph run a batch of samples
//! at a time, in float (no quantization, exact products), as the quantized network (each crossbar
//! layer's input quantized with its calibrated range, exact integer products), and in each
//! mode with its crossbar layers through the functional datapath.
//!
//! Owns the graph executor over ndarray and the reduction of per-sample results into
//! top-1, agreement and per-layer error figures. Knows no command line and reads no
//! file: the caller hands it the graph, the layers' arrays and the input samples.
//! A sample's result ([`SampleRecord`]) does not depend on the other samples, on the
//! batch, on threads or on chunking; [`reduce`] adds the records in sample order.

// Values come from user data: no unwrap/expect outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod drawn;
mod exec;
mod gemm;
mod igemm;
mod layer;
mod ops;
mod seq_ops;

pub use drawn::evaluate_drawn;
pub use exec::Network;
pub use layer::CrossbarLayer;

use crossbar::{Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{FuncOptions, LayerRun, Metrics};
use rayon::prelude::*;
use std::ops::Range;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AccuracyError {
    #[error("{0}")]
    Network(String),
    #[error("{network}: graph node {node} ({op}): {problem}")]
    Node {
        network: String,
        node: String,
        op: &'static str,
        problem: String,
    },
    #[error("{0}")]
    Functional(#[from] functional::FuncError),
}

/// Error figures of one crossbar layer in one path, summed over samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayerStats {
    /// Y against the exact integer product of the same quantized input (datapath layers).
    pub func: Metrics,
    /// Sum of (dequantized Y - W x)^2, x the layer's float input in this path.
    pub float_sq_err: f64,
    /// Sum of (W x)^2.
    pub float_sq: f64,
    /// Whether the layer went through the crossbar datapath (else exact products).
    pub crossbar: bool,
}

impl LayerStats {
    fn merge(&mut self, o: &LayerStats) {
        self.func.merge(&o.func);
        self.float_sq_err += o.float_sq_err;
        self.float_sq += o.float_sq;
        self.crossbar |= o.crossbar;
    }

    /// [`LayerStats::merge`] when every sum fits (see `Metrics::checked_merge`); else the
    /// name of the sum that would not, `self` unchanged.
    fn checked_merge(&mut self, o: &LayerStats) -> Result<(), &'static str> {
        let float = |a: f64, b: f64, name| Some(a + b).filter(|s| s.is_finite()).ok_or(name);
        let float_sq_err = float(self.float_sq_err, o.float_sq_err, "float_sq_err")?;
        let float_sq = float(self.float_sq, o.float_sq, "float_sq")?;
        let mut func = self.func.clone();
        func.checked_merge(&o.func)?;
        *self = LayerStats {
            func,
            float_sq_err,
            float_sq,
            crossbar: self.crossbar | o.crossbar,
        };
        Ok(())
    }

    /// ||dequantized Y - W x|| / ||W x|| (None when W x is all zero).
    pub fn float_rel_rmse(&self) -> Option<f64> {
        (self.float_sq > 0.0).then(|| (self.float_sq_err / self.float_sq).sqrt())
    }
}

/// One path (the quantized network, or a mode) over the samples.
#[derive(Debug, Clone, PartialEq)]
pub struct PathResult {
    /// None: the quantized network (exact products everywhere).
    pub mode: Option<Mode>,
    pub predictions: Vec<usize>,
    /// Sum over samples of ||y - y_float||^2 of the graph output.
    pub output_sq_err: f64,
    /// Per crossbar layer, in the network's order.
    pub layers: Vec<LayerStats>,
}

/// What [`evaluate`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub samples: usize,
    pub float_predictions: Vec<usize>,
    /// Sum over samples of ||y_float||^2.
    pub float_sq: f64,
    pub quantized: PathResult,
    pub modes: Vec<PathResult>,
}

impl Evaluation {
    /// Fraction of predictions equal to the labels.
    pub fn top1(predictions: &[usize], labels: &[i64]) -> f64 {
        let hits = predictions
            .iter()
            .zip(labels)
            .filter(|(&p, &l)| p as i64 == l)
            .count();
        hits as f64 / predictions.len().max(1) as f64
    }

    /// Fraction of samples where two paths predict the same class.
    pub fn agreement(a: &[usize], b: &[usize]) -> f64 {
        let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
        same as f64 / a.len().max(1) as f64
    }

    /// ||y - y_float|| / ||y_float|| of the graph output over every sample.
    pub fn output_rel_rmse(&self, p: &PathResult) -> Option<f64> {
        (self.float_sq > 0.0).then(|| (p.output_sq_err / self.float_sq).sqrt())
    }
}

/// The machine the crossbar layers run on.
pub struct Machine<'a> {
    pub hw: &'a Hardware,
    pub sim: &'a SimOptions,
    pub func: &'a FuncOptions,
}

/// Index of the largest value (the first of equal ones); None for an empty output or one
/// holding a NaN (no class is predicted: two NaN outputs must not count as agreeing).
pub fn argmax(y: &[f64]) -> Option<usize> {
    if y.is_empty() || y.iter().any(|v| v.is_nan()) {
        return None;
    }
    let mut best = 0;
    for (i, &v) in y.iter().enumerate() {
        if v > y[best] {
            best = i;
        }
    }
    Some(best)
}

/// The finite gate of a batch's graph outputs `y` of `path` (`[n, ...]` flat, sample
/// `first` first): `y`, or the error naming the sample and the first element that is NaN
/// or infinite (a prediction or a logit written from it would be meaningless).
fn gate_batch(
    net: &Network,
    first: usize,
    path: &str,
    y: Vec<f64>,
) -> Result<Vec<f64>, AccuracyError> {
    for (i, o) in y.chunks(net.output_len().max(1)).enumerate() {
        bounds::finite::check_all(o, |j| format!("output[{j}]")).map_err(|e| {
            AccuracyError::Network(format!("{}: sample {}, {path}: {e}", net.name, first + i))
        })?;
    }
    Ok(y)
}

fn prediction(net: &Network, s: usize, y: &[f64]) -> Result<usize, AccuracyError> {
    argmax(y).ok_or_else(|| {
        AccuracyError::Network(format!(
            "{}: sample {s}: the graph output is empty",
            net.name
        ))
    })
}

/// Samples run through the graph at once, at most: [`default_batch`] may choose fewer.
pub const MAX_BATCH: usize = 16;

/// Activation values a batch may hold in its largest tensor (16 MiB of f64).
const BATCH_VALUES: usize = 1 << 21;

/// The batch [`evaluate`] runs `samples` samples in: 1 for a graph that cannot take
/// more ([`Network::batchable`]); else up to [`MAX_BATCH`], fewer when a sample's
/// largest tensor is big or there are too few samples to give every thread four
/// batches. Results do not depend on it.
pub fn default_batch(net: &Network, samples: usize) -> usize {
    if !net.batchable() {
        return 1;
    }
    let largest = net
        .graph
        .tensors
        .iter()
        .filter(|t| t.role != network::graph::TensorRole::Weight)
        .map(|t| t.shape.iter().product::<usize>())
        .max()
        .unwrap_or(1)
        .max(1);
    let threads = rayon::current_num_threads().max(1);
    samples
        .div_ceil(4 * threads)
        .min(MAX_BATCH)
        .min(BATCH_VALUES / largest)
        .max(1)
}

/// The first `samples` samples of `range` cut into batches of `batch`.
fn batches(range: Range<usize>, batch: usize) -> Vec<Range<usize>> {
    let batch = batch.max(1);
    (range.start..range.end)
        .step_by(batch)
        .map(|s| s..(s + batch).min(range.end))
        .collect()
}

/// The float network's output for the first `samples` samples, `[samples, ...]` flat.
pub fn float_outputs(net: &Network, samples: usize) -> Result<Vec<f64>, AccuracyError> {
    let per: Vec<Vec<f64>> = batches(0..samples, default_batch(net, samples))
        .into_par_iter()
        .map(|r| float_batch(net, r, &[], &|_| {}))
        .collect::<Result<_, _>>()?;
    Ok(per.concat())
}

/// The float network's outputs of the samples of `range`, run as one batch, through the
/// finite gate; `progress` gets `units[l]` per sample as crossbar layer l is done.
fn float_batch(
    net: &Network,
    range: Range<usize>,
    units: &[u64],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<f64>, AccuracyError> {
    let (n, first) = (range.len(), range.start);
    let y = net.forward(net.samples(range), n, &mut |l, x, n| {
        let y = net.layers[l].float_products(x, n);
        progress(units.get(l).map_or(0, |u| u.saturating_mul(n as u64)));
        Ok(y)
    })?;
    gate_batch(net, first, "float network", y)
}

/// Progress units of one MAC of a crossbar layer in the float network (a float64 matrix
/// product), in the units of `run`'s bar: one unit is about one MAC of one mode in the
/// fast counting engine, 0.1 to 0.2 ns (docs/perf.md, "Progress bars: what a unit of work
/// is", has the timings these weights come from).
pub const FLOAT_UNITS_PER_MAC: u64 = 3;
/// Units of one MAC in the quantized network (the input quantized, the exact integer
/// product and the float product it is compared with), and in a layer of a mode that
/// computes exact products (left out by `--layers`, or on the exact fast path).
pub const QUANTIZED_UNITS_PER_MAC: u64 = 5;
/// Units of one MAC read OU by OU through the functional datapath.
pub const DATAPATH_UNITS_PER_MAC: u64 = 400;
/// Units of preparing one weight of a crossbar layer for a draw (mapping, compressing,
/// programming the crossbars), as `run` counts its preparing.
pub const SETUP_UNITS_PER_WEIGHT: u64 = 600;

/// The progress units [`evaluate_samples`] reports: `setup` once when the layers are
/// prepared, then per sample, as each batch finishes each path, `float`, `quantized` and
/// each mode's units. A mode whose every datapath layer is on the exact fast path costs
/// nothing (its records are the quantized network's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    pub setup: u64,
    pub float: u64,
    pub quantized: u64,
    pub modes: Vec<u64>,
    /// Per path (the float network, the quantized one, each mode) and crossbar layer,
    /// the units of one sample, reported as each layer of a batch is done; each path's
    /// sum is its figure above.
    pub layers: Vec<Vec<u64>>,
}

impl Work {
    /// The work of crossbar layers of geometries `geoms` (layer i through the datapath iff
    /// `crossbar[i]`) on machine `hw` with functional options `func`, in `modes`.
    pub fn of(
        geoms: &[&workload::ConvGeometry],
        crossbar: &[bool],
        hw: &Hardware,
        func: &FuncOptions,
        modes: &[Mode],
    ) -> Work {
        let macs = |g: &workload::ConvGeometry| g.macs_per_sample() as u64;
        let each =
            |w: u64| -> Vec<u64> { geoms.iter().map(|g| macs(g).saturating_mul(w)).collect() };
        let on = |l: usize| crossbar.get(l).copied().unwrap_or(true);
        let mut layers = vec![each(FLOAT_UNITS_PER_MAC), each(QUANTIZED_UNITS_PER_MAC)];
        for &m in modes {
            let exact: Vec<bool> = geoms
                .iter()
                .map(|g| functional::exact_path(hw, func, m, g.k_rows() as u64))
                .collect();
            layers.push(if (0..geoms.len()).all(|l| !on(l) || exact[l]) {
                vec![0; geoms.len()]
            } else {
                geoms
                    .iter()
                    .enumerate()
                    .map(|(l, g)| match on(l) && !exact[l] {
                        true => macs(g).saturating_mul(DATAPATH_UNITS_PER_MAC),
                        false => macs(g).saturating_mul(QUANTIZED_UNITS_PER_MAC),
                    })
                    .collect()
            });
        }
        let sums: Vec<u64> = layers
            .iter()
            .map(|p| p.iter().fold(0, |a: u64, &u| a.saturating_add(u)))
            .collect();
        Work {
            setup: geoms
                .iter()
                .map(|g| (g.weight_elements() as u64).saturating_mul(SETUP_UNITS_PER_WEIGHT))
                .fold(0, u64::saturating_add),
            float: sums[0],
            quantized: sums[1],
            modes: sums[2..].to_vec(),
            layers,
        }
    }

    /// The work of [`evaluate`] over the crossbar layers of `net`.
    pub fn of_network(net: &Network, machine: &Machine, modes: &[Mode], crossbar: &[bool]) -> Work {
        let geoms: Vec<&workload::ConvGeometry> = net.layers.iter().map(|l| l.geom()).collect();
        Work::of(&geoms, crossbar, machine.hw, machine.func, modes)
    }

    /// Units of one sample through every path.
    pub fn per_sample(&self) -> u64 {
        self.modes
            .iter()
            .fold(self.float.saturating_add(self.quantized), |a, &m| {
                a.saturating_add(m)
            })
    }

    /// Units of [`evaluate_samples`] over `samples` samples.
    pub fn total(&self, samples: usize) -> u64 {
        self.setup
            .saturating_add(self.per_sample().saturating_mul(samples as u64))
    }
}

/// One path of one sample, before the reduction in sample order.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplePath {
    pub prediction: usize,
    /// ||y - y_float||^2 of the graph output.
    pub output_sq_err: f64,
    /// Per crossbar layer.
    pub layers: Vec<LayerStats>,
}

/// What one sample contributes to an [`Evaluation`].
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRecord {
    pub float_prediction: usize,
    /// ||y_float||^2 of the graph output.
    pub float_sq: f64,
    /// The quantized network, then each mode.
    pub paths: Vec<SamplePath>,
}

/// Runs the first `samples` samples in float, as the quantized network and in every mode
/// of `modes`; in a mode, layer i goes through the crossbar datapath iff `crossbar[i]`
/// (others compute exact integer products). `progress` is called with the units of
/// [`Work`] as they are done.
pub fn evaluate(
    net: &Network,
    machine: &Machine,
    modes: &[Mode],
    crossbar: &[bool],
    samples: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Evaluation, AccuracyError> {
    let batch = default_batch(net, samples);
    let records = evaluate_samples(net, machine, modes, crossbar, 0..samples, batch, progress)?;
    Ok(reduce(&records, modes))
}

/// The records of samples `range` ([`evaluate`] reduces them), computed `batch` samples
/// at a time (clamped to 1 for a graph that is not [`Network::batchable`]). A sample's
/// record depends neither on the batch, nor on the range, nor on the threads.
pub fn evaluate_samples(
    net: &Network,
    machine: &Machine,
    modes: &[Mode],
    crossbar: &[bool],
    range: Range<usize>,
    batch: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<SampleRecord>, AccuracyError> {
    let hw = machine.hw;
    for l in &net.layers {
        functional::check_layer(&l.quant.spec, hw)?;
    }
    let func = FuncOptions {
        keep_outputs: true,
        ..machine.func.clone()
    };
    let prepared: Vec<Prepared> = net
        .layers
        .iter()
        .map(|l| Prepared::from_weights(&l.quant, hw, machine.sim))
        .collect();
    let mapped: Vec<functional::Layer> = prepared
        .iter()
        .map(|p| functional::Layer::new(p, hw, machine.sim, &func))
        .collect();
    let work = Work::of_network(net, machine, modes, crossbar);
    progress(work.setup);
    let on_crossbar = |l: usize| crossbar.get(l).copied().unwrap_or(true);
    // A mode whose every crossbar layer takes the exact fast path computes the quantized
    // network: its records are the quantized path's, with the datapath figures of exact
    // outputs.
    let exact_mode: Vec<bool> = modes
        .iter()
        .map(|&m| (0..net.layers.len()).all(|l| !on_crossbar(l) || mapped[l].is_exact(m)))
        .collect();
    let step = if net.batchable() { batch.max(1) } else { 1 };
    let per_batch = batches(range, step)
        .into_par_iter()
        .map(|r| {
            let ctx = Batch {
                net,
                mapped: &mapped,
                on_crossbar: &on_crossbar,
                bits: hw.input_bits,
                range: r,
            };
            let float = ctx.float(&work.layers[0], progress)?;
            let (quantized, exact_figures) = ctx.path(None, &float, &work.layers[1], progress)?;
            let mut paths = vec![quantized];
            for ((&m, &exact), units) in modes.iter().zip(&exact_mode).zip(&work.layers[2..]) {
                let p = if exact {
                    paths[0]
                        .iter()
                        .zip(&exact_figures)
                        .map(|(q, figures)| exact_mode_path(q, figures, &on_crossbar))
                        .collect()
                } else {
                    ctx.path(Some(m), &float, units, progress)?.0
                };
                paths.push(p);
            }
            float
                .chunks(net.output_len().max(1))
                .enumerate()
                .map(|(i, f)| {
                    Ok(SampleRecord {
                        float_prediction: prediction(net, ctx.range.start + i, f)?,
                        float_sq: f.iter().map(|v| v * v).sum::<f64>(),
                        paths: paths.iter().map(|p| p[i].clone()).collect(),
                    })
                })
                .collect::<Result<Vec<_>, AccuracyError>>()
        })
        .collect::<Result<Vec<_>, AccuracyError>>()?;
    Ok(per_batch.concat())
}

/// The path of a mode whose every crossbar layer takes the exact fast path, for one
/// sample: the quantized network's path `q`, with the datapath figures of the exact
/// products (`figures`, per layer) on its crossbar layers.
fn exact_mode_path(
    q: &SamplePath,
    figures: &[Metrics],
    on_crossbar: &dyn Fn(usize) -> bool,
) -> SamplePath {
    let mut p = q.clone();
    for (l, (stats, f)) in p.layers.iter_mut().zip(figures).enumerate() {
        if on_crossbar(l) {
            stats.crossbar = true;
            stats.func = f.clone();
        }
    }
    p
}

/// A batch of samples through one network.
struct Batch<'a, 'l> {
    net: &'a Network,
    mapped: &'a [functional::Layer<'l>],
    on_crossbar: &'a (dyn Fn(usize) -> bool + Sync),
    bits: u32,
    range: Range<usize>,
}

impl Batch<'_, '_> {
    /// The graph output of the float network, `[n, ...]` (`units`: see [`float_batch`]).
    fn float(
        &self,
        units: &[u64],
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<f64>, AccuracyError> {
        float_batch(self.net, self.range.clone(), units, progress)
    }

    /// One path (`mode` None: the quantized network) of the batch: per sample its
    /// [`SamplePath`], and per sample and layer the datapath figures of the exact
    /// product (those of a mode on the exact fast path). `progress` gets `units[l]` per
    /// sample as crossbar layer l is done.
    #[allow(clippy::type_complexity)]
    fn path(
        &self,
        mode: Option<Mode>,
        float: &[f64],
        units: &[u64],
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(Vec<SamplePath>, Vec<Vec<Metrics>>), AccuracyError> {
        let net = self.net;
        let n = self.range.len();
        let layers = net.layers.len();
        let mut stats = vec![vec![LayerStats::default(); layers]; n];
        let mut exact_figures = vec![vec![Metrics::default(); layers]; n];
        let y = net.forward(net.samples(self.range.clone()), n, &mut |l, x, n| {
            let layer = &net.layers[l];
            let q = layer.quantize(x, self.bits);
            let vectors = layer.exact_vectors(&q, n);
            let outs = layer.outputs();
            let per = layer.geom().vectors_per_sample();
            let exact = layer::to_channel_major(&vectors, n, per, layer.geom().out_channels);
            let crossbar = mode.filter(|_| (self.on_crossbar)(l));
            // The batch's ADC conversions and clips (integer sums: they are put on the
            // batch's first sample, and any split into batches sums to the same).
            let mut adc = (0, 0);
            let read = match crossbar {
                Some(m) if !self.mapped[l].is_exact(m) => {
                    let mut run = LayerRun::starting_at(&self.mapped[l], &[m], self.range.start);
                    run.feed(Samples::new(&q, n));
                    let out = run.finish().pop().and_then(|o| {
                        adc = (o.metrics.adc_conversions, o.metrics.adc_clips);
                        o.outputs
                    });
                    Some(out.ok_or_else(|| {
                        AccuracyError::Network(format!("{}: no output", layer.name()))
                    })?)
                }
                _ => None,
            };
            let y_int = read.as_deref().unwrap_or(&exact);
            let step = layer.input_step(self.bits) * layer.weight_scale;
            let y: Vec<f64> = y_int.iter().map(|&v| v as f64 * step).collect();
            let reference = layer.float_products(x, n);
            for s in 0..n {
                let at = s * outs..(s + 1) * outs;
                let st = &mut stats[s][l];
                for (a, b) in y[at.clone()].iter().zip(&reference[at.clone()]) {
                    st.float_sq_err += (a - b) * (a - b);
                    st.float_sq += b * b;
                }
                let figures = match &read {
                    Some(y) => datapath_figures(&y[at.clone()], &exact[at.clone()], per),
                    None => figures_of_exact(&vectors[at.clone()]),
                };
                if crossbar.is_some() {
                    st.crossbar = true;
                    st.func = figures;
                    if s == 0 {
                        st.func.adc_conversions = adc.0;
                        st.func.adc_clips = adc.1;
                    }
                } else if mode.is_none() {
                    exact_figures[s][l] = figures;
                }
            }
            progress(units.get(l).map_or(0, |u| u.saturating_mul(n as u64)));
            Ok(y)
        })?;
        let name = mode.map_or("quantized".to_string(), |m| m.to_string());
        let y = gate_batch(net, self.range.start, &name, y)?;
        let paths = y
            .chunks(net.output_len().max(1))
            .zip(float.chunks(net.output_len().max(1)))
            .zip(stats)
            .enumerate()
            .map(|(i, ((y, f), layers))| {
                Ok(SamplePath {
                    prediction: prediction(net, self.range.start + i, y)?,
                    output_sq_err: y.iter().zip(f).map(|(a, b)| (a - b) * (a - b)).sum::<f64>(),
                    layers,
                })
            })
            .collect::<Result<_, AccuracyError>>()?;
        Ok((paths, exact_figures))
    }
}

/// The datapath figures of one sample's outputs `y` against the exact product, both
/// `[Cout, Ho*Wo]`, added as the datapath adds them: vector by vector (`per` positions),
/// each vector's outputs in order.
fn datapath_figures(y: &[i64], exact: &[i64], per: usize) -> Metrics {
    let mut m = Metrics::default();
    let outs = y.len() / per.max(1);
    for pos in 0..per {
        for c in 0..outs {
            m.add(y[c * per + pos], exact[c * per + pos]);
        }
    }
    m
}

/// [`datapath_figures`] of a sample whose outputs are the exact product, from the
/// product's `[Ho*Wo, Cout]` layout: each output against itself in the order
/// datapath_figures adds them (vector by vector, each vector's outputs in order), which
/// is this layout's, so read in one run instead of with a stride.
fn figures_of_exact(vectors: &[i64]) -> Metrics {
    let mut m = Metrics::default();
    for &v in vectors {
        m.add(v, v);
    }
    m
}

/// The [`Evaluation`] of records in sample order (of samples 0.. of the graph input):
/// every sum is added sample by sample in that order, so it does not depend on how the
/// records were computed (threads, batches, ranges).
pub fn reduce(records: &[SampleRecord], modes: &[Mode]) -> Evaluation {
    let layers = records
        .first()
        .and_then(|r| r.paths.first())
        .map_or(0, |p| p.layers.len());
    let mut r = Reducer::new(modes, layers);
    for rec in records {
        r.add(rec);
    }
    r.finish()
}

/// A sum of [`Reducer::try_add`] that would not fit: of the float network (`path` None)
/// or path `path` (0: the quantized network, then each mode), of the graph output
/// (`layer` None) or crossbar layer `layer`; `sum` names the column of records.csv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    pub path: Option<usize>,
    pub layer: Option<usize>,
    pub sum: &'static str,
}

/// [`reduce`] fed one record at a time, in sample order (records read from shards).
#[derive(Debug, Clone)]
pub struct Reducer {
    results: Vec<PathResult>,
    float_predictions: Vec<usize>,
    float_sq: f64,
    samples: usize,
}

impl Reducer {
    /// A reduction of the quantized network and `modes` over `layers` crossbar layers.
    pub fn new(modes: &[Mode], layers: usize) -> Reducer {
        let results = std::iter::once(None)
            .chain(modes.iter().map(|&m| Some(m)))
            .map(|mode| PathResult {
                mode,
                predictions: Vec::new(),
                output_sq_err: 0.0,
                layers: vec![LayerStats::default(); layers],
            })
            .collect();
        Reducer {
            results,
            float_predictions: Vec::new(),
            float_sq: 0.0,
            samples: 0,
        }
    }

    /// Adds the next sample's record.
    pub fn add(&mut self, r: &SampleRecord) {
        self.samples += 1;
        self.float_predictions.push(r.float_prediction);
        self.float_sq += r.float_sq;
        for (acc, p) in self.results.iter_mut().zip(&r.paths) {
            acc.predictions.push(p.prediction);
            acc.output_sq_err += p.output_sq_err;
            for (a, st) in acc.layers.iter_mut().zip(&p.layers) {
                a.merge(st);
            }
        }
    }

    /// [`Reducer::add`] of a record read from a file (a shard's records.csv): every sum
    /// is checked arithmetic first (a count past 2^64 - 1 or a float sum past the largest
    /// double is refused), and nothing is added when one is refused; then `add`, so the
    /// same bits.
    pub fn try_add(&mut self, r: &SampleRecord) -> Result<(), Overflow> {
        if !(self.float_sq + r.float_sq).is_finite() {
            return Err(Overflow {
                path: None,
                layer: None,
                sum: "sq",
            });
        }
        for (p, (acc, rec)) in self.results.iter().zip(&r.paths).enumerate() {
            if !(acc.output_sq_err + rec.output_sq_err).is_finite() {
                return Err(Overflow {
                    path: Some(p),
                    layer: None,
                    sum: "sq",
                });
            }
            for (l, (a, st)) in acc.layers.iter().zip(&rec.layers).enumerate() {
                a.clone().checked_merge(st).map_err(|sum| Overflow {
                    path: Some(p),
                    layer: Some(l),
                    sum,
                })?;
            }
        }
        self.add(r);
        Ok(())
    }

    pub fn finish(mut self) -> Evaluation {
        let quantized = self.results.remove(0);
        Evaluation {
            samples: self.samples,
            float_predictions: self.float_predictions,
            float_sq: self.float_sq,
            quantized,
            modes: self.results,
        }
    }
}

#[cfg(test)]
mod tests;
