//! PP_sim's networks (ModelConfig.py), as it gives them: no biases, ReLU after every layer
//! but the last, max pools in floor mode (`(H - k) / s + 1`), SAME meaning a symmetric
//! padding of `(k - 1) / 2`. DeepID and OverFeat-fast are in no framework zoo and keep
//! their names; PP_sim's LeNet, Cifar10 and Caffenet differ from Caffe's networks of the
//! same names (`lenet5`, `cifar10`, `caffenet`) and are `pp_sim-lenet`, `pp_sim-cifar10`
//! and `pp_sim-caffenet`.

use super::chain::{conv, fc, pool, Chain, Naming, Then};
use crate::graph::{Graph, PoolKind};

const RELU: Then = Then::Relu;
const POOL: Then = pool(PoolKind::Max, 2, 2, false);
const POOL3: Then = pool(PoolKind::Max, 3, 2, false);

fn pp_sim(name: &'static str, input: [usize; 3]) -> Chain {
    Chain {
        name,
        input,
        bias: false,
        naming: Naming::Suffix,
    }
}

/// DeepID: 1x39x31, all convs VALID and stride 1, each of the first three followed by a
/// 2/2 pool; a plain chain (no skip to fc1). 39x31 -> 36x28 -> 18x14 -> 16x12 -> 8x6 ->
/// 6x4 -> 3x2 -> 2x1; 80 * 2 * 1 = 160.
pub fn deepid(batch: usize) -> Graph {
    pp_sim("deepid", [1, 39, 31]).build(
        batch,
        &[
            conv("conv1", (20, 4, 1, 0, 1), &[RELU, POOL]),
            conv("conv2", (40, 3, 1, 0, 1), &[RELU, POOL]),
            conv("conv3", (60, 3, 1, 0, 1), &[RELU, POOL]),
            conv("conv4", (80, 2, 1, 0, 1), &[RELU]),
            fc("fc1", 160, &[RELU]),
            fc("fc2", 100, &[]),
        ],
    )
}

/// OverFeat "fast": 3x221x221, conv1 11x11/4 and conv2 5x5 VALID, conv3-5 3x3 SAME, 2/2
/// pools after conv1 (53 -> 26), conv2 (22 -> 11) and conv5 (11 -> 5).
pub fn overfeat_fast(batch: usize) -> Graph {
    pp_sim("overfeat-fast", [3, 221, 221]).build(
        batch,
        &[
            conv("conv1", (96, 11, 4, 0, 1), &[RELU, POOL]),
            conv("conv2", (256, 5, 1, 0, 1), &[RELU, POOL]),
            conv("conv3", (512, 3, 1, 1, 1), &[RELU]),
            conv("conv4", (1024, 3, 1, 1, 1), &[RELU]),
            conv("conv5", (1024, 3, 1, 1, 1), &[RELU, POOL]),
            fc("fc6", 3072, &[RELU]),
            fc("fc7", 4096, &[RELU]),
            fc("fc8", 1000, &[]),
        ],
    )
}

/// PP_sim's LeNet: 1x32x32, conv1 6@5x5 (28), pool 2 (14), conv2 16@5x5 (10), pool 2 (5),
/// conv3 120@5x5 (1), fc 120, 84, 10; all VALID.
pub fn lenet(batch: usize) -> Graph {
    pp_sim("pp_sim-lenet", [1, 32, 32]).build(
        batch,
        &[
            conv("conv1", (6, 5, 1, 0, 1), &[RELU, POOL]),
            conv("conv2", (16, 5, 1, 0, 1), &[RELU, POOL]),
            conv("conv3", (120, 5, 1, 0, 1), &[RELU]),
            fc("fc1", 120, &[RELU]),
            fc("fc2", 84, &[RELU]),
            fc("fc3", 10, &[]),
        ],
    )
}

/// PP_sim's Cifar10: 3x32x32, conv1 32@5x5 VALID (28), pool 2 (14), conv2 32@5x5 VALID
/// (10), pool 2 (5), conv3 64@5x5 SAME (5), pool 2 (2), fc 256 -> 64, fc 10.
pub fn cifar10(batch: usize) -> Graph {
    pp_sim("pp_sim-cifar10", [3, 32, 32]).build(
        batch,
        &[
            conv("conv1", (32, 5, 1, 0, 1), &[RELU, POOL]),
            conv("conv2", (32, 5, 1, 0, 1), &[RELU, POOL]),
            conv("conv3", (64, 5, 1, 2, 1), &[RELU, POOL]),
            fc("fc1", 64, &[RELU]),
            fc("fc2", 10, &[]),
        ],
    )
}

/// PP_sim's Caffenet: 3x227x227, conv1 96@11x11/4 VALID (55), pool 3/2 (27), conv2
/// 256@5x5 SAME (27), pool 3/2 (13), conv3 384, conv4 384, conv5 256 @3x3 SAME (13), pool
/// 3/2 (6), fc6 9216 -> 4096, fc7 4096, fc8 1000. Unlike Caffe's CaffeNet: no groups, no
/// LRN, no biases, floor pooling.
pub fn caffenet(batch: usize) -> Graph {
    pp_sim("pp_sim-caffenet", [3, 227, 227]).build(
        batch,
        &[
            conv("conv1", (96, 11, 4, 0, 1), &[RELU, POOL3]),
            conv("conv2", (256, 5, 1, 2, 1), &[RELU, POOL3]),
            conv("conv3", (384, 3, 1, 1, 1), &[RELU]),
            conv("conv4", (384, 3, 1, 1, 1), &[RELU]),
            conv("conv5", (256, 3, 1, 1, 1), &[RELU, POOL3]),
            fc("fc6", 4096, &[RELU]),
            fc("fc7", 4096, &[RELU]),
            fc("fc8", 1000, &[]),
        ],
    )
}
