//! Tests of the crate root (lib.rs).

use super::*;

/// Two fc layers of 400,000 and 5,000 MACs: the float and quantized networks weigh
/// every MAC, a mode on the exact fast path nothing, a mode read OU by OU the datapath
/// weight on its crossbar layers and the quantized weight on the others.
#[test]
fn work_weighs_each_mac_by_how_its_path_computes_it() {
    let geoms = [
        workload::ConvGeometry::fc(800, 500),
        workload::ConvGeometry::fc(500, 10),
    ];
    let geoms: Vec<&workload::ConvGeometry> = geoms.iter().collect();
    let hw = Hardware::default();
    let ideal = FuncOptions::default();
    let ou_by_ou = FuncOptions {
        exact_fast_path: false,
        ..FuncOptions::default()
    };
    let modes = [Mode::Dense, Mode::Sre];
    let w = Work::of(&geoms, &[true, false], &hw, &ideal, &modes);
    assert_eq!(w.float, 405_000 * FLOAT_UNITS_PER_MAC);
    assert_eq!(w.quantized, 405_000 * QUANTIZED_UNITS_PER_MAC);
    assert_eq!(w.modes, [0, 0]);
    assert_eq!(w.setup, 405_000 * SETUP_UNITS_PER_WEIGHT);
    let w = Work::of(&geoms, &[true, false], &hw, &ou_by_ou, &modes);
    let mode = 400_000 * DATAPATH_UNITS_PER_MAC + 5_000 * QUANTIZED_UNITS_PER_MAC;
    assert_eq!(w.modes, [mode, mode]);
    let per_layer = vec![
        400_000 * DATAPATH_UNITS_PER_MAC,
        5_000 * QUANTIZED_UNITS_PER_MAC,
    ];
    assert_eq!(w.layers[2..], [per_layer.clone(), per_layer]);
    assert_eq!(
        w.layers[0],
        [400_000 * FLOAT_UNITS_PER_MAC, 5_000 * FLOAT_UNITS_PER_MAC]
    );
    assert_eq!(
        w.total(3),
        w.setup + 3 * (405_000 * (FLOAT_UNITS_PER_MAC + QUANTIZED_UNITS_PER_MAC) + 2 * mode)
    );
}

proptest::proptest! {
    /// The figures of an exact output read in its vector-major layout are, to the
    /// last bit, those of datapath_figures over the channel-major one.
    #[test]
    fn exact_figures_equal_the_datapath_figures_of_exact_outputs(
        per in 1usize..80, outs in 1usize..50, seed in 0u64..1000,
    ) {
        let mut s = seed;
        let vectors: Vec<i64> = (0..per * outs)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 20) as i64 % 2_000_001 - 1_000_000
            })
            .collect();
        let exact = layer::to_channel_major(&vectors, 1, per, outs);
        let want = datapath_figures(&exact, &exact, per);
        let got = figures_of_exact(&vectors);
        proptest::prop_assert_eq!(got.sq_exact.to_bits(), want.sq_exact.to_bits());
        proptest::prop_assert_eq!(got.sq_err.to_bits(), want.sq_err.to_bits());
        proptest::prop_assert_eq!(got, want);
    }
}

#[test]
fn argmax_predicts_no_class_from_a_nan() {
    assert_eq!(super::argmax(&[1.0, 3.0, 3.0, -1.0]), Some(1));
    assert_eq!(super::argmax(&[f64::NEG_INFINITY, -1.0]), Some(1));
    // Before: 0 for both, so two NaN outputs counted as agreeing.
    assert_eq!(super::argmax(&[f64::NAN, 2.0]), None);
    assert_eq!(super::argmax(&[2.0, f64::NAN]), None);
    assert_eq!(super::argmax(&[]), None);
}
