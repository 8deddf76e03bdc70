//! What a transformer's fc layer is for (`role`, with its `heads`), as a shape file
//! annotates it: which layers form an attention block (whose heads can be pruned
//! together), and which layer reads a feed-forward's ReLU output (whose inputs are
//! post-ReLU) rather than a LayerNorm's (dense, signed).
//!
//! An attention block is the `q`, `k`, `v` (or one packed `qkv`) layers since the previous
//! block, closed by its `attn_out` layer. Head h of a block is, with head width dh =
//! q.out_features / H: the output columns h*dh..(h+1)*dh of q (of each third of qkv), and
//! the input rows h*dh..(h+1)*dh of attn_out. K and V may have fewer heads than Q
//! (grouped-query attention, H_kv dividing H): their head g serves query heads
//! g*H/H_kv..(g+1)*H/H_kv, and is pruned when all of those are.

use std::fmt;
use std::str::FromStr;

use rand::seq::index;

use super::params::{tensor_rng, Tensor};
use crate::geometry::{LayerKind, LayerSpec};

/// The role of an fc layer in a transformer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Query projection: its output columns are the heads.
    Q,
    /// Key projection.
    K,
    /// Value projection.
    V,
    /// Q, K and V packed in one projection (PyTorch's `in_proj`): out = 3 x the width.
    Qkv,
    /// The attention output projection: its input rows are the heads.
    AttnOut,
    /// A feed-forward's first layer (reads a LayerNorm's output).
    FfnUp,
    /// A gated feed-forward's gate (SwiGLU's W1; reads a LayerNorm's output).
    FfnGate,
    /// A feed-forward's second layer: reads the activation's output (post-ReLU).
    FfnDown,
}

/// The accepted `role` values, in the order errors list them.
pub const ROLES: [&str; 8] = [
    "q", "k", "v", "qkv", "attn_out", "ffn_up", "ffn_gate", "ffn_down",
];

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Q => "q",
            Role::K => "k",
            Role::V => "v",
            Role::Qkv => "qkv",
            Role::AttnOut => "attn_out",
            Role::FfnUp => "ffn_up",
            Role::FfnGate => "ffn_gate",
            Role::FfnDown => "ffn_down",
        }
    }

    /// Whether the layer belongs to an attention block (and needs `heads`).
    pub fn is_attention(self) -> bool {
        matches!(
            self,
            Role::Q | Role::K | Role::V | Role::Qkv | Role::AttnOut
        )
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "q" => Role::Q,
            "k" => Role::K,
            "v" => Role::V,
            "qkv" => Role::Qkv,
            "attn_out" => Role::AttnOut,
            "ffn_up" => Role::FfnUp,
            "ffn_gate" => Role::FfnGate,
            "ffn_down" => Role::FfnDown,
            _ => return Err(format!("'{s}' is not one of {}", ROLES.join(", "))),
        })
    }
}

/// A layer's role and, for an attention layer, the heads its dimension holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LayerRole {
    pub role: Role,
    /// Heads of the layer (attention roles only): for q, qkv and attn_out the query heads
    /// H, for k and v the key/value heads H_kv.
    pub heads: Option<usize>,
}

/// One attention block: its layers (indices into the network) and head counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The q/k/v/qkv layers and the closing attn_out, in network order.
    pub layers: Vec<usize>,
    /// Query heads H.
    pub heads: usize,
    /// Key/value heads H_kv (H for multi-head attention).
    pub kv_heads: usize,
}

/// Which output columns and input rows of a layer are zero whatever its structure (the
/// pruned heads'); empty vectors zero nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZeroLines {
    /// Per output column (`out_channels`): true if zero.
    pub columns: Vec<bool>,
    /// Per row k of a group's K rows: true if zero (for every column).
    pub rows: Vec<bool>,
}

impl ZeroLines {
    pub fn is_empty(&self) -> bool {
        !self.columns.iter().chain(&self.rows).any(|&z| z)
    }

    /// Whether weight (column `o`, row `k`) is zeroed.
    #[inline]
    pub fn zeroes(&self, o: usize, k: usize) -> bool {
        self.columns.get(o).copied().unwrap_or(false) || self.rows.get(k).copied().unwrap_or(false)
    }
}

/// The attention blocks of `layers` annotated by `roles` (one entry per layer), checked:
/// every attention layer is fc and has `heads`; each block has one q, k and v (or one
/// qkv) before its attn_out; the widths agree. Errors are `layers[I].FIELD: problem`.
pub fn blocks(layers: &[LayerSpec], roles: &[Option<LayerRole>]) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (i, r) in roles.iter().enumerate() {
        let Some(r) = r else { continue };
        let l = &layers[i];
        if l.kind != LayerKind::Fc {
            return Err(format!("layers[{i}].role: only fc layers have a role"));
        }
        match (r.role.is_attention(), r.heads) {
            (true, None) => {
                return Err(format!(
                    "layers[{i}].heads: absent; a {} layer needs its number of heads",
                    r.role
                ))
            }
            (false, Some(_)) => {
                return Err(format!(
                    "layers[{i}].heads: only attention layers (q, k, v, qkv, attn_out) have heads"
                ))
            }
            _ => {}
        }
        match r.role {
            Role::Q | Role::K | Role::V | Role::Qkv => open.push(i),
            Role::AttnOut => {
                out.push(block(layers, roles, std::mem::take(&mut open), i)?);
            }
            _ => {}
        }
    }
    if let Some(&i) = open.first() {
        return Err(format!(
            "layers[{i}].role: {} starts an attention block that no attn_out layer closes",
            roles[i].map(|r| r.role.as_str()).unwrap_or("")
        ));
    }
    Ok(out)
}

fn block(
    layers: &[LayerSpec],
    roles: &[Option<LayerRole>],
    open: Vec<usize>,
    o: usize,
) -> Result<Block, String> {
    let role = |i: usize| roles[i].map(|r| r.role);
    let heads = |i: usize| roles[i].and_then(|r| r.heads).unwrap_or(0);
    let find = |want: Role| -> Result<Option<usize>, String> {
        let mut it = open.iter().copied().filter(|&i| role(i) == Some(want));
        let first = it.next();
        if let Some(again) = it.next() {
            return Err(format!(
                "layers[{again}].role: a second {want} layer in the attention block closed by layers[{o}]"
            ));
        }
        Ok(first)
    };
    let h = heads(o);
    let width = layers[o].geom.in_channels;
    if !width.is_multiple_of(h) {
        return Err(format!(
            "layers[{o}].heads: {h} does not divide in_features {width}"
        ));
    }
    let dh = width / h;
    let (qkv, q, k, v) = (
        find(Role::Qkv)?,
        find(Role::Q)?,
        find(Role::K)?,
        find(Role::V)?,
    );
    let mut kv_heads = h;
    match (qkv, q, k, v) {
        (Some(p), None, None, None) => {
            if heads(p) != h {
                return Err(format!(
                    "layers[{p}].heads: {} differs from the attn_out layers[{o}]'s {h}",
                    heads(p)
                ));
            }
            if layers[p].geom.out_channels != 3 * width {
                return Err(format!(
                    "layers[{p}].out_features: {} is not 3 x the attn_out layers[{o}]'s in_features {width}",
                    layers[p].geom.out_channels
                ));
            }
        }
        (None, Some(q), Some(k), Some(v)) => {
            if heads(q) != h {
                return Err(format!(
                    "layers[{q}].heads: {} differs from the attn_out layers[{o}]'s {h}",
                    heads(q)
                ));
            }
            if layers[q].geom.out_channels != width {
                return Err(format!(
                    "layers[{q}].out_features: {} differs from the attn_out layers[{o}]'s in_features {width}",
                    layers[q].geom.out_channels
                ));
            }
            kv_heads = heads(k);
            for i in [k, v] {
                let hk = heads(i);
                if hk != kv_heads || h % hk != 0 {
                    return Err(format!(
                        "layers[{i}].heads: {hk} must divide the query heads {h} and be the same for k and v"
                    ));
                }
                if layers[i].geom.out_channels != hk * dh {
                    return Err(format!(
                        "layers[{i}].out_features: {} is not its heads {hk} x the head width {dh}",
                        layers[i].geom.out_channels
                    ));
                }
            }
        }
        _ => {
            return Err(format!(
                "layers[{o}].role: the attention block closed here needs one q, one k and one v layer, or one qkv layer, before it"
            ))
        }
    }
    let mut all = open;
    all.push(o);
    Ok(Block {
        layers: all,
        heads: h,
        kv_heads,
    })
}

/// Which query heads of `block` are pruned: round(fraction x H) of them, drawn from the
/// heads stream of the block's first layer (tag 4).
pub fn pruned_heads(block: &Block, fraction: f64, seed: u64) -> Vec<bool> {
    let h = block.heads;
    let count = ((fraction * h as f64).round() as usize).min(h);
    let mut rng = tensor_rng(seed, block.layers[0], Tensor::Heads, 0);
    let mut pruned = vec![false; h];
    for i in index::sample(&mut rng, h, count) {
        pruned[i] = true;
    }
    pruned
}

/// The zero lines of layer `index` of `block` given its pruned query heads.
pub fn zero_lines(
    layers: &[LayerSpec],
    roles: &[Option<LayerRole>],
    block: &Block,
    pruned: &[bool],
    index: usize,
) -> ZeroLines {
    let g = &layers[index].geom;
    let (h, hkv) = (block.heads, block.kv_heads);
    let per_group = h / hkv;
    // A key/value head goes when every query head it serves goes.
    let kv_pruned: Vec<bool> = (0..hkv)
        .map(|j| {
            pruned[j * per_group..(j + 1) * per_group]
                .iter()
                .all(|&p| p)
        })
        .collect();
    let by_head = |n: usize, of: &[bool]| -> Vec<bool> {
        let dh = n / of.len();
        (0..n).map(|c| of[c / dh]).collect()
    };
    match roles[index].map(|r| r.role) {
        Some(Role::Q) => ZeroLines {
            columns: by_head(g.out_channels, pruned),
            rows: Vec::new(),
        },
        Some(Role::K) | Some(Role::V) => ZeroLines {
            columns: by_head(g.out_channels, &kv_pruned),
            rows: Vec::new(),
        },
        Some(Role::Qkv) => {
            let third = by_head(g.out_channels / 3, pruned);
            ZeroLines {
                columns: third.iter().chain(&third).chain(&third).copied().collect(),
                rows: Vec::new(),
            }
        }
        Some(Role::AttnOut) => ZeroLines {
            columns: Vec::new(),
            rows: by_head(g.k_rows(), pruned),
        },
        _ => ZeroLines::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::Precision;
    use crate::shapes;
    use crate::source::Workload;
    use crate::synth::{InputKind, SynthParams, ZooWorkload};

    /// A transformer encoder layer by shape: width 64, 8 heads, K/V with `kv` heads
    /// (grouped-query attention when kv < 8), a ReLU feed-forward 64 -> 256 -> 64, over
    /// 10 tokens.
    fn encoder(kv: usize) -> String {
        let fc = |name: &str, i: usize, o: usize, role: &str, heads: Option<usize>| {
            let h = heads.map(|h| format!("heads = {h}\n")).unwrap_or_default();
            format!("[[layers]]\nname = \"{name}\"\nkind = \"fc\"\nin_features = {i}\nout_features = {o}\ntokens = 10\nrole = \"{role}\"\n{h}")
        };
        [
            fc("q", 64, 64, "q", Some(8)),
            fc("k", 64, 8 * kv, "k", Some(kv)),
            fc("v", 64, 8 * kv, "v", Some(kv)),
            fc("o", 64, 64, "attn_out", Some(8)),
            fc("up", 64, 256, "ffn_up", None),
            fc("down", 256, 64, "ffn_down", None),
        ]
        .concat()
    }

    fn open(text: &str, p: SynthParams) -> anyhow::Result<ZooWorkload> {
        let f = shapes::parse(text, "t").map_err(anyhow::Error::msg)?;
        ZooWorkload::from_layers(&f.name, f.layers, p)?.with_roles(f.roles)
    }

    fn weights(w: &ZooWorkload, i: usize) -> Vec<i32> {
        w.load_weights(i, Precision::default()).unwrap().weights
    }

    /// Whether column `o` (all rows) of layer weights `q` [out, k] is zero.
    fn column_zero(q: &[i32], k: usize, o: usize) -> bool {
        q[o * k..(o + 1) * k].iter().all(|&v| v == 0)
    }

    fn row_zero(q: &[i32], k: usize, r: usize) -> bool {
        (0..q.len() / k).all(|o| q[o * k + r] == 0)
    }

    #[test]
    fn pruned_heads_are_zero_in_q_k_v_columns_and_o_rows() {
        for (kv, structure) in [
            (8, crate::Structure::Unstructured),
            (8, crate::Structure::NM { n: 2, m: 4 }),
            (2, crate::Structure::Magnitude),
        ] {
            let p = SynthParams {
                head_sparsity: 0.5,
                weight_sparsity: 0.3,
                structure,
                seed: 3,
                ..Default::default()
            };
            let w = open(&encoder(kv), p).unwrap();
            let b = &blocks(w.layers(), w.roles()).unwrap()[0];
            assert_eq!(
                (b.heads, b.kv_heads, b.layers.clone()),
                (8, kv, vec![0, 1, 2, 3])
            );
            let pruned = pruned_heads(b, 0.5, 3);
            assert_eq!(pruned.iter().filter(|&&p| p).count(), 4);
            let (q, k, v, o) = (
                weights(&w, 0),
                weights(&w, 1),
                weights(&w, 2),
                weights(&w, 3),
            );
            for (h, &gone) in pruned.iter().enumerate() {
                let cols = h * 8..(h + 1) * 8;
                assert_eq!(
                    cols.clone().all(|c| column_zero(&q, 64, c)),
                    gone,
                    "q head {h}"
                );
                assert_eq!(
                    cols.clone().all(|c| row_zero(&o, 64, c)),
                    gone,
                    "o head {h}"
                );
                // Any surviving head keeps weights in every one of its columns.
                if !gone {
                    assert!(cols.clone().all(|c| !column_zero(&q, 64, c)));
                }
            }
            let per = 8 / kv;
            for g in 0..kv {
                let gone = pruned[g * per..(g + 1) * per].iter().all(|&p| p);
                for t in [&k, &v] {
                    assert_eq!(
                        (g * 8..(g + 1) * 8).all(|c| column_zero(t, 64, c)),
                        gone,
                        "kv head {g}"
                    );
                }
            }
            // The feed-forward is not an attention layer: no whole zero column.
            let up = weights(&w, 4);
            assert!((0..256).all(|c| !column_zero(&up, 64, c)));
        }
    }

    #[test]
    fn a_packed_qkv_prunes_the_head_in_each_third() {
        let text = "[[layers]]\nname = \"qkv\"\nkind = \"fc\"\nin_features = 32\nout_features = 96\nrole = \"qkv\"\nheads = 4\n\
                    [[layers]]\nname = \"o\"\nkind = \"fc\"\nin_features = 32\nout_features = 32\nrole = \"attn_out\"\nheads = 4\n";
        let p = SynthParams {
            head_sparsity: 0.25,
            weight_sparsity: 0.0,
            ..Default::default()
        };
        let w = open(text, p).unwrap();
        let b = &blocks(w.layers(), w.roles()).unwrap()[0];
        let pruned = pruned_heads(b, 0.25, p.seed);
        let h = pruned.iter().position(|&x| x).unwrap();
        assert_eq!(pruned.iter().filter(|&&x| x).count(), 1);
        let qkv = weights(&w, 0);
        for c in 0..96 {
            assert_eq!(column_zero(&qkv, 32, c), (c % 32) / 8 == h, "column {c}");
        }
        let o = weights(&w, 1);
        for r in 0..32 {
            assert_eq!(row_zero(&o, 32, r), r / 8 == h, "row {r}");
        }
    }

    #[test]
    fn inputs_follow_the_role() {
        let p = SynthParams {
            act_sparsity: 0.9,
            ..Default::default()
        };
        let w = open(&encoder(8), p).unwrap().with_samples(4);
        assert_eq!(w.input_kind(0), InputKind::Dense);
        assert_eq!(w.input_kind(3), InputKind::Dense);
        assert_eq!(w.input_kind(5), InputKind::PostRelu);
        let pr = Precision::default();
        // q reads a LayerNorm's output: signed, no zeros.
        let q = w.load_layer(0, pr, 4).unwrap();
        assert!(q.signed && q.input.iter().filter(|&&v| v == 0).count() < 5);
        // The FFN down-projection reads the ReLU's output: 90% zeros (4 x 10 x 256
        // = 10,240 values: sigma 0.003).
        let d = w.load_layer(5, pr, 4).unwrap();
        let z = d.input.iter().filter(|&&v| v == 0).count() as f64 / d.input.len() as f64;
        assert!(!d.signed && (z - 0.9).abs() < 0.015, "{z}");
        // Without roles every layer after the first is post-ReLU, as before.
        let plain = encoder(8)
            .lines()
            .filter(|l| !l.starts_with("role") && !l.starts_with("heads"))
            .collect::<Vec<_>>()
            .join("\n");
        let w = open(&plain, p).unwrap();
        assert_eq!(w.input_kind(0), InputKind::Image);
        assert_eq!(w.input_kind(1), InputKind::PostRelu);
    }

    #[test]
    fn bad_annotations_are_one_line_naming_the_key() {
        let e = |t: &str| shapes::parse(t, "s").unwrap_err();
        let enc = encoder(8);
        assert_eq!(
            e(&enc.replacen("role = \"q\"", "role = \"query\"", 1)),
            "layers[0].role: 'query' is not one of q, k, v, qkv, attn_out, ffn_up, ffn_gate, ffn_down"
        );
        assert_eq!(
            e(&enc.replacen("heads = 8\n", "", 1)),
            "layers[0].heads: absent; a q layer needs its number of heads"
        );
        assert_eq!(
            e(&enc.replacen("heads = 8", "heads = 0", 1)),
            "layers[0].heads: expected a positive integer"
        );
        assert_eq!(
            e(&enc.replace("heads = 8", "heads = 3")),
            "layers[3].heads: 3 does not divide in_features 64"
        );
        assert_eq!(
            e(&enc.replacen("role = \"k\"", "role = \"q\"", 1)),
            "layers[1].role: a second q layer in the attention block closed by layers[3]"
        );
        assert!(e(&enc.replace("role = \"attn_out\"", "role = \"ffn_up\""))
            .starts_with("layers[3].heads: only attention layers"));
        let no_close = enc.replace("role = \"attn_out\"\nheads = 8\n", "");
        assert_eq!(
            e(&no_close),
            "layers[0].role: q starts an attention block that no attn_out layer closes"
        );
        assert_eq!(
            e(&enc.replace("role = \"ffn_down\"", "role = \"ffn_down\"\nheads = 2")),
            "layers[5].heads: only attention layers (q, k, v, qkv, attn_out) have heads"
        );
        // --head-sparsity on a network without attention blocks is refused, not ignored.
        let p = SynthParams {
            head_sparsity: 0.5,
            ..Default::default()
        };
        assert_eq!(
            ZooWorkload::new("lenet5", p).unwrap_err().to_string(),
            "--head-sparsity: lenet5 has no attention block (fc layers annotated with `role` and `heads` in a shape file, docs/workloads.md)"
        );
        assert!(SynthParams {
            head_sparsity: 1.5,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("--head-sparsity: 1.5"));
    }
}
