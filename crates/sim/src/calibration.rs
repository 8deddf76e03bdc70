//! The calibration every draw of an accuracy run shares, computed once before the
//! draws (docs/accuracy.md): the ADC steps of `adc.range = max | percentile:P`, the
//! quantized inputs drift compensation is computed on, the memory check every accuracy run
//! starts with, and the progress units of that work.

use crate::config::Resolved;
use accuracy::Network;
use anyhow::{anyhow, Result};
use crossbar::Mode;

/// What every draw of a run shares, computed once before the draws: the calibrated ADC
/// steps of every datapath layer and mode (`adc.range = max | percentile:P`; empty
/// otherwise) and, when the draws compensate drift (`device.drift_compensation`), the
/// quantized inputs of the calibration samples each draw's gains are computed on.
/// Both use the first `adc.calibration_samples` graph-input samples (whatever
/// `--samples` says, so the first samples give the same figures in any run).
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    /// (layer, mode, step), each layer calibrated on its quantized inputs in the
    /// quantized network, on the ideal device.
    pub steps: Vec<(String, Mode, u64)>,
    /// Per crossbar layer, its quantized inputs over the first `samples` samples; empty
    /// when no draw compensates drift.
    inputs: Vec<Vec<i32>>,
    samples: usize,
}

/// The [`Calibration`] of a run of `net` in `modes` with `cfg`; `progress` in the units of
/// `accuracy::work` (the ADC calibration's).
pub fn calibration(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Calibration> {
    // Every accuracy run (accuracy, its shards, sweeps' accuracy columns, search) starts
    // here: each layer within the budget `run --functional` applies, for the largest
    // batch of samples a run of this network holds, before anything is mapped.
    check_memory(net, cfg, modes)?;
    let adc = calibrates_adc(cfg, modes);
    let drift = compensates_drift(cfg, modes);
    let n = calibration_samples(cfg, net.samples);
    if n == 0 || !(adc || drift) {
        return Ok(Calibration::default());
    }
    let geoms: Vec<&workload::ConvGeometry> = net.layers.iter().map(|l| l.geom()).collect();
    let work = calibration_work(&geoms, crossbar, modes.len());
    let inputs = calibration_inputs(net, cfg, n, &|| {
        if adc {
            progress(work.per_sample)
        }
    })?;
    let steps = match adc {
        true => {
            let range = cfg.adc_range();
            per_layer(
                net,
                cfg,
                crossbar,
                (&inputs, n),
                &|l| progress(work.layers[l].saturating_mul(n as u64)),
                |prep, samples| {
                    functional::calibrate(prep, &cfg.hw, &cfg.opts, modes, samples, range)
                },
            )
        }
        false => Vec::new(),
    };
    Ok(Calibration {
        steps,
        inputs: if drift { inputs } else { Vec::new() },
        samples: n,
    })
}

/// Refuses a network one of whose layers needs more than `limits.max_layer_bytes` through
/// the datapath: the one budget of `run` and `accuracy`
/// ([`crate::functional::check_layer_memory`]), with a batch of samples held and kept
/// (the largest [`accuracy::default_batch`] of the network's samples). Every layer is
/// mapped, on the crossbar or not.
pub fn check_memory(net: &Network, cfg: &Resolved, modes: &[Mode]) -> Result<()> {
    let batch = accuracy::default_batch(net, net.samples) as u64;
    for l in &net.layers {
        crate::functional::check_layer_memory(&l.quant.spec, cfg, modes, batch, batch)
            .map_err(|e| anyhow!("{}: {e}", net.name))?;
    }
    Ok(())
}

/// `f` of every datapath layer (its program and its calibration `inputs` over `n`
/// samples, [`calibration_inputs`]), the figures keyed by the layer's name; `done(l)`
/// after layer l.
pub(crate) fn per_layer<T>(
    net: &Network,
    cfg: &Resolved,
    crossbar: &[bool],
    (inputs, n): (&[Vec<i32>], usize),
    done: &dyn Fn(usize),
    f: impl Fn(&engine::Prepared, engine::Samples) -> Vec<(Mode, T)>,
) -> Vec<(String, Mode, T)> {
    let mut out = Vec::new();
    for (l, layer) in net.layers.iter().enumerate() {
        if !crossbar.get(l).copied().unwrap_or(true) {
            continue;
        }
        let prep = engine::Prepared::from_weights(&layer.quant, &cfg.hw, &cfg.opts);
        let samples = engine::Samples::new(&inputs[l], n);
        for (m, x) in f(&prep, samples) {
            out.push((layer.name().to_string(), m, x));
        }
        done(l);
    }
    out
}

/// The drift-compensation gains of every datapath layer and mode read with `func`'s
/// device (docs/functional.md, "Programming noise, drift and relaxation"), each layer
/// calibrated on the quantized inputs of the calibration samples ([`Calibration`]).
pub(crate) fn compensation(
    net: &Network,
    cfg: &Resolved,
    func: &functional::FuncOptions,
    modes: &[Mode],
    crossbar: &[bool],
    cal: &Calibration,
) -> Vec<(String, Mode, f64)> {
    per_layer(
        net,
        cfg,
        crossbar,
        (&cal.inputs, cal.samples),
        &|_| {},
        |prep, samples| {
            functional::compensation_gains(prep, &cfg.hw, &cfg.opts, func, modes, samples)
        },
    )
}

/// Each layer's quantized inputs in the quantized network over the first `n` graph-input
/// samples; `done` after each sample.
pub(crate) fn calibration_inputs(
    net: &Network,
    cfg: &Resolved,
    n: usize,
    done: &dyn Fn(),
) -> Result<Vec<Vec<i32>>> {
    let bits = cfg.hw.input_bits;
    let mut inputs: Vec<Vec<i32>> = vec![Vec::new(); net.layers.len()];
    for s in 0..n {
        net.forward(net.samples(s..s + 1), 1, &mut |l, x, n| {
            let layer = &net.layers[l];
            let q = layer.quantize(x, bits);
            let step = layer.input_step(bits) * layer.weight_scale;
            let y = layer
                .exact_products(&q, n)
                .iter()
                .map(|&v| v as f64 * step)
                .collect();
            inputs[l].extend_from_slice(&q);
            Ok(y)
        })?;
        done();
    }
    Ok(inputs)
}

/// How many graph-input samples a run calibrates on (its ADC steps and its drift
/// gains): `adc.calibration_samples`, at most the `available` ones.
pub(crate) fn calibration_samples(cfg: &Resolved, available: usize) -> usize {
    (cfg.config.adc.calibration_samples as usize).min(available)
}

/// Whether a run in `modes` calibrates its ADC steps: `adc.range` is calibrated and
/// some mode reads.
pub(crate) fn calibrates_adc(cfg: &Resolved, modes: &[Mode]) -> bool {
    cfg.adc_range().calibrated() && !modes.is_empty()
}

/// Whether each draw of a run in `modes` compensates drift: `device.drift_compensation`
/// on a device that is not ideal, and some mode reads.
pub(crate) fn compensates_drift(cfg: &Resolved, modes: &[Mode]) -> bool {
    let device = &crate::functional::options(cfg, false).device;
    device.drift_compensation && !device.is_ideal() && !modes.is_empty()
}

/// The progress units of the ADC calibration ([`calibration`]): per sample the quantized network, then per
/// datapath layer and sample every read of each of `modes` modes.
pub(crate) struct CalibrationWork {
    pub(crate) per_sample: u64,
    pub(crate) layers: Vec<u64>,
}

pub(crate) fn calibration_work(
    geoms: &[&workload::ConvGeometry],
    crossbar: &[bool],
    modes: usize,
) -> CalibrationWork {
    let macs = |g: &workload::ConvGeometry| g.macs_per_sample() as u64;
    CalibrationWork {
        per_sample: geoms
            .iter()
            .map(|g| macs(g).saturating_mul(accuracy::QUANTIZED_UNITS_PER_MAC))
            .fold(0, u64::saturating_add),
        layers: geoms
            .iter()
            .enumerate()
            .map(|(l, g)| match crossbar.get(l).copied().unwrap_or(true) {
                true => macs(g)
                    .saturating_mul(accuracy::DATAPATH_UNITS_PER_MAC)
                    .saturating_mul(modes as u64),
                false => 0,
            })
            .collect(),
    }
}
