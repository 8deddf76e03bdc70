//! What a run produces ([`RunResult`]): per (layer, mode) counts, energy and time, the
//! per-mode totals, the chip figures and the functional datapath's figures. The type every
//! report reads ([`crate::report`], [`crate::functional`], [`crate::chip`]) and the run
//! driver ([`crate::run`]) fills; it knows neither.

use crossbar::Mode;
use energy::{Breakdown, Events};
use engine::EngineKind;
use functional::Metrics;
use pipeline::cycle::CycleStats;
use workload::LayerKind;

/// One (layer, mode) of a functional run.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncResult {
    pub metrics: Metrics,
    /// The integer outputs, when dumped: `shape` row-major.
    pub outputs: Option<Vec<i64>>,
    /// `[N, Cout, Ho, Wo]` (conv) or `[N, out]` (fc).
    pub shape: Vec<usize>,
}

/// One (layer, mode) result.
#[derive(Debug, Clone)]
pub struct LayerResult {
    pub layer: String,
    pub kind: LayerKind,
    pub mode: Mode,
    pub events: Events,
    pub energy: Breakdown,
    pub time_ns: f64,
    pub adc_bits: u32,
    pub passes: u32,
    pub input_cycles: u32,
    pub signed: bool,
    /// Per-stage counters of the cycle engine (None for the other engines).
    pub pipeline: Option<CycleStats>,
    /// The functional datapath's figures (None unless `--functional`).
    pub functional: Option<FuncResult>,
}

/// Per-mode sums over layers.
#[derive(Debug, Clone)]
pub struct ModeTotal {
    pub mode: Mode,
    pub events: Events,
    pub energy: Breakdown,
    pub time_ns: f64,
    /// The layers' cycle-engine counters, summed (None for the other engines).
    pub pipeline: Option<CycleStats>,
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub network: String,
    pub source: String,
    pub samples: usize,
    pub engine: EngineKind,
    pub modes: Vec<Mode>,
    /// Layer-major, then in `modes` order.
    pub layers: Vec<LayerResult>,
    pub totals: Vec<ModeTotal>,
    /// Chip figures per mode, in `modes` order (only with a `[chip]` table).
    pub chip: Option<Vec<chip::ModeChip>>,
    /// Whether the functional datapath ran (`--functional`).
    pub functional: bool,
    /// Whether layers.csv carries `adc_clip_frac`: a functional run with a fixed
    /// `adc.bits` (an auto ADC never clips; its runs keep their columns).
    pub adc_clip: bool,
    /// The network's ops that no crossbar computes and no count includes (a transformer's
    /// products of two activations): (node, multiply-accumulates a sample).
    pub off_crossbar: Vec<(String, u64)>,
    /// Multiply-accumulates a sample of the simulated crossbar layers (their weights times
    /// their input vectors).
    pub crossbar_macs: u64,
    /// The digital unit's figures (only for a graph with attention, LayerNorm or RMSNorm:
    /// docs/digital.md).
    pub digital: Option<crate::digital::DigitalResult>,
}

impl RunResult {
    /// Multiply-accumulates a sample of the ops no crossbar computes ([`Self::off_crossbar`]).
    pub fn off_crossbar_macs(&self) -> u64 {
        // Checked when the workload was opened (a total that does not fit is refused).
        workload::off_crossbar_total(&self.off_crossbar).unwrap_or(u64::MAX)
    }

    pub fn total(&self, mode: Mode) -> Option<&ModeTotal> {
        self.totals.iter().find(|t| t.mode == mode)
    }

    /// The dense result of the same layer, for speedup and energy saving.
    pub fn dense_of(&self, layer: &str) -> Option<&LayerResult> {
        self.layers
            .iter()
            .find(|r| r.layer == layer && r.mode == Mode::Dense)
    }
}
