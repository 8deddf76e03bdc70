//! A per-cell read that draws nothing (variation and an off current, no read noise, DAC
//! noise or converter errors: the `dlrsim-rram` and `milo-rram` presets) sums the cached
//! conductances of a block of columns in registers and converts them there; it must read
//! the same bits as the reference, which draws every cell's conductance at every read and
//! adds it column by column. Its own test binary: the cache limit it sets is process-wide.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cases;
#[path = "../../engine/tests/common/mod.rs"]
mod common;

use cases::{arb_case, arb_wide, keep, run_modes};
use crossbar::AdcBits;
use functional::{set_conductance_cache_limit, Device, FuncOptions, CONDUCTANCE_CACHE_BYTES};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn cached_blocks_read_what_drawn_cells_read(
        // Small layers with digits of 1..4 bits, and layers over several words of rows
        // with up to 80 columns a tile (blocks of 32, of 8 and single columns).
        (l, mut hw, opts) in prop_oneof![arb_case(), arb_wide(8..=80, 1..=12)],
        on_off in prop::option::of(2.0f64..50.0),
        sigma in prop::sample::select(vec![0.0, 0.05, 0.3]),
        ir_drop in prop::sample::select(vec![0.0, 0.01]),
        seed in any::<u64>(),
        // A fixed resolution clips, a step above 1 divides.
        bits in prop::option::of(1u32..=6),
        adc_step in 1u64..=3,
    ) {
        prop_assume!(on_off.is_some() || sigma > 0.0);
        if let Some(b) = bits {
            hw.adc_bits = AdcBits::Fixed(b);
        }
        let f = FuncOptions {
            adc_step,
            device: Device { on_off_ratio: on_off, sigma, ir_drop, seed, ..Device::default() },
            ..keep()
        };
        set_conductance_cache_limit(0);
        let drawn = run_modes(&l, &hw, &opts, f.clone(), l.samples);
        set_conductance_cache_limit(CONDUCTANCE_CACHE_BYTES);
        let cached = run_modes(&l, &hw, &opts, f, l.samples);
        prop_assert_eq!(drawn, cached);
    }
}
