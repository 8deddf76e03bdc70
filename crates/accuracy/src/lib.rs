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

mod exec;
mod gemm;
mod layer;
mod ops;

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
        .map(|r| float_batch(net, r))
        .collect::<Result<_, _>>()?;
    Ok(per.concat())
}

/// The float network's outputs of the samples of `range`, run as one batch, through the
/// finite gate.
fn float_batch(net: &Network, range: Range<usize>) -> Result<Vec<f64>, AccuracyError> {
    let (n, first) = (range.len(), range.start);
    let y = net.forward(net.samples(range), n, &mut |l, x, n| {
        Ok(net.layers[l].float_products(x, n))
    })?;
    gate_batch(net, first, "float network", y)
}

/// Units of work [`evaluate`] reports to its progress callback: a sample through one
/// path (the float network, the quantized one, each mode).
pub fn work(samples: usize, modes: &[Mode]) -> u64 {
    samples as u64 * (modes.len() as u64 + 2)
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
/// [`work`] as they are done.
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
            let n = ctx.range.len();
            let float = ctx.float()?;
            progress(n as u64);
            let (quantized, exact_figures) = ctx.path(None, &float)?;
            progress(n as u64);
            let mut paths = vec![quantized];
            for (&m, &exact) in modes.iter().zip(&exact_mode) {
                let p = if exact {
                    let mut p = paths[0].clone();
                    for (l, stats) in p.iter_mut().flat_map(|s| s.layers.iter_mut().enumerate()) {
                        if on_crossbar(l) {
                            stats.crossbar = true;
                        }
                    }
                    for (s, figures) in p.iter_mut().zip(&exact_figures) {
                        for (stats, f) in s.layers.iter_mut().zip(figures) {
                            if stats.crossbar {
                                stats.func = f.clone();
                            }
                        }
                    }
                    p
                } else {
                    ctx.path(Some(m), &float)?.0
                };
                progress(n as u64);
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

/// A batch of samples through one network.
struct Batch<'a, 'l> {
    net: &'a Network,
    mapped: &'a [functional::Layer<'l>],
    on_crossbar: &'a (dyn Fn(usize) -> bool + Sync),
    bits: u32,
    range: Range<usize>,
}

impl Batch<'_, '_> {
    /// The graph output of the float network, `[n, ...]`.
    fn float(&self) -> Result<Vec<f64>, AccuracyError> {
        float_batch(self.net, self.range.clone())
    }

    /// One path (`mode` None: the quantized network) of the batch: per sample its
    /// [`SamplePath`], and per sample and layer the datapath figures of the exact
    /// product (those of a mode on the exact fast path).
    #[allow(clippy::type_complexity)]
    fn path(
        &self,
        mode: Option<Mode>,
        float: &[f64],
    ) -> Result<(Vec<SamplePath>, Vec<Vec<Metrics>>), AccuracyError> {
        let net = self.net;
        let n = self.range.len();
        let layers = net.layers.len();
        let mut stats = vec![vec![LayerStats::default(); layers]; n];
        let mut exact_figures = vec![vec![Metrics::default(); layers]; n];
        let y = net.forward(net.samples(self.range.clone()), n, &mut |l, x, n| {
            let layer = &net.layers[l];
            let q = layer.quantize(x, self.bits);
            let exact = layer.exact_products(&q, n);
            let outs = layer.outputs();
            let per = layer.geom().vectors_per_sample();
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
                let figures = datapath_figures(&y_int[at.clone()], &exact[at.clone()], per);
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

/// The [`Evaluation`] of records in sample order (of samples 0.. of the graph input):
/// every sum is added sample by sample in that order, so it does not depend on how the
/// records were computed (threads, batches, ranges).
pub fn reduce(records: &[SampleRecord], modes: &[Mode]) -> Evaluation {
    let layers = records
        .first()
        .and_then(|r| r.paths.first())
        .map_or(0, |p| p.layers.len());
    let mut results: Vec<PathResult> = std::iter::once(None)
        .chain(modes.iter().map(|&m| Some(m)))
        .map(|mode| PathResult {
            mode,
            predictions: Vec::with_capacity(records.len()),
            output_sq_err: 0.0,
            layers: vec![LayerStats::default(); layers],
        })
        .collect();
    let mut float_predictions = Vec::with_capacity(records.len());
    let mut float_sq = 0.0;
    for r in records {
        float_predictions.push(r.float_prediction);
        float_sq += r.float_sq;
        for (acc, p) in results.iter_mut().zip(&r.paths) {
            acc.predictions.push(p.prediction);
            acc.output_sq_err += p.output_sq_err;
            for (a, st) in acc.layers.iter_mut().zip(&p.layers) {
                a.merge(st);
            }
        }
    }
    let quantized = results.remove(0);
    Evaluation {
        samples: records.len(),
        float_predictions,
        float_sq,
        quantized,
        modes: results,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn argmax_predicts_no_class_from_a_nan() {
        assert_eq!(super::argmax(&[1.0, 3.0, 3.0, -1.0]), Some(1));
        assert_eq!(super::argmax(&[f64::NEG_INFINITY, -1.0]), Some(1));
        // Before: 0 for both, so two NaN outputs counted as agreeing.
        assert_eq!(super::argmax(&[f64::NAN, 2.0]), None);
        assert_eq!(super::argmax(&[2.0, f64::NAN]), None);
        assert_eq!(super::argmax(&[]), None);
    }
}
