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

use crate::cases;

use cases::{arb_wide, direct_conv, keep, run_modes};
use functional::{Device, FuncOptions, Sampler};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn every_mode_computes_the_exact_product_over_several_words((l, hw, opts) in arb_wide(8..=16, 1..=5)) {
        let want = direct_conv(&l);
        for r in run_modes(&l, &hw, &opts, keep(), l.samples) {
            prop_assert_eq!(r.outputs.as_deref(), Some(&want[..]), "{} {:?} {:?}", r.mode, hw, opts);
        }
    }

    #[test]
    fn the_analog_fast_path_reads_what_the_per_cell_path_reads(
        (l, hw, opts) in arb_wide(8..=16, 1..=5),
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
