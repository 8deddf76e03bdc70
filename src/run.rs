//! The run driver: a workload, layer by layer, through every requested mode.
//!
//! One layer is loaded, mapped and compressed at a time and shared by all modes, then
//! dropped; memory does not grow with the network. Its inputs stream through every mode
//! a chunk of samples at a time ([`workload::chunk_samples`]), so memory does not
//! grow with the samples replayed either. Engines parallelize inside a chunk.

use crate::config::Resolved;
use anyhow::{bail, Result};
use crossbar::Mode;
use energy::{Breakdown, Events};
use engine::{EngineKind, ModeRun, Prepared, Samples};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pipeline::cycle::CycleStats;
use std::time::{Duration, Instant};
use workload::{LayerKind, Workload};

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
}

impl RunResult {
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

/// What to run.
pub struct RunSpec<'a> {
    pub workload: &'a dyn Workload,
    pub cfg: &'a Resolved,
    pub modes: &'a [Mode],
    pub engine: EngineKind,
    pub samples: usize,
    pub progress: bool,
}

pub fn run(spec: &RunSpec) -> Result<RunResult> {
    let w = spec.workload;
    if spec.samples == 0 || spec.samples > w.available_samples() {
        bail!(
            "--samples {}: {} holds {} sample(s)",
            spec.samples,
            w.name(),
            w.available_samples()
        );
    }
    let cfg = spec.cfg;
    check_limits(spec)?;
    let work: u64 = w
        .layers()
        .iter()
        .map(|l| (l.geom.vectors_per_sample() * spec.samples) as u64)
        .sum::<u64>()
        * spec.modes.len() as u64;
    let bar = Bar::new(work, spec.progress);
    let mut layers = Vec::new();
    let precision = cfg.precision();
    for (i, spec_l) in w.layers().iter().enumerate() {
        bar.message(&spec_l.name);
        let weights = w.load_weights(i, precision)?;
        let prep = Prepared::from_weights(&weights, &cfg.hw, &cfg.opts);
        let mut runs = spec
            .modes
            .iter()
            .map(|&mode| ModeRun::new(&prep, &cfg.hw, &cfg.opts, mode, spec.engine))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("{}: {e}", cfg.origin))?;
        // The inputs stream a chunk of samples at a time through every mode at once.
        let per_sample = spec_l.geom.input_elements();
        let chunk = workload::chunk_samples(&spec_l.geom, spec.samples as u64) as usize;
        let tick = |n: u64| bar.inc(n);
        w.stream_inputs(i, precision, spec.samples, chunk, &mut |input| {
            let samples = Samples::new(input, input.len() / per_sample.max(1));
            for r in runs.iter_mut() {
                r.feed(samples, Some(&tick));
            }
            Ok(())
        })?;
        for (&mode, r) in spec.modes.iter().zip(runs) {
            let (events, stats) = r.finish();
            let time_ns = events.cycles as f64 * cfg.cycle_ns;
            let adc_bits = cfg.hw.adc_resolution(mode);
            let energy =
                cfg.energy
                    .breakdown(&events, adc_bits, cfg.static_mw_per_crossbar, time_ns);
            layers.push(LayerResult {
                layer: spec_l.name.clone(),
                kind: spec_l.kind,
                mode,
                events,
                energy,
                time_ns,
                adc_bits,
                passes: prep.plan.passes.len() as u32,
                input_cycles: prep.plan.cycles,
                signed: weights.signed,
                pipeline: stats,
            });
        }
    }
    bar.finish();
    let totals = spec
        .modes
        .iter()
        .map(|&mode| {
            let mut t = ModeTotal {
                mode,
                events: Events::default(),
                energy: Breakdown::default(),
                time_ns: 0.0,
                pipeline: None,
            };
            for r in layers.iter().filter(|r| r.mode == mode) {
                t.events.add(&r.events);
                t.energy.add(&r.energy);
                if let Some(s) = &r.pipeline {
                    t.pipeline.get_or_insert_with(CycleStats::default).add(s);
                }
            }
            t.time_ns = t.events.cycles as f64 * cfg.cycle_ns;
            t
        })
        .collect();
    let result = RunResult {
        network: w.name().to_string(),
        source: w.source().to_string(),
        samples: spec.samples,
        engine: spec.engine,
        modes: spec.modes.to_vec(),
        layers,
        totals,
    };
    crate::report::check_finite(&result, cfg)?;
    Ok(result)
}

/// Refuses, before anything is loaded or simulated, a network whose counts could overflow
/// u64 or one of whose layers needs more memory than `limits.max_layer_bytes`.
fn check_limits(spec: &RunSpec) -> Result<()> {
    let layers: Vec<engine::limits::LayerRef> = spec
        .workload
        .layers()
        .iter()
        .map(|l| engine::limits::LayerRef {
            name: &l.name,
            geom: &l.geom,
            held_samples: workload::chunk_samples(&l.geom, spec.samples as u64),
        })
        .collect();
    engine::limits::check_network(
        &layers,
        spec.samples as u64,
        &spec.cfg.hw,
        &spec.cfg.opts,
        spec.modes,
        spec.cfg.config.limits.max_layer_bytes,
        rayon::current_num_threads(),
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", spec.workload.name()))
}

/// A progress bar on stderr that appears only for runs longer than a moment and only
/// when stderr is a terminal.
struct Bar {
    pb: Option<ProgressBar>,
    start: Instant,
    shown: std::sync::atomic::AtomicBool,
}

impl Bar {
    fn new(total: u64, enabled: bool) -> Self {
        let pb = enabled.then(|| {
            let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            // A constant template: an invariant, not user data.
            #[allow(clippy::expect_used)]
            pb.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:40} {percent:>3}% {msg} (eta {eta})",
                )
                .expect("valid template"),
            );
            pb
        });
        Bar {
            pb,
            start: Instant::now(),
            shown: false.into(),
        }
    }

    fn inc(&self, n: u64) {
        use std::sync::atomic::Ordering;
        if let Some(pb) = &self.pb {
            pb.inc(n);
            if self.start.elapsed() > Duration::from_millis(400)
                && !self.shown.swap(true, Ordering::Relaxed)
            {
                pb.set_draw_target(ProgressDrawTarget::stderr());
            }
        }
    }

    fn message(&self, m: &str) {
        if let Some(pb) = &self.pb {
            pb.set_message(m.to_string());
        }
    }

    fn finish(&self) {
        if let Some(pb) = &self.pb {
            pb.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use workload::{LayerWeights, Precision, QuantLayer, SampleSink, SynthParams, ZooWorkload};

    /// A zoo network whose inputs arrive one sample per call, whatever chunk is asked
    /// for ("at most `chunk`" allows it), recording the largest chunk the driver asked.
    struct OneByOne {
        inner: ZooWorkload,
        asked: AtomicUsize,
    }

    impl Workload for OneByOne {
        fn name(&self) -> &str {
            self.inner.name()
        }
        fn source(&self) -> &str {
            self.inner.source()
        }
        fn layers(&self) -> &[workload::LayerSpec] {
            self.inner.layers()
        }
        fn available_samples(&self) -> usize {
            self.inner.available_samples()
        }
        fn load_weights(&self, i: usize, p: Precision) -> Result<LayerWeights> {
            self.inner.load_weights(i, p)
        }
        fn stream_inputs(
            &self,
            i: usize,
            p: Precision,
            samples: usize,
            chunk: usize,
            sink: &mut SampleSink<'_>,
        ) -> Result<()> {
            self.asked.fetch_max(chunk, Ordering::Relaxed);
            self.inner.stream_inputs(i, p, samples, 1, sink)
        }
    }

    fn run_on(w: &dyn Workload, cfg: &Resolved, engine: EngineKind, samples: usize) -> RunResult {
        run(&RunSpec {
            workload: w,
            cfg,
            modes: &Mode::ALL,
            engine,
            samples,
            progress: false,
        })
        .unwrap()
    }

    /// Streaming samples one by one gives, layer by layer and mode by mode, exactly the
    /// events of simulating each whole layer held in memory.
    #[test]
    fn streamed_run_equals_whole_layers() {
        let params = SynthParams::default();
        let zoo = ZooWorkload::new("lenet5", params).unwrap().with_samples(3);
        let cfg = crate::config::load(None, &["activation.granularity=bit".into()]).unwrap();
        for engine in [EngineKind::Fast, EngineKind::Cycle] {
            let w = OneByOne {
                inner: zoo.clone(),
                asked: AtomicUsize::new(0),
            };
            let res = run_on(&w, &cfg, engine, 3);
            // lenet5's inputs are small: the driver asks for all 3 samples in one chunk.
            assert_eq!(w.asked.load(Ordering::Relaxed), 3);
            for (i, l) in zoo.layers().iter().enumerate() {
                let whole: QuantLayer = zoo.load_layer(i, cfg.precision(), 3).unwrap();
                let prep = Prepared::new(&whole, &cfg.hw, &cfg.opts);
                for &mode in &Mode::ALL {
                    let (want, _) =
                        engine::simulate_with_stats(&prep, &cfg.hw, &cfg.opts, mode, engine, None)
                            .unwrap();
                    let got = res
                        .layers
                        .iter()
                        .find(|r| r.layer == l.name && r.mode == mode)
                        .unwrap();
                    assert_eq!(got.events, want, "{engine} {} {mode}", l.name);
                    assert_eq!(got.signed, whole.signed);
                }
            }
        }
    }
}
