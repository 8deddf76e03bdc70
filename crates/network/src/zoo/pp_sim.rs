//! The two networks of PP_sim's ModelConfig.py that no framework zoo holds, as it gives
//! them: no biases, ReLU after every layer but the last, 2/2 max pools (floor).

use super::chain::{conv, fc, pool, Chain, Naming, Then};
use crate::graph::{Graph, PoolKind};

const RELU: Then = Then::Relu;
const POOL: Then = pool(PoolKind::Max, 2, 2, false);

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
