//! Plain chains of crossbar layers, each followed by its own activation, pooling and
//! normalization: the Caffe reference networks and PP_sim's, written as tables.

use crate::builder::GraphBuilder;
use crate::graph::{ActKind, Graph, LrnRegion, PoolKind, PoolWindow};

/// What follows a crossbar layer, in order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Then {
    Relu,
    Pool(PoolKind, PoolWindow),
    /// LRN of `size` with `alpha` (beta 0.75, bias 1, as in Caffe's prototxts).
    Lrn(usize, f32, LrnRegion),
}

/// One crossbar layer of a chain: a square conv (`kernel` > 0) or an fc (`kernel` 0).
#[derive(Debug, Clone, Copy)]
pub(super) struct Layer {
    name: &'static str,
    cout: usize,
    kernel: usize,
    stride: usize,
    pad: usize,
    groups: usize,
    then: &'static [Then],
}

/// A square conv of `kernel` x `kernel` with its stride, padding and groups.
pub(super) const fn conv(
    name: &'static str,
    (cout, kernel, stride, pad, groups): (usize, usize, usize, usize, usize),
    then: &'static [Then],
) -> Layer {
    Layer {
        name,
        cout,
        kernel,
        stride,
        pad,
        groups,
        then,
    }
}

/// A fully connected layer to `out` features (an NCHW input is flattened).
pub(super) const fn fc(name: &'static str, out: usize, then: &'static [Then]) -> Layer {
    conv(name, (out, 0, 1, 0, 1), then)
}

/// A k/s max or average pool, in ceil mode (Caffe) or floor mode.
pub(super) const fn pool(kind: PoolKind, k: usize, s: usize, ceil_mode: bool) -> Then {
    Then::Pool(
        kind,
        PoolWindow {
            kernel: [k, k],
            strides: [s, s],
            pads: [0; 4],
            ceil_mode,
            count_include_pad: false,
        },
    )
}

/// How a chain names what is not a crossbar layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Naming {
    /// Caffe's prototxts: `relu6` after `fc6`, `pool1` and `norm1` after `conv1`.
    Caffe,
    /// After the layer: `conv1.relu`, `conv1.pool`.
    Suffix,
}

/// A network that is a chain: its input `[C, H, W]`, whether its layers have biases.
pub(super) struct Chain {
    pub name: &'static str,
    pub input: [usize; 3],
    pub bias: bool,
    pub naming: Naming,
}

impl Chain {
    fn node_name(&self, layer: &str, what: &str) -> String {
        match self.naming {
            Naming::Caffe => {
                let digits: String = layer.chars().filter(char::is_ascii_digit).collect();
                format!("{what}{digits}")
            }
            Naming::Suffix => format!("{layer}.{what}"),
        }
    }

    /// The graph of `layers` for a batch; the last layer's output is the network's.
    pub fn build(&self, batch: usize, layers: &[Layer]) -> Graph {
        let mut b = GraphBuilder::new(self.name, batch);
        let [c, h, w] = self.input;
        let input = if self.naming == Naming::Caffe {
            "data"
        } else {
            "input"
        };
        let mut x = b.input(input, vec![batch, c, h, w]);
        for l in layers {
            x = if l.kernel == 0 {
                b.fc(l.name, x, l.cout, self.bias)
            } else {
                let (k, s, p, g) = (l.kernel, l.stride, l.pad, l.groups);
                b.conv_with(l.name, x, l.cout, k, s, p, g, self.bias)
            };
            for then in l.then {
                x = match *then {
                    Then::Relu => b.act(&self.node_name(l.name, "relu"), x, ActKind::Relu),
                    Then::Pool(kind, window) => {
                        b.pool_window(&self.node_name(l.name, "pool"), x, kind, window)
                    }
                    Then::Lrn(size, alpha, region) => {
                        b.lrn(&self.node_name(l.name, "norm"), x, size, alpha, region)
                    }
                };
            }
        }
        b.output(x);
        b.finish()
    }
}
