//! Sequence ops, the transformer's: the product of two activations (`MatMul`),
//! `LayerNormalization`, `Transpose`, `Gather` (an index along an axis, or an embedding
//! lookup of token ids) and `Softmax`: their attributes and output shapes.

use crate::graph::Op;

use super::node::{attr_err, err, float, int, ints, GraphError, GraphErrorKind, NodeOp, Obj};
use super::shape::{axis, broadcast, fmt_shape};

/// The op of a `MatMul`, `LayerNormalization`, `Transpose`, `Gather` or `Softmax` node.
pub(super) fn parse(op: &str, o: &Obj, at: &str) -> Result<NodeOp, GraphError> {
    Ok(match op {
        "LayerNormalization" => {
            let epsilon = float(o, "epsilon", at, 1e-5)?;
            if epsilon <= 0.0 {
                return Err(attr_err(at, "epsilon", "expected a positive number"));
            }
            NodeOp::LayerNorm {
                axis: int(o, "axis", at, Some(-1))?,
                epsilon,
            }
        }
        "Transpose" => NodeOp::Transpose(ints(o, "perm", at)?),
        "MatMul" => NodeOp::MatMul,
        "Gather" if !o.contains_key("indices") => {
            if int(o, "axis", at, Some(0))? != 0 {
                return Err(attr_err(
                    at,
                    "axis",
                    "a lookup of token ids (no indices) is along axis 0 of the table",
                ));
            }
            NodeOp::Lookup
        }
        "Gather" => {
            let (indices, scalar) = match o.get("indices") {
                Some(v) if v.is_i64() => (vec![int(o, "indices", at, None)?], true),
                Some(_) => match ints(o, "indices", at)? {
                    Some(list) if !list.is_empty() => (list, false),
                    _ => {
                        return Err(attr_err(
                            at,
                            "indices",
                            "expected an integer or a non-empty list of integers",
                        ))
                    }
                },
                None => return Err(attr_err(at, "indices", "absent")),
            };
            NodeOp::Gather {
                axis: int(o, "axis", at, Some(0))?,
                indices,
                scalar,
            }
        }
        "Softmax" => NodeOp::Softmax(int(o, "axis", at, Some(-1))?),
        other => return Err(err(at, GraphErrorKind::UnknownOp(crate::text::clip(other)))),
    })
}

/// The op and output shape of a sequence node.
pub(super) fn infer(
    op: &NodeOp,
    shapes: &[&[usize]],
    _consts: &[bool],
    data: usize,
) -> Result<(Op, Vec<usize>), String> {
    let x = shapes[data];
    let rank = x.len();
    Ok(match op {
        NodeOp::Softmax(a) => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("Softmax over the batch axis would mix samples".into());
            }
            (Op::Softmax { axis: ax }, x.to_vec())
        }
        NodeOp::LayerNorm { axis: a, epsilon } => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("LayerNormalization over the batch axis would mix samples".into());
            }
            for s in &shapes[1..] {
                if broadcast(&x[ax..], s).ok().as_deref() != Some(&x[ax..]) {
                    return Err(format!(
                        "scale or bias {} does not broadcast to the normalized dimensions {}",
                        fmt_shape(s),
                        fmt_shape(&x[ax..])
                    ));
                }
            }
            (
                Op::LayerNorm {
                    axis: ax,
                    epsilon: *epsilon,
                },
                x.to_vec(),
            )
        }
        NodeOp::Transpose(perm) => {
            let perm: Vec<i64> = perm
                .clone()
                .unwrap_or_else(|| (0..rank as i64).rev().collect());
            // The length before the loop over it: what follows indexes the result.
            if perm.len() != rank {
                return Err(format!("perm {perm:?} is not a permutation of {rank} axes"));
            }
            let mut seen = vec![false; rank];
            let mut p = Vec::with_capacity(rank);
            for &d in &perm {
                if !(d >= 0 && (d as usize) < rank && !seen[d as usize]) {
                    return Err(format!("perm {perm:?} is not a permutation of {rank} axes"));
                }
                seen[d as usize] = true;
                p.push(d as usize);
            }
            if p.first() != Some(&0) {
                return Err(format!(
                    "perm {perm:?} moves the batch axis (expected perm[0] = 0)"
                ));
            }
            let out = p.iter().map(|&d| x[d]).collect();
            (Op::Transpose { perm: p }, out)
        }
        NodeOp::MatMul => {
            let (a, b) = (shapes[0], shapes[1]);
            if a.len() < 3 || b.len() != a.len() {
                return Err(format!(
                    "MatMul of {} and {}: expected two tensors of the same rank >= 3 ([N, ..., m, k] x [N, ..., k, n])",
                    fmt_shape(a),
                    fmt_shape(b)
                ));
            }
            let r = a.len();
            let (m, k, k2, n) = (a[r - 2], a[r - 1], b[r - 2], b[r - 1]);
            if k != k2 {
                return Err(format!(
                    "MatMul of {} and {}: inner dimensions {k} and {k2} differ",
                    fmt_shape(a),
                    fmt_shape(b)
                ));
            }
            let mut out = broadcast(&a[..r - 2], &b[..r - 2])?;
            if out[0] != x[0] {
                return Err("MatMul changes the batch".into());
            }
            out.extend([m, n]);
            // Per sample: every product of the leading dimensions, then m x k x n.
            let lead = bounds::size::product(&out[..r - 2])
                .and_then(|v| usize::try_from(v).ok())
                .ok_or("the MatMul's size overflows 64 bits")?;
            bounds::size::product(&[lead, m, k, n])
                .ok_or("the MatMul's multiply-accumulates overflow 64 bits")?;
            (
                Op::MatMul {
                    batch: lead,
                    m,
                    k,
                    n,
                },
                out,
            )
        }
        NodeOp::Lookup => {
            let (table, ids) = (shapes[0], shapes[1]);
            let [vocab, dim] = *table else {
                return Err(format!(
                    "a lookup table of shape {}: expected [vocab, dim]",
                    fmt_shape(table)
                ));
            };
            let mut out = ids.to_vec();
            out.push(dim);
            (Op::Embedding { vocab, dim }, out)
        }
        NodeOp::Gather {
            axis: a,
            indices,
            scalar,
        } => {
            let ax = axis(*a, rank)?;
            if ax == 0 {
                return Err("Gather along axis 0 would pick samples".into());
            }
            let len = x[ax] as i64;
            let resolved = indices
                .iter()
                .map(|&i| {
                    let j = if i < 0 { i + len } else { i };
                    (0..len)
                        .contains(&j)
                        .then_some(j as usize)
                        .ok_or(format!("index {i} outside [-{len}, {len}) of axis {ax}"))
                })
                .collect::<Result<Vec<usize>, String>>()?;
            let mut out = x[..ax].to_vec();
            if !*scalar {
                out.push(resolved.len());
            }
            out.extend_from_slice(&x[ax + 1..]);
            (
                Op::Gather {
                    axis: ax,
                    indices: resolved,
                    keep_axis: !*scalar,
                },
                out,
            )
        }
        _ => return Err("not an op of this family".into()),
    })
}
