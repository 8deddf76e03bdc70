//! Criterion benchmarks of chip runs.
//!
//! - `chip/vgg16-isaac-pipelined-run`: a whole run of vgg16 (SSL 70% weights, 50% zero
//!   inputs, one image) in all five modes on as many isaac chips as each mode needs,
//!   replication balanced, pipelined schedule over eDRAM and the mesh: engines and chip.
//! - `chip/vgg16-isaac-pipelined-chip`: the chip figures alone, from that run's counts.
//!
//! Run: `cargo bench --bench chip` (docs/perf.md has the recorded numbers).
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use crossbar::Mode;
use engine::EngineKind;
use sim::config::{self, Resolved};
use sim::run::{run, RunResult, RunSpec};
use std::hint::black_box;
use std::time::Duration;
use workload::{Structure, SynthParams, ZooWorkload};

fn setup() -> (ZooWorkload, Resolved) {
    let params = SynthParams {
        seed: 1,
        weight_sparsity: 0.7,
        structure: Structure::Ssl,
        act_sparsity: 0.5,
        head_sparsity: 0.0,
    };
    let w = ZooWorkload::new("vgg16", params).expect("zoo network");
    let sets: Vec<String> = [
        "chip.preset=isaac",
        "chip.count=auto",
        "chip.replication=balance",
        "chip.schedule=pipelined",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cfg = config::load(None, &sets).expect("config");
    (w, cfg)
}

fn run_once(w: &ZooWorkload, cfg: &Resolved) -> RunResult {
    run(&RunSpec {
        workload: w,
        cfg,
        modes: &Mode::ALL,
        engine: EngineKind::Fast,
        samples: 1,
        progress: false,
    })
    .expect("run")
}

fn bench(c: &mut Criterion) {
    let (w, cfg) = setup();
    let mut g = c.benchmark_group("chip");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(40));
    g.bench_function("vgg16-isaac-pipelined-run", |b| {
        b.iter(|| black_box(run_once(&w, &cfg)))
    });
    let res = run_once(&w, &cfg);
    let chip = cfg.chip.as_ref().expect("chip");
    g.measurement_time(Duration::from_secs(5));
    let vgg16 = workload::zoo::layers("vgg16").expect("a zoo network");
    g.bench_function("vgg16-isaac-pipelined-chip", |b| {
        b.iter(|| {
            black_box(
                sim::chip::evaluate(chip, &res, vgg16.as_slice(), &cfg.hw, cfg.cycle_ns)
                    .expect("fits"),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
