//! Which workload a run uses: the embedded default bundle, a built-in network, a bundled
//! workload by name, or a bundle directory; and the `sresim workloads` listing.

use crate::cli::SynthArgs;
use crate::config::Resolved;
use anyhow::{anyhow, Result};
use std::fmt::Write as _;
use workload::bundle::BundleWorkload;
use workload::resolve::OpenOptions;
use workload::{LayerSelector, Selected, Workload};

/// The default workload of `sresim run`.
pub const DEFAULT_WORKLOAD: &str = "lenet5-mnist";
const DEFAULT_MANIFEST: &str = include_str!("../workloads/lenet5-mnist/manifest.json");
static DEFAULT_TENSORS: &[u8] = include_bytes!("../workloads/lenet5-mnist/tensors.npz");

fn options(synth: &SynthArgs, samples: Option<usize>, cfg: &Resolved) -> Result<OpenOptions> {
    let defaults = OpenOptions::default();
    Ok(OpenOptions {
        precision: cfg.precision(),
        synth: crate::commands::synth_params(synth)?,
        synthetic_inputs: synth.synthetic_inputs,
        // Built-in networks generate as many samples as are asked for.
        samples: samples.unwrap_or(defaults.samples).max(1),
        max_layer_bytes: cfg.config.limits.max_layer_bytes,
    })
}

/// Opens `name` (default: the embedded lenet5-mnist bundle), validating it completely.
/// `samples` is how many samples a built-in network generates (bundles hold their own).
pub fn open(
    name: Option<&str>,
    synth: &SynthArgs,
    samples: Option<usize>,
    cfg: &Resolved,
) -> Result<Box<dyn Workload>> {
    let opts = options(synth, samples, cfg)?;
    match name {
        None => Ok(Box::new(embedded_default(&opts)?)),
        Some(n) => workload::resolve::resolve(n, &opts),
    }
}

/// `w` restricted to the layers `patterns` select (`--layers`, a grid's `layers`); None
/// keeps every layer. `what` names the source of the patterns in errors.
pub fn select(
    w: Box<dyn Workload>,
    patterns: Option<&LayerSelector>,
    what: &str,
) -> Result<Box<dyn Workload>> {
    match patterns {
        None => Ok(w),
        Some(sel) => Ok(Box::new(
            Selected::new(w, sel).map_err(|e| anyhow!("{what}: {e}"))?,
        )),
    }
}

/// The embedded copy of workloads/lenet5-mnist, so that `sresim run` works anywhere.
pub fn embedded_default(opts: &OpenOptions) -> Result<BundleWorkload> {
    BundleWorkload::from_bytes(
        "workloads/lenet5-mnist (embedded)",
        DEFAULT_MANIFEST,
        DEFAULT_TENSORS,
        opts,
    )
}

/// The text of `sresim workloads`.
pub fn listing(cfg: &Resolved) -> Result<String> {
    let mut s = String::new();
    let _ = writeln!(s, "Built-in networks (synthetic weights and inputs; see --weight-sparsity, --structure, --act-sparsity, --seed):");
    let _ = writeln!(s, "  {:<14}{:>7}{:>16}", "name", "layers", "MACs/sample");
    for name in workload::zoo::names() {
        let layers = workload::zoo::layers(name).unwrap_or_default();
        let macs: usize = layers.iter().map(|l| l.geom.macs_per_sample()).sum();
        let _ = writeln!(s, "  {:<14}{:>7}{:>16}", name, layers.len(), macs);
    }
    let _ = writeln!(s, "\nBundled workloads (real weights and inputs):");
    let _ = writeln!(
        s,
        "  {:<30}{:>7}{:>9}{:>12}{:>12}",
        "name", "layers", "samples", "w zeros", "act zeros"
    );
    let opts = OpenOptions {
        precision: cfg.precision(),
        ..OpenOptions::default()
    };
    for (name, path) in workload::resolve::list_bundles() {
        match BundleWorkload::open(&path, &opts) {
            Ok(b) => {
                let st = workload::resolve::summary(&b, cfg.precision())?;
                let _ = writeln!(
                    s,
                    "  {:<30}{:>7}{:>9}{:>11.1}%{:>11.1}%",
                    name,
                    st.layers,
                    b.available_samples(),
                    100.0 * st.weight_zero_fraction,
                    100.0 * st.act_zero_fraction
                );
            }
            Err(e) => {
                let _ = writeln!(s, "  {name:<30} (unreadable: {e:#})");
            }
        }
    }
    let _ = writeln!(s, "\nDefault: {DEFAULT_WORKLOAD} (embedded in the binary).");
    Ok(s)
}
