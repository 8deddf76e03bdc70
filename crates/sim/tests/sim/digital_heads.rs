//! `--head-sparsity` in the digital unit (docs/digital.md, "In a run"): a pruned head
//! computes no Q.K^T, softmax or P.V, so a block's attention products and softmax cost
//! the kept heads' share; everything else the unit runs is unchanged.

use digital::{ops, Class, Cost, DigitalUnit, OpCounts};
use sim::config::Resolved;
use sim::workloads::Synth;
use workload::Workload;

fn cfg() -> Resolved {
    sim::config::load(None, &[]).unwrap()
}

fn open(name: &str, head_sparsity: f64, c: &Resolved) -> Box<dyn Workload> {
    let p = Synth {
        head_sparsity,
        ..Default::default()
    };
    sim::workloads::open(Some(name), &p, Some(1), c).unwrap()
}

fn class_cost(d: &sim::digital::DigitalResult, class: Class) -> Cost {
    d.by_class.iter().find(|(c, _)| *c == class).unwrap().1.cost
}

/// The costs of `counts`, one after another, as the run adds them.
fn costed(counts: &[OpCounts], c: &Resolved) -> Cost {
    let unit: &DigitalUnit = &c.digital.unit;
    counts.iter().fold(Cost::default(), |acc, x| {
        acc.then(&unit.cost(x, &c.digital.table))
    })
}

#[test]
fn pruned_heads_compute_no_attention_on_the_digital_unit() {
    let c = cfg();
    // GPT-2 small decoding one token against a cache of 1,024: 12 blocks of 12 heads of
    // width 64, so 1,025 keys a query. Half the heads pruned: 6 of 12 in every block.
    let (heads, dh, keys) = (12u64, 64u64, 1025u64);
    let evaluate = |w: &dyn Workload| {
        let g = w.graph().unwrap().unwrap();
        sim::digital::evaluate(&g, w.layers().len(), 1, &c, &w.heads_kept()).unwrap()
    };
    let whole = open("gpt2-decode", 0.0, &c);
    assert!(whole.heads_kept().is_empty());
    let pruned = open("gpt2-decode", 0.5, &c);
    let kept = pruned.heads_kept();
    assert_eq!(kept.len(), 12);
    assert!(kept.iter().all(|b| (b.kept, b.heads) == (6, 12)));
    let (a, b) = (evaluate(whole.as_ref()), evaluate(pruned.as_ref()));
    for (h, d) in [(heads, &a), (6, &b)] {
        // By hand, per block: Q.K^T is h x [1, 64] x [64, 1025] (the new token's h x 64
        // keys written), P.V is h x [1, 1025] x [1025, 64] (its h x 64 values written);
        // the softmax runs h rows of 1,025.
        let mut products = Vec::new();
        let mut softmax = Vec::new();
        for _ in 0..12 {
            products.push(ops::matmul(h, 1, dh, keys, h * dh));
            products.push(ops::matmul(h, 1, keys, dh, h * dh));
            softmax.push(ops::softmax(h, keys));
        }
        let macs: u64 = products.iter().map(|p| p.mac16).sum();
        assert_eq!(macs, 12 * 2 * h * dh * keys);
        let (want, got) = (costed(&products, &c), class_cost(d, Class::Attention));
        assert_eq!(got.cycles, want.cycles, "{h} heads");
        assert_eq!(got.time_ns, want.time_ns, "{h} heads");
        let rel = |x: f64, y: f64| (x - y).abs() / y.abs();
        assert!(rel(got.energy.total_pj(), want.energy.total_pj()) < 1e-12);
        let (want, got) = (costed(&softmax, &c), class_cost(d, Class::Softmax));
        assert_eq!(got.cycles, want.cycles, "{h} heads");
        assert!(rel(got.energy.total_pj(), want.energy.total_pj()) < 1e-12);
    }
    // The norms, GELUs and residual adds do not depend on the heads.
    for class in [Class::Norm, Class::Activation, Class::Elementwise] {
        assert_eq!(class_cost(&a, class), class_cost(&b, class), "{class:?}");
    }
    assert!(b.total().cost.cycles < a.total().cost.cycles);
}
