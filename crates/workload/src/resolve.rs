//! From a `--workload` argument to a [`Workload`]: bundle directories, shape files
//! ([`crate::shapes`]), zoo names and the bundles and shape files of the workloads/
//! folders; the one list of networks ([`catalog`]) that `run` resolves and `sresim
//! workloads` prints; and the statistics that listing shows.

use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::bundle::BundleWorkload;
use crate::quant::Precision;
use crate::source::{chunk_samples, Workload};
use crate::synth::ZooWorkload;
use crate::zoo;

pub use crate::options::OpenOptions;

/// Folders searched for named bundles: ./workloads, then the repository's workloads/
/// (once, when ./workloads is that folder).
pub fn bundle_roots() -> Vec<PathBuf> {
    let local = PathBuf::from("workloads");
    let repo = repo_workloads();
    if std::fs::canonicalize(&local).is_ok_and(|l| l == repo) {
        return vec![local];
    }
    vec![local, repo]
}

/// The repository's workloads/ folder, canonical when it exists (for readable listings).
fn repo_workloads() -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../workloads"));
    std::fs::canonicalize(&p).unwrap_or(p)
}

/// Opens `name_or_path`: an existing directory (or its manifest.json) is a bundle; a path
/// ending in `.toml` is a shape file; else a zoo name; else the name of a bundle or shape
/// file under one of [`bundle_roots`]. A network of the zoo that cannot run is refused
/// with the reason.
pub fn resolve(name_or_path: &str, opts: &OpenOptions) -> anyhow::Result<Box<dyn Workload>> {
    let w = open_any(name_or_path, opts)?;
    // The crossbar layers' multiply-accumulates a sample, summed with checked arithmetic
    // (each layer's were checked by its geometry; the off-crossbar ops' by the opener).
    let mut total = 0u64;
    for (i, l) in w.layers().iter().enumerate() {
        total = total
            .checked_add(l.geom.macs_per_sample() as u64)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: layers[{i}] ({}): the crossbar layers' multiply-accumulates a sample, summed up to this one, overflow 64 bits",
                    crate::text::clip(name_or_path),
                    crate::text::clip(&l.name)
                )
            })?;
    }
    Ok(w)
}

fn open_any(name_or_path: &str, opts: &OpenOptions) -> anyhow::Result<Box<dyn Workload>> {
    opts.synth.validate()?;
    if opts.samples == 0 {
        bail!("--samples: must be at least 1");
    }
    if let Some(dir) = bundle_dir(name_or_path) {
        return Ok(Box::new(BundleWorkload::open(&dir, opts)?));
    }
    if let Some(file) = shape_file(name_or_path) {
        return Ok(Box::new(crate::shapes::open(&file, opts)?));
    }
    if zoo::layers(name_or_path).is_some() {
        let mut w = ZooWorkload::new(name_or_path, opts.synth)?.with_samples(opts.samples);
        if let Some(note) = hidden_by_builtin(name_or_path) {
            w = w.with_note(note);
        }
        return Ok(Box::new(w));
    }
    if let Some(why) = zoo::not_replayed(name_or_path) {
        bail!("--workload: {name_or_path}: cannot run: {why}");
    }
    let entries = catalog();
    let names = |f: fn(&Origin) -> bool| {
        let n: Vec<&str> = entries
            .iter()
            .filter(|e| f(&e.origin))
            .map(|e| e.name.as_str())
            .collect();
        if n.is_empty() {
            "none".to_string()
        } else {
            n.join(", ")
        }
    };
    let hint = crate::text::did_you_mean(name_or_path, entries.iter().map(|e| e.name.as_str()));
    bail!(
        "--workload: '{name_or_path}' is neither a bundle directory, a shape file (.toml) nor a known workload \
         (built-in: {}; bundles: {}; shape files: {}){hint}",
        names(|o| *o == Origin::BuiltIn),
        names(|o| matches!(o, Origin::Bundle(_))),
        names(|o| matches!(o, Origin::Shapes(_)))
    )
}

/// A built-in network's name is the built-in network: a bundle folder or a shape file of
/// the same name under [`bundle_roots`] is opened by its path. The line that says so,
/// when there is one (`run` prints it as a `note:`).
pub fn hidden_by_builtin(name: &str) -> Option<String> {
    let mut hidden: Vec<PathBuf> = Vec::new();
    for root in bundle_roots() {
        let dir = root.join(name);
        if dir.is_dir() && exists(&dir.join("manifest.json")) {
            hidden.push(dir);
        }
        let file = root.join(format!("{name}.{}", crate::shapes::EXTENSION));
        if exists(&file) {
            hidden.push(file);
        }
    }
    // ./workloads/x.toml, as a path to type (a relative root is the current folder's)
    let shown: Vec<String> = hidden
        .iter()
        .map(|p| {
            if p.is_relative() {
                Path::new(".").join(p).display().to_string()
            } else {
                p.display().to_string()
            }
        })
        .collect();
    let first = shown.first()?;
    Some(format!(
        "--workload {name}: the built-in network {name}; {} of the same name {} not opened (name it by its path to open it: --workload {})",
        shown.join(" and "),
        if hidden.len() == 1 { "is" } else { "are" },
        first
    ))
}

/// Where a network of [`catalog`] comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// The zoo, with synthetic weights and inputs.
    BuiltIn,
    /// A bundle directory: real weights and inputs.
    Bundle(PathBuf),
    /// A shape file: synthetic weights and inputs.
    Shapes(PathBuf),
    /// A network of the zoo that `run` cannot replay, and why.
    NotReplayed(&'static str),
}

/// A network `--workload` can name.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub origin: Origin,
}

impl Entry {
    /// Whether `run` accepts it.
    pub fn runnable(&self) -> bool {
        !matches!(self.origin, Origin::NotReplayed(_))
    }
}

/// Every network a name opens: the zoo (in its order, those `run` cannot replay with
/// their reason), then the bundles and the shape files under [`bundle_roots`] (each
/// sorted by name). A bundle or shape file named as a built-in network is hidden by it.
pub fn catalog() -> Vec<Entry> {
    let mut out: Vec<Entry> = network::zoo::all_names()
        .map(|n| Entry {
            name: n.to_string(),
            origin: zoo::not_replayed(n).map_or(Origin::BuiltIn, Origin::NotReplayed),
        })
        .collect();
    let taken = |out: &[Entry], name: &str| out.iter().any(|e| e.name == name);
    let found = list_found();
    for (name, dir) in bundles_of(&found) {
        if !taken(&out, &name) {
            out.push(Entry {
                name,
                origin: Origin::Bundle(dir),
            });
        }
    }
    for (name, file) in shape_files_of(&found) {
        if !taken(&out, &name) {
            out.push(Entry {
                name,
                origin: Origin::Shapes(file),
            });
        }
    }
    out
}

/// What a workloads folder holds under a name.
#[derive(Debug, Clone, PartialEq)]
enum Found {
    /// `NAME/`: a bundle folder.
    Bundle(PathBuf),
    /// `NAME.toml`: a shape file.
    Shapes(PathBuf),
}

/// Whether `path` is there in any form (a FIFO, a device, a directory, a link that leads
/// nowhere): what a name finds is then opened and, when it cannot be read, refused.
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// What the plain name `name` finds under [`bundle_roots`], the first folder holding it
/// winning (./workloads before the repository's): a folder `NAME/` holding a
/// `manifest.json` in any form, else a shape file `NAME.toml` in any form; a folder
/// `NAME/` without one only when a later folder holds the name (then it is the user's
/// and is refused for its missing manifest; otherwise it is a folder of other files, as
/// workloads/transformers/). What a name finds is read through `files::open`, never
/// passed over for the same name further down when it cannot be read (docs/errors.md,
/// "Files are checked to be files").
fn find(name: &str) -> Option<Found> {
    let plain = !name.is_empty() && !name.contains(['/', '\\']) && name != "." && name != "..";
    if !plain {
        return None;
    }
    let roots = bundle_roots();
    let in_root = |root: &Path| {
        let dir = root.join(name);
        if dir.is_dir() && exists(&dir.join("manifest.json")) {
            return Some(Found::Bundle(dir));
        }
        let file = root.join(format!("{name}.{}", crate::shapes::EXTENSION));
        exists(&file).then_some(Found::Shapes(file))
    };
    for (i, root) in roots.iter().enumerate() {
        if let Some(f) = in_root(root) {
            return Some(f);
        }
        // An entry of the name in any form (a folder without a manifest, a dangling link,
        // a FIFO, a file) is the user's, never passed over for a later folder's bundle:
        // opening it says why it cannot be read.
        let dir = root.join(name);
        if std::fs::symlink_metadata(&dir).is_ok()
            && roots[i + 1..].iter().any(|r| in_root(r).is_some())
        {
            return Some(Found::Bundle(dir));
        }
    }
    None
}

/// Every name [`find`] finds under [`bundle_roots`] (a folder's name, a shape file's
/// stem), with what it finds, sorted by name.
fn list_found() -> Vec<(String, Found)> {
    let mut names: Vec<String> = Vec::new();
    for root in bundle_roots() {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for p in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            // A shape file by its stem; any other entry (a folder, or a link, FIFO or file
            // standing where a folder of a bundle's name would) by its name: `find` keeps
            // those it finds.
            let name = match !p.is_dir() && crate::shapes::is_shape_path(&p) {
                true => p.file_stem(),
                false => p.file_name(),
            };
            if let Some(n) = name.and_then(|n| n.to_str()) {
                names.push(n.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| find(&n).map(|f| (n, f)))
        .collect()
}

fn bundles_of(found: &[(String, Found)]) -> Vec<(String, PathBuf)> {
    found
        .iter()
        .filter_map(|(n, f)| match f {
            Found::Bundle(d) => Some((n.clone(), d.clone())),
            Found::Shapes(_) => None,
        })
        .collect()
}

fn shape_files_of(found: &[(String, Found)]) -> Vec<(String, PathBuf)> {
    found
        .iter()
        .filter_map(|(n, f)| match f {
            Found::Shapes(p) => Some((n.clone(), p.clone())),
            Found::Bundle(_) => None,
        })
        .collect()
}

/// The shape file [`resolve`] opens for `name_or_path`: a path ending in `.toml` (whether
/// or not it exists: opening it says why it cannot be read), or the name of a
/// `NAME.toml` under [`bundle_roots`] that no built-in network or bundle takes
/// ([`find`]: the first folder holding the name wins, whatever it holds).
pub fn shape_file(name_or_path: &str) -> Option<PathBuf> {
    let path = Path::new(name_or_path);
    if crate::shapes::is_shape_path(path) {
        return Some(path.to_path_buf());
    }
    if network::zoo::all_names().any(|n| n == name_or_path) || bundle_dir(name_or_path).is_some() {
        return None;
    }
    match find(name_or_path) {
        Some(Found::Shapes(f)) => Some(f),
        _ => None,
    }
}

/// The shape files (`NAME.toml`, in any form) under [`bundle_roots`]: (name, file),
/// sorted by name; a name found in ./workloads hides the same name in the repository's
/// folder.
pub fn list_shape_files() -> Vec<(String, PathBuf)> {
    shape_files_of(&list_found())
}

/// ` (did you mean "B"?)` for the bundle under [`bundle_roots`] closest to `name`.
pub fn suggest_bundle(name: &str) -> String {
    let bundles: Vec<String> = list_bundles().into_iter().map(|(n, _)| n).collect();
    crate::text::did_you_mean(name, bundles.iter().map(String::as_str))
}

/// The directory of the bundle [`resolve`] opens for `name_or_path`: an existing directory,
/// the folder of a manifest.json, or (unless it names a built-in network) a bundle of
/// that name under [`bundle_roots`]. None for a built-in network or an unknown name.
pub fn bundle_dir(name_or_path: &str) -> Option<PathBuf> {
    let path = Path::new(name_or_path);
    if path.is_dir() {
        return Some(path.to_path_buf());
    }
    if path.is_file() && path.file_name().is_some_and(|f| f == "manifest.json") {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        return Some(dir.unwrap_or(Path::new(".")).to_path_buf());
    }
    if zoo::layers(name_or_path).is_some() {
        return None;
    }
    match find(name_or_path) {
        Some(Found::Bundle(d)) => Some(d),
        _ => None,
    }
}

/// The bundles under [`bundle_roots`] ([`find`]'s folders, readable or not): (folder
/// name, directory), sorted by name; a name found in ./workloads hides the same name in
/// the repository's folder.
pub fn list_bundles() -> Vec<(String, PathBuf)> {
    bundles_of(&list_found())
}

/// What `sresim workloads` prints about a workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadStats {
    pub layers: usize,
    /// Weight elements over all layers.
    pub weights: u64,
    /// Input elements (unpadded, all held samples) over all layers.
    pub inputs: u64,
    /// Zero quantized weights / weights.
    pub weight_zero_fraction: f64,
    /// Zero quantized input elements / input elements.
    pub act_zero_fraction: f64,
}

/// Zero fractions over the quantized tensors of every layer, element-weighted, loading
/// one layer's weights at a time and streaming its inputs (all held samples) a chunk at
/// a time, so that memory does not grow with the samples.
pub fn summary(w: &dyn Workload, precision: Precision) -> anyhow::Result<WorkloadStats> {
    let (mut weights, mut wz, mut inputs, mut iz) = (0u64, 0u64, 0u64, 0u64);
    for i in 0..w.layers().len() {
        let l = w.load_weights(i, precision)?;
        weights += l.weights.len() as u64;
        wz += l.weights.iter().filter(|&&q| q == 0).count() as u64;
        drop(l);
        let held = w.available_samples();
        let chunk = chunk_samples(&w.layers()[i].geom, held as u64) as usize;
        w.stream_inputs(i, precision, held, chunk, &mut |c| {
            inputs += c.len() as u64;
            iz += c.iter().filter(|&&q| q == 0).count() as u64;
            Ok(())
        })?;
    }
    let frac = |z: u64, n: u64| if n == 0 { 0.0 } else { z as f64 / n as f64 };
    Ok(WorkloadStats {
        layers: w.layers().len(),
        weights,
        inputs,
        weight_zero_fraction: frac(wz, weights),
        act_zero_fraction: frac(iz, inputs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{Structure, SynthParams};

    fn err(name: &str, opts: &OpenOptions) -> String {
        match resolve(name, opts) {
            Ok(w) => panic!("{name} resolved to {}", w.name()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn zoo_names_resolve_and_unknown_names_list_them() {
        let w = resolve(
            "lenet5",
            &OpenOptions {
                samples: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            (w.name(), w.layers().len(), w.available_samples()),
            ("lenet5", 4, 3)
        );
        let e = err("lenet6", &OpenOptions::default());
        assert!(
            e.starts_with("--workload: 'lenet6'") && e.contains("mobilenetv2"),
            "{e}"
        );
        let e = err("no/such/dir", &OpenOptions::default());
        assert!(e.contains("built-in: lenet5"), "{e}");
        let bad = OpenOptions {
            synth: SynthParams {
                weight_sparsity: 2.0,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(err("lenet5", &bad).starts_with("--weight-sparsity"));
    }

    #[test]
    fn summary_measures_the_generated_sparsity() {
        // lenet5 weights: 430,500, so the measured fraction is within 0.005 of 0.6 (sigma 0.0008).
        let synth = SynthParams {
            weight_sparsity: 0.6,
            act_sparsity: 0.4,
            ..Default::default()
        };
        let w = ZooWorkload::new("lenet5", synth).unwrap().with_samples(4);
        let s = summary(
            &w,
            Precision {
                weight_bits: 8,
                input_bits: 8,
            },
        )
        .unwrap();
        assert_eq!((s.layers, s.weights), (4, 430_500));
        // inputs: 4 samples x (784 + 2880 + 800 + 500) = 19,856.
        assert_eq!(s.inputs, 19_856);
        assert!((s.weight_zero_fraction - 0.6).abs() < 0.005);
        // Layer 0 (784 x 4 of the inputs) is a dense image; the rest are 40% zeros:
        // expect about 0.4 * (19,856 - 3,136) / 19,856 = 0.337.
        assert!(
            (s.act_zero_fraction - 0.337).abs() < 0.02,
            "{}",
            s.act_zero_fraction
        );
        let ssl = SynthParams {
            structure: Structure::Ssl,
            ..synth
        };
        let w = ZooWorkload::new("lenet5", ssl).unwrap();
        let s = summary(&w, Precision::default()).unwrap();
        assert!(
            (s.weight_zero_fraction - 0.6).abs() < 0.01,
            "{}",
            s.weight_zero_fraction
        );
    }

    #[test]
    fn directories_and_manifest_paths_open_bundles() {
        let dir = tempfile::tempdir().unwrap();
        let m = serde_json::json!({"name": "one-fc", "layers": [{"name": "fc", "kind": "fc",
            "in_features": 4, "out_features": 2, "weight": "w"}]});
        std::fs::write(dir.path().join("manifest.json"), m.to_string()).unwrap();
        let mut npz = ndarray_npy::NpzWriter::new(
            std::fs::File::create(dir.path().join("tensors.npz")).unwrap(),
        );
        npz.add_array("w", &ndarray::Array2::<f32>::ones((2, 4)))
            .unwrap();
        npz.finish().unwrap();
        let opts = OpenOptions {
            synthetic_inputs: true,
            samples: 2,
            ..Default::default()
        };
        let by_dir = resolve(dir.path().to_str().unwrap(), &opts).unwrap();
        assert_eq!((by_dir.name(), by_dir.available_samples()), ("one-fc", 2));
        let manifest = dir.path().join("manifest.json");
        let by_file = resolve(manifest.to_str().unwrap(), &opts).unwrap();
        assert_eq!(by_file.layers(), by_dir.layers());
        let e = err(dir.path().to_str().unwrap(), &OpenOptions::default());
        assert!(
            e.ends_with("layers[0].input: absent; run with --synthetic-inputs"),
            "{e}"
        );
        let s = summary(by_dir.as_ref(), Precision::default()).unwrap();
        assert_eq!((s.weights, s.weight_zero_fraction), (8, 0.0));
    }

    #[test]
    fn summary_streams_the_same_counts_as_whole_layers() {
        // A summary chunk is 2^20 elements (chunk_samples): 1,337 samples of conv1 (784 each), 364 of
        // conv2 (2,880), 1,310 of ip1 (800), 2,097 of ip2 (500). With 1,500 samples the
        // first three stream in chunks (two passes), ip2 in one.
        let w = ZooWorkload::new("lenet5", SynthParams::default())
            .unwrap()
            .with_samples(1_500);
        let p = Precision {
            weight_bits: 8,
            input_bits: 8,
        };
        let s = summary(&w, p).unwrap();
        let (mut n, mut z) = (0u64, 0u64);
        for i in 0..4 {
            let l = w.load_layer(i, p, 1_500).unwrap();
            n += l.input.len() as u64;
            z += l.input.iter().filter(|&&q| q == 0).count() as u64;
        }
        assert_eq!(s.inputs, n);
        assert_eq!(s.act_zero_fraction, z as f64 / n as f64);
    }
}
