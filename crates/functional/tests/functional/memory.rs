//! The memory bound of a functional run (`limits.max_layer_bytes`) is an upper bound of
//! what its programs hold, over layers of every shape: a bound below the truth would let
//! a run through that then exhausts memory.

use crossbar::{Hardware, Mode};
use engine::{Prepared, SimOptions};
use functional::{program_bytes, Budget, FuncOptions, Layer};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

fn layer(geom: ConvGeometry, kind: LayerKind, seed: u64) -> QuantLayer {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    QuantLayer {
        spec: LayerSpec {
            name: "l".into(),
            kind,
            geom: geom.clone(),
        },
        // Every weight non-zero: the compacted program is as large as it gets.
        weights: (0..geom.weight_elements())
            .map(|_| (next() % 200) as i32 + 1)
            .collect(),
        input: vec![1; geom.input_elements()],
        samples: 1,
        signed: false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn the_estimate_bounds_the_programs(
        cin in 1usize..6, cout in 1usize..40, kernel in 1usize..4, groups_pick in 0usize..2,
        fc in any::<bool>(), rows in 2u32..140, cols in 2u32..70, ou_rows in 1u32..20,
        ou_cols in 1u32..12, cell_bits in 1u32..5, weight_bits in 2u32..17, seed in any::<u64>(),
        per_cell in any::<bool>(), noisy in any::<bool>(),
    ) {
        let (geom, kind) = if fc {
            (ConvGeometry::fc(cin * kernel * 7, cout), LayerKind::Fc)
        } else {
            let g = if groups_pick == 1 { cin } else { 1 };
            (ConvGeometry::conv(cin, g * cout.div_ceil(g), kernel, 1, 0, g, [5, 5]), LayerKind::Conv)
        };
        prop_assume!(geom.validate().is_ok());
        let hw = Hardware {
            xbar_rows: rows,
            xbar_cols: cols,
            ou_rows: ou_rows.min(rows),
            ou_cols: ou_cols.min(cols),
            cell_bits,
            weight_bits,
            input_bits: 8,
            ..Hardware::default()
        };
        let l = layer(geom, kind, seed);
        let opts = SimOptions::default();
        let prep = Prepared::new(&l, &hw, &opts);
        // A device with variation: every cell's conductance is cached with its program;
        // with read noise alone (the skip sampler's alias reads), every cell's level as
        // a byte.
        let device = functional::Device {
            sigma: if per_cell { 0.1 } else { 0.0 },
            read_noise: if noisy { 0.2 } else { 0.0 },
            ..Default::default()
        };
        let f = FuncOptions { device, ..FuncOptions::default() };
        let fl = Layer::new(&prep, &hw, &opts, &f);
        fl.program(Mode::Dense);
        fl.program(Mode::Sre);
        let held = fl.program_heap_bytes() as u128;
        let budget = Budget {
            hw: &hw,
            modes: &Mode::ALL,
            applied_bits: 8,
            held_samples: 1,
            kept_samples: 0,
            threads: 1,
            per_cell,
            skip: f.device.skips(),
        };
        let bound = program_bytes(&l.spec, &budget);
        prop_assert!(held <= bound, "programs hold {held} bytes, the estimate says {bound}");
    }
}
