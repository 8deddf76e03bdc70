//! The event-driven machine against the literal stepper and against the closed form.

use super::literal::{self, Ou, Unit};
use super::*;
use crate::{layer_cycles, Barrier, SlowStage, Stage, StageModel, Sync};
use crossbar::{Hardware, Mode};
use proptest::prelude::*;

/// One OU run: `count` OUs of `rows` x `cols`.
type Run = (u64, u32, u32);
/// Per vector, per input cycle: (repeat, per crossbar runs).
type Vectors = Vec<Vec<(u64, Vec<Vec<Run>>)>>;

fn machine(
    model: StageModel,
    xbars: usize,
    sync: Sync,
    depth: QueueDepth,
    vectors: &Vectors,
) -> (u64, CycleStats) {
    let mut m = Machine::new(model, xbars, sync, depth);
    for v in vectors {
        for (repeat, per_x) in v {
            for (x, runs) in per_x.iter().enumerate() {
                for &(n, r, c) in runs {
                    m.ous(x, n, r, c);
                }
            }
            m.end_interval(*repeat);
        }
        m.end_vector();
    }
    m.finish()
}

/// The same OUs as literal units: one per input cycle under `bit`, one per vector otherwise.
fn units(model: &StageModel, xbars: usize, sync: Sync, vectors: &Vectors) -> Vec<Unit> {
    let ou = |r: u32, c: u32| Ou {
        ii: model.ii(r, c),
        slowest: model.slowest(r, c),
    };
    let expand = |runs: &[Run]| -> Vec<Ou> {
        runs.iter()
            .flat_map(|&(n, r, c)| std::iter::repeat_n(ou(r, c), n as usize))
            .collect()
    };
    let mut out = Vec::new();
    for v in vectors {
        let mut whole = vec![Vec::new(); xbars];
        for (repeat, per_x) in v {
            for _ in 0..*repeat {
                let ous: Vec<Vec<Ou>> = per_x.iter().map(|r| expand(r)).collect();
                if sync == Sync::Bit {
                    out.push(Unit {
                        ous,
                        ends_vector: false,
                    });
                } else {
                    whole.iter_mut().zip(ous).for_each(|(w, o)| w.extend(o));
                }
            }
        }
        if sync == Sync::Bit {
            match out.last_mut() {
                Some(u) if !u.ends_vector => u.ends_vector = true,
                _ => out.push(Unit {
                    ous: vec![Vec::new(); xbars],
                    ends_vector: true,
                }),
            }
        } else {
            out.push(Unit {
                ous: whole,
                ends_vector: true,
            });
        }
    }
    out
}

/// W + L - 1 of the closed form under `sync`.
fn closed_form(model: &StageModel, xbars: usize, sync: Sync, vectors: &Vectors) -> u64 {
    let mut b = Barrier::new(sync, xbars);
    for v in vectors {
        for (repeat, per_x) in v {
            let issue: Vec<u64> = per_x
                .iter()
                .map(|runs| runs.iter().map(|&(n, r, c)| n * model.ii(r, c)).sum())
                .collect();
            b.interval(&issue, *repeat);
        }
        b.end_vector();
    }
    layer_cycles(b.finish(), model.mode())
}

fn arb_model() -> impl Strategy<Value = StageModel> {
    (
        0usize..5,
        1u32..=4,
        1u32..=9,
        prop::option::of((0usize..7, 1u32..=4)),
    )
        .prop_map(|(m, adc, idx, slow)| {
            let hw = Hardware {
                ou_rows: 4,
                adc_per_crossbar: adc,
                index_rows_per_cycle: idx,
                ..Hardware::default()
            };
            let slow = slow.map(|(s, cycles)| SlowStage {
                stage: Stage::ALL[s],
                cycles,
            });
            StageModel::new(Mode::ALL[m], &hw, slow)
        })
}

fn arb_vectors(xbars: usize) -> impl Strategy<Value = Vectors> {
    let run = (0u64..=3, 1u32..=4, 1u32..=8);
    let per_x = prop::collection::vec(prop::collection::vec(run, 0..=3), xbars);
    let interval = (1u64..=3, per_x);
    prop::collection::vec(prop::collection::vec(interval, 1..=3), 0..=5)
}

fn arb_case() -> impl Strategy<Value = (StageModel, usize, Sync, Vectors)> {
    (arb_model(), 0usize..=4, 0usize..3).prop_flat_map(|(m, x, s)| {
        (
            Just(m),
            Just(x),
            Just([Sync::Bit, Sync::Vector, Sync::None][s]),
            arb_vectors(x),
        )
    })
}

const DEPTHS: [QueueDepth; 5] = [
    QueueDepth::Finite(1),
    QueueDepth::Finite(2),
    QueueDepth::Finite(3),
    QueueDepth::Finite(5),
    QueueDepth::Unbounded,
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn machine_equals_literal_stepping((model, xbars, sync, vectors) in arb_case()) {
        let lit_units = units(&model, xbars, sync, &vectors);
        for depth in DEPTHS {
            let (cycles, st) = machine(model, xbars, sync, depth, &vectors);
            let lit = literal::run(model.mode(), depth, xbars, &lit_units);
            prop_assert_eq!(cycles, lit.cycles, "depth {}", depth);
            prop_assert_eq!(st.ous, lit.ous);
            prop_assert_eq!(st.busy, lit.busy, "depth {}", depth);
            prop_assert_eq!(st.stall, lit.stall);
            prop_assert_eq!(st.wait_cycles, lit.wait, "depth {}", depth);
            prop_assert_eq!(st.psum_peak, lit.psum_peak, "depth {}", depth);
            // A crossbar is never more than d units ahead of the slowest one.
            if let QueueDepth::Finite(d) = depth {
                prop_assert!(st.psum_peak <= d);
            }
            // Issue paced by II never lets an OU catch up with the one ahead.
            prop_assert_eq!(lit.blocked, [0; 7]);
            // Every crossbar-cycle of the layer is an issue cycle, a stall, a wait or drain.
            if cycles > 0 {
                let drain = xbars as u64 * (model.depth() - 1);
                prop_assert_eq!(
                    st.crossbar_cycles,
                    st.ous + st.stall_cycles() + st.wait_cycles + drain
                );
            }
        }
    }

    #[test]
    fn extremes_equal_the_closed_form((model, xbars, sync, vectors) in arb_case()) {
        let auto = machine(model, xbars, sync, QueueDepth::Auto, &vectors).0;
        prop_assert_eq!(auto, closed_form(&model, xbars, sync, &vectors));
        for depth in [QueueDepth::Finite(1), QueueDepth::Unbounded] {
            let want = closed_form(&model, xbars, depth.closed_form(sync).unwrap(), &vectors);
            prop_assert_eq!(machine(model, xbars, sync, depth, &vectors).0, want);
        }
    }

    #[test]
    fn deeper_queues_never_take_longer((model, xbars, sync, vectors) in arb_case()) {
        let cycles: Vec<u64> = DEPTHS
            .iter()
            .map(|&d| machine(model, xbars, sync, d, &vectors).0)
            .collect();
        prop_assert!(cycles.windows(2).all(|w| w[0] >= w[1]), "{:?}", cycles);
    }
}

#[test]
fn queue_depth_by_hand() {
    // Two crossbars, four vectors of one input cycle, dense (L = 5), II 1 OUs:
    // issue x0 = [2, 2, 0, 0], x1 = [0, 0, 2, 2].
    let model = StageModel::new(Mode::Dense, &Hardware::default(), None);
    let v = |a: u64, b: u64| vec![(1, vec![vec![(a, 9, 8)], vec![(b, 9, 8)]])];
    let vectors: Vectors = vec![v(2, 0), v(2, 0), v(0, 2), v(0, 2)];
    let run = |d| machine(model, 2, Sync::None, d, &vectors);
    // depth 1: every vector waits for the slower crossbar: W = 2 + 2 + 2 + 2 = 8.
    // depth 2: F0 = [2, 0], F1 = [4, 0]; v2 enters when both finished v0 (G0 = 2):
    //   F2 = [4, 2 + 2 = 4]; v3 waits for G1 = 4: F3(x1) = 4 + 2 = 6. W = 6.
    // depth 3: v3 waits only for G0 = 2: F3(x1) = max(2, F2 = 2) + 2 = 4. W = 4.
    // unbounded: max(4, 4) = 4. Cycles W + 4.
    let cycles = [1, 2, 3].map(|d| run(QueueDepth::Finite(d)).0);
    assert_eq!(cycles, [12, 10, 8]);
    let (c, st) = run(QueueDepth::Unbounded);
    assert_eq!(c, 8);
    // x1 finishes v0 and v1 at cycle 0 and holds both partial sums until x0 finishes.
    assert_eq!(st.psum_peak, 2);
    // 2 crossbars x W 4 = 8 crossbar-cycles, 8 of them issuing: no wait.
    assert_eq!((st.wait_cycles, st.stall_cycles()), (0, 0));
    let (_, st1) = run(QueueDepth::Finite(1));
    // depth 1: 2 x 8 - 8 issued = 8 waiting.
    assert_eq!(st1.wait_cycles, 8);
    assert_eq!(st1.busy[Stage::Adc.index()], 8);
    assert!(!st1.has(Stage::IndexDecode));
}

#[test]
fn stalls_by_hand() {
    // sre, ou.rows 4 (from arb_model's hardware), ADC 2 per crossbar, decoder 2 rows/cycle.
    // One crossbar, one vector: 1 OU of 4x2 (decode 2, ADC 1: II 2 at index decode),
    // 1 OU of 1x6 (decode 1, ADC 3: II 3 at the ADC). W = 5, cycles 5 + 6 = 11.
    let hw = Hardware {
        ou_rows: 4,
        adc_per_crossbar: 2,
        index_rows_per_cycle: 2,
        ..Hardware::default()
    };
    let model = StageModel::new(Mode::Sre, &hw, None);
    let vectors: Vectors = vec![vec![(1, vec![vec![(1, 4, 2), (1, 1, 6)]])]];
    let (c, st) = machine(model, 1, Sync::Vector, QueueDepth::Auto, &vectors);
    assert_eq!(c, 11);
    assert_eq!(st.stall[Stage::IndexDecode.index()], 1);
    assert_eq!(st.stall[Stage::Adc.index()], 2);
    // busy: 2 OUs in every stage, plus the stalls of the slowest ones.
    assert_eq!(st.busy[Stage::Adc.index()], 4);
    assert_eq!(st.busy[Stage::ShiftAdd.index()], 2);
    // The ADC-bound OU behind the decode-bound one would overlap its slow stage with it
    // in a pipeline that let it in early; paced issue keeps the closed form's 11.
    let lit = literal::run(
        Mode::Sre,
        QueueDepth::Finite(1),
        1,
        &units(&model, 1, Sync::Vector, &vectors),
    );
    assert_eq!(lit.cycles, 11);
}

#[test]
fn empty_layers_take_no_cycles() {
    let model = StageModel::new(Mode::Sre, &Hardware::default(), None);
    for xbars in [0, 3] {
        let vectors: Vectors = vec![vec![(2, vec![vec![]; xbars])]; 3];
        for depth in DEPTHS {
            let (c, st) = machine(model, xbars, Sync::Bit, depth, &vectors);
            assert_eq!(
                (c, st.ous, st.wait_cycles, st.crossbar_cycles),
                (0, 0, 0, 0)
            );
        }
    }
}
