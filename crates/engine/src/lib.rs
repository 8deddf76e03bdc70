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
//!
//! The types every engine reads sit below the engines, in files of their own:
//! [`SimOptions`] and [`EngineKind`] (`options.rs`), [`Prepared`], [`Samples`] and
//! [`Progress`] (`prepared.rs`), the OU counts (`counts.rs`). This file only dispatches:
//! [`simulate`] and [`ModeRun`] pick the engine and sum its counts with [`statics`].

pub mod columns;
pub mod input;
pub mod limits;
pub mod statics;

mod counts;
mod cycle;
mod fast;
mod options;
mod ou_stream;
mod prepared;
mod reference;

use crossbar::{Hardware, Mode};
use energy::Events;
use pipeline::cycle::CycleStats;
use pipeline::Busy;

pub use input::{Granularity, PassPlan, SignedEncoding};
pub use options::{EngineError, EngineKind, SimOptions};
pub use prepared::{Prepared, Progress, Samples};

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
    run.feed(prep.held, progress)?;
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
        Self::build(prep, hw, opts, mode, engine, false)
    }

    /// A run over some column blocks of a layer ([`crossbar::LayerMap::window`]), whose
    /// result [`ModeRun::finish_part`] gives for [`columns::Parts`]: the fast and the
    /// reference engine (the cycle engine simulates a layer's crossbars together:
    /// `Err(EngineError::CycleWindow)`).
    pub fn part(
        prep: &'p Prepared<'p>,
        hw: &'p Hardware,
        opts: &SimOptions,
        mode: Mode,
        engine: EngineKind,
    ) -> Result<Self, EngineError> {
        if engine == EngineKind::Cycle {
            return Err(EngineError::CycleWindow);
        }
        Self::build(prep, hw, opts, mode, engine, true)
    }

    fn build(
        prep: &'p Prepared<'p>,
        hw: &'p Hardware,
        opts: &SimOptions,
        mode: Mode,
        engine: EngineKind,
        traced: bool,
    ) -> Result<Self, EngineError> {
        // The closed form knows a queue depth only as a barrier policy.
        let closed = || match opts.pipeline.queue_depth.closed_form(opts.sync) {
            Some(sync) => Ok(SimOptions { sync, ..*opts }),
            None => Err(EngineError::QueueNeedsCycle(
                opts.pipeline.queue_depth.resolve(opts.sync),
            )),
        };
        let state = match engine {
            EngineKind::Fast => State::Fast(fast::Run::new(prep, hw, &closed()?, mode, traced)),
            EngineKind::Reference => {
                State::Reference(reference::Run::new(prep, hw, &closed()?, mode, traced))
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

    /// Replays `chunk`, the samples that follow those fed so far. Fails only when an
    /// allocation sized by the layer fails ([`EngineError::Alloc`]).
    pub fn feed(&mut self, chunk: Samples, progress: Progress) -> Result<(), EngineError> {
        debug_assert_eq!(
            chunk.input.len(),
            chunk.samples * self.prep.geom().input_elements()
        );
        self.samples += chunk.samples as u64;
        match &mut self.state {
            State::Fast(r) => r.feed(chunk, progress)?,
            State::Reference(r) => r.feed(chunk, progress),
            State::Cycle(r) => r.feed(chunk, progress),
        }
        Ok(())
    }

    /// The layer's events and cycles over every sample fed, and the cycle engine's
    /// per-stage counters (None for the other engines).
    pub fn finish(self) -> (Events, Option<CycleStats>) {
        let mode = self.mode;
        let (mut ev, busy, stats) = self.finish_part();
        ev.busy_cycles = Busy::combine(&[busy]);
        ev.cycles = pipeline::layer_cycles(ev.busy_cycles, mode);
        (ev, stats)
    }

    /// The events of the crossbars of this run's map, without W and the cycles, and
    /// what its barrier says of W ([`Busy::combine`]).
    pub fn finish_part(self) -> (Events, Busy, Option<CycleStats>) {
        let prep = self.prep;
        let mut ev = statics::static_events(prep, self.hw, self.mode, self.samples);
        let (dynamic, busy, stats) = match self.state {
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
                (c, Busy::Max(w), Some(s))
            }
        };
        ev.ou_ops = dynamic.ou_ops;
        ev.rows_driven = dynamic.rows_driven;
        ev.cells_read = dynamic.cells_read;
        ev.adc_conversions = dynamic.adc_conversions;
        ev.index_reads = dynamic.index_reads;
        ev.index_bits_read = dynamic.index_reads * prep.index_bits() as u64;
        ev.ous_formed = dynamic.ous_formed;
        (ev, busy, stats)
    }
}
