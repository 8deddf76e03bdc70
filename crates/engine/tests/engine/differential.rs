//! The fast engine against the naive reference engine on random small layers and
//! configurations: every count, cycles included, must be equal; and the fast engine
//! must give the same numbers with 1 and 2 threads.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{arb_case, run};
use crossbar::Mode;
use engine::EngineKind;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn fast_equals_reference((layer, hw, opts) in arb_case()) {
        for mode in Mode::ALL {
            let f = run(&layer, &hw, &opts, mode, EngineKind::Fast);
            let r = run(&layer, &hw, &opts, mode, EngineKind::Reference);
            prop_assert_eq!(f, r, "mode {} hw {:?} opts {:?}", mode, hw, opts);
        }
    }

    #[test]
    fn fast_is_thread_count_independent((layer, hw, opts) in arb_case()) {
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| Mode::ALL.map(|m| run(&layer, &hw, &opts, m, EngineKind::Fast)))
        };
        prop_assert_eq!(on(1), on(2));
    }
}
