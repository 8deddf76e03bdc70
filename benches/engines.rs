//! Criterion benchmarks of the counting engines.
//!
//! - `cifar10/{fast,reference}`: the whole cifar10 zoo network, all five modes: the
//!   fast/reference ratio.
//! - `vgg16-largest/{fast_sre,popcount_bound}`: vgg16's largest layer (most MACs) in sre
//!   mode against a loop that only popcounts the same active-row masks against the same
//!   column-group masks over the same tile spans: how close the fast engine is to the
//!   popcount bound.
//!
//! Run: `cargo bench --bench engines` (see docs/perf.md for the recorded numbers).
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use crossbar::{Hardware, Mode};
use engine::input::Granularity;
use engine::{simulate, EngineKind, Prepared, SimOptions};
use sparsity::RowMask;
use std::hint::black_box;
use std::time::Duration;
use workload::{Precision, QuantLayer, Structure, SynthParams, Workload, ZooWorkload};

fn params() -> SynthParams {
    SynthParams {
        seed: 1,
        weight_sparsity: 0.7,
        structure: Structure::Ssl,
        act_sparsity: 0.5,
        head_sparsity: 0.0,
    }
}

fn load_all(name: &str) -> Vec<QuantLayer> {
    let w = ZooWorkload::new(name, params()).expect("zoo network");
    (0..w.layers().len())
        .map(|i| {
            w.load_layer(i, Precision::default(), 1)
                .expect("layer loads")
        })
        .collect()
}

fn run_network(layers: &[QuantLayer], engine: EngineKind) -> u64 {
    let (hw, opts) = (Hardware::default(), SimOptions::default());
    let mut cycles = 0;
    for l in layers {
        let prep = Prepared::new(l, &hw, &opts);
        for mode in Mode::ALL {
            cycles += simulate(&prep, &hw, &opts, mode, engine, None)
                .expect("simulates")
                .cycles;
        }
    }
    cycles
}

fn cifar10(c: &mut Criterion) {
    let layers = load_all("cifar10");
    let mut g = c.benchmark_group("cifar10");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("fast", |b| {
        b.iter(|| run_network(black_box(&layers), EngineKind::Fast))
    });
    g.bench_function("reference", |b| {
        b.iter(|| run_network(black_box(&layers), EngineKind::Reference))
    });
    g.finish();
}

/// The active-row masks of every vector of `l` (value granularity, one pass).
fn active_masks(prep: &Prepared, l: &QuantLayer) -> Vec<RowMask> {
    let k = prep.map.k;
    let pass = prep.plan.passes[0];
    let mut v = vec![0; k as usize * prep.map.groups as usize];
    (0..l.vectors())
        .map(|i| {
            l.fill_vector(i, &mut v);
            let mut m = RowMask::new(k);
            for (r, &q) in v[..k as usize].iter().enumerate() {
                if prep.plan.active(Granularity::Value, pass.value(q), 0) {
                    m.set(r as u32);
                }
            }
            m
        })
        .collect()
}

fn vgg16_largest(c: &mut Criterion) {
    let w = ZooWorkload::new("vgg16", params()).expect("zoo network");
    let largest = (0..w.layers().len())
        .max_by_key(|&i| w.layers()[i].geom.macs_per_sample())
        .expect("vgg16 has layers");
    let layer = w
        .load_layer(largest, Precision::default(), 1)
        .expect("layer loads");
    let (hw, opts) = (Hardware::default(), SimOptions::default());
    let prep = Prepared::new(&layer, &hw, &opts);
    let comp = prep.comp();
    let masks = active_masks(&prep, &layer);
    // The (column group, span) pairs the fast engine popcounts, per vector.
    let spans: Vec<(usize, u32, u32)> = prep
        .map
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(bi, b)| {
            let tiles = comp.block_tiles[bi];
            b.col_groups.clone().flat_map(move |cg| {
                (0..tiles).map(move |t| {
                    let (lo, hi) = comp.groups[cg].tile_span(t, hw.xbar_rows);
                    (cg, lo, hi)
                })
            })
        })
        .collect();
    let mut g = c.benchmark_group(format!("vgg16-largest-{}", layer.spec.name));
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("fast_sre", |b| {
        b.iter(|| {
            simulate(&prep, &hw, &opts, Mode::Sre, EngineKind::Fast, None)
                .expect("simulates")
                .ou_ops
        })
    });
    g.bench_function("popcount_bound", |b| {
        b.iter(|| {
            use rayon::prelude::*;
            masks
                .par_iter()
                .map(|m| {
                    spans
                        .iter()
                        .map(|&(cg, lo, hi)| {
                            m.and_count_range(&comp.groups[cg].mask, lo, hi) as u64
                        })
                        .sum::<u64>()
                })
                .sum::<u64>()
        })
    });
    g.finish();
}

criterion_group!(benches, cifar10, vgg16_largest);
criterion_main!(benches);
