//! A BERT-base-like encoder: word and position embeddings, 12 layers of hidden size 768 with
//! 12 heads and a 3072-wide GELU feed-forward, and a token-classification head (2 labels).
//! Dropout and the token-type embedding are not modelled.

use crate::builder::{GraphBuilder, LayerAnnot};
use crate::graph::{ActKind, Graph};

const HIDDEN: usize = 768;
const HEADS: usize = 12;
const FFN: usize = 3072;
const LAYERS: usize = 12;
const VOCAB: usize = 30522;
const MAX_POSITIONS: usize = 512;

/// The graph called `name`, and the roles of its projections. Each projection crosses
/// the crossbar once per token: an fc layer with `tokens` = `seq`.
pub fn bert_base(name: &str, batch: usize, seq: usize) -> (Graph, Vec<LayerAnnot>) {
    let mut b = GraphBuilder::new(name, batch);
    let tokens = batch * seq;
    let ids = b.input("input_ids", vec![batch, seq]);
    let pos = b.input("position_ids", vec![batch, seq]);
    let word = b.weight("embeddings.word_embeddings.weight", vec![VOCAB, HIDDEN]);
    let ptab = b.weight(
        "embeddings.position_embeddings.weight",
        vec![MAX_POSITIONS.max(seq), HIDDEN],
    );
    let we = b.embedding("embeddings.word_embeddings", ids, word);
    let pe = b.embedding("embeddings.position_embeddings", pos, ptab);
    let e = b.add("embeddings.add", &[we, pe]);
    let mut x = b.layernorm("embeddings.LayerNorm", e);
    let dh = HIDDEN / HEADS;
    for l in 0..LAYERS {
        let p = format!("encoder.layer.{l}");
        b.begin_block(&p);
        let q = b.fc_tokens(&format!("{p}.attention.self.query"), x, HIDDEN, true, seq);
        b.annotate("q", Some(HEADS));
        let k = b.fc_tokens(&format!("{p}.attention.self.key"), x, HIDDEN, true, seq);
        b.annotate("k", Some(HEADS));
        let v = b.fc_tokens(&format!("{p}.attention.self.value"), x, HIDDEN, true, seq);
        b.annotate("v", Some(HEADS));
        let bh = batch * HEADS;
        let s = b.matmul(
            &format!("{p}.attention.self.scores"),
            q,
            k,
            bh,
            seq,
            dh,
            seq,
            vec![bh * seq, seq],
        );
        let pr = b.softmax(&format!("{p}.attention.self.softmax"), s);
        let ctx = b.matmul(
            &format!("{p}.attention.self.context"),
            pr,
            v,
            bh,
            seq,
            seq,
            dh,
            vec![tokens, HIDDEN],
        );
        let o = b.fc_tokens(
            &format!("{p}.attention.output.dense"),
            ctx,
            HIDDEN,
            true,
            seq,
        );
        b.annotate("attn_out", Some(HEADS));
        let o = b.add(&format!("{p}.attention.output.add"), &[o, x]);
        let a = b.layernorm(&format!("{p}.attention.output.LayerNorm"), o);
        let h = b.fc_tokens(&format!("{p}.intermediate.dense"), a, FFN, true, seq);
        b.annotate("ffn_up", None);
        let h = b.act(&format!("{p}.intermediate.gelu"), h, ActKind::Gelu);
        let o = b.fc_tokens(&format!("{p}.output.dense"), h, HIDDEN, true, seq);
        b.annotate("ffn_down", None);
        let o = b.add(&format!("{p}.output.add"), &[o, a]);
        x = b.layernorm(&format!("{p}.output.LayerNorm"), o);
        b.end_block();
    }
    let y = b.fc_tokens("classifier", x, 2, true, seq);
    b.output(y);
    b.finish_annotated()
}
