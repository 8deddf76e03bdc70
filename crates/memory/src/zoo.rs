//! The networks `sresim memory` offers by name: graphs of the network zoo
//! (`network::zoo`, where each is described once).

use crate::graph::Graph;
pub use network::zoo::ZooOptions;

/// Names `build` accepts.
pub const NAMES: &[&str] = &[
    "resnet18",
    "resnet50",
    "vgg16",
    "mobilenetv2",
    "bert",
    "gnmt",
    "yolov4-tiny",
];

/// The names of [`NAMES`] whose sequence length `--seq-len` sets.
pub const SEQUENCE: &[&str] = &["bert", "gnmt"];

/// The graph of network `name` for a batch; `None` for a name not in [`NAMES`] or a zero
/// size.
pub fn build(name: &str, batch: usize, opts: ZooOptions) -> Option<Graph> {
    if !NAMES.contains(&name) {
        return None;
    }
    network::zoo::build(name, batch, opts)
}
