//! Non-ideal devices (docs/functional.md, "Non-ideal devices"): hand-computed reads, and runs that
//! do not depend on threads or on how samples are chunked.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cases;

use cases::{arb_case, run_modes};
use crossbar::{AdcBits, Hardware, Mode};
use functional::{Aging, Converter, Device, ErrorTable, FuncOptions, Sampler};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

fn fc(weights: Vec<i32>, input: Vec<i32>) -> QuantLayer {
    let k = input.len();
    QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(k, weights.len() / k),
        },
        signed: input.iter().any(|&x| x < 0),
        weights,
        input,
        samples: 1,
    }
}

fn with(device: Device) -> FuncOptions {
    FuncOptions {
        keep_outputs: true,
        device,
        ..FuncOptions::default()
    }
}

fn outputs(l: &QuantLayer, hw: &Hardware, device: Device) -> Vec<(Mode, Vec<i64>)> {
    run_modes(l, hw, &engine::SimOptions::default(), with(device), 1)
        .into_iter()
        .map(|r| (r.mode, r.outputs.unwrap()))
        .collect()
}

/// 2-bit cells, 3-bit weights (one slice), 2-bit inputs a bit per cycle, one row per OU.
fn small_hw() -> Hardware {
    Hardware {
        xbar_rows: 4,
        xbar_cols: 4,
        cell_bits: 2,
        ou_rows: 1,
        ou_cols: 1,
        weight_bits: 3,
        input_bits: 2,
        ..Hardware::default()
    }
}

/// w = [2], x = [1]: one read of S = 2 with one wordline open. IR drop 0.5 halves it
/// to 1; 0.75 leaves 0.5, which rounds half away from zero to 1; 1.0 leaves nothing.
#[test]
fn ir_drop_attenuates_by_open_wordlines() {
    let l = fc(vec![2], vec![1]);
    for (ir, want) in [(0.0, 2), (0.5, 1), (0.75, 1), (1.0, 0), (0.9, 0)] {
        let d = Device {
            ir_drop: ir,
            ..Device::default()
        };
        for (mode, y) in outputs(&l, &small_hw(), d) {
            assert_eq!(y, vec![want], "ir_drop {ir} {mode}");
        }
    }
    // Two rows in one OU (ou.rows 2), both open: 1 - 0.25 * 2 = 0.5 of S = 2 + 2.
    let l = fc(vec![2, 2], vec![1, 1]);
    let hw = Hardware {
        ou_rows: 2,
        ..small_hw()
    };
    let d = Device {
        ir_drop: 0.25,
        ..Device::default()
    };
    for (mode, y) in outputs(&l, &hw, d) {
        assert_eq!(y, vec![2], "{mode}");
    }
}

#[test]
fn stuck_cells_and_the_off_current() {
    let l = fc(vec![2, 0, -1, 3], vec![1, 2, 3, 1]);
    let hw = small_hw();
    // Everything stuck at 0: nothing conducts.
    let s0 = Device {
        stuck_at_0: 1.0,
        ..Device::default()
    };
    assert!(outputs(&l, &hw, s0).iter().all(|(_, y)| y == &vec![0]));
    // Everything stuck at the top level 3: the dense tiling programs every cell of both
    // arrays (pos - neg cancels), the compacted one only the rows a group holds.
    let s1 = Device {
        stuck_at_1: 1.0,
        ..Device::default()
    };
    for (mode, y) in outputs(&l, &hw, s1) {
        // compacted: pos rows {0, 3} -> 3 * (1 + 1); neg row {2} -> 3 * 3.
        let want = if mode.compacted() { 6 - 9 } else { 0 };
        assert_eq!(y, vec![want], "{mode}");
    }
    // An off current the reference column removes exactly.
    let off = Device {
        on_off_ratio: Some(10.0),
        ..Device::default()
    };
    for (mode, y) in outputs(&l, &hw, off) {
        assert_eq!(y, vec![2 - 3 + 3], "{mode}");
    }
}

/// A level table without spread (docs/functional.md, "Cells by level"): evenly spaced
/// means read exactly, the reference column removing the bottom level's mean; one row per
/// level with uneven means reads each level where its mean falls.
#[test]
fn a_level_table_reads_its_means() {
    use functional::{LevelSpace, Levels};
    let l = fc(vec![2, 0, -1, 3], vec![1, 2, 3, 1]);
    let hw = small_hw();
    // 10 .. 40 uS over 3 levels: one level is 10 uS, the off current 10 uS = 1 level.
    let even = Device {
        levels: Levels::new(
            LevelSpace::Conductance,
            vec![vec![10.0, 0.0], vec![40.0, 0.0]],
            vec![],
        )
        .unwrap(),
        ..Device::default()
    };
    assert_eq!(even.g_off(3), 1.0);
    for (mode, y) in outputs(&l, &hw, even) {
        assert_eq!(y, vec![2 - 3 + 3], "{mode}");
    }
    // Levels at 10, 20, 35, 40 uS: level 2 conducts 3.5 levels, 2.5 above the
    // reference's 1, which rounds half away from zero to 3.
    let uneven = Device {
        levels: Levels::new(
            LevelSpace::Conductance,
            vec![
                vec![10.0, 0.0],
                vec![20.0, 0.0],
                vec![35.0, 0.0],
                vec![40.0, 0.0],
            ],
            vec![],
        )
        .unwrap(),
        ..Device::default()
    };
    for (mode, y) in outputs(&fc(vec![2], vec![1]), &hw, uneven) {
        assert_eq!(y, vec![3], "{mode}");
    }
}

/// The reference column drifts with the device by default: w = [3], x = [1], on/off 2
/// (g_off = 3, the top level conducts 6), every cell's exponent 0.5 and t = t0, so every
/// conductance is 2^-0.5 of its value. The cell reads 6 / sqrt 2 = 4.243; a drifting
/// reference removes 3 / sqrt 2 = 2.121 (2.121 reads 2), a nominal one 3 (1.243 reads 1).
#[test]
fn the_reference_column_drifts_with_the_device_or_stays_nominal() {
    use functional::Reference;
    let l = fc(vec![3], vec![1]);
    let hw = small_hw();
    let d = Device {
        on_off_ratio: Some(2.0),
        aging: Aging {
            drift_nu: vec![[1.0, 0.5, 0.0]],
            time_s: 20.0,
            ..Device::default().aging
        },
        ..Device::default()
    };
    assert!((d.reference_off(3) - 3.0 * 0.5f64.sqrt()).abs() < 1e-12);
    for (mode, y) in outputs(&l, &hw, d.clone()) {
        assert_eq!(y, vec![2], "device reference, {mode}");
    }
    let nominal = Device {
        reference: Reference::Nominal,
        ..d.clone()
    };
    assert_eq!(nominal.reference_off(3), 3.0);
    for (mode, y) in outputs(&l, &hw, nominal) {
        assert_eq!(y, vec![1], "nominal reference, {mode}");
    }
    // At time 0 both are the programmed off current, bit for bit.
    let fresh = Device {
        aging: Aging {
            time_s: 0.0,
            ..d.aging.clone()
        },
        ..d
    };
    assert_eq!(fresh.reference_off(3), fresh.g_off(3));
}

/// An error table: one wordline open with ideal sum 2 reads 3 with probability 1; every
/// other (open, ideal) pair reads exactly.
#[test]
fn an_error_table_replaces_the_sums_it_lists() {
    let t = ErrorTable::parse(
        "open_wordlines,ideal_sum,observed_sum,probability\n1,2,3,1\n1,1,1,1\n",
        "t.csv",
    )
    .unwrap();
    let d = Device {
        error_table: Some(t),
        ..Device::default()
    };
    // w = [2, 1], x = [1, 1]: reads of 2 become 3, reads of 1 stay: 3 + 1.
    let l = fc(vec![2, 1], vec![1, 1]);
    let hw = Hardware {
        adc_bits: AdcBits::Fixed(4),
        ..small_hw()
    };
    for (mode, y) in outputs(&l, &hw, d.clone()) {
        if mode == Mode::Ideal {
            // One whole-tile read with 2 wordlines open: not in the table, exact.
            assert_eq!(y, vec![3], "{mode}");
        } else {
            assert_eq!(y, vec![4], "{mode}");
        }
    }
    let err = functional::check_table(&d, &hw, &[Mode::Ideal], "t.csv").unwrap_err();
    assert_eq!(
        err,
        "t.csv: open_wordlines: the table stops at 1 wordlines, but ideal reads open up to 4"
    );
    assert!(functional::check_table(&d, &hw, &[Mode::Dense, Mode::Sre], "t.csv").is_ok());
}

/// Read noise with the same seed gives the same outputs; another seed other ones.
#[test]
fn read_noise_is_a_function_of_the_seed() {
    let w: Vec<i32> = (0..64).map(|i| (i * 5 % 7) - 3).collect();
    let x: Vec<i32> = (0..32).map(|i| i % 4).collect();
    let l = fc(w, x);
    let hw = Hardware {
        ou_rows: 4,
        ..small_hw()
    };
    let noisy = |seed| Device {
        read_noise: 0.3,
        seed,
        ..Device::default()
    };
    let a = outputs(&l, &hw, noisy(1));
    assert_eq!(a, outputs(&l, &hw, noisy(1)));
    assert_ne!(a, outputs(&l, &hw, noisy(2)));
}

fn arb_device() -> impl Strategy<Value = Device> {
    (
        prop::option::of(2.0f64..50.0),
        0.0f64..0.3,
        0.0f64..0.1,
        0.0f64..0.1,
        0.0f64..0.3,
        0.0f64..0.1,
        any::<u64>(),
        any::<bool>(),
        (any::<bool>(), any::<bool>(), 0.0f64..0.3),
    )
        .prop_map(
            |(r, sigma, p0, p1, rn, ir, seed, per_read, (aged, adc, dac))| Device {
                on_off_ratio: r,
                sigma,
                stuck_at_0: p0,
                stuck_at_1: p1,
                read_noise: rn,
                ir_drop: ir,
                error_table: None,
                seed,
                sampler: if per_read {
                    Sampler::PerRead
                } else {
                    Sampler::Skip
                },
                aging: if aged {
                    pcm_like(3600.0)
                } else {
                    Device::default().aging
                },
                drift_compensation: false,
                converter: Converter {
                    offset: if adc { 0.3 } else { 0.0 },
                    gain_error: if adc { -0.02 } else { 0.0 },
                    inl: if adc {
                        vec![0.0, 0.4, -0.2, 0.0]
                    } else {
                        Vec::new()
                    },
                    dac_noise: dac,
                },
                levels: Default::default(),
                reference: Default::default(),
            },
        )
}

/// A PCM-like cell model at `time_s`: programming noise, a drift exponent with spread,
/// 1/f noise and relaxation, every term drawn.
fn pcm_like(time_s: f64) -> Aging {
    Aging {
        prog_noise: vec![0.01, 0.05],
        time_s,
        drift_nu: vec![[0.1, 0.08, 0.02], [1.0, 0.05, 0.01]],
        drift_t0_s: 20.0,
        drift_noise: vec![0.0088, 0.65, 0.2, 2.5e-7],
        relax: vec![vec![1.0, 0.01], vec![1e4, 0.02]],
        relax_hold: false,
    }
}

/// w = [2], x = [1], a 2-bit ADC (top count 3): one read of S = 2 through the converter.
/// Offset 0.6 reads 2.6 -> 3, -0.6 reads 1.4 -> 1; gain error -0.3 reads 1.4 -> 1; INL
/// [0, 1, 0] over counts 0..3 is 2/3 at count 2 -> 2.67 -> 3; each off reads 2. The dense
/// tiling also converts the negative array's column (its cell holds 0, its sum is 0): an
/// offset of 0.6 reads 1 there, subtracted (3 - 1); the compacted tiling has no such
/// column (the weight is positive).
#[test]
fn adc_offset_gain_and_inl_by_hand() {
    let l = fc(vec![2], vec![1]);
    let hw = Hardware {
        adc_bits: AdcBits::Fixed(2),
        ..small_hw()
    };
    let at = |offset, gain_error, inl: &[f64]| Converter {
        offset,
        gain_error,
        inl: inl.to_vec(),
        ..Converter::default()
    };
    // (converter, compacted modes' output, dense-tiled modes').
    let cases = [
        (at(0.0, 0.0, &[]), 2, 2),
        (at(0.6, 0.0, &[]), 3, 2),
        (at(-0.6, 0.0, &[]), 1, 1),
        (at(0.0, -0.3, &[]), 1, 1),
        (at(0.0, 0.0, &[0.0, 1.0, 0.0]), 3, 3),
    ];
    for (c, compacted, dense) in cases {
        let d = Device {
            converter: c.clone(),
            ..Device::default()
        };
        for (mode, y) in outputs(&l, &hw, d) {
            let want = if mode.compacted() { compacted } else { dense };
            assert_eq!(y, vec![want], "{c:?} {mode}");
        }
    }
}

/// DAC noise is keyed: the same seed gives the same outputs, another seed other ones, and
/// a weak noise (0.05 LSB: a read of 2 errs only beyond 5 sigma) reads exactly.
#[test]
fn dac_noise_is_a_function_of_the_seed() {
    let w: Vec<i32> = (0..64).map(|i| (i * 5 % 7) - 3).collect();
    let x: Vec<i32> = (0..32).map(|i| i % 4).collect();
    let l = fc(w.clone(), x.clone());
    let hw = Hardware {
        ou_rows: 4,
        ..small_hw()
    };
    let noisy = |seed, dac_noise| Device {
        seed,
        converter: Converter {
            dac_noise,
            ..Converter::default()
        },
        ..Device::default()
    };
    let a = outputs(&l, &hw, noisy(1, 0.4));
    assert_eq!(a, outputs(&l, &hw, noisy(1, 0.4)));
    assert_ne!(a, outputs(&l, &hw, noisy(2, 0.4)));
    let one = fc(vec![2], vec![1]);
    for (mode, y) in outputs(&one, &small_hw(), noisy(1, 0.05)) {
        assert_eq!(y, vec![2], "{mode}");
    }
}

/// A drift that halves every cell (nu = 0.05 without spread, t = t0 (2^20 - 1)): w = [2],
/// x = [1] reads 1; the compensation gain calibrated on that input is 2 and the
/// compensated output the exact 2.
#[test]
fn drift_compensation_by_hand() {
    use engine::{Prepared, Samples, SimOptions};
    use functional::{compensation_gains, Layer, LayerRun};
    let l = fc(vec![2], vec![1]);
    let hw = small_hw();
    let d = Device {
        aging: Aging {
            drift_nu: vec![[1.0, 0.05, 0.0]],
            time_s: 20.0 * (2f64.powi(20) - 1.0),
            ..Device::default().aging
        },
        drift_compensation: true,
        ..Device::default()
    };
    for (mode, y) in outputs(&l, &hw, d.clone()) {
        assert_eq!(y, vec![1], "{mode}");
    }
    let opts = SimOptions::default();
    let prep = Prepared::new(&l, &hw, &opts);
    let mut f = with(d);
    let gains = compensation_gains(&prep, &hw, &opts, &f, &Mode::ALL, Samples::new(&l.input, 1));
    assert_eq!(gains, Mode::ALL.map(|m| (m, 2.0)).to_vec());
    f.gains = std::sync::Arc::new(
        gains
            .iter()
            .map(|&(m, g)| ("fc".to_string(), m, g))
            .collect(),
    );
    let layer = Layer::new(&prep, &hw, &opts, &f);
    let mut run = LayerRun::new(&layer, &Mode::ALL);
    run.feed(Samples::new(&l.input, 1));
    for r in run.finish() {
        assert_eq!(r.outputs.unwrap(), vec![2], "{}", r.mode);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// Every draw is keyed, never sequential: 1 or 2 threads, whole or one sample at a
    /// time, the outputs and figures are identical.
    #[test]
    fn non_ideal_runs_do_not_depend_on_threads_or_chunking(
        (l, hw, opts) in arb_case(), device in arb_device(),
    ) {
        let f = with(device);
        let on = |threads: usize, chunk: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| run_modes(&l, &hw, &opts, f.clone(), chunk))
        };
        let whole = on(1, l.samples);
        prop_assert_eq!(&whole, &on(2, 1));
        prop_assert_eq!(&whole, &on(2, l.samples));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, ..ProptestConfig::default() })]

    /// A run started at sample s and fed that sample alone gives that sample's outputs of
    /// a run over every sample (the accuracy path runs samples one at a time).
    #[test]
    fn a_sample_run_on_its_own_equals_its_slice_of_the_whole_run(
        (l, hw, opts) in arb_case(), device in arb_device(),
    ) {
        use engine::{Prepared, Samples};
        use functional::{Layer, LayerRun};
        let f = with(device);
        let whole = run_modes(&l, &hw, &opts, f.clone(), l.samples);
        let prep = Prepared::new(&l, &hw, &opts);
        let layer = Layer::new(&prep, &hw, &opts, &f);
        let per = l.geom().input_elements();
        let outs = l.geom().out_channels * l.geom().vectors_per_sample();
        for s in 0..l.samples {
            let mut run = LayerRun::starting_at(&layer, &Mode::ALL, s);
            run.feed(Samples::new(&l.input[s * per..(s + 1) * per], 1));
            for (one, all) in run.finish().iter().zip(&whole) {
                let all = all.outputs.as_ref().unwrap();
                prop_assert_eq!(one.outputs.as_ref().unwrap().as_slice(), &all[s * outs..(s + 1) * outs]);
            }
        }
    }
}
