//! Built-in networks to replay: the crossbar-mapped layers (conv and fc) of the network
//! zoo's graphs (`network::zoo`), in execution order.
//!
//! Pooling, normalization, residual additions and activations are not mapped on crossbars;
//! they only show up as the input size of the next listed layer. Layer names follow the
//! framework each network comes from (Caffe: `conv1`, `ip1`, `fc6`; torchvision:
//! `layer1.0.conv1`, `features.1.conv.0.0`). docs/workloads.md has the table.

use std::sync::OnceLock;

use crate::geometry::LayerSpec;
use crate::synth::{LayerRole, Role};

/// Networks of the zoo that `sresim run` cannot replay, with the reason (`sresim memory`
/// models their whole graph). Every other network of the zoo runs.
pub const NOT_REPLAYED: [(&str, &str); 1] = [(
    "gnmt",
    "its LSTM cells are recurrent gate products, not conv or fc layers (`sresim memory --workload gnmt` models it)",
)];

/// Why the zoo network `name` cannot be replayed by `sresim run`, if it cannot.
pub fn not_replayed(name: &str) -> Option<&'static str> {
    NOT_REPLAYED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, why)| why)
}

/// The built-in network names `sresim run` replays, in the order `sresim workloads`
/// lists them (the zoo's order, then its transformers).
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        network::zoo::all_names()
            .filter(|n| not_replayed(n).is_none())
            .collect()
    })
}

/// What `run` replays of a built-in network: its crossbar layers (geometry per sample),
/// each layer's transformer role, and the ops no crossbar computes.
#[derive(Debug, Clone, PartialEq)]
pub struct ZooNetwork {
    pub layers: Vec<LayerSpec>,
    /// Per layer: its role and heads (a transformer's projections), as a shape file's
    /// `role` and `heads` give them.
    pub roles: Vec<Option<LayerRole>>,
    /// The products of two activations (attention's Q.K^T and P.V), as (node,
    /// multiply-accumulates a sample), in execution order.
    pub off_crossbar: Vec<(String, u64)>,
}

/// The built-in network `name` (batch 1), or None for a name not in [`names`].
pub fn network(name: &str) -> Option<ZooNetwork> {
    if !names().contains(&name) {
        return None;
    }
    let (graph, annots) =
        network::zoo::build_annotated(name, 1, network::zoo::ZooOptions::default())?;
    let layers = graph.crossbar_layers();
    let mut roles = vec![None; layers.len()];
    for a in annots {
        let i = layers.iter().position(|l| l.name == a.layer)?;
        let role = a.role.parse::<Role>().ok()?;
        roles[i] = Some(LayerRole {
            role,
            heads: a.heads,
        });
    }
    Some(ZooNetwork {
        layers,
        roles,
        off_crossbar: crate::source::off_crossbar_ops(&graph),
    })
}

/// The crossbar layers of a built-in network (geometry per sample), or None for a name
/// not in [`names`].
pub fn layers(name: &str) -> Option<Vec<LayerSpec>> {
    network(name).map(|n| n.layers)
}

/// The built-in transformers (`network::zoo::TRANSFORMERS`), each also described by a
/// shape file of the repository: `workloads/transformers/` (`bert-base-128.toml` for `bert-base-128`).
pub const TRANSFORMER_SHAPES: &str = "workloads/transformers";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::ConvGeometry;

    fn net(name: &str) -> Vec<LayerSpec> {
        layers(name).unwrap()
    }

    fn find<'a>(l: &'a [LayerSpec], name: &str) -> &'a LayerSpec {
        l.iter().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn every_network_is_valid_and_names_are_unique() {
        for &n in names() {
            let l = layers(n).unwrap();
            let mut seen = std::collections::HashSet::new();
            for s in &l {
                assert!(s.geom.validate().is_ok(), "{n} {}", s.name);
                assert!(seen.insert(s.name.clone()), "{n}: duplicate {}", s.name);
            }
        }
        assert!(layers("nope").is_none());
    }

    #[test]
    fn layer_counts() {
        let count = |n| layers(n).unwrap().len();
        assert_eq!(count("lenet5"), 4);
        assert_eq!(count("cifar10"), 4);
        assert_eq!(count("caffenet"), 8);
        assert_eq!(count("vgg16"), 16); // 13 conv + 3 fc
        assert_eq!(count("resnet18"), 21); // 1 + 8 blocks * 2 + 3 downsample + fc
        assert_eq!(count("resnet20"), 22); // 1 + 9 blocks * 2 + 2 shortcut + fc
        assert_eq!(count("mobilenetv2"), 53); // 1 + 2 + 16 * 3 + 1 + fc
        assert_eq!(count("deepid"), 6);
        assert_eq!(count("overfeat-fast"), 8);
        assert_eq!(count("pp_sim-lenet"), 6);
        assert_eq!(count("pp_sim-cifar10"), 5);
        assert_eq!(count("pp_sim-caffenet"), 8);
    }

    /// PP_sim's two other networks, weights counted by hand from their ModelConfig.py
    /// geometry (no biases), and MACs per sample.
    #[test]
    fn pp_sim_networks_by_hand() {
        let sum = |n, f: fn(&ConvGeometry) -> usize| -> usize {
            layers(n).unwrap().iter().map(|s| f(&s.geom)).sum()
        };
        // 20*16 + 40*20*9 + 60*40*9 + 80*60*4 + 160*160 + 100*160
        assert_eq!(sum("deepid", ConvGeometry::weight_elements), 89_920);
        // 320*36*28 + 7200*16*12 + 21600*6*4 + 19200*2*1 + 25600 + 16000
        assert_eq!(sum("deepid", ConvGeometry::macs_per_sample), 2_303_360);
        let d = net("deepid");
        assert_eq!(d[3].geom.output_hw(), [2, 1]);
        // 96*3*121 + 256*96*25 + 512*256*9 + 1024*512*9 + 1024*1024*9 + 3072*25600
        // + 4096*3072 + 1000*4096
        assert_eq!(
            sum("overfeat-fast", ConvGeometry::weight_elements),
            111_306_784
        );
        assert_eq!(
            sum("overfeat-fast", ConvGeometry::macs_per_sample),
            2_346_166_048
        );
        let o = net("overfeat-fast");
        assert_eq!(o[0].geom.output_hw(), [53, 53]);
        assert_eq!(o[1].geom.output_hw(), [22, 22]);
        assert_eq!(o[4].geom.output_hw(), [11, 11]);
        assert_eq!(o[5].geom.in_channels, 25_600);
    }

    /// PP_sim's LeNet, Cifar10 and Caffenet: weights and MACs per sample by hand from
    /// their ModelConfig.py geometry, and the floor pooling that sets the fc inputs.
    #[test]
    fn pp_sim_lenet_cifar10_caffenet_by_hand() {
        let sum = |n, f: fn(&ConvGeometry) -> usize| -> usize {
            layers(n).unwrap().iter().map(|s| f(&s.geom)).sum()
        };
        // 150*28*28 + 2400*10*10 + 48000*1 + 14400 + 10080 + 840
        assert_eq!(sum("pp_sim-lenet", ConvGeometry::macs_per_sample), 430_920);
        let l = net("pp_sim-lenet");
        assert_eq!(l[1].geom.input_hw, [14, 14]);
        assert_eq!(l[2].geom.output_hw(), [1, 1]);
        assert_eq!(l[3].geom.in_channels, 120);
        // 2400*784 + 25600*100 + 51200*25 + 16384 + 640
        assert_eq!(
            sum("pp_sim-cifar10", ConvGeometry::macs_per_sample),
            5_738_624
        );
        let c = net("pp_sim-cifar10");
        assert_eq!(c[2].geom.output_hw(), [5, 5]); // SAME
        assert_eq!(c[3].geom.in_channels, 64 * 2 * 2); // floor(5 / 2) = 2
                                                       // 34848*3025 + 614400*729 + (884736 + 1327104 + 884736)*169 + 58621952
        assert_eq!(
            sum("pp_sim-caffenet", ConvGeometry::macs_per_sample),
            1_135_256_096
        );
        let a = net("pp_sim-caffenet");
        assert_eq!(a[0].geom.output_hw(), [55, 55]);
        assert_eq!(a[1].geom.input_hw, [27, 27]);
        assert_eq!(a[2].geom.input_hw, [13, 13]);
        assert!(a.iter().all(|s| s.geom.groups == 1));
        assert_eq!(a[5].geom.in_channels, 256 * 6 * 6);
    }

    #[test]
    fn pooled_sizes() {
        let c = net("cifar10");
        assert_eq!(c[1].geom.input_hw, [16, 16]);
        assert_eq!(c[2].geom.input_hw, [8, 8]);
        assert_eq!(c[3].geom.in_channels, 64 * 4 * 4);
        let a = net("caffenet");
        assert_eq!(a[0].geom.output_hw(), [55, 55]);
        assert_eq!(a[1].geom.input_hw, [27, 27]);
        assert_eq!(
            (a[1].geom.groups, a[3].geom.groups, a[4].geom.groups),
            (2, 2, 2)
        );
        assert_eq!(a[5].geom.in_channels, 9216);
        assert_eq!(find(&net("vgg16"), "fc6").geom.in_channels, 25088);
        assert_eq!(net("lenet5")[2].geom.in_channels, 800);
    }

    #[test]
    fn resnet_downsamples() {
        let r = net("resnet18");
        let d = find(&r, "layer2.0.downsample.0");
        assert_eq!(
            (d.geom.kernel, d.geom.stride, d.geom.input_hw),
            ([1, 1], [2, 2], [56, 56])
        );
        assert_eq!(d.geom.output_hw(), [28, 28]);
        assert_eq!(find(&r, "layer4.1.conv2").geom.output_hw(), [7, 7]);
        assert!(r.iter().all(|s| !s.name.starts_with("layer1.0.down")));
        let c = net("resnet20");
        let s = find(&c, "layer3.0.shortcut.0");
        assert_eq!((s.geom.in_channels, s.geom.out_channels), (32, 64));
        assert_eq!(s.geom.output_hw(), [8, 8]);
    }

    #[test]
    fn mobilenet_depthwise() {
        let m = net("mobilenetv2");
        let dw = find(&m, "features.1.conv.0.0");
        assert_eq!(
            (dw.geom.groups, dw.geom.in_channels, dw.geom.k_rows()),
            (32, 32, 9)
        );
        let dw = find(&m, "features.14.conv.1.0"); // 160-channel stage, stride 2: 14 -> 7
        assert_eq!(
            (dw.geom.groups, dw.geom.input_hw, dw.geom.output_hw()),
            (576, [14, 14], [7, 7])
        );
        assert_eq!(find(&m, "features.18.0").geom.input_hw, [7, 7]);
        assert_eq!(m.last().unwrap().geom.in_channels, 1280);
    }

    /// A shape file of the network: its layers, roles and what each attention block
    /// attends to (rendered from the built-in, so that the committed file is checked to
    /// be the built-in by the shape-file parser, a path of its own).
    fn render_toml(name: &str) -> String {
        use std::fmt::Write;
        let net = network(name).unwrap();
        let mut s = format!(
            "# {name} by its layer shapes alone: the crossbar layers of the built-in network\n\
             # `{name}`, with each projection's role and heads, and what each attention block\n\
             # attends to (kv_len: a decode step's cached keys and its own; window: Swin's 7 x 7\n\
             # windows). docs/workloads.md, \"Transformers\". Rendered from the built-in by\n\
             # UPDATE_EXPECT=1 cargo test -p workload --lib zoo::tests::transformer_shape_files\n\
             name = \"{name}\"\nsource = \"the built-in network {name} (docs/workloads.md)\"\n"
        );
        let mut products = net.off_crossbar.iter();
        for (l, r) in net.layers.iter().zip(&net.roles) {
            let g = &l.geom;
            let _ = write!(
                s,
                "\n[[layers]]\nname = \"{}\"\nkind = \"{}\"\n",
                l.name,
                l.kind.as_str()
            );
            if l.kind == crate::geometry::LayerKind::Conv {
                let _ = writeln!(
                    s,
                    "in_channels = {}\nout_channels = {}\nkernel = {}\nstride = {}\ninput_shape = [{}, {}, {}]",
                    g.in_channels, g.out_channels, g.kernel[0], g.stride[0], g.in_channels, g.input_hw[0], g.input_hw[1]
                );
                continue;
            }
            let _ = writeln!(
                s,
                "in_features = {}\nout_features = {}",
                g.in_channels, g.out_channels
            );
            let t = g.vectors_per_sample();
            if t > 1 {
                let _ = writeln!(s, "tokens = {t}");
            }
            let Some(r) = r else { continue };
            let _ = writeln!(s, "role = \"{}\"", r.role);
            if let Some(h) = r.heads {
                let _ = writeln!(s, "heads = {h}");
            }
            if r.role == Role::AttnOut {
                let (_, macs) = products.next().unwrap();
                products.next();
                let keys = *macs as usize / (t * g.in_channels);
                if keys < t {
                    let _ = writeln!(s, "window = {keys}");
                } else if keys > t {
                    let _ = writeln!(s, "kv_len = {keys}");
                }
            }
        }
        s
    }

    #[test]
    fn transformer_shape_files_are_the_built_in_networks() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for name in network::zoo::TRANSFORMERS {
            let path = root.join(TRANSFORMER_SHAPES).join(format!("{name}.toml"));
            if std::env::var_os("UPDATE_EXPECT").is_some() {
                std::fs::write(&path, render_toml(name)).unwrap();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let file = crate::shapes::parse(&text, "x").unwrap();
            let net = network(name).unwrap();
            assert_eq!(file.name, *name);
            assert_eq!(file.layers, net.layers, "{name}");
            assert_eq!(file.roles, net.roles, "{name}");
            let macs = |v: &[(String, u64)]| v.iter().map(|(_, m)| *m).collect::<Vec<u64>>();
            assert_eq!(macs(&file.off_crossbar), macs(&net.off_crossbar), "{name}");
            assert!(!net.off_crossbar.is_empty());
        }
    }

    #[test]
    fn built_in_transformers_run_with_their_roles() {
        let w = crate::ZooWorkload::new("bert-base-512", crate::SynthParams::default()).unwrap();
        assert_eq!(w.layers().len(), 12 * 6 + 1);
        assert_eq!(w.layers()[0].geom.vectors_per_sample(), 512);
        let blocks = crate::synth::roles::blocks(w.layers(), w.roles()).unwrap();
        assert_eq!(blocks.len(), 12);
        use crate::source::Workload;
        let off: u64 = w.off_crossbar().iter().map(|(_, m)| m).sum();
        assert_eq!(off, 12 * 2 * 512 * 512 * 768);
        // Llama's grouped-query blocks: 32 query heads, 8 key/value heads.
        let l = network("llama3-8b-decode").unwrap();
        let b = crate::synth::roles::blocks(&l.layers, &l.roles).unwrap();
        assert_eq!((b.len(), b[0].heads, b[0].kv_heads), (32, 32, 8));
        // --head-sparsity prunes a built-in transformer's heads (no shape file needed).
        let p = crate::SynthParams {
            head_sparsity: 0.5,
            ..Default::default()
        };
        assert!(crate::ZooWorkload::new("gpt2-decode", p).is_ok());
        assert!(not_replayed("bert").is_none() && names().contains(&"bert"));
    }
}
