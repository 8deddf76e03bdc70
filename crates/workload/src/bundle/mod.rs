//! Workload bundles (docs/interfaces.md): a directory with manifest.json and tensors.npz,
//! or the same two files embedded in the binary.
//!
//! [`BundleWorkload::open`] validates everything a run will touch (manifest fields, every
//! array's presence, dtype, shape against the geometry, finiteness, integer ranges for the
//! precision, a common sample count), so a run never fails half-way, and records per input
//! array what its quantization needs of the whole tensor ([`inputs`]). `load_weights` then
//! re-reads one layer's weights, and `stream_inputs` its input array front to back, a
//! chunk of samples at a time. docs/workloads.md lists the rules.

mod arrays;
mod budget;
mod chain;
#[cfg(test)]
mod graph_tests;
mod header;
mod inputs;
mod manifest;
mod npy;
#[cfg(test)]
mod stream_tests;
mod tensors;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::HashSet;
use std::io::{BufReader, Cursor};
use std::path::Path;

use anyhow::{anyhow, bail};

pub use budget::{
    array_bytes, bundle_layer_bytes, fmt_bytes, raise_layer_bytes_hint, DEFAULT_MAX_LAYER_BYTES,
    MAX_SETTABLE_LAYER_BYTES,
};
pub use header::{ArrayHeader, Dtype};
use inputs::{InputStats, Stream, Values};
pub(crate) use manifest::{optional_name, parse_layers, unknown_top_key, LayerKeys};
pub use manifest::{
    Manifest, ManifestLayer, CONV_KEYS, FC_KEYS, GRAPH_KEYS, SHAPE_CONV_KEYS, SHAPE_FC_KEYS,
    TOP_KEYS,
};
use tensors::{fmt_shape, NpzSource};
pub use tensors::{AnyArray, Npz, StoredValues};

use crate::geometry::{LayerKind, LayerSpec};
use crate::layer::LayerWeights;
use crate::options::OpenOptions;
use crate::quant::Precision;
use crate::source::{
    check_load, off_crossbar_ops, FloatLayer, FloatSampleSink, SampleSink, Workload,
};
use crate::synth::{stream_synth_inputs, synth_signed, InputKind, SynthParams};

enum NpzStore {
    /// tensors.npz, held open from [`BundleWorkload::open`] on: every array is read from
    /// this file, never again by its path.
    File(std::fs::File),
    /// tensors.npz could not be opened: told when it is first read, after the manifest's
    /// own checks, as before it was held.
    Unopened(String),
    Bytes(Cow<'static, [u8]>),
}

/// A validated bundle; layers are read lazily, one at a time.
pub struct BundleWorkload {
    manifest: Manifest,
    layers: Vec<LayerSpec>,
    npz: NpzStore,
    /// Labels of the two files in error messages: `<dir>/manifest.json`, `<dir>/tensors.npz`.
    manifest_label: String,
    npz_label: String,
    samples: usize,
    synth: SynthParams,
    /// Per layer, what open recorded of its input array (None: synthetic inputs).
    inputs: Vec<Option<InputStats>>,
    /// With a manifest `graph`: the graph input array's shape `[M, ...]`.
    graph_input_shape: Option<Vec<usize>>,
    /// `limits.max_layer_bytes`: what any array read whole may take.
    max_bytes: u64,
    /// With a graph whose MatMul nodes multiply two activations: those nodes and their
    /// multiply-accumulates a sample (they run off the crossbar).
    off_crossbar: Vec<(String, u64)>,
    /// Opened by [`BundleWorkload::open_headers`]: arrays checked by header and stored
    /// length only, nothing read or scanned (not for running).
    headers_only: bool,
}

impl std::fmt::Debug for BundleWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BundleWorkload")
            .field("manifest", &self.manifest_label)
            .field("name", &self.manifest.name)
            .field("layers", &self.layers.len())
            .field("samples", &self.samples)
            .finish()
    }
}

impl BundleWorkload {
    /// Opens and validates the bundle in `dir` for `opts.precision`.
    pub fn open(dir: &Path, opts: &OpenOptions) -> anyhow::Result<Self> {
        let (manifest_label, text, npz_label, npz) = open_files(dir, || {})?;
        Self::build(manifest_label, npz_label, &text, npz, opts, false)
    }

    /// Opens the bundle in `dir` for its geometry alone (`sresim memory`): the manifest
    /// and every array it names checked as [`BundleWorkload::open`] checks them, by their
    /// headers and by the data length each header declares against the length stored
    /// (the entry's size in the archive), the data itself not read; layers without an
    /// input array are allowed. The result gives the layers, the manifest and the graph,
    /// and is not for running (its inputs were not scanned).
    pub fn open_headers(dir: &Path) -> anyhow::Result<Self> {
        let (manifest_label, text, npz_label, npz) = open_files(dir, || {})?;
        let opts = OpenOptions {
            synthetic_inputs: true,
            max_layer_bytes: u64::MAX,
            ..OpenOptions::default()
        };
        Self::build(manifest_label, npz_label, &text, npz, &opts, true)
    }

    /// A bundle held in memory (e.g. `include_bytes!`); `label` stands for the directory
    /// in error messages.
    pub fn from_bytes(
        label: &str,
        manifest_json: &str,
        npz_bytes: impl Into<Cow<'static, [u8]>>,
        opts: &OpenOptions,
    ) -> anyhow::Result<Self> {
        Self::build(
            format!("{label}/manifest.json"),
            format!("{label}/tensors.npz"),
            manifest_json,
            NpzStore::Bytes(npz_bytes.into()),
            opts,
            false,
        )
    }

    /// The parsed manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    fn build(
        manifest_label: String,
        npz_label: String,
        text: &str,
        npz: NpzStore,
        opts: &OpenOptions,
        headers_only: bool,
    ) -> anyhow::Result<Self> {
        let manifest = Manifest::parse(text).map_err(|e| anyhow!("{manifest_label}: {e}"))?;
        for (i, l) in manifest.layers.iter().enumerate() {
            if l.input.is_none() && !opts.synthetic_inputs {
                bail!("{manifest_label}: layers[{i}].input: absent; run with --synthetic-inputs");
            }
        }
        opts.precision.validate().map_err(anyhow::Error::msg)?;
        opts.synth.validate()?;
        let mut w = BundleWorkload {
            layers: manifest.layers.iter().map(|l| l.spec.clone()).collect(),
            manifest,
            npz,
            manifest_label,
            npz_label,
            samples: opts.samples,
            synth: opts.synth,
            inputs: Vec::new(),
            graph_input_shape: None,
            max_bytes: opts.max_layer_bytes,
            off_crossbar: Vec::new(),
            headers_only,
        };
        (w.samples, w.inputs) = w.validate_arrays(opts)?;
        w.read_constant_shapes()?;
        w.graph_input_shape = w.validate_graph()?;
        if let Some(g) = w.graph(1)? {
            w.off_crossbar = off_crossbar_ops(&g);
            if let Err(node) = crate::source::off_crossbar_total(&w.off_crossbar) {
                bail!(
                    "{}: graph ({}): the multiply-accumulates a sample of the activation-by-activation MatMul ops, summed up to this one, overflow 64 bits",
                    w.manifest_label,
                    crate::text::clip(node)
                );
            }
        }
        Ok(w)
    }

    /// The shapes of the arrays the graph's `Constant` nodes name (float arrays of
    /// tensors.npz), for the graph's shape inference; their values are read by the
    /// accuracy path.
    fn read_constant_shapes(&mut self) -> anyhow::Result<()> {
        let Some(bg) = &self.manifest.graph else {
            return Ok(());
        };
        let wanted: Vec<String> = bg.constant_arrays().iter().map(|a| a.to_string()).collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let mut npz = self.reader()?;
        let names = npz.names();
        let mut shapes = std::collections::BTreeMap::new();
        for name in wanted {
            if !names.contains(&name) {
                bail!(
                    "{}: {name}: no such array (named by a Constant node of the graph in manifest.json)",
                    self.npz_label
                );
            }
            let h = self.read_header(&mut npz, &name)?;
            if !matches!(h.dtype, Dtype::F32 | Dtype::F64) {
                bail!(
                    "{}: {name}: {} (a Constant node's array must be float32 or float64)",
                    self.npz_label,
                    h.dtype.name()
                );
            }
            shapes.insert(name, h.shape);
        }
        if let Some(bg) = self.manifest.graph.as_mut() {
            bg.constants = shapes;
        }
        Ok(())
    }

    /// With a manifest `graph`: checks the graph input and label arrays (their own sample
    /// count M, independent of the layer traces' N) and the graph itself (names, shapes,
    /// layer geometry); returns the graph input's shape.
    fn validate_graph(&self) -> anyhow::Result<Option<Vec<usize>>> {
        let Some(bg) = &self.manifest.graph else {
            return Ok(None);
        };
        let mut npz = self.reader()?;
        let names = npz.names();
        let array = |npz: &mut Npz<NpzSource<'_>>, name: &str, key: &str| {
            if !names.contains(name) {
                bail!(
                    "{}: {name}: no such array (named by {key} of manifest.json)",
                    self.npz_label
                );
            }
            self.read_header(npz, name)
        };
        let h = array(&mut npz, &bg.input, "graph_input")?;
        if h.shape.len() < 2 || h.shape.contains(&0) {
            bail!(
                "{}: {}: shape {} (expected [M, ...], M samples, every dimension positive)",
                self.npz_label,
                bg.input,
                fmt_shape(&h.shape)
            );
        }
        // The accuracy path holds the input as read and as float64 (16 bytes an element),
        // and each tensor of one sample as float64.
        bounds::size::elements(&h.shape, u64::MAX)
            .and_then(|n| bounds::size::bytes(n, 16, self.max_bytes))
            .map_err(|e| {
                anyhow!(
                    "{}: {}: shape {}: {e} (limits.max_layer_bytes)",
                    self.npz_label,
                    bg.input,
                    fmt_shape(&h.shape)
                )
            })?;
        if let Some(labels) = &bg.labels {
            let l = array(&mut npz, labels, "labels")?;
            let int = !matches!(l.dtype, Dtype::F32 | Dtype::F64);
            if !int || l.shape != [h.shape[0]] {
                bail!(
                    "{}: {labels}: {} {} (expected integers [{}], one per sample of {})",
                    self.npz_label,
                    l.dtype.name(),
                    fmt_shape(&l.shape),
                    h.shape[0],
                    bg.input
                );
            }
        }
        let g = bg
            .build(&self.manifest.name, 1, &h.shape[1..], &self.layers)
            .map_err(|e| anyhow!("{}: {e}", self.manifest_label))?;
        for t in &g.tensors {
            let n = t.shape.iter().product::<usize>(); // checked by build
            bounds::size::bytes(n, 8, self.max_bytes).map_err(|e| {
                anyhow!(
                    "{}: graph: tensor {} {}: {e} (limits.max_layer_bytes)",
                    self.manifest_label,
                    crate::text::clip(&t.name),
                    fmt_shape(&t.shape)
                )
            })?;
        }
        Ok(Some(h.shape))
    }

    /// The bundle's network graph for `batch` samples, or None for a bundle without
    /// `graph` (a set of crossbar layers with no implied connections).
    pub fn graph(&self, batch: usize) -> anyhow::Result<Option<network::Graph>> {
        match (&self.manifest.graph, &self.graph_input_shape) {
            (Some(bg), Some(shape)) => bg
                .build(&self.manifest.name, batch, &shape[1..], &self.layers)
                .map(Some)
                .map_err(|e| anyhow!("{}: {e}", self.manifest_label)),
            _ => Ok(None),
        }
    }

    /// Samples M of the graph input array (its own count, independent of the layer
    /// traces' N); None without `graph`.
    pub fn graph_samples(&self) -> Option<usize> {
        self.graph_input_shape.as_ref().map(|s| s[0])
    }

    fn reader(&self) -> anyhow::Result<Npz<NpzSource<'_>>> {
        let src = match &self.npz {
            NpzStore::File(f) => NpzSource::File(BufReader::new(tensors::FileAt::new(f))),
            NpzStore::Unopened(e) => bail!("{e}"),
            NpzStore::Bytes(b) => NpzSource::Bytes(Cursor::new(&b[..])),
        };
        Npz::with_limit(src, self.max_bytes).map_err(|e| anyhow!("{}: {e}", self.npz_label))
    }

    /// Reads every array once; returns the common sample count and each layer's input
    /// statistics.
    fn validate_arrays(
        &self,
        opts: &OpenOptions,
    ) -> anyhow::Result<(usize, Vec<Option<InputStats>>)> {
        let mut npz = self.reader()?;
        let names = npz.names();
        let mut first_n: Option<(usize, &str)> = None;
        let mut stats: Vec<Option<InputStats>> = Vec::with_capacity(self.layers.len());
        for (i, l) in self.manifest.layers.iter().enumerate() {
            let wh = self.header(&mut npz, &names, &l.weight, i, "weight")?;
            self.check_weight_shape(l, &wh.shape)?;
            let ih = match &l.input {
                Some(input) => {
                    let h = self.header(&mut npz, &names, input, i, "input")?;
                    let n = self.check_input_shape(l, input, &h.shape)?;
                    match first_n {
                        Some((n0, name0)) if n0 != n => bail!(
                            "{}: {input}: {n} samples, but {name0} has {n0} (all layers need the same N)",
                            self.npz_label
                        ),
                        None => first_n = Some((n, input)),
                        _ => {}
                    }
                    Some((input, h))
                }
                None => None,
            };
            let samples = ih
                .as_ref()
                .map(|(_, h)| h.shape[0])
                .or(self.manifest.samples)
                .unwrap_or(opts.samples);
            if self.headers_only {
                stats.push(None);
                continue;
            }
            let need = bundle_layer_bytes(&l.spec.geom, ih.as_ref().map(|(_, h)| h));
            if need > opts.max_layer_bytes as u128 {
                bail!(
                    "{}: {}: layer {} needs about {} to load {samples} sample(s), more than limits.max_layer_bytes = {} ({})",
                    self.npz_label,
                    ih.as_ref().map_or(l.weight.as_str(), |(n, _)| n.as_str()),
                    l.spec.name,
                    fmt_bytes(need),
                    fmt_bytes(opts.max_layer_bytes as u128),
                    raise_layer_bytes_hint(need)
                );
            }
            let a = self.read_array(&mut npz, &l.weight, &wh)?;
            a.weights(opts.precision.weight_bits)
                .map_err(|e| anyhow!("{}: {}: {e}", self.npz_label, l.weight))?;
            drop(a);
            let st = match ih {
                None => None,
                // Two layers may name the same array: it is scanned once.
                Some((input, h)) => match self.first_user(i, input) {
                    Some(j) => stats[j].clone(),
                    None => Some(self.scan(&mut npz, input, &h, opts.precision)?),
                },
            };
            stats.push(st);
        }
        let samples = match (first_n, self.manifest.samples) {
            (Some((n, name)), Some(m)) if n != m => bail!(
                "{}: samples: {m}, but {name} in tensors.npz has {n} samples",
                self.manifest_label
            ),
            (Some((n, _)), _) => n,
            (None, Some(m)) => m,
            (None, None) => opts.samples,
        };
        Ok((samples, stats))
    }

    /// The first layer before `index` whose input is array `name`.
    fn first_user(&self, index: usize, name: &str) -> Option<usize> {
        self.manifest.layers[..index]
            .iter()
            .position(|l| l.input.as_deref() == Some(name))
    }

    /// Reads input array `name` once, checking and recording what quantization needs.
    fn scan<R: std::io::Read + std::io::Seek>(
        &self,
        npz: &mut Npz<R>,
        name: &str,
        header: &ArrayHeader,
        precision: Precision,
    ) -> anyhow::Result<InputStats> {
        let r = npz
            .elements(name, header)
            .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))?;
        inputs::scan(r, header, precision.input_bits)
            .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))
    }

    fn header<R: std::io::Read + std::io::Seek>(
        &self,
        npz: &mut Npz<R>,
        names: &HashSet<String>,
        name: &str,
        layer: usize,
        field: &str,
    ) -> anyhow::Result<ArrayHeader> {
        if !names.contains(name) {
            bail!(
                "{}: {name}: no such array (named by layers[{layer}].{field} of manifest.json)",
                self.npz_label
            );
        }
        self.read_header(npz, name)
    }

    /// The checked header of array `name`; opened for headers alone, with its stored
    /// data length checked against it too ([`Npz::header_and_length`]).
    fn read_header<R: std::io::Read + std::io::Seek>(
        &self,
        npz: &mut Npz<R>,
        name: &str,
    ) -> anyhow::Result<ArrayHeader> {
        match self.headers_only {
            true => npz.header_and_length(name),
            false => npz.header(name),
        }
        .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))
    }

    fn read_array<R: std::io::Read + std::io::Seek>(
        &self,
        npz: &mut Npz<R>,
        name: &str,
        header: &ArrayHeader,
    ) -> anyhow::Result<AnyArray> {
        npz.read(name, header)
            .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))
    }

    /// Reads array `name` again at load time (from the tensors.npz open read), re-checking
    /// its header.
    fn reread(&self, name: &str) -> anyhow::Result<AnyArray> {
        let mut npz = self.reader()?;
        let h = npz
            .header(name)
            .map_err(|e| anyhow!("{}: {name}: {e}", self.npz_label))?;
        self.read_array(&mut npz, name, &h)
    }

    fn check_weight_shape(&self, l: &ManifestLayer, shape: &[usize]) -> anyhow::Result<()> {
        let g = &l.spec.geom;
        let want = match l.spec.kind {
            LayerKind::Conv => vec![
                g.out_channels,
                g.in_channels / g.groups,
                g.kernel[0],
                g.kernel[1],
            ],
            LayerKind::Fc => vec![g.out_channels, g.in_channels],
        };
        if shape != want.as_slice() {
            bail!(
                "{}: {}: shape {} does not match geometry {}",
                self.npz_label,
                l.weight,
                fmt_shape(shape),
                fmt_shape(&want)
            );
        }
        Ok(())
    }

    /// Checks an input's shape and returns its sample count N.
    fn check_input_shape(
        &self,
        l: &ManifestLayer,
        name: &str,
        shape: &[usize],
    ) -> anyhow::Result<usize> {
        let g = &l.spec.geom;
        let ok = match l.spec.kind {
            LayerKind::Conv => {
                shape.len() == 4 && shape[1..] == [g.in_channels, g.input_hw[0], g.input_hw[1]]
            }
            LayerKind::Fc if g.vectors_per_sample() > 1 || shape.len() == 3 => {
                shape.len() == 3 && shape[1..] == [g.vectors_per_sample(), g.in_channels]
            }
            LayerKind::Fc => {
                (shape.len() == 2 && shape[1] == g.in_channels)
                    || (shape.len() == 4 && shape[1..].iter().product::<usize>() == g.in_channels)
            }
        };
        if !ok {
            let want = match l.spec.kind {
                LayerKind::Conv => {
                    format!("[N,{},{},{}]", g.in_channels, g.input_hw[0], g.input_hw[1])
                }
                LayerKind::Fc if g.vectors_per_sample() > 1 => {
                    format!(
                        "[N,{},{}] (tokens, in_features)",
                        g.vectors_per_sample(),
                        g.in_channels
                    )
                }
                LayerKind::Fc => format!("[N,{0}] (or [N,C,H,W] with C*H*W = {0})", g.in_channels),
            };
            bail!(
                "{}: {name}: shape {} does not match geometry {want}",
                self.npz_label,
                fmt_shape(shape)
            );
        }
        if shape[0] == 0 {
            bail!("{}: {name}: holds 0 samples", self.npz_label);
        }
        Ok(shape[0])
    }
}

impl Workload for BundleWorkload {
    fn name(&self) -> &str {
        &self.manifest.name
    }
    fn notes(&self) -> Vec<String> {
        let label = &self.manifest_label;
        self.manifest
            .notes
            .iter()
            .cloned()
            .chain(off_crossbar_note(&self.off_crossbar, &self.layers))
            .map(|n| format!("{label}: {n}"))
            .collect()
    }
    fn off_crossbar(&self) -> Vec<(String, u64)> {
        self.off_crossbar.clone()
    }
    fn graph(&self) -> anyhow::Result<Option<network::Graph>> {
        BundleWorkload::graph(self, 1)
    }
    fn source(&self) -> &str {
        &self.manifest.source
    }
    fn layers(&self) -> &[LayerSpec] {
        &self.layers
    }
    fn available_samples(&self) -> usize {
        self.samples
    }
    fn load_weights(&self, index: usize, precision: Precision) -> anyhow::Result<LayerWeights> {
        check_load(self, index, precision, 1)?;
        let l = &self.manifest.layers[index];
        let weights = {
            let a = self.reread(&l.weight)?;
            self.check_weight_shape(l, a.shape())?;
            a.weights(precision.weight_bits)
                .map_err(|e| anyhow!("{}: {}: {e}", self.npz_label, l.weight))?
        };
        let signed = match &self.inputs[index] {
            Some(st) => st.signed(),
            None => synth_signed(
                &l.spec.geom,
                index,
                self.samples,
                InputKind::for_layer(index),
                &self.synth,
            )?,
        };
        Ok(LayerWeights {
            spec: l.spec.clone(),
            weights,
            signed,
        })
    }

    fn stream_inputs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        sink: &mut SampleSink<'_>,
    ) -> anyhow::Result<()> {
        self.stream_pairs(index, precision, samples, chunk, false, &mut |q, _| sink(q))
    }

    fn float_layer(
        &self,
        index: usize,
        precision: Precision,
    ) -> anyhow::Result<Option<FloatLayer>> {
        check_load(self, index, precision, 1)?;
        let l = &self.manifest.layers[index];
        let Some(Values::Float(stats)) = self.inputs[index].as_ref().map(|s| s.values) else {
            return Ok(None);
        };
        let a = self.reread(&l.weight)?;
        self.check_weight_shape(l, a.shape())?;
        let Some(weights) = a.floats() else {
            return Ok(None);
        };
        let max = a.float_max();
        Ok(Some(FloatLayer {
            weights,
            weight_step: max / crate::quant::signed_max(precision.weight_bits) as f64,
            input_step: stats.scale(precision.input_bits).step(),
        }))
    }

    fn stream_float_inputs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        sink: &mut FloatSampleSink<'_>,
    ) -> anyhow::Result<()> {
        self.stream_pairs(index, precision, samples, chunk, true, sink)
    }
}

impl BundleWorkload {
    /// [`Workload::stream_float_inputs`]; the float values only when `floats`.
    fn stream_pairs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        floats: bool,
        sink: &mut FloatSampleSink<'_>,
    ) -> anyhow::Result<()> {
        check_load(self, index, precision, samples)?;
        let l = &self.manifest.layers[index];
        let (Some(name), Some(st)) = (&l.input, &self.inputs[index]) else {
            return stream_synth_inputs(
                &l.spec.geom,
                index,
                self.samples,
                samples,
                precision.input_bits,
                InputKind::for_layer(index),
                &self.synth,
                chunk,
                &mut |q| sink(q, &[]),
            );
        };
        let label = format!("{}: {name}", self.npz_label);
        let mut npz = self.reader()?;
        if let Values::Int(range) = st.values {
            if !range.fits(precision.input_bits) {
                // Open checked another precision: find the first offender for this one.
                let e = match self.scan(&mut npz, name, &st.header, precision) {
                    Err(e) => e,
                    Ok(_) => anyhow!("{label}: changed since the bundle was opened"),
                };
                return Err(e);
            }
        }
        let r = npz
            .elements(name, &st.header)
            .map_err(|e| anyhow!("{label}: {e}"))?;
        let s = Stream {
            label: &label,
            per_sample: l.spec.geom.input_elements(),
            samples,
            chunk,
            input_bits: precision.input_bits,
        };
        let tokens = l.spec.geom.vectors_per_sample();
        if l.spec.kind != LayerKind::Fc || tokens == 1 {
            return inputs::stream(r, st, &s, floats, sink);
        }
        // A projection over a sequence stores [N, T, in]; the crossbar reads [N, in, T]
        // (channel-major, as a conv's positions), so each sample is transposed on its way.
        let d = l.spec.geom.in_channels;
        let (mut q, mut f) = (Vec::new(), Vec::new());
        inputs::stream(r, st, &s, floats, &mut |qs, fs| {
            inputs::tokens_to_channels(qs, tokens, d, &mut q);
            inputs::tokens_to_channels(fs, tokens, d, &mut f);
            sink(&q, &f)
        })
    }
}

/// The two files of the bundle in `dir`, of one export: its labels, the manifest's text
/// and tensors.npz held open (or why it cannot be opened). A writer (the exporter's `bundle.commit`, `sresim`'s own)
/// may replace both between the reads: the files are opened one after the other, then
/// the directory is checked to hold no journal and both paths to name the files opened
/// still, in that order. A replacement under way when tensors.npz was opened still has
/// its journal then, or has renamed a file since; either way the pair is read once more,
/// and a second such pair is refused. `between` runs between the two opens (tests).
fn open_files(
    dir: &Path,
    mut between: impl FnMut(),
) -> anyhow::Result<(String, String, String, NpzStore)> {
    let manifest = dir.join("manifest.json");
    let tensors = dir.join("tensors.npz");
    let manifest_label = manifest.display().to_string();
    let npz_label = tensors.display().to_string();
    let here = match dir.as_os_str().is_empty() {
        true => Path::new("."),
        false => dir,
    };
    for _ in 0..2 {
        let (text, manifest_id) = crate::files::read_text_with_id(&manifest, &manifest_label)
            .map_err(anyhow::Error::msg)?;
        between();
        let npz = match crate::files::open(&tensors, &npz_label) {
            Ok(f) => f,
            Err(e) => return Ok((manifest_label, text, npz_label, NpzStore::Unopened(e))),
        };
        let whole = !outdir::interrupted(here)
            && crate::files::id_at(&manifest) == manifest_id
            && crate::files::id_at(&tensors) == crate::files::id_of(&npz);
        if whole {
            return Ok((manifest_label, text, npz_label, NpzStore::File(npz)));
        }
    }
    bail!(
        "{}: its files were replaced while they were opened, twice (a writer is exporting the bundle again): run the command again once it is done",
        dir.display()
    )
}

/// The `note:` of [`crate::source::off_crossbar_ops`], beside the multiply-accumulates of `layers`.
fn off_crossbar_note(ops: &[(String, u64)], layers: &[LayerSpec]) -> Option<String> {
    if ops.is_empty() {
        return None;
    }
    // Both sums were checked to fit when the workload was opened.
    let total = crate::source::off_crossbar_total(ops).unwrap_or(u64::MAX);
    let crossbar = layers
        .iter()
        .map(|l| l.geom.macs_per_sample() as u64)
        .fold(0u64, u64::saturating_add);
    let each: Vec<String> = ops
        .iter()
        .map(|(n, m)| format!("{} {m}", crate::text::clip(n)))
        .collect();
    Some(format!(
        "graph: {} activation-by-activation MatMul ops run off the crossbar (computed in float by `accuracy`; `run` costs them on the digital unit when the graph has attention or a norm, docs/digital.md, not on crossbars): {total} multiply-accumulates a sample, beside {crossbar} on the crossbar layers ({})",
        ops.len(),
        crate::text::clip_to(&each.join(", "), 600)
    ))
}
