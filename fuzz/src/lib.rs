//! The entry points that the fuzz targets drive, one per parser of user data. They are
//! plain functions, so the committed corpus (tests/corpus/<target>/) replays through the
//! very same code in `cargo test` (tests/sresim/fuzz_corpus.rs includes this file) without the
//! fuzzer. Each returns Ok or the one-line error the binary would print; none may panic.
//!
//! - `manifest`: manifest.json text -> `Manifest::parse`;
//! - `config`: config TOML (then, after a NUL byte, `--set` lines) -> `config::load_str`,
//!   a run of a tiny bundle with the resulting configuration (its limits and the
//!   finiteness of its figures), and the memory model of that bundle at its `[memory]`
//!   table (its size limits and the finiteness of its times);
//! - `npz`: tensors.npz bytes under a fixed manifest -> open and load every layer;
//! - `bundle_manifest`: manifest text over a fixed tensors.npz -> open, load, and run;
//! - `graph`: manifest text with a network graph over a fixed tensors.npz holding a graph
//!   input and labels -> open (shape inference, size limits), the accuracy path's network
//!   read, and the float network run on one sample when the graph is small;
//! - `parquet`: the bytes of a Parquet file -> the table reader of `compare` and `plot`;
//! - `sweep_json`: the bytes of a sweep.json -> `Meta::read` and the listing of its
//!   point ids (what `merge` and `--resume` do first).

use std::io::Cursor;
use std::sync::OnceLock;

use ndarray::{Array, ArrayD, IxDyn};
use ndarray_npy::NpzWriter;
use sim::config::{self, Resolved};
use sim::run::{run, RunSpec};
use workload::bundle::{BundleWorkload, Manifest};
use workload::resolve::OpenOptions;
use workload::Workload;

/// The fixed manifest of the `npz` target: conv 1 -> 2 channels, 3x3 on 4x4 (output
/// 2x2), then fc 8 -> 3 on the flattened conv output.
pub const TINY_MANIFEST: &str = r#"{"name": "tiny", "source": "fuzz", "layers": [
 {"name": "conv1", "kind": "conv", "in_channels": 1, "out_channels": 2, "kernel": [3, 3],
  "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1,
  "input_shape": [1, 4, 4], "weight": "conv1.weight", "input": "conv1.input"},
 {"name": "fc1", "kind": "fc", "in_features": 8, "out_features": 3,
  "weight": "fc1.weight", "input": "fc1.input"}]}"#;

fn seq(shape: &[usize], f: impl Fn(usize) -> f32) -> ArrayD<f32> {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap_or_else(|_| {
        // Unreachable: n elements for an n-element shape.
        ArrayD::zeros(IxDyn(shape))
    })
}

/// The arrays of [`TINY_MANIFEST`] (2 samples).
fn tiny_arrays() -> Vec<(&'static str, ArrayD<f32>)> {
    vec![
        ("conv1.weight", seq(&[2, 1, 3, 3], |i| i as f32 - 8.0)),
        (
            "conv1.input",
            seq(&[2, 1, 4, 4], |i| (i as f32 - 10.0) / 4.0),
        ),
        ("fc1.weight", seq(&[3, 8], |i| ((i * 7) % 5) as f32 - 2.0)),
        ("fc1.input", seq(&[2, 8], |i| (i % 3) as f32)),
    ]
}

/// An npz of `arrays` and, when given, int64 `labels`; empty if it cannot be written.
fn npz_of(arrays: &[(&str, ArrayD<f32>)], labels: Option<&[i64]>) -> Vec<u8> {
    let mut npz = NpzWriter::new_compressed(Cursor::new(Vec::new()));
    for (name, a) in arrays {
        if npz.add_array(*name, a).is_err() {
            return Vec::new();
        }
    }
    if let Some(l) = labels {
        if npz
            .add_array("labels", &ndarray::Array1::from(l.to_vec()))
            .is_err()
        {
            return Vec::new();
        }
    }
    npz.finish().map(Cursor::into_inner).unwrap_or_default()
}

/// tensors.npz of [`TINY_MANIFEST`] (2 samples), built once.
pub fn tiny_npz() -> &'static [u8] {
    static NPZ: OnceLock<Vec<u8>> = OnceLock::new();
    NPZ.get_or_init(|| npz_of(&tiny_arrays(), None))
}

/// The binary's rendering of an error: one line.
fn line(e: anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

fn default_cfg() -> Result<&'static Resolved, String> {
    static CFG: OnceLock<Result<Resolved, String>> = OnceLock::new();
    CFG.get_or_init(|| config::load(None, &[]).map_err(line))
        .as_ref()
        .map_err(Clone::clone)
}

fn options(cfg: &Resolved) -> OpenOptions {
    OpenOptions {
        precision: cfg.precision(),
        max_layer_bytes: cfg.config.limits.max_layer_bytes,
        ..OpenOptions::default()
    }
}

/// Runs every layer of `w` in every mode, unless it is too large to finish quickly (a
/// slow input, not a wrong one: the limits check still runs).
fn run_small(w: &dyn Workload, cfg: &Resolved) -> Result<(), String> {
    let macs: u128 = w
        .layers()
        .iter()
        .map(|l| {
            let [ho, wo] = l.geom.output_hw();
            (ho as u128) * (wo as u128) * l.geom.weight_elements() as u128
        })
        .sum();
    if macs * w.available_samples() as u128 > 1 << 22 {
        return Ok(());
    }
    run(&RunSpec {
        workload: w,
        cfg,
        modes: &crossbar::Mode::ALL,
        engine: engine::EngineKind::Fast,
        samples: w.available_samples(),
        progress: false,
    })
    .map(|_| ())
    .map_err(line)
}

/// manifest.json text.
pub fn manifest(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    Manifest::parse(text).map(|_| ())
}

/// Config TOML; after a NUL byte, one `--set KEY=VALUE` per line. A configuration that
/// loads also runs the tiny bundle.
pub fn config(data: &[u8]) -> Result<(), String> {
    let (text, sets) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
    let sets: Vec<String> = String::from_utf8_lossy(sets)
        .lines()
        .map(str::to_string)
        .collect();
    let cfg = config::load_str(text, "fuzz.toml", None, &sets).map_err(line)?;
    let w = BundleWorkload::from_bytes("tiny", TINY_MANIFEST, tiny_npz(), &options(&cfg))
        .map_err(line)?;
    run_small(&w, &cfg)?;
    memory_small(&w, &cfg)
}

/// The memory model of `w`'s layers at the configuration's `[memory]` table, batch 2:
/// its size limits and the finiteness of its times.
fn memory_small(w: &dyn Workload, cfg: &Resolved) -> Result<(), String> {
    let mc = &cfg.config.memory;
    mc.validate()?;
    let g = memory::bundle::from_layer_specs("tiny", 2, w.layers()).map_err(line)?;
    let model = memory::Model::new(&g, mc, &memory::ComputeSource::Peak)?;
    let at = model.simulate(memory::Capacity::bytes(1 << 10));
    let point = model.point(&at, 900e9);
    memory::report::check_finite(&model, std::slice::from_ref(&point)).map_err(line)
}

/// tensors.npz bytes under [`TINY_MANIFEST`]: open, then load every layer.
pub fn npz(data: &[u8]) -> Result<(), String> {
    let cfg = default_cfg()?;
    let w = BundleWorkload::from_bytes("fuzz", TINY_MANIFEST, data.to_vec(), &options(cfg))
        .map_err(line)?;
    for i in 0..w.layers().len() {
        w.load_layer(i, cfg.precision(), w.available_samples())
            .map_err(line)?;
    }
    Ok(())
}

/// Manifest text over the tensors of [`TINY_MANIFEST`]: open, then run.
pub fn bundle_manifest(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let cfg = default_cfg()?;
    let w = BundleWorkload::from_bytes("fuzz", text, tiny_npz(), &options(cfg)).map_err(line)?;
    run_small(&w, cfg)
}

/// [`TINY_MANIFEST`]'s layers with calibrated input ranges, joined by a graph over a
/// graph input `x` (`[2, 1, 4, 4]`) and `labels`: the seed of the `graph` target.
pub const GRAPH_MANIFEST: &str = r#"{"name": "tiny-net", "source": "fuzz", "layers": [
 {"name": "conv1", "kind": "conv", "in_channels": 1, "out_channels": 2, "kernel": [3, 3],
  "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 1,
  "input_shape": [1, 4, 4], "weight": "conv1.weight", "input": "conv1.input",
  "input_max": 2.5, "input_signed": true},
 {"name": "fc1", "kind": "fc", "in_features": 8, "out_features": 3,
  "weight": "fc1.weight", "input": "fc1.input", "input_max": 2.0, "input_signed": false}],
 "graph": [
  {"op": "layer", "layer": "conv1", "inputs": ["x"], "output": "c1"},
  {"op": "Relu", "inputs": ["c1"], "output": "r1"},
  {"op": "Flatten", "inputs": ["r1"], "output": "f", "axis": 1},
  {"op": "layer", "layer": "fc1", "inputs": ["f"], "output": "y"}],
 "graph_input": "x", "graph_output": "y", "labels": "labels"}"#;

/// tensors.npz of [`GRAPH_MANIFEST`]: the tiny arrays, a graph input of 2 samples and
/// their labels.
pub fn graph_npz() -> &'static [u8] {
    static NPZ: OnceLock<Vec<u8>> = OnceLock::new();
    NPZ.get_or_init(|| {
        let mut arrays = tiny_arrays();
        arrays.push(("x", seq(&[2, 1, 4, 4], |i| (i as f32 - 12.0) / 8.0)));
        npz_of(&arrays, Some(&[0, 2]))
    })
}

/// Manifest text with a graph over [`graph_npz`]: open, read the network, and run the
/// float network on one sample when every tensor is small (a slow input, not a wrong
/// one: the size limits still run).
pub fn graph(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| e.to_string())?;
    let cfg = default_cfg()?;
    let w = BundleWorkload::from_bytes("fuzz", text, graph_npz(), &options(cfg)).map_err(line)?;
    if w.manifest().graph.is_none() {
        return Ok(());
    }
    let net = sim::accuracy::load_network(&w, cfg).map_err(line)?;
    let small = net
        .graph
        .tensors
        .iter()
        .all(|t| t.shape.iter().product::<usize>() <= 1 << 12);
    if small {
        accuracy::float_outputs(&net, 1).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Writes `data` as `name` into a fresh directory; returns the directory.
fn scratch(name: &str, data: &[u8]) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join(name), data).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// The bytes of a Parquet file, read as `compare` and `plot` read a table.
pub fn parquet(data: &[u8]) -> Result<(), String> {
    let dir = scratch("t.parquet", data)?;
    sweep::table::Table::read(&dir.path().join("t.parquet"))
        .map(|_| ())
        .map_err(line)
}

/// The bytes of a sweep.json: its description read and its point ids listed.
pub fn sweep_json(data: &[u8]) -> Result<(), String> {
    let dir = scratch("sweep.json", data)?;
    let meta = sweep::store::Meta::read(dir.path()).map_err(line)?;
    let _ = meta.ids();
    Ok(())
}
