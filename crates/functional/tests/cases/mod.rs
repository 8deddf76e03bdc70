//! Random small layers and hardware for the functional tests, and a runner that feeds a
//! layer's samples a chunk at a time.
#![allow(dead_code)]

use crate::common::{arb_layer, arb_opts};
use crossbar::{Hardware, Mode};
use engine::{Prepared, Samples, SimOptions};
use functional::{FuncOptions, Layer, LayerRun, ModeOutput};
use proptest::prelude::*;
use workload::QuantLayer;

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
