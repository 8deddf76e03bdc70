"""The numbers of a model, checked before the exporter runs it, and the node to blame
when a run of it gives NaN or an infinity: one line naming the model file, the node (its
index in the file, op and output) and its attribute or input, instead of a tensor the
exporter derived later (`gemm_0.weight`, `graph.reference`) or numpy's warnings.

- every float initializer a node reads, every tensor attribute (a Constant's value) and
  every float attribute must be finite (`inf.onnx: node 0 (Gemm -> y): input B (w): 1 of
  24 values are NaN or infinite; sresim refuses a tensor that is not finite`);
- a normalization's `epsilon` must be positive (sresim refuses LayerNormalization's
  otherwise; a negative one makes the square root of a negative variance);
- a run whose outputs or captured tensors hold NaN or an infinity, from finite inputs and
  weights, is blamed on the first node, in the graph's order, whose output does (Sqrt of
  a negative number, a division by zero, an overflow).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import numpy_helper

FLOATS = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
          onnx.TensorProto.BFLOAT16}

# Ops whose `epsilon` is added to a variance under a square root.
POSITIVE_EPSILON = {"LayerNormalization", "BatchNormalization", "InstanceNormalization",
                    "GroupNormalization"}


def node_labels(model):
    """{output tensor: "node I (OP -> OUTPUT)"} of every node of `model`, by its index in
    the file; kept before the exporter rewrites the graph (folding renumbers nodes)."""
    labels = {}
    for i, node in enumerate(model.graph.node):
        label = f"node {i} ({node.op_type} -> {node.output[0] if node.output else '?'})"
        for o in node.output:
            labels.setdefault(o, label)
    return labels


def _slots(node):
    """The schema's name of each of the node's inputs (`B` of a Gemm), or `input K`."""
    try:
        names = [p.name for p in onnx.defs.get_schema(node.op_type, domain=node.domain or "").inputs]
    except Exception:  # an op of a domain onnx does not know
        names = []
    return [names[k] if k < len(names) else (names[-1] if names else f"input {k}")
            for k in range(len(node.input))]


def _not_finite(arr):
    """How many values of a float array are NaN or infinite (0 for other dtypes)."""
    if arr.dtype.kind not in "fc" or not arr.size:
        return 0
    return int(arr.size - np.count_nonzero(np.isfinite(arr)))


def decoded(t, where, what):
    """The array of the TensorProto `t`; a tensor whose data does not decode to its dims and
    type (dims that disagree with the number of values, raw_data cut short, a data_type
    relabelled: float32 bytes called FLOAT16) is refused (ValueError, one line naming
    `where` and `what`: the initializer, or the node and attribute of a Constant's value).
    numpy's own message ("cannot reshape array of size 36 into shape (4,1,3)") names
    neither the file nor the tensor. The one decoding guard of the model's tensors."""
    try:
        return numpy_helper.to_array(t)
    except Exception as e:  # numpy's ValueError/TypeError, onnx's own refusals
        kind = onnx.TensorProto.DataType.Name(t.data_type) if t.data_type in \
            onnx.TensorProto.DataType.values() else str(t.data_type)
        held = (f"{len(t.raw_data)} bytes of raw_data" if t.HasField("raw_data")
                else "its values")
        raise ValueError(f"{where}: {what}: {held} do not decode to dims "
                         f"{list(t.dims)} of {kind} ({' '.join(str(e).split())})") from None


def check_initializers(model, where):
    """Refuses (ValueError, one line naming `where` and the initializer) an initializer
    whose data does not decode to its dims and type (see decoded)."""
    for t in model.graph.initializer:
        decoded(t, where, f"initializer {t.name}")


def check_values(model, where):
    """Refuses (ValueError, one line) a model whose weights or attributes sresim would
    refuse, naming `where` (the model file), the node and the attribute or input."""
    check_initializers(model, where)
    inits = {t.name: t for t in model.graph.initializer}
    labels = node_labels(model)
    for i, node in enumerate(model.graph.node):
        label = labels.get(node.output[0] if node.output else "", f"node {i} ({node.op_type})")
        for a in node.attribute:
            if a.type == onnx.AttributeProto.FLOAT and not math.isfinite(a.f):
                raise ValueError(f"{where}: {label}: {a.name}: {a.f} is not a finite number")
            if a.type == onnx.AttributeProto.FLOATS and not all(math.isfinite(v) for v in a.floats):
                raise ValueError(f"{where}: {label}: {a.name}: not every value is a finite number")
            tensors = ([a.t] if a.type == onnx.AttributeProto.TENSOR else
                       list(a.tensors) if a.type == onnx.AttributeProto.TENSORS else [])
            for t in tensors:
                # a Constant's value: decoded under the initializers' guard, naming the node
                arr = decoded(t, where, f"{label}: {a.name}")
                bad = _not_finite(arr)
                if bad:
                    raise ValueError(f"{where}: {label}: {a.name}: {bad} of {arr.size} values are NaN "
                                     f"or infinite; sresim refuses a tensor that is not finite")
        if node.op_type in POSITIVE_EPSILON:
            eps = next((a.f for a in node.attribute if a.name == "epsilon"), None)
            if eps is not None and not eps > 0:
                raise ValueError(f"{where}: {label}: epsilon: {eps:g} (expected a positive number)")
        for slot, name in zip(_slots(node), node.input):
            t = inits.get(name)
            if t is None or t.data_type not in FLOATS:
                continue
            arr = numpy_helper.to_array(t)
            bad = _not_finite(arr)
            if bad:
                raise ValueError(f"{where}: {label}: input {slot} ({name}): {bad} of {arr.size} values "
                                 f"are NaN or infinite; sresim refuses a tensor that is not finite")


def check_run(model, batch, feeds, arrays, where, labels):
    """After a run of `model` on `batch` gave `arrays` ({name: array}): when one holds NaN
    or an infinity, raises naming the first node whose output does (`labels` from
    node_labels of the model as the user wrote it). The batch must be finite."""
    if not any(_not_finite(np.asarray(a)) for a in arrays.values()):
        return
    from .capture import run_capture  # capture imports onnxruntime

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        infos = list(inferred.graph.value_info) + list(inferred.graph.output)
        types = {v.name: v.type.tensor_type.elem_type for v in infos}
    except Exception:  # no types: every output is tried as float
        types = {}
    outputs = [o for node in model.graph.node for o in node.output if o]
    wanted = [o for o in outputs if types.get(o, onnx.TensorProto.FLOAT) in FLOATS]
    try:
        captured, _ = run_capture(model, batch, wanted, feeds,
                                  {o: types.get(o, onnx.TensorProto.FLOAT) for o in wanted})
    except ValueError:
        captured = {}
    for o in wanted:
        v = captured.get(o)
        if v is None or not _not_finite(v):
            continue
        flat = ~np.isfinite(v.reshape(len(v), -1))
        sample = int(np.argmax(flat.any(axis=1)))
        label = labels.get(o, f"the node -> {o}")
        raise ValueError(f"{where}: {label}: its output is NaN or infinite on sample {sample}, its "
                         f"inputs finite (a value outside the op's domain, such as the square root of "
                         f"a negative number, or an overflow)")
    name = next(n for n, a in arrays.items() if _not_finite(np.asarray(a)))
    raise ValueError(f"{where}: the run gives NaN or infinite values in {name}")
