//! `sresim search`'s samples, each on a device draw of its own
//! (`sim::accuracy::drawn_records`): the float and quantized networks batched, the layers
//! mapped once, only the programming and the reads per sample. Every record must be the
//! one `seeded_records` computes for that sample alone on its draw, with drift
//! compensation and a calibrated ADC too, on any number of threads.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use accuracy::SampleRecord;
use crossbar::Mode;

fn each_alone(sets: &[&str], modes: &[Mode], range: std::ops::Range<usize>) -> Vec<SampleRecord> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let cfg = sim::config::load_cli(None, &sets).unwrap();
    let w = sim::accuracy::open_bundle(None, &cfg, "--workload").unwrap();
    let net = sim::accuracy::load_network(&w, &cfg).unwrap();
    let crossbar = vec![true; net.layers.len()];
    let cal = sim::accuracy::calibration(&net, &cfg, modes, &crossbar, &|_| {}).unwrap();
    range
        .flat_map(|i| {
            let seed = sim::draws::seed(cfg.device.seed, i as u32);
            let r = (i..i + 1, 1);
            sim::accuracy::seeded_records(&net, &cfg, modes, &crossbar, r, (seed, &cal), &|_| {})
                .unwrap()
        })
        .collect()
}

fn drawn(
    sets: &[&str],
    modes: &[Mode],
    range: std::ops::Range<usize>,
    threads: usize,
) -> Vec<SampleRecord> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let cfg = sim::config::load_cli(None, &sets).unwrap();
    let w = sim::accuracy::open_bundle(None, &cfg, "--workload").unwrap();
    let net = sim::accuracy::load_network(&w, &cfg).unwrap();
    let crossbar = vec![true; net.layers.len()];
    let cal = sim::accuracy::calibration(&net, &cfg, modes, &crossbar, &|_| {}).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| sim::accuracy::drawn_records(&net, &cfg, modes, &crossbar, range, &cal))
        .unwrap()
}

#[test]
fn a_drawn_sample_is_the_sample_read_alone_on_its_draw() {
    let modes = [Mode::Dense, Mode::Sre];
    for sets in [
        // Programming variation, a 4-bit ADC calibrated to each layer's largest sum.
        &[
            "device.preset=dlrsim-rram",
            "adc.bits=4",
            "adc.range=max",
            "ou.rows=64",
        ][..],
        // Drift, compensated per draw on the calibration inputs.
        &[
            "device.sigma=0.05",
            "device.drift_nu=[[0.5, 0.05, 0.02]]",
            "device.time_s=1000",
            "device.drift_compensation=on",
            "adc.calibration_samples=3",
            "ou.rows=128",
        ][..],
    ] {
        let alone = each_alone(sets, &modes, 3..6);
        assert_eq!(alone.len(), 3);
        assert_eq!(alone, drawn(sets, &modes, 3..6, 2), "{sets:?}");
        // One thread, a range that starts later: the same records of the same samples.
        assert_eq!(alone[1..], drawn(sets, &modes, 4..6, 1)[..], "{sets:?}");
    }
}
