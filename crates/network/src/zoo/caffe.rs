//! Caffe's reference networks, named as their prototxt layers are: LeNet (MNIST),
//! cifar10_full and the BVLC reference CaffeNet. Every conv and inner-product layer has a
//! bias; Caffe's pooling rounds up (ceil mode). Dropout and the loss are not modelled.

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, LrnRegion, PoolKind, PoolWindow, TensorId};

/// A k/s pooling window in Caffe's ceil mode.
fn ceil_window(k: usize, s: usize) -> PoolWindow {
    PoolWindow {
        ceil_mode: true,
        ..PoolWindow::square(k, s, 0)
    }
}

fn pool(b: &mut GraphBuilder, name: &str, x: TensorId, kind: PoolKind, k: usize) -> TensorId {
    b.pool_window(name, x, kind, ceil_window(k, 2))
}

/// examples/mnist/lenet_train_test.prototxt: 28x28 digits, conv1 5x5 20, pool 2/2, conv2
/// 5x5 50, pool 2/2, ip1 800 -> 500, ReLU, ip2 -> 10 (no activation after the convs).
pub fn lenet5(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("lenet5", batch);
    let x = b.input("data", vec![batch, 1, 28, 28]);
    let x = b.conv_with("conv1", x, 20, 5, 1, 0, 1, true);
    let x = pool(&mut b, "pool1", x, PoolKind::Max, 2);
    let x = b.conv_with("conv2", x, 50, 5, 1, 0, 1, true);
    let x = pool(&mut b, "pool2", x, PoolKind::Max, 2);
    let x = b.fc("ip1", x, 500, true);
    let x = b.act("relu1", x, ActKind::Relu);
    let y = b.fc("ip2", x, 10, true);
    b.output(y);
    b.finish()
}

/// examples/cifar10/cifar10_full_train_test.prototxt: three 5x5 pad-2 convs (32, 32, 64),
/// each followed by a 3/2 pool (max, then average), ReLU and (after the first two) a
/// within-channel LRN of size 3; ip1 1024 -> 10.
pub fn cifar10(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("cifar10", batch);
    let x = b.input("data", vec![batch, 3, 32, 32]);
    let x = b.conv_with("conv1", x, 32, 5, 1, 2, 1, true);
    let x = pool(&mut b, "pool1", x, PoolKind::Max, 3);
    let x = b.act("relu1", x, ActKind::Relu);
    let x = b.lrn("norm1", x, 3, 5e-5, LrnRegion::WithinChannel);
    let x = b.conv_with("conv2", x, 32, 5, 1, 2, 1, true);
    let x = b.act("relu2", x, ActKind::Relu);
    let x = pool(&mut b, "pool2", x, PoolKind::Avg, 3);
    let x = b.lrn("norm2", x, 3, 5e-5, LrnRegion::WithinChannel);
    let x = b.conv_with("conv3", x, 64, 5, 1, 2, 1, true);
    let x = b.act("relu3", x, ActKind::Relu);
    let x = pool(&mut b, "pool3", x, PoolKind::Avg, 3);
    let y = b.fc("ip1", x, 10, true);
    b.output(y);
    b.finish()
}

/// models/bvlc_reference_caffenet: AlexNet with pooling before normalization, 227x227;
/// conv2, conv4 and conv5 in 2 groups; 3/2 max pools (55 -> 27 -> 13 -> 6).
pub fn caffenet(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("caffenet", batch);
    let x = b.input("data", vec![batch, 3, 227, 227]);
    let x = b.conv_with("conv1", x, 96, 11, 4, 0, 1, true);
    let x = b.act("relu1", x, ActKind::Relu);
    let x = pool(&mut b, "pool1", x, PoolKind::Max, 3);
    let x = b.lrn("norm1", x, 5, 1e-4, LrnRegion::AcrossChannels);
    let x = b.conv_with("conv2", x, 256, 5, 1, 2, 2, true);
    let x = b.act("relu2", x, ActKind::Relu);
    let x = pool(&mut b, "pool2", x, PoolKind::Max, 3);
    let x = b.lrn("norm2", x, 5, 1e-4, LrnRegion::AcrossChannels);
    let x = b.conv_with("conv3", x, 384, 3, 1, 1, 1, true);
    let x = b.act("relu3", x, ActKind::Relu);
    let x = b.conv_with("conv4", x, 384, 3, 1, 1, 2, true);
    let x = b.act("relu4", x, ActKind::Relu);
    let x = b.conv_with("conv5", x, 256, 3, 1, 1, 2, true);
    let x = b.act("relu5", x, ActKind::Relu);
    let x = pool(&mut b, "pool5", x, PoolKind::Max, 3);
    let x = b.fc("fc6", x, 4096, true);
    let x = b.act("relu6", x, ActKind::Relu);
    let x = b.fc("fc7", x, 4096, true);
    let x = b.act("relu7", x, ActKind::Relu);
    let y = b.fc("fc8", x, 1000, true);
    b.output(y);
    b.finish()
}
