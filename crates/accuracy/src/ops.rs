//! The ops of a bundle graph other than the crossbar layers, in float64 over ndarray, with
//! ONNX's meanings (opset 13). Tensors carry the batch dimension (1: a sample at a time).

use ndarray::{ArrayD, Axis, IxDyn, Slice};
use network::graph::{ActKind, PoolKind, PoolWindow};

/// An element-wise activation, in place.
pub fn activation(kind: ActKind, x: &mut ArrayD<f64>) -> Result<(), String> {
    match kind {
        ActKind::Relu => x.mapv_inplace(|v: f64| v.max(0.0)),
        ActKind::Relu6 => x.mapv_inplace(|v: f64| v.clamp(0.0, 6.0)),
        ActKind::LeakyRelu { alpha } => {
            let a = alpha as f64;
            x.mapv_inplace(move |v: f64| if v < 0.0 { a * v } else { v })
        }
        ActKind::Sigmoid => x.mapv_inplace(|v: f64| 1.0 / (1.0 + (-v).exp())),
        ActKind::Silu => x.mapv_inplace(|v: f64| v / (1.0 + (-v).exp())),
        ActKind::Tanh => x.mapv_inplace(f64::tanh),
        ActKind::Clip { min, max } => {
            let (lo, hi) = (min as f64, max as f64);
            x.mapv_inplace(move |v: f64| v.max(lo).min(hi))
        }
        ActKind::HardSigmoid { alpha, beta } => {
            let (a, b) = (alpha as f64, beta as f64);
            x.mapv_inplace(move |v: f64| (a * v + b).clamp(0.0, 1.0))
        }
        ActKind::HardSwish => x.mapv_inplace(|v: f64| v * (v / 6.0 + 0.5).clamp(0.0, 1.0)),
        ActKind::Erf => x.mapv_inplace(libm::erf),
        ActKind::Sqrt => x.mapv_inplace(f64::sqrt),
        // The erf form (ONNX Gelu, approximate "none"; torch's nn.GELU()).
        ActKind::Gelu => {
            x.mapv_inplace(|v: f64| 0.5 * v * (1.0 + libm::erf(v / std::f64::consts::SQRT_2)))
        }
    }
    Ok(())
}

/// MaxPool / AveragePool of an `[1, C, H, W]` tensor into `out_shape`.
pub fn pool(
    kind: PoolKind,
    w: &PoolWindow,
    x: &ArrayD<f64>,
    out_shape: &[usize],
) -> Result<ArrayD<f64>, String> {
    let s = x.shape();
    if s.len() != 4 || out_shape.len() != 4 {
        return Err(format!("pooling needs an [N, C, H, W] tensor, got {s:?}"));
    }
    let (c_n, h, wd) = (s[1], s[2] as isize, s[3] as isize);
    let (ho_n, wo_n) = (out_shape[2], out_shape[3]);
    let [kh, kw] = w.kernel;
    let [sh, sw] = w.strides;
    let [pt, pl, pb, pr] = w.pads.map(|p| p as isize);
    let x4 = x
        .view()
        .into_dimensionality::<ndarray::Ix4>()
        .map_err(|e| e.to_string())?;
    let mut out = ArrayD::<f64>::zeros(IxDyn(out_shape));
    for n in 0..s[0] {
        for c in 0..c_n {
            for ho in 0..ho_n {
                for wo in 0..wo_n {
                    let h0 = (ho * sh) as isize - pt;
                    let w0 = (wo * sw) as isize - pl;
                    let mut best = f64::NEG_INFINITY;
                    let (mut sum, mut inside, mut padded) = (0.0, 0usize, 0usize);
                    for i in 0..kh as isize {
                        for j in 0..kw as isize {
                            let (y, xx) = (h0 + i, w0 + j);
                            if y >= -pt && y < h + pb && xx >= -pl && xx < wd + pr {
                                padded += 1;
                            }
                            if y < 0 || y >= h || xx < 0 || xx >= wd {
                                continue;
                            }
                            let v = x4[[n, c, y as usize, xx as usize]];
                            best = best.max(v);
                            sum += v;
                            inside += 1;
                        }
                    }
                    out[[n, c, ho, wo]] = match kind {
                        PoolKind::Max => best,
                        PoolKind::Avg => {
                            let d = if w.count_include_pad { padded } else { inside };
                            sum / d.max(1) as f64
                        }
                    };
                }
            }
        }
    }
    Ok(out)
}

/// GlobalAveragePool: the mean over every position of each channel, `[N, C, 1, 1]`.
pub fn global_pool(x: &ArrayD<f64>, out_shape: &[usize]) -> Result<ArrayD<f64>, String> {
    let s = x.shape();
    if s.len() < 3 {
        return Err(format!("GlobalAveragePool needs [N, C, ...], got {s:?}"));
    }
    let positions: usize = s[2..].iter().product();
    let flat = x
        .to_shape((s[0], s[1], positions))
        .map_err(|e| e.to_string())?;
    let mean = flat.sum_axis(Axis(2)) / positions.max(1) as f64;
    reshape(mean.into_dyn(), out_shape)
}

/// The tensor with its elements in row-major order laid out as `shape`.
pub fn reshape(x: ArrayD<f64>, shape: &[usize]) -> Result<ArrayD<f64>, String> {
    let x = if x.is_standard_layout() {
        x
    } else {
        x.as_standard_layout().into_owned()
    };
    x.into_shape_with_order(IxDyn(shape))
        .map_err(|e| e.to_string())
}

/// The element-wise ops of two tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    Add,
    Mul,
    Sub,
    Div,
}

/// An element-wise op of two tensors, broadcasting as numpy.
pub fn binary(op: Binary, a: &ArrayD<f64>, b: &ArrayD<f64>) -> Result<ArrayD<f64>, String> {
    let shape = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| {
        format!(
            "shapes {:?} and {:?} do not broadcast",
            a.shape(),
            b.shape()
        )
    })?;
    let av = a.broadcast(IxDyn(&shape)).ok_or("broadcast")?;
    let bv = b.broadcast(IxDyn(&shape)).ok_or("broadcast")?;
    Ok(match op {
        Binary::Add => &av + &bv,
        Binary::Mul => &av * &bv,
        Binary::Sub => &av - &bv,
        Binary::Div => &av / &bv,
    })
}

pub(crate) fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let at = |s: &[usize], i: usize| {
        let off = n - s.len();
        if i < off {
            1
        } else {
            s[i - off]
        }
    };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Concatenation along `axis`; an input of leading dimension 1 among inputs of n samples
/// (a constant class token) is repeated for every sample.
pub fn concat(xs: &[&ArrayD<f64>], axis: usize) -> Result<ArrayD<f64>, String> {
    // Row-major inputs: each contributes one contiguous run per index of the axes before
    // `axis`, copied as it lies (the channels of an [N, C, H, W] concat, sample by sample).
    if let (Some(first), true) = (xs.first(), xs.iter().all(|x| x.is_standard_layout())) {
        let shape = first.shape();
        let same = |x: &&&ArrayD<f64>| {
            x.ndim() == shape.len()
                && x.shape()
                    .iter()
                    .zip(shape)
                    .enumerate()
                    .all(|(i, (a, b))| i == axis || a == b)
        };
        if axis < shape.len() && xs.iter().all(|x| same(&x)) {
            let outer: usize = shape[..axis].iter().product();
            let mut out_shape = shape.to_vec();
            out_shape[axis] = xs.iter().map(|x| x.shape()[axis]).sum();
            let mut out = Vec::with_capacity(out_shape.iter().product());
            let runs: Vec<(&[f64], usize)> = xs
                .iter()
                .filter_map(|x| {
                    let s = x.as_slice()?;
                    Some((s, s.len() / outer.max(1)))
                })
                .collect();
            if runs.len() == xs.len() {
                for o in 0..outer {
                    for (s, run) in &runs {
                        out.extend_from_slice(&s[o * run..][..*run]);
                    }
                }
                return ArrayD::from_shape_vec(IxDyn(&out_shape), out).map_err(|e| e.to_string());
            }
        }
    }
    let n = xs
        .iter()
        .map(|x| x.shape().first().copied().unwrap_or(1))
        .max()
        .unwrap_or(1);
    let views = xs
        .iter()
        .map(|x| {
            let mut shape = x.shape().to_vec();
            match shape.first_mut() {
                Some(d) if *d == 1 && axis != 0 => *d = n,
                _ => {}
            }
            x.broadcast(IxDyn(&shape))
                .ok_or("broadcast of a concatenated input")
        })
        .collect::<Result<Vec<_>, _>>()?;
    ndarray::concatenate(Axis(axis), &views).map_err(|e| e.to_string())
}

/// Constant padding: `pads` holds the begins of every axis, then the ends.
pub fn pad(x: &ArrayD<f64>, pads: &[usize], value: f64) -> Result<ArrayD<f64>, String> {
    let rank = x.ndim();
    if pads.len() != 2 * rank {
        return Err(format!("{} pads for a rank-{rank} tensor", pads.len()));
    }
    let shape: Vec<usize> = (0..rank)
        .map(|i| x.shape()[i] + pads[i] + pads[i + rank])
        .collect();
    let mut out = ArrayD::from_elem(IxDyn(&shape), value);
    out.slice_each_axis_mut(|ax| {
        let i = ax.axis.index();
        Slice::from(pads[i]..pads[i] + x.shape()[i])
    })
    .assign(x);
    Ok(out)
}

pub fn softmax(x: &ArrayD<f64>, axis: usize) -> Result<ArrayD<f64>, String> {
    if axis >= x.ndim() {
        return Err(format!("axis {axis} of a rank-{} tensor", x.ndim()));
    }
    let mut out = x.clone();
    for mut lane in out.lanes_mut(Axis(axis)) {
        let m = lane.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        lane.mapv_inplace(|v| (v - m).exp());
        let s = lane.sum();
        lane.mapv_inplace(|v| v / s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(shape: &[usize], v: Vec<f64>) -> ArrayD<f64> {
        ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
    }

    #[test]
    fn pooling_matches_a_hand_computed_window() {
        let x = arr(&[1, 1, 3, 3], (1..=9).map(f64::from).collect());
        let w = PoolWindow::square(2, 1, 0);
        let m = pool(PoolKind::Max, &w, &x, &[1, 1, 2, 2]).unwrap();
        assert_eq!(m.iter().copied().collect::<Vec<_>>(), [5.0, 6.0, 8.0, 9.0]);
        let mut padded = PoolWindow::square(3, 1, 1);
        let a = pool(PoolKind::Avg, &padded, &x, &[1, 1, 3, 3]).unwrap();
        // corner: (1 + 2 + 4 + 5) / 4 without the padding
        assert_eq!(a[[0, 0, 0, 0]], 3.0);
        padded.count_include_pad = true;
        let a = pool(PoolKind::Avg, &padded, &x, &[1, 1, 3, 3]).unwrap();
        assert_eq!(a[[0, 0, 0, 0]], 12.0 / 9.0);
    }

    #[test]
    fn concat_copies_runs_as_ndarray_concatenates() {
        // Along every axis of [2, c, 2, 3] tensors, and of a transposed (not row-major)
        // input, which takes ndarray's own path.
        for axis in 0..4 {
            let mut shapes = [[2, 2, 2, 3], [2, 3, 2, 3]];
            shapes[1] = std::array::from_fn(|i| if i == axis { 3 } else { shapes[0][i] });
            let xs: Vec<ArrayD<f64>> = shapes
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let n: usize = s.iter().product();
                    arr(s, (0..n).map(|i| (i * 7 + k * 100) as f64).collect())
                })
                .collect();
            let refs: Vec<&ArrayD<f64>> = xs.iter().collect();
            let views: Vec<_> = xs.iter().map(|x| x.view()).collect();
            let want = ndarray::concatenate(Axis(axis), &views).unwrap();
            assert_eq!(concat(&refs, axis).unwrap(), want, "axis {axis}");
        }
        let a = arr(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]);
        let f = arr(&[2, 2], vec![5.0, 6.0, 7.0, 8.0]).reversed_axes();
        assert!(!f.is_standard_layout());
        let refs = [&a, &f];
        let want = ndarray::concatenate(Axis(1), &[a.view(), f.view()]).unwrap();
        assert_eq!(concat(&refs, 1).unwrap(), want);
    }

    #[test]
    fn broadcasting_add_and_mul() {
        let a = arr(&[1, 2, 2, 1], vec![1.0, 2.0, 3.0, 4.0]);
        let g = arr(&[1, 2, 1, 1], vec![10.0, 100.0]);
        let y = binary(Binary::Mul, &a, &g).unwrap();
        assert_eq!(
            y.iter().copied().collect::<Vec<_>>(),
            [10.0, 20.0, 300.0, 400.0]
        );
        assert!(binary(Binary::Add, &a, &arr(&[3, 1], vec![0.0; 3])).is_err());
        // [1, 2] - [2] and [1, 2] / [1, 1]: numpy's broadcasting.
        let x = arr(&[1, 2], vec![3.0, 8.0]);
        let d = binary(Binary::Sub, &x, &arr(&[2], vec![1.0, 2.0])).unwrap();
        assert_eq!(d.iter().copied().collect::<Vec<_>>(), [2.0, 6.0]);
        let q = binary(Binary::Div, &x, &arr(&[1, 1], vec![4.0])).unwrap();
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [0.75, 2.0]);
    }

    #[test]
    fn erf_gelu_and_sqrt_by_hand() {
        let run = |k: ActKind, v: Vec<f64>| {
            let mut x = arr(&[1, v.len()], v);
            activation(k, &mut x).unwrap();
            x.iter().copied().collect::<Vec<_>>()
        };
        // erf(1) = 0.8427007929497149 (Abramowitz and Stegun's table), odd.
        let e = run(ActKind::Erf, vec![0.0, 1.0, -1.0]);
        assert_eq!(e[0], 0.0);
        assert!((e[1] - 0.842_700_792_949_714_9).abs() < 1e-15 && e[2] == -e[1]);
        // GELU(x) = x (1 + erf(x / sqrt 2)) / 2: GELU(1) = 0.8413447460685429, GELU(-1) = -0.15865525393145707.
        let g = run(ActKind::Gelu, vec![1.0, -1.0, 0.0]);
        assert!((g[0] - 0.841_344_746_068_542_9).abs() < 1e-15, "{}", g[0]);
        assert!((g[1] + 0.158_655_253_931_457_07).abs() < 1e-15, "{}", g[1]);
        assert_eq!(g[2], 0.0);
        assert_eq!(run(ActKind::Sqrt, vec![4.0, 2.25]), [2.0, 1.5]);
    }

    #[test]
    fn pad_and_softmax() {
        let x = arr(&[1, 1, 1, 2], vec![1.0, 2.0]);
        let p = pad(&x, &[0, 0, 1, 0, 0, 0, 0, 1], -1.0).unwrap();
        assert_eq!(p.shape(), [1, 1, 2, 3]);
        assert_eq!(
            p.iter().copied().collect::<Vec<_>>(),
            [-1.0, -1.0, -1.0, 1.0, 2.0, -1.0]
        );
        let s = softmax(&arr(&[1, 2], vec![0.0, 0.0]), 1).unwrap();
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), [0.5, 0.5]);
    }
}
