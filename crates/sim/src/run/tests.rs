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

/// Records the units reported and, at the start of each layer, the units so far.
#[derive(Default)]
struct Recorder {
    units: std::sync::atomic::AtomicU64,
    starts: std::sync::Mutex<Vec<(String, u64)>>,
}

impl Progress for Recorder {
    fn layer(&self, name: &str) {
        let so_far = self.units.load(Ordering::Relaxed);
        self.starts.lock().unwrap().push((name.to_string(), so_far));
    }
    fn inc(&self, units: u64) {
        self.units.fetch_add(units, Ordering::Relaxed);
    }
}

/// Progress is counted in work units, exactly: each layer starts when the work of the
/// layers before it is done, and the run ends at `work` (100%, never beyond), in every
/// engine.
#[test]
fn progress_counts_every_units_of_work_once() {
    let zoo = ZooWorkload::new("lenet5", SynthParams::default())
        .unwrap()
        .with_samples(2);
    let cfg = crate::config::load(None, &[]).unwrap();
    let modes = [Mode::Dense, Mode::Sre];
    for engine in [EngineKind::Fast, EngineKind::Cycle, EngineKind::Reference] {
        // The reference engine is slow: one sample is enough for it.
        let n = if engine == EngineKind::Reference {
            1
        } else {
            2
        };
        let rec = Recorder::default();
        let spec = RunSpec {
            workload: &zoo,
            cfg: &cfg,
            modes: &modes,
            engine,
            samples: n,
            progress: false,
        };
        run_with(&spec, &rec).unwrap();
        let layers = zoo.layers();
        assert_eq!(rec.units.into_inner(), work(layers, n, 2), "{engine}");
        let starts = rec.starts.into_inner().unwrap();
        for (i, (name, so_far)) in starts.iter().enumerate() {
            assert_eq!(name, &layers[i].name);
            assert_eq!(*so_far, work(&layers[..i], n, 2), "{engine} {name}");
        }
    }
    // A vector counts its MACs: an fc layer's one vector of 800 x 500 weighs as much as
    // 800 x 500 MACs, in each mode and sample; preparing counts every weight.
    let fc = workload::ConvGeometry::fc(800, 500);
    let lw = LayerWork::of(&fc, 3, 2);
    assert_eq!(lw.per_vector, 400_000);
    assert_eq!(lw.vectors, 6);
    assert_eq!(
        lw.total(),
        400_000 * (PREPARE_UNITS_PER_WEIGHT + 2 * MODE_UNITS_PER_WEIGHT) + 6 * 400_000
    );
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
