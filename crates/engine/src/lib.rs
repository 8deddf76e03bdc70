//! Simulation engines: from a quantized layer to per-mode event counts and cycles.
//!
//! One interface ([`simulate`]) over interchangeable engines ([`EngineKind`]):
//! - `reference`: a literal loop that forms every OU one by one with the sparsity
//!   crate's index decoder and OU formation; slow and obviously right, used by tests;
//! - `fast`: counts OUs with popcounts over active-row masks, parallel over input vectors
//!   with rayon; exact integer sums, so the result is the same for any thread count;
//! - `cycle`: the stage-by-stage engine of the pipeline crate.
//!
//! Shared by all engines: how inputs become passes, input cycles and active rows
//! ([`input`], section 5), and the counts that do not depend on OU formation
//! ([`statics`], section 8: register, eDRAM and storage bits, crossbars).
//! Before anything runs, [`limits`] bounds every count and the memory of each layer.

pub mod input;
pub mod limits;
pub mod statics;

mod cycle;
mod fast;
mod ou_stream;
mod reference;

use crossbar::{Hardware, LayerMap, Mode};
use energy::Events;
use pipeline::cycle::{CycleStats, PipelineOptions, QueueDepth};
use pipeline::Sync;
use serde::{Deserialize, Serialize};
use sparsity::Compression;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use thiserror::Error;
use workload::{im2col_vector, ConvGeometry, LayerSpec, LayerWeights, QuantLayer};

pub use input::{Granularity, PassPlan, SignedEncoding};

/// Which engine computes the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Fast,
    Reference,
    Cycle,
}

impl FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fast" => Ok(EngineKind::Fast),
            "reference" => Ok(EngineKind::Reference),
            "cycle" => Ok(EngineKind::Cycle),
            _ => Err(format!(
                "unknown engine '{s}' (expected fast, reference or cycle)"
            )),
        }
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EngineKind::Fast => "fast",
            EngineKind::Reference => "reference",
            EngineKind::Cycle => "cycle",
        })
    }
}

/// Run-time choices of sections 5 and 7 that are not hardware geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimOptions {
    pub sync: Sync,
    pub granularity: Granularity,
    pub encoding: SignedEncoding,
    /// `[pipeline]`: input queue depth (cycle engine) and an optional slow stage (all).
    pub pipeline: PipelineOptions,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            sync: Sync::Vector,
            granularity: Granularity::Value,
            encoding: SignedEncoding::TwosComplement,
            pipeline: PipelineOptions::default(),
        }
    }
}

#[derive(Debug, Error, PartialEq)]
pub enum EngineError {
    #[error("pipeline.queue_depth: a queue of {0} is modeled only by --engine cycle (the closed form of the fast and reference engines covers a depth of 1 and an unbounded queue)")]
    QueueNeedsCycle(QueueDepth),
}

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
    /// Inputs held with the layer (a [`QuantLayer`]'s), which [`simulate`] feeds.
    held: Samples<'a>,
    comp: OnceLock<Compression>,
}

impl<'a> Prepared<'a> {
    /// A layer whose inputs are held in memory ([`simulate`] replays them).
    pub fn new(layer: &'a QuantLayer, hw: &Hardware, opts: &SimOptions) -> Self {
        let held = Samples::new(&layer.input, layer.samples);
        Self::build(&layer.spec, &layer.weights, layer.signed, held, hw, opts)
    }

    /// A layer whose inputs are streamed: feed them to a [`ModeRun`] chunk by chunk.
    pub fn from_weights(layer: &'a LayerWeights, hw: &Hardware, opts: &SimOptions) -> Self {
        let held = Samples::new(&[], 0);
        Self::build(&layer.spec, &layer.weights, layer.signed, held, hw, opts)
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
/// what one call of [`ModeRun::feed`] replays.
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

/// Counts every event of section 8 and the cycles of section 7 for one mode.
pub fn simulate(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    engine: EngineKind,
    progress: Progress,
) -> Result<Events, EngineError> {
    simulate_with_stats(prep, hw, opts, mode, engine, progress).map(|(ev, _)| ev)
}

/// [`simulate`], with the cycle engine's per-stage counters (None for the other engines).
pub fn simulate_with_stats(
    prep: &Prepared,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    engine: EngineKind,
    progress: Progress,
) -> Result<(Events, Option<CycleStats>), EngineError> {
    let mut run = ModeRun::new(prep, hw, opts, mode, engine)?;
    run.feed(prep.held, progress);
    Ok(run.finish())
}

/// One layer in one mode, its input vectors fed a chunk of samples at a time, in order.
///
/// Every engine carries its state from one chunk to the next (counts, the barrier, the
/// cycle engine's machine), so the result does not depend on how the samples were cut:
/// feeding them all at once, or one by one, gives the same numbers.
pub struct ModeRun<'p> {
    prep: &'p Prepared<'p>,
    hw: &'p Hardware,
    mode: Mode,
    /// Samples fed so far.
    samples: u64,
    state: State<'p>,
}

enum State<'p> {
    Fast(fast::Run<'p>),
    Reference(reference::Run<'p>),
    Cycle(Box<cycle::Run<'p>>),
}

impl<'p> ModeRun<'p> {
    pub fn new(
        prep: &'p Prepared<'p>,
        hw: &'p Hardware,
        opts: &SimOptions,
        mode: Mode,
        engine: EngineKind,
    ) -> Result<Self, EngineError> {
        // The closed form knows a queue depth only as a barrier policy.
        let closed = || match opts.pipeline.queue_depth.closed_form(opts.sync) {
            Some(sync) => Ok(SimOptions { sync, ..*opts }),
            None => Err(EngineError::QueueNeedsCycle(
                opts.pipeline.queue_depth.resolve(opts.sync),
            )),
        };
        let state = match engine {
            EngineKind::Fast => State::Fast(fast::Run::new(prep, hw, &closed()?, mode)),
            EngineKind::Reference => {
                State::Reference(reference::Run::new(prep, hw, &closed()?, mode))
            }
            EngineKind::Cycle => State::Cycle(Box::new(cycle::Run::new(prep, hw, opts, mode))),
        };
        Ok(ModeRun {
            prep,
            hw,
            mode,
            samples: 0,
            state,
        })
    }

    /// Replays `chunk`, the samples that follow those fed so far.
    pub fn feed(&mut self, chunk: Samples, progress: Progress) {
        debug_assert_eq!(
            chunk.input.len(),
            chunk.samples * self.prep.geom().input_elements()
        );
        self.samples += chunk.samples as u64;
        match &mut self.state {
            State::Fast(r) => r.feed(chunk, progress),
            State::Reference(r) => r.feed(chunk, progress),
            State::Cycle(r) => r.feed(chunk, progress),
        }
    }

    /// The layer's events and cycles over every sample fed, and the cycle engine's
    /// per-stage counters (None for the other engines).
    pub fn finish(self) -> (Events, Option<CycleStats>) {
        let prep = self.prep;
        let mut ev = statics::static_events(prep, self.hw, self.mode, self.samples);
        let (dynamic, w, stats) = match self.state {
            State::Fast(r) => {
                let (c, w) = r.finish(ev.vectors);
                (c, w, None)
            }
            State::Reference(r) => {
                let (c, w) = r.finish();
                (c, w, None)
            }
            State::Cycle(r) => {
                let (c, w, s) = r.finish();
                (c, w, Some(s))
            }
        };
        ev.ou_ops = dynamic.ou_ops;
        ev.rows_driven = dynamic.rows_driven;
        ev.cells_read = dynamic.cells_read;
        ev.adc_conversions = dynamic.adc_conversions;
        ev.index_reads = dynamic.index_reads;
        ev.index_bits_read = dynamic.index_reads * prep.index_bits() as u64;
        ev.ous_formed = dynamic.ous_formed;
        ev.busy_cycles = w;
        ev.cycles = pipeline::layer_cycles(w, self.mode);
        (ev, stats)
    }
}

/// The OU-dependent counts an engine produces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct OuCounts {
    pub ou_ops: u64,
    pub rows_driven: u64,
    pub cells_read: u64,
    pub adc_conversions: u64,
    pub index_reads: u64,
    pub ous_formed: u64,
}

impl OuCounts {
    /// Records `ops` OUs covering `rows` rows of a column group of width `cols`.
    #[inline]
    pub fn record(&mut self, mode: Mode, ops: u64, rows: u64, cols: u64) {
        self.record_raw(mode, 1, ops, rows, rows * cols, ops * cols);
    }

    /// Records summed counts of OUs (ops, rows, cells, conversions), `repeat` times.
    #[inline]
    pub fn record_raw(
        &mut self,
        mode: Mode,
        repeat: u64,
        ops: u64,
        rows: u64,
        cells: u64,
        adc: u64,
    ) {
        self.ou_ops += repeat * ops;
        self.rows_driven += repeat * rows;
        self.cells_read += repeat * cells;
        self.adc_conversions += repeat * adc;
        if mode.compacted() {
            self.index_reads += repeat * rows;
        }
        if mode.skips_inputs() {
            self.ous_formed += repeat * ops;
        }
    }

    pub fn scaled(&self, k: u64) -> OuCounts {
        OuCounts {
            ou_ops: self.ou_ops * k,
            rows_driven: self.rows_driven * k,
            cells_read: self.cells_read * k,
            adc_conversions: self.adc_conversions * k,
            index_reads: self.index_reads * k,
            ous_formed: self.ous_formed * k,
        }
    }

    pub fn add(&mut self, o: &OuCounts) {
        self.ou_ops += o.ou_ops;
        self.rows_driven += o.rows_driven;
        self.cells_read += o.cells_read;
        self.adc_conversions += o.adc_conversions;
        self.index_reads += o.index_reads;
        self.ous_formed += o.ous_formed;
    }
}
