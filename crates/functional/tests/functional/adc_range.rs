//! The ADC as a study axis (docs/functional.md, "ADC range"): clipping counted by hand
//! on a tiny layer, the calibrated steps of `max` and `percentile:P`, and `full` with
//! at least auto's bits reading exactly.

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::cases;

use cases::{arb_case, direct_conv, keep, run_modes};
use crossbar::{AdcBits, Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{calibrate, AdcRange, FuncOptions, ModeOutput};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// w = [1, 1, 1], x = [3, 1, 2]: 1-bit cells, 2-bit weights (one cell), 2-bit inputs read
/// a bit per cycle (digits [1, 1, 0], then [1, 0, 1]), 2-row OUs, a 1-bit ADC (codes 0
/// and 1: a sum of 2 or more clips). Y exact = 6.
fn tiny() -> (QuantLayer, Hardware) {
    let l = QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(3, 1),
        },
        signed: false,
        weights: vec![1, 1, 1],
        input: vec![3, 1, 2],
        samples: 1,
    };
    let hw = Hardware {
        xbar_rows: 3,
        xbar_cols: 4,
        cell_bits: 1,
        ou_rows: 2,
        ou_cols: 2,
        weight_bits: 2,
        input_bits: 2,
        adc_bits: AdcBits::Fixed(1),
        ..Hardware::default()
    };
    (l, hw)
}

fn run(l: &QuantLayer, hw: &Hardware, f: FuncOptions) -> Vec<ModeOutput> {
    run_modes(l, hw, &SimOptions::default(), f, l.samples)
}

/// Dense (and activation, whose OUs here are the same {0, 1}, {2}): cycle 0 reads
/// OU {0, 1} (sum 2: clips to 1) and skips OU {2} (digit 0, no current); cycle 1 reads
/// OU {0, 1} (sum 1) and OU {2} (sum 1). Three reads with current, each converting the
/// one column of the positive tile and the one of the (empty) negative tile: 6
/// conversions, 1 clipped; Y = 1 + 2 * (1 + 1) = 5. Ideal reads the whole tile: sums 2
/// and 2, both clip: 4 conversions, 2 clipped, Y = 1 + 2 = 3.
#[test]
fn clipping_counted_by_hand() {
    let (l, hw) = tiny();
    for r in run(&l, &hw, keep()) {
        let m = &r.metrics;
        let y = r.outputs.unwrap()[0];
        match r.mode {
            Mode::Dense | Mode::Activation => {
                assert_eq!((m.adc_conversions, m.adc_clips, y), (6, 1, 5), "{}", r.mode);
                assert_eq!(m.adc_clip_frac(), Some(1.0 / 6.0));
            }
            Mode::Ideal => assert_eq!((m.adc_conversions, m.adc_clips, y), (4, 2, 3)),
            // The compacted tiles hold the positive rows only: the same clip.
            _ => assert_eq!((m.adc_clips, y), (1, 5), "{}", r.mode),
        }
    }
    // With auto bits nothing clips and every mode is exact.
    let auto = Hardware {
        adc_bits: AdcBits::Auto,
        ..hw
    };
    for r in run(&l, &auto, keep()) {
        assert_eq!(r.metrics.adc_clips, 0, "{}", r.mode);
        assert_eq!(r.outputs.unwrap(), [6], "{}", r.mode);
    }
}

/// The non-zero ideal sums of dense are 2, 1, 1: `max` calibrates the step at which one
/// bit reaches 2 (step 2: codes 0 and 2, nothing clips, the sums of 1 round up to 2: Y
/// = 2 + 2 * (2 + 2) = 10); percentile 50 (rank 2 of 3) is 1 (step 1, today's ADC).
/// `full` is the 2-row OU's largest sum, 2: step 2 as well.
#[test]
fn calibrated_steps_by_hand() {
    let (l, hw) = tiny();
    let sim = SimOptions::default();
    let prep = Prepared::new(&l, &hw, &sim);
    let samples = Samples::new(&l.input, 1);
    let cal = |range| calibrate(&prep, &hw, &sim, &[Mode::Dense], samples, range);
    assert_eq!(cal(AdcRange::Percentile(100.0)), [(Mode::Dense, 2)]);
    assert_eq!(cal(AdcRange::Percentile(50.0)), [(Mode::Dense, 1)]);
    assert_eq!(cal(AdcRange::Percentile(33.0)), [(Mode::Dense, 1)]);
    assert_eq!(cal(AdcRange::Full), [(Mode::Dense, 2)]);
    let steps = cal(AdcRange::Percentile(100.0));
    let f = FuncOptions {
        adc_range: AdcRange::Percentile(100.0),
        adc_steps: std::sync::Arc::new(vec![("fc".into(), Mode::Dense, steps[0].1)]),
        ..keep()
    };
    let dense = run(&l, &hw, f)
        .into_iter()
        .find(|r| r.mode == Mode::Dense)
        .unwrap();
    assert_eq!(dense.metrics.adc_clips, 0);
    assert_eq!(dense.outputs.unwrap(), [10]);
    let full = FuncOptions {
        adc_range: AdcRange::Full,
        ..keep()
    };
    let dense = run(&l, &hw, full)
        .into_iter()
        .find(|r| r.mode == Mode::Dense)
        .unwrap();
    assert_eq!(
        (dense.metrics.adc_clips, dense.outputs.unwrap()[0]),
        (0, 10)
    );
    assert_eq!(AdcRange::parse("max"), Ok(AdcRange::Percentile(100.0)));
    assert_eq!(
        AdcRange::parse("percentile:99.5"),
        Ok(AdcRange::Percentile(99.5))
    );
    for bad in ["percentile:0", "percentile:101", "percentile:x", "half"] {
        assert!(AdcRange::parse(bad).is_err(), "{bad}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// `adc.range = full` with at least the bits auto gives every mode reads exactly
    /// (the step is 1) and clips nothing; so does auto itself.
    #[test]
    fn full_range_with_auto_bits_or_more_is_exact(
        (l, mut hw, opts) in arb_case(), extra in 0u32..3,
    ) {
        let want = direct_conv(&l);
        for r in run_modes(&l, &hw, &opts, keep(), l.samples) {
            prop_assert_eq!(r.metrics.adc_clips, 0);
        }
        let bits = Mode::ALL.iter().map(|&m| hw.adc_resolution(m)).max().unwrap();
        hw.adc_bits = AdcBits::Fixed((bits + extra).min(32));
        let f = FuncOptions { adc_range: AdcRange::Full, ..keep() };
        for r in run_modes(&l, &hw, &opts, f, l.samples) {
            prop_assert_eq!(r.outputs.as_deref(), Some(&want[..]), "{} {:?}", r.mode, hw);
            prop_assert_eq!(r.metrics.adc_clips, 0);
        }
    }
}
