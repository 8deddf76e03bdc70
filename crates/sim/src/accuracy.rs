//! The accuracy path of a bundle (docs/accuracy.md), shared by `sresim accuracy` and
//! sweeps with `accuracy = true`: the bundle's network read into the accuracy crate, the
//! layers that go through the crossbar datapath, and the network figures of each path.

use crate::config::Resolved;
use accuracy::{CrossbarLayer, Evaluation, Machine, Network, PathResult};
use anyhow::{anyhow, bail, Result};
use crossbar::Mode;
use workload::bundle::BundleWorkload;
use workload::{LayerSelector, Workload};

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
            let (shape, b, _) = w.read_f64(&bias_name)?;
            if shape != [l.spec.geom.out_channels] {
                bail!(
                    "{label}: {bias_name}: shape {shape:?} (expected [{}], one per output channel)",
                    l.spec.geom.out_channels
                );
            }
            Some(b)
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
    let (_, input, _) = w.read_f64(&bg.input)?;
    let labels = match &bg.labels {
        Some(name) => Some(w.read_i64(name)?.1),
        None => None,
    };
    Network::new(&m.name, graph, layers, input, labels).map_err(|e| anyhow!("{label}: {e}"))
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
    functional::check_table(&cfg.device, &cfg.hw, modes, &cfg.origin)
        .map_err(anyhow::Error::msg)?;
    let machine = Machine {
        hw: &cfg.hw,
        sim: &cfg.opts,
        func: &crate::functional::options(cfg, false),
    };
    Ok(accuracy::evaluate(
        net, &machine, modes, crossbar, samples, progress,
    )?)
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
pub fn figures(net: &Network, ev: &Evaluation, p: &PathResult) -> [Option<f64>; 6] {
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
