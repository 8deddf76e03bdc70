//! The two networks of PP_sim's ModelConfig.py that no framework zoo holds, as it gives
//! them: no biases, ReLU after every layer but the last, 2/2 max pools (floor).

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, PoolKind, TensorId};

fn conv_relu(b: &mut GraphBuilder, i: usize, x: TensorId, cout: usize, k: usize) -> TensorId {
    conv_relu_s(b, i, x, cout, k, 1, 0)
}

#[allow(clippy::too_many_arguments)]
fn conv_relu_s(
    b: &mut GraphBuilder,
    i: usize,
    x: TensorId,
    cout: usize,
    k: usize,
    stride: usize,
    pad: usize,
) -> TensorId {
    let y = b.conv(&format!("conv{i}"), x, cout, k, stride, pad, 1);
    b.act(&format!("relu{i}"), y, ActKind::Relu)
}

fn pool(b: &mut GraphBuilder, i: usize, x: TensorId) -> TensorId {
    b.pool(&format!("pool{i}"), x, PoolKind::Max, 2, 2, 0)
}

/// DeepID: 1x39x31, all convs VALID and stride 1, each of the first three followed by a
/// 2/2 pool; a plain chain (no skip to fc1). 39x31 -> 36x28 -> 18x14 -> 16x12 -> 8x6 ->
/// 6x4 -> 3x2 -> 2x1; 80 * 2 * 1 = 160.
pub fn deepid(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("deepid", batch);
    let x = b.input("input", vec![batch, 1, 39, 31]);
    let x = conv_relu(&mut b, 1, x, 20, 4);
    let x = pool(&mut b, 1, x);
    let x = conv_relu(&mut b, 2, x, 40, 3);
    let x = pool(&mut b, 2, x);
    let x = conv_relu(&mut b, 3, x, 60, 3);
    let x = pool(&mut b, 3, x);
    let x = conv_relu(&mut b, 4, x, 80, 2);
    let x = b.fc("fc1", x, 160, false);
    let x = b.act("relu5", x, ActKind::Relu);
    let y = b.fc("fc2", x, 100, false);
    b.output(y);
    b.finish()
}

/// OverFeat "fast": 3x221x221, conv1 11x11/4 and conv2 5x5 VALID, conv3-5 3x3 SAME, 2/2
/// pools after conv1 (53 -> 26), conv2 (22 -> 11) and conv5 (11 -> 5).
pub fn overfeat_fast(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("overfeat-fast", batch);
    let x = b.input("input", vec![batch, 3, 221, 221]);
    let x = conv_relu_s(&mut b, 1, x, 96, 11, 4, 0);
    let x = pool(&mut b, 1, x);
    let x = conv_relu(&mut b, 2, x, 256, 5);
    let x = pool(&mut b, 2, x);
    let x = conv_relu_s(&mut b, 3, x, 512, 3, 1, 1);
    let x = conv_relu_s(&mut b, 4, x, 1024, 3, 1, 1);
    let x = conv_relu_s(&mut b, 5, x, 1024, 3, 1, 1);
    let x = pool(&mut b, 5, x);
    let x = b.fc("fc6", x, 3072, false);
    let x = b.act("relu6", x, ActKind::Relu);
    let x = b.fc("fc7", x, 4096, false);
    let x = b.act("relu7", x, ActKind::Relu);
    let y = b.fc("fc8", x, 1000, false);
    b.output(y);
    b.finish()
}
