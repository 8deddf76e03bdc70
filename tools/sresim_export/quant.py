"""Constant weights of quantized ONNX graphs, as onnxruntime `quantize_static` writes them.

- QDQ format: a float Conv / ConvTranspose / Gemm / MatMul whose weight is the output of a
  DequantizeLinear of constant integers with constant scale and zero point.
- QOperator format: QLinearConv, QLinearMatMul and com.microsoft QGemm carry the integer
  weight, its scale and zero point as inputs; their input activation is quantized too
  (it is dequantized with the node's input scale and zero point when captured).

A weight is dequantized as onnxruntime does, `(q - zero_point) * scale`, per tensor or per
channel along `axis`; the result is exactly the float32 the runtime computes. Pruning
writes back by setting the pruned positions to the zero point, so they dequantize to 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import helper, numpy_helper


@dataclass
class Stored:
    """A constant weight as it is stored in the model."""
    init: str                       # initializer holding the stored values
    values: np.ndarray              # float32, in the stored layout (dequantized if quantized)
    quantized: np.ndarray = None    # the integer values, when quantized
    zero_point: np.ndarray = None   # broadcast to `quantized`'s shape
    how: str = "float"              # "float", or how it was dequantized (for the provenance)


def dequantize(q, scale, zero, axis, what):
    """(q - zero) * scale, with 1-D scale/zero along `axis` (per channel) or scalars."""
    q = np.asarray(q)
    scale = np.asarray(scale, np.float64)
    zero = np.zeros_like(scale, dtype=np.int64) if zero is None else np.asarray(zero, np.int64)
    if scale.size > 1:
        if scale.ndim != 1 or q.shape[axis] != scale.size:
            raise ValueError(f"{what}: scale of shape {list(scale.shape)} does not fit weight "
                             f"{list(q.shape)} along axis {axis}")
        shape = [1] * q.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    else:
        scale, zero = scale.reshape(()), zero.reshape(())
    zero_b = np.broadcast_to(zero, q.shape)
    values = ((q.astype(np.int64) - zero_b) * scale).astype(np.float32)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{what}: dequantized weight is not finite")
    return values, zero_b


def requantize(stored, new_values):
    """Integer values for `new_values` (the stored float weight after pruning): pruned
    (zero) positions take the zero point, the others keep their integers."""
    q = np.where(new_values == 0, stored.zero_point, stored.quantized)
    return q.astype(stored.quantized.dtype)


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def constant_weight(name, inits, producers):
    """The constant behind tensor `name`: an initializer, or a DequantizeLinear of
    constant integers. Returns (Stored, None) or (None, reason)."""
    if name in inits:
        arr = numpy_helper.to_array(inits[name])
        if arr.dtype.kind not in "f":
            return None, f"weight {name} is {arr.dtype}, not float (quantized without a DequantizeLinear)"
        return Stored(name, arr.astype(np.float32)), None
    node = producers.get(name)
    if node is None or node.op_type != "DequantizeLinear":
        return None, "weight is not a constant"
    return quantized_weight(node.input[0], node.input[1], node.input[2] if len(node.input) > 2 else "",
                            inits, _attr(node, "axis", 1), f"DequantizeLinear {node.name or name}",
                            block=_attr(node, "block_size", 0))


def quantized_weight(q_name, scale_name, zero_name, inits, axis, what, block=0):
    """Dequantizes the constant integer weight `q_name` with its scale and zero point."""
    missing = [n for n in (q_name, scale_name, zero_name) if n and n not in inits]
    if missing:
        return None, (f"quantized weight ({what}): {', '.join(missing)} not a constant, so the "
                      f"float weight cannot be recovered")
    if block:
        return None, f"quantized weight ({what}): blocked quantization (block_size {block}) is not dequantized"
    q = numpy_helper.to_array(inits[q_name])
    scale = numpy_helper.to_array(inits[scale_name])
    zero = numpy_helper.to_array(inits[zero_name]) if zero_name else None
    if q.dtype.kind not in "iu":
        return None, f"quantized weight ({what}): {q_name} is {q.dtype}, not an integer type"
    axis = axis % q.ndim if q.ndim else 0
    try:
        values, zero_b = dequantize(q, scale, zero, axis, what)
    except ValueError as e:
        return None, f"quantized weight: {e}"
    per = "per channel (axis %d)" % axis if np.asarray(scale).size > 1 else "per tensor"
    return Stored(q_name, values, q, zero_b, f"{q.dtype} {per}"), None


def input_scale(node, inits):
    """(scale, zero point) of a QOperator node's quantized input activation, or a reason."""
    scale_name, zero_name = node.input[1], node.input[2] if len(node.input) > 2 else ""
    missing = [n for n in (scale_name, zero_name) if n and n not in inits]
    if missing:
        return None, (f"quantized input: its scale/zero point {', '.join(missing)} is not a "
                      f"constant, so the float activation cannot be recovered")
    scale = numpy_helper.to_array(inits[scale_name]).astype(np.float64)
    zero = numpy_helper.to_array(inits[zero_name]) if zero_name else np.zeros((), np.uint8)
    if scale.size != 1 or np.asarray(zero).size != 1:
        return None, "quantized input with a per-channel scale is not dequantized"
    return (float(scale.reshape(())), int(np.asarray(zero).reshape(())), np.asarray(zero).dtype), None
