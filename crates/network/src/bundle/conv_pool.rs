//! Convolution and pooling: the node of a crossbar layer (`layer`: a `Conv` or an `Fc` of
//! the manifest, checked against the shape it reads) and the pooling ops (`MaxPool`,
//! `AveragePool`, `GlobalAveragePool`: their attributes, limits and output shapes).

use crate::geometry::{LayerKind, LayerSpec};
use crate::graph::{Op, PoolKind, PoolWindow};

use super::node::{attr_err, err, fixed, flag, GraphError, GraphErrorKind, NodeOp, Obj};
use super::shape::fmt_shape;

/// Most elements of a pooling window (kernel height x width).
pub const MAX_WINDOW_ELEMENTS: u64 = 1 << 20;
/// Most reads of one sample's pooling (output elements x window): 2^32, seconds of work.
pub const MAX_POOL_READS: u64 = 1 << 32;

/// The op of a `MaxPool`, `AveragePool` or `GlobalAveragePool` node.
pub(super) fn parse(op: &str, o: &Obj, at: &str) -> Result<NodeOp, GraphError> {
    Ok(match op {
        "MaxPool" | "AveragePool" => {
            let kernel = fixed(o, "kernel_shape", at, 2, 1, None)?;
            bounds::size::elements(&kernel, MAX_WINDOW_ELEMENTS)
                .map_err(|e| attr_err(at, "kernel_shape", &format!("a window of {e}")))?;
            let strides = fixed(o, "strides", at, 2, 1, Some(vec![1, 1]))?;
            let pads = fixed(o, "pads", at, 4, 0, Some(vec![0; 4]))?;
            // ONNX writes `dilations` on every pool (torch.onnx: [1, 1]); a dilated window
            // is not modelled, and tools/export_onnx.py refuses it before writing.
            if fixed(o, "dilations", at, 2, 1, Some(vec![1, 1]))? != [1, 1] {
                return Err(attr_err(
                    at,
                    "dilations",
                    "dilated pooling is not supported (expected [1, 1])",
                ));
            }
            for d in 0..2 {
                if pads[d] >= kernel[d] || pads[d + 2] >= kernel[d] {
                    return Err(attr_err(
                        at,
                        "pads",
                        "each pad must be smaller than the kernel",
                    ));
                }
            }
            let kind = if op == "MaxPool" {
                PoolKind::Max
            } else {
                PoolKind::Avg
            };
            let window = PoolWindow {
                kernel: [kernel[0], kernel[1]],
                strides: [strides[0], strides[1]],
                pads: [pads[0], pads[1], pads[2], pads[3]],
                ceil_mode: flag(o, "ceil_mode", at)?,
                count_include_pad: flag(o, "count_include_pad", at)?,
            };
            if kind == PoolKind::Max && window.count_include_pad {
                return Err(attr_err(
                    at,
                    "count_include_pad",
                    "applies to AveragePool only",
                ));
            }
            NodeOp::Pool(kind, window)
        }
        "GlobalAveragePool" => NodeOp::GlobalAveragePool,
        other => return Err(err(at, GraphErrorKind::UnknownOp(crate::text::clip(other)))),
    })
}

/// The op and output shape of a pooling node.
pub(super) fn infer(
    op: &NodeOp,
    shapes: &[&[usize]],
    _consts: &[bool],
    data: usize,
) -> Result<(Op, Vec<usize>), String> {
    let x = shapes[data];
    let rank = x.len();
    Ok(match op {
        NodeOp::Pool(kind, w) => {
            if rank != 4 {
                return Err("pooling expects an NCHW tensor".into());
            }
            let [ho, wo] = w
                .output_hw([x[2], x[3]])
                .ok_or("the window exceeds the padded input")?;
            // Per sample: channels x outputs x window.
            bounds::size::product(&[x[1], ho, wo, w.kernel[0], w.kernel[1]])
                .filter(|&r| r <= MAX_POOL_READS)
                .ok_or(format!(
                    "{} x {ho} x {wo} outputs of a {} x {} window read more than {MAX_POOL_READS} elements a sample",
                    x[1], w.kernel[0], w.kernel[1]
                ))?;
            (
                Op::Pool {
                    kind: *kind,
                    window: *w,
                },
                vec![x[0], x[1], ho, wo],
            )
        }
        NodeOp::GlobalAveragePool => {
            if rank < 3 {
                return Err("GlobalAveragePool expects [N, C, spatial...]".into());
            }
            let mut out = vec![x[0], x[1]];
            out.resize(rank, 1);
            (Op::GlobalPool, out)
        }
        _ => return Err("not an op of this family".into()),
    })
}

pub(super) type LayerNode = (Op, Vec<usize>, Vec<usize>);

/// The node of a crossbar layer on an input of `shape`: op, output shape, weight shape.
pub(super) fn layer_node(
    spec: &LayerSpec,
    shape: &[usize],
    at: &str,
) -> Result<LayerNode, GraphError> {
    let g = &spec.geom;
    let n = shape[0];
    let mismatch = |expected: String| {
        err(
            at,
            GraphErrorKind::LayerGeometry {
                layer: crate::text::clip(&spec.name),
                expected,
                got: fmt_shape(shape),
            },
        )
    };
    match spec.kind {
        LayerKind::Conv => {
            let need = [n, g.in_channels, g.input_hw[0], g.input_hw[1]];
            if shape != need {
                return Err(mismatch(fmt_shape(&need)));
            }
            let [ho, wo] = g.output_hw();
            let weight = vec![
                g.out_channels,
                g.in_channels / g.groups,
                g.kernel[0],
                g.kernel[1],
            ];
            Ok((Op::Conv(g.clone()), vec![n, g.out_channels, ho, wo], weight))
        }
        LayerKind::Fc if g.vectors_per_sample() > 1 || shape.len() == 3 => {
            // A projection over a sequence: [N, T, in] -> [N, T, out] (T may be 1).
            let tokens = g.vectors_per_sample();
            let need = [n, tokens, g.in_channels];
            if shape != need {
                return Err(mismatch(fmt_shape(&need)));
            }
            let op = Op::Fc {
                in_features: g.in_channels,
                out_features: g.out_channels,
                tokens,
            };
            Ok((
                op,
                vec![n, tokens, g.out_channels],
                vec![g.out_channels, g.in_channels],
            ))
        }
        LayerKind::Fc => {
            // As for a layer's input trace: [N, in], or [N, C, H, W] with C*H*W = in.
            let fits = match shape.len() {
                2 | 4 => shape[1..].iter().product::<usize>() == g.in_channels,
                _ => false,
            };
            if !fits {
                return Err(mismatch(format!(
                    "[N, {0}] (or [N, C, H, W] with C*H*W = {0})",
                    g.in_channels
                )));
            }
            let op = Op::Fc {
                in_features: g.in_channels,
                out_features: g.out_channels,
                tokens: 1,
            };
            Ok((
                op,
                vec![n, g.out_channels],
                vec![g.out_channels, g.in_channels],
            ))
        }
    }
}
