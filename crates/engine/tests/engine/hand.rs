//! Hand-computed tiny layers for every mode. The arithmetic is in the comments; both
//! the reference and the fast engine must reproduce it.

use crate::common;

use crossbar::{Hardware, Mode};
use energy::Events;
use engine::{EngineKind, Granularity, SignedEncoding, SimOptions};
use pipeline::Sync;
use workload::{ConvGeometry, LayerKind, LayerSpec, QuantLayer};

/// Compares the OU counts and cycles (the formula-only counts have tests of their own).
fn check(layer: &QuantLayer, hw: &Hardware, opts: &SimOptions, mode: Mode, want: Events) {
    for e in [EngineKind::Reference, EngineKind::Fast] {
        let got = common::run(layer, hw, opts, mode, e);
        let want = Events {
            vectors: got.vectors,
            ir_bits: got.ir_bits,
            or_bits: got.or_bits,
            edram_bits: got.edram_bits,
            weight_storage_bits: got.weight_storage_bits,
            index_storage_bits: got.index_storage_bits,
            crossbars: got.crossbars,
            ..want
        };
        assert_eq!(got, want, "{mode} with the {e} engine");
    }
}

#[allow(clippy::too_many_arguments)]
fn ev(
    ou_ops: u64,
    rows_driven: u64,
    cells_read: u64,
    adc_conversions: u64,
    index_reads: u64,
    index_bits_read: u64,
    ous_formed: u64,
    busy_cycles: u64,
    cycles: u64,
) -> Events {
    Events {
        ou_ops,
        rows_driven,
        cells_read,
        adc_conversions,
        index_reads,
        index_bits_read,
        ous_formed,
        busy_cycles,
        cycles,
        ..Events::default()
    }
}

/// fc 5 -> 2 on 4x4 crossbars, 2x2 OUs, 1-bit cells, 3-bit weights (cpw = 2),
/// 2-bit unsigned inputs (2 input cycles), 2 ADCs, index decoder 1 row/cycle.
///
/// Weights n=0: [1, 0, -2, 0, 3], n=1: all zero (an all-zero column group).
/// Columns per polarity: 2 logical x 2 cells = 4 -> one block per polarity, column groups
/// (n0 slices 0,1) and (n1 slices 0,1). Dense tiles: rows 0-3 and row 4 (partial OU).
/// Compaction: pos n0 {0, 4}; pos n1 {}; neg n0 {2} (2 = 0b10, slice 1); neg n1 {}.
/// Input x = [3, 0, 1, 0, 0]: active rows {0, 2} in both cycles.
fn fc_case() -> (QuantLayer, Hardware, SimOptions) {
    let layer = QuantLayer {
        spec: LayerSpec {
            name: "fc".into(),
            kind: LayerKind::Fc,
            geom: ConvGeometry::fc(5, 2),
        },
        weights: vec![1, 0, -2, 0, 3, 0, 0, 0, 0, 0],
        input: vec![3, 0, 1, 0, 0],
        samples: 1,
        signed: false,
    };
    let hw = Hardware {
        xbar_rows: 4,
        xbar_cols: 4,
        cell_bits: 1,
        ou_rows: 2,
        ou_cols: 2,
        weight_bits: 3,
        input_bits: 2,
        dac_bits: 1,
        adc_per_crossbar: 2,
        index_rows_per_cycle: 1,
        ..Hardware::default()
    };
    (layer, hw, SimOptions::default())
}

#[test]
fn fc_dense() {
    // Per cycle and block: tile 0 -> 2 OUs of 2 rows per group, tile 1 -> 1 OU of 1 row
    // (partial); 2 groups -> 6 OUs, 10 rows, 20 cells, 12 conversions. 2 blocks, 2 cycles:
    // 24 OUs, 40 rows, 80 cells, 48 conversions. II = max(1, ceil(2/2)) = 1; crossbar
    // (block, tile 0) issues 4 per cycle -> W = 2 * 4 = 8; cycles = 8 + 5 - 1 = 12.
    let (l, hw, o) = fc_case();
    check(&l, &hw, &o, Mode::Dense, ev(24, 40, 80, 48, 0, 0, 0, 8, 12));
}

#[test]
fn fc_weight() {
    // Per cycle: pos n0 one OU of 2 rows, neg n0 one OU of 1 row, empty groups cost 0:
    // 2 OUs, 3 rows, 6 cells, 4 conversions, 3 index reads; x2 cycles. Index width
    // ceil(log2 5) = 3 -> 18 index bits. II: 2-row OU max(1, 1, ceil(2/1)) = 2, 1-row OU 1;
    // slowest crossbar 2 per cycle -> W = 4; cycles = 4 + 6 - 1 = 9.
    let (l, hw, o) = fc_case();
    check(&l, &hw, &o, Mode::Weight, ev(4, 6, 12, 8, 6, 18, 0, 4, 9));
}

#[test]
fn fc_activation() {
    // Active {0, 2}: tile 0 has 2 active rows -> 1 OU per group; tile 1 none.
    // Per cycle: 4 groups x 1 OU of 2 rows: 4 OUs, 8 rows, 16 cells, 8 conversions; x2.
    // II 1; crossbar (block, tile 0) issues 2 per cycle -> W = 4; cycles = 4 + 6 - 1 = 9.
    let (l, hw, o) = fc_case();
    check(
        &l,
        &hw,
        &o,
        Mode::Activation,
        ev(8, 16, 32, 16, 0, 0, 8, 4, 9),
    );
}

#[test]
fn fc_sre() {
    // Active compacted rows: pos n0 {0, 4} -> {0}; neg n0 {2} -> {2}: 2 OUs of 1 row,
    // 2 rows, 4 cells, 4 conversions, 2 index reads per cycle; x2. II 1 per crossbar per
    // cycle -> W = 2; cycles = 2 + 7 - 1 = 8.
    let (l, hw, o) = fc_case();
    check(&l, &hw, &o, Mode::Sre, ev(4, 4, 8, 8, 4, 12, 4, 2, 8));
}

#[test]
fn fc_ideal() {
    // One op per dense crossbar per cycle: tile 0 4 rows x 4 cols, tile 1 1 row x 4 cols;
    // per cycle 4 ops, 10 rows, 40 cells, 16 conversions; x2. II = ceil(4/2) = 2 ->
    // W = 2 * 2 = 4; cycles = 4 + 5 - 1 = 8.
    let (l, hw, o) = fc_case();
    check(&l, &hw, &o, Mode::Ideal, ev(8, 20, 80, 32, 0, 0, 0, 4, 8));
}

#[test]
fn fc_statics() {
    // ir = 1 vector x 1 pass x 2 bits x K 5 x 2 blocks = 20; eDRAM (5 + 2) x 2 = 14.
    // or: dense 2 blocks x 2 tiles x 4 cols x 32 = 512, compacted 2 x 1 x 4 x 32 = 256.
    // storage: dense 5 rows x 8 cols x 1 bit = 40; compacted cells 2x2 + 1x2 = 6, index
    // (2 + 1) rows x 3 bits = 9. Crossbars: dense 4, compacted 2.
    let (l, hw, o) = fc_case();
    let d = common::run(&l, &hw, &o, Mode::Dense, EngineKind::Fast);
    let s = common::run(&l, &hw, &o, Mode::Sre, EngineKind::Fast);
    assert_eq!(
        (d.ir_bits, d.edram_bits, d.or_bits, s.or_bits),
        (20, 14, 512, 256)
    );
    assert_eq!((d.weight_storage_bits, d.index_storage_bits), (40, 0));
    assert_eq!((s.weight_storage_bits, s.index_storage_bits), (6, 9));
    assert_eq!((d.crossbars, s.crossbars), (4, 2));
}

/// Grouped conv: 2 -> 6 channels, 2 groups, 2x2 kernel, stride 2, padding 1, 3x3 input
/// -> 2x2 outputs, 4 vectors; K = 1 x 2 x 2 = 4 per group, k = r*2 + s.
/// Crossbar 4 rows x 3 cols, OU 2x2, 2-bit cells, 3-bit weights (cpw 1): each polarity
/// block holds 3 columns -> column groups of 2 and 1 (narrower last group); 4 blocks.
/// Signed 3-bit inputs (two's complement: 3 cycles), 2 ADCs, decoder 2 rows/cycle.
///
/// Channel 0 = [[1,0,0],[0,0,0],[0,0,-1]], channel 1 all zero. Windows (ih = 2ho-1+r):
/// v0 (0,0): k3 = x(0,0) = 1, rest padding; v1, v2: all zero (all-zero vectors);
/// v3 (1,1): k3 = x(2,2) = -1. Group 1 never has an active row.
/// Weights g0: n0 [1,0,0,-3], n1 0, n2 [2,0,0,0]; g1: n3 [0,1,0,0], n4, n5 0.
/// Compaction: g0 pos {n0,n1} {0}, {n2} {0}; g0 neg {n0,n1} {3}, {n2} {};
/// g1 pos {n3,n4} {1}, {n5} {}; g1 neg {} {} -> compacted tiles 1,1,1,0.
fn conv_case() -> (QuantLayer, Hardware, SimOptions) {
    let geom = ConvGeometry::conv(2, 6, 2, 2, 1, 2, [3, 3]);
    let mut input = vec![0; 18];
    input[0] = 1;
    input[8] = -1;
    let mut weights = vec![0; 24];
    weights[0] = 1; // n0 k0
    weights[3] = -3; // n0 k3
    weights[8] = 2; // n2 k0
    weights[12 + 1] = 1; // n3 k1
    let layer = QuantLayer {
        spec: LayerSpec {
            name: "conv".into(),
            kind: LayerKind::Conv,
            geom,
        },
        weights,
        input,
        samples: 1,
        signed: true,
    };
    let hw = Hardware {
        xbar_rows: 4,
        xbar_cols: 3,
        cell_bits: 2,
        ou_rows: 2,
        ou_cols: 2,
        weight_bits: 3,
        input_bits: 3,
        dac_bits: 1,
        adc_per_crossbar: 2,
        index_rows_per_cycle: 2,
        ..Hardware::default()
    };
    (layer, hw, SimOptions::default())
}

#[test]
fn conv_dense_and_weight_and_ideal() {
    let (l, hw, o) = conv_case();
    // Dense per cycle and block: 4 rows -> 2 OUs per group; widths 2 and 1: 4 OUs,
    // 8 rows, 2*2*2 + 2*2*1 = 12 cells, 2*2 + 2*1 = 6 conversions. 4 blocks, and
    // 4 vectors x 3 cycles = 12 intervals: 192 OUs, 384 rows, 576 cells, 288 conv.
    // II 1, 4 per crossbar per cycle -> W = 48; cycles = 48 + 4 = 52.
    check(
        &l,
        &hw,
        &o,
        Mode::Dense,
        ev(192, 384, 576, 288, 0, 0, 0, 48, 52),
    );
    // Weight per cycle: one 1-row OU in each of 4 non-empty groups (widths 2,1,2,2):
    // 4 OUs, 4 rows, 7 cells, 7 conversions, 4 index reads; x12. Index width 2.
    // g0 pos issues 2 per cycle -> W = 24; cycles = 24 + 5 = 29.
    check(
        &l,
        &hw,
        &o,
        Mode::Weight,
        ev(48, 48, 84, 84, 48, 96, 0, 24, 29),
    );
    // Ideal: 4 crossbars, 1 op of 4 rows x 3 cols each: 4 ops, 16 rows, 48 cells,
    // 12 conversions per cycle; x12. II ceil(3/2) = 2 -> W = 24; cycles = 24 + 4 = 28.
    check(
        &l,
        &hw,
        &o,
        Mode::Ideal,
        ev(48, 192, 576, 144, 0, 0, 0, 24, 28),
    );
}

#[test]
fn conv_activation_and_sre_value() {
    let (l, hw, o) = conv_case();
    // Activation: v0 and v3 have 1 active row in group 0 -> 1 OU of 1 row in each of the
    // 4 group-0 column groups (widths 2,1,2,1): 4 OUs, 4 rows, 6 cells, 6 conversions per
    // cycle; 2 vectors x 3 cycles. g0 crossbars issue 2 per cycle -> 6 per vector;
    // W = 12; cycles = 12 + 5 = 17. v1, v2 and group 1 cost nothing.
    check(
        &l,
        &hw,
        &o,
        Mode::Activation,
        ev(24, 24, 36, 36, 0, 0, 24, 12, 17),
    );
    // SRE: row 3 is compacted only in g0 neg {n0,n1}: 1 OU of 1 row, width 2, per cycle;
    // 2 vectors x 3 cycles -> 6 OUs, 6 rows, 12 cells, 12 conversions, 6 index reads.
    // W = 3 + 3 = 6; cycles = 6 + 6 = 12.
    check(&l, &hw, &o, Mode::Sre, ev(6, 6, 12, 12, 6, 12, 6, 6, 12));
}

#[test]
fn conv_sre_bit_granularity_and_sync() {
    let (l, hw, mut o) = conv_case();
    o.granularity = Granularity::Bit;
    // 1 = 0b001 is driven in cycle 0 only; -1 = 0b111 in all three: 1 + 3 OUs.
    // W = 1 (v0) + 3 (v3) = 4; cycles 4 + 6 = 10.
    check(&l, &hw, &o, Mode::Sre, ev(4, 4, 8, 8, 4, 8, 4, 4, 10));
    // Activation, bit sync: per cycle the slowest crossbar issues 2 -> 6 driven cycles
    // x 2 = 12, same as vector sync; none: each g0 crossbar totals 2 x 6 = 12 -> 12.
    o.granularity = Granularity::Value;
    for sync in [Sync::Bit, Sync::None] {
        o.sync = sync;
        check(
            &l,
            &hw,
            &o,
            Mode::Activation,
            ev(24, 24, 36, 36, 0, 0, 24, 12, 17),
        );
    }
}

#[test]
fn conv_sign_magnitude_takes_two_passes() {
    let (l, hw, mut o) = conv_case();
    o.encoding = SignedEncoding::SignMagnitude;
    // 2 passes of 2 bits: dense 4 vectors x 2 passes x 2 cycles = 16 intervals x 16 OUs.
    check(
        &l,
        &hw,
        &o,
        Mode::Dense,
        ev(256, 512, 768, 384, 0, 0, 0, 64, 68),
    );
    // SRE: v3's -1 drives row 3 only in the negative pass (2 cycles); v0's 1 only in the
    // positive pass, where row 3 is compacted in g0 neg too: 2 + 2 OUs of 1 row, width 2.
    check(&l, &hw, &o, Mode::Sre, ev(4, 4, 8, 8, 4, 8, 4, 4, 10));
}

#[test]
fn conv_statics() {
    // ir = 4 vectors x 1 pass x 3 bits x K 4 x 4 blocks = 192; eDRAM (18 + 24) x 3 = 126;
    // or dense 4 x 4 blocks x 1 tile x 3 cols x 32 = 1536; compacted 3 tiles -> 1152.
    // Storage: dense 4 x 12 cols x 2 bits = 96; compacted 7 cells x 2 = 14, index 4 x 2 = 8.
    let (l, hw, o) = conv_case();
    let d = common::run(&l, &hw, &o, Mode::Dense, EngineKind::Reference);
    let w = common::run(&l, &hw, &o, Mode::Weight, EngineKind::Reference);
    assert_eq!(
        (d.ir_bits, d.edram_bits, d.or_bits, w.or_bits),
        (192, 126, 1536, 1152)
    );
    assert_eq!((d.weight_storage_bits, w.weight_storage_bits), (96, 14));
    assert_eq!((w.index_storage_bits, d.crossbars, w.crossbars), (8, 4, 3));
}
