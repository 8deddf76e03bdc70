//! Crossbars of more than 64 rows: a bit-plane takes two or three words, an OU can span
//! the end of one, an ideal read covers them all. The exactness invariant there, and the
//! analog read's fast path (read noise and IR drop on the integer sum, a draw only for a
//! column with current) against the per-cell path, which adds each open cell's
//! conductance: with an off current of zero (an infinite on/off ratio) and no variation,
//! both compute the same sums and must give the same bits.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../../engine/tests/common/mod.rs"]
mod common;

mod cases;

use cases::{direct_conv, hardware, keep, run_modes};
use common::arb_opts;
use crossbar::Hardware;
use engine::SimOptions;
use functional::{Device, FuncOptions, Sampler};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// An fc layer of k = 65..200 inputs, some weights and inputs 0, on crossbars of
/// 64..140 rows (bit-planes of one to three words) with OUs of any height.
fn arb_wide() -> impl Strategy<Value = (QuantLayer, Hardware, SimOptions)> {
    (
        (64u32..=140, 8u32..=16, 1u32..=3),
        (1u32..=140, 1u32..=8),
        (2u32..=6, 2u32..=6, 1u32..=2),
        any::<bool>(),
        (65usize..=200, 1usize..=5, 1usize..=2),
        arb_opts(),
        any::<u64>(),
    )
        .prop_filter_map(
            "valid hardware",
            |(xbar, ou, (wb, ib, dac), sm, (k, n, samples), opts, seed)| {
                let hw = hardware(xbar, ou, (wb, ib, dac), sm)?;
                let mut h = seed;
                let mut draw = |m: i64| {
                    h = functional_mix(h);
                    // A third of the values 0 (pruned weights, idle inputs).
                    if h % 3 == 0 {
                        0
                    } else {
                        ((h >> 8) % (2 * m as u64 + 1)) as i32 - m as i32
                    }
                };
                let wmax = (1i64 << (wb - 1)) - 1;
                let xmax = (1i64 << (ib - 1)) - 1;
                let weights = (0..k * n).map(|_| draw(wmax)).collect();
                let input: Vec<i32> = (0..k * samples).map(|_| draw(xmax)).collect();
                let l = QuantLayer {
                    spec: LayerSpec {
                        name: "wide".into(),
                        kind: LayerKind::Fc,
                        geom: ConvGeometry::fc(k, n),
                    },
                    signed: input.iter().any(|&x| x < 0),
                    weights,
                    input,
                    samples,
                };
                Some((l, hw, opts))
            },
        )
}

/// SplitMix64's finalizer (the layer's values need only be spread, not keyed).
fn functional_mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn every_mode_computes_the_exact_product_over_several_words((l, hw, opts) in arb_wide()) {
        let want = direct_conv(&l);
        for r in run_modes(&l, &hw, &opts, keep(), l.samples) {
            prop_assert_eq!(r.outputs.as_deref(), Some(&want[..]), "{} {:?} {:?}", r.mode, hw, opts);
        }
    }

    #[test]
    fn the_analog_fast_path_reads_what_the_per_cell_path_reads(
        (l, hw, opts) in arb_wide(),
        read_noise in 0.0f64..0.2,
        ir_drop in 0.0f64..0.02,
        seed in any::<u64>(),
    ) {
        // The per-cell path draws per read: so does the fast path compared with it.
        let analog = Device { read_noise, ir_drop, seed, sampler: Sampler::PerRead, ..Device::default() };
        let per_cell = Device { on_off_ratio: Some(f64::INFINITY), ..analog.clone() };
        let with = |device| FuncOptions { device, ..keep() };
        let fast = run_modes(&l, &hw, &opts, with(analog), l.samples);
        let cells = run_modes(&l, &hw, &opts, with(per_cell), l.samples);
        for (a, b) in fast.iter().zip(&cells) {
            prop_assert_eq!(&a.outputs, &b.outputs, "{} {:?} {:?}", a.mode, hw, opts);
        }
    }
}
