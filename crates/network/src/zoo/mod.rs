//! Networks with every layer explicit (norms, activations, pooling, adds, concats,
//! recurrent and attention pieces), named as their PyTorch modules are where they have one.

mod bert;
mod gnmt;
mod mobilenetv2;
mod resnet;
mod vgg;
mod yolov4_tiny;

use crate::graph::Graph;

/// Knobs of the sequence models; `None` takes the network's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZooOptions {
    /// Tokens per sequence (BERT, default 128) or time steps (GNMT, default 32).
    pub seq_len: Option<usize>,
}

/// Names `build` accepts.
pub const NAMES: &[&str] = &[
    "resnet18",
    "resnet50",
    "vgg16",
    "mobilenetv2",
    "bert",
    "gnmt",
    "yolov4-tiny",
];

/// The graph of network `name` for a batch; `None` for an unknown name or a zero size.
pub fn build(name: &str, batch: usize, opts: ZooOptions) -> Option<Graph> {
    if batch == 0 || opts.seq_len == Some(0) {
        return None;
    }
    Some(match name {
        "resnet18" => resnet::resnet18(batch),
        "resnet50" => resnet::resnet50(batch),
        "vgg16" => vgg::vgg16(batch),
        "mobilenetv2" => mobilenetv2::mobilenetv2(batch),
        "bert" => bert::bert_base(batch, opts.seq_len.unwrap_or(128)),
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

    #[test]
    fn parameter_counts_match_the_published_models() {
        // torchvision counts, without BN running statistics (they are not trained):
        // resnet50 25,557,032; resnet18 11,689,512; vgg16 138,357,544; mobilenet_v2 3,504,872.
        assert_eq!(params("resnet50"), 25_557_032);
        assert_eq!(params("resnet18"), 11_689_512);
        assert_eq!(params("vgg16"), 138_357_544);
        assert_eq!(params("mobilenetv2"), 3_504_872);
        // yolov4-tiny (80 classes), summed from the cfg: conv weights 6,049,888 (e.g. layer 26
        // 512*512*9 = 2,359,296), two head biases 2*255 = 510, BN scale+shift 2*3104 = 6,208.
        assert_eq!(params("yolov4-tiny"), 6_049_888 + 510 + 6_208);
    }

    #[test]
    fn every_network_builds_and_has_explicit_non_matrix_layers() {
        for name in NAMES {
            let g = build(name, 2, ZooOptions::default()).unwrap();
            assert!(g.validate().is_ok(), "{name}");
            let non_matrix = g.nodes.iter().filter(|n| !n.op.is_matrix()).count();
            assert!(non_matrix > 0, "{name} has only matrix layers");
        }
        assert!(build("alexnet", 1, ZooOptions::default()).is_none());
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
