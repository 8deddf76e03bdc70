//! BERT-base (12 layers, d = 768, 12 heads) from the zoo: the attention products' MACs by
//! hand (2 T^2 d a layer), their K/V traffic, and where each op sits between the
//! crossbar layers.

use crate::bert;
use digital::{enumerate, Class, Placement};
use network::builder::GraphBuilder;

const D: u64 = 768;

/// Per layer, Q.K^T is 12 heads x T x 64 x T and P.V 12 x T x T x 64: T^2 d each, 2 T^2 d
/// together. At T = 128: 2 x 128 x 128 x 768 = 25,165,824; at T = 512: 402,653,184.
#[test]
fn attention_macs_per_layer_are_two_t_squared_d() {
    for (t, hand) in [(128u64, 25_165_824u64), (512, 402_653_184)] {
        assert_eq!(2 * t * t * D, hand);
        let ops = enumerate(&bert(1, t as usize), Placement::Digital);
        for l in 0..12 {
            let p = format!("encoder.layer.{l}.attention.self.");
            let macs: u64 = ops
                .iter()
                .filter(|o| o.class == Class::Attention && o.name.starts_with(&p))
                .map(|o| o.counts.mac16)
                .sum();
            assert_eq!(macs, hand, "layer {l} at T = {t}");
        }
    }
}

/// The counts are per sample: a batch of 3 gives the counts of one.
#[test]
fn counts_are_per_sample() {
    assert_eq!(
        enumerate(&bert(3, 64), Placement::Digital),
        enumerate(&bert(1, 64), Placement::Digital)
    );
}

/// K^T and V are read in full from the K/V store and written in full (an encoder adds
/// every token): T x d values each, 2 bytes a value.
#[test]
fn kv_traffic_of_an_encoder_layer() {
    let t = 128u64;
    let ops = enumerate(&bert(1, t as usize), Placement::Digital);
    let scores = ops
        .iter()
        .find(|o| o.name == "encoder.layer.0.attention.self.scores")
        .unwrap();
    let context = ops
        .iter()
        .find(|o| o.name == "encoder.layer.0.attention.self.context")
        .unwrap();
    for o in [scores, context] {
        assert_eq!(o.counts.kv_read_bytes, t * D * 2, "{}", o.name);
        assert_eq!(o.counts.kv_write_bytes, t * D * 2, "{}", o.name);
    }
    // Q (T x d) read, scores (12 x T x T) written; P (12 x T x T) read, context written.
    assert_eq!(scores.counts.buffer_read_bytes, t * D * 2);
    assert_eq!(scores.counts.buffer_write_bytes, 12 * t * t * 2);
    assert_eq!(context.counts.buffer_read_bytes, 12 * t * t * 2);
    assert_eq!(context.counts.buffer_write_bytes, t * D * 2);
}

/// The ops of BERT in execution order: the embeddings' add and LayerNorm before the first
/// crossbar layer; in layer l (crossbar layers q, k, v, o, ffn up, ffn down = 6l .. 6l+5)
/// the scores, softmax and context after v, the residual add and LayerNorm after o, GELU
/// after the FFN's up projection, the last add and LayerNorm after its down projection.
#[test]
fn ops_sit_between_the_crossbar_layers() {
    let ops = enumerate(&bert(1, 32), Placement::Digital);
    assert_eq!(ops.len(), 2 + 12 * 8);
    let at = |name: &str| {
        ops.iter()
            .find(|o| o.name == name)
            .unwrap_or_else(|| panic!("{name}"))
            .after_layer
    };
    assert_eq!(at("embeddings.add"), None);
    assert_eq!(at("embeddings.LayerNorm"), None);
    for l in 0..12usize {
        let p = format!("encoder.layer.{l}");
        for (suffix, after) in [
            ("attention.self.scores", 2),
            ("attention.self.softmax", 2),
            ("attention.self.context", 2),
            ("attention.output.add", 3),
            ("attention.output.LayerNorm", 3),
            ("intermediate.gelu", 4),
            ("output.add", 5),
            ("output.LayerNorm", 5),
        ] {
            assert_eq!(
                at(&format!("{p}.{suffix}")),
                Some(6 * l + after),
                "{p}.{suffix}"
            );
        }
    }
    // Execution order is kept.
    assert!(ops.windows(2).all(|w| w[0].node < w[1].node));
}

/// A decode step: one query token against a cache of L = 1024 keys and values, 12 heads
/// of 64. The whole cache is read (12 x 64 x 1024 values for K^T, the same for V); one
/// token's keys and values are written (12 x 64 each).
#[test]
fn a_decode_step_reads_the_whole_cache_and_writes_one_token() {
    let (h, dh, l) = (12usize, 64usize, 1024usize);
    let mut b = GraphBuilder::new("decode", 1);
    let q = b.input("q", vec![1, h * dh]);
    let kt = b.input("k_cache_t", vec![h * dh, l]);
    let v = b.input("v_cache", vec![l, h * dh]);
    let s = b.matmul("scores", q, kt, h, 1, dh, l, vec![h, l]);
    let p = b.softmax("softmax", s);
    let c = b.matmul("context", p, v, h, 1, l, dh, vec![1, h * dh]);
    b.output(c);
    let ops = enumerate(&b.finish(), Placement::Digital);
    let (scores, context) = (&ops[0], &ops[2]);
    let cache = (h * dh * l * 2) as u64;
    let token = (h * dh * 2) as u64;
    assert_eq!(
        (scores.counts.kv_read_bytes, scores.counts.kv_write_bytes),
        (cache, token)
    );
    assert_eq!(
        (context.counts.kv_read_bytes, context.counts.kv_write_bytes),
        (cache, token)
    );
    assert_eq!(scores.counts.mac16, (h * dh * l) as u64);
    assert_eq!(ops[1].counts.exp, (h * l) as u64);
}
