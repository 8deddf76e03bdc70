//! A layer simulated a window of column blocks at a time (`engine::columns`, the path of
//! layers too wide for `limits.max_layer_bytes`) gives exactly the events of the whole
//! layer: every count, the busy time and the cycles, in every mode, under every barrier
//! policy, layout, grouping and window size, for the fast and the reference engine.

use crate::common;

use common::arb_case;
use crossbar::{LayerMap, Mode};
use engine::columns::{windows, Parts};
use engine::{simulate, EngineKind, ModeRun, Prepared, Samples};
use proptest::prelude::*;
use workload::QuantLayer;

/// The layer's events in `mode`, a window of at most `per` blocks at a time; None when
/// the engine does not run these options (a finite queue deeper than one).
fn windowed(
    layer: &QuantLayer,
    hw: &crossbar::Hardware,
    opts: &engine::SimOptions,
    mode: Mode,
    engine: EngineKind,
    per: usize,
) -> Option<energy::Events> {
    let map = LayerMap::new(layer.geom(), hw);
    let k = layer.geom().k_rows();
    let mut parts = Parts::new(mode);
    for win in windows(&map, per) {
        let wmap = map.window(win.group, win.blocks.clone(), hw);
        let cw = wmap.window.unwrap();
        let mut weights = Vec::new();
        for r in cw.channels(map.cols_per_group) {
            weights.extend_from_slice(&layer.weights[r.start * k..r.end * k]);
        }
        let prep = Prepared::window(&layer.spec, &weights, layer.signed, wmap, hw, opts);
        let mut run = ModeRun::part(&prep, hw, opts, mode, engine).ok()?;
        run.feed(Samples::new(&layer.input, layer.samples), None)
            .unwrap();
        let (ev, busy, stats) = run.finish_part();
        assert!(stats.is_none());
        parts.add(&ev, busy);
    }
    Some(parts.finish())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn windows_add_up_to_the_whole_layer(
        (layer, hw, opts) in arb_case(),
        per in 1usize..=3,
    ) {
        let whole = Prepared::new(&layer, &hw, &opts);
        for engine in [EngineKind::Fast, EngineKind::Reference] {
            for mode in Mode::ALL {
                let Ok(want) = simulate(&whole, &hw, &opts, mode, engine, None) else {
                    continue;
                };
                let got = windowed(&layer, &hw, &opts, mode, engine, per)
                    .expect("the options the whole layer runs");
                prop_assert_eq!(got, want, "{} {} per {}", engine, mode, per);
            }
        }
    }
}

/// The windows cover every block of every group once, in the map's order; a window's
/// logical columns are those its blocks hold.
#[test]
fn windows_partition_the_blocks() {
    // A grouped conv: 4 -> 6, 2 groups, 1x1: K = 2, 3 columns per group; 4-bit weights, 1-bit cells: 3 cells a weight, 9
    // physical columns per polarity array; crossbar.cols 4: blocks of 4, 4, 1.
    let geom = workload::ConvGeometry::conv(4, 6, 1, 1, 0, 2, [2, 2]);
    let hw = common::hardware((2, 4, 1), (2, 2), (4, 4, 1), false);
    let map = LayerMap::new(&geom, &hw);
    assert_eq!(map.blocks_per_array(), 3);
    let ws = windows(&map, 2);
    let got: Vec<(u32, std::ops::Range<usize>)> =
        ws.iter().map(|w| (w.group, w.blocks.clone())).collect();
    assert_eq!(got, vec![(0, 0..2), (0, 2..3), (1, 0..2), (1, 2..3)]);
    // Weight-major: blocks 0..2 hold physical columns 0..8 = logical 0..2 (column 2's
    // first two cells); block 2 holds column 2's last cell.
    let w0 = map.window(0, 0..2, &hw);
    assert_eq!(w0.blocks.len(), 4);
    let cw = w0.window.unwrap();
    assert_eq!((cw.start, cw.len), (0, 3));
    assert_eq!(cw.channels(3), vec![0..3]);
    let w1 = map.window(1, 2..3, &hw).window.unwrap();
    assert_eq!((w1.group, w1.start, w1.len), (1, 2, 1));
    assert_eq!(w1.channels(3), vec![5..6]);
    // Slice-major, 4 -> 10 in 2 groups (5 columns a group, 15 physical per array):
    // physical column i is slice i / 5 of column i % 5; block 1 holds physical 4..8:
    // columns 4, 0, 1, 2 — a window wrapping past the group's last column to its first.
    let geom = workload::ConvGeometry::conv(4, 10, 1, 1, 0, 2, [2, 2]);
    let sm = common::hardware((2, 4, 1), (2, 2), (4, 4, 1), true);
    let map = LayerMap::new(&geom, &sm);
    let cw = map.window(1, 1..2, &sm).window.unwrap();
    assert_eq!((cw.group, cw.start, cw.len), (1, 4, 4));
    assert_eq!(cw.channels(5), vec![9..10, 5..8]);
    // Four blocks (16 physical columns, more than the group's 5): every column, once.
    let cw = map.window(0, 0..4, &sm).window.unwrap();
    assert_eq!((cw.start, cw.len), (0, 5));
    assert_eq!(cw.channels(5), vec![0..5]);
}
