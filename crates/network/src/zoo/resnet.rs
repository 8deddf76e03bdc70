//! ResNet-18 and ResNet-50 (torchvision layout, 224x224 inputs, 1000 classes) and the
//! CIFAR-10 ResNet-20 (He et al. 2016, section 4.2, 32x32 inputs, 10 classes).

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, PoolKind, TensorId};

fn stem(b: &mut GraphBuilder) -> TensorId {
    let n = b.batch();
    let x = b.input("input", vec![n, 3, 224, 224]);
    let x = b.conv("conv1", x, 64, 7, 2, 3, 1);
    let x = b.bn("bn1", x);
    let x = b.act("relu", x, ActKind::Relu);
    b.pool("maxpool", x, PoolKind::Max, 3, 2, 1)
}

fn head(mut b: GraphBuilder, x: TensorId, classes: usize) -> Graph {
    let x = b.global_pool("avgpool", x);
    let y = b.fc("fc", x, classes, true);
    b.output(y);
    b.finish()
}

/// Bottleneck: 1x1 -> 3x3 (stride) -> 1x1 (x4), projection shortcut when the shape changes.
fn bottleneck(b: &mut GraphBuilder, p: &str, x: TensorId, width: usize, stride: usize) -> TensorId {
    let cin = b.shape(x)[1];
    let cout = width * 4;
    b.begin_block(p);
    let y = b.conv(&format!("{p}.conv1"), x, width, 1, 1, 0, 1);
    let y = b.bn(&format!("{p}.bn1"), y);
    let y = b.act(&format!("{p}.relu1"), y, ActKind::Relu);
    let y = b.conv(&format!("{p}.conv2"), y, width, 3, stride, 1, 1);
    let y = b.bn(&format!("{p}.bn2"), y);
    let y = b.act(&format!("{p}.relu2"), y, ActKind::Relu);
    let y = b.conv(&format!("{p}.conv3"), y, cout, 1, 1, 0, 1);
    let y = b.bn(&format!("{p}.bn3"), y);
    let skip = if stride != 1 || cin != cout {
        let s = b.conv(&format!("{p}.downsample.0"), x, cout, 1, stride, 0, 1);
        b.bn(&format!("{p}.downsample.1"), s)
    } else {
        x
    };
    let y = b.add(&format!("{p}.add"), &[y, skip]);
    let y = b.act(&format!("{p}.relu3"), y, ActKind::Relu);
    b.end_block();
    y
}

/// Basic block: 3x3 (stride) -> 3x3, projection shortcut `{p}.{proj}.0` (1x1 conv) and
/// `{p}.{proj}.1` (BN) when the shape changes. Within a block the crossbar layers come in
/// the forward order: conv1, conv2, the projection.
fn basic(
    b: &mut GraphBuilder,
    p: &str,
    x: TensorId,
    cout: usize,
    stride: usize,
    proj: &str,
) -> TensorId {
    let cin = b.shape(x)[1];
    b.begin_block(p);
    let y = b.conv(&format!("{p}.conv1"), x, cout, 3, stride, 1, 1);
    let y = b.bn(&format!("{p}.bn1"), y);
    let y = b.act(&format!("{p}.relu1"), y, ActKind::Relu);
    let y = b.conv(&format!("{p}.conv2"), y, cout, 3, 1, 1, 1);
    let y = b.bn(&format!("{p}.bn2"), y);
    let skip = if stride != 1 || cin != cout {
        let s = b.conv(&format!("{p}.{proj}.0"), x, cout, 1, stride, 0, 1);
        b.bn(&format!("{p}.{proj}.1"), s)
    } else {
        x
    };
    let y = b.add(&format!("{p}.add"), &[y, skip]);
    let y = b.act(&format!("{p}.relu2"), y, ActKind::Relu);
    b.end_block();
    y
}

pub fn resnet50(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("resnet50", batch);
    let mut x = stem(&mut b);
    for (stage, (blocks, width)) in [(3, 64), (4, 128), (6, 256), (3, 512)]
        .into_iter()
        .enumerate()
    {
        for i in 0..blocks {
            let stride = if i == 0 && stage > 0 { 2 } else { 1 };
            x = bottleneck(&mut b, &format!("layer{}.{i}", stage + 1), x, width, stride);
        }
    }
    head(b, x, 1000)
}

pub fn resnet18(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("resnet18", batch);
    let mut x = stem(&mut b);
    for (stage, c) in [64, 128, 256, 512].into_iter().enumerate() {
        for i in 0..2 {
            let stride = if i == 0 && stage > 0 { 2 } else { 1 };
            let p = format!("layer{}.{i}", stage + 1);
            x = basic(&mut b, &p, x, c, stride, "downsample");
        }
    }
    head(b, x, 1000)
}

/// ResNet-20: conv1 3x3 16 + BN + ReLU, 3 stages of 3 BasicBlocks (16, 32, 64 channels),
/// global average pool, fc 64 -> 10. Shortcuts that change shape use option B, a 1x1
/// stride-2 projection (`layerS.0.shortcut.0`), which is mapped on crossbars like any conv
/// (option A, zero padding, would map nothing).
pub fn resnet20(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("resnet20", batch);
    let x = b.input("input", vec![batch, 3, 32, 32]);
    let x = b.conv("conv1", x, 16, 3, 1, 1, 1);
    let x = b.bn("bn1", x);
    let mut x = b.act("relu", x, ActKind::Relu);
    for (stage, c) in [16, 32, 64].into_iter().enumerate() {
        for i in 0..3 {
            let stride = if i == 0 && stage > 0 { 2 } else { 1 };
            let p = format!("layer{}.{i}", stage + 1);
            x = basic(&mut b, &p, x, c, stride, "shortcut");
        }
    }
    head(b, x, 10)
}
