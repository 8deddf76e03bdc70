//! YOLOv4-tiny (darknet cfg, 416x416 inputs, 80 classes): CSPDarknet53-tiny backbone with
//! channel-split routes, maxpools, and the two-scale head with an upsample. Layers are named
//! after the darknet layer index.

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, PoolKind, TensorId};

/// Darknet `[convolutional]` with batch_normalize=1, activation=leaky.
fn cbl(
    b: &mut GraphBuilder,
    i: usize,
    x: TensorId,
    cout: usize,
    k: usize,
    stride: usize,
) -> TensorId {
    let y = b.conv(&format!("conv{i}"), x, cout, k, stride, k / 2, 1);
    let y = b.bn(&format!("conv{i}.bn"), y);
    b.act(
        &format!("conv{i}.leaky"),
        y,
        ActKind::LeakyRelu { alpha: 0.1 },
    )
}

/// CSP block of layers i..i+6: conv, split, conv, conv, concat, 1x1 conv, concat.
fn csp(b: &mut GraphBuilder, i: usize, x: TensorId, c: usize) -> TensorId {
    b.begin_block(&format!("csp{i}"));
    let l0 = cbl(b, i, x, c, 3, 1);
    let half = b.slice(&format!("route{}", i + 1), l0, 2);
    let l2 = cbl(b, i + 2, half, c / 2, 3, 1);
    let l3 = cbl(b, i + 3, l2, c / 2, 3, 1);
    let cat = b.concat(&format!("route{}", i + 4), &[l3, l2]);
    let l5 = cbl(b, i + 5, cat, c, 1, 1);
    let out = b.concat(&format!("route{}", i + 6), &[l0, l5]);
    b.end_block();
    out
}

pub fn yolov4_tiny(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("yolov4-tiny", batch);
    let x = b.input("input", vec![batch, 3, 416, 416]);
    let x = cbl(&mut b, 0, x, 32, 3, 2);
    let x = cbl(&mut b, 1, x, 64, 3, 2);
    let x = csp(&mut b, 2, x, 64);
    let x = b.pool("maxpool9", x, PoolKind::Max, 2, 2, 0);
    let x = csp(&mut b, 10, x, 128);
    let x = b.pool("maxpool17", x, PoolKind::Max, 2, 2, 0);
    let x = csp(&mut b, 18, x, 256);
    // Layer 23 (the CSP block's 1x1 conv output) feeds the second head.
    let l23 = b.tensor_of_node("conv23.leaky");
    let x = b.pool("maxpool25", x, PoolKind::Max, 2, 2, 0);
    let x = cbl(&mut b, 26, x, 512, 3, 1);
    let l27 = cbl(&mut b, 27, x, 256, 1, 1);
    let x = cbl(&mut b, 28, l27, 512, 3, 1);
    let y1 = b.conv_bias("conv29", x, 255, 1, 1, 0);
    b.output(y1);
    let x = cbl(&mut b, 32, l27, 128, 1, 1);
    let x = b.upsample("upsample33", x, 2);
    let x = b.concat("route34", &[x, l23]);
    let x = cbl(&mut b, 35, x, 256, 3, 1);
    let y2 = b.conv_bias("conv36", x, 255, 1, 1, 0);
    b.output(y2);
    b.finish()
}
