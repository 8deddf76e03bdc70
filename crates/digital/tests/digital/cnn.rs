//! CNN graphs: the unit runs their pooling, ReLU-family activations, batch norms, LRN and
//! residual adds, and nothing of a transformer's; with either placement the same.

use digital::{
    crossbar_attention, enumerate, has_transformer_ops, CellWrite, Class, CrossbarGeom, Placement,
};
use network::zoo::{build, ZooOptions};
use network::Op;

const CNN_KINDS: [&str; 9] = [
    "relu",
    "relu6",
    "maxpool",
    "avgpool",
    "globalpool",
    "add",
    "batchnorm",
    "lrn",
    "leakyrelu",
];

#[test]
fn a_cnn_gives_only_pooling_activations_norms_and_residual_adds() {
    for name in [
        "lenet5",
        "caffenet",
        "resnet18",
        "mobilenetv2",
        "vgg16",
        "yolov4-tiny",
    ] {
        let g = build(name, 1, ZooOptions::default()).unwrap();
        let ops = enumerate(&g, Placement::Digital);
        assert!(!ops.is_empty(), "{name}");
        assert!(!has_transformer_ops(&ops), "{name}");
        for o in &ops {
            assert!(
                CNN_KINDS.contains(&o.kind),
                "{name}: {} is {}",
                o.name,
                o.kind
            );
            assert!(
                !matches!(o.class, Class::Attention | Class::Softmax),
                "{name}: {}",
                o.name
            );
            assert_eq!(o.counts.kv_read_bytes + o.counts.kv_write_bytes, 0);
            assert_eq!(o.counts.exp + o.counts.reciprocal, 0, "{name}: {}", o.name);
        }
        // Every node of those kinds is listed, and no other.
        let expected: Vec<usize> = g
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| CNN_KINDS.contains(&n.op.kind()))
            .map(|(i, _)| i)
            .collect();
        let listed: Vec<usize> = ops.iter().map(|o| o.node).collect();
        assert_eq!(listed, expected, "{name}");
        assert_eq!(ops, enumerate(&g, Placement::Crossbar), "{name}");
        let w = crossbar_attention(
            &g,
            CrossbarGeom::new(128, 128, 16, 2),
            &CellWrite::pipelayer(),
        );
        assert!(w.products.is_empty() && w.cells_written == 0 && w.energy_pj == 0.0);
    }
}

/// resnet18 by hand: its first max pool (3x3, stride 2) makes 64 x 56 x 56 outputs of 8
/// compares each; the residual adds add 2 tensors, one add an output.
#[test]
fn resnet18_pool_and_adds_by_hand() {
    let g = build("resnet18", 1, ZooOptions::default()).unwrap();
    let ops = enumerate(&g, Placement::Digital);
    let pool = ops.iter().find(|o| o.kind == "maxpool").unwrap();
    assert_eq!(pool.counts.compare16, 64 * 56 * 56 * 8);
    for o in ops.iter().filter(|o| o.kind == "add") {
        let n = &g.nodes[o.node];
        assert!(matches!(n.op, Op::Add));
        let out = g.tensors[n.outputs[0]].elements();
        assert_eq!(o.counts.add16, out, "{}", o.name);
    }
    assert_eq!(ops.iter().filter(|o| o.kind == "add").count(), 8);
}

/// Networks with attention are told apart from the CNNs: BERT, and GNMT, whose decoder
/// attends over the encoder's outputs (a softmax and two products a step) beside its
/// LSTM gates.
#[test]
fn transformers_are_told_apart() {
    let bert = build("bert", 1, ZooOptions { seq_len: Some(16) }).unwrap();
    assert!(has_transformer_ops(&enumerate(&bert, Placement::Digital)));
    assert!(has_transformer_ops(&enumerate(&bert, Placement::Crossbar)));
    let gnmt = build("gnmt", 1, ZooOptions { seq_len: Some(4) }).unwrap();
    let ops = enumerate(&gnmt, Placement::Digital);
    assert!(ops.iter().any(|o| o.class == Class::Recurrent));
    assert!(ops.iter().any(|o| o.class == Class::Softmax));
    assert!(has_transformer_ops(&ops));
}
