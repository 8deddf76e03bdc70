//! `sresim check BUNDLE`: a bundle opened with exactly the rules `run` and `accuracy`
//! apply when they open it (every manifest key, array, shape and range; with a `graph`,
//! the network the accuracy path reads), summarized in one line. tools/export_onnx.py
//! calls it on what it wrote before it says "wrote".

use crate::config::Resolved;
use anyhow::{bail, Result};
use workload::bundle::BundleWorkload;
use workload::Workload;

/// What a bundle that passed every check holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub name: String,
    pub layers: usize,
    /// Samples of the layer traces (what `run` replays).
    pub samples: usize,
    /// With a graph: its node count, graph input samples and whether it has labels.
    pub graph: Option<(usize, usize, bool)>,
    /// The bundle's `note:` lines (observations that refuse nothing).
    pub notes: Vec<String>,
}

impl Checked {
    /// The one `ok: ...` line of `sresim check` for the bundle at `label`.
    pub fn line(&self, label: &str) -> String {
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        let graph = match self.graph {
            None => "no graph (run only; accuracy needs a graph)".to_string(),
            Some((nodes, samples, labels)) => format!(
                "graph of {nodes} nodes over {}, {}",
                plural(samples, "sample"),
                if labels { "labelled" } else { "no labels" }
            ),
        };
        format!(
            "ok: {}: {}: {}, {}; {graph}",
            bounds::text::printable(label),
            bounds::text::printable(&self.name),
            plural(self.layers, "layer"),
            plural(self.samples, "sample")
        )
    }
}

/// Opens `name` (a bundle directory or the name of a bundle under workloads/) as `run`
/// and `accuracy` do with `cfg`, and returns what it holds, or the first refusal.
pub fn check(name: &str, cfg: &Resolved) -> Result<Checked> {
    if workload::resolve::bundle_dir(name).is_none() {
        if workload::zoo::layers(name).is_some() {
            bail!("check: {name}: a built-in network, not a bundle (only bundles are checked)");
        }
        if workload::resolve::shape_file(name).is_some() {
            bail!("check: {name}: a network by shape, not a bundle (only bundles are checked; `sresim workloads` reads shape files)");
        }
        bail!(
            "check: {name}: no such bundle directory (see `sresim workloads`){}",
            workload::resolve::suggest_bundle(name)
        );
    }
    let w: BundleWorkload = crate::accuracy::open_bundle(Some(name), cfg, "check:")?;
    let graph = match &w.manifest().graph {
        None => None,
        Some(_) => {
            let net = crate::accuracy::load_network(&w, cfg)?;
            Some((net.graph.nodes.len(), net.samples, net.labels.is_some()))
        }
    };
    Ok(Checked {
        name: w.name().to_string(),
        layers: w.layers().len(),
        samples: w.available_samples(),
        graph,
        notes: w.notes(),
    })
}
