//! VGG-16 (torchvision layout without batch norm; dropout is not modelled). The nodes
//! carry torchvision's module names (`features.0`, `classifier.6`); the crossbar layers
//! are listed under the paper's names (`conv1_1` .. `conv5_3`, `fc6` .. `fc8`).

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, PoolKind};

pub fn vgg16(batch: usize) -> Graph {
    let mut b = GraphBuilder::new("vgg16", batch);
    let mut x = b.input("input", vec![batch, 3, 224, 224]);
    let cfg: [&[usize]; 5] = [
        &[64, 64],
        &[128, 128],
        &[256, 256, 256],
        &[512, 512, 512],
        &[512, 512, 512],
    ];
    let mut idx = 0;
    for (si, stage) in cfg.into_iter().enumerate() {
        for (ci, &c) in stage.iter().enumerate() {
            x = b.conv_bias(&format!("features.{idx}"), x, c, 3, 1, 1);
            b.list_as(&format!("conv{}_{}", si + 1, ci + 1));
            x = b.act(&format!("features.{}", idx + 1), x, ActKind::Relu);
            idx += 2;
        }
        x = b.pool(&format!("features.{idx}"), x, PoolKind::Max, 2, 2, 0);
        idx += 1;
    }
    let x = b.fc("classifier.0", x, 4096, true);
    b.list_as("fc6");
    let x = b.act("classifier.1", x, ActKind::Relu);
    let x = b.fc("classifier.3", x, 4096, true);
    b.list_as("fc7");
    let x = b.act("classifier.4", x, ActKind::Relu);
    let y = b.fc("classifier.6", x, 1000, true);
    b.list_as("fc8");
    b.output(y);
    b.finish()
}
