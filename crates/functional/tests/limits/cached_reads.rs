//! A per-cell read that draws nothing (variation and an off current, no read noise, DAC
//! noise or converter errors: the `dlrsim-rram` and `milo-rram` presets, a level table) sums the cached
//! conductances of a block of columns in registers and converts them there, or, in the
//! fixed OUs of the dense and weight modes, looks its counts up in a table per OU; both
//! must read the same bits as the reference, which draws every cell's conductance at
//! every read and adds it column by column. In the limits binary: the limits it sets are
//! process-wide.
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cases;

use cases::{arb_case, arb_wide, hardware, keep, run_modes};
use crossbar::{AdcBits, Mode};
use engine::{Prepared, SimOptions};
use functional::{
    set_conductance_cache_limit, set_count_table_limit, Device, FuncOptions, Layer, LayerRun,
    LevelSpace, Levels, CONDUCTANCE_CACHE_BYTES, COUNT_TABLE_BYTES,
};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

use crate::LIMITS;

/// The device of the dlrsim-rram preset of earlier releases: variation and an off current.
fn cells() -> Device {
    Device {
        on_off_ratio: Some(19.05),
        sigma: 0.162,
        ..Device::default()
    }
}

/// Bytes of the dense mode's count tables of an fc layer of 8-bit inputs (one vector a
/// sample, one pass, 8 cycles: 8 reads of each OU a sample).
fn dense_table_bytes(ou: u32, dac: u32, adc_bits: Option<u32>, device: Device) -> usize {
    let hw = hardware((64, 32, 2), (ou, 8), (8, 8, dac), false).unwrap();
    let hw = crossbar::Hardware {
        adc_bits: adc_bits.map_or(AdcBits::Auto, AdcBits::Fixed),
        ..hw
    };
    let (k, n) = (40, 3);
    let l = QuantLayer {
        spec: LayerSpec {
            name: "pin".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(k, n),
        },
        signed: false,
        weights: (0..k * n).map(|i| (i % 7) as i32 - 3).collect(),
        input: (0..k).map(|i| (i % 5) as i32).collect(),
        samples: 1,
    };
    let opts = SimOptions::default();
    let prep = Prepared::new(&l, &hw, &opts);
    let f = FuncOptions { device, ..keep() };
    let layer = Layer::new(&prep, &hw, &opts, &f);
    layer.program(Mode::Dense);
    let programs = layer.program_heap_bytes();
    let _run = LayerRun::new(&layer, &[Mode::Dense]);
    layer.program_heap_bytes() - programs
}

#[test]
fn fixed_ous_are_tabled_when_a_sample_reads_each_as_often_as_it_has_masks() {
    let _limits = LIMITS.lock().unwrap_or_else(|e| e.into_inner());
    // 8 reads of each OU a sample: OUs of up to 3 rows (8 masks) are tabled.
    assert!(dense_table_bytes(3, 1, None, cells()) > 0);
    assert_eq!(dense_table_bytes(4, 1, None, cells()), 0, "16 masks");
    assert_eq!(dense_table_bytes(3, 2, None, cells()), 0, "two-bit digits");
    assert_eq!(
        dense_table_bytes(3, 1, Some(9), cells()),
        0,
        "counts past a byte"
    );
    assert!(dense_table_bytes(3, 1, Some(8), cells()) > 0);
    let noisy = Device {
        read_noise: 0.01,
        ..cells()
    };
    assert_eq!(dense_table_bytes(3, 1, None, noisy), 0, "read noise");
    assert_eq!(
        dense_table_bytes(3, 1, None, Device::default()),
        0,
        "ideal cells"
    );
}

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
        table in 0usize..3,
    ) {
        prop_assume!(on_off.is_some() || sigma > 0.0 || table > 0);
        // A level table (docs/functional.md, "Cells by level") in place of both.
        let levels = levels_table(table);
        let (on_off, sigma) = if levels.active() { (None, 0.0) } else { (on_off, sigma) };
        if let Some(b) = bits {
            hw.adc_bits = AdcBits::Fixed(b);
        }
        let f = FuncOptions {
            adc_step,
            device: Device {
                on_off_ratio: on_off,
                sigma,
                ir_drop,
                seed,
                levels,
                ..Device::default()
            },
            ..keep()
        };
        let _limits = LIMITS.lock().unwrap_or_else(|e| e.into_inner());
        set_conductance_cache_limit(0);
        let drawn = run_modes(&l, &hw, &opts, f.clone(), l.samples);
        set_conductance_cache_limit(CONDUCTANCE_CACHE_BYTES);
        set_count_table_limit(0);
        let blocks = run_modes(&l, &hw, &opts, f.clone(), l.samples);
        set_count_table_limit(COUNT_TABLE_BYTES);
        let tabled = run_modes(&l, &hw, &opts, f, l.samples);
        prop_assert_eq!(&drawn, &blocks);
        prop_assert_eq!(&drawn, &tabled);
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
