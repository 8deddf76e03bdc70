//! The accuracy path (`sresim accuracy`) on lenet5-mnist: the float and quantized
//! networks and all five modes, on an ideal device (every mode on the exact fast path)
//! and with read noise in the dense mode (every OU read; the default sampler and the
//! per-read one). docs/perf.md records the figures next to a float inference of the
//! same digits.

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use crossbar::Mode;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("accuracy");
    g.sample_size(10);
    for (name, sets, modes, samples) in [
        (
            "lenet5-mnist 100 digits, ideal device, five modes",
            vec![],
            Mode::ALL.to_vec(),
            100,
        ),
        (
            "lenet5-mnist 10 digits, read_noise 0.2, dense",
            vec!["device.read_noise=0.2".to_string()],
            vec![Mode::Dense],
            10,
        ),
        (
            "lenet5-mnist 10 digits, read_noise 0.2, dense, per-read sampler",
            vec![
                "device.read_noise=0.2".to_string(),
                "device.sampler=per-read".to_string(),
            ],
            vec![Mode::Dense],
            10,
        ),
    ] {
        let cfg = sim::config::load_cli(None, &sets).unwrap();
        let w = sim::accuracy::open_bundle(None, &cfg, "--workload").unwrap();
        let net = sim::accuracy::load_network(&w, &cfg).unwrap();
        let crossbar = vec![true; net.layers.len()];
        g.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    sim::accuracy::evaluate(&net, &cfg, &modes, &crossbar, samples, &|_| {})
                        .unwrap(),
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
