//! `attention.placement = "crossbar"`: K^T and V written into crossbars, by hand on
//! BERT-base at T = 128 (128 x 128 crossbars, 16-bit values in 2-bit cells: 8 cells a
//! value; PipeLayer's 30.546875 pJ a cell and 50.88 ns a row).

use crate::{bert, close};
use digital::{crossbar_attention, enumerate, CellWrite, Class, CrossbarGeom, Placement};

#[test]
fn bert_base_writes_by_hand() {
    let g = bert(1, 128);
    let geom = CrossbarGeom::new(128, 128, 16, 2);
    assert_eq!(geom.cells_per_value, 8);
    let w = crossbar_attention(&g, geom, &CellWrite::pipelayer());
    assert_eq!(w.products.len(), 24);
    let scores = &w.products[0];
    // K^T of a head: 64 x 128 values = 8192, 65,536 cells; 12 heads: 786,432 cells in
    // 12 x ceil(64/128) x ceil(128 x 8 / 128) = 96 crossbars; 64 rows written in turn.
    assert_eq!(scores.name, "encoder.layer.0.attention.self.scores");
    assert_eq!(
        (
            scores.heads,
            scores.cells_written,
            scores.crossbars,
            scores.serial_row_writes
        ),
        (12, 786_432, 96, 64)
    );
    assert_eq!(scores.macs, 128 * 128 * 768);
    assert_eq!(scores.after_layer, Some(2));
    // V of a head: 128 x 64 values, the same cells in 12 x 1 x 4 = 48 crossbars, 128 rows.
    let context = &w.products[1];
    assert_eq!(
        (
            context.cells_written,
            context.crossbars,
            context.serial_row_writes
        ),
        (786_432, 48, 128)
    );
    assert!(close(scores.energy_pj, 786_432.0 * 30.546875));
    assert!(close(scores.latency_ns, 64.0 * 50.88));
    assert!(close(context.latency_ns, 128.0 * 50.88));
    // 12 layers: 18,874,368 cells, 576,552,960 pJ; (64 + 128) x 50.88 x 12 ns.
    assert_eq!(w.cells_written, 18_874_368);
    assert!(close(w.energy_pj, 576_552_960.0));
    assert!(close(w.latency_ns, 117_227.52));
    assert_eq!(w.crossbars, 12 * 144);
    // K^T fills half of its crossbars' rows: 2/3 of the cells provisioned are written.
    assert!(close(w.writes_per_cell, 2.0 / 3.0));
    assert_eq!(w.inferences_to_wear_out, None);
}

/// With a stated endurance, the lifetime is the endurance over the writes per cell.
#[test]
fn lifetime_follows_the_endurance() {
    let write = CellWrite {
        endurance_writes: 1_000_000,
        ..CellWrite::pipelayer()
    };
    let w = crossbar_attention(&bert(1, 128), CrossbarGeom::new(128, 128, 16, 2), &write);
    assert!(close(w.inferences_to_wear_out.unwrap(), 1.5e6));
}

/// In crossbar placement the unit keeps the softmax and everything else but no product.
#[test]
fn crossbar_placement_leaves_the_unit_everything_but_the_products() {
    let g = bert(1, 64);
    let digital = enumerate(&g, Placement::Digital);
    let crossbar = enumerate(&g, Placement::Crossbar);
    let rest: Vec<_> = digital
        .into_iter()
        .filter(|o| o.class != Class::Attention)
        .collect();
    assert_eq!(crossbar, rest);
}
