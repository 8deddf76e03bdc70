//! Hand-computed tiny examples: every count, every picojoule and every cycle by hand.

use crate::{close, softmax_graph};
use digital::{enumerate, ops, Class, DigitalTable, DigitalUnit, OpCounts, Placement};
use network::builder::GraphBuilder;

/// A softmax over 4 values: 4 compares, 4 subtracts, 4 exps, 3 adds, 1 reciprocal,
/// 4 multiplies; 8 bytes read and 8 written.
#[test]
fn softmax_over_four_values_by_hand() {
    let ops = enumerate(&softmax_graph(1, 4), Placement::Digital);
    assert_eq!(ops.len(), 1);
    let op = &ops[0];
    assert_eq!(
        (op.kind, op.class, op.after_layer),
        ("softmax", Class::Softmax, None)
    );
    assert_eq!(
        op.counts,
        OpCounts {
            compare16: 4,
            add16: 4,
            exp: 4,
            add32: 3,
            reciprocal: 1,
            mul16: 4,
            buffer_read_bytes: 8,
            buffer_write_bytes: 8,
            ..Default::default()
        }
    );
}

/// Its energy is the sum of the table's entries: 4 x 0.05333 (compares), 4 x 0.05333
/// (subtracts), 4 x 3.46 (exps), 3 x 0.1 (adds), 12.6 (reciprocal), 4 x 0.8 (multiplies)
/// = 30.36664 pJ of arithmetic; 16 bytes x 2.5 = 40 pJ of buffer.
#[test]
fn softmax_over_four_values_energy_is_the_sum_of_table_entries() {
    let t = DigitalTable::horowitz_45nm();
    let c = enumerate(&softmax_graph(1, 4), Placement::Digital)[0].counts;
    let e = t.energy(&c);
    assert!(close(e.compute_pj, 30.36664), "{e:?}");
    assert!(close(e.buffer_pj, 40.0), "{e:?}");
    assert_eq!(e.kv_pj, 0.0);
    assert!(close(e.total_pj(), 70.36664));
}

/// At 2 lanes: 4 + 4 + 3 + 4 + 4 lane cycles of one-cycle ops, 4 exps of 4 and 1
/// reciprocal of 4: 35 lane cycles, 18 cycles; 16 bytes at 128 a cycle: 1. So 18 cycles,
/// 15 ns at 1.2 GHz.
#[test]
fn softmax_over_four_values_takes_18_cycles_at_two_lanes() {
    let unit = DigitalUnit {
        lanes: 2,
        ..DigitalUnit::default()
    };
    let c = enumerate(&softmax_graph(1, 4), Placement::Digital)[0].counts;
    let cost = unit.cost(&c, &DigitalTable::horowitz_45nm());
    assert_eq!(unit.lane_cycles(&c), 35);
    assert_eq!(
        (
            cost.compute_cycles,
            cost.buffer_cycles,
            cost.kv_cycles,
            cost.cycles
        ),
        (18, 1, 0, 18)
    );
    assert!(close(cost.time_ns, 15.0));
    // At the crossbars' 7.68 ns cycle: 15 / 7.68 = 1.95, 2 cycles.
    assert_eq!(cost.cycles_at(7.68), 2);
}

/// A memory-bound op: a residual add of two 1024-value rows reads 4096 bytes and writes
/// 2048: 48 buffer cycles at 128 bytes a cycle beside 16 compute cycles at 64 lanes.
#[test]
fn a_residual_add_is_bound_by_its_buffer() {
    let mut b = GraphBuilder::new("res", 1);
    let x = b.input("x", vec![1, 1024]);
    let y = b.input("y", vec![1, 1024]);
    let z = b.add("add", &[x, y]);
    b.output(z);
    let ops = enumerate(&b.finish(), Placement::Digital);
    assert_eq!(ops.len(), 1);
    let c = ops[0].counts;
    assert_eq!(
        (c.add16, c.buffer_read_bytes, c.buffer_write_bytes),
        (1024, 4096, 2048)
    );
    let cost = DigitalUnit::default().cost(&c, &DigitalTable::horowitz_45nm());
    assert_eq!(
        (cost.compute_cycles, cost.buffer_cycles, cost.cycles),
        (16, 48, 48)
    );
}

/// LayerNorm of one row of 4: sums 3 + 1 (epsilon), 10 multiplies (2 x 4 + 2), 8 adds
/// (4 subtracts, 4 biases), 4 MACs, 1 rsqrt; reads 12 values, writes 4.
#[test]
fn layernorm_of_four_by_hand() {
    let mut b = GraphBuilder::new("ln", 1);
    let x = b.input("x", vec![1, 4]);
    let y = b.layernorm("ln", x);
    b.output(y);
    let ops = enumerate(&b.finish(), Placement::Digital);
    assert_eq!(ops[0].class, Class::Norm);
    assert_eq!(
        ops[0].counts,
        OpCounts {
            add32: 4,
            mul16: 10,
            add16: 8,
            mac16: 4,
            rsqrt: 1,
            buffer_read_bytes: 24,
            buffer_write_bytes: 8,
            ..Default::default()
        }
    );
    assert_eq!(ops[0].counts, ops::layernorm(1, 4));
}

/// RMSNorm of 4 (no graph op yet; the decomposition a Llama block will use): 4 MACs,
/// 9 multiplies, 1 add, 1 rsqrt.
#[test]
fn rmsnorm_of_four_by_hand() {
    let c = ops::rmsnorm(1, 4);
    assert_eq!(
        (c.mac16, c.mul16, c.add32, c.rsqrt, c.add16),
        (4, 9, 1, 1, 0)
    );
    assert_eq!((c.buffer_read_bytes, c.buffer_write_bytes), (16, 8));
}

/// GELU (I-BERT's integer form) of 3 elements: 12 multiplies, 9 adds, 6 compares; SiLU:
/// 3 exps, 3 adds, 3 reciprocals, 3 multiplies.
#[test]
fn gelu_and_silu_by_hand() {
    let g = ops::gelu(3);
    assert_eq!((g.mul16, g.add16, g.compare16, g.exp), (12, 9, 6, 0));
    let s = ops::silu(3);
    assert_eq!((s.exp, s.add16, s.reciprocal, s.mul16), (3, 3, 3, 3));
}

/// Operations one after another: cycles, time and energy add; at the crossbars' clock the
/// time is rounded up to whole cycles, and nothing takes none.
#[test]
fn costs_add_and_convert_to_crossbar_cycles() {
    let (unit, t) = (DigitalUnit::default(), DigitalTable::horowitz_45nm());
    let a = unit.cost(&ops::softmax(3, 100), &t);
    let b = unit.cost(&ops::gelu(1000), &t);
    let ab = a.then(&b);
    assert_eq!(ab.cycles, a.cycles + b.cycles);
    assert!(close(ab.time_ns, a.time_ns + b.time_ns));
    assert!(close(
        ab.energy.total_pj(),
        a.energy.total_pj() + b.energy.total_pj()
    ));
    // GELU of 1000 on 64 lanes: 9000 lane cycles, 141 cycles, 117.5 ns: 16 cycles of 7.68 ns.
    assert_eq!(b.cycles, 141);
    assert_eq!(b.cycles_at(7.68), 16);
    assert_eq!(digital::Cost::default().cycles_at(7.68), 0);
    assert_eq!(b.cycles_at(0.0), 0);
}

/// Counts saturate instead of wrapping (the reports' finite gate refuses a saturated
/// count): a product of 2^40 x 2^40 MACs.
#[test]
fn counts_saturate() {
    let big = 1u64 << 40;
    let c = ops::matmul(1, big, big, 2, 0);
    assert_eq!(c.mac16, u64::MAX);
    assert_eq!(c.plus(c).buffer_read_bytes, u64::MAX);
    let cost = DigitalUnit::default().cost(&c.times(3), &DigitalTable::horowitz_45nm());
    assert!(cost.cycles > 0 && cost.energy.total_pj().is_finite());
}
