//! Seeded synthetic weights and inputs, and [`ZooWorkload`]: a built-in network filled
//! with them.
//!
//! Every tensor has its own random streams: ChaCha8 seeded with `seed`, stream id
//! `((layer index * 8 + tensor tag) << 28) + chunk`, where large weight tensors are cut
//! into chunks of [`CHUNK`] elements generated in parallel. A layer's data therefore
//! depends only on (seed, layer index, geometry, parameters, precision), never on which
//! other layers were loaded or on the thread count.
//!
//! The files, each using only those listed after it: this one ([`ZooWorkload`]);
//! `weights.rs`, `inputs.rs` and `roles.rs` (the generators of weights, inputs and a
//! transformer's roles and pruned heads); `params.rs` (what the generator is asked for
//! and the seeded streams).

mod inputs;
mod params;
pub mod roles;
mod weights;

use anyhow::{anyhow, bail, Context};

pub use inputs::{stream_synth_inputs, synth_inputs, synth_signed, InputKind};
pub use params::{tensor_rng, Structure, SynthParams, Tensor, CHUNK, MAX_M};
pub use roles::{LayerRole, Role, ZeroLines};
pub use weights::{ssl_plan, synth_weights, synth_weights_zeroing, SslPlan, SynthColumns};

use crate::geometry::LayerSpec;
use crate::layer::LayerWeights;
use crate::quant::Precision;
use crate::source::{check_load, ColumnWeights, SampleSink, Workload};
use crate::zoo;

/// A built-in network (or any list of layers) with synthetic weights and inputs.
#[derive(Debug, Clone)]
pub struct ZooWorkload {
    name: String,
    source: String,
    layers: Vec<LayerSpec>,
    pub params: SynthParams,
    /// Samples the workload holds (`available_samples`); default 1.
    pub samples: usize,
    /// What `notes` says (a bundle or shape file of the same name that it hides).
    notes: Vec<String>,
    /// Per layer: its transformer role, if annotated (shape files).
    roles: Vec<Option<LayerRole>>,
    /// Per layer: the rows and columns of pruned heads (empty without head pruning).
    zero_lines: Vec<ZeroLines>,
    /// The network's products of two activations (a built-in transformer's attention).
    off_crossbar: Vec<(String, u64)>,
    /// Whether this is the built-in network of its name (its graph is the zoo's); false
    /// for shape files and custom layer lists.
    built_in: bool,
}

impl ZooWorkload {
    /// A zoo network by name (see [`zoo::names`]).
    pub fn new(name: &str, params: SynthParams) -> anyhow::Result<Self> {
        let net = zoo::network(name).with_context(|| {
            format!(
                "unknown network '{name}' (built-in: {})",
                zoo::names().join(", ")
            )
        })?;
        let mut w = Self::from_layers(name, net.layers, params)?
            .with_roles(net.roles)?
            .with_off_crossbar(net.off_crossbar);
        w.built_in = true;
        Ok(w)
    }

    /// Any list of layers (tests, custom geometry).
    pub fn from_layers(
        name: &str,
        layers: Vec<LayerSpec>,
        params: SynthParams,
    ) -> anyhow::Result<Self> {
        params.validate()?;
        for (i, l) in layers.iter().enumerate() {
            if let Err(e) = l.geom.validate() {
                bail!("{name}: layers[{i}] ({}): {e}", l.name);
            }
        }
        let n = layers.len();
        Ok(ZooWorkload {
            name: name.to_string(),
            source: params.describe(),
            layers,
            params,
            samples: 1,
            notes: Vec::new(),
            roles: vec![None; n],
            zero_lines: vec![ZeroLines::default(); n],
            off_crossbar: Vec::new(),
            built_in: false,
        })
    }

    /// Annotates the layers with their transformer roles (one entry per layer, checked by
    /// [`roles::blocks`]) and, with `head_sparsity` > 0, prunes the heads of every
    /// attention block. Refuses `head_sparsity` > 0 on a network without attention
    /// blocks, where it would change nothing.
    pub fn with_roles(mut self, roles: Vec<Option<LayerRole>>) -> anyhow::Result<Self> {
        if roles.len() != self.layers.len() {
            bail!(
                "{}: {} roles for {} layers",
                self.name,
                roles.len(),
                self.layers.len()
            );
        }
        let blocks =
            roles::blocks(&self.layers, &roles).map_err(|e| anyhow!("{}: {e}", self.name))?;
        let hs = self.params.head_sparsity;
        if hs > 0.0 && blocks.is_empty() {
            bail!(
                "--head-sparsity: {} has no attention block (fc layers annotated with `role` and `heads` in a shape file, docs/workloads.md)",
                self.name
            );
        }
        let mut lines = vec![ZeroLines::default(); self.layers.len()];
        if hs > 0.0 {
            for b in &blocks {
                let pruned = roles::pruned_heads(b, hs, self.params.seed);
                for &i in &b.layers {
                    lines[i] = roles::zero_lines(&self.layers, &roles, b, &pruned, i);
                }
            }
        }
        self.roles = roles;
        self.zero_lines = lines;
        Ok(self)
    }

    /// Per layer: its transformer role, if annotated.
    pub fn roles(&self) -> &[Option<LayerRole>] {
        &self.roles
    }

    /// The rows and columns of layer `index` that pruned heads zero.
    pub fn zero_lines(&self, index: usize) -> &ZeroLines {
        &self.zero_lines[index]
    }

    /// What enters layer `index`: by its role when annotated (an FFN down-projection
    /// reads post-ReLU activations, every other role a LayerNorm's or the attention's
    /// dense signed output), else by position ([`InputKind::for_layer`]).
    pub fn input_kind(&self, index: usize) -> InputKind {
        match self.roles[index].map(|r| r.role) {
            Some(Role::FfnDown) => InputKind::PostRelu,
            Some(_) => InputKind::Dense,
            None => InputKind::for_layer(index),
        }
    }

    /// Sets the network's products of two activations ([`Workload::off_crossbar`]).
    pub fn with_off_crossbar(mut self, ops: Vec<(String, u64)>) -> Self {
        self.off_crossbar = ops;
        self
    }

    /// Adds a line for [`Workload::notes`].
    pub fn with_note(mut self, note: String) -> Self {
        self.notes.push(note);
        self
    }

    /// Sets how many samples the workload holds.
    pub fn with_samples(mut self, samples: usize) -> Self {
        self.samples = samples;
        self
    }
}

impl Workload for ZooWorkload {
    fn name(&self) -> &str {
        &self.name
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
    fn off_crossbar(&self) -> Vec<(String, u64)> {
        self.off_crossbar.clone()
    }
    fn heads_kept(&self) -> Vec<crate::source::HeadsKept> {
        let hs = self.params.head_sparsity;
        if hs <= 0.0 {
            return Vec::new();
        }
        // The blocks were checked when the roles were set.
        let blocks = roles::blocks(&self.layers, &self.roles).unwrap_or_default();
        blocks
            .into_iter()
            .map(|b| {
                let pruned = roles::pruned_heads(&b, hs, self.params.seed);
                crate::source::HeadsKept {
                    kept: pruned.iter().filter(|&&p| !p).count(),
                    heads: b.heads,
                    layers: b.layers,
                }
            })
            .collect()
    }
    fn graph(&self) -> anyhow::Result<Option<network::Graph>> {
        Ok(self
            .built_in
            .then(|| network::zoo::build(&self.name, 1, network::zoo::ZooOptions::default()))
            .flatten())
    }
    fn source(&self) -> &str {
        &self.source
    }
    fn layers(&self) -> &[LayerSpec] {
        &self.layers
    }
    fn available_samples(&self) -> usize {
        self.samples
    }
    fn load_weights(&self, index: usize, precision: Precision) -> anyhow::Result<LayerWeights> {
        check_load(self, index, precision, 1)?;
        let spec = self.layers[index].clone();
        let weights = synth_weights_zeroing(
            &spec.geom,
            index,
            precision.weight_bits,
            &self.params,
            &self.zero_lines[index],
        );
        let kind = self.input_kind(index);
        let signed = synth_signed(&spec.geom, index, self.samples, kind, &self.params)?;
        Ok(LayerWeights {
            spec,
            weights,
            signed,
        })
    }

    fn loads_columns(&self) -> bool {
        true
    }

    fn weight_columns(
        &self,
        index: usize,
        precision: Precision,
    ) -> anyhow::Result<Option<Box<dyn ColumnWeights + '_>>> {
        check_load(self, index, precision, 1)?;
        let geom = &self.layers[index].geom;
        let signed = synth_signed(
            geom,
            index,
            self.samples,
            self.input_kind(index),
            &self.params,
        )?;
        let synth = SynthColumns::new(
            geom,
            index,
            precision.weight_bits,
            &self.params,
            &self.zero_lines[index],
        );
        Ok(Some(Box::new(SynthLayerColumns { synth, signed })))
    }

    fn stream_inputs(
        &self,
        index: usize,
        precision: Precision,
        samples: usize,
        chunk: usize,
        sink: &mut SampleSink<'_>,
    ) -> anyhow::Result<()> {
        check_load(self, index, precision, samples)?;
        stream_synth_inputs(
            &self.layers[index].geom,
            index,
            self.samples,
            samples,
            precision.input_bits,
            self.input_kind(index),
            &self.params,
            chunk,
            sink,
        )
    }
}

/// A synthetic layer's weights by columns ([`Workload::weight_columns`]).
struct SynthLayerColumns<'a> {
    synth: SynthColumns<'a>,
    signed: bool,
}

impl ColumnWeights for SynthLayerColumns<'_> {
    fn signed(&self) -> bool {
        self.signed
    }
    fn columns(&self, cols: std::ops::Range<usize>) -> Vec<i32> {
        self.synth.columns(cols)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn params_validation_names_the_flag() {
        assert!(SynthParams::default().validate().is_ok());
        let p = SynthParams {
            weight_sparsity: 1.5,
            ..Default::default()
        };
        assert_eq!(
            p.validate().unwrap_err().to_string(),
            "--weight-sparsity: 1.5 is not in [0, 1]"
        );
        let p = SynthParams {
            act_sparsity: -0.1,
            ..Default::default()
        };
        assert!(p
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("--act-sparsity"));
        let p = SynthParams {
            act_sparsity: f64::NAN,
            ..Default::default()
        };
        assert!(p.validate().is_err());
        assert_eq!("ssl".parse::<Structure>().unwrap(), Structure::Ssl);
        assert!("SSL2"
            .parse::<Structure>()
            .unwrap_err()
            .to_string()
            .starts_with("--structure"));
    }

    #[test]
    fn zoo_workload_loads_layers_independently_of_order() {
        let w = ZooWorkload::new("lenet5", SynthParams::default())
            .unwrap()
            .with_samples(2);
        let p = Precision {
            weight_bits: 8,
            input_bits: 8,
        };
        let l1_first = w.load_layer(1, p, 2).unwrap();
        let _ = w.load_layer(0, p, 2).unwrap();
        let l1_again = w.load_layer(1, p, 2).unwrap();
        assert_eq!(l1_first, l1_again);
        assert_eq!(l1_first.weights.len(), 50 * 20 * 25);
        assert_eq!(l1_first.input.len(), 2 * 20 * 12 * 12);
        // One sample is a prefix of two: the tensor is quantized over all held samples.
        let one = w.load_layer(1, p, 1).unwrap();
        assert_eq!(one.input[..], l1_first.input[..20 * 144]);
        assert_eq!(one.samples, 1);
        assert!(w
            .load_layer(1, p, 3)
            .unwrap_err()
            .to_string()
            .starts_with("--samples"));
        assert!(w.load_layer(4, p, 1).is_err());
        assert!(ZooWorkload::new("alexnet9", SynthParams::default()).is_err());
    }

    #[test]
    fn first_layer_signed_later_layers_unsigned() {
        let w = ZooWorkload::new("cifar10", SynthParams::default()).unwrap();
        let p = Precision::default();
        let l0 = w.load_layer(0, p, 1).unwrap();
        assert!(l0.signed && l0.input.iter().any(|&v| v < 0));
        let l3 = w.load_layer(3, p, 1).unwrap();
        assert!(!l3.signed && l3.input.iter().all(|&v| v >= 0));
        assert_eq!(l3.input.len(), 1024);
    }

    /// Streams layer `index` with `chunk`, checking every call holds whole samples, at
    /// most `chunk` of them; returns the concatenation.
    pub(crate) fn streamed(
        w: &dyn Workload,
        index: usize,
        p: Precision,
        samples: usize,
        chunk: usize,
    ) -> Vec<i32> {
        let per = w.layers()[index].geom.input_elements();
        let mut all = Vec::new();
        w.stream_inputs(index, p, samples, chunk, &mut |c| {
            assert!(!c.is_empty() && c.len() % per == 0 && c.len() <= chunk * per);
            all.extend_from_slice(c);
            Ok(())
        })
        .unwrap();
        assert_eq!(all.len(), samples * per);
        all
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Any chunking streams exactly the whole-tensor values (all held samples
        /// quantized together, then the first `samples` kept), and load_weights knows the
        /// whole tensor's sign without streaming.
        #[test]
        fn streaming_any_chunk_gives_the_whole_tensor_values(
            c in 1usize..4, h in 1usize..6, w in 1usize..6, fc_in in 1usize..20,
            held in 1usize..6, take in 1usize..6, bits in 2u32..17,
            seed in 0u64..1000, act in 0.0f64..1.0,
        ) {
            let samples = take.min(held);
            let params = SynthParams { seed, act_sparsity: act, ..Default::default() };
            let layers = vec![
                LayerSpec { name: "a".into(), kind: crate::LayerKind::Conv,
                            geom: crate::ConvGeometry::conv(c, 2, 1, 1, 0, 1, [h, w]) },
                LayerSpec { name: "b".into(), kind: crate::LayerKind::Fc,
                            geom: crate::ConvGeometry::fc(fc_in, 3) },
            ];
            let zw = ZooWorkload::from_layers("t", layers, params).unwrap().with_samples(held);
            let p = Precision { weight_bits: 8, input_bits: bits };
            for index in 0..2 {
                let geom = &zw.layers()[index].geom;
                let whole = synth_inputs(geom, index, held, bits, InputKind::for_layer(index), &params);
                let want = &whole.values[..samples * geom.input_elements()];
                for chunk in [1, 2, 3, samples, held, held + 5] {
                    proptest::prop_assert_eq!(&streamed(&zw, index, p, samples, chunk)[..], want);
                }
                proptest::prop_assert_eq!(zw.load_weights(index, p).unwrap().signed, whole.signed);
                proptest::prop_assert_eq!(&zw.load_layer(index, p, samples).unwrap().input[..], want);
            }
        }
    }

    #[test]
    fn a_sink_error_stops_the_stream() {
        let w = ZooWorkload::new("lenet5", SynthParams::default())
            .unwrap()
            .with_samples(4);
        let mut calls = 0;
        let e = w
            .stream_inputs(1, Precision::default(), 4, 1, &mut |_| {
                calls += 1;
                anyhow::ensure!(calls < 2, "full");
                Ok(())
            })
            .unwrap_err();
        assert_eq!((e.to_string(), calls), ("full".to_string(), 2));
    }
}
