//! Hand-computed tiny chips and properties of placement and schedules.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chip::*;
use proptest::prelude::*;
use toml::{Table, Value};

/// A small chip: `mesh` routers of one tile, `upt` units of `cpu` crossbars.
fn small(mesh: (u32, u32), upt: u32, cpu: u32, sets: &[(&str, Value)]) -> ChipSpec {
    let mut t = Table::new();
    t.insert("mesh_x".into(), Value::Integer(mesh.0 as i64));
    t.insert("mesh_y".into(), Value::Integer(mesh.1 as i64));
    t.insert("tiles_per_router".into(), Value::Integer(1));
    t.insert("units_per_tile".into(), Value::Integer(upt as i64));
    t.insert("crossbars_per_unit".into(), Value::Integer(cpu as i64));
    for (k, v) in sets {
        t.insert(k.to_string(), v.clone());
    }
    ChipSpec::from_preset(ISAAC_PRESET_TOML, &t).unwrap()
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn lm(crossbars: u64, busy: u64, vectors: u64) -> LayerMode {
    LayerMode {
        crossbars,
        vectors,
        busy_cycles: busy,
        cycles: if busy > 0 { busy + 4 } else { 0 },
        digital_cycles: 0,
    }
}

fn shape(in_rows: u64, out_rows: u64, k: u64, stride: u64, out_bytes: u64) -> LayerShape {
    LayerShape {
        name: "l".into(),
        out_rows,
        in_rows,
        kernel_rows: k,
        stride_rows: stride,
        pad_rows: 0,
        dilation_rows: 1,
        out_bytes,
    }
}

fn ctx(samples: u64) -> Context {
    Context {
        xbar_rows: 128,
        xbar_cols: 128,
        cycle_ns: 1.0,
        samples,
    }
}

/// 16 crossbars (1 tile x 4 units x 4). A: 3 crossbars, W 100; B: 2 crossbars, W 40.
/// One copy each takes 2 units, 2 spare. Balance: A gets a 2nd copy (6 crossbars, 2
/// units; spare 1), a 3rd (9, 3 units; spare 0), B a 2nd (4 crossbars, still 1 unit),
/// A a 4th (12, still 3 units, W 25); A's 5th needs a 4th unit: stop.
#[test]
fn balance_by_hand() {
    let spec = small((1, 1), 4, 4, &[("replication", s("balance"))]);
    let layers = [lm(3, 100, 10), lm(2, 40, 10)];
    let Placed::Fits(p) = place(&spec, &layers) else {
        panic!("fits")
    };
    let r: Vec<(u64, u64, u64)> = p
        .layers
        .iter()
        .map(|l| (l.replicas, l.crossbars, l.units))
        .collect();
    assert_eq!(r, vec![(4, 12, 3), (2, 4, 1)]);
    assert_eq!(p.layers[1].first_unit, 3);
    assert_eq!(p.tiles_used, 1);
    assert_eq!(p.chip_utilization, 1.0);
    assert_eq!(p.layers[0].utilization(4), Some(1.0));
    // With 2 input vectors in the run, A's 4 copies make its run 50 cycles (2 copies at
    // work), while a stream of images sees 25 cycles per run's worth of images.
    let modes = [lm(3, 100, 2), lm(2, 40, 10)];
    let Placed::Fits(p) = place(&spec, &modes) else {
        panic!("fits")
    };
    assert_eq!(p.layers[0].replicas, 4);
    let shapes = [shape(1, 1, 1, 1, 1), shape(1, 1, 1, 1, 1)];
    let spec = small(
        (1, 1),
        4,
        4,
        &[
            ("replication", s("balance")),
            ("data_movement", s("free")),
            ("schedule", s("pipelined")),
        ],
    );
    let t = schedule(&spec, &ctx(1), &shapes, &modes, &p).unwrap();
    assert_eq!(t.layers[0].busy_cycles, 50);
    assert_eq!(t.layers[0].end, 54);
    assert_eq!(t.cycles_per_image, 25.0);
}

/// L1: 4 output rows of 2 cycles; L2: 2x1 kernel, stride 2 on its 4 input rows, 3
/// cycles a row; L = 5 (4 cycles of depth). Free data movement.
/// pipelined: L1 rows finish 2, 4, 6, 8 and are ready at 6, 8, 10, 12. L2's row 0
/// needs input rows 0..=1 (ready 8): 8..11; row 1 needs 2..=3 (ready 12): 12..15, one
/// stall cycle; ready at 19. layer-by-layer: 12 + (6 + 4) = 22.
#[test]
fn two_layers_by_hand_free() {
    let shapes = [shape(4, 4, 1, 1, 8), shape(4, 2, 2, 2, 4)];
    let modes = [lm(1, 8, 4), lm(1, 6, 2)];
    for (sched, run, stall) in [("pipelined", 19, 1), ("layer-by-layer", 22, 0)] {
        let spec = small(
            (1, 1),
            4,
            4,
            &[("schedule", s(sched)), ("data_movement", s("free"))],
        );
        let Placed::Fits(p) = place(&spec, &modes) else {
            panic!()
        };
        let t = schedule(&spec, &ctx(1), &shapes, &modes, &p).unwrap();
        assert_eq!((t.run_cycles, t.latency_cycles), (run, run), "{sched}");
        assert_eq!(t.layers[1].stall_cycles, stall, "{sched}");
        assert_eq!(t.network_bytes, 0);
        assert_eq!(t.network_pj, 0.0);
    }
}

/// The digital unit after L1 (`digital_cycles` D = 6 over 2 images, 3 each), free data
/// movement, L = 5 (4 cycles of depth). L1: 8 rows (4 an image) of 2 cycles, finishing
/// 2, 4, .., 16; L2 (1x1 on 4 rows, 2 an image): 3 cycles a row.
/// pipelined: image 0's last L1 row is ready at 12, the unit runs 12..15; image 1's at
/// 20, the unit 20..23 (L1 ends at 23). L2: 15..18, 18..21, then image 1 waits for 23
/// (2 stall cycles): 23..26, 26..29, ready 33. One image alone: the unit 12..15, L2
/// 15..18, 18..21, ready 25.
/// layer-by-layer: L1 16 + 4 + 6 = 26, L2 26 + 12 + 4 = 42 (36 without the unit, plus
/// D); one image: 8 + 4 + 3 = 15, then 15 + 6 + 4 = 25.
#[test]
fn digital_unit_by_hand() {
    let shapes = [shape(4, 4, 1, 1, 8), shape(2, 2, 1, 1, 4)];
    let mut modes = [lm(1, 16, 8), lm(1, 12, 4)];
    modes[0].digital_cycles = 6;
    for (sched, run, l2_stall) in [("pipelined", 33, 2), ("layer-by-layer", 42, 0)] {
        let spec = small(
            (1, 1),
            4,
            4,
            &[("schedule", s(sched)), ("data_movement", s("free"))],
        );
        let Placed::Fits(p) = place(&spec, &modes) else {
            panic!()
        };
        let t = schedule(&spec, &ctx(2), &shapes, &modes, &p).unwrap();
        assert_eq!(t.run_cycles, run, "{sched}");
        assert_eq!(t.latency_cycles, 25, "{sched}");
        assert_eq!(t.layers[1].stall_cycles, l2_stall, "{sched}");
        let l1_end = if sched == "pipelined" { 23 } else { 26 };
        assert_eq!(t.layers[0].end, l1_end, "{sched}");
        // Steady state: the slowest stage per run's worth of images, the unit's 6 cycles
        // under L1's 16; with D = 40 the unit is the slowest stage (40 / 2 images).
        if sched == "pipelined" {
            assert_eq!(t.cycles_per_image, 8.0);
            let mut slow = modes;
            slow[0].digital_cycles = 40;
            let t = schedule(&spec, &ctx(2), &shapes, &slow, &p).unwrap();
            assert_eq!(t.cycles_per_image, 20.0);
        }
    }
}

/// A pooling between L1 and L2 (L1's 4 output rows become L2's 2 input rows), none
/// between L2 and L3. L1: 2 cycles a row, ready 6, 8, 10, 12; L2 (1x1): 3 cycles a row;
/// L3 (1x1): 2 cycles a row; L = 5 (4 cycles of depth). Free data movement.
/// pipelined: L2 row 0 needs L1 row 1 (8): 8..11, row 1 needs row 3 (12): 12..15,
/// ready 15 and 19; L3 15..17, 19..21 (stall 2): 25.
/// pipelined-pool-barrier: L2 waits for L1's last row (12): 12..15, 15..18, ready 19
/// and 22; L3 19..21, 22..24 (stall 1): 28.
/// layer-by-layer: 12 + 10 + 8 = 30.
#[test]
fn pool_barrier_by_hand() {
    let shapes = [
        shape(4, 4, 1, 1, 8),
        shape(2, 2, 1, 1, 4),
        shape(2, 2, 1, 1, 4),
    ];
    let modes = [lm(1, 8, 4), lm(1, 6, 2), lm(1, 4, 2)];
    for (sched, run, l2_start, l3_stall) in [
        ("pipelined", 25, 8, 2),
        ("pipelined-pool-barrier", 28, 12, 1),
        ("layer-by-layer", 30, 12, 0),
    ] {
        let spec = small(
            (1, 1),
            4,
            4,
            &[("schedule", s(sched)), ("data_movement", s("free"))],
        );
        let Placed::Fits(p) = place(&spec, &modes) else {
            panic!()
        };
        let t = schedule(&spec, &ctx(1), &shapes, &modes, &p).unwrap();
        assert_eq!(t.run_cycles, run, "{sched}");
        assert_eq!(t.layers[1].start, l2_start, "{sched}");
        assert_eq!(t.layers[2].stall_cycles, l3_stall, "{sched}");
    }
}

/// The same with an 8-bit link at 1 GHz (1 byte/ns = 1 byte a cycle) and 8 bytes to move:
/// 2 cycles a row, both layers on one router (0 hops).
/// pipelined: rows cross at 6..8, 8..10, 10..12, 12..14; L2 row 0 at 10..13, row 1 at
/// 14..17 (1 stall), ready 21. layer-by-layer: 12 + 8 + 10 = 30, stall 8.
#[test]
fn two_layers_by_hand_with_a_link() {
    let shapes = [shape(4, 4, 1, 1, 8), shape(4, 2, 2, 2, 4)];
    let modes = [lm(1, 8, 4), lm(1, 6, 2)];
    for (sched, run, stall) in [("pipelined", 21, 1), ("layer-by-layer", 30, 8)] {
        let spec = small(
            (1, 1),
            4,
            4,
            &[
                ("schedule", s(sched)),
                ("link_bits", Value::Integer(8)),
                ("link_ghz", Value::Float(1.0)),
            ],
        );
        let Placed::Fits(p) = place(&spec, &modes) else {
            panic!()
        };
        let t = schedule(&spec, &ctx(1), &shapes, &modes, &p).unwrap();
        assert_eq!(t.run_cycles, run, "{sched}");
        assert_eq!(t.layers[1].stall_cycles, stall, "{sched}");
        assert_eq!(t.layers[0].transfer_cycles, 8);
        assert_eq!(t.layers[0].hops, 0);
        assert_eq!(t.offchip_bytes, 0);
    }
}

/// Two routers in a row, one unit per tile: L1 on router (0,0), L2 on (1,0): one hop of
/// 0.833 ns = 1 cycle at 1 ns, 8 bytes x 8 bits x 1 hop x 0.137 pJ. An eDRAM of 1/256
/// KB (4 bytes) cannot hold L1's 8 bytes: they go off chip and back (16 bytes at 6.4
/// GB/s = 2.5 ns more, transfer ceil(8/4.8 + 2.5) = 5 cycles).
#[test]
fn hops_and_spills_by_hand() {
    let shapes = [shape(4, 4, 1, 1, 8), shape(4, 2, 2, 2, 4)];
    let modes = [lm(4, 8, 4), lm(4, 6, 2)];
    let spec = small(
        (2, 1),
        1,
        4,
        &[("edram_kb_per_tile", Value::Float(4.0 / 1024.0))],
    );
    let Placed::Fits(p) = place(&spec, &modes) else {
        panic!()
    };
    let t = schedule(&spec, &ctx(1), &shapes, &modes, &p).unwrap();
    assert_eq!(t.layers[0].hops, 1);
    assert_eq!(t.network_bytes, 8);
    assert!((t.network_pj - 64.0 * 0.137).abs() < 1e-9);
    assert_eq!(t.layers[0].spill_bytes, 16);
    assert_eq!(t.offchip_bytes, 16);
    assert!((t.offchip_pj - 128.0 * 50.8).abs() < 1e-9);
    assert_eq!(t.layers[0].transfer_cycles, 5);
    // layer-by-layer: 12, then 5 cycles of transfer and 1 of hop, then 10.
    assert_eq!(t.run_cycles, 12 + 5 + 1 + 10);
}

/// A mode larger than the chip: an error-free note without reprogramming, segments with
/// it (each written: 128 rows x 50.88 ns = 6513 cycles at 1 ns), and a layer larger than
/// the whole chip fits neither way.
#[test]
fn overflow_by_hand() {
    let modes = [lm(8, 10, 1), lm(8, 10, 1), lm(4, 10, 1)];
    let spec = small((1, 1), 2, 8, &[]);
    assert_eq!(
        place(&spec, &modes),
        Placed::DoesNotFit {
            needed: 20,
            available: 16,
            chips: 1
        }
    );
    let spec = small((1, 1), 2, 8, &[("overflow", s("reprogram"))]);
    let Placed::Reprogrammed(p) = place(&spec, &modes) else {
        panic!()
    };
    assert_eq!(p.segments, 2);
    assert_eq!(
        p.layers.iter().map(|l| l.segment).collect::<Vec<_>>(),
        [0, 0, 1]
    );
    assert_eq!(p.layers[2].first_unit, 0);
    let shapes = [
        shape(1, 1, 1, 1, 1),
        shape(1, 1, 1, 1, 1),
        shape(1, 1, 1, 1, 1),
    ];
    let t = schedule(&spec, &ctx(1), &shapes, &modes, &p).unwrap();
    assert_eq!(t.write_cycles, 2 * 6513);
    assert_eq!(t.write_pj, 20.0 * 128.0 * 3910.0);
    assert!(t.run_cycles >= 2 * 6513 + 3 * 14);
    assert!(matches!(
        place(&spec, &[lm(17, 10, 1)]),
        Placed::DoesNotFit { .. }
    ));
    // No mode fits: one error naming what is needed and available.
    let spec = small((1, 1), 2, 8, &[]);
    let e = evaluate(
        &spec,
        &AreaTable::isaac_32nm(),
        &ctx(1),
        &shapes,
        &[("dense".into(), modes.to_vec(), 0.0)],
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "no mode fits the chip: 20 crossbars needed by the smallest mode (dense), 16 available on 1 chip(s) of 16"
    );
}

/// A random chain of layers with its per-mode counts.
fn network() -> impl Strategy<Value = (Vec<LayerShape>, Vec<LayerMode>)> {
    prop::collection::vec(
        (
            1u64..10,
            1u64..4,
            1u64..3,
            0u64..2,
            0u64..40,
            0u64..400,
            1u64..30,
            1u64..5000,
        ),
        1..6,
    )
    .prop_map(|ls| {
        ls.into_iter()
            .map(|(h, k, st, pad, xb, busy, vec, bytes)| {
                let k = k.min(h + 2 * pad);
                let out = (h + 2 * pad - k) / st + 1;
                let shape = LayerShape {
                    name: "l".into(),
                    out_rows: out,
                    in_rows: h,
                    kernel_rows: k,
                    stride_rows: st,
                    pad_rows: pad,
                    dilation_rows: 1,
                    out_bytes: bytes,
                };
                let busy = if xb == 0 { 0 } else { busy };
                (shape, lm(xb, busy, vec))
            })
            .unzip()
    })
}

fn run(
    spec: &ChipSpec,
    samples: u64,
    shapes: &[LayerShape],
    modes: &[LayerMode],
) -> Option<Timing> {
    match place(spec, modes) {
        Placed::Fits(p) | Placed::Reprogrammed(p) => {
            Some(schedule(spec, &ctx(samples), shapes, modes, &p).unwrap())
        }
        Placed::DoesNotFit { .. } => None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Unbounded chip (auto count), free data movement, one copy, layer by layer: the run
    /// takes exactly the sum of the layers' cycles, and costs no extra energy.
    #[test]
    fn unbounded_free_layer_by_layer_is_the_sum((shapes, modes) in network(), samples in 1u64..4) {
        let spec = small((2, 2), 3, 4, &[("count", s("auto")), ("data_movement", s("free"))]);
        let t = run(&spec, samples, &shapes, &modes).unwrap();
        prop_assert_eq!(t.run_cycles, modes.iter().map(|m| m.cycles).sum::<u64>());
        prop_assert_eq!(t.network_pj + t.offchip_pj + t.write_pj + t.static_pj, 0.0);
    }

    /// The digital unit after layers: unbounded, free, layer by layer, the run is the sum
    /// of the layers' cycles and the unit's (the layer-by-layer account of a run); in every
    /// schedule the chip never finishes sooner nor streams faster with the unit than
    /// without, and a unit with no work changes no figure.
    #[test]
    fn digital_unit_never_speeds_up(
        (shapes, modes) in network(),
        digital in prop::collection::vec(prop_oneof![Just(0u64), 1u64..300], 6),
        samples in 1u64..4,
        free in any::<bool>(),
    ) {
        let with: Vec<LayerMode> = modes
            .iter()
            .zip(&digital)
            .map(|(m, &d)| LayerMode { digital_cycles: d, ..*m })
            .collect();
        let sum = small((2, 2), 3, 4, &[("count", s("auto")), ("data_movement", s("free"))]);
        let t = run(&sum, samples, &shapes, &with).unwrap();
        prop_assert_eq!(t.run_cycles, with.iter().map(|m| m.cycles + m.digital_cycles).sum::<u64>());
        let dm = s(if free { "free" } else { "mesh" });
        for sched in ["layer-by-layer", "pipelined", "pipelined-pool-barrier"] {
            let spec = small((2, 2), 2, 4, &[("count", s("auto")), ("data_movement", dm.clone()), ("schedule", s(sched))]);
            let a = run(&spec, samples, &shapes, &modes).unwrap();
            let b = run(&spec, samples, &shapes, &with).unwrap();
            prop_assert!(b.run_cycles >= a.run_cycles, "{}", sched);
            prop_assert!(b.latency_cycles >= a.latency_cycles, "{}", sched);
            prop_assert!(b.cycles_per_image >= a.cycles_per_image, "{}", sched);
            if with.iter().all(|m| m.digital_cycles == 0) {
                prop_assert_eq!(&a, &b);
            }
        }
    }

    /// Replication never places more than the chip holds, and never lowers throughput.
    #[test]
    fn replication_stays_on_the_chip((shapes, modes) in network(), chips in 1u64..3) {
        let base = [("count", Value::Integer(chips as i64)), ("schedule", s("pipelined"))];
        let none = small((2, 1), 3, 4, &base);
        let mut sets = base.to_vec();
        sets.push(("replication", s("balance")));
        let bal = small((2, 1), 3, 4, &sets);
        if let Placed::Fits(p) = place(&bal, &modes) {
            let units: u64 = p.layers.iter().map(|l| l.units).sum();
            let xb: u64 = p.layers.iter().map(|l| l.crossbars).sum();
            prop_assert!(units <= chips * bal.units_per_chip());
            prop_assert!(xb <= chips * bal.crossbars_per_chip());
            prop_assert!(p.chip_utilization <= 1.0);
            prop_assert!(p.layers.iter().all(|l| l.replicas >= 1));
            let a = run(&none, 1, &shapes, &modes).unwrap();
            let b = run(&bal, 1, &shapes, &modes).unwrap();
            prop_assert!(b.images_per_s >= a.images_per_s);
        }
    }

    /// More crossbars per compute unit on the same mesh never lowers steady-state
    /// throughput (eDRAM large enough that no output spills either way).
    #[test]
    fn denser_units_never_lower_throughput(
        (shapes, modes) in network(), cpu in 1u32..6, extra in 1u32..4, balance in any::<bool>()
    ) {
        let sets = [
            ("schedule", s("pipelined")),
            ("replication", s(if balance { "balance" } else { "none" })),
            ("edram_kb_per_tile", Value::Float(1e6)),
        ];
        let a = run(&small((2, 2), 2, cpu, &sets), 2, &shapes, &modes);
        let b = run(&small((2, 2), 2, cpu + extra, &sets), 2, &shapes, &modes);
        if let Some(a) = a {
            let b = b.expect("a denser chip holds what a sparser one holds");
            prop_assert!(b.images_per_s >= a.images_per_s, "{} < {}", b.images_per_s, a.images_per_s);
        }
    }

    /// With the same placement and data movement, the pipelined schedule never takes
    /// longer than layer by layer, for one image or for the run.
    #[test]
    fn pipelined_never_slower((shapes, modes) in network(), samples in 1u64..4, free in any::<bool>()) {
        let dm = s(if free { "free" } else { "mesh" });
        let lbl = small((2, 2), 2, 4, &[("count", s("auto")), ("data_movement", dm.clone())]);
        let pip = small((2, 2), 2, 4, &[("count", s("auto")), ("data_movement", dm), ("schedule", s("pipelined"))]);
        let a = run(&lbl, samples, &shapes, &modes).unwrap();
        let b = run(&pip, samples, &shapes, &modes).unwrap();
        prop_assert!(b.latency_cycles <= a.latency_cycles);
        prop_assert!(b.run_cycles <= a.run_cycles);
        prop_assert!(b.images_per_s >= a.images_per_s);
    }

    /// The pool barrier sits between the two: never faster than pipelined, never slower
    /// than layer by layer, with the pipelined steady state.
    #[test]
    fn pool_barrier_between_pipelined_and_layer_by_layer(
        (shapes, modes) in network(), samples in 1u64..4, free in any::<bool>()
    ) {
        let dm = s(if free { "free" } else { "mesh" });
        let with = |sched: &str| small((2, 2), 2, 4, &[("count", s("auto")), ("data_movement", dm.clone()), ("schedule", s(sched))]);
        let lbl = run(&with("layer-by-layer"), samples, &shapes, &modes).unwrap();
        let bar = run(&with("pipelined-pool-barrier"), samples, &shapes, &modes).unwrap();
        let pip = run(&with("pipelined"), samples, &shapes, &modes).unwrap();
        prop_assert!(pip.latency_cycles <= bar.latency_cycles);
        prop_assert!(bar.latency_cycles <= lbl.latency_cycles);
        prop_assert!(pip.run_cycles <= bar.run_cycles);
        prop_assert!(bar.run_cycles <= lbl.run_cycles);
        prop_assert_eq!(bar.cycles_per_image, pip.cycles_per_image);
        // Without any pooling (every layer reads its producer's rows as they are) the
        // barrier never applies.
        if shapes.windows(2).all(|w| w[0].out_rows == w[1].in_rows) {
            prop_assert_eq!(bar.run_cycles, pip.run_cycles);
        }
    }
}

/// A key whose value makes a derived figure overflow refuses the configuration, naming
/// the key: a tiny link clock made every transfer 2^64 - 1 cycles, whose sums wrapped (a
/// faster chip); a huge static power made the energy infinite (written as nulls).
#[test]
fn keys_that_overflow_a_figure_are_named() {
    let modes = [lm(2, 100, 4), lm(2, 100, 4)];
    let shapes = [shape(8, 8, 1, 1, 1 << 20), shape(8, 8, 1, 1, 64)];
    let run = |sets: &[(&str, Value)]| {
        let mut all = vec![("data_movement", s("mesh"))];
        all.extend_from_slice(sets);
        let spec = small((2, 2), 2, 4, &all);
        evaluate(
            &spec,
            &AreaTable::isaac_32nm(),
            &ctx(3),
            &shapes,
            &[("dense".into(), modes.to_vec(), 1.0)],
        )
    };
    let ok = run(&[]).unwrap();
    let t = ok[0].timing.as_ref().unwrap();
    assert!(t.layers[0].transfer_cycles > 0 && t.run_cycles < 1 << 40);
    let e = run(&[("link_ghz", Value::Float(1e-300))])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("chip.link_ghz: 1e-300 is out of range: the transfer after l would be"),
        "{e}"
    );
    let e = run(&[("offchip_gb_per_s", Value::Float(1e-300))])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("chip.offchip_gb_per_s: 1e-300 is out of range"),
        "{e}"
    );
    let e = run(&[("static_mw_per_tile", Value::Float(1e308))])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "chip.static_mw_per_tile: 1e308 is too large: chip energy_pj of dense would be inf"
        ),
        "{e}"
    );
}

/// The network energy has two keys: the mesh's hops (`router_pj_per_bit`) and the
/// transfers between chips (`interchip_pj_per_bit`). An infinite energy names the key of
/// the part that overflowed: an inter-chip energy was summed into the router's part and
/// blamed on `router_pj_per_bit`, left at its default.
#[test]
fn an_overflowing_network_energy_names_its_own_key() {
    // One router of one unit of 2 crossbars a chip, two layers of 2 crossbars: each
    // layer on its own chip, so the activations cross between chips (and make no hop).
    let modes = [lm(2, 100, 4), lm(2, 100, 4)];
    let shapes = [shape(8, 8, 1, 1, 64), shape(8, 8, 1, 1, 64)];
    let run = |sets: &[(&str, Value)]| {
        let mut all = vec![("data_movement", s("mesh")), ("count", s("auto"))];
        all.extend_from_slice(sets);
        let spec = small((1, 1), 1, 2, &all);
        evaluate(
            &spec,
            &AreaTable::isaac_32nm(),
            &ctx(3),
            &shapes,
            &[("dense".into(), modes.to_vec(), 1.0)],
        )
    };
    let ok = run(&[]).unwrap();
    assert_eq!(ok[0].chips, 2);
    assert!(ok[0].timing.as_ref().unwrap().network_pj > 0.0);
    let e = run(&[("interchip_pj_per_bit", Value::Float(1e308))])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "chip.interchip_pj_per_bit: 1e308 is too large: chip energy_pj of dense would be inf"
        ),
        "{e}"
    );
    // On one chip of a 2x1 mesh, the same layers hop between routers: the router's key.
    let mesh = |sets: &[(&str, Value)]| {
        let mut all = vec![("data_movement", s("mesh"))];
        all.extend_from_slice(sets);
        let spec = small((2, 1), 1, 2, &all);
        evaluate(
            &spec,
            &AreaTable::isaac_32nm(),
            &ctx(3),
            &shapes,
            &[("dense".into(), modes.to_vec(), 1.0)],
        )
    };
    let e = mesh(&[("router_pj_per_bit", Value::Float(1e308))])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("chip.router_pj_per_bit: 1e308 is too large"),
        "{e}"
    );
}
