//! The functional datapath's bitline reads per second, noise-free and with read noise,
//! against loops that do only the same popcounts (noise-free) or the same random draws
//! (noisy): docs/perf.md records the ratios.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion};
use crossbar::{Hardware, Mode};
use engine::{EngineKind, Prepared, Samples, SimOptions};
use functional::rng::{hash, mix, normal};
use functional::{Device, FuncOptions, Layer, LayerRun, Sampler};
use std::hint::black_box;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// A 64 -> 64 3x3 conv on 14 x 14, half the weights and inputs zero, 8-bit inputs.
fn layer() -> QuantLayer {
    let geom = ConvGeometry::conv(64, 64, 3, 1, 1, 1, [14, 14]);
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let weights = (0..geom.weight_elements())
        .map(|_| {
            if next() % 2 == 0 {
                0
            } else {
                (next() % 2001) as i32 - 1000
            }
        })
        .collect();
    let input = (0..geom.input_elements())
        .map(|_| {
            if next() % 2 == 0 {
                0
            } else {
                (next() % 256) as i32
            }
        })
        .collect();
    QuantLayer {
        spec: LayerSpec {
            name: "conv".into(),
            kind: LayerKind::Conv,
            geom,
        },
        weights,
        input,
        samples: 1,
        signed: false,
    }
}

fn bench(c: &mut Criterion) {
    let l = layer();
    let hw = Hardware::default();
    let opts = SimOptions::default();
    let prep = Prepared::new(&l, &hw, &opts);
    let mode = Mode::Dense;
    let reads = engine::simulate(&prep, &hw, &opts, mode, EngineKind::Fast, None)
        .expect("counts")
        .adc_conversions;
    let run = |device: Device| {
        let f = FuncOptions {
            device,
            ..FuncOptions::default()
        };
        let layer = Layer::new(&prep, &hw, &opts, &f);
        let mut r = LayerRun::new(&layer, &[mode]);
        r.feed(Samples::new(&l.input, 1));
        r.finish()
    };
    let mut g = c.benchmark_group("functional");
    g.sample_size(10);
    println!("dense reads per run: {reads}");
    g.bench_function("dense noise-free", |b| b.iter(|| run(Device::default())));
    let noisy = Device {
        read_noise: 0.02,
        sampler: Sampler::PerRead,
        ..Device::default()
    };
    g.bench_function("dense read noise", |b| b.iter(|| run(noisy.clone())));
    // The skip sampler (the default) at the same noise (gaps per class) and at 0.2
    // (alias tables: one uniform per read), against the per-read sampler at 0.2.
    for (name, rn, sampler) in [
        ("dense read noise skip", 0.02, Sampler::Skip),
        ("dense read noise 0.2 skip", 0.2, Sampler::Skip),
        ("dense read noise 0.2 per-read", 0.2, Sampler::PerRead),
    ] {
        let d = Device {
            read_noise: rn,
            sampler,
            ..Device::default()
        };
        g.bench_function(name, |b| b.iter(|| run(d.clone())));
    }
    // Per-cell reads that draw nothing (the dlrsim-rram preset's variation and off
    // current): cached conductances summed a block of columns at a time.
    let cells = Device {
        on_off_ratio: Some(19.05),
        sigma: 0.162,
        ..Device::default()
    };
    g.bench_function("dense per-cell dlrsim-rram", |b| {
        b.iter(|| run(cells.clone()))
    });
    // The bounds: per read, the two cell-plane popcounts of one word (2-bit cells,
    // 1-bit digits), or one keyed normal draw (one mix of the read's key, as the
    // datapath's, and the ziggurat), compiled with the same instructions as the datapath.
    let words: Vec<u64> = (0..4096u64).map(|i| hash(3, &[i])).collect();
    g.bench_function("popcount bound", |b| {
        b.iter(|| black_box(popcounts(&words, reads)))
    });
    g.bench_function("draw bound", |b| b.iter(|| black_box(draws(reads))));
    g.finish();
}

/// `reads` reads of two popcounts each.
fn popcounts(words: &[u64], reads: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has been checked to support popcnt.
        return unsafe { popcounts_native(words, reads) };
    }
    popcounts_any(words, reads)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn popcounts_native(words: &[u64], reads: u64) -> u64 {
    popcounts_any(words, reads)
}

#[inline(always)]
fn popcounts_any(words: &[u64], reads: u64) -> u64 {
    let mut sum = 0u64;
    for r in 0..reads as usize {
        let x = words[r & 4095];
        let (p0, p1) = (words[(r * 7) & 4095], words[(r * 13) & 4095]);
        sum += (x & p0).count_ones() as u64 + (((x & p1).count_ones() as u64) << 1);
    }
    sum
}

/// `reads` keyed normal draws.
fn draws(reads: u64) -> f64 {
    let base = hash(5, &[1]);
    (0..reads).map(|r| normal(mix(base ^ r))).sum()
}

criterion_group!(benches, bench);
criterion_main!(benches);
