//! End-to-end accuracy (docs/accuracy.md): a bundle's network graph run sample by sample,
//! in float (no quantization, exact products), as the quantized network (each crossbar
//! layer's input quantized with its calibrated range, exact integer products), and in each
//! mode with its crossbar layers through the functional datapath.
//!
//! Owns the graph executor over ndarray and the reduction of per-sample results into
//! top-1, agreement and per-layer error figures. Knows no command line and reads no
//! file: the caller hands it the graph, the layers' arrays and the input samples.
//! A sample's result does not depend on the other samples, on threads or on chunking.

// Values come from user data: no unwrap/expect outside tests.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod exec;
mod layer;
mod ops;

pub use exec::Network;
pub use layer::CrossbarLayer;

use crossbar::{Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{FuncOptions, LayerRun, Metrics};
use rayon::prelude::*;
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
        let m = &mut self.func;
        m.outputs += o.func.outputs;
        m.exact += o.func.exact;
        m.sq_err += o.func.sq_err;
        m.sq_exact += o.func.sq_exact;
        m.max_abs_err = m.max_abs_err.max(o.func.max_abs_err);
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

/// The finite gate of a graph output: sample `s`'s output `y` of `path`, or the error
/// naming the first element that is NaN or infinite (a prediction or a logit written
/// from it would be meaningless).
fn gate(net: &Network, s: usize, path: &str, y: Vec<f64>) -> Result<Vec<f64>, AccuracyError> {
    bounds::finite::check_all(&y, |i| format!("output[{i}]"))
        .map_err(|e| AccuracyError::Network(format!("{}: sample {s}, {path}: {e}", net.name)))?;
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

/// The float network's output for the first `samples` samples, `[samples, ...]` flat.
pub fn float_outputs(net: &Network, samples: usize) -> Result<Vec<f64>, AccuracyError> {
    let per: Vec<Vec<f64>> = (0..samples)
        .into_par_iter()
        .map(|s| {
            let y = net.forward(
                net.sample(s),
                &mut |l, x| Ok(net.layers[l].float_product(x)),
            )?;
            gate(net, s, "float network", y)
        })
        .collect::<Result<_, _>>()?;
    Ok(per.concat())
}

/// Runs the first `samples` samples in float, as the quantized network and in every mode
/// of `modes`; in a mode, layer i goes through the crossbar datapath iff `crossbar[i]`
/// (others compute exact integer products). `progress` is called once per finished sample.
pub fn evaluate(
    net: &Network,
    machine: &Machine,
    modes: &[Mode],
    crossbar: &[bool],
    samples: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Evaluation, AccuracyError> {
    let hw = machine.hw;
    let bits = hw.input_bits;
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

    // One path of one sample: `mode` None is the quantized network.
    let path =
        |s: usize, mode: Option<Mode>| -> Result<(Vec<f64>, Vec<LayerStats>), AccuracyError> {
            let mut stats = vec![LayerStats::default(); net.layers.len()];
            let y = net.forward(net.sample(s), &mut |l, x| {
                let layer = &net.layers[l];
                let q = layer.quantize(x, bits);
                let st = &mut stats[l];
                let y_int = match mode {
                    Some(m) if crossbar.get(l).copied().unwrap_or(true) => {
                        let mut run = LayerRun::starting_at(&mapped[l], &[m], s);
                        run.feed(Samples::new(&q, 1));
                        let out = run.finish().pop();
                        let Some(out) = out else {
                            return Err(AccuracyError::Network(format!(
                                "{}: no output",
                                layer.name()
                            )));
                        };
                        st.func = out.metrics;
                        st.crossbar = true;
                        out.outputs.unwrap_or_default()
                    }
                    _ => layer.exact(&q),
                };
                let step = layer.input_step(bits) * layer.weight_scale;
                let y: Vec<f64> = y_int.iter().map(|&v| v as f64 * step).collect();
                let reference = layer.float_product(x);
                for (a, b) in y.iter().zip(&reference) {
                    st.float_sq_err += (a - b) * (a - b);
                    st.float_sq += b * b;
                }
                Ok(y)
            })?;
            let name = mode.map_or("quantized".to_string(), |m| m.to_string());
            Ok((gate(net, s, &name, y)?, stats))
        };

    struct SampleOut {
        float: Vec<f64>,
        paths: Vec<(Vec<f64>, Vec<LayerStats>)>,
    }
    let outs: Vec<SampleOut> = (0..samples)
        .into_par_iter()
        .map(|s| {
            let float =
                net.forward(
                    net.sample(s),
                    &mut |l, x| Ok(net.layers[l].float_product(x)),
                )?;
            let float = gate(net, s, "float network", float)?;
            let mut paths = vec![path(s, None)?];
            for &m in modes {
                paths.push(path(s, Some(m))?);
            }
            progress(1);
            Ok(SampleOut { float, paths })
        })
        .collect::<Result<_, AccuracyError>>()?;

    // Reduced in sample order: the sums do not depend on threads.
    let mut results: Vec<PathResult> = std::iter::once(None)
        .chain(modes.iter().map(|&m| Some(m)))
        .map(|mode| PathResult {
            mode,
            predictions: Vec::with_capacity(samples),
            output_sq_err: 0.0,
            layers: vec![LayerStats::default(); net.layers.len()],
        })
        .collect();
    let mut float_predictions = Vec::with_capacity(samples);
    let mut float_sq = 0.0;
    for (s, o) in outs.iter().enumerate() {
        float_predictions.push(prediction(net, s, &o.float)?);
        float_sq += o.float.iter().map(|v| v * v).sum::<f64>();
        for (r, (y, stats)) in results.iter_mut().zip(&o.paths) {
            r.predictions.push(prediction(net, s, y)?);
            r.output_sq_err += y
                .iter()
                .zip(&o.float)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>();
            for (acc, st) in r.layers.iter_mut().zip(stats) {
                acc.merge(st);
            }
        }
    }
    let quantized = results.remove(0);
    Ok(Evaluation {
        samples,
        float_predictions,
        float_sq,
        quantized,
        modes: results,
    })
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
