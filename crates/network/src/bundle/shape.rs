//! Shape inference shared by every op family (an ONNX axis, numpy broadcasting, the size
//! limit of a tensor, how a shape is written in a message), and the ops that only move
//! or reshape a tensor: `Flatten`, `Reshape`, `Concat`, `Pad` (their attributes and their
//! output shapes).

use serde_json::Value;

use crate::graph::Op;

use super::node::{attr_err, err, float, int, ints, GraphError, GraphErrorKind, NodeOp, Obj};

/// Most elements of any tensor of a bundle graph, batch included (2^48: every byte count
/// of it fits u64 at any element width; the accuracy path then holds each tensor to
/// `limits.max_layer_bytes`, the memory model to its own tensor limit).
pub const MAX_TENSOR_ELEMENTS: u64 = 1 << 48;

/// The op of a `Flatten`, `Concat`, `Pad` or `Reshape` node.
pub(super) fn parse(op: &str, o: &Obj, at: &str) -> Result<NodeOp, GraphError> {
    Ok(match op {
        "Flatten" => NodeOp::Flatten(int(o, "axis", at, Some(1))?),
        "Concat" => NodeOp::Concat(int(o, "axis", at, None)?),
        "Pad" => {
            match o.get("mode") {
                None => {}
                Some(Value::String(m)) if m == "constant" => {}
                Some(_) => return Err(attr_err(at, "mode", "only \"constant\" is supported")),
            }
            let pads = ints(o, "pads", at)?.ok_or_else(|| attr_err(at, "pads", "absent"))?;
            if pads.iter().any(|&p| p < 0) {
                return Err(attr_err(at, "pads", "expected non-negative integers"));
            }
            NodeOp::Pad {
                pads,
                value: float(o, "value", at, 0.0)?,
            }
        }
        "Reshape" => {
            let shape = ints(o, "shape", at)?.ok_or_else(|| attr_err(at, "shape", "absent"))?;
            if shape.is_empty() || shape.iter().any(|&d| d < -1) {
                return Err(attr_err(at, "shape", "expected integers >= -1"));
            }
            if shape[1..].iter().filter(|&&d| d == -1).count() > 1 {
                return Err(attr_err(
                    at,
                    "shape",
                    "at most one -1 after the batch entry",
                ));
            }
            NodeOp::Reshape(shape)
        }
        other => return Err(err(at, GraphErrorKind::UnknownOp(crate::text::clip(other)))),
    })
}

/// The op and output shape of a `Flatten`, `Concat`, `Pad` or `Reshape` node.
pub(super) fn infer(
    op: &NodeOp,
    shapes: &[&[usize]],
    consts: &[bool],
    data: usize,
) -> Result<(Op, Vec<usize>), String> {
    let x = shapes[data];
    let rank = x.len();
    Ok(match op {
        NodeOp::Flatten(a) => {
            let ax = if *a == rank as i64 {
                rank
            } else {
                axis(*a, rank)?
            };
            if ax == 0 {
                return Err("Flatten axis 0 would merge the batch".into());
            }
            // Factors of the input's element count, which is bounded.
            let outer: usize = x[..ax].iter().product();
            let inner: usize = x[ax..].iter().product();
            (Op::Flatten { axis: ax }, vec![outer, inner])
        }
        NodeOp::Concat(a) => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("Concat along axis 0 would mix samples".into());
            }
            let mut out = x.to_vec();
            out[ax] = 0;
            for (s, &c) in shapes.iter().zip(consts) {
                // A constant of batch 1 (a class token) is repeated for every sample.
                let same = s.len() == rank
                    && (0..rank).all(|d| d == ax || s[d] == x[d] || (d == 0 && c && s[0] == 1));
                if !same {
                    return Err(format!(
                        "does not concatenate with {} along axis {ax}",
                        fmt_shape(s)
                    ));
                }
                out[ax] = bounds::size::add(out[ax], s[ax], "the concatenated axis")?;
            }
            (Op::Concat { axis: ax }, out)
        }
        NodeOp::Pad { pads, value } => {
            if pads.len() != 2 * rank {
                return Err(format!(
                    "pads has {} entries, expected {}",
                    pads.len(),
                    2 * rank
                ));
            }
            if pads[0] != 0 || pads[rank] != 0 {
                return Err("Pad must not pad the batch dimension".into());
            }
            let pads: Vec<usize> = pads.iter().map(|&p| p as usize).collect();
            let out = (0..rank)
                .map(|d| {
                    bounds::size::add(x[d], pads[d], "the padded size")
                        .and_then(|v| bounds::size::add(v, pads[d + rank], "the padded size"))
                })
                .collect::<Result<Vec<usize>, String>>()?;
            (
                Op::Pad {
                    pads,
                    value: *value,
                },
                out,
            )
        }
        NodeOp::Reshape(shape) => {
            // The first entry stands for the batch, whatever it says: one sample's shape
            // is what the rest describes (0 copies the input's dimension, -1 is inferred).
            let per_sample: usize = x[1..].iter().product();
            let mut out = vec![x[0]];
            let mut unknown = None;
            for (d, &s) in shape.iter().enumerate().skip(1) {
                out.push(match s {
                    0 => *x
                        .get(d)
                        .ok_or(format!("shape[{d}] = 0 copies no dimension"))?,
                    -1 => {
                        unknown = Some(d);
                        1
                    }
                    s => s as usize,
                });
            }
            let known = bounds::size::product(&out[1..])
                .and_then(|k| usize::try_from(k).ok())
                .ok_or(format!(
                    "cannot reshape to {shape:?}: its size overflows 64 bits"
                ))?;
            if let Some(d) = unknown {
                if known == 0 || !per_sample.is_multiple_of(known) {
                    return Err(format!("cannot reshape to {shape:?}"));
                }
                out[d] = per_sample / known;
            } else if known != per_sample {
                return Err(format!("cannot reshape to {shape:?}"));
            }
            (
                Op::Reshape {
                    shape: shape.clone(),
                },
                out,
            )
        }
        _ => return Err("not an op of this family".into()),
    })
}

/// A tensor of `shape` holds at most [`MAX_TENSOR_ELEMENTS`] (checked product).
pub(super) fn check_size(shape: &[usize]) -> Result<(), String> {
    bounds::size::elements(shape, MAX_TENSOR_ELEMENTS)
        .map(|_| ())
        .map_err(|e| format!("the output {} holds {e}", fmt_shape(shape)))
}

pub(super) fn fmt_shape(s: &[usize]) -> String {
    let parts: Vec<String> = s.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(", "))
}

pub(super) fn shape_err(at: &str, shape: &[usize], problem: String) -> GraphError {
    err(
        at,
        GraphErrorKind::Shape {
            shape: fmt_shape(shape),
            problem,
        },
    )
}

/// An ONNX axis in [-rank, rank) as an index.
pub(super) fn axis(a: i64, rank: usize) -> Result<usize, String> {
    let r = rank as i64;
    if a < -r || a >= r {
        return Err(format!("axis {a} outside [-{r}, {r})"));
    }
    Ok(if a < 0 { (a + r) as usize } else { a as usize })
}

/// numpy broadcasting of two shapes.
pub(super) fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], i: usize| -> usize {
        let off = rank - s.len();
        if i < off {
            1
        } else {
            s[i - off]
        }
    };
    (0..rank)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(format!(
                "does not broadcast with {} (numpy rules)",
                fmt_shape(b)
            )),
        })
        .collect()
}
