"""Pruning at export time (no retraining).

- magnitude: per layer, the ceil(sparsity * size) weights of smallest |w| become 0
  (ties broken by flat index order, so the result is deterministic).
- ssl: structured, in the spirit of SSL (structured sparsity learning). A layer's
  candidate groups are its filters (one output channel: all [c, r, s] of it) and its
  unrolled rows (one (group, c, r, s): that weight across all filters of the group; for
  fc one input feature across all outputs). Groups are ranked by RMS (L2 norm divided by
  sqrt(group size), so filters and rows of different lengths compare fairly), and whole
  groups are zeroed, smallest first, until the layer's sparsity reaches the target. The
  achieved sparsity can exceed the target by at most one group.

- N:M ("2:4", "4:8", any 1 <= N < M <= 64): semi-structured, along the input dimension.
  A layer is its crossbar matrix: per conv group, K = (Cin/G)*R*S rows in the order
  k = (c*R + r)*S + s, one column per output channel (fc: K = in, one column per output).
  Each column's K rows are cut into groups of M consecutive rows, k in [j*M, (j+1)*M); in
  each group the N weights of largest |w| are kept (ties: the earlier row) and the others
  become 0. When M does not divide K the last group is shorter, as if K were padded with
  zeros to a multiple of M: it keeps at most N weights too. For an fc layer [out, in] a
  group is M consecutive input features of one output; for a 1x1 conv, M consecutive input
  channels; for an R x S kernel, M consecutive (c, r, s) positions of the unrolled filter
  (not M channels at one kernel position, the order of channel-last GPU kernels).
- heads: pruned attention heads (`heads`): whole heads of the Q, K and V projections'
  output rows (weights and biases) and the matching input columns of the output
  projection become 0.

All return new arrays; the inputs are never changed. Weights use the bundle layout:
conv [Cout, Cin/G, R, S] (G given), fc [out, in] (G = 1, R = S = 1).
"""

from __future__ import annotations

import numpy as np


def sparsity(weight):
    return float(np.mean(weight == 0))


def magnitude(weight, target):
    _check(target)
    flat = weight.reshape(-1).copy()
    k = int(np.ceil(target * flat.size - 1e-9))
    order = np.argsort(np.abs(flat), kind="stable")
    flat[order[:k]] = 0
    return flat.reshape(weight.shape)


def _as_groups(weight, groups):
    """View as [G, Cout/G, K] with K = (Cin/G)*R*S (row index k = (c*R + r)*S + s)."""
    cout = weight.shape[0]
    return weight.reshape(groups, cout // groups, -1)


def ssl(weight, target, groups=1):
    _check(target)
    w = _as_groups(np.array(weight, dtype=weight.dtype, copy=True), groups)
    g, m, k = w.shape
    mask = np.ones(w.shape, dtype=bool)
    # candidates: (rms, kind, group, index); kind 0 = filter, 1 = row
    filt = np.sqrt(np.mean(w.astype(np.float64) ** 2, axis=2))  # [G, M]
    rows = np.sqrt(np.mean(w.astype(np.float64) ** 2, axis=1))  # [G, K]
    cands = [(filt[gi, j], 0, gi, j) for gi in range(g) for j in range(m)]
    cands += [(rows[gi, j], 1, gi, j) for gi in range(g) for j in range(k)]
    cands.sort(key=lambda c: (c[0], c[1], c[2], c[3]))
    need = int(np.ceil(target * w.size - 1e-9))
    zeros = int(np.sum(w == 0))
    for _, kind, gi, j in cands:
        if zeros >= need:
            break
        sel = mask[gi, j, :] if kind == 0 else mask[gi, :, j]
        newly = int(np.sum(sel & (w[gi, j, :] != 0 if kind == 0 else w[gi, :, j] != 0)))
        if kind == 0:
            mask[gi, j, :] = False
        else:
            mask[gi, :, j] = False
        zeros += newly
    w = np.where(mask, w, 0).astype(weight.dtype)
    return w.reshape(weight.shape)


def parse_nm(method):
    """(N, M) of an N:M method such as "2:4", or None for any other method name. An N:M
    text that is malformed or out of range (1 <= N < M <= 64) raises ValueError."""
    if not isinstance(method, str) or ":" not in method:
        return None
    a, _, b = method.partition(":")
    try:
        n, m = int(a), int(b)
    except ValueError:
        raise ValueError(f"N:M pruning {method!r}: N and M must be integers, e.g. 2:4") from None
    if not 1 <= n < m <= 64:
        raise ValueError(f"N:M pruning {method!r}: expected 1 <= N < M <= 64, e.g. 2:4 or 4:8")
    return n, m


def n_m(weight, n, m, groups=1):
    """Keeps the N largest |w| of every M consecutive rows of each column (module doc)."""
    if not 1 <= n < m:
        raise ValueError(f"N:M pruning {n}:{m}: expected 1 <= N < M")
    w = _as_groups(np.array(weight, copy=True), groups)
    g, cols, k = w.shape
    blocks = -(-k // m)
    mag = np.full((g, cols, blocks * m), -1.0)
    mag[:, :, :k] = np.abs(w.astype(np.float64))
    mag = mag.reshape(g, cols, blocks, m)
    # rank within each group: stable on -|w|, so equal magnitudes keep the earlier row
    order = np.argsort(-mag, axis=3, kind="stable")
    keep = np.zeros(mag.shape, dtype=bool)
    np.put_along_axis(keep, order[..., :n], True, axis=3)
    keep = keep.reshape(g, cols, blocks * m)[:, :, :k]
    return np.where(keep, w, 0).astype(weight.dtype).reshape(weight.shape)


def is_n_m(weight, n, m, groups=1):
    """Whether every group of M consecutive rows of every column holds at most N
    non-zeros (the definition n_m guarantees)."""
    w = _as_groups(np.asarray(weight), groups)
    g, cols, k = w.shape
    blocks = -(-k // m)
    nz = np.zeros((g, cols, blocks * m), dtype=np.int64)
    nz[:, :, :k] = w != 0
    return bool(np.all(nz.reshape(g, cols, blocks, m).sum(axis=3) <= n))


def heads(q, k, v, o, num_heads, fraction, q_bias=None, k_bias=None, v_bias=None):
    """Prunes round(fraction * num_heads) attention heads of one attention block.

    `q`, `k`, `v` are the projections' weights [H*dh, D] (bundle layout: [out, in]), `o`
    the output projection's [D_out, H*dh]; head h is rows h*dh..(h+1)*dh of q, k and v and
    the same columns of o. A head's importance is the L2 norm of all its weights (its rows
    of q, k, v and its columns of o); the least important heads are pruned (ties: the
    earlier head). Returns (q, k, v, o, q_bias, k_bias, v_bias, pruned head indices), new
    arrays with the pruned heads' rows, columns and bias entries 0 (a bias given as None
    stays None)."""
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"head pruning fraction must be in [0, 1), got {fraction}")
    if num_heads < 1:
        raise ValueError(f"heads must be positive, got {num_heads}")
    rows = q.shape[0]
    if rows % num_heads or k.shape[0] != rows or v.shape[0] != rows or o.shape[1] != rows:
        raise ValueError(f"head pruning: q {list(q.shape)}, k {list(k.shape)}, v {list(v.shape)}, "
                         f"o {list(o.shape)} are not {num_heads} heads of equal width "
                         f"(q, k, v [H*dh, D] and o [D_out, H*dh])")
    dh = rows // num_heads
    norms = [sum(float(np.sum(np.asarray(t, dtype=np.float64)[h * dh:(h + 1) * dh] ** 2)) for t in (q, k, v))
             + float(np.sum(np.asarray(o, dtype=np.float64)[:, h * dh:(h + 1) * dh] ** 2))
             for h in range(num_heads)]
    count = int(round(fraction * num_heads))
    pruned = sorted(sorted(range(num_heads), key=lambda h: (norms[h], h))[:count])
    out = [np.array(t, copy=True) for t in (q, k, v, o)]
    biases = [None if b is None else np.array(b, copy=True) for b in (q_bias, k_bias, v_bias)]
    for h in pruned:
        sl = slice(h * dh, (h + 1) * dh)
        for t in out[:3]:
            t[sl] = 0
        out[3][:, sl] = 0
        for b in biases:
            if b is not None:
                b[sl] = 0
    return (*out, *biases, pruned)


def _check(target):
    if not 0.0 <= target < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {target}")


def prune(weight, method, target, groups=1):
    """`method` "magnitude" or "ssl" to sparsity `target`, or "N:M" (target unused)."""
    if method == "magnitude":
        return magnitude(weight, target)
    if method == "ssl":
        return ssl(weight, target, groups)
    nm = parse_nm(method)
    if nm:
        return n_m(weight, nm[0], nm[1], groups)
    raise ValueError(f"unknown pruning method {method!r} (magnitude, ssl, or N:M such as 2:4)")
