//! Caffe's reference networks, named as their prototxt layers are: LeNet (MNIST),
//! cifar10_full and the BVLC reference CaffeNet. Every conv and inner-product layer has a
//! bias; Caffe's pooling rounds up (ceil mode). Dropout and the loss are not modelled.

use super::chain::{conv, fc, pool, Chain, Naming, Then};
use crate::graph::{Graph, LrnRegion, PoolKind};

const RELU: Then = Then::Relu;
const MAX2: Then = pool(PoolKind::Max, 2, 2, true);
const MAX3: Then = pool(PoolKind::Max, 3, 2, true);
const AVE3: Then = pool(PoolKind::Avg, 3, 2, true);
/// cifar10_full's norm: within one channel, size 3, alpha 5e-5.
const NORM3: Then = Then::Lrn(3, 5e-5, LrnRegion::WithinChannel);
/// CaffeNet's norm: across 5 channels, alpha 1e-4.
const NORM5: Then = Then::Lrn(5, 1e-4, LrnRegion::AcrossChannels);

fn caffe(name: &'static str, input: [usize; 3]) -> Chain {
    Chain {
        name,
        input,
        bias: true,
        naming: Naming::Caffe,
    }
}

/// examples/mnist/lenet_train_test.prototxt: 28x28 digits, conv1 5x5 20, pool 2/2, conv2
/// 5x5 50, pool 2/2, ip1 800 -> 500, ReLU, ip2 -> 10 (no activation after the convs).
pub fn lenet5(batch: usize) -> Graph {
    caffe("lenet5", [1, 28, 28]).build(
        batch,
        &[
            conv("conv1", (20, 5, 1, 0, 1), &[MAX2]),
            conv("conv2", (50, 5, 1, 0, 1), &[MAX2]),
            fc("ip1", 500, &[RELU]),
            fc("ip2", 10, &[]),
        ],
    )
}

/// examples/cifar10/cifar10_full_train_test.prototxt: three 5x5 pad-2 convs (32, 32, 64);
/// conv1 is followed by max pool, ReLU, norm; conv2 by ReLU, average pool, norm; conv3 by
/// ReLU and average pool (3/2 pools: 32 -> 16 -> 8 -> 4); ip1 1024 -> 10.
pub fn cifar10(batch: usize) -> Graph {
    caffe("cifar10", [3, 32, 32]).build(
        batch,
        &[
            conv("conv1", (32, 5, 1, 2, 1), &[MAX3, RELU, NORM3]),
            conv("conv2", (32, 5, 1, 2, 1), &[RELU, AVE3, NORM3]),
            conv("conv3", (64, 5, 1, 2, 1), &[RELU, AVE3]),
            fc("ip1", 10, &[]),
        ],
    )
}

/// models/bvlc_reference_caffenet: AlexNet with pooling before normalization, 227x227;
/// conv2, conv4 and conv5 in 2 groups; 3/2 max pools (55 -> 27 -> 13 -> 6).
pub fn caffenet(batch: usize) -> Graph {
    caffe("caffenet", [3, 227, 227]).build(
        batch,
        &[
            conv("conv1", (96, 11, 4, 0, 1), &[RELU, MAX3, NORM5]),
            conv("conv2", (256, 5, 1, 2, 2), &[RELU, MAX3, NORM5]),
            conv("conv3", (384, 3, 1, 1, 1), &[RELU]),
            conv("conv4", (384, 3, 1, 1, 2), &[RELU]),
            conv("conv5", (256, 3, 1, 1, 2), &[RELU, MAX3]),
            fc("fc6", 4096, &[RELU]),
            fc("fc7", 4096, &[RELU]),
            fc("fc8", 1000, &[]),
        ],
    )
}
