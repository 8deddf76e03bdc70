//! The accuracy path of a bundle (docs/accuracy.md), shared by `sresim accuracy` and
//! sweeps with `accuracy = true`: the bundle's network read into the accuracy crate, the
//! layers that go through the crossbar datapath, and the network figures of each path.

use crate::config::Resolved;
use accuracy::{CrossbarLayer, Evaluation, Machine, Network, PathResult, SampleRecord};
use anyhow::{anyhow, bail, Result};
use crossbar::Mode;
use workload::bundle::BundleWorkload;
use workload::{LayerSelector, Workload};

use crate::calibration::{
    calibrates_adc, calibration_samples, calibration_work, compensates_drift, compensation,
};
pub use crate::calibration::{calibration, check_memory, Calibration};

/// Opens `name` as a bundle (default: the embedded lenet5-mnist). `what` names the
/// source of the name in errors (`--workload`, or a grid's field).
pub fn open_bundle(name: Option<&str>, cfg: &Resolved, what: &str) -> Result<BundleWorkload> {
    let opts = workload::OpenOptions {
        precision: cfg.precision(),
        max_layer_bytes: cfg.config.limits.max_layer_bytes,
        ..workload::OpenOptions::default()
    };
    match name {
        None => crate::workloads::embedded_default(&opts),
        Some(n) => match workload::resolve::bundle_dir(n) {
            Some(dir) => BundleWorkload::open(&dir, &opts),
            None if n == crate::workloads::DEFAULT_WORKLOAD => {
                crate::workloads::embedded_default(&opts)
            }
            None if workload::zoo::layers(n).is_some() => bail!(
                "{what} {n}: a built-in network has synthetic weights and no graph input; accuracy needs a bundle with a network graph (e.g. lenet5-mnist)"
            ),
            None if workload::resolve::shape_file(n).is_some() => bail!(
                "{what} {n}: a network by shape has synthetic weights and no graph input; accuracy needs a bundle with a network graph (e.g. lenet5-mnist)"
            ),
            None => bail!(
                "{what} {n}: no such bundle (see `sresim workloads`){}",
                workload::resolve::suggest_bundle(n)
            ),
        },
    }
}

/// The bundle's network: its graph (batch 1), crossbar layers and graph input.
pub fn load_network(w: &BundleWorkload, cfg: &Resolved) -> Result<Network> {
    let label = w.manifest_label().to_string();
    let m = w.manifest();
    let Some(bg) = &m.graph else {
        bail!("{label}: graph: absent; the bundle is a set of layer traces with no network (docs/exporting.md, \"The network graph\")");
    };
    let graph = w
        .graph(1)?
        .ok_or_else(|| anyhow!("{label}: graph: absent"))?;
    let precision = cfg.precision();
    let mut layers = Vec::with_capacity(m.layers.len());
    for (i, l) in m.layers.iter().enumerate() {
        let at = format!("{label}: layers[{i}] ({})", l.spec.name);
        let (Some(input_max), Some(signed)) = (l.input_max, l.input_signed) else {
            bail!("{at}: input_max, input_signed: absent (the accuracy path quantizes each layer's input with its calibrated range; tools/export_onnx.py writes them)");
        };
        if !(input_max.is_finite() && input_max >= 0.0) {
            bail!("{at}: input_max: {input_max} (expected a finite value >= 0)");
        }
        let mut quant = w.load_weights(i, precision)?;
        quant.signed = signed;
        let (_, weights, is_float) = w.read_f64(&l.weight)?;
        let weight_scale = if is_float {
            let max = weights.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            max / workload::quant::signed_max(precision.weight_bits) as f64
        } else {
            1.0
        };
        let bias_name = format!("{}.bias", l.spec.name);
        let bias = if w.has_array(&bias_name)? {
            // The header first: a hostile shape is refused before anything is read.
            let shape = w.array_shape(&bias_name)?;
            if shape != [l.spec.geom.out_channels] {
                bail!(
                    "{label}: {bias_name}: shape {shape:?} (expected [{}], one per output channel)",
                    l.spec.geom.out_channels
                );
            }
            Some(w.read_f64(&bias_name)?.1)
        } else {
            None
        };
        layers.push(CrossbarLayer {
            quant,
            weights,
            weight_scale,
            bias,
            input_max,
        });
    }
    let (_, input) = w.read_values(&bg.input)?;
    let labels = match &bg.labels {
        Some(name) => Some(w.read_i64(name)?.1),
        None => None,
    };
    let mut constants = std::collections::HashMap::new();
    for (tensor, array) in bg.constant_tensors() {
        let (shape, values, _) = w.read_f64(array)?;
        constants.insert(tensor.to_string(), (shape, values));
    }
    Network::new(&m.name, graph, layers, input, labels)
        .and_then(|n| n.with_constants(constants))
        .map_err(|e| anyhow!("{label}: {e}"))
}

/// Which crossbar layers of `net` go through the datapath: those `selector` names (all
/// without one); the others compute exact integer products. `what` names the selector.
pub fn crossbar_layers(
    net: &Network,
    selector: Option<&LayerSelector>,
    what: &str,
) -> Result<Vec<bool>> {
    let specs: Vec<workload::LayerSpec> = net.layers.iter().map(|l| l.quant.spec.clone()).collect();
    Ok(match selector {
        None => vec![true; specs.len()],
        Some(sel) => {
            let chosen = sel
                .indices(&net.name, &specs)
                .map_err(|e| anyhow!("{what}: {e}"))?;
            (0..specs.len()).map(|i| chosen.contains(&i)).collect()
        }
    })
}

/// What the figures and outputs of an evaluation need of its network: its name, its
/// crossbar layers' names and the labels of its graph input (a merge of shards has them
/// from the shards, without the bundle).
#[derive(Debug, Clone, PartialEq)]
pub struct NetInfo {
    pub name: String,
    pub layers: Vec<String>,
    pub labels: Option<Vec<i64>>,
}

impl NetInfo {
    pub fn of(net: &Network) -> NetInfo {
        NetInfo {
            name: net.name.clone(),
            layers: net.layers.iter().map(|l| l.name().to_string()).collect(),
            labels: net.labels.clone(),
        }
    }
}

/// Runs the first `samples` samples of `net` in float, as the quantized network and in
/// every mode, on the config's hardware and `[device]` (see [`accuracy::evaluate`]).
pub fn evaluate(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    samples: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Evaluation> {
    // One draw: draw 0, whose seed is device.seed.
    let mut d = evaluate_draws(net, cfg, modes, crossbar, samples, 1, progress)?;
    Ok(d.evals.remove(0))
}

/// The progress units of [`evaluate_draws`] (and of [`draw_records`] over `samples`
/// samples): the calibration, then every draw computed. `geoms` are the network's
/// crossbar layers (so that a sweep counts the work of its points before it opens them);
/// `available` the samples its graph input holds.
pub fn work(
    geoms: &[&workload::ConvGeometry],
    crossbar: &[bool],
    cfg: &Resolved,
    modes: &[Mode],
    (samples, available): (usize, usize),
    k: u32,
) -> u64 {
    let n = match calibrates_adc(cfg, modes) {
        true => calibration_samples(cfg, available) as u64,
        false => 0,
    };
    let cal = calibration_work(geoms, crossbar, modes.len());
    let cal = cal
        .layers
        .iter()
        .fold(cal.per_sample, |a, &l| a.saturating_add(l))
        .saturating_mul(n);
    let func = crate::functional::options(cfg, false);
    let draw = accuracy::Work::of(geoms, crossbar, &cfg.hw, &func, modes).total(samples);
    draw.saturating_mul(draws_computed(cfg, modes, k) as u64)
        .saturating_add(cal)
}

/// [`work`] of `net`.
pub fn network_work(
    net: &Network,
    crossbar: &[bool],
    cfg: &Resolved,
    modes: &[Mode],
    samples: usize,
    k: u32,
) -> u64 {
    let geoms: Vec<&workload::ConvGeometry> = net.layers.iter().map(|l| l.geom()).collect();
    work(&geoms, crossbar, cfg, modes, (samples, net.samples), k)
}

/// The finite gate of every figure accuracy.csv, summary.json, the table and a sweep's
/// points hold: network figures of each path and error figures of each layer. `origin`
/// names the config in the error.
pub fn check_figures(net: &NetInfo, ev: &Evaluation, origin: &str) -> Result<()> {
    // A sum of squares past the largest double comes from outputs too large for their
    // squares (each output is finite, gated per sample), that is from the network's own
    // values: the network is named, not the config.
    let too_large = |what: &str| {
        anyhow!(
            "{}: {what} over {} samples is beyond the float64 range: the graph outputs are too large for output_rel_rmse (scale the bundle's weights or inputs down)",
            net.name,
            ev.samples
        )
    };
    if !ev.float_sq.is_finite() {
        return Err(too_large("the float network's sum of squared outputs"));
    }
    for p in std::iter::once(&ev.quantized).chain(&ev.modes) {
        let path = p.mode.map_or("quantized".to_string(), |m| m.to_string());
        if !p.output_sq_err.is_finite() {
            return Err(too_large(&format!(
                "the {path} path's sum of squared output errors"
            )));
        }
        for (name, v) in FIGURES.iter().zip(figures(net, ev, p)) {
            if let Some(v) = v {
                bounds::finite::check(|| format!("{name} of {path}"), v)
                    .map_err(|e| anyhow!("{origin}: {}: {e}", net.name))?;
            }
        }
        for (l, st) in net.layers.iter().zip(&p.layers) {
            let m = &st.func;
            let layer = [
                ("func_exact_frac", m.exact_frac()),
                ("func_rel_rmse", m.rel_rmse()),
                // Saturated at 2^64 - 1 (the error did not fit): refused like infinity.
                (
                    "func_max_abs_err",
                    Some(if m.max_abs_err == u64::MAX {
                        f64::INFINITY
                    } else {
                        m.max_abs_err as f64
                    }),
                ),
                ("float_rel_rmse", st.float_rel_rmse()),
            ];
            for (name, v) in layer {
                if let Some(v) = v {
                    bounds::finite::check(|| format!("{name} of {l} ({path})"), v)
                        .map_err(|e| anyhow!("{origin}: {}: {e}", net.name))?;
                }
            }
        }
    }
    Ok(())
}

/// The evaluations of K device draws (docs/accuracy.md, "Device draws").
#[derive(Debug, Clone)]
pub struct Draws {
    /// K.
    pub k: u32,
    /// The `device.seed` of each draw ([`crate::draws::seed`]).
    pub seeds: Vec<u64>,
    /// One evaluation per draw; a single one when the device draws nothing
    /// ([`Draws::identical`]): every draw would give the same figures.
    pub evals: Vec<Evaluation>,
}

impl Draws {
    /// Whether the K draws are one computation repeated (a device that draws nothing).
    pub fn identical(&self) -> bool {
        self.evals.len() < self.k as usize
    }

    /// The evaluation of draw `d`.
    pub fn eval(&self, d: usize) -> &Evaluation {
        &self.evals[d.min(self.evals.len() - 1)]
    }

    /// Draw 0 (the single-draw run's evaluation).
    pub fn first(&self) -> &Evaluation {
        &self.evals[0]
    }

    /// Figure `f` (an index of [`FIGURES`]) of path `path` (0: the quantized network,
    /// then each mode) in every draw, and its interval (None when a draw lacks it).
    pub fn figure(&self, net: &NetInfo, path: usize, f: usize) -> Option<crate::draws::Interval> {
        let of = |ev: &Evaluation| {
            let p = if path == 0 {
                &ev.quantized
            } else {
                &ev.modes[path - 1]
            };
            figures(net, ev, p)[f]
        };
        if self.identical() {
            return of(self.first()).map(crate::draws::Interval::constant);
        }
        let v: Option<Vec<f64>> = self.evals.iter().map(of).collect();
        // Each in its domain: the first five figures are fractions of the samples, the
        // last an error >= 0.
        match FIGURES[f] {
            "output_rel_rmse" => crate::draws::Interval::nonnegative(&v?),
            _ => crate::draws::Interval::proportion(&v?, self.first().samples as u64),
        }
    }
}

impl Draws {
    /// The per-sample table of path `path` over the draws (one row when the device draws
    /// nothing): `f(path's prediction, sample)` in every draw.
    fn table(&self, path: usize, f: impl Fn(usize, &Evaluation, usize) -> f64) -> Vec<Vec<f64>> {
        self.evals
            .iter()
            .map(|ev| {
                let p = if path == 0 {
                    &ev.quantized
                } else {
                    &ev.modes[path - 1]
                };
                p.predictions
                    .iter()
                    .enumerate()
                    .map(|(i, &pred)| f(pred, ev, i))
                    .collect()
            })
            .collect()
    }

    /// Path `path`'s intervals over the samples and the draws: top-1's and agreement's
    /// ([`crate::draws::Interval::over_samples`]), then the paired top-1 drop against the
    /// quantized network ([`crate::draws::Interval::paired`]; None for the quantized
    /// network itself, and the top-1 ones without labels).
    pub fn sample_intervals(
        &self,
        net: &NetInfo,
        path: usize,
    ) -> [Option<crate::draws::Interval>; 3] {
        use crate::draws::Interval;
        let random = !self.identical();
        let labels = net.labels.as_ref();
        let right = |pred: usize, i: usize| {
            labels.map_or(0.0, |l| f64::from(u8::from(pred as i64 == l[i])))
        };
        let top1 = labels
            .and_then(|_| Interval::over_samples(&self.table(path, |p, _, i| right(p, i)), random));
        let agree =
            |p: usize, ev: &Evaluation, i: usize| f64::from(u8::from(p == ev.float_predictions[i]));
        let agreement = Interval::over_samples(&self.table(path, agree), random);
        let drop = match (path, labels) {
            (0, _) | (_, None) => None,
            _ => Interval::paired(
                &self.table(path, |p, ev, i| {
                    right(ev.quantized.predictions[i], i) - right(p, i)
                }),
                random,
            ),
        };
        [top1, agreement, drop]
    }

    /// The interval cells of path `path` ([`crate::draws::columns`]): per figure of
    /// [`DRAW_FIGURES`] its mean, std and interval over the device draws at fixed samples,
    /// then [`Draws::sample_intervals`]: top-1's and agreement's low and high, the drop's
    /// mean, low and high.
    pub fn interval_cells(&self, net: &NetInfo, path: usize) -> Vec<String> {
        let mut v = Vec::new();
        for f in DRAW_FIGURES {
            v.extend(crate::draws::Interval::cells(self.figure(net, path, f)));
        }
        let [top1, agreement, drop] = self.sample_intervals(net, path);
        for i in [top1, agreement] {
            v.extend(match i {
                Some(i) => [cell(Some(i.low)), cell(Some(i.high))],
                None => Default::default(),
            });
        }
        v.extend(match drop {
            Some(d) => [cell(Some(d.mean)), cell(Some(d.low)), cell(Some(d.high))],
            None => Default::default(),
        });
        v
    }
}

/// The indices in [`FIGURES`] of the figures an interval is reported for
/// ([`crate::draws::FIGURES`]).
pub const DRAW_FIGURES: [usize; 3] = [0, 2, 5];

/// [`evaluate`] over `k` device draws, draw d with `device.seed` = [`crate::draws::seed`]
/// (seed, d): draw 0 is [`evaluate`]'s. A device that draws nothing is evaluated once
/// (every draw is the same). Draws run one after the other, each parallel over samples.
pub fn evaluate_draws(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    samples: usize,
    k: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Draws> {
    let info = NetInfo::of(net);
    let mut evals = Vec::new();
    let seeds = draw_records(
        net,
        cfg,
        modes,
        crossbar,
        (0..samples, k),
        progress,
        |_, r| {
            let ev = accuracy::reduce(&r, modes);
            check_figures(&info, &ev, &cfg.origin)?;
            evals.push(ev);
            Ok(())
        },
    )?;
    Ok(Draws { k, seeds, evals })
}

/// The per-sample records of samples `range` in each of the [`draws_computed`] draws of
/// `k`, handed to `sink` with the draw's index, one draw after the other (so that a draw's
/// records are dropped before the next is computed); returns the seeds of the `k` draws.
/// Calibrated once ([`Calibration`]), on the ideal device and the first
/// `adc.calibration_samples` samples of the graph input whatever `range` is: every draw
/// and every range converts with the same steps, and every draw's drift gains are
/// computed on the same inputs.
pub fn draw_records(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    (range, k): (std::ops::Range<usize>, u32),
    progress: &(dyn Fn(u64) + Sync),
    mut sink: impl FnMut(usize, Vec<SampleRecord>) -> Result<()>,
) -> Result<Vec<u64>> {
    if k == 0 {
        bail!("draws: must be at least 1");
    }
    let seeds: Vec<u64> = (0..k)
        .map(|d| crate::draws::seed(cfg.device.seed, d))
        .collect();
    let runs = draws_computed(cfg, modes, k) as usize;
    let cal = calibration(net, cfg, modes, crossbar, progress)?;
    let batch = accuracy::default_batch(net, range.len());
    for (d, &seed) in seeds[..runs].iter().enumerate() {
        let records = seeded_records(
            net,
            cfg,
            modes,
            crossbar,
            (range.clone(), batch),
            (seed, &cal),
            progress,
        )?;
        sink(d, records)?;
    }
    Ok(seeds)
}

/// The per-sample records ([`accuracy::evaluate_samples`], `batch` samples at a time) of
/// the samples of `range` in one device draw: `device.seed` replaced by `seed`, the
/// calibrated ADC steps of `cal`, and the drift-compensation gains of that draw (on the
/// calibration inputs of `cal`) when `device.drift_compensation` is on. [`draw_records`] runs it per draw; `sresim
/// search` gives every sample a draw of its own.
pub fn seeded_records(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    (range, batch): (std::ops::Range<usize>, usize),
    (seed, cal): (u64, &Calibration),
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<SampleRecord>> {
    functional::check_table(&cfg.device, &cfg.hw, modes, &cfg.origin)
        .map_err(anyhow::Error::msg)?;
    let mut func = crate::functional::options(cfg, false);
    func.device.seed = seed;
    func.adc_steps = std::sync::Arc::new(cal.steps.clone());
    if compensates_drift(cfg, modes) {
        func.gains = std::sync::Arc::new(compensation(net, cfg, &func, modes, crossbar, cal));
    }
    let machine = Machine {
        hw: &cfg.hw,
        sim: &cfg.opts,
        func: &func,
    };
    Ok(accuracy::evaluate_samples(
        net, &machine, modes, crossbar, range, batch, progress,
    )?)
}

/// The per-sample records of the samples of `range`, sample i on device draw i of its
/// own (`device.seed` replaced by [`crate::draws::seed`] of `device.seed` and i, with the
/// drift gains of that draw when `device.drift_compensation` is on), the calibrated ADC
/// steps of `cal`: the records [`seeded_records`] gives for `i..i + 1` and draw i's seed,
/// with the work no draw changes (mapping, compression, the float and quantized
/// networks) done once for the range ([`accuracy::evaluate_drawn`]). `sresim search`
/// reads every sample on a chip of its own with it.
pub fn drawn_records(
    net: &Network,
    cfg: &Resolved,
    modes: &[Mode],
    crossbar: &[bool],
    range: std::ops::Range<usize>,
    cal: &Calibration,
) -> Result<Vec<SampleRecord>> {
    functional::check_table(&cfg.device, &cfg.hw, modes, &cfg.origin)
        .map_err(anyhow::Error::msg)?;
    let mut base = crate::functional::options(cfg, false);
    base.adc_steps = std::sync::Arc::new(cal.steps.clone());
    let drift = compensates_drift(cfg, modes);
    let draw = |i: usize| -> Result<functional::FuncOptions> {
        let d = u32::try_from(i).map_err(|_| anyhow!("sample {i}: too many samples"))?;
        let mut func = base.clone();
        func.device.seed = crate::draws::seed(cfg.device.seed, d);
        if drift {
            func.gains = std::sync::Arc::new(compensation(net, cfg, &func, modes, crossbar, cal));
        }
        Ok(func)
    };
    let batch = accuracy::default_batch(net, range.len());
    accuracy::evaluate_drawn(
        net,
        (&cfg.hw, &cfg.opts),
        modes,
        crossbar,
        (range, batch),
        &draw,
    )
}

/// How many draws [`evaluate_draws`] computes (for a progress bar's total).
pub fn draws_computed(cfg: &Resolved, modes: &[Mode], k: u32) -> u32 {
    if crate::draws::random(&cfg.device) && !modes.is_empty() {
        k
    } else {
        1
    }
}

/// The network figures of a path, as accuracy.csv and points.csv write them.
pub const FIGURES: [&str; 6] = [
    "top1",
    "top1_float",
    "agreement",
    "top1_quantized",
    "agreement_quantized",
    "output_rel_rmse",
];

/// The [`FIGURES`] of path `p`: top-1 against the labels (None without labels), of the
/// float network, agreement with the float network, the quantized network's top-1,
/// agreement with it, and the relative error of the graph output.
pub fn figures(net: &NetInfo, ev: &Evaluation, p: &PathResult) -> [Option<f64>; 6] {
    let top = |preds: &[usize]| {
        net.labels
            .as_ref()
            .map(|l| Evaluation::top1(preds, &l[..preds.len()]))
    };
    [
        top(&p.predictions),
        top(&ev.float_predictions),
        Some(Evaluation::agreement(&p.predictions, &ev.float_predictions)),
        top(&ev.quantized.predictions),
        Some(Evaluation::agreement(
            &p.predictions,
            &ev.quantized.predictions,
        )),
        ev.output_rel_rmse(p),
    ]
}

/// A figure as a CSV cell: shortest round-trip decimal, empty when undefined.
pub fn cell(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs that are each finite but whose squares sum past the largest double (a
    /// bundle of float32-range weights in every layer) are the network's doing: the
    /// message names the network and the sum, never the config the figure was made under
    /// (it used to read `default config: ...: output_rel_rmse of quantized would be NaN`).
    #[test]
    fn an_overflowing_sum_of_squares_names_the_network_not_the_config() {
        let net = NetInfo {
            name: "lenet5-mnist".into(),
            layers: vec![],
            labels: None,
        };
        let path = |mode, sq| accuracy::PathResult {
            mode,
            predictions: vec![0, 1],
            output_sq_err: sq,
            layers: vec![],
        };
        let ev = |float_sq, q_sq, m_sq| Evaluation {
            samples: 2,
            float_predictions: vec![0, 1],
            float_sq,
            quantized: path(None, q_sq),
            modes: vec![path(Some(Mode::Dense), m_sq)],
        };
        assert!(check_figures(&net, &ev(4.0, 1.0, 1.0), "default config").is_ok());
        let e = check_figures(
            &net,
            &ev(f64::INFINITY, f64::INFINITY, 1.0),
            "default config",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "lenet5-mnist: the float network's sum of squared outputs over 2 samples is beyond the float64 range: the graph outputs are too large for output_rel_rmse (scale the bundle's weights or inputs down)"
        );
        let e = check_figures(&net, &ev(4.0, 1.0, f64::INFINITY), "default config")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "lenet5-mnist: the dense path's sum of squared output errors over 2 samples"
            ),
            "{e}"
        );
    }
}
