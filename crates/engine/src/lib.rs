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

// Counts come from user data: no unwrap/expect outside tests (docs/errors.md).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

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
use workload::QuantLayer;

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
    pub layer: &'a QuantLayer,
    pub map: LayerMap,
    pub plan: PassPlan,
    comp: OnceLock<Compression>,
}

impl<'a> Prepared<'a> {
    pub fn new(layer: &'a QuantLayer, hw: &Hardware, opts: &SimOptions) -> Self {
        Prepared {
            layer,
            map: LayerMap::new(layer.geom(), hw),
            plan: PassPlan::new(layer.signed, opts.encoding, hw),
            comp: OnceLock::new(),
        }
    }

    /// The compression of every column group (section 4), computed once.
    pub fn comp(&self) -> &Compression {
        self.comp
            .get_or_init(|| Compression::new(&self.map, &self.layer.weights))
    }

    /// Index width ceil(log2 K).
    pub fn index_bits(&self) -> u32 {
        crossbar::ceil_log2(self.map.k as u64)
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
    let mut ev = statics::static_events(prep, hw, mode);
    let mut stats = None;
    // The closed form knows a queue depth only as a barrier policy.
    let closed = |opts: &SimOptions| match opts.pipeline.queue_depth.closed_form(opts.sync) {
        Some(sync) => Ok(SimOptions { sync, ..*opts }),
        None => Err(EngineError::QueueNeedsCycle(
            opts.pipeline.queue_depth.resolve(opts.sync),
        )),
    };
    let (dynamic, w) = match engine {
        EngineKind::Reference => reference::run(prep, hw, &closed(opts)?, mode, progress),
        EngineKind::Fast => fast::run(prep, hw, &closed(opts)?, mode, progress),
        EngineKind::Cycle => {
            let (counts, w, s) = cycle::run(prep, hw, opts, mode, progress);
            stats = Some(s);
            (counts, w)
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
    ev.cycles = pipeline::layer_cycles(w, mode);
    Ok((ev, stats))
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
