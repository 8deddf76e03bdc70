//! The ops a transformer adds to a bundle graph, in float64 over ndarray with ONNX's
//! meanings: LayerNormalization, Transpose, the product of two activations (MatMul:
//! attention scores and context, computed here and on no crossbar), Gather with constant
//! indices (the class token), and the token-major <-> channel-major moves of a crossbar
//! projection over a sequence.

use ndarray::{ArrayD, Axis, Ix2, Ix3, IxDyn};

use crate::ops::broadcast_shape;

/// ONNX LayerNormalization over the dimensions from `axis` on: (x - mean) / sqrt(var +
/// epsilon) (the variance divides by the count), times `scale`, plus `bias` (each
/// broadcast to those dimensions).
pub fn layer_norm(
    x: &ArrayD<f64>,
    axis: usize,
    epsilon: f64,
    scale: &ArrayD<f64>,
    bias: Option<&ArrayD<f64>>,
) -> Result<ArrayD<f64>, String> {
    let shape = x.shape();
    if axis == 0 || axis >= shape.len() {
        return Err(format!("axis {axis} of a rank-{} tensor", shape.len()));
    }
    let tail = &shape[axis..];
    let inner: usize = tail.iter().product();
    let spread = |a: &ArrayD<f64>, what: &str| -> Result<Vec<f64>, String> {
        a.broadcast(IxDyn(tail))
            .map(|v| v.iter().copied().collect())
            .ok_or(format!(
                "{what} {:?} does not broadcast to {tail:?}",
                a.shape()
            ))
    };
    let g = spread(scale, "scale")?;
    let b = match bias {
        Some(b) => spread(b, "bias")?,
        None => vec![0.0; inner],
    };
    let mut out = x.as_standard_layout().into_owned();
    let flat = out
        .as_slice_mut()
        .ok_or("a tensor not in standard layout")?;
    for row in flat.chunks_mut(inner.max(1)) {
        let mean = row.iter().sum::<f64>() / inner as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / inner as f64;
        let inv = 1.0 / (var + epsilon).sqrt();
        for ((v, &gi), &bi) in row.iter_mut().zip(&g).zip(&b) {
            *v = (*v - mean) * inv * gi + bi;
        }
    }
    Ok(out)
}

/// ONNX Transpose: output dimension i is input dimension `perm[i]`.
pub fn transpose(x: &ArrayD<f64>, perm: &[usize]) -> Result<ArrayD<f64>, String> {
    if perm.len() != x.ndim() {
        return Err(format!("perm {perm:?} of a rank-{} tensor", x.ndim()));
    }
    Ok(x.view()
        .permuted_axes(IxDyn(perm))
        .as_standard_layout()
        .into_owned())
}

/// The product of two tensors `[..., m, k] x [..., k, n]` of the same rank, their leading
/// dimensions broadcast as numpy's matmul does; each output summed over k in order.
pub fn matmul(a: &ArrayD<f64>, b: &ArrayD<f64>) -> Result<ArrayD<f64>, String> {
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra < 2 || ra != rb {
        return Err(format!("MatMul of {:?} and {:?}", a.shape(), b.shape()));
    }
    let (m, k, k2, n) = (
        a.shape()[ra - 2],
        a.shape()[ra - 1],
        b.shape()[ra - 2],
        b.shape()[ra - 1],
    );
    if k != k2 {
        return Err(format!(
            "MatMul of {:?} and {:?}: inner dimensions differ",
            a.shape(),
            b.shape()
        ));
    }
    let lead = broadcast_shape(&a.shape()[..ra - 2], &b.shape()[..ra - 2]).ok_or(format!(
        "MatMul of {:?} and {:?}: leading dimensions do not broadcast",
        a.shape(),
        b.shape()
    ))?;
    let spread = |x: &ArrayD<f64>, rows: usize, cols: usize| -> Result<ArrayD<f64>, String> {
        let mut s = lead.clone();
        s.extend([rows, cols]);
        x.broadcast(IxDyn(&s))
            .map(|v| v.as_standard_layout().into_owned())
            .ok_or("MatMul broadcast".to_string())
    };
    let (a, b) = (spread(a, m, k)?, spread(b, k, n)?);
    let count: usize = lead.iter().product();
    let a3 = a
        .into_shape_with_order((count, m, k))
        .map_err(|e| e.to_string())?;
    let b3 = b
        .into_shape_with_order((count, k, n))
        .map_err(|e| e.to_string())?;
    let mut out = ndarray::Array3::<f64>::zeros((count, m, n));
    for i in 0..count {
        for r in 0..m {
            for c in 0..n {
                out[[i, r, c]] = (0..k).map(|j| a3[[i, r, j]] * b3[[i, j, c]]).sum();
            }
        }
    }
    let mut shape = lead;
    shape.extend([m, n]);
    out.into_shape_with_order(IxDyn(&shape))
        .map_err(|e| e.to_string())
}

/// ONNX Gather of constant `indices` along `axis`; without `keep_axis` (one scalar index)
/// the axis is removed.
pub fn gather(
    x: &ArrayD<f64>,
    axis: usize,
    indices: &[usize],
    keep_axis: bool,
) -> Result<ArrayD<f64>, String> {
    if axis >= x.ndim() || indices.iter().any(|&i| i >= x.shape()[axis]) {
        return Err(format!(
            "indices {indices:?} along axis {axis} of {:?}",
            x.shape()
        ));
    }
    let picked = x.select(Axis(axis), indices);
    Ok(if keep_axis {
        picked
    } else {
        picked.index_axis_move(Axis(axis), 0)
    })
}

/// An embedding lookup: the rows of `table` (`[vocab, dim]`) that the token ids `ids`
/// pick, `ids shape + [dim]`. An id that is not a whole number in [0, vocab) is an error.
pub fn lookup(table: &ArrayD<f64>, ids: &ArrayD<f64>) -> Result<ArrayD<f64>, String> {
    let t = table
        .view()
        .into_dimensionality::<Ix2>()
        .map_err(|e| e.to_string())?;
    let (vocab, dim) = t.dim();
    let mut out = Vec::with_capacity(ids.len() * dim);
    for &id in ids.iter() {
        if !(id >= 0.0 && id < vocab as f64 && id.fract() == 0.0) {
            return Err(format!(
                "token id {id} is not a row of the {vocab}-row lookup table"
            ));
        }
        out.extend(t.row(id as usize).iter().copied());
    }
    let mut shape = ids.shape().to_vec();
    shape.push(dim);
    ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| e.to_string())
}

/// `[n, T, D]` (a sequence, token-major) as `[n, D, T]` flat: the order in which the
/// crossbar reads a projection's input vectors (channel-major, as a conv's positions).
pub fn tokens_to_channels(x: &ArrayD<f64>) -> Result<Vec<f64>, String> {
    let x3 = x
        .view()
        .into_dimensionality::<Ix3>()
        .map_err(|e| e.to_string())?;
    Ok(x3.permuted_axes([0, 2, 1]).iter().copied().collect())
}

/// `[n, E, T]` flat (a projection's outputs, channel-major) as the `[n, T, E]` sequence.
pub fn channels_to_tokens(
    y: Vec<f64>,
    n: usize,
    e: usize,
    t: usize,
) -> Result<ArrayD<f64>, String> {
    let y3 = ndarray::Array3::from_shape_vec((n, e, t), y).map_err(|e| e.to_string())?;
    Ok(y3
        .permuted_axes([0, 2, 1])
        .as_standard_layout()
        .into_owned()
        .into_dyn())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(shape: &[usize], v: Vec<f64>) -> ArrayD<f64> {
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
    }

    fn vals(a: &ArrayD<f64>) -> Vec<f64> {
        a.iter().copied().collect()
    }

    #[test]
    fn layer_norm_matches_a_hand_computed_row() {
        // Row [1, 3]: mean 2, variance 1; epsilon 0 gives [-1, 1], times [2, 3] plus [10, 20].
        let x = arr(&[1, 1, 2], vec![1.0, 3.0]);
        let y = layer_norm(
            &x,
            2,
            0.0,
            &arr(&[2], vec![2.0, 3.0]),
            Some(&arr(&[2], vec![10.0, 20.0])),
        )
        .unwrap();
        assert_eq!(vals(&y), [8.0, 23.0]);
        // With epsilon 3: (x - 2) / sqrt(1 + 3) = [-0.5, 0.5]; no bias.
        let y = layer_norm(&x, 2, 3.0, &arr(&[1], vec![1.0]), None).unwrap();
        assert_eq!(vals(&y), [-0.5, 0.5]);
        // Two rows are normalized separately; over axis 1 both rows form one group.
        let x = arr(&[1, 2, 2], vec![0.0, 2.0, 10.0, 14.0]);
        let y = layer_norm(&x, 2, 0.0, &arr(&[2], vec![1.0, 1.0]), None).unwrap();
        assert_eq!(vals(&y), [-1.0, 1.0, -1.0, 1.0]);
        let y = layer_norm(&x, 1, 0.0, &arr(&[1], vec![1.0]), None).unwrap();
        // mean 6.5, variance (42.25 + 20.25 + 12.25 + 56.25) / 4 = 32.75
        let s = 32.75f64.sqrt();
        for (got, want) in vals(&y).iter().zip([-6.5 / s, -4.5 / s, 3.5 / s, 7.5 / s]) {
            assert!((got - want).abs() < 1e-12, "{got} {want}");
        }
        assert!(layer_norm(&x, 2, 0.0, &arr(&[3], vec![1.0; 3]), None).is_err());
    }

    #[test]
    fn transpose_moves_axes() {
        // [1, 2, 3] with perm [0, 2, 1]: y[0, j, i] = x[0, i, j].
        let x = arr(&[1, 2, 3], (0..6).map(f64::from).collect());
        let y = transpose(&x, &[0, 2, 1]).unwrap();
        assert_eq!(y.shape(), [1, 3, 2]);
        assert_eq!(vals(&y), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert!(transpose(&x, &[0, 1]).is_err());
    }

    #[test]
    fn matmul_of_two_activations_by_hand() {
        // Two heads of [2, 2] x [2, 1].
        let a = arr(&[1, 2, 2, 2], vec![1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0]);
        let b = arr(&[1, 2, 2, 1], vec![5.0, 6.0, 7.0, 8.0]);
        let y = matmul(&a, &b).unwrap();
        assert_eq!(y.shape(), [1, 2, 2, 1]);
        // head 0: [1*5 + 2*6, 3*5 + 4*6] = [17, 39]; head 1: [8, 7]
        assert_eq!(vals(&y), [17.0, 39.0, 8.0, 7.0]);
        // A leading dimension of 1 broadcasts against 2.
        let one = arr(&[1, 1, 2, 1], vec![1.0, 1.0]);
        assert_eq!(vals(&matmul(&a, &one).unwrap()), [3.0, 7.0, 1.0, 1.0]);
        assert!(matmul(&a, &arr(&[1, 2, 3, 1], vec![0.0; 6])).is_err());
    }

    #[test]
    fn lookup_picks_rows_of_the_table_and_refuses_ids_outside_it() {
        // table [3, 2]: row r is [10r, 10r + 1]; ids [2, 2] (two samples of two tokens)
        let table = arr(&[3, 2], vec![0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
        let ids = arr(&[2, 2], vec![2.0, 0.0, 1.0, 1.0]);
        let y = lookup(&table, &ids).unwrap();
        assert_eq!(y.shape(), [2, 2, 2]);
        assert_eq!(vals(&y), [20.0, 21.0, 0.0, 1.0, 10.0, 11.0, 10.0, 11.0]);
        for bad in [3.0, -1.0, 0.5, f64::NAN] {
            let e = lookup(&table, &arr(&[1, 1], vec![bad])).unwrap_err();
            assert!(e.contains("is not a row of the 3-row lookup table"), "{e}");
        }
    }

    #[test]
    fn gather_picks_the_class_token() {
        // [1, 3, 2]: token 0 is [0, 1].
        let x = arr(&[1, 3, 2], (0..6).map(f64::from).collect());
        let cls = gather(&x, 1, &[0], false).unwrap();
        assert_eq!(cls.shape(), [1, 2]);
        assert_eq!(vals(&cls), [0.0, 1.0]);
        let kept = gather(&x, 1, &[2, 0], true).unwrap();
        assert_eq!(kept.shape(), [1, 2, 2]);
        assert_eq!(vals(&kept), [4.0, 5.0, 0.0, 1.0]);
        assert!(gather(&x, 1, &[3], false).is_err());
    }

    #[test]
    fn a_sequence_goes_to_the_crossbar_channel_major_and_back() {
        // Two samples, T = 3 tokens, D = 2.
        let x = arr(&[2, 3, 2], (0..12).map(f64::from).collect());
        let c = tokens_to_channels(&x).unwrap();
        assert_eq!(
            c,
            [0.0, 2.0, 4.0, 1.0, 3.0, 5.0, 6.0, 8.0, 10.0, 7.0, 9.0, 11.0]
        );
        let back = channels_to_tokens(c, 2, 2, 3).unwrap();
        assert_eq!(back, x);
    }
}
