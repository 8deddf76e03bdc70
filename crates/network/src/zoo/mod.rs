//! The built-in networks, one graph each with every layer explicit (norms, activations,
//! pooling, adds, concats, recurrent and attention pieces), named as their framework's
//! modules or layers are. Their crossbar layers ([`Graph::crossbar_layers`]) are what the
//! engines replay; the memory model costs the whole graph.

mod bert;
mod caffe;
mod chain;
mod gnmt;
mod mobilenetv2;
mod pp_sim;
mod resnet;
mod transformer;
mod vgg;
mod yolov4_tiny;

use crate::builder::LayerAnnot;
use crate::graph::Graph;
pub use transformer::Phase;

/// Knobs of the sequence models; `None` takes the network's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZooOptions {
    /// Tokens per sequence (BERT, default 128) or time steps (GNMT, default 32).
    pub seq_len: Option<usize>,
}

/// Names `build` accepts.
pub const NAMES: &[&str] = &[
    "lenet5",
    "cifar10",
    "caffenet",
    "vgg16",
    "resnet18",
    "resnet20",
    "resnet50",
    "mobilenetv2",
    "deepid",
    "overfeat-fast",
    "pp_sim-lenet",
    "pp_sim-cifar10",
    "pp_sim-caffenet",
    "bert",
    "gnmt",
    "yolov4-tiny",
];

/// The full-size transformers, beside [`NAMES`] (the networks the memory model's tests
/// sweep): BERT-base at 128 and 512 tokens, ViT-B/16, Swin-T, and GPT-2 small and
/// Llama-3-8B in their two phases (prefill of 128 tokens; decode of one token against a
/// K/V cache of 1024). `build` takes them as it takes [`NAMES`]; their `seq_len` is fixed
/// by the name.
pub const TRANSFORMERS: &[&str] = &[
    "bert-base-128",
    "bert-base-512",
    "vit-b16",
    "swin-t",
    "gpt2-prefill",
    "gpt2-decode",
    "llama3-8b-prefill",
    "llama3-8b-decode",
];

/// Tokens of a decoder's prefill.
pub const PREFILL_TOKENS: usize = 128;
/// Cached keys and values a decoder's decode step reads.
pub const DECODE_CACHE: usize = 1024;

/// Every name `build` accepts: [`NAMES`] then [`TRANSFORMERS`].
pub fn all_names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().chain(TRANSFORMERS).copied()
}

/// The graph of network `name` for a batch; `None` for an unknown name or a zero size.
pub fn build(name: &str, batch: usize, opts: ZooOptions) -> Option<Graph> {
    build_annotated(name, batch, opts).map(|(g, _)| g)
}

/// [`build`], with the roles of a transformer's fc layers (empty for other networks).
pub fn build_annotated(
    name: &str,
    batch: usize,
    opts: ZooOptions,
) -> Option<(Graph, Vec<LayerAnnot>)> {
    if batch == 0 || opts.seq_len == Some(0) {
        return None;
    }
    let prefill = Phase::Prefill {
        tokens: PREFILL_TOKENS,
    };
    let decode = Phase::Decode { past: DECODE_CACHE };
    let plain = |g: Graph| (g, Vec::new());
    Some(match name {
        "bert" => bert::bert_base(name, batch, opts.seq_len.unwrap_or(128)),
        "bert-base-128" => bert::bert_base(name, batch, 128),
        "bert-base-512" => bert::bert_base(name, batch, 512),
        "vit-b16" => transformer::vit_b16(batch),
        "swin-t" => transformer::swin_t(batch),
        "gpt2-prefill" => transformer::gpt2(name, batch, prefill),
        "gpt2-decode" => transformer::gpt2(name, batch, decode),
        "llama3-8b-prefill" => transformer::llama3_8b(name, batch, prefill),
        "llama3-8b-decode" => transformer::llama3_8b(name, batch, decode),
        _ => plain(build_plain(name, batch, opts)?),
    })
}

fn build_plain(name: &str, batch: usize, opts: ZooOptions) -> Option<Graph> {
    Some(match name {
        "lenet5" => caffe::lenet5(batch),
        "cifar10" => caffe::cifar10(batch),
        "caffenet" => caffe::caffenet(batch),
        "resnet20" => resnet::resnet20(batch),
        "deepid" => pp_sim::deepid(batch),
        "overfeat-fast" => pp_sim::overfeat_fast(batch),
        "pp_sim-lenet" => pp_sim::lenet(batch),
        "pp_sim-cifar10" => pp_sim::cifar10(batch),
        "pp_sim-caffenet" => pp_sim::caffenet(batch),
        "resnet18" => resnet::resnet18(batch),
        "resnet50" => resnet::resnet50(batch),
        "vgg16" => vgg::vgg16(batch),
        "mobilenetv2" => mobilenetv2::mobilenetv2(batch),
        "gnmt" => gnmt::gnmt(batch, opts.seq_len.unwrap_or(32)),
        "yolov4-tiny" => yolov4_tiny::yolov4_tiny(batch),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Op;

    fn params(name: &str) -> u64 {
        build(name, 1, ZooOptions::default()).unwrap().parameters()
    }

    /// Weights of the crossbar layers only (conv and fc, no biases, no norms).
    fn crossbar_weights(name: &str) -> u64 {
        let g = build(name, 1, ZooOptions::default()).unwrap();
        let w = g
            .crossbar_layers()
            .iter()
            .map(|l| l.geom.weight_elements())
            .sum::<usize>();
        w as u64
    }

    // One parameter count per network. torchvision counts are without BN running
    // statistics (they are not trained); BN scale and shift are 2 per channel.

    #[test]
    fn lenet5_has_caffes_431_080_parameters() {
        // 500 + 25,000 + 400,000 + 5,000 weights and 20 + 50 + 500 + 10 biases.
        assert_eq!(params("lenet5"), 431_080);
        assert_eq!(crossbar_weights("lenet5"), 430_500);
    }

    #[test]
    fn cifar10_full_has_89_578_parameters() {
        // From the prototxt: 2,400 + 25,600 + 51,200 + 10,240 weights, 32 + 32 + 64 + 10 biases.
        assert_eq!(params("cifar10"), 89_578);
        assert_eq!(crossbar_weights("cifar10"), 89_440);
    }

    #[test]
    fn caffenet_has_60_965_224_parameters() {
        // Biases: 96 + 256 + 384 + 384 + 256 + 4096 + 4096 + 1000 = 10,568.
        assert_eq!(params("caffenet"), 60_965_224);
        assert_eq!(crossbar_weights("caffenet"), 60_965_224 - 10_568);
    }

    #[test]
    fn vgg16_has_torchvisions_138_357_544_parameters() {
        assert_eq!(params("vgg16"), 138_357_544);
        assert_eq!(crossbar_weights("vgg16"), 138_357_544 - 13_416); // 13,416 biases
    }

    #[test]
    fn resnet18_has_torchvisions_11_689_512_parameters() {
        assert_eq!(params("resnet18"), 11_689_512);
        // Minus 2 BN parameters per conv output channel (4,800 channels) and the fc bias.
        assert_eq!(crossbar_weights("resnet18"), 11_689_512 - 2 * 4_800 - 1_000);
    }

    #[test]
    fn resnet20_has_0_27_million_parameters() {
        // He et al. 2016 table 6 gives 0.27M (option A shortcuts, no parameters); the two
        // option-B projections add 32*16 + 64*32 weights and 2 * (32 + 64) BN parameters.
        let option_b = 32 * 16 + 64 * 32 + 2 * (32 + 64);
        assert_eq!(params("resnet20"), 272_474);
        assert_eq!((params("resnet20") - option_b) / 10_000, 26); // 269,722: 0.27M
    }

    #[test]
    fn resnet50_has_torchvisions_25_557_032_parameters() {
        assert_eq!(params("resnet50"), 25_557_032);
    }

    #[test]
    fn mobilenetv2_has_torchvisions_3_504_872_parameters() {
        assert_eq!(params("mobilenetv2"), 3_504_872);
        // Minus 2 BN parameters per conv output channel (17,056 channels) and the fc bias.
        assert_eq!(
            crossbar_weights("mobilenetv2"),
            3_504_872 - 2 * 17_056 - 1_000
        );
    }

    #[test]
    fn deepid_has_89_920_weights_as_pp_sim_counts_them() {
        // No biases: 20*16 + 40*20*9 + 60*40*9 + 80*60*4 + 160*160 + 100*160.
        assert_eq!(params("deepid"), 89_920);
    }

    #[test]
    fn overfeat_fast_has_111_306_784_weights_as_pp_sim_counts_them() {
        // 96*3*121 + 256*96*25 + 512*256*9 + 1024*512*9 + 1024*1024*9 + 3072*25600
        // + 4096*3072 + 1000*4096, no biases.
        assert_eq!(params("overfeat-fast"), 111_306_784);
    }

    #[test]
    fn pp_sim_lenet_has_75_870_weights_as_pp_sim_counts_them() {
        // 6*25 + 16*6*25 + 120*16*25 + 120*120 + 84*120 + 10*84, no biases.
        assert_eq!(params("pp_sim-lenet"), 75_870);
    }

    #[test]
    fn pp_sim_cifar10_has_96_224_weights_as_pp_sim_counts_them() {
        // 32*3*25 + 32*32*25 + 64*32*25 + 64*(64*2*2) + 10*64, no biases.
        assert_eq!(params("pp_sim-cifar10"), 96_224);
    }

    #[test]
    fn pp_sim_caffenet_has_62_367_776_weights_as_pp_sim_counts_them() {
        // 96*3*121 + 256*96*25 + 384*256*9 + 384*384*9 + 256*384*9 + 4096*9216
        // + 4096*4096 + 1000*4096: no groups, no biases.
        assert_eq!(params("pp_sim-caffenet"), 62_367_776);
    }

    #[test]
    fn bert_base_has_108_891_650_parameters() {
        // BERT-base's 109,482,240 without the token-type embedding (1,536) and the pooler
        // (590,592), with a 2-label token-classification head (1,538).
        assert_eq!(params("bert"), 108_891_650);
    }

    #[test]
    fn gnmt_has_178_060_544_parameters() {
        // 8 LSTM layers of 1024 units, two 32000-word embeddings and the output projection.
        assert_eq!(params("gnmt"), 178_060_544);
    }

    #[test]
    fn yolov4_tiny_has_6_056_606_parameters() {
        // 80 classes, summed from the cfg: conv weights 6,049,888 (e.g. layer 26
        // 512*512*9 = 2,359,296), two head biases 2*255 = 510, BN scale+shift 2*3104 = 6,208.
        assert_eq!(params("yolov4-tiny"), 6_049_888 + 510 + 6_208);
    }

    #[test]
    fn every_network_builds_and_has_explicit_non_matrix_layers() {
        for name in all_names() {
            let g = build(name, 2, ZooOptions::default()).unwrap();
            assert!(g.validate().is_ok(), "{name}");
            let non_matrix = g.nodes.iter().filter(|n| !n.op.is_matrix()).count();
            assert!(non_matrix > 0, "{name} has only matrix layers");
        }
        assert!(build("alexnet", 1, ZooOptions::default()).is_none());
        for name in all_names() {
            let g = build(name, 1, ZooOptions::default()).unwrap();
            assert_eq!(g.name, name);
            assert!(!g.crossbar_layers().is_empty(), "{name}");
        }
        assert!(build("resnet50", 0, ZooOptions::default()).is_none());
    }

    #[test]
    fn resnet50_macs_are_4_1_giga_per_image() {
        let g = build("resnet50", 1, ZooOptions::default()).unwrap();
        let macs: f64 = (0..g.nodes.len()).map(|i| g.macs(i)).sum();
        // 4.09 GMAC for 224x224 (conv + fc).
        assert!((macs / 1e9 - 4.09).abs() < 0.02, "{macs}");
        let kinds: Vec<&str> = g.nodes.iter().map(|n| n.op.kind()).collect();
        for k in [
            "conv",
            "batchnorm",
            "relu",
            "maxpool",
            "add",
            "globalpool",
            "fc",
        ] {
            assert!(kinds.contains(&k), "{k}");
        }
        assert_eq!(kinds.iter().filter(|&&k| k == "add").count(), 16);
        assert!(matches!(g.nodes[0].op, Op::Conv(_)));
    }

    #[test]
    fn sequence_models_follow_seq_len() {
        let opts = ZooOptions { seq_len: Some(4) };
        let g = build("gnmt", 2, opts).unwrap();
        let cells = g.nodes.iter().filter(|n| n.op.kind() == "lstm").count();
        assert_eq!(cells, 8 * 4);
        let b = build("bert", 2, opts).unwrap();
        // 12 layers x (Q.K^T and P.V)
        assert_eq!(
            b.nodes.iter().filter(|n| n.op.kind() == "matmul").count(),
            24
        );
    }
}
