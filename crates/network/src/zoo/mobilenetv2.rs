//! MobileNetV2 (torchvision layout, 224x224 inputs, width 1.0, 1000 classes).

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, TensorId};

/// Conv + BN + ReLU6 named `{p}.0`, `{p}.1`, `{p}.2`.
fn conv_bn_relu6(
    b: &mut GraphBuilder,
    p: &str,
    x: TensorId,
    cout: usize,
    k: usize,
    stride: usize,
    groups: usize,
) -> TensorId {
    let y = b.conv(&format!("{p}.0"), x, cout, k, stride, k / 2, groups);
    let y = b.bn(&format!("{p}.1"), y);
    b.act(&format!("{p}.2"), y, ActKind::Relu6)
}

pub fn mobilenetv2(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("mobilenetv2", batch);
    let x = b.input("input", vec![batch, 3, 224, 224]);
    let mut x = conv_bn_relu6(&mut b, "features.0", x, 32, 3, 2, 1);
    let settings = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    let mut idx = 1;
    for (t, c, n, s) in settings {
        for i in 0..n {
            let stride = if i == 0 { s } else { 1 };
            let cin = b.shape(x)[1];
            let hidden = cin * t;
            let p = format!("features.{idx}.conv");
            b.begin_block(&format!("features.{idx}"));
            let mut y = x;
            let mut j = 0;
            if t != 1 {
                y = conv_bn_relu6(&mut b, &format!("{p}.0"), y, hidden, 1, 1, 1);
                j = 1;
            }
            y = conv_bn_relu6(&mut b, &format!("{p}.{j}"), y, hidden, 3, stride, hidden);
            y = b.conv(&format!("{p}.{}", j + 1), y, c, 1, 1, 0, 1);
            y = b.bn(&format!("{p}.{}", j + 2), y);
            if stride == 1 && cin == c {
                y = b.add(&format!("features.{idx}.add"), &[y, x]);
            }
            b.end_block();
            x = y;
            idx += 1;
        }
    }
    let x = conv_bn_relu6(&mut b, &format!("features.{idx}"), x, 1280, 1, 1, 1);
    let x = b.global_pool("avgpool", x);
    let y = b.fc("classifier.1", x, 1000, true);
    b.output(y);
    b.finish()
}
