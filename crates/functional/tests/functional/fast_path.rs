//! The exact fast path (docs/functional.md, "The exact fast path"): exactly when it is
//! taken, that it is sound (whenever it is taken, the datapath read OU by OU gives the
//! exact product too), and that a run with it equals a run without it.

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cases;

use cases::{arb_case, direct_conv, keep, run_modes};
use crossbar::{AdcBits, Hardware, Mode};
use functional::{exact_path, exact_product, exact_products, Device, ErrorTable, FuncOptions};
use proptest::prelude::*;

fn fast(device: Device) -> FuncOptions {
    FuncOptions {
        device,
        ..FuncOptions::default()
    }
}

/// Whether every mode takes the fast path on a layer of `k` rows.
fn all_modes(hw: &Hardware, f: &FuncOptions, k: u64) -> [bool; 5] {
    Mode::ALL.map(|m| exact_path(hw, f, m, k))
}

#[test]
fn taken_on_an_ideal_device_with_an_adc_that_cannot_clip() {
    let hw = Hardware::default();
    let ideal = fast(Device::default());
    assert_eq!(all_modes(&hw, &ideal, 500), [true; 5]);
    // The seed changes no value of an ideal device.
    assert_eq!(
        all_modes(
            &hw,
            &fast(Device {
                seed: 7,
                ..Device::default()
            }),
            500
        ),
        [true; 5]
    );
    // Each key of a non-ideal device turns it off.
    let table = ErrorTable::parse(
        "open_wordlines,ideal_sum,observed_sum,probability\n1,1,1,1\n",
        "t.csv",
    )
    .unwrap();
    let keys: [(&str, Device); 7] = [
        (
            "on_off_ratio",
            Device {
                on_off_ratio: Some(100.0),
                ..Device::default()
            },
        ),
        (
            "sigma",
            Device {
                sigma: 0.01,
                ..Device::default()
            },
        ),
        (
            "stuck_at_0",
            Device {
                stuck_at_0: 0.001,
                ..Device::default()
            },
        ),
        (
            "stuck_at_1",
            Device {
                stuck_at_1: 0.001,
                ..Device::default()
            },
        ),
        (
            "read_noise",
            Device {
                read_noise: 0.01,
                ..Device::default()
            },
        ),
        (
            "ir_drop",
            Device {
                ir_drop: 0.001,
                ..Device::default()
            },
        ),
        (
            "error_table",
            Device {
                error_table: Some(table),
                ..Device::default()
            },
        ),
    ];
    for (key, d) in keys {
        assert_eq!(all_modes(&hw, &fast(d), 500), [false; 5], "{key}");
    }
    // The cell model by conductance and time, and the converter errors: each turns it off.
    type Set = fn(&mut Device);
    let set: [(&str, Set); 8] = [
        ("prog_noise", |d| d.aging.prog_noise = vec![0.01]),
        ("drift_nu", |d| d.aging.drift_nu = vec![[1.0, 0.05, 0.0]]),
        ("drift_noise", |d| {
            d.aging.drift_noise = vec![0.01, 0.65, 0.2, 1e-6]
        }),
        ("relax", |d| d.aging.relax = vec![vec![1.0, 0.01]]),
        ("adc.offset", |d| d.converter.offset = 0.1),
        ("adc.gain_error", |d| d.converter.gain_error = -0.01),
        ("adc.inl", |d| d.converter.inl = vec![0.0, 0.3, 0.0]),
        ("dac.noise", |d| d.converter.dac_noise = 0.01),
    ];
    for (key, f) in set {
        let mut d = Device::default();
        f(&mut d);
        assert_eq!(all_modes(&hw, &fast(d), 500), [false; 5], "{key}");
    }
    // Time and compensation alone change no value of an ideal device.
    let aged = Device {
        aging: functional::Aging {
            time_s: 3600.0,
            ..Device::default().aging
        },
        drift_compensation: true,
        ..Device::default()
    };
    assert_eq!(all_modes(&hw, &fast(aged), 500), [true; 5]);
    // adc.step > 1 merges levels.
    let step = FuncOptions {
        adc_step: 2,
        ..ideal.clone()
    };
    assert_eq!(all_modes(&hw, &step, 500), [false; 5]);
    // Off on request (the datapath's own tests, and a decoder other than the model's).
    let off = FuncOptions {
        exact_fast_path: false,
        ..ideal.clone()
    };
    assert_eq!(all_modes(&hw, &off, 500), [false; 5]);
}

#[test]
fn a_fixed_adc_is_always_read_so_its_clips_are_counted() {
    // Default: 2-bit cells (top level 3), dac.bits 1, 9-row OUs, 128-row crossbars.
    let ideal = fast(Device::default());
    let with = |bits| Hardware {
        adc_bits: AdcBits::Fixed(bits),
        ..Hardware::default()
    };
    // Auto bits hold every sum: every mode takes the path.
    assert_eq!(all_modes(&Hardware::default(), &ideal, 500), [true; 5]);
    // A fixed converter, however wide (9 bits hold a whole 128-row tile's 384), and even
    // on a layer of fewer rows than an OU opens, is read OU by OU.
    for bits in [4, 5, 8, 9, 16] {
        assert_eq!(all_modes(&with(bits), &ideal, 500), [false; 5], "{bits}");
        assert_eq!(all_modes(&with(bits), &ideal, 5), [false; 5], "{bits}");
    }
    // So is a calibrated range, even with auto bits.
    let full = FuncOptions {
        adc_range: functional::AdcRange::Full,
        ..ideal.clone()
    };
    assert_eq!(all_modes(&Hardware::default(), &full, 500), [false; 5]);
    // Wider digits with auto bits: the ADC grows with them, the path is still taken.
    let dac = Hardware {
        dac_bits: 2,
        ..Hardware::default()
    };
    assert!(exact_path(&dac, &ideal, Mode::Sre, 500));
}

/// Products of random vectors, against the one-vector product, in the f64 range and
/// beyond it (where the i64 loop takes over), over conv groups.
#[test]
fn batched_exact_products_equal_the_product_of_each_vector() {
    let mut h = 3u64;
    let mut next = |m: i64| {
        h = functional::rng::mix(h);
        (h % (2 * m as u64 + 1)) as i64 - m
    };
    for (k, groups, ng, n, wmax, xmax) in [
        (7usize, 1usize, 5usize, 40usize, 127i64, 255i64),
        (33, 3, 2, 17, 32767, 65535),
        // 2^30 * 2^30 * 64 > 2^53: the i64 path.
        (64, 2, 3, 9, 1 << 30, 1 << 30),
        (1, 1, 1, 1, 1, 1),
    ] {
        let w: Vec<i32> = (0..k * groups * ng).map(|_| next(wmax) as i32).collect();
        let x: Vec<i32> = (0..n * k * groups).map(|_| next(xmax) as i32).collect();
        let got = exact_products(&w, k, groups, n, |v, out| {
            out.copy_from_slice(&x[v * k * groups..][..k * groups])
        });
        let mut want = vec![0i64; n * groups * ng];
        for (v, y) in want.chunks_mut(groups * ng).enumerate() {
            exact_product(&w, &x[v * k * groups..][..k * groups], k, groups, y);
        }
        assert_eq!(got, want, "k {k} groups {groups}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Sound: where the fast path is taken, the OU-by-OU datapath (fast path off) reads
    /// the exact product as well; and a run with the fast path equals one without it,
    /// outputs and metrics, whether it is taken or not (fixed ADCs of every width).
    #[test]
    fn the_fast_path_is_taken_only_where_reads_are_exact(
        (l, mut hw, opts) in arb_case(), adc_bits in 1u32..=10, fixed in any::<bool>(),
        step in 1u64..=2,
    ) {
        if fixed {
            hw.adc_bits = AdcBits::Fixed(adc_bits);
        }
        let slow = FuncOptions { adc_step: step, ..keep() };
        let with = FuncOptions { exact_fast_path: true, ..slow.clone() };
        let want = direct_conv(&l);
        let k = l.geom().k_rows() as u64;
        let ou_by_ou = run_modes(&l, &hw, &opts, slow, l.samples);
        for r in &ou_by_ou {
            if exact_path(&hw, &with, r.mode, k) {
                prop_assert_eq!(r.outputs.as_deref(), Some(&want[..]), "{} {:?}", r.mode, hw);
            }
        }
        prop_assert_eq!(run_modes(&l, &hw, &opts, with, l.samples), ou_by_ou);
    }
}
