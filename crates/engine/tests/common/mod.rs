//! Random small layers and configurations for differential tests.
#![allow(dead_code)]
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crossbar::{AdcBits, Hardware, Layout, Mode};
use energy::Events;
use engine::{simulate, EngineKind, Granularity, Prepared, SignedEncoding, SimOptions};
use pipeline::cycle::{PipelineOptions, QueueDepth};
use pipeline::{SlowStage, Stage, Sync};
use proptest::prelude::*;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// A small conv or fc layer with sparse weights and sparse (maybe signed) inputs.
pub fn arb_layer(weight_bits: u32, input_bits: u32) -> impl Strategy<Value = QuantLayer> {
    let geom = (
        1usize..=3, // groups
        1usize..=3, // in channels per group
        1usize..=3, // out channels per group
        1usize..=3, // kernel
        1usize..=2, // stride
        0usize..=1, // padding
        1usize..=2, // dilation
        3usize..=6, // input size
        any::<bool>(),
    )
        .prop_filter_map("kernel fits", |(g, cig, cog, r, st, pad, dil, hw, fc)| {
            let geom = if fc {
                ConvGeometry::fc(g * cig * 4, cog * 3)
            } else {
                ConvGeometry {
                    in_channels: g * cig,
                    out_channels: g * cog,
                    kernel: [r, r],
                    stride: [st, st],
                    padding: [pad, pad],
                    dilation: [dil, dil],
                    groups: g,
                    input_hw: [hw, hw],
                }
            };
            geom.validate().ok().map(|_| geom)
        });
    (
        geom,
        1usize..=3,
        0.0f64..1.0,
        0.0f64..1.0,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(move |(geom, samples, wz, xz, signed, seed)| {
            let mut rng = seed;
            let mut next = move || {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            };
            let wmax = (1i64 << (weight_bits - 1)) - 1;
            let weights = (0..geom.weight_elements())
                .map(|_| {
                    if (next() % 1000) as f64 / 1000.0 < wz {
                        0
                    } else {
                        (next() as i64 % (2 * wmax + 1) - wmax) as i32
                    }
                })
                .collect();
            let (lo, hi) = if signed {
                let m = (1i64 << (input_bits - 1)) - 1;
                (-m, m)
            } else {
                (0, (1i64 << input_bits) - 1)
            };
            let input: Vec<i32> = (0..samples * geom.input_elements())
                .map(|_| {
                    if (next() % 1000) as f64 / 1000.0 < xz {
                        0
                    } else {
                        (lo + (next() % (hi - lo + 1) as u64) as i64) as i32
                    }
                })
                .collect();
            let signed = input.iter().any(|&x| x < 0);
            let kind = if geom.kernel == [1, 1] && geom.input_hw == [1, 1] {
                LayerKind::Fc
            } else {
                LayerKind::Conv
            };
            QuantLayer {
                spec: LayerSpec {
                    name: "l".into(),
                    kind,
                    geom,
                },
                weights,
                input,
                samples,
                signed,
            }
        })
}

/// Crossbars of (rows, cols, cell_bits), OUs of (rows, cols) (at most the crossbar's),
/// (weight_bits, input_bits, dac.bits), weight- or slice-major; the rest the defaults.
/// Not validated.
pub fn hardware(
    (xr, xc, cb): (u32, u32, u32),
    (our, ouc): (u32, u32),
    (wb, ib, dac): (u32, u32, u32),
    slice_major: bool,
) -> Hardware {
    Hardware {
        xbar_rows: xr,
        xbar_cols: xc,
        cell_bits: cb,
        ou_rows: our.min(xr),
        ou_cols: ouc.min(xc),
        weight_bits: wb,
        input_bits: ib,
        dac_bits: dac,
        layout: if slice_major {
            Layout::SliceMajor
        } else {
            Layout::WeightMajor
        },
        ..Hardware::default()
    }
}

/// Small hardware with every knob in play.
pub fn arb_hw() -> impl Strategy<Value = Hardware> {
    (
        (2u32..=12, 2u32..=12, 1u32..=3),
        (1u32..=8, 1u32..=6),
        (3u32..=8, 2u32..=6, 1u32..=2),
        (
            1u32..=4,
            1u32..=9,
            any::<bool>(),
            prop::option::of(3u32..=9),
        ),
    )
        .prop_filter_map(
            "valid hardware",
            |(xbar, ou, precision, (adc, idx, sm, adc_bits))| {
                let hw = Hardware {
                    adc_bits: adc_bits.map_or(AdcBits::Auto, AdcBits::Fixed),
                    adc_per_crossbar: adc,
                    index_rows_per_cycle: idx,
                    ..hardware(xbar, ou, precision, sm)
                };
                hw.validate().ok().map(|_| hw)
            },
        )
}

/// `[pipeline]` options every engine runs: a queue depth the closed form covers
/// (auto, 1 or unbounded) and maybe a slow stage.
pub fn arb_pipeline() -> impl Strategy<Value = PipelineOptions> {
    (0usize..3, prop::option::of((0usize..7, 1u32..=4))).prop_map(|(d, slow)| PipelineOptions {
        queue_depth: [
            QueueDepth::Auto,
            QueueDepth::Finite(1),
            QueueDepth::Unbounded,
        ][d],
        slow_stage: slow.map(|(s, cycles)| SlowStage {
            stage: Stage::ALL[s],
            cycles,
        }),
    })
}

pub fn arb_opts() -> impl Strategy<Value = SimOptions> {
    (0usize..3, any::<bool>(), any::<bool>(), arb_pipeline()).prop_map(|(s, bit, sm, pipeline)| {
        SimOptions {
            pipeline,
            sync: [Sync::Bit, Sync::Vector, Sync::None][s],
            granularity: if bit {
                Granularity::Bit
            } else {
                Granularity::Value
            },
            encoding: if sm {
                SignedEncoding::SignMagnitude
            } else {
                SignedEncoding::TwosComplement
            },
        }
    })
}

/// A layer together with hardware whose precision fits it.
pub fn arb_case() -> impl Strategy<Value = (QuantLayer, Hardware, SimOptions)> {
    (arb_hw(), arb_opts()).prop_flat_map(|(hw, opts)| {
        (
            arb_layer(hw.weight_bits, hw.input_bits),
            Just(hw),
            Just(opts),
        )
    })
}

pub fn run(
    layer: &QuantLayer,
    hw: &Hardware,
    opts: &SimOptions,
    mode: Mode,
    e: EngineKind,
) -> Events {
    let prep = Prepared::new(layer, hw, opts);
    simulate(&prep, hw, opts, mode, e, None).expect("engine runs")
}
