//! Tiny layers computed by hand (docs/functional.md works the first one through).
#![allow(clippy::disallowed_methods)]
// tests and tools make their fixtures with std::fs

// Test, bench and example code: a failed unwrap is a failed run, as it should be.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossbar::{AdcBits, Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{FuncOptions, Layer, LayerRun, ModeOutput};
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

fn fc(weights: Vec<i32>, input: Vec<i32>) -> QuantLayer {
    let k = input.len();
    QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(k, weights.len() / k),
        },
        signed: input.iter().any(|&x| x < 0),
        weights,
        input,
        samples: 1,
    }
}

fn run(l: &QuantLayer, hw: &Hardware, f: FuncOptions) -> Vec<ModeOutput> {
    let opts = SimOptions::default();
    let prep = Prepared::new(l, hw, &opts);
    let layer = Layer::new(&prep, hw, &opts, &f);
    let mut r = LayerRun::new(&layer, &Mode::ALL);
    r.feed(Samples::new(&l.input, l.samples));
    r.finish()
}

fn keep() -> FuncOptions {
    FuncOptions {
        keep_outputs: true,
        // The datapath itself, OU by OU, not the exact fast path.
        exact_fast_path: false,
        ..FuncOptions::default()
    }
}

/// w = [3, -2, 1], x = [2, 1, 3]: Y = 6 - 2 + 3 = 7. 1-bit cells, 3-bit weights (2
/// slices), 2-bit inputs read a bit per cycle. With a 1-bit ADC, the dense OUs {0, 1},
/// {2} of a 3-row crossbar never sum above 1 (dense, activation: Y = 7). The ideal
/// whole-tile read, and the compacted OU {0, 2} of the positive group (weight, sre: row
/// 1 holds no positive cell), put rows 0 and 2 together: cycle 1 sees x-bits [1, 0, 1]
/// against slice-0 cells [1, 0, 1] and clips 2 to 1:
/// cycle 0: pos s0 = 1, pos s1 = 0, neg s1 = 1 -> 1 - 2 = -1;
/// cycle 1: pos s0 = 2 -> 1, pos s1 = 1, neg s1 = 0 -> 2 * (1 + 2) = 6; Y = 5.
#[test]
fn one_bit_adc_clips_where_rows_0_and_2_share_a_read() {
    let l = fc(vec![3, -2, 1], vec![2, 1, 3]);
    let hw = Hardware {
        xbar_rows: 3,
        xbar_cols: 4,
        cell_bits: 1,
        ou_rows: 2,
        ou_cols: 2,
        weight_bits: 3,
        input_bits: 2,
        adc_bits: AdcBits::Fixed(1),
        ..Hardware::default()
    };
    let got: Vec<(Mode, Vec<i64>)> = run(&l, &hw, keep())
        .into_iter()
        .map(|r| (r.mode, r.outputs.unwrap()))
        .collect();
    for (mode, y) in &got {
        let want = match mode {
            Mode::Dense | Mode::Activation => 7,
            _ => 5,
        };
        assert_eq!(y, &vec![want], "{mode}");
    }
}

/// A wrong index decoder (physical row i driven by the input of C_g[i + 1]) with the
/// right row counts: the counting engines cannot see it; the values can. Only the
/// compacted modes route through the decoder.
#[test]
fn a_wrong_index_decode_is_caught() {
    fn shifted(g: &sparsity::CompressedGroup, phys: u32) -> u32 {
        g.rows[(phys as usize + 1) % g.rows.len()]
    }
    let hw = Hardware {
        xbar_rows: 3,
        xbar_cols: 4,
        cell_bits: 1,
        ou_rows: 2,
        ou_cols: 2,
        weight_bits: 3,
        input_bits: 2,
        ..Hardware::default()
    };
    // Positive group: rows {0, 2} hold 3 and 1; swapped inputs give 3*3 + 1*2 - 2 = 9.
    let l = fc(vec![3, -2, 1], vec![2, 1, 3]);
    let wrong = FuncOptions {
        decoder: shifted,
        ..keep()
    };
    for r in run(&l, &hw, wrong.clone()) {
        let want = if r.mode.compacted() { 9 } else { 7 };
        assert_eq!(r.outputs.unwrap(), vec![want], "{}", r.mode);
    }
    // A larger layer: every compacted output the decoder touches goes wrong.
    let k = 40;
    let w: Vec<i32> = (0..k * 5).map(|i| [0, 3, -1, 0, 2, -3, 0][i % 7]).collect();
    let x: Vec<i32> = (0..k).map(|i| (i as i32 * 7) % 4).collect();
    let hw = Hardware {
        xbar_rows: 16,
        ..hw
    };
    for (right, r) in run(&fc(w.clone(), x.clone()), &hw, keep())
        .into_iter()
        .zip(run(&fc(w, x), &hw, wrong))
    {
        assert_eq!(right.metrics.exact_frac(), Some(1.0));
        if r.mode.compacted() {
            assert!(
                r.metrics.exact_frac().unwrap() < 0.5,
                "{}: {:?}",
                r.mode,
                r.metrics
            );
        } else {
            assert_eq!(r, right);
        }
    }
}

#[test]
fn a_product_wider_than_int64_is_refused() {
    let hw = Hardware {
        weight_bits: 32,
        input_bits: 31,
        cell_bits: 2,
        ..Hardware::default()
    };
    // 31 + 31 + ceil(log2 2) = 63 fits; K = 3 needs 64 bits.
    assert!(functional::check_layer(&fc(vec![1, 1], vec![1, 1]).spec, &hw).is_ok());
    let e = functional::check_layer(&fc(vec![1, 1, 1], vec![1, 1, 1]).spec, &hw).unwrap_err();
    assert_eq!(
        e.to_string(),
        "layer fc: its exact product needs 64 bits ((weight_bits - 1) + input_bits + ceil(log2 K) = 31 + 31 + 2), more than an int64 holds; lower precision.weight_bits or precision.input_bits"
    );
}
