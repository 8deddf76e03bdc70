//! Element-wise ops: the activations (`Relu`, `Sigmoid`, `Tanh`, `HardSwish`, `Erf`,
//! `Sqrt`, `Gelu`, `Clip`, `LeakyRelu`, `HardSigmoid`) and the broadcasting binary ops
//! (`Add`, `Mul`, `Sub`, `Div`): their attributes and output shapes.

use serde_json::Value;

use crate::graph::{ActKind, Op};

use super::node::{attr_err, err, float, GraphError, GraphErrorKind, NodeOp, Obj};
use super::shape::{broadcast, fmt_shape};

/// The op of an activation or a binary element-wise node.
pub(super) fn parse(op: &str, o: &Obj, at: &str) -> Result<NodeOp, GraphError> {
    Ok(match op {
        "Relu" => NodeOp::Activation(ActKind::Relu),
        "Sigmoid" => NodeOp::Activation(ActKind::Sigmoid),
        "Tanh" => NodeOp::Activation(ActKind::Tanh),
        "HardSwish" => NodeOp::Activation(ActKind::HardSwish),
        "Erf" => NodeOp::Activation(ActKind::Erf),
        "Sqrt" => NodeOp::Activation(ActKind::Sqrt),
        "Gelu" => {
            match o.get("approximate") {
                None => {}
                Some(Value::String(m)) if m == "none" => {}
                Some(_) => {
                    return Err(attr_err(
                        at,
                        "approximate",
                        "only \"none\" (the erf form) is supported",
                    ))
                }
            }
            NodeOp::Activation(ActKind::Gelu)
        }
        "Sub" => NodeOp::Sub,
        "Div" => NodeOp::Div,
        "Clip" => {
            let min = float(o, "min", at, f32::MIN)?;
            let max = float(o, "max", at, f32::MAX)?;
            if min > max {
                return Err(attr_err(at, "min", "exceeds max"));
            }
            NodeOp::Activation(ActKind::Clip { min, max })
        }
        "LeakyRelu" => NodeOp::Activation(ActKind::LeakyRelu {
            alpha: float(o, "alpha", at, 0.01)?,
        }),
        "HardSigmoid" => NodeOp::Activation(ActKind::HardSigmoid {
            alpha: float(o, "alpha", at, 0.2)?,
            beta: float(o, "beta", at, 0.5)?,
        }),
        "Add" => NodeOp::Add,
        "Mul" => NodeOp::Mul,
        other => return Err(err(at, GraphErrorKind::UnknownOp(crate::text::clip(other)))),
    })
}

/// The op and output shape of an element-wise node.
pub(super) fn infer(
    op: &NodeOp,
    shapes: &[&[usize]],
    _consts: &[bool],
    data: usize,
) -> Result<(Op, Vec<usize>), String> {
    let x = shapes[data];
    let rank = x.len();
    Ok(match op {
        NodeOp::Activation(a) => (Op::Activation(*a), x.to_vec()),
        NodeOp::Add | NodeOp::Mul | NodeOp::Sub | NodeOp::Div => {
            let other = shapes[1 - data];
            let out = broadcast(shapes[0], shapes[1])?;
            if out[0] != x[0] || out.len() != rank {
                return Err(format!(
                    "the element-wise op with {} changes the shape",
                    fmt_shape(other)
                ));
            }
            let op = match op {
                NodeOp::Add => Op::Add,
                NodeOp::Mul => Op::Mul,
                NodeOp::Sub => Op::Sub,
                _ => Op::Div,
            };
            (op, out)
        }
        _ => return Err("not an op of this family".into()),
    })
}
