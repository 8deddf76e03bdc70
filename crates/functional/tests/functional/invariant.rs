//! The exactness invariant (docs/functional.md, "The datapath in the code's words"): with an ideal device and an
//! ADC that does not clip, every mode's output equals the exact integer product, here
//! computed by a direct convolution independent of im2col and of the mapping.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cases;

use cases::{arb_case, direct_conv, keep, run_modes};
use crossbar::AdcBits;
use functional::FuncOptions;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_mode_computes_the_exact_product((l, hw, opts) in arb_case()) {
        let want = direct_conv(&l);
        for r in run_modes(&l, &hw, &opts, keep(), l.samples) {
            prop_assert_eq!(r.outputs.as_deref(), Some(&want[..]), "{} {:?} {:?}", r.mode, hw, opts);
            prop_assert_eq!(r.metrics.exact, want.len() as u64);
            prop_assert_eq!(r.metrics.max_abs_err, 0);
        }
    }

    /// A clipping ADC loses information; the figures still do not depend on how the
    /// samples are chunked or on the number of threads.
    #[test]
    fn chunking_and_threads_do_not_change_a_clipped_run(
        (l, mut hw, opts) in arb_case(), adc_bits in 1u32..=4, step in 1u64..=3,
    ) {
        hw.adc_bits = AdcBits::Fixed(adc_bits);
        let f = FuncOptions { adc_step: step, ..keep() };
        let on = |threads: usize, chunk: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| run_modes(&l, &hw, &opts, f.clone(), chunk))
        };
        let whole = on(1, l.samples);
        prop_assert_eq!(&whole, &on(2, 1));
        prop_assert_eq!(&whole, &on(2, l.samples));
    }
}
