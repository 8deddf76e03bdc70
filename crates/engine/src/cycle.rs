//! The cycle engine: each input vector's OU stream ([`crate::ou_stream`]) through the
//! pipeline crate's machine (per-crossbar input queues, barrier, paced issue through
//! the stages, merge), one vector at a time; docs/pipeline.md.
//!
//! It counts the OU events itself from the stream it issues, so its counts are an
//! independent check of the other engines'; its cycles equal the closed form's where
//! the closed form applies (a queue of depth 1, or unbounded).

use crate::counts::OuCounts;
use crate::options::SimOptions;
use crate::ou_stream::{OuSink, OuStream};
use crate::prepared::{Prepared, Progress, Samples};
use crossbar::{Hardware, Mode};
use pipeline::cycle::{CycleStats, Machine};
use pipeline::StageModel;

/// Vectors between two progress reports.
const PROGRESS_EVERY: usize = 64;

/// The cycle engine's state over the chunks of one layer in one mode: the machine runs
/// on from one chunk's last vector to the next chunk's first.
pub(crate) struct Run<'p> {
    prep: &'p Prepared<'p>,
    stream: OuStream<'p, 'p>,
    sink: Sink,
}

impl<'p> Run<'p> {
    pub fn new(prep: &'p Prepared<'p>, hw: &Hardware, opts: &SimOptions, mode: Mode) -> Self {
        let stream = OuStream::new(prep, hw, opts, mode);
        let model = StageModel::new(mode, hw, opts.pipeline.slow_stage);
        let sink = Sink {
            machine: Machine::new(
                model,
                stream.tiling.total,
                opts.sync,
                opts.pipeline.queue_depth,
            ),
            mode,
            interval: OuCounts::default(),
            counts: OuCounts::default(),
        };
        Run { prep, stream, sink }
    }

    /// Streams every vector of `chunk` through the machine, in order.
    pub fn feed(&mut self, chunk: Samples, progress: Progress) {
        let vectors = chunk.vectors(self.prep.geom());
        for v in 0..vectors {
            self.stream.vector(chunk, v, &mut self.sink);
            self.sink.machine.end_vector();
            if let Some(p) = progress {
                if (v + 1) % PROGRESS_EVERY == 0 || v + 1 == vectors {
                    p(((v % PROGRESS_EVERY) + 1) as u64);
                }
            }
        }
    }

    /// OU counts, busy time W and the stage counters over every vector fed.
    pub fn finish(self) -> (OuCounts, u64, CycleStats) {
        let machine = self.sink.machine;
        let (_, stats) = machine.finish();
        (self.sink.counts, machine.busy_time(), stats)
    }
}

/// Forwards the stream to the machine and counts its OUs.
struct Sink {
    machine: Machine,
    mode: Mode,
    /// Counts of the open input cycle.
    interval: OuCounts,
    counts: OuCounts,
}

impl OuSink for Sink {
    #[inline]
    fn ous(&mut self, x: usize, count: u64, rows: u32, cols: u32) {
        self.machine.ous(x, count, rows, cols);
        self.interval
            .record(self.mode, count, count * rows as u64, cols as u64);
    }

    fn end_interval(&mut self, repeat: u64) {
        self.machine.end_interval(repeat);
        self.counts.add(&self.interval.scaled(repeat));
        self.interval = OuCounts::default();
    }
}
