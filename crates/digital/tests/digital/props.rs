//! Properties: costs grow with the sequence, scale with the batch, follow the node's
//! factor; energy is the table's entries times the counts.

use crate::{bert, close, softmax_graph};
use digital::{cost_graph, enumerate, total, DigitalTable, DigitalUnit, OpCounts, Placement, Prim};
use proptest::prelude::*;

fn bert_total(seq: usize) -> digital::Cost {
    total(&cost_graph(
        &bert(1, seq),
        Placement::Digital,
        &DigitalUnit::default(),
        &DigitalTable::horowitz_45nm(),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A longer sequence never costs less: every count, cycle and picojoule.
    #[test]
    fn costs_are_monotone_in_the_sequence(t in 1usize..48, more in 1usize..16) {
        let (a, b) = (bert_total(t), bert_total(t + more));
        prop_assert!(a.cycles < b.cycles, "{a:?} {b:?}");
        prop_assert!(a.energy.compute_pj < b.energy.compute_pj);
        prop_assert!(a.energy.buffer_pj < b.energy.buffer_pj);
        prop_assert!(a.energy.kv_pj < b.energy.kv_pj);
        let ca = enumerate(&bert(1, t), Placement::Digital);
        let cb = enumerate(&bert(1, t + more), Placement::Digital);
        for (x, y) in ca.iter().zip(&cb) {
            prop_assert_eq!(&x.name, &y.name);
            for p in Prim::ALL {
                prop_assert!(x.counts.get(p) <= y.counts.get(p), "{} {:?}", x.name, p);
            }
        }
    }

    /// Counts are per sample whatever the batch; B samples' counts cost B times one
    /// sample's energy.
    #[test]
    fn linear_in_batch(t in 1usize..32, batch in 1usize..5) {
        let one = enumerate(&bert(1, t), Placement::Digital);
        prop_assert_eq!(&enumerate(&bert(batch, t), Placement::Digital), &one);
        let table = DigitalTable::horowitz_45nm();
        let unit = DigitalUnit::default();
        let sum = one.iter().fold(OpCounts::default(), |s, o| s.plus(o.counts));
        let e1 = unit.cost(&sum, &table).energy;
        let eb = unit.cost(&sum.times(batch as u64), &table).energy;
        prop_assert!(close(eb.total_pj(), batch as f64 * e1.total_pj()));
        // Cycles: B samples take at least B - 1 times and at most B times one sample's
        // (the rounding up of one pass).
        let (c1, cb) = (unit.cost(&sum, &table).cycles, unit.cost(&sum.times(batch as u64), &table).cycles);
        prop_assert!(cb <= batch as u64 * c1 && cb + batch as u64 >= batch as u64 * c1);
    }

    /// At any node every entry, hence every energy, is the 45 nm one times the CMOS
    /// energy factor from 45 nm (docs/technology.md).
    #[test]
    fn tech_scaling_is_the_factor(node_i in 0usize..5, rows in 1usize..64, n in 1usize..300) {
        let node = energy::tech::NODES[node_i];
        let base = DigitalTable::horowitz_45nm();
        let at = base.at_node(node).unwrap();
        let f = energy::tech::between(45, node).unwrap().cmos_energy;
        for ((k, a), (_, b)) in at.entries().iter().zip(base.entries()) {
            prop_assert!(close(*a, b * f), "{k}");
        }
        let c = enumerate(&softmax_graph(rows, n), Placement::Digital)[0].counts;
        prop_assert!(close(at.energy(&c).total_pj(), f * base.energy(&c).total_pj()));
        // Cycles do not depend on the node.
        let unit = DigitalUnit::default();
        prop_assert_eq!(unit.cost(&c, &at).cycles, unit.cost(&c, &base).cycles);
    }

    /// A softmax of rows x n: the decomposition's counts, and energy = the sum over
    /// primitives of count x entry (summed here independently of the crate's order).
    #[test]
    fn softmax_counts_and_energy(rows in 1usize..50, n in 1usize..500, lanes in 1u32..130) {
        let c = enumerate(&softmax_graph(rows, n), Placement::Digital)[0].counts;
        let (r, n64) = (rows as u64, n as u64);
        prop_assert_eq!(
            (c.compare16, c.add16, c.exp, c.add32, c.reciprocal, c.mul16),
            (r * n64, r * n64, r * n64, r * (n64 - 1), r, r * n64)
        );
        let t = DigitalTable::horowitz_45nm();
        let hand = r as f64
            * (n as f64 * (t.compare16_pj + t.add16_pj + t.exp_pj + t.mul16_pj)
                + (n as f64 - 1.0) * t.add32_pj
                + t.reciprocal_pj
                + 4.0 * n as f64 * t.buffer_read_per_byte_pj);
        prop_assert!((t.energy(&c).total_pj() - hand).abs() <= 1e-9 * hand);
        let unit = DigitalUnit { lanes, ..DigitalUnit::default() };
        let lane_cycles = r * (n64 * (1 + 1 + 4 + 1) + (n64 - 1) + 4);
        let cost = unit.cost(&c, &t);
        prop_assert_eq!(cost.compute_cycles, lane_cycles.div_ceil(lanes as u64));
        prop_assert_eq!(cost.buffer_cycles, (4 * r * n64).div_ceil(128));
        prop_assert_eq!(cost.cycles, cost.compute_cycles.max(cost.buffer_cycles));
    }
}
