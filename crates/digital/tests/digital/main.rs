//! The digital unit: hand-computed examples, BERT-base's attention by hand, CNN graphs,
//! attention in crossbars, and properties of the costs (docs/digital.md). One binary: add
//! a topic as a module beside these (docs/ARCHITECTURE.md, "Tests"); run one with
//! `cargo test -p digital --test digital tiny::`.

// Helpers of tests: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bert;
mod bundle;
mod cnn;
mod crossbar;
mod props;
mod tables;
mod tiny;

use network::builder::GraphBuilder;
use network::Graph;

/// One softmax over `rows` rows of `n` values, batch 1.
pub fn softmax_graph(rows: usize, n: usize) -> Graph {
    let mut b = GraphBuilder::new("softmax", 1);
    let x = b.input("x", vec![rows, n]);
    let y = b.softmax("softmax", x);
    b.output(y);
    b.finish()
}

pub fn bert(batch: usize, seq: usize) -> Graph {
    network::zoo::build(
        "bert",
        batch,
        network::zoo::ZooOptions { seq_len: Some(seq) },
    )
    .unwrap()
}

/// `a` and `b` equal to a relative 1e-12.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
}
