//! A device that draws each cell's conductance (variation, an off current) reads the
//! same bits whether the conductances are cached when a tile is programmed or drawn at
//! every read. Its own test binary: the cache limit it sets is process-wide.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cases;
#[path = "../../engine/tests/common/mod.rs"]
mod common;

use cases::{arb_case, run_modes};
use functional::{set_conductance_cache_limit, Device, FuncOptions, CONDUCTANCE_CACHE_BYTES};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]

    #[test]
    fn cached_conductances_read_what_drawn_ones_read(
        (l, hw, opts) in arb_case(),
        on_off in prop::option::of(2.0f64..50.0),
        sigma in 0.0f64..0.3,
        read_noise in 0.0f64..0.1,
        seed in any::<u64>(),
    ) {
        let f = FuncOptions {
            keep_outputs: true,
            device: Device {
                on_off_ratio: on_off,
                sigma,
                read_noise,
                seed,
                ..Device::default()
            },
            ..FuncOptions::default()
        };
        set_conductance_cache_limit(0);
        let drawn = run_modes(&l, &hw, &opts, f.clone(), l.samples);
        set_conductance_cache_limit(CONDUCTANCE_CACHE_BYTES);
        let cached = run_modes(&l, &hw, &opts, f, l.samples);
        prop_assert_eq!(drawn, cached);
    }
}
