"""Finding the crossbar-mapped layers of an ONNX graph.

A layer is a node that multiplies its input by a constant weight matrix:
- `Conv` (2-D) and `QLinearConv`: a conv layer with the node's geometry;
- `ConvTranspose` (2-D): a conv layer over the zero-inserted input (see tconv.py);
- `Gemm`, com.microsoft `QGemm`, `MatMul` and `QLinearMatMul` with a constant right
  operand: an fc layer (weight stored [out, in], times Gemm's `alpha`).
A weight is constant when it is an initializer, or the DequantizeLinear of constant
integers (quant.py). For each layer we record the node, the tensor entering it (captured
later by running the model), the weight as the bundle stores it, and how to write a
changed weight back into the model.

Every other node that carries a constant weight is returned with the reason it is not
mapped, so that the exporter can list it (`note:` and `provenance.not_exported`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from onnx import helper

from . import quant, tconv
from .graph import initializers, set_init

# Op types that carry a weight but are not mapped, and why (listed when a weight input is
# a constant).
NOT_MAPPED = {
    "ConvInteger": "dynamic quantization (ConvInteger): the weight scale is applied by a later Mul, "
                   "so the float weight is not recovered; quantize with quantize_static or export the float model",
    "MatMulInteger": "dynamic quantization (MatMulInteger): the weight scale is applied by a later Mul, "
                     "so the float weight is not recovered; quantize with quantize_static or export the float model",
    "DynamicQuantizeMatMul": "dynamic quantization (DynamicQuantizeMatMul) is not dequantized; "
                             "quantize with quantize_static or export the float model",
    "MatMulIntegerToFloat": "dynamic quantization (MatMulIntegerToFloat) is not dequantized; "
                            "quantize with quantize_static or export the float model",
    "MatMulNBits": "blockwise low-bit quantization (MatMulNBits) is not dequantized; export the float model",
    "QLinearConvTranspose": "quantized transposed conv (QLinearConvTranspose) is not dequantized; "
                            "use the QDQ format or export the float model",
    "FusedConv": "fused conv (an onnxruntime-optimized model): export the model before optimization",
    "FusedGemm": "fused Gemm (an onnxruntime-optimized model): export the model before optimization",
    "FusedMatMul": "fused MatMul (an onnxruntime-optimized model): export the model before optimization",
    "LSTM": "recurrent layers are not mapped",
    "GRU": "recurrent layers are not mapped",
    "RNN": "recurrent layers are not mapped",
    "Einsum": "Einsum is not mapped",
    "Attention": "fused attention is not mapped",
}


@dataclass
class LayerRef:
    name: str                 # node name (made unique), used as the bundle layer name
    kind: str                 # "conv" or "fc"
    op: str                   # ONNX op type
    node_index: int
    input_tensor: str         # tensor entering the layer
    stored: quant.Stored      # the weight as the model stores it
    layout: str               # stored -> bundle: "same", "T" (transposed) or "tconv"
    weight: np.ndarray        # bundle layout: conv [Cout, Cin/G, R, S], fc [out, in]
    alpha: float = 1.0        # Gemm's alpha, folded into the bundle weight
    stride: tuple = (1, 1)
    pads: tuple = (0, 0, 0, 0)  # (top, left, bottom, right); see graph.resolve_pads
    auto_pad: str = "NOTSET"
    dilation: tuple = (1, 1)
    groups: int = 1
    input_quant: tuple = None   # (scale, zero point, dtype) of a quantized input activation
    attrs: dict = field(default_factory=dict)  # the node's attributes (ConvTranspose)
    output_tensor: str = ""     # ConvTranspose: its output, to check the rebuilt conv
    bias: str = ""              # ConvTranspose: its bias input, if any

    @property
    def weight_init(self):
        return self.stored.init

    def bundle_weight(self, values):
        if self.layout == "T":
            w = values.T
        elif self.layout == "tconv":
            w = tconv.to_conv_weight(values, self.groups)
        else:
            w = values
        return np.ascontiguousarray(w * np.float32(self.alpha) if self.alpha != 1 else w, dtype=np.float32)

    def stored_values(self, weight):
        w = weight / np.float32(self.alpha) if self.alpha != 1 else weight
        if self.layout == "T":
            return np.ascontiguousarray(w.T)
        if self.layout == "tconv":
            return tconv.from_conv_weight(w, self.groups)
        return w


def write_weight(model, layer):
    """Writes `layer.weight` (changed by pruning) back into the model's initializer."""
    values = layer.stored_values(layer.weight)
    if layer.stored.quantized is None:
        set_init(model, layer.weight_init, values)
    else:
        set_init(model, layer.weight_init, quant.requantize(layer.stored, values))


def _attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def _conv_geometry(a):
    auto = a.get("auto_pad", "NOTSET")
    return dict(stride=tuple(a.get("strides", [1, 1])),
                pads=tuple(a.get("pads", [0, 0, 0, 0])) if auto == "NOTSET" else (0, 0, 0, 0),
                dilation=tuple(a.get("dilations", [1, 1])), groups=int(a.get("group", 1)), auto_pad=auto)


def find_layers(model):
    """The crossbar-mapped layers in execution order, and the weight-bearing nodes that
    cannot be mapped, as (name, op type, reason)."""
    inits = initializers(model)
    producers = {out: n for n in model.graph.node for out in n.output}
    layers, skipped, used = [], [], set()

    def const_like(name):
        p = producers.get(name)
        return name in inits or (p is not None and p.op_type == "DequantizeLinear" and p.input[0] in inits)

    for idx, node in enumerate(model.graph.node):
        op = node.op_type
        if op not in ("Conv", "ConvTranspose", "Gemm", "MatMul", "QLinearConv", "QLinearMatMul",
                      "QGemm") and op not in NOT_MAPPED:
            continue
        if op == "MatMul" and not any(const_like(n) for n in node.input):
            continue  # activation x activation (attention scores): no weight
        if op in NOT_MAPPED and not any(const_like(n) for n in node.input[1:]):
            continue
        base = node.name or f"{op.lower()}_{idx}"
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        if op in NOT_MAPPED:
            skipped.append((name, op, NOT_MAPPED[op]))
            continue
        layer, why = _layer(node, idx, name, _attrs(node), inits, producers)
        if layer is None:
            skipped.append((name, op, why))
        else:
            layers.append(layer)
    return layers, skipped


def _layer(node, idx, name, a, inits, producers):
    """A LayerRef for a mappable node, or (None, reason)."""
    op, ins = node.op_type, list(node.input)
    input_quant = None
    if op in ("QLinearConv", "QLinearMatMul", "QGemm"):
        input_quant, why = quant.input_scale(node, inits)
        if input_quant is None:
            return None, why
        axis = {"QLinearConv": 0, "QLinearMatMul": 1, "QGemm": 0 if a.get("transB", 0) else 1}[op]
        stored, why = quant.quantized_weight(ins[3], ins[4], ins[5] if len(ins) > 5 else "", inits,
                                             axis, f"{op} {name}")
    else:
        stored, why = quant.constant_weight(ins[1], inits, producers)
        if stored is None and op == "MatMul" and quant.constant_weight(ins[0], inits, producers)[0] is not None:
            return None, "MatMul with a constant left operand is not mapped"
    if stored is None:
        kind = {"Conv": "conv", "ConvTranspose": "ConvTranspose", "QLinearConv": "conv"}.get(op, op)
        return None, f"{kind} weight is not a constant" if why == "weight is not a constant" else why
    w = stored.values
    common = dict(name=name, op=op, node_index=idx, input_tensor=ins[0], stored=stored,
                  input_quant=input_quant)
    if op in ("Conv", "QLinearConv", "ConvTranspose"):
        if w.ndim != 4:
            return None, f"only 2-D convolutions are mapped (weight rank {w.ndim})"
        geo = _conv_geometry(a)
        if op == "ConvTranspose":
            if geo["groups"] < 1 or w.shape[0] % geo["groups"]:
                return None, f"ConvTranspose weight {list(w.shape)} does not split into {geo['groups']} groups"
            layer = LayerRef(kind="conv", layout="tconv", weight=None, attrs=a, output_tensor=node.output[0],
                             bias=ins[2] if len(ins) > 2 else "", **common, **geo)
            # the equivalent conv runs at stride 1; pads are resolved from the captured shapes
            layer.stride = (1, 1)
            layer.weight = layer.bundle_weight(w)
            return layer, None
        layer = LayerRef(kind="conv", layout="same", weight=w, **common, **geo)
        return layer, None
    if a.get("transA", 0):
        return None, f"{op} with transA=1 is not mapped"
    if w.ndim != 2:
        return None, f"{op} weight of rank {w.ndim} is not mapped"
    if op in ("Gemm", "QGemm"):
        layout = "same" if a.get("transB", 0) else "T"
        alpha = float(a.get("alpha", 1.0))
    else:
        layout, alpha = "T", 1.0
    layer = LayerRef(kind="fc", layout=layout, weight=None, alpha=alpha, **common)
    layer.weight = layer.bundle_weight(w)
    return layer, None
