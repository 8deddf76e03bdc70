//! A committed transformer bundle's graph (read from ONNX by the exporter): its attention
//! products are the ones `run` lists as off the crossbar, with the same MACs, and its
//! softmax, LayerNorm, GELU and residual adds are all costed.

use digital::{cost_graph, enumerate, total, Class, DigitalTable, DigitalUnit, Placement};
use std::path::Path;
use workload::{BundleWorkload, OpenOptions, Workload};

fn open(name: &str) -> BundleWorkload {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../workloads")
        .join(name);
    BundleWorkload::open(&dir, &OpenOptions::default()).unwrap()
}

#[test]
fn fmnist_vit_attention_is_what_run_lists_off_the_crossbar() {
    for name in ["fmnist-vit", "fmnist-vit-relu"] {
        let w = open(name);
        let g = w.graph(1).unwrap().unwrap();
        let ops = enumerate(&g, Placement::Digital);
        let products: Vec<(String, u64)> = ops
            .iter()
            .filter(|o| o.class == Class::Attention)
            .map(|o| (o.name.clone(), o.counts.mac16))
            .collect();
        assert_eq!(products, w.off_crossbar(), "{name}");
        assert!(ops.iter().any(|o| o.class == Class::Softmax), "{name}");
        assert!(ops.iter().any(|o| o.kind == "layernorm"), "{name}");
        assert!(ops.iter().any(|o| o.kind == "add"), "{name}");
        let c = total(&cost_graph(
            &g,
            Placement::Digital,
            &DigitalUnit::default(),
            &DigitalTable::horowitz_45nm(),
        ));
        assert!(c.cycles > 0 && c.energy.compute_pj > 0.0 && c.energy.kv_pj > 0.0);
    }
    // The figure: 55,488 attention MACs a sample in fmnist-vit.
    let w = open("fmnist-vit");
    let macs: u64 = w.off_crossbar().iter().map(|(_, m)| m).sum();
    assert_eq!(macs, 55_488);
}

/// Each product's K/V write: a softmax feeds the left operand of P.V, so the two products
/// of a block are told apart; in this encoder each writes its whole right operand.
#[test]
fn fmnist_vit_products_write_their_whole_operand() {
    let g = open("fmnist-vit").graph(1).unwrap().unwrap();
    for o in enumerate(&g, Placement::Digital)
        .iter()
        .filter(|o| o.class == Class::Attention)
    {
        assert_eq!(
            o.counts.kv_write_bytes, o.counts.kv_read_bytes,
            "{}",
            o.name
        );
    }
}
