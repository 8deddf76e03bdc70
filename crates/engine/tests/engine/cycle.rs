//! The cycle engine against the closed form of the fast engine: equal on every count
//! and on cycles wherever the closed form applies (a queue of depth 1 — `vector`, or
//! `bit` — and an unbounded one — `none`), on random small layers, hardware, barrier
//! policies and slow stages, and on the lenet5 zoo network; between the two, never
//! slower with a deeper queue.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{arb_case, run};
use crossbar::{Hardware, Mode};
use engine::{simulate_with_stats, EngineError, EngineKind, Prepared, SimOptions};
use pipeline::cycle::{CycleStats, QueueDepth};
use pipeline::{SlowStage, Stage, Sync};
use proptest::prelude::*;
use workload::{LayerKind, LayerSpec, Precision, QuantLayer, SynthParams, Workload, ZooWorkload};

fn cycle_run(
    layer: &QuantLayer,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
) -> (energy::Events, CycleStats) {
    let prep = Prepared::new(layer, hw, opts);
    let (ev, st) = simulate_with_stats(&prep, hw, opts, mode, EngineKind::Cycle, None)
        .expect("cycle engine runs");
    (ev, st.expect("the cycle engine reports stage counters"))
}

fn with_depth(opts: &SimOptions, d: QueueDepth) -> SimOptions {
    let mut o = *opts;
    o.pipeline.queue_depth = d;
    o
}

const FINITE: [u64; 4] = [2, 3, 4, 8];

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn cycle_equals_fast_where_the_closed_form_applies((layer, hw, opts) in arb_case()) {
        // arb_case draws sync bit/vector/none, queue depth auto/1/unbounded and a slow stage.
        for mode in Mode::ALL {
            let f = run(&layer, &hw, &opts, mode, EngineKind::Fast);
            let (c, st) = cycle_run(&layer, &hw, &opts, mode);
            prop_assert_eq!(f, c, "mode {} hw {:?} opts {:?}", mode, hw, opts);
            prop_assert_eq!(st.ous, c.ou_ops);
            if c.cycles > 0 {
                // Every crossbar-cycle issues an OU, stalls, waits, or drains the pipeline.
                let drain = c.crossbars * (pipeline::depth(mode) - 1);
                prop_assert_eq!(
                    st.crossbar_cycles,
                    st.ous + st.stall_cycles() + st.wait_cycles + drain
                );
            }
        }
    }

    #[test]
    fn deeper_queues_recover_imbalance_and_never_cost((layer, hw, opts) in arb_case()) {
        for mode in [Mode::Activation, Mode::Sre, Mode::Dense] {
            let one = cycle_run(&layer, &hw, &with_depth(&opts, QueueDepth::Finite(1)), mode);
            let unbounded = cycle_run(&layer, &hw, &with_depth(&opts, QueueDepth::Unbounded), mode);
            let mut last = one.0.cycles;
            for d in FINITE {
                let (ev, st) = cycle_run(&layer, &hw, &with_depth(&opts, QueueDepth::Finite(d)), mode);
                prop_assert!(ev.cycles <= last, "depth {} took {} > {}", d, ev.cycles, last);
                prop_assert!(ev.cycles >= unbounded.0.cycles);
                // The queue changes when OUs issue, not which: every other count is the same.
                prop_assert_eq!(
                    energy::Events { cycles: 0, busy_cycles: 0, ..ev },
                    energy::Events { cycles: 0, busy_cycles: 0, ..one.0 }
                );
                prop_assert_eq!((st.busy, st.stall), (one.1.busy, one.1.stall));
                last = ev.cycles;
            }
        }
    }
}

/// fc 4 -> 1 on 4x4 crossbars, 2x2 OUs, 1-bit cells, 3-bit weights (cpw 2), 2-bit
/// unsigned inputs (2 input cycles), 1 ADC, decoder 1 row/cycle.
fn tiny() -> (QuantLayer, Hardware) {
    let layer = QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: workload::ConvGeometry::fc(4, 1),
        },
        // Positive weights only: the positive array has 2 columns (slices of n = 0), the
        // negative array is empty.
        weights: vec![3, 3, 3, 0],
        // Two samples: x0 = [1, 1, 1, 0] (3 active rows), x1 = [1, 0, 0, 0] (1 active row).
        input: vec![1, 1, 1, 0, 1, 0, 0, 0],
        samples: 2,
        signed: false,
    };
    let hw = Hardware {
        xbar_rows: 4,
        xbar_cols: 4,
        cell_bits: 1,
        ou_rows: 2,
        ou_cols: 2,
        weight_bits: 3,
        input_bits: 2,
        dac_bits: 1,
        adc_per_crossbar: 1,
        index_rows_per_cycle: 1,
        ..Hardware::default()
    };
    (layer, hw)
}

#[test]
fn stage_counters_by_hand() {
    let (layer, hw) = tiny();
    let opts = SimOptions::default();
    // sre (L = 7): compacted rows of the one column group (width 2) = {0, 1, 2}; one
    // crossbar (the positive block; the empty negative block has no compacted tile).
    // v0: active rows {0, 1, 2} -> OUs of 2 and 1 rows, 2 columns each, in each of the 2
    //     input cycles. OU 2x2: ADC ceil(2/1) = 2, decode ceil(2/1) = 2: II 2, the tie
    //     goes to the earlier stage, index decode. OU 1x2: ADC 2 > decode 1: II 2 at ADC.
    //     issue = 2 x (2 + 2) = 8.
    // v1: active {0}: one 1x2 OU per cycle, II 2 at ADC: issue 4.
    // W = 12 (one crossbar: every policy), cycles 12 + 6 = 18.
    let (ev, st) = cycle_run(&layer, &hw, &opts, Mode::Sre);
    assert_eq!((ev.ou_ops, ev.busy_cycles, ev.cycles), (6, 12, 18));
    let at = |s: Stage| s.index();
    // 2 OUs held index decode 1 extra cycle each; 4 held the ADC 1 extra cycle each.
    assert_eq!(st.stall[at(Stage::IndexDecode)], 2);
    assert_eq!(st.stall[at(Stage::Adc)], 4);
    assert_eq!(st.stall_cycles(), 6);
    assert_eq!(st.busy[at(Stage::Adc)], 6 + 4);
    assert_eq!(st.busy[at(Stage::ShiftAdd)], 6);
    // One crossbar never waits for another; 18 crossbar-cycles = 6 + 6 + 0 + 6 drain.
    assert_eq!((st.wait_cycles, st.crossbar_cycles), (0, 18));
    assert_eq!(st.utilization(Stage::Adc), Some(10.0 / 18.0));
    assert_eq!(st.utilization(Stage::IndexDecode), Some(8.0 / 18.0));

    // dense: 2 crossbars (positive and negative blocks), both drive 4 rows in every
    // cycle: 2 OUs of 2x2 (II 2 at the ADC) per cycle, issue 4 per cycle each, 16 over
    // 2 vectors x 2 cycles. Perfectly balanced: no wait at any depth.
    let (ev, st) = cycle_run(&layer, &hw, &opts, Mode::Dense);
    assert_eq!((ev.busy_cycles, ev.cycles, st.wait_cycles), (16, 20, 0));
    assert_eq!(st.stall[at(Stage::Adc)], 2 * 2 * 2 * 2);
    assert!(!st.has(Stage::IndexDecode) && st.utilization(Stage::IndexDecode).is_none());

    // A 3-cycle shift-and-add: every OU's II is 3, at that stage, in every engine.
    let slow = SimOptions {
        pipeline: pipeline::cycle::PipelineOptions {
            slow_stage: Some(SlowStage {
                stage: Stage::ShiftAdd,
                cycles: 3,
            }),
            ..Default::default()
        },
        ..opts
    };
    let (ev, st) = cycle_run(&layer, &hw, &slow, Mode::Sre);
    // 6 OUs x 3 = 18, cycles 18 + 6 = 24; the fast engine agrees.
    assert_eq!((ev.busy_cycles, ev.cycles), (18, 24));
    assert_eq!(st.stall[at(Stage::ShiftAdd)], 12);
    assert_eq!(
        common::run(&layer, &hw, &slow, Mode::Sre, EngineKind::Fast),
        ev
    );
}

#[test]
fn a_deeper_queue_than_the_closed_form_needs_the_cycle_engine() {
    let (layer, hw) = tiny();
    let opts = with_depth(&SimOptions::default(), QueueDepth::Finite(4));
    let prep = Prepared::new(&layer, &hw, &opts);
    for e in [EngineKind::Fast, EngineKind::Reference] {
        let err = simulate_with_stats(&prep, &hw, &opts, Mode::Sre, e, None).unwrap_err();
        assert_eq!(err, EngineError::QueueNeedsCycle(QueueDepth::Finite(4)));
        assert!(err.to_string().starts_with("pipeline.queue_depth"));
    }
    // Depth 1 under `none` is `vector` in the closed form, unbounded under `vector` is `none`.
    for (sync, d, closed) in [
        (Sync::None, QueueDepth::Finite(1), Sync::Vector),
        (Sync::Vector, QueueDepth::Unbounded, Sync::None),
    ] {
        let o = with_depth(
            &SimOptions {
                sync,
                ..SimOptions::default()
            },
            d,
        );
        let plain = SimOptions {
            sync: closed,
            ..SimOptions::default()
        };
        for mode in Mode::ALL {
            let f = common::run(&layer, &hw, &o, mode, EngineKind::Fast);
            assert_eq!(f, common::run(&layer, &hw, &plain, mode, EngineKind::Fast));
            assert_eq!(f, cycle_run(&layer, &hw, &o, mode).0);
        }
    }
}

/// lenet5 with its real geometry and seeded synthetic weights and inputs.
#[test]
fn lenet5_zoo_network_equals_the_closed_form() {
    let w = ZooWorkload::new("lenet5", SynthParams::default()).expect("zoo network");
    let hw = Hardware::default();
    for i in 0..w.layers().len() {
        let layer = w
            .load_layer(i, Precision::default(), 1)
            .expect("layer loads");
        for sync in [Sync::Vector, Sync::None] {
            let opts = SimOptions {
                sync,
                ..SimOptions::default()
            };
            for mode in Mode::ALL {
                let f = common::run(&layer, &hw, &opts, mode, EngineKind::Fast);
                let (c, _) = cycle_run(&layer, &hw, &opts, mode);
                assert_eq!(f, c, "layer {i} {mode} sync {sync}");
            }
        }
    }
}
