//! The accuracy path on lenet5-mnist computed in batches: a sample's record does not
//! depend on the batch size, the number of threads or the range of samples run, and the
//! exact fast path changes no figure of an ideal device.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use accuracy::{evaluate_samples, reduce, Machine, SampleRecord};
use crossbar::Mode;
use std::ops::Range;

fn records(
    sets: &[&str],
    modes: &[Mode],
    range: Range<usize>,
    batch: usize,
    threads: usize,
    fast: bool,
) -> Vec<SampleRecord> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let cfg = sim::config::load_cli(None, &sets).unwrap();
    let w = sim::accuracy::open_bundle(None, &cfg, "--workload").unwrap();
    let net = sim::accuracy::load_network(&w, &cfg).unwrap();
    assert!(net.batchable());
    let func = functional::FuncOptions {
        exact_fast_path: fast,
        ..sim::functional::options(&cfg, false)
    };
    let machine = Machine {
        hw: &cfg.hw,
        sim: &cfg.opts,
        func: &func,
    };
    let crossbar = vec![true; net.layers.len()];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| evaluate_samples(&net, &machine, modes, &crossbar, range, batch, &|_| {}))
        .unwrap()
}

/// Batches of 1, 3 and all, on one and two threads, and a range that starts mid-way:
/// the same records, on an ideal device (the fast path) and a noisy one (every read).
#[test]
fn records_do_not_depend_on_batches_threads_or_ranges() {
    let modes = [Mode::Dense, Mode::Sre];
    for sets in [&[][..], &["device.read_noise=0.2"][..]] {
        let all = records(sets, &modes, 0..5, 5, 2, true);
        assert_eq!(all.len(), 5);
        assert_eq!(all, records(sets, &modes, 0..5, 1, 1, true), "{sets:?}");
        assert_eq!(all, records(sets, &modes, 0..5, 3, 2, true), "{sets:?}");
        assert_eq!(
            all[2..],
            records(sets, &modes, 2..5, 2, 2, true)[..],
            "{sets:?}"
        );
        let ev = reduce(&all, &modes);
        assert_eq!(ev.samples, 5);
        assert_eq!(ev.modes.len(), 2);
        let noisy = !sets.is_empty();
        for p in &ev.modes {
            let exact = p.layers.iter().all(|l| l.func.exact == l.func.outputs);
            assert!(p.layers.iter().all(|l| l.crossbar && l.func.outputs > 0));
            assert_eq!(exact, !noisy, "{:?} {sets:?}", p.mode);
        }
    }
}

/// On an ideal device the fast path and the datapath read OU by OU give the same
/// records, figures of the datapath included.
#[test]
fn the_exact_fast_path_changes_no_figure() {
    let modes = [Mode::Dense, Mode::Ideal];
    let fast = records(&[], &modes, 0..2, 2, 2, true);
    let slow = records(&[], &modes, 0..2, 2, 2, false);
    assert_eq!(fast, slow);
}

/// A real CNN's graph (hard-swish, squeeze-and-excitation products broadcast over the
/// batch, global pooling, flatten) runs in a batch of two as one sample at a time.
#[test]
fn a_mobilenetv3_graph_runs_in_batches_as_sample_by_sample() {
    let cfg = sim::config::load_cli(None, &[]).unwrap();
    let w = sim::accuracy::open_bundle(Some("ppocr-cls-mobilenetv3"), &cfg, "--workload").unwrap();
    let net = sim::accuracy::load_network(&w, &cfg).unwrap();
    assert!(net.batchable());
    let func = sim::functional::options(&cfg, false);
    let machine = Machine {
        hw: &cfg.hw,
        sim: &cfg.opts,
        func: &func,
    };
    let crossbar = vec![true; net.layers.len()];
    let run = |batch| {
        evaluate_samples(
            &net,
            &machine,
            &[Mode::Sre],
            &crossbar,
            0..2,
            batch,
            &|_| {},
        )
        .unwrap()
    };
    assert_eq!(run(2), run(1));
}
