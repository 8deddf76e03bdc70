//! Random small layers and hardware for the functional tests, and a runner that feeds a
//! layer's samples a chunk at a time.
#![allow(dead_code)]

use crate::common::{arb_layer, arb_opts};
use crossbar::{Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{FuncOptions, Layer, LayerRun, ModeOutput};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// Hardware over the ranges of the invariant: cell_bits and dac.bits 1..4, odd sizes.
pub fn arb_hw() -> impl Strategy<Value = Hardware> {
    (
        (2u32..=12, 2u32..=12, 1u32..=4),
        (1u32..=8, 1u32..=6),
        (2u32..=9, 2u32..=7, 1u32..=4),
        any::<bool>(),
    )
        .prop_filter_map("valid hardware", |(xbar, ou, precision, sm)| {
            hardware(xbar, ou, precision, sm)
        })
}

/// [`crate::common::hardware`] when it is valid, with the ADC's resolution `auto`.
pub fn hardware(
    xbar: (u32, u32, u32),
    ou: (u32, u32),
    precision: (u32, u32, u32),
    slice_major: bool,
) -> Option<Hardware> {
    let hw = crate::common::hardware(xbar, ou, precision, slice_major);
    hw.validate().ok().map(|_| hw)
}

/// A random layer whose weights are within the precision (the shared generator may
/// draw up to twice the largest magnitude, which the counting engines do not mind).
pub fn arb_case() -> impl Strategy<Value = (QuantLayer, Hardware, SimOptions)> {
    (arb_hw(), arb_opts()).prop_flat_map(|(hw, opts)| {
        let wmax = (1i32 << (hw.weight_bits - 1)) - 1;
        let layer = arb_layer(hw.weight_bits, hw.input_bits).prop_map(move |mut l| {
            l.weights
                .iter_mut()
                .for_each(|q| *q = (*q).clamp(-wmax, wmax));
            l
        });
        (layer, Just(hw), Just(opts))
    })
}

/// The layer's output [N, Cout, Ho, Wo] by direct convolution.
pub fn direct_conv(l: &QuantLayer) -> Vec<i64> {
    let g = l.geom();
    let [h, w] = g.input_hw;
    let [ho_n, wo_n] = g.output_hw();
    let cig = g.in_channels / g.groups;
    let cog = g.out_channels / g.groups;
    let mut out = Vec::new();
    for n in 0..l.samples {
        for co in 0..g.out_channels {
            let grp = co / cog;
            for ho in 0..ho_n {
                for wo in 0..wo_n {
                    let mut y = 0i64;
                    for c in 0..cig {
                        let ci = grp * cig + c;
                        for r in 0..g.kernel[0] {
                            for s in 0..g.kernel[1] {
                                let ih = (ho * g.stride[0] + r * g.dilation[0]) as isize
                                    - g.padding[0] as isize;
                                let iw = (wo * g.stride[1] + s * g.dilation[1]) as isize
                                    - g.padding[1] as isize;
                                if ih < 0 || iw < 0 || ih as usize >= h || iw as usize >= w {
                                    continue;
                                }
                                let x = l.input[((n * g.in_channels + ci) * h + ih as usize) * w
                                    + iw as usize];
                                let wt =
                                    l.weights[((co * cig + c) * g.kernel[0] + r) * g.kernel[1] + s];
                                y += x as i64 * wt as i64;
                            }
                        }
                    }
                    out.push(y);
                }
            }
        }
    }
    out
}

/// Every mode of `l`, its samples fed `chunk` at a time.
pub fn run_modes(
    l: &QuantLayer,
    hw: &Hardware,
    opts: &SimOptions,
    f: FuncOptions,
    chunk: usize,
) -> Vec<ModeOutput> {
    let prep = Prepared::new(l, hw, opts);
    let layer = Layer::new(&prep, hw, opts, &f);
    let mut run = LayerRun::new(&layer, &Mode::ALL);
    let per = l.geom().input_elements();
    for start in (0..l.samples).step_by(chunk) {
        let n = chunk.min(l.samples - start);
        run.feed(Samples::new(&l.input[start * per..(start + n) * per], n));
    }
    run.finish()
}

pub fn keep() -> FuncOptions {
    FuncOptions {
        keep_outputs: true,
        // The datapath itself, OU by OU, not the exact fast path.
        exact_fast_path: false,
        ..FuncOptions::default()
    }
}

/// An fc layer of k = 65..200 inputs and `outputs` outputs, some weights and inputs 0,
/// on crossbars of 64..140 rows (bit-planes of one to three words) and `cols` columns,
/// with OUs of any height.
pub fn arb_wide(
    cols: std::ops::RangeInclusive<u32>,
    outputs: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = (QuantLayer, Hardware, SimOptions)> {
    (
        (64u32..=140, cols, 1u32..=3),
        (1u32..=140, 1u32..=8),
        (2u32..=6, 2u32..=6, 1u32..=2),
        any::<bool>(),
        (65usize..=200, outputs, 1usize..=2),
        arb_opts(),
        any::<u64>(),
    )
        .prop_filter_map(
            "valid hardware",
            |(xbar, ou, (wb, ib, dac), sm, (k, n, samples), opts, seed)| {
                let hw = hardware(xbar, ou, (wb, ib, dac), sm)?;
                let mut h = seed;
                let mut draw = |m: i64| {
                    h = functional_mix(h);
                    // A third of the values 0 (pruned weights, idle inputs).
                    if h % 3 == 0 {
                        0
                    } else {
                        ((h >> 8) % (2 * m as u64 + 1)) as i32 - m as i32
                    }
                };
                let wmax = (1i64 << (wb - 1)) - 1;
                let xmax = (1i64 << (ib - 1)) - 1;
                let weights = (0..k * n).map(|_| draw(wmax)).collect();
                let input: Vec<i32> = (0..k * samples).map(|_| draw(xmax)).collect();
                let l = QuantLayer {
                    spec: LayerSpec {
                        name: "wide".into(),
                        kind: LayerKind::Fc,
                        geom: ConvGeometry::fc(k, n),
                    },
                    signed: input.iter().any(|&x| x < 0),
                    weights,
                    input,
                    samples,
                };
                Some((l, hw, opts))
            },
        )
}

/// SplitMix64's finalizer (the layer's values need only be spread, not keyed).
fn functional_mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
