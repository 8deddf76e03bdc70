//! A device that draws each cell's conductance (variation, an off current) reads the
//! same bits whether the conductances are cached when a tile is programmed or drawn at
//! every read. In the limits binary: the cache limit it sets is process-wide.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cases;

use cases::{arb_case, run_modes};
use functional::{
    set_conductance_cache_limit, Aging, Converter, Device, FuncOptions, LevelSpace, Levels,
    CONDUCTANCE_CACHE_BYTES,
};
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
        aged in any::<bool>(),
        dac_noise in prop::sample::select(vec![0.0, 0.2]),
        table in 0usize..3,
    ) {
        // With aging: programming noise by conductance, drift with spread, 1/f noise and
        // relaxation; with DAC noise the rows' drives are drawn in both ways of reading.
        let mut aging = Device::default().aging;
        if aged {
            aging = Aging {
                prog_noise: vec![0.01, 0.05],
                time_s: 3600.0,
                drift_nu: vec![[0.1, 0.08, 0.02], [1.0, 0.05, 0.01]],
                drift_noise: vec![0.0088, 0.65, 0.2, 2.5e-7],
                relax: vec![vec![1.0, 0.01], vec![1e4, 0.02]],
                ..aging
            };
        }
        // A level table (docs/functional.md, "Cells by level") in place of the on/off
        // ratio, sigma and programming noise.
        let levels = levels_table(table);
        let (on_off, sigma) = if levels.active() { (None, 0.0) } else { (on_off, sigma) };
        if levels.active() {
            aging.prog_noise.clear();
        }
        let f = FuncOptions {
            keep_outputs: true,
            device: Device {
                on_off_ratio: on_off,
                sigma,
                read_noise,
                seed,
                aging,
                converter: Converter { dac_noise, ..Converter::default() },
                levels,
                ..Device::default()
            },
            ..FuncOptions::default()
        };
        let _limits = crate::LIMITS.lock().unwrap_or_else(|e| e.into_inner());
        set_conductance_cache_limit(0);
        let drawn = run_modes(&l, &hw, &opts, f.clone(), l.samples);
        set_conductance_cache_limit(CONDUCTANCE_CACHE_BYTES);
        let cached = run_modes(&l, &hw, &opts, f, l.samples);
        prop_assert_eq!(drawn, cached);
    }
}

/// None (0), a Gaussian table with a polynomial sd (1, milo-rram's), or two lognormal
/// states in log10 R (2, dlrsim-rram's).
fn levels_table(which: usize) -> Levels {
    match which {
        1 => Levels::new(
            LevelSpace::Conductance,
            vec![vec![50.0], vec![225.0]],
            vec![4.782321, -0.009107],
        ),
        2 => Levels::new(
            LevelSpace::Log10Resistance,
            vec![vec![2.62, 0.38], vec![1.34, 0.06]],
            vec![],
        ),
        _ => Ok(Levels::default()),
    }
    .unwrap()
}
