//! Tests of a layer's functional run.

use super::*;
use crate::datapath::Flush;
use crate::device::Device;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// A signed fc layer of 150 rows (two words, OUs across them) and 7 columns, a third
/// of its weights zero and, when `zero_every` > 0, every such input; 4-bit inputs,
/// 9-row OUs. `seed` draws the values.
fn wide_layer(seed: u64, zero_every: usize) -> (QuantLayer, Hardware) {
    wide_layer_of(seed, zero_every, 7)
}

/// [`wide_layer`] with `n` outputs.
fn wide_layer_of(seed: u64, zero_every: usize, n: usize) -> (QuantLayer, Hardware) {
    let k = 150usize;
    let mut h = seed;
    let mut next = |m: i64| {
        h = crate::rng::mix(h);
        (h % (2 * m as u64 + 1)) as i32 - m as i32
    };
    let weights: Vec<i32> = (0..k * n)
        .map(|i| if i % 3 == 0 { 0 } else { next(100) })
        .collect();
    let input: Vec<i32> = (0..k)
        .map(|i| {
            if zero_every > 0 && i % zero_every == 0 {
                0
            } else {
                next(7)
            }
        })
        .collect();
    let l = QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(k, n),
        },
        signed: true,
        weights,
        input,
        samples: 1,
    };
    let hw = Hardware {
        ou_rows: 9,
        input_bits: 4,
        ..Hardware::default()
    };
    (l, hw)
}

/// The skip sampler with every class drawing per read (a threshold of 0) reads the
/// same bits as the per-read sampler, in every mode, with IR drop, on a layer of 150
/// rows and 4-bit inputs: its fallback, keys and plumbing are the per-read ones;
/// with its threshold it draws other bits (and per-read draws stay as they were).
#[test]
fn the_skip_sampler_with_every_class_direct_is_the_per_read_sampler() {
    let (l, hw) = wide_layer(3, 0);
    let n = 7;
    let sim = SimOptions::default();
    let prep = Prepared::new(&l, &hw, &sim);
    let device = Device {
        read_noise: 0.2,
        ir_drop: 0.01,
        sampler: crate::Sampler::Skip,
        ..Device::default()
    };
    let per_read = FuncOptions {
        device: Device {
            sampler: crate::Sampler::PerRead,
            ..device.clone()
        },
        ..FuncOptions::default()
    };
    let skip = FuncOptions {
        device,
        ..FuncOptions::default()
    };
    let (lp, ls) = (
        Layer::new(&prep, &hw, &sim, &per_read),
        Layer::new(&prep, &hw, &sim, &skip),
    );
    let mut differ = 0;
    for mode in Mode::ALL {
        let (dp, ds) = (lp.datapath(mode), ls.datapath(mode));
        assert!(dp.laws.is_none() && ds.laws.is_some());
        let bits = (hw.cell_bits, prep.plan.dac_bits);
        let open = match mode {
            Mode::Ideal => 128,
            _ => 9,
        };
        let direct = Laws::new(
            &skip.device,
            ds.adc,
            (open, bits.0, bits.1),
            (0.0, f64::INFINITY),
        );
        let all_direct = Datapath {
            laws: Some(&direct),
            ..ds
        };
        let y = |d: &Datapath| {
            let mut s = Scratch::new(d, n);
            d.vector(&l.input, 5, &mut s);
            s.acc().to_vec()
        };
        let want = y(&dp);
        assert_eq!(y(&all_direct), want, "{mode}");
        differ += (y(&ds) != want) as usize;
    }
    assert!(
        differ >= 4,
        "the skip sampler drew the per-read bits in {} modes",
        5 - differ
    );
}

/// The alias draws' loops of each read shape (one-bit digits over one or two words,
/// 1- or 2-bit cells) and table size (8 to 64 buckets), with the CPU features, give
/// the bits of the loop of any shape and size without them: in every mode, at read
/// noise levels whose tables span those sizes, with and without IR drop, in tiles of
/// a whole word of columns (their planes indexed without bounds checks) and of less;
/// and so do they with the sums a word of columns at a time from the levels' bytes
/// (every tile keeps them here) and with the sums of the planes' popcounts.
#[test]
fn the_alias_loops_of_each_shape_and_size_give_the_general_loops_bits() {
    let mut sizes = std::collections::BTreeSet::new();
    let (mut compared, mut whole_words) = (0, 0);
    // 20 outputs of 2-bit cells: 160 columns, two whole words and a part of one.
    for (seed, cell_bits, n) in [(1, 2, 7), (2, 1, 7), (4, 2, 7), (5, 2, 20)] {
        let (l, mut hw) = wide_layer_of(seed, 5, n);
        hw.cell_bits = cell_bits;
        let sim = SimOptions::default();
        let prep = Prepared::new(&l, &hw, &sim);
        for rn in [0.02, 0.04, 0.08, 0.15, 0.3, 0.6, 1.2] {
            for ir in [0.0, 0.01] {
                let opts = FuncOptions {
                    device: Device {
                        read_noise: rn,
                        ir_drop: ir,
                        sampler: crate::Sampler::Skip,
                        ..Device::default()
                    },
                    ..FuncOptions::default()
                };
                let layer = Layer::new(&prep, &hw, &sim, &opts);
                for mode in Mode::ALL {
                    let dp = layer.datapath(mode);
                    let Some(lookup) = dp.laws.and_then(|l| l.lookup.as_ref()) else {
                        continue;
                    };
                    sizes.insert(lookup.kbits());
                    let tiles = &dp.program.tiles;
                    whole_words += tiles.iter().filter(|t| t.cols.len() >= 64).count();
                    assert!(
                        tiles.iter().all(|t| !t.levels.is_empty()),
                        "the tiles keep their levels as bytes"
                    );
                    for index in [0, 3] {
                        let mut fast = Scratch::new(&dp, n);
                        dp.vector(&l.input, index, &mut fast);
                        let mut general = Scratch::new(&dp, n);
                        general.general_reads();
                        dp.vector(&l.input, index, &mut general);
                        let mut planes = Scratch::new(&dp, n);
                        planes.plane_sums();
                        dp.vector(&l.input, index, &mut planes);
                        let what = format!("{mode} rn {rn} ir {ir} cells {cell_bits}");
                        assert_eq!(fast.acc(), general.acc(), "{what}");
                        assert_eq!(fast.clip_counts(), general.clip_counts(), "{what}");
                        assert_eq!(planes.acc(), general.acc(), "{what}: plane sums");
                        let clips = (planes.clip_counts(), general.clip_counts());
                        assert_eq!(clips.0, clips.1, "{what}: plane sums");
                        compared += 1;
                    }
                }
            }
        }
    }
    // Every specialised size was compared, and a smaller one (a table has at most
    // 64 buckets).
    assert!((3..=6).all(|k| sizes.contains(&k)), "{sizes:?}");
    assert!(sizes.iter().any(|&k| k < 3), "{sizes:?}");
    assert!(compared >= 100, "{compared}");
    assert!(
        whole_words > 0,
        "no tile of a whole word of columns was read"
    );
}

/// A column's codes summed over a tile's cycles (weighted), over one cycle, or
/// shift-and-added read by read (the paths of wider ADCs and inputs): the same Y in
/// every mode, ideal and noisy, on a layer of 150 rows (two words, OUs across them)
/// and 4-bit inputs.
#[test]
fn summing_a_tiles_codes_or_adding_each_read_gives_the_same_y() {
    let (l, hw) = wide_layer(1, 4);
    let n = 7;
    for device in [
        Device::default(),
        Device {
            read_noise: 0.05,
            ir_drop: 0.01,
            ..Device::default()
        },
        Device {
            read_noise: 0.05,
            ir_drop: 0.01,
            sampler: crate::Sampler::Skip,
            ..Device::default()
        },
    ] {
        let sim = SimOptions::default();
        let prep = Prepared::new(&l, &hw, &sim);
        let opts = FuncOptions {
            device,
            ..FuncOptions::default()
        };
        let layer = Layer::new(&prep, &hw, &sim, &opts);
        for mode in Mode::ALL {
            let dp = layer.datapath(mode);
            // The latest flush whose sums fit below 2^63: codes of up to
            // (2^32 - 1) * step, up to 128 of them a cycle (128-row crossbars),
            // cycle weights summing to 2^4 - 1.
            assert_eq!(Flush::of(&dp), Flush::Tile);
            let with = |bits, step| {
                Flush::of(&Datapath {
                    adc: Adc::new(bits, step),
                    ..dp
                })
            };
            assert_eq!(with(32, 1 << 20), Flush::Tile, "2^52 * 2^7 * 2^4");
            assert_eq!(with(32, 1 << 21), Flush::Cycle, "2^53 * 2^7 * 2^4");
            assert_eq!(with(32, 1 << 24), Flush::Cycle, "2^56 * 2^7");
            assert_eq!(with(32, 1 << 25), Flush::Read, "2^57 * 2^7");
            let mut summed = Scratch::new(&dp, n);
            dp.vector(&l.input, 0, &mut summed);
            assert!(summed.acc().iter().any(|&y| y != 0), "{mode}");
            for flush in [Flush::Tile, Flush::Cycle, Flush::Read] {
                let mut each = Scratch::new(&dp, n);
                each.flush_at(flush);
                dp.vector(&l.input, 0, &mut each);
                assert_eq!(summed.acc(), each.acc(), "{mode} {flush:?}");
            }
        }
    }
}
