//! Built-in networks: the real geometry of their crossbar-mapped layers (conv and fc).
//!
//! Pooling, normalization, residual additions and activations are not mapped on crossbars;
//! they only show up as the input size of the next listed layer. Layer names follow the
//! framework each network comes from (Caffe: `conv1`, `ip1`, `fc6`; torchvision:
//! `layer1.0.conv1`, `features.1.conv.0.0`). docs/workloads.md has the table.

use crate::geometry::{ConvGeometry, LayerKind, LayerSpec};

/// The built-in network names, in the order `sresim workloads` lists them.
pub fn names() -> &'static [&'static str] {
    &[
        "lenet5",
        "cifar10",
        "caffenet",
        "vgg16",
        "resnet18",
        "resnet20",
        "mobilenetv2",
        "deepid",
        "overfeat-fast",
    ]
}

/// The layers of a built-in network, or None for an unknown name.
pub fn layers(name: &str) -> Option<Vec<LayerSpec>> {
    Some(match name {
        "lenet5" => lenet5(),
        "cifar10" => cifar10(),
        "caffenet" => caffenet(),
        "vgg16" => vgg16(),
        "resnet18" => resnet18(),
        "resnet20" => resnet20(),
        "mobilenetv2" => mobilenetv2(),
        "deepid" => deepid(),
        "overfeat-fast" => overfeat_fast(),
        _ => return None,
    })
}

/// Output size of a pooling window, floor mode (PyTorch default).
pub fn pool_floor(h: usize, kernel: usize, stride: usize, pad: usize) -> usize {
    (h + 2 * pad - kernel) / stride + 1
}

/// Output size of a pooling window, ceil mode (Caffe): ceil((h + 2p - k) / s) + 1.
pub fn pool_ceil(h: usize, kernel: usize, stride: usize, pad: usize) -> usize {
    (h + 2 * pad - kernel).div_ceil(stride) + 1
}

fn conv(name: &str, geom: ConvGeometry) -> LayerSpec {
    LayerSpec {
        name: name.to_string(),
        kind: LayerKind::Conv,
        geom,
    }
}

fn fc(name: &str, in_features: usize, out_features: usize) -> LayerSpec {
    LayerSpec {
        name: name.to_string(),
        kind: LayerKind::Fc,
        geom: ConvGeometry::fc(in_features, out_features),
    }
}

/// Square conv helper: (cin, cout, kernel, stride, pad, groups) on an h x h input.
fn sq(cin: usize, cout: usize, k: usize, s: usize, p: usize, g: usize, h: usize) -> ConvGeometry {
    ConvGeometry::conv(cin, cout, k, s, p, g, [h, h])
}

/// Caffe LeNet (examples/mnist/lenet_train_test.prototxt): 28x28 MNIST.
pub fn lenet5() -> Vec<LayerSpec> {
    // conv1 5x5: 28 -> 24, pool 2/2 -> 12; conv2 5x5: 12 -> 8, pool -> 4; 50*4*4 = 800.
    vec![
        conv("conv1", sq(1, 20, 5, 1, 0, 1, 28)),
        conv("conv2", sq(20, 50, 5, 1, 0, 1, 12)),
        fc("ip1", 800, 500),
        fc("ip2", 500, 10),
    ]
}

/// Caffe cifar10_full: three 5x5 pad-2 convs, each followed by a 3/2 pool in ceil mode.
pub fn cifar10() -> Vec<LayerSpec> {
    let p1 = pool_ceil(32, 3, 2, 0); // ceil(29/2) + 1 = 16
    let p2 = pool_ceil(p1, 3, 2, 0); // ceil(13/2) + 1 = 8
    let p3 = pool_ceil(p2, 3, 2, 0); // ceil(5/2) + 1 = 4
    vec![
        conv("conv1", sq(3, 32, 5, 1, 2, 1, 32)),
        conv("conv2", sq(32, 32, 5, 1, 2, 1, p1)),
        conv("conv3", sq(32, 64, 5, 1, 2, 1, p2)),
        fc("ip1", 64 * p3 * p3, 10),
    ]
}

/// BVLC reference CaffeNet (AlexNet with pool before norm): 227x227, conv2/4/5 in 2 groups.
pub fn caffenet() -> Vec<LayerSpec> {
    let c1 = (227 - 11) / 4 + 1; // 55
    let p1 = pool_ceil(c1, 3, 2, 0); // 27
    let p2 = pool_ceil(p1, 3, 2, 0); // 13
    let p5 = pool_ceil(p2, 3, 2, 0); // 6
    vec![
        conv("conv1", sq(3, 96, 11, 4, 0, 1, 227)),
        conv("conv2", sq(96, 256, 5, 1, 2, 2, p1)),
        conv("conv3", sq(256, 384, 3, 1, 1, 1, p2)),
        conv("conv4", sq(384, 384, 3, 1, 1, 2, p2)),
        conv("conv5", sq(384, 256, 3, 1, 1, 2, p2)),
        fc("fc6", 256 * p5 * p5, 4096),
        fc("fc7", 4096, 4096),
        fc("fc8", 4096, 1000),
    ]
}

/// VGG-16 (configuration D): 224x224, 13 3x3 pad-1 convs in 5 stages, 3 fc.
pub fn vgg16() -> Vec<LayerSpec> {
    let stages: [(usize, usize); 5] = [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)];
    let (mut layers, mut cin, mut h) = (Vec::new(), 3, 224);
    for (si, &(cout, n)) in stages.iter().enumerate() {
        for i in 0..n {
            let name = format!("conv{}_{}", si + 1, i + 1);
            layers.push(conv(&name, sq(cin, cout, 3, 1, 1, 1, h)));
            cin = cout;
        }
        h = pool_floor(h, 2, 2, 0);
    }
    // 224 / 2^5 = 7: fc6 has 512 * 7 * 7 = 25088 inputs.
    layers.push(fc("fc6", cin * h * h, 4096));
    layers.push(fc("fc7", 4096, 4096));
    layers.push(fc("fc8", 4096, 1000));
    layers
}

/// torchvision resnet18: 224x224, BasicBlocks [2, 2, 2, 2], 1x1 stride-2 downsample convs.
/// Within a block the order is conv1, conv2, downsample.0 (the forward order).
pub fn resnet18() -> Vec<LayerSpec> {
    let mut layers = vec![conv("conv1", sq(3, 64, 7, 2, 3, 1, 224))];
    let h = pool_floor(112, 3, 2, 1); // maxpool 3/2 pad 1: 112 -> 56
    basic_stages(&mut layers, 64, h, &[64, 128, 256, 512], 2, "downsample.0");
    layers.push(fc("fc", 512, 1000));
    layers
}

/// ResNet-20 for CIFAR-10 (He et al. 2016, section 4.2): 3 stages of 16/32/64 channels,
/// 3 BasicBlocks each. Shortcuts that change shape use option B: a 1x1 stride-2
/// projection conv (`layerS.0.shortcut.0`), which is mapped on crossbars like any conv.
pub fn resnet20() -> Vec<LayerSpec> {
    let mut layers = vec![conv("conv1", sq(3, 16, 3, 1, 1, 1, 32))];
    basic_stages(&mut layers, 16, 32, &[16, 32, 64], 3, "shortcut.0");
    layers.push(fc("fc", 64, 10));
    layers
}

/// Appends BasicBlock stages; the first block of every stage but the first has stride 2
/// and a 1x1 stride-2 projection named `layerS.0.<proj>`.
fn basic_stages(
    layers: &mut Vec<LayerSpec>,
    mut cin: usize,
    mut h: usize,
    widths: &[usize],
    blocks: usize,
    proj: &str,
) {
    for (si, &cout) in widths.iter().enumerate() {
        for b in 0..blocks {
            let stride = if si > 0 && b == 0 { 2 } else { 1 };
            let p = format!("layer{}.{}", si + 1, b);
            let ho = (h + 2 - 3) / stride + 1;
            layers.push(conv(
                &format!("{p}.conv1"),
                sq(cin, cout, 3, stride, 1, 1, h),
            ));
            layers.push(conv(&format!("{p}.conv2"), sq(cout, cout, 3, 1, 1, 1, ho)));
            if stride != 1 || cin != cout {
                layers.push(conv(
                    &format!("{p}.{proj}"),
                    sq(cin, cout, 1, stride, 0, 1, h),
                ));
            }
            cin = cout;
            h = ho;
        }
    }
}

/// torchvision mobilenet_v2 (width 1.0, 224x224). Inverted residual blocks: expand 1x1
/// (`features.i.conv.0.0`, absent when t = 1), depthwise 3x3 with groups = channels
/// (`conv.0.0` or `conv.1.0`), linear projection 1x1 (`conv.1` or `conv.2`).
pub fn mobilenetv2() -> Vec<LayerSpec> {
    // (expansion t, output channels c, repeats n, first stride s)
    let settings: [(usize, usize, usize, usize); 7] = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    let mut layers = vec![conv("features.0.0", sq(3, 32, 3, 2, 1, 1, 224))];
    let (mut cin, mut h, mut idx) = (32, 112, 1);
    for &(t, c, n, s) in &settings {
        for i in 0..n {
            let stride = if i == 0 { s } else { 1 };
            let hidden = cin * t;
            let p = format!("features.{idx}.conv");
            let mut sub = 0;
            if t != 1 {
                layers.push(conv(&format!("{p}.0.0"), sq(cin, hidden, 1, 1, 0, 1, h)));
                sub = 1;
            }
            let ho = (h + 2 - 3) / stride + 1;
            let dw = sq(hidden, hidden, 3, stride, 1, hidden, h);
            layers.push(conv(&format!("{p}.{sub}.0"), dw));
            layers.push(conv(
                &format!("{p}.{}", sub + 1),
                sq(hidden, c, 1, 1, 0, 1, ho),
            ));
            cin = c;
            h = ho;
            idx += 1;
        }
    }
    layers.push(conv(
        &format!("features.{idx}.0"),
        sq(cin, 1280, 1, 1, 0, 1, h),
    ));
    layers.push(fc("classifier.1", 1280, 1000));
    layers
}

/// DeepID as PP_sim's ModelConfig.py gives it: 1x39x31, all convs VALID and stride 1,
/// each of the first three followed by a 2/2 pool; a plain chain (no skip to fc1).
pub fn deepid() -> Vec<LayerSpec> {
    // 39x31 -> conv 4x4 36x28 -> 18x14 -> conv 3x3 16x12 -> 8x6 -> conv 3x3 6x4 -> 3x2
    // -> conv 2x2 2x1; 80 * 2 * 1 = 160.
    let g = |cin, cout, k, hw| ConvGeometry::conv(cin, cout, k, 1, 0, 1, hw);
    vec![
        conv("conv1", g(1, 20, 4, [39, 31])),
        conv("conv2", g(20, 40, 3, [18, 14])),
        conv("conv3", g(40, 60, 3, [8, 6])),
        conv("conv4", g(60, 80, 2, [3, 2])),
        fc("fc1", 160, 160),
        fc("fc2", 160, 100),
    ]
}

/// OverFeat "fast" as PP_sim's ModelConfig.py gives it: 3x221x221, conv1 11x11/4 and
/// conv2 5x5 VALID, conv3-5 3x3 SAME, 2/2 pools after conv1, conv2 and conv5.
pub fn overfeat_fast() -> Vec<LayerSpec> {
    let c1 = (221 - 11) / 4 + 1; // 53
    let p1 = pool_floor(c1, 2, 2, 0); // 26
    let c2 = p1 - 5 + 1; // 22
    let p2 = pool_floor(c2, 2, 2, 0); // 11
    let p5 = pool_floor(p2, 2, 2, 0); // 5
    vec![
        conv("conv1", sq(3, 96, 11, 4, 0, 1, 221)),
        conv("conv2", sq(96, 256, 5, 1, 0, 1, p1)),
        conv("conv3", sq(256, 512, 3, 1, 1, 1, p2)),
        conv("conv4", sq(512, 1024, 3, 1, 1, 1, p2)),
        conv("conv5", sq(1024, 1024, 3, 1, 1, 1, p2)),
        fc("fc6", 1024 * p5 * p5, 3072),
        fc("fc7", 3072, 4096),
        fc("fc8", 4096, 1000),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let d = deepid();
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
        let o = overfeat_fast();
        assert_eq!(o[0].geom.output_hw(), [53, 53]);
        assert_eq!(o[1].geom.output_hw(), [22, 22]);
        assert_eq!(o[4].geom.output_hw(), [11, 11]);
        assert_eq!(o[5].geom.in_channels, 25_600);
    }

    #[test]
    fn weight_counts_match_published_parameter_counts() {
        // Conv/fc weights only (no biases, no BN): vgg16 has 138,344,128 weights and
        // 13,416 biases (138,357,544 parameters in total).
        let w = |n| -> usize {
            layers(n)
                .unwrap()
                .iter()
                .map(|s| s.geom.weight_elements())
                .sum()
        };
        assert_eq!(w("vgg16"), 138_357_544 - 13_416);
        // torchvision totals = conv/fc weights + 2 BN parameters per conv output channel
        // + fc bias: resnet18 11,689,512, mobilenet_v2 3,504,872.
        let bn_fc = |n| -> usize {
            let l = layers(n).unwrap();
            let bn: usize = l
                .iter()
                .filter(|s| s.kind == LayerKind::Conv)
                .map(|s| 2 * s.geom.out_channels)
                .sum();
            bn + l.last().unwrap().geom.out_channels
        };
        assert_eq!(w("resnet18") + bn_fc("resnet18"), 11_689_512);
        assert_eq!(w("mobilenetv2") + bn_fc("mobilenetv2"), 3_504_872);
        // LeNet: 500 + 25,000 + 400,000 + 5,000 weights.
        assert_eq!(w("lenet5"), 430_500);
        // CaffeNet: 60,965,224 parameters minus 10,568 biases (96+256+384+384+256+4096+4096+1000).
        assert_eq!(w("caffenet"), 60_965_224 - 10_568);
    }

    #[test]
    fn pooled_sizes() {
        let c = cifar10();
        assert_eq!(c[1].geom.input_hw, [16, 16]);
        assert_eq!(c[2].geom.input_hw, [8, 8]);
        assert_eq!(c[3].geom.in_channels, 64 * 4 * 4);
        let a = caffenet();
        assert_eq!(a[0].geom.output_hw(), [55, 55]);
        assert_eq!(a[1].geom.input_hw, [27, 27]);
        assert_eq!(
            (a[1].geom.groups, a[3].geom.groups, a[4].geom.groups),
            (2, 2, 2)
        );
        assert_eq!(a[5].geom.in_channels, 9216);
        assert_eq!(find(&vgg16(), "fc6").geom.in_channels, 25088);
        assert_eq!(lenet5()[2].geom.in_channels, 800);
    }

    #[test]
    fn resnet_downsamples() {
        let r = resnet18();
        let d = find(&r, "layer2.0.downsample.0");
        assert_eq!(
            (d.geom.kernel, d.geom.stride, d.geom.input_hw),
            ([1, 1], [2, 2], [56, 56])
        );
        assert_eq!(d.geom.output_hw(), [28, 28]);
        assert_eq!(find(&r, "layer4.1.conv2").geom.output_hw(), [7, 7]);
        assert!(r.iter().all(|s| !s.name.starts_with("layer1.0.down")));
        let c = resnet20();
        let s = find(&c, "layer3.0.shortcut.0");
        assert_eq!((s.geom.in_channels, s.geom.out_channels), (32, 64));
        assert_eq!(s.geom.output_hw(), [8, 8]);
    }

    #[test]
    fn mobilenet_depthwise() {
        let m = mobilenetv2();
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
}
