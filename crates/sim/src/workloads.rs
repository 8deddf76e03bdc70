//! Which workload a run uses: the embedded default bundle, a built-in network, a bundled
//! workload or shape file by name, a bundle directory or a shape file; and the `sresim
//! workloads` listing.

use crate::config::Resolved;
use anyhow::{anyhow, Result};
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use workload::bundle::BundleWorkload;
use workload::resolve::OpenOptions;
use workload::{LayerSelector, Selected, Workload};

/// The default workload of `sresim run`.
pub const DEFAULT_WORKLOAD: &str = "lenet5-mnist";
const DEFAULT_MANIFEST: &str = include_str!("../../../workloads/lenet5-mnist/manifest.json");
static DEFAULT_TENSORS: &[u8] = include_bytes!("../../../workloads/lenet5-mnist/tensors.npz");

fn options(synth: &Synth, samples: Option<usize>, cfg: &Resolved) -> Result<OpenOptions> {
    let defaults = OpenOptions::default();
    Ok(OpenOptions {
        precision: cfg.precision(),
        synth: synth_params(synth)?,
        synthetic_inputs: synth.synthetic_inputs,
        // Built-in networks generate as many samples as are asked for.
        samples: samples.unwrap_or(defaults.samples).max(1),
        max_layer_bytes: cfg.config.limits.max_layer_bytes,
    })
}

/// The synthetic-data parameters of built-in networks (and of bundles without inputs), as
/// the `sresim run` flags and a grid's `synth.*` keys give them, unchecked.
#[derive(Debug, Clone, PartialEq)]
pub struct Synth {
    /// Fraction of zero weights.
    pub weight_sparsity: f64,
    /// Weight sparsity structure: unstructured, magnitude, ssl or N:M (e.g. 2:4).
    pub structure: String,
    /// Fraction of zero inputs (layers after the first).
    pub act_sparsity: f64,
    /// Fraction of the query heads of every attention block pruned (shape files'
    /// annotated attention layers).
    pub head_sparsity: f64,
    /// Seed of the generators.
    pub seed: u64,
    /// Generate inputs for bundle layers that have none.
    pub synthetic_inputs: bool,
}

impl Default for Synth {
    /// The values of `sresim run` without flags.
    fn default() -> Synth {
        Synth {
            weight_sparsity: 0.7,
            structure: "unstructured".into(),
            act_sparsity: 0.5,
            head_sparsity: 0.0,
            seed: 1,
            synthetic_inputs: false,
        }
    }
}

/// The synthetic-data flags, checked.
pub fn synth_params(a: &Synth) -> Result<workload::SynthParams> {
    let structure: workload::Structure = a.structure.parse()?;
    let p = workload::SynthParams {
        seed: a.seed,
        weight_sparsity: a.weight_sparsity,
        structure,
        act_sparsity: a.act_sparsity,
        head_sparsity: a.head_sparsity,
    };
    p.validate()?;
    Ok(p)
}

/// Refuses generator flags (`given`, as written: `--weight-sparsity`, `--structure`,
/// `--head-sparsity`, `--act-sparsity`, `--seed`) that would change nothing on the workload `name` (None: the
/// embedded default bundle): a bundle has its own weights, and its own inputs unless
/// `synthetic_inputs` generates those of layers that have none.
pub fn check_synth_flags(
    name: Option<&str>,
    given: &[&'static str],
    synthetic_inputs: bool,
) -> Result<()> {
    let shown = name.unwrap_or(DEFAULT_WORKLOAD);
    let bundle = name.is_none_or(|n| {
        workload::resolve::bundle_dir(n).is_some()
            || (n == DEFAULT_WORKLOAD && workload::zoo::layers(n).is_none())
    });
    if !bundle {
        return Ok(());
    }
    for &flag in given {
        match flag {
            "--weight-sparsity" | "--structure" | "--head-sparsity" => {
                return Err(anyhow!(
                    "{flag}: generates the weights of built-in networks; {shown} is a bundle with its own weights (see `sresim workloads`)"
                ))
            }
            _ if !synthetic_inputs => {
                return Err(anyhow!(
                    "{flag}: applies to generated inputs (of built-in networks, and with --synthetic-inputs of bundle layers without inputs); {shown} is a bundle with its own inputs"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Opens `name` (default: the embedded lenet5-mnist bundle), validating it completely.
/// `samples` is how many samples a built-in network generates (bundles hold their own).
pub fn open(
    name: Option<&str>,
    synth: &Synth,
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

/// The content hash of the bundle in `dir`: a 64-bit FNV-1a over the length and bytes of
/// its manifest.json, then of its tensors.npz (16 hex digits).
pub fn bundle_hash(dir: &Path) -> Result<String> {
    let mut h = Fnv::default();
    let mut buf = vec![0u8; 1 << 16];
    for name in ["manifest.json", "tensors.npz"] {
        let path = dir.join(name);
        let cannot = |e: std::io::Error| anyhow!("{}: cannot read: {e}", path.display());
        let mut f =
            workload::files::open(&path, &path.display().to_string()).map_err(|e| anyhow!(e))?;
        h.feed(&f.metadata().map_err(cannot)?.len().to_le_bytes());
        loop {
            let n = f.read(&mut buf).map_err(cannot)?;
            if n == 0 {
                break;
            }
            h.feed(&buf[..n]);
        }
    }
    Ok(h.hex())
}

/// [`bundle_hash`] of the bundle `name` opens as an accuracy workload (the embedded
/// lenet5-mnist by default, hashed as the same files would be).
pub fn bundle_hash_of(name: Option<&str>) -> Result<String> {
    if let Some(dir) = name.and_then(workload::resolve::bundle_dir) {
        return bundle_hash(&dir);
    }
    let mut h = Fnv::default();
    for bytes in [DEFAULT_MANIFEST.as_bytes(), DEFAULT_TENSORS] {
        h.feed(&(bytes.len() as u64).to_le_bytes());
        h.feed(bytes);
    }
    Ok(h.hex())
}

/// A 64-bit FNV-1a hash fed in pieces.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The text of `sresim workloads`: every network of `workload::resolve::catalog` (what
/// `--workload` opens), in sections by origin.
pub fn listing(cfg: &Resolved) -> Result<String> {
    // Folder and file names are data: each field is escaped on its own (a newline in a
    // folder's name must not make a row of its own), then the rows are joined.
    use bounds::text::printable;
    use workload::resolve::Origin;
    let catalog = workload::resolve::catalog();
    let mut s = String::new();
    let _ = writeln!(s, "Built-in networks (synthetic weights and inputs; see --weight-sparsity, --structure, --act-sparsity, --seed):");
    // The name column fits the longest name and a space (at least 14 wide).
    let names = workload::zoo::names();
    let w = names.iter().map(|n| n.len() + 1).max().unwrap_or(0).max(14);
    let _ = writeln!(s, "  {:<w$}{:>7}{:>16}", "name", "layers", "MACs/sample");
    let row = |s: &mut String, name: &str, layers: &[workload::LayerSpec]| {
        let macs: usize = layers.iter().map(|l| l.geom.macs_per_sample()).sum();
        let _ = writeln!(s, "  {:<w$}{:>7}{:>16}", name, layers.len(), macs);
    };
    for name in names {
        row(
            &mut s,
            name,
            &workload::zoo::layers(name).unwrap_or_default(),
        );
    }
    let opts = OpenOptions {
        precision: cfg.precision(),
        max_layer_bytes: cfg.config.limits.max_layer_bytes,
        ..OpenOptions::default()
    };
    let shapes: Vec<_> = catalog
        .iter()
        .filter_map(|e| match &e.origin {
            Origin::Shapes(f) => Some((e.name.as_str(), f)),
            _ => None,
        })
        .collect();
    if !shapes.is_empty() {
        let _ = writeln!(
            s,
            "\nNetworks by shape (TOML files; synthetic weights and inputs, as built-in networks):"
        );
        let _ = writeln!(s, "  {:<w$}{:>7}{:>16}", "name", "layers", "MACs/sample");
        for (name, file) in shapes {
            let name = &printable(name);
            match workload::shapes::read(file, &opts) {
                Ok(f) => row(&mut s, name, &f.layers),
                Err(e) => {
                    let e = printable(&format!("{e:#}")).into_owned();
                    let _ = writeln!(s, "  {name:<w$} (unreadable: {e})");
                }
            }
        }
    }
    let _ = writeln!(s, "\nBundled workloads (real weights and inputs):");
    let _ = writeln!(
        s,
        "  {:<30}{:>7}{:>9}{:>12}{:>12}",
        "name", "layers", "samples", "w zeros", "act zeros"
    );
    for e in &catalog {
        let Origin::Bundle(path) = &e.origin else {
            continue;
        };
        let name = &printable(&e.name);
        match BundleWorkload::open(path, &opts) {
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
                let e = printable(&format!("{e:#}")).into_owned();
                let _ = writeln!(s, "  {name:<30} (unreadable: {e})");
            }
        }
    }
    let _ = writeln!(s, "\nBuilt-in networks `sresim run` cannot replay:");
    for e in &catalog {
        if let Origin::NotReplayed(why) = e.origin {
            let _ = writeln!(s, "  {}: {why}", e.name);
        }
    }
    let _ = writeln!(s, "\nDefault: {DEFAULT_WORKLOAD} (embedded in the binary).");
    Ok(s)
}
