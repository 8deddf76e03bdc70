//! What every engine reads: a layer mapped once and shared by every mode
//! ([`Prepared`]), the samples of its input one call replays ([`Samples`]), and the
//! progress callback ([`Progress`]).

use crate::input::PassPlan;
use crate::options::SimOptions;
use crossbar::{Hardware, LayerMap};
use sparsity::Compression;
use std::sync::OnceLock;
use workload::{im2col_vector, ConvGeometry, LayerSpec, LayerWeights, QuantLayer};

/// A layer mapped once and shared by every mode: the dense column structure and, built
/// on first use by a compacted mode, the compression of its column groups.
pub struct Prepared<'a> {
    pub spec: &'a LayerSpec,
    /// [Cout, Cin/G, R, S] row-major quantized weights.
    pub weights: &'a [i32],
    /// Whether the layer's whole input tensor is signed (decides the passes).
    pub signed: bool,
    pub map: LayerMap,
    pub plan: PassPlan,
    /// Inputs held with the layer (a [`QuantLayer`]'s), which [`crate::simulate`] feeds.
    pub(crate) held: Samples<'a>,
    comp: OnceLock<Compression>,
}

impl<'a> Prepared<'a> {
    /// A layer whose inputs are held in memory ([`crate::simulate`] replays them).
    pub fn new(layer: &'a QuantLayer, hw: &Hardware, opts: &SimOptions) -> Self {
        let held = Samples::new(&layer.input, layer.samples);
        Self::build(&layer.spec, &layer.weights, layer.signed, held, hw, opts)
    }

    /// A layer whose inputs are streamed: feed them to a [`crate::ModeRun`] chunk by chunk.
    pub fn from_weights(layer: &'a LayerWeights, hw: &Hardware, opts: &SimOptions) -> Self {
        let held = Samples::new(&[], 0);
        Self::build(&layer.spec, &layer.weights, layer.signed, held, hw, opts)
    }

    /// A window of a layer's column blocks whose inputs are streamed ([`crate::columns`]):
    /// `map` is the window's ([`LayerMap::window`]) and `weights` the logical columns of
    /// its [`crossbar::ColumnWindow`], K each.
    pub fn window(
        spec: &'a LayerSpec,
        weights: &'a [i32],
        signed: bool,
        map: LayerMap,
        hw: &Hardware,
        opts: &SimOptions,
    ) -> Self {
        Prepared {
            spec,
            weights,
            signed,
            map,
            plan: PassPlan::new(signed, opts.encoding, hw),
            held: Samples::new(&[], 0),
            comp: OnceLock::new(),
        }
    }

    fn build(
        spec: &'a LayerSpec,
        weights: &'a [i32],
        signed: bool,
        held: Samples<'a>,
        hw: &Hardware,
        opts: &SimOptions,
    ) -> Self {
        Prepared {
            spec,
            weights,
            signed,
            map: LayerMap::new(&spec.geom, hw),
            plan: PassPlan::new(signed, opts.encoding, hw),
            held,
            comp: OnceLock::new(),
        }
    }

    pub fn geom(&self) -> &ConvGeometry {
        &self.spec.geom
    }

    /// The compression of every column group (section 4), computed once.
    pub fn comp(&self) -> &Compression {
        self.comp
            .get_or_init(|| Compression::new(&self.map, self.weights))
    }

    /// Index width ceil(log2 K).
    pub fn index_bits(&self) -> u32 {
        crossbar::ceil_log2(self.map.k as u64)
    }
}

/// Consecutive whole samples of a layer's quantized input, `[samples, C, H, W]` row-major:
/// what one call of [`crate::ModeRun::feed`] replays.
#[derive(Debug, Clone, Copy)]
pub struct Samples<'c> {
    pub input: &'c [i32],
    pub samples: usize,
}

impl<'c> Samples<'c> {
    pub fn new(input: &'c [i32], samples: usize) -> Self {
        Samples { input, samples }
    }

    /// Input vectors of these samples in `geom`: samples * Ho * Wo.
    pub fn vectors(&self, geom: &ConvGeometry) -> usize {
        self.samples * geom.vectors_per_sample()
    }

    /// Fills `out` with input vector `v` of these samples (see [`im2col_vector`]).
    #[inline]
    pub fn fill_vector(&self, geom: &ConvGeometry, v: usize, out: &mut [i32]) {
        im2col_vector(geom, self.input, v, out)
    }
}

/// Progress callback: called with a number of input vectors just finished.
pub type Progress<'p> = Option<&'p (dyn Fn(u64) + std::marker::Sync)>;
