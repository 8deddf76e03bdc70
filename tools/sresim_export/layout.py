"""Where the batch is in each tensor of a model: what lets a sequence model's graph be
rewritten batch first (docs/exporting.md, "Where the batch is").

A bundle graph carries the batch as the first axis of every tensor, and each of its ops
acts on one sample. ONNX models written by torch often move it: `nn.MultiheadAttention`
computes on `[T, N, D]` (sequence first), folds the batch into the heads (`[T, N*H, d]`)
and runs its output projection over `[T*N, D]`. The exporter finds the batch axis of
every tensor by running the model at batch 1 and at batch 2: the one axis whose size
doubles holds the batch, alone (`m` = 1) or merged with `m` other entries (`[T*N, D]`:
axis 0, m = T). The *batch-first form* of a tensor is then its value at batch 1 with that
axis moved to the front (merged axes keep their m entries in place): `[T, 1, D]` is
`[1, T, D]`, `[T*1, D]` is `[1, T, D]`. At batch 1 the two hold the same elements in the
same order, so each ONNX op becomes the op on batch-first tensors whose axes are mapped
by `axis_map`.

A model whose batch is fixed at 1 cannot be run at batch 2: its tensors are then taken to
carry the batch first, as before, and a tensor whose first axis is not of size 1 has no
known batch axis (an op that needs it is refused, naming the tensor and saying to export
the model with a dynamic batch axis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Batch:
    """The batch axis of a tensor (ONNX axis `axis`, normalized) and how many other
    entries share it (`m`; 1 when the axis is the batch alone)."""
    axis: int
    m: int = 1

    @property
    def merged(self):
        return self.m > 1


TRIVIAL = Batch(0, 1)


def find_batch_axes(values1, values2):
    """{tensor: Batch or None} for every tensor of `values1` (the model's values at batch
    1) whose shape changes at batch 2 (`values2`): None where the change is not a single
    axis doubling. `values2` None (the model runs at batch 1 only): every tensor whose
    first axis is 1 gets TRIVIAL."""
    out = {}
    for name, v1 in values1.items():
        s1 = np.shape(v1)
        if values2 is None:
            if len(s1) and s1[0] == 1:
                out[name] = TRIVIAL
            continue
        if name not in values2:
            continue
        s2 = np.shape(values2[name])
        if s1 == s2:
            continue
        diff = [i for i in range(len(s1)) if len(s1) == len(s2) and s1[i] != s2[i]]
        if len(diff) == 1 and s2[diff[0]] == 2 * s1[diff[0]]:
            out[name] = Batch(diff[0], int(s1[diff[0]]))
        else:
            out[name] = None
    return out


def first_shape(shape, b):
    """The batch-first shape (at batch 1) of a tensor of ONNX `shape` (at batch 1) whose
    batch is `b`."""
    shape = list(shape)
    if b.merged:
        return [1] + shape
    return [1] + shape[:b.axis] + shape[b.axis + 1:]


def axis_map(rank, b):
    """ONNX axis (normalized, in [0, rank)) -> batch-first axis, for a tensor of `rank`
    whose batch is `b`; the batch axis itself maps to None (it is not one sample's axis;
    with a merged batch it maps to the merged axis, which holds other entries too, and
    `merged_axis` says which that is)."""
    out = {}
    for a in range(rank):
        if b.merged:
            out[a] = a + 1
        elif a == b.axis:
            out[a] = None
        else:
            out[a] = a + 1 if a < b.axis else a
    return out


def to_first(value, b):
    """A value at batch 1 in its batch-first form (the same elements, reshaped)."""
    return np.reshape(value, first_shape(np.shape(value), b))


def constant_first(value, b, data_rank, data_b):
    """A constant operand of an element-wise op or a Concat with a data tensor of ONNX
    rank `data_rank` whose batch is `data_b`, in the batch-first form of that op.
    `b`: the constant's own batch axis when it depends on the batch size (an expanded
    class token, an attention mask built from the input's shape), else None. Returns the
    array, or raises ValueError when the constant varies along the data's batch axis."""
    value = np.asarray(value)
    r = value.ndim
    if b is not None:
        if data_rank - data_b.axis != r - b.axis or b.merged != data_b.merged:
            raise ValueError(f"its batch axis {b.axis} does not line up with the data's {data_b.axis}")
        return to_first(value, b)
    k = data_b.axis - (data_rank - r)       # the data's batch axis, counted in the constant
    if data_b.merged:
        return value[None] if r == data_rank else value
    if k < 0:
        return value
    if value.shape[k] != 1:
        raise ValueError(f"it varies along the batch axis {data_b.axis} of the data ({list(value.shape)})")
    return to_first(value, Batch(k, 1))
