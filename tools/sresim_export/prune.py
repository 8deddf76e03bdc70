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

Both return a new array; the input is never changed. Weights use the bundle layout:
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


def _check(target):
    if not 0.0 <= target < 1.0:
        raise ValueError(f"sparsity must be in [0, 1), got {target}")


def prune(weight, method, target, groups=1):
    if method == "magnitude":
        return magnitude(weight, target)
    if method == "ssl":
        return ssl(weight, target, groups)
    raise ValueError(f"unknown pruning method {method!r} (magnitude, ssl)")
