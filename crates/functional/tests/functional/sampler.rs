//! The skip sampler of read noise against the per-read one (docs/functional.md,
//! "Samplers"): the same law of every read, other draws.

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossbar::{AdcBits, Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{Device, FuncOptions, Layer, LayerRun, Sampler};
use std::collections::BTreeMap;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// Rows of the test layer: 4 carry weights, 2 more are open in odd samples only (they
/// hold zero weights: they change `open`, not the sum).
const K: usize = 6;
/// Columns: column n reads the sum n % 13 (0..=12) of its four 2-bit cells.
const N: usize = 65;

/// A one-slice fc layer of `samples` identical-but-for-`open` vectors whose outputs are
/// each the code of exactly one read (inputs 0 or 1: only the first input cycle reads).
fn layer(samples: usize) -> QuantLayer {
    let mut weights = vec![0i32; N * K];
    for n in 0..N {
        let mut left = (n % 13) as i32;
        for k in 0..4 {
            weights[n * K + k] = left.min(3);
            left -= left.min(3);
        }
    }
    let input = (0..samples)
        .flat_map(|s| [1, 1, 1, 1, (s % 2) as i32, (s % 2) as i32])
        .collect();
    QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(K, N),
        },
        signed: false,
        weights,
        input,
        samples,
    }
}

/// 2-bit cells, 3-bit weights (one slice), 2-bit inputs, one OU of every row.
fn hw(adc_bits: Option<u32>) -> Hardware {
    Hardware {
        xbar_rows: 8,
        xbar_cols: 256,
        cell_bits: 2,
        ou_rows: K as u32,
        ou_cols: 8,
        weight_bits: 3,
        input_bits: 2,
        adc_bits: adc_bits.map_or(AdcBits::Auto, AdcBits::Fixed),
        ..Hardware::default()
    }
}

/// Dense-mode outputs of `l` under `device`, fed `chunk` samples at a time.
fn dense(l: &QuantLayer, hw: &Hardware, f: &FuncOptions, chunk: usize) -> Vec<i64> {
    dense_run(l, hw, f, chunk).0
}

/// [`dense`] and the ADC's clips of the run.
fn dense_run(l: &QuantLayer, hw: &Hardware, f: &FuncOptions, chunk: usize) -> (Vec<i64>, u64) {
    let opts = SimOptions::default();
    let prep = Prepared::new(l, hw, &opts);
    let layer = Layer::new(&prep, hw, &opts, f);
    let mut run = LayerRun::new(&layer, &[Mode::Dense]);
    for start in (0..l.samples).step_by(chunk) {
        let n = chunk.min(l.samples - start);
        run.feed(Samples::new(&l.input[start * K..(start + n) * K], n));
    }
    let out = run.finish().remove(0);
    (out.outputs.unwrap(), out.metrics.adc_clips)
}

/// Per (ideal level I, open), the count of each code read.
type Histogram = BTreeMap<(u64, u32), BTreeMap<i64, u64>>;

fn histogram(l: &QuantLayer, y: &[i64]) -> Histogram {
    let mut h = Histogram::new();
    for (i, &code) in y.iter().enumerate() {
        let (s, n) = (i / N, i % N);
        let open = if s % 2 == 1 { 6 } else { 4 };
        let level = (n % 13) as u64;
        *h.entry((level, open)).or_default().entry(code).or_default() += 1;
        assert_eq!(l.input[s * K + 4], (s % 2) as i32);
    }
    h
}

/// The two-sample chi-square statistic of two histograms of equal totals per class:
/// sum over (class, code) of (a - b)^2 / (a + b), codes with a + b < 10 merged per
/// class; (statistic, degrees of freedom).
fn two_sample(a: &Histogram, b: &Histogram) -> (f64, usize) {
    let (mut stat, mut df) = (0.0, 0usize);
    for (class, ha) in a {
        let hb = &b[class];
        assert_eq!(ha.values().sum::<u64>(), hb.values().sum::<u64>());
        let codes: std::collections::BTreeSet<i64> = ha.keys().chain(hb.keys()).copied().collect();
        let mut bins = Vec::new();
        let (mut ra, mut rb) = (0.0, 0.0);
        for c in codes {
            let (x, y) = (
                ha.get(&c).copied().unwrap_or(0) as f64,
                hb.get(&c).copied().unwrap_or(0) as f64,
            );
            if x + y >= 10.0 {
                bins.push((x, y));
            } else {
                ra += x;
                rb += y;
            }
        }
        if ra + rb > 0.0 {
            bins.push((ra, rb));
        }
        stat += bins
            .iter()
            .map(|(x, y)| (x - y) * (x - y) / (x + y))
            .sum::<f64>();
        df += bins.len() - 1;
    }
    (stat, df)
}

/// Wilson-Hilferty's chi-square quantile on `df` degrees of freedom at the standard
/// normal quantile `z`.
fn chi_square_quantile(df: usize, z: f64) -> f64 {
    let k = df.max(1) as f64;
    let c = 2.0 / (9.0 * k);
    k * (1.0 - c + z * c.sqrt()).powi(3)
}

/// Over about 1.05 * 10^6 reads per sampler and device (16,384 vectors of 64 reads with
/// current), the histogram of the code read per (ideal level, open) agrees between the
/// samplers: the two-sample chi-square statistic stays below the 1 - 10^-6 quantile of
/// its law, so two samplers with the same law fail with probability about 10^-6 per
/// device (the seeds are fixed: the test passes or fails always). The devices cover the
/// alias tables (loud noise) and the gaps per class (quiet noise), IR drop (the base
/// shifted below I, the class depending on open), a clipping 3-bit ADC and adc.step 2;
/// the ADC's counts of clips agree too (a sampler that lost the clips of reads whose
/// noise-free sum does not clip would count too few: the fourth device).
#[test]
fn both_samplers_read_every_level_with_the_same_law() {
    let samples = 1 << 14;
    let l = layer(samples);
    let cases = [
        // (read_noise, ir_drop, adc bits, adc.step, changed codes at least). The first
        // four draw from alias tables (some class changes its code with p >= 0.01),
        // the last keeps gaps per class (p below 0.005 for every class).
        (0.1, 0.0, None, 1, 10_000),
        (0.2, 0.02, Some(3), 1, 10_000),
        (0.15, 0.01, None, 2, 10_000),
        // Weak noise, sums near the top of a 3-bit ADC: classes whose reads can clip
        // while their noise-free sum does not (the clips stay an exact count).
        (0.05, 0.03, Some(3), 1, 10_000),
        (0.05, 0.0, None, 1, 300),
    ];
    for (rn, ir, bits, step, least) in cases {
        let hw = hw(bits);
        let run = |sampler, seed| {
            let f = FuncOptions {
                keep_outputs: true,
                adc_step: step,
                device: Device {
                    read_noise: rn,
                    ir_drop: ir,
                    seed,
                    sampler,
                    ..Device::default()
                },
                ..FuncOptions::default()
            };
            let (y, clips) = dense_run(&l, &hw, &f, samples);
            (histogram(&l, &y), clips)
        };
        let (per_read, clips_p) = run(Sampler::PerRead, 11);
        let (skip, clips_s) = run(Sampler::Skip, 12);
        // The ADC's clips: two counts of independent reads with the same law (each a
        // sum of Bernoulli trials, the variance of their difference at most their sum),
        // 4.9 standard deviations apart at most (about 10^-6 for a correct sampler); the
        // clipping 3-bit ADC does clip.
        let (a, b) = (clips_p as f64, clips_s as f64);
        assert!(
            (a - b).abs() <= 4.9 * (a + b).sqrt() + 1.0,
            "rn {rn} ir {ir}: {clips_p} clips (per-read), {clips_s} (skip)"
        );
        assert!(bits.is_none() || clips_p > 10_000, "{clips_p} clips");
        let reads: u64 = skip.values().flat_map(|h| h.values()).sum();
        assert!(reads >= 1_000_000, "{reads} reads");
        // Some codes differ from the level: the test has something to compare.
        let changed: u64 = skip
            .iter()
            .flat_map(|(c, h)| h.iter().filter(move |e| *e.0 != c.0 as i64).map(|e| e.1))
            .sum();
        assert!(changed > least, "rn {rn}: {changed} changed codes");
        let (stat, df) = two_sample(&per_read, &skip);
        let limit = chi_square_quantile(df, 4.753);
        assert!(
            stat < limit,
            "rn {rn} ir {ir}: chi-square {stat} on {df} df, limit {limit}\nper-read {per_read:?}\nskip {skip:?}"
        );
    }
}

/// The skip sampler's draws are keyed by (seed, layer, vector, class, draw): whole or
/// one sample at a time, on 1 or 2 threads, the outputs are identical; another seed
/// changes them.
#[test]
fn skip_draws_do_not_depend_on_threads_or_chunking() {
    let l = layer(64);
    let hw = hw(None);
    let f = |seed| FuncOptions {
        keep_outputs: true,
        device: Device {
            read_noise: 0.2,
            ir_drop: 0.01,
            seed,
            sampler: Sampler::Skip,
            ..Device::default()
        },
        ..FuncOptions::default()
    };
    let on = |threads: usize, chunk: usize, seed: u64| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| dense(&l, &hw, &f(seed), chunk))
    };
    let whole = on(1, 64, 1);
    assert_eq!(whole, on(2, 1, 1));
    assert_eq!(whole, on(2, 7, 1));
    assert_ne!(whole, on(1, 64, 2));
}

/// `device.sampler = "per-read"` draws the bits it always drew: the outputs of a noisy
/// dense run with IR drop, a clipping 3-bit ADC and adc.step 2, folded into one word,
/// are the word the per-read sampler gave before the default sampler changed (a change
/// to the per-read keys, draws or arithmetic fails this).
#[test]
fn the_per_read_sampler_reproduces_its_old_outputs() {
    let l = layer(256);
    let fold = |y: &[i64]| {
        y.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &v| {
            (h ^ v as u64).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let mut got = Vec::new();
    for (rn, ir, bits, step) in [
        (0.2, 0.0, None, 1),
        (0.2, 0.02, Some(3), 1),
        (0.15, 0.01, None, 2),
    ] {
        let f = FuncOptions {
            keep_outputs: true,
            adc_step: step,
            device: Device {
                read_noise: rn,
                ir_drop: ir,
                seed: 5,
                sampler: Sampler::PerRead,
                ..Device::default()
            },
            ..FuncOptions::default()
        };
        let (y, clips) = dense_run(&l, &hw(bits), &f, 256);
        got.push((fold(&y), clips));
    }
    assert_eq!(got, PER_READ_OUTPUTS);
}

/// (folded outputs, clips) of [`the_per_read_sampler_reproduces_its_old_outputs`]'s
/// three devices under the per-read sampler.
const PER_READ_OUTPUTS: [(u64, u64); 3] = [
    (2_327_230_352_626_116_337, 0),
    (16_841_167_109_542_853_517, 5291),
    (10_180_147_423_630_200_557, 0),
];
