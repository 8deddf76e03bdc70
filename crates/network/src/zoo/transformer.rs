//! The full-size transformers: ViT-B/16, Swin-T, GPT-2 small and Llama-3-8B (prefill of T
//! tokens and decode of one token against a K/V cache), each block written out with its
//! norms, projections, attention products (Q.K^T and P.V as `MatMul` nodes), softmax,
//! activations, residual adds and, for the decoders, the K/V cache as a `Concat` node
//! (`*.k_cache`, `*.v_cache`) that reads the past keys or values (a network input,
//! `past_key_values.L.key`) and the new ones and writes the cache back (a network output).
//! Activations are `[B, T, d]`; a projection over a sample's T tokens is an fc layer with
//! `tokens` T. docs/workloads.md, "Transformers", has the configurations and the choices.

use crate::builder::{GraphBuilder, LayerAnnot};
use crate::graph::{ActKind, Graph, TensorId};

/// Where a block's keys and values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cache {
    /// Keys and values of the tokens themselves, no cache (encoders).
    None,
    /// A decoder's prefill: the tokens' keys and values are written to the cache.
    Prefill,
    /// A decoder's decode step: `past` cached keys and values are read, the new token's
    /// appended; the attention spans past + tokens keys.
    Decode { past: usize },
}

/// A block's shape and style.
#[derive(Debug, Clone, Copy)]
pub(super) struct Block {
    pub d: usize,
    pub heads: usize,
    /// Key/value heads (grouped-query attention when fewer than `heads`).
    pub kv_heads: usize,
    pub ffn: usize,
    /// Llama's block (RMSNorm, separate Q/K/V, SwiGLU, no biases) rather than the GPT/ViT
    /// one (LayerNorm, packed QKV, GELU, biases).
    pub llama: bool,
    /// Attention windows a sample's tokens are split into (Swin); 1: global attention.
    pub windows: usize,
    pub cache: Cache,
}

/// Module names of a block's pieces, after the block's prefix.
pub(super) struct Names {
    pub norm1: &'static str,
    pub attn: &'static str,
    /// The packed projection (GPT/ViT) or the query's (Llama).
    pub qkv: &'static str,
    pub k: &'static str,
    pub v: &'static str,
    pub o: &'static str,
    pub norm2: &'static str,
    pub mlp: &'static str,
    pub up: &'static str,
    pub gate: &'static str,
    pub act: &'static str,
    pub down: &'static str,
}

const TIMM: Names = Names {
    norm1: "norm1",
    attn: "attn",
    qkv: "qkv",
    k: "",
    v: "",
    o: "proj",
    norm2: "norm2",
    mlp: "mlp",
    up: "fc1",
    gate: "",
    act: "act",
    down: "fc2",
};

const GPT2: Names = Names {
    norm1: "ln_1",
    attn: "attn",
    qkv: "c_attn",
    k: "",
    v: "",
    o: "c_proj",
    norm2: "ln_2",
    mlp: "mlp",
    up: "c_fc",
    gate: "",
    act: "act",
    down: "c_proj",
};

const LLAMA: Names = Names {
    norm1: "input_layernorm",
    attn: "self_attn",
    qkv: "q_proj",
    k: "k_proj",
    v: "v_proj",
    o: "o_proj",
    norm2: "post_attention_layernorm",
    mlp: "mlp",
    up: "up_proj",
    gate: "gate_proj",
    act: "act_fn",
    down: "down_proj",
};

/// One block over `x` [B, T, d] (T = `tokens`), pre-norm with two residual adds.
fn block(
    b: &mut GraphBuilder,
    p: &str,
    layer: usize,
    x: TensorId,
    c: Block,
    n: &Names,
    tokens: usize,
) -> TensorId {
    let batch = b.batch();
    let (d, h, hkv) = (c.d, c.heads, c.kv_heads);
    let dh = d / h;
    let kvd = hkv * dh;
    let a = format!("{p}.{}", n.attn);
    let bias = !c.llama;
    let hn = if c.llama {
        b.rmsnorm(&format!("{p}.{}", n.norm1), x)
    } else {
        b.layernorm(&format!("{p}.{}", n.norm1), x)
    };
    let (q, k, v) = if c.llama {
        let q = b.fc_tokens(&format!("{a}.{}", n.qkv), hn, d, bias, tokens);
        b.annotate("q", Some(h));
        let k = b.fc_tokens(&format!("{a}.{}", n.k), hn, kvd, bias, tokens);
        b.annotate("k", Some(hkv));
        let v = b.fc_tokens(&format!("{a}.{}", n.v), hn, kvd, bias, tokens);
        b.annotate("v", Some(hkv));
        (q, k, v)
    } else {
        let qkv = b.fc_tokens(&format!("{a}.{}", n.qkv), hn, 3 * d, bias, tokens);
        b.annotate("qkv", Some(h));
        (
            b.slice_last(&format!("{a}.q"), qkv, d),
            b.slice_last(&format!("{a}.k"), qkv, d),
            b.slice_last(&format!("{a}.v"), qkv, d),
        )
    };
    // Keys each query attends to, per window.
    let w = c.windows;
    let m = tokens / w;
    let (k, v, keys) = match c.cache {
        Cache::None => (k, v, m),
        Cache::Prefill => {
            let kc = b.concat_axis(&format!("{a}.k_cache"), &[k], 1);
            let vc = b.concat_axis(&format!("{a}.v_cache"), &[v], 1);
            b.output(kc);
            b.output(vc);
            (kc, vc, tokens)
        }
        Cache::Decode { past } => {
            let pk = b.input(
                &format!("past_key_values.{layer}.key"),
                vec![batch, past, kvd],
            );
            let pv = b.input(
                &format!("past_key_values.{layer}.value"),
                vec![batch, past, kvd],
            );
            let kc = b.concat_axis(&format!("{a}.k_cache"), &[pk, k], 1);
            let vc = b.concat_axis(&format!("{a}.v_cache"), &[pv, v], 1);
            b.output(kc);
            b.output(vc);
            (kc, vc, past + tokens)
        }
    };
    // Every query head of a group reads its group's K and V (grouped-query attention).
    let bh = batch * w * h;
    let s = b.matmul(
        &format!("{a}.scores"),
        q,
        k,
        bh,
        m,
        dh,
        keys,
        vec![bh, m, keys],
    );
    let pr = b.softmax(&format!("{a}.softmax"), s);
    let ctx = b.matmul(
        &format!("{a}.context"),
        pr,
        v,
        bh,
        m,
        keys,
        dh,
        vec![batch, tokens, d],
    );
    let o = b.fc_tokens(&format!("{a}.{}", n.o), ctx, d, bias, tokens);
    b.annotate("attn_out", Some(h));
    let x = b.add(&format!("{a}.residual"), &[o, x]);
    let hn = if c.llama {
        b.rmsnorm(&format!("{p}.{}", n.norm2), x)
    } else {
        b.layernorm(&format!("{p}.{}", n.norm2), x)
    };
    let f = format!("{p}.{}", n.mlp);
    let y = if c.llama {
        let g = b.fc_tokens(&format!("{f}.{}", n.gate), hn, c.ffn, bias, tokens);
        b.annotate("ffn_gate", None);
        let g = b.act(&format!("{f}.{}", n.act), g, ActKind::Silu);
        let u = b.fc_tokens(&format!("{f}.{}", n.up), hn, c.ffn, bias, tokens);
        b.annotate("ffn_up", None);
        b.mul(&format!("{f}.mul"), &[g, u])
    } else {
        let u = b.fc_tokens(&format!("{f}.{}", n.up), hn, c.ffn, bias, tokens);
        b.annotate("ffn_up", None);
        b.act(&format!("{f}.{}", n.act), u, ActKind::Gelu)
    };
    let y = b.fc_tokens(&format!("{f}.{}", n.down), y, d, bias, tokens);
    b.annotate("ffn_down", None);
    b.add(&format!("{f}.residual"), &[y, x])
}

/// ViT-B/16 (Dosovitskiy et al. 2021; timm's `vit_base_patch16_224`): a 224 x 224 image
/// in 196 patches of 16 x 16 (a conv of kernel and stride 16), a class token (197
/// tokens), learned position embeddings, 12 blocks of width 768, 12 heads, MLP 3072, and
/// a 1000-class head on the class token.
pub fn vit_b16(batch: usize) -> (Graph, Vec<LayerAnnot>) {
    const D: usize = 768;
    let mut b = GraphBuilder::new("vit-b16", batch);
    let x = b.input("pixel_values", vec![batch, 3, 224, 224]);
    let e = b.conv_with("patch_embed.proj", x, D, 16, 16, 0, 1, true);
    let e = b.reshape("patch_embed.flatten", e, vec![batch, D, 196]);
    let e = b.transpose("patch_embed.transpose", e, vec![0, 2, 1]);
    let cls = b.weight("cls_token", vec![1, 1, D]);
    let e = b.concat_axis("cls_concat", &[cls, e], 1);
    let pos = b.weight("pos_embed", vec![1, 197, D]);
    let mut x = b.add_weight("pos_add", e, pos);
    let c = Block {
        d: D,
        heads: 12,
        kv_heads: 12,
        ffn: 3072,
        llama: false,
        windows: 1,
        cache: Cache::None,
    };
    for l in 0..12 {
        let p = format!("blocks.{l}");
        b.begin_block(&p);
        x = block(&mut b, &p, l, x, c, &TIMM, 197);
        b.end_block();
    }
    let x = b.layernorm("norm", x);
    let x = b.gather("cls_token.select", x, 1, 0);
    let y = b.fc("head", x, 1000, true);
    b.output(y);
    b.finish_annotated()
}

/// Swin-T (Liu et al. 2021; timm's `swin_tiny_patch4_window7_224`): 4 x 4 patches of a
/// 224 x 224 image (56 x 56 tokens of 96), four stages of depths 2/2/6/2, widths
/// 96/192/384/768, heads 3/6/12/24, attention within 7 x 7 windows (64/16/4/1 windows a
/// stage), MLP 4 x the width, patch merging between stages (the 2 x 2 neighbours
/// concatenated, LayerNorm, an fc 4C -> 2C without bias), and a 1000-class head on the
/// mean token. Shifted windows attend over the same 49 tokens a window: they cost what
/// plain windows cost, so the cyclic shift and its mask are not nodes.
pub fn swin_t(batch: usize) -> (Graph, Vec<LayerAnnot>) {
    let mut b = GraphBuilder::new("swin-t", batch);
    let x = b.input("pixel_values", vec![batch, 3, 224, 224]);
    let e = b.conv_with("patch_embed.proj", x, 96, 4, 4, 0, 1, true);
    let e = b.reshape("patch_embed.flatten", e, vec![batch, 96, 56 * 56]);
    let e = b.transpose("patch_embed.transpose", e, vec![0, 2, 1]);
    let mut x = b.layernorm("patch_embed.norm", e);
    let (depths, heads) = ([2, 2, 6, 2], [3, 6, 12, 24]);
    let (mut d, mut side) = (96, 56);
    for s in 0..4 {
        let c = Block {
            d,
            heads: heads[s],
            kv_heads: heads[s],
            ffn: 4 * d,
            llama: false,
            windows: (side / 7) * (side / 7),
            cache: Cache::None,
        };
        for i in 0..depths[s] {
            let p = format!("layers.{s}.blocks.{i}");
            b.begin_block(&p);
            x = block(&mut b, &p, i, x, c, &TIMM, side * side);
            b.end_block();
        }
        if s < 3 {
            let p = format!("layers.{s}.downsample");
            side /= 2;
            let m = b.reshape(&format!("{p}.merge"), x, vec![batch, side * side, 4 * d]);
            let m = b.layernorm(&format!("{p}.norm"), m);
            x = b.fc_tokens(&format!("{p}.reduction"), m, 2 * d, false, side * side);
            d *= 2;
        }
    }
    let x = b.layernorm("norm", x);
    let x = b.transpose("avgpool.transpose", x, vec![0, 2, 1]);
    let x = b.reshape("avgpool.reshape", x, vec![batch, d, side, side]);
    let x = b.global_pool("avgpool", x);
    let y = b.fc("head", x, 1000, true);
    b.output(y);
    b.finish_annotated()
}

/// A decoder's phase: prefill of `tokens` tokens, or decode of one token against `past`
/// cached keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Prefill { tokens: usize },
    Decode { past: usize },
}

impl Phase {
    fn tokens(self) -> usize {
        match self {
            Phase::Prefill { tokens } => tokens,
            Phase::Decode { .. } => 1,
        }
    }

    fn cache(self) -> Cache {
        match self {
            Phase::Prefill { .. } => Cache::Prefill,
            Phase::Decode { past } => Cache::Decode { past },
        }
    }

    /// Position of the first new token.
    fn start(self) -> usize {
        match self {
            Phase::Prefill { .. } => 0,
            Phase::Decode { past } => past,
        }
    }
}

/// The LM head over the last token only: the logits that pick the next token (a prefill
/// computes no other token's logits).
fn lm_head(b: &mut GraphBuilder, x: TensorId, tokens: usize, vocab: usize, name: &str) {
    let last = b.gather("last_token", x, 1, tokens - 1);
    let y = b.fc(name, last, vocab, false);
    b.output(y);
}

/// GPT-2 small (Radford et al. 2019; Hugging Face `gpt2`): 12 blocks of width 768, 12
/// heads, MLP 3072, learned positions (1024), vocabulary 50,257, the LM head (tied to the
/// token embedding, a crossbar layer as any other) on the last token.
pub fn gpt2(name: &str, batch: usize, phase: Phase) -> (Graph, Vec<LayerAnnot>) {
    const D: usize = 768;
    const VOCAB: usize = 50257;
    let t = phase.tokens();
    let mut b = GraphBuilder::new(name, batch);
    let ids = b.input("input_ids", vec![batch, t]);
    let pos = b.input("position_ids", vec![batch, t]);
    let wte = b.weight("transformer.wte.weight", vec![VOCAB, D]);
    let wpe = b.weight(
        "transformer.wpe.weight",
        vec![1024.max(phase.start() + t), D],
    );
    let we = b.embedding("transformer.wte", ids, wte);
    let pe = b.embedding("transformer.wpe", pos, wpe);
    let we = b.reshape("transformer.wte.reshape", we, vec![batch, t, D]);
    let pe = b.reshape("transformer.wpe.reshape", pe, vec![batch, t, D]);
    let mut x = b.add("transformer.embeddings.add", &[we, pe]);
    let c = Block {
        d: D,
        heads: 12,
        kv_heads: 12,
        ffn: 3072,
        llama: false,
        windows: 1,
        cache: phase.cache(),
    };
    for l in 0..12 {
        let p = format!("transformer.h.{l}");
        b.begin_block(&p);
        x = block(&mut b, &p, l, x, c, &GPT2, t);
        b.end_block();
    }
    let x = b.layernorm("transformer.ln_f", x);
    lm_head(&mut b, x, t, VOCAB, "lm_head");
    b.finish_annotated()
}

/// Llama-3-8B (Meta, "The Llama 3 Herd of Models", 2024, table 3; Hugging Face
/// `meta-llama/Meta-Llama-3-8B` config.json): 32 blocks of width 4096, 32 query heads and
/// 8 key/value heads (grouped-query attention, head width 128), a SwiGLU feed-forward of
/// 14,336, RMSNorm, no biases, vocabulary 128,256, an untied LM head on the last token.
/// Rotary position embeddings (element-wise on Q and K) are not nodes.
pub fn llama3_8b(name: &str, batch: usize, phase: Phase) -> (Graph, Vec<LayerAnnot>) {
    const D: usize = 4096;
    const VOCAB: usize = 128_256;
    let t = phase.tokens();
    let mut b = GraphBuilder::new(name, batch);
    let ids = b.input("input_ids", vec![batch, t]);
    let table = b.weight("model.embed_tokens.weight", vec![VOCAB, D]);
    let e = b.embedding("model.embed_tokens", ids, table);
    let mut x = b.reshape("model.embed_tokens.reshape", e, vec![batch, t, D]);
    let c = Block {
        d: D,
        heads: 32,
        kv_heads: 8,
        ffn: 14_336,
        llama: true,
        windows: 1,
        cache: phase.cache(),
    };
    for l in 0..32 {
        let p = format!("model.layers.{l}");
        b.begin_block(&p);
        x = block(&mut b, &p, l, x, c, &LLAMA, t);
        b.end_block();
    }
    let x = b.rmsnorm("model.norm", x);
    lm_head(&mut b, x, t, VOCAB, "lm_head");
    b.finish_annotated()
}

#[cfg(test)]
mod tests {
    //! Every crossbar layer's and every attention product's multiply-accumulates a sample,
    //! held to counts written here from each published configuration (d the width, T
    //! the tokens of a sample, FFN the feed-forward width, H the heads, dh = d / H).

    use super::super::{build, build_annotated, ZooOptions};
    use crate::graph::{Graph, Op};

    /// (crossbar layer, MACs a sample) in execution order.
    fn crossbar(g: &Graph) -> Vec<(String, u64)> {
        g.crossbar_layers()
            .into_iter()
            .map(|l| (l.name, l.geom.macs_per_sample() as u64))
            .collect()
    }

    /// (MatMul node, MACs a sample) in execution order.
    fn attention(g: &Graph) -> Vec<(String, u64)> {
        g.nodes
            .iter()
            .filter_map(|n| match n.op {
                Op::MatMul { batch, m, k, n: c } => {
                    Some((n.name.clone(), (batch * m * k * c) as u64))
                }
                _ => None,
            })
            .collect()
    }

    fn sum(l: &[(String, u64)]) -> u64 {
        l.iter().map(|(_, m)| m).sum()
    }

    fn check(
        name: &str,
        layers: Vec<(String, u64)>,
        products: Vec<(String, u64)>,
        totals: (u64, u64),
    ) {
        let g = build(name, 1, ZooOptions::default()).unwrap();
        assert_eq!(crossbar(&g), layers, "{name}: crossbar layers");
        assert_eq!(attention(&g), products, "{name}: attention products");
        assert_eq!((sum(&layers), sum(&products)), totals, "{name}: totals");
        // A batch of 2 doubles every product (the graph's batch is not folded away).
        let g2 = build(name, 2, ZooOptions::default()).unwrap();
        assert_eq!(sum(&attention(&g2)), 2 * totals.1, "{name}");
        assert!(g2.validate().is_ok());
    }

    fn bert(t: u64) -> (Vec<(String, u64)>, Vec<(String, u64)>) {
        let (d, ffn) = (768u64, 3072u64);
        let (mut x, mut a) = (Vec::new(), Vec::new());
        for l in 0..12 {
            let p = format!("encoder.layer.{l}");
            for n in [
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
            ] {
                x.push((format!("{p}.{n}"), t * d * d));
            }
            // Q.K^T: 12 heads of [T, 64] x [64, T]; P.V: 12 heads of [T, T] x [T, 64].
            a.push((format!("{p}.attention.self.scores"), 12 * t * 64 * t));
            a.push((format!("{p}.attention.self.context"), 12 * t * t * 64));
            x.push((format!("{p}.attention.output.dense"), t * d * d));
            x.push((format!("{p}.intermediate.dense"), t * d * ffn));
            x.push((format!("{p}.output.dense"), t * ffn * d));
        }
        x.push(("classifier".into(), t * d * 2));
        (x, a)
    }

    #[test]
    fn bert_base_at_128_and_512_tokens() {
        // 12 x (4 T d^2 + 2 T d FFN) + 2 T d on the crossbars; 12 x 2 T^2 d attention.
        let (x, a) = bert(128);
        check("bert-base-128", x, a, (10_871_832_576, 301_989_888));
        let (x, a) = bert(512);
        check("bert-base-512", x, a, (43_487_330_304, 4_831_838_208));
        // `bert` is bert-base-128 under its old name (and `sresim memory`'s --seq-len).
        let (x, a) = bert(128);
        check("bert", x, a, (10_871_832_576, 301_989_888));
    }

    /// A GPT/ViT block: packed QKV, output projection, MLP up and down, over `t` tokens
    /// of width `d` attending to `keys` keys in `windows` windows of `t / windows`.
    fn gpt_block(
        p: &str,
        names: [&str; 5],
        (t, d, h, keys, windows): (u64, u64, u64, u64, u64),
        x: &mut Vec<(String, u64)>,
        a: &mut Vec<(String, u64)>,
    ) {
        let [attn, qkv, o, up, down] = names;
        let dh = d / h;
        let m = t / windows;
        x.push((format!("{p}.{attn}.{qkv}"), t * d * 3 * d));
        a.push((format!("{p}.{attn}.scores"), windows * h * m * dh * keys));
        a.push((format!("{p}.{attn}.context"), windows * h * m * keys * dh));
        x.push((format!("{p}.{attn}.{o}"), t * d * d));
        x.push((format!("{p}.mlp.{up}"), t * d * 4 * d));
        x.push((format!("{p}.mlp.{down}"), t * 4 * d * d));
    }

    const TIMM: [&str; 5] = ["attn", "qkv", "proj", "fc1", "fc2"];

    #[test]
    fn vit_b16_at_224() {
        // The patch embedding: 196 positions of a 16 x 16 x 3 = 768-row kernel, 768 out.
        let mut x = vec![("patch_embed.proj".to_string(), 196 * 768 * 768)];
        let mut a = Vec::new();
        for l in 0..12 {
            let p = format!("blocks.{l}");
            gpt_block(&p, TIMM, (197, 768, 12, 197, 1), &mut x, &mut a);
        }
        x.push(("head".into(), 768 * 1000));
        // 17.6 G multiply-accumulates in all, as the ViT paper's 17.6 GFLOPs.
        check("vit-b16", x, a, (16_848_500_736, 715_327_488));
    }

    #[test]
    fn swin_t_at_224() {
        // 56 x 56 positions of a 4 x 4 x 3 kernel, 96 out.
        let mut x = vec![("patch_embed.proj".to_string(), 3136 * 48 * 96)];
        let mut a = Vec::new();
        let stages: [(u64, u64, u64, u64); 4] = [
            // (depth, width, heads, side)
            (2, 96, 3, 56),
            (2, 192, 6, 28),
            (6, 384, 12, 14),
            (2, 768, 24, 7),
        ];
        for (s, &(depth, d, h, side)) in stages.iter().enumerate() {
            let t = side * side;
            for i in 0..depth {
                let p = format!("layers.{s}.blocks.{i}");
                // 7 x 7 windows: (side / 7)^2 of them, each of 49 queries and 49 keys.
                let w = (side / 7) * (side / 7);
                gpt_block(&p, TIMM, (t, d, h, 49, w), &mut x, &mut a);
            }
            if s < 3 {
                // 2 x 2 neighbours merged: (side / 2)^2 tokens of 4d -> 2d.
                let t2 = (side / 2) * (side / 2);
                x.push((
                    format!("layers.{s}.downsample.reduction"),
                    t2 * 4 * d * 2 * d,
                ));
            }
        }
        x.push(("head".into(), 768 * 1000));
        // 4.5 G multiply-accumulates in all, as the Swin paper's 4.5 GFLOPs.
        check("swin-t", x, a, (4_350_425_088, 140_141_568));
    }

    const GPT2: [&str; 5] = ["attn", "c_attn", "c_proj", "c_fc", "c_proj"];

    #[test]
    fn gpt2_prefill_and_decode() {
        for (name, t, keys, totals) in [
            // 12 x 12 T d^2 + d x 50257 (the LM head on the last token); 12 x 2 T^2 d.
            ("gpt2-prefill", 128, 128, (10_910_233_344, 301_989_888)),
            // One token against 1024 cached keys and values and its own: 2 x 1025 d a layer.
            ("gpt2-decode", 1, 1025, (123_532_032, 18_892_800)),
        ] {
            let (mut x, mut a) = (Vec::new(), Vec::new());
            for l in 0..12 {
                let p = format!("transformer.h.{l}");
                gpt_block(&p, GPT2, (t, 768, 12, keys, 1), &mut x, &mut a);
            }
            x.push(("lm_head".into(), 768 * 50257));
            check(name, x, a, totals);
        }
    }

    #[test]
    fn llama3_8b_prefill_and_decode() {
        let (d, kv, ffn) = (4096u64, 1024u64, 14_336u64);
        for (name, t, keys, totals) in [
            (
                "llama3-8b-prefill",
                128u64,
                128u64,
                (893_878_534_144, 4_294_967_296),
            ),
            ("llama3-8b-decode", 1, 1025, (7_504_658_432, 268_697_600)),
        ] {
            let (mut x, mut a) = (Vec::new(), Vec::new());
            for l in 0..32 {
                let p = format!("model.layers.{l}");
                x.push((format!("{p}.self_attn.q_proj"), t * d * d));
                // 8 key/value heads of 128: K and V are 1024 wide.
                x.push((format!("{p}.self_attn.k_proj"), t * d * kv));
                x.push((format!("{p}.self_attn.v_proj"), t * d * kv));
                // 32 query heads of 128, each against its group's keys.
                a.push((format!("{p}.self_attn.scores"), 32 * t * 128 * keys));
                a.push((format!("{p}.self_attn.context"), 32 * t * keys * 128));
                x.push((format!("{p}.self_attn.o_proj"), t * d * d));
                x.push((format!("{p}.mlp.gate_proj"), t * d * ffn));
                x.push((format!("{p}.mlp.up_proj"), t * d * ffn));
                x.push((format!("{p}.mlp.down_proj"), t * ffn * d));
            }
            x.push(("lm_head".into(), d * 128_256));
            check(name, x, a, totals);
        }
    }

    #[test]
    fn the_graphs_carry_every_op_the_digital_unit_costs() {
        let kinds = |name: &str| -> Vec<&'static str> {
            let g = build(name, 1, ZooOptions::default()).unwrap();
            g.nodes.iter().map(|n| n.op.kind()).collect()
        };
        let count = |k: &[&str], what: &str| k.iter().filter(|&&x| x == what).count();
        let k = kinds("gpt2-decode");
        // Per block: two norms, a softmax, a GELU, two residual adds, two cache nodes.
        assert_eq!(count(&k, "layernorm"), 12 * 2 + 1);
        assert_eq!(count(&k, "softmax"), 12);
        assert_eq!(count(&k, "gelu"), 12);
        assert_eq!(count(&k, "add"), 12 * 2 + 1);
        assert_eq!(count(&k, "concat"), 12 * 2);
        let k = kinds("llama3-8b-decode");
        assert_eq!(count(&k, "rmsnorm"), 32 * 2 + 1);
        assert_eq!(count(&k, "silu"), 32);
        assert_eq!(count(&k, "mul"), 32);
        assert_eq!(count(&k, "layernorm"), 0);
        let k = kinds("swin-t");
        assert_eq!(count(&k, "softmax"), 12);
        assert_eq!(count(&k, "layernorm"), 12 * 2 + 3 + 2); // blocks, merges, embed, final
                                                            // The decode step's cache: 1024 past keys read, 1025 written back, [1, L, d_kv].
        let g = build("llama3-8b-decode", 1, ZooOptions::default()).unwrap();
        let cache = g
            .nodes
            .iter()
            .find(|n| n.name == "model.layers.0.self_attn.k_cache")
            .unwrap();
        let shape = |t: usize| g.tensors[t].shape.clone();
        assert_eq!(shape(cache.inputs[0]), vec![1, 1024, 1024]);
        assert_eq!(shape(cache.inputs[1]), vec![1, 1, 1024]);
        assert_eq!(shape(cache.outputs[0]), vec![1, 1025, 1024]);
        assert!(g.outputs.contains(&cache.outputs[0]));
        // Prefill writes the 128 tokens' keys: the cache's first fill.
        let g = build("gpt2-prefill", 1, ZooOptions::default()).unwrap();
        let cache = g
            .nodes
            .iter()
            .find(|n| n.name == "transformer.h.11.attn.v_cache")
            .unwrap();
        assert_eq!(g.tensors[cache.outputs[0]].shape, vec![1, 128, 768]);
        // The roles: every projection of a block, with its heads.
        let (_, roles) = build_annotated("llama3-8b-prefill", 1, ZooOptions::default()).unwrap();
        assert_eq!(roles.len(), 32 * 7);
        let k = roles
            .iter()
            .find(|r| r.layer == "model.layers.3.self_attn.k_proj");
        assert_eq!(k.map(|r| (r.role, r.heads)), Some(("k", Some(8))));
    }
}
