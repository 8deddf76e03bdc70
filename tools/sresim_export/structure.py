"""The structure of a model, checked before onnxruntime sees it, so that a broken graph is one
line naming the model file and the node (`m.onnx: node /Transpose (Transpose): perm: [] has
0 axes, its input has 3`) rather than onnxruntime's multi-line report about a later node
that names no file (docs/errors.md, "The exporter's refusals"):

- every node's op is one the model's opset defines (ops of other domains, such as
  onnxruntime's com.microsoft, are left to onnxruntime);
- every input a node reads is a graph input, an initializer or the output of an earlier
  node (ONNX graphs are in topological order);
- a Transpose's `perm` is a permutation of its input's axes, and an `axis` or `axes`
  attribute names an axis of its input (where shape inference knows the input's rank).

What these checks do not catch, onnxruntime refuses when it loads the model; `ort_message`
reduces its report to one line naming the node, and the exporter prefixes the model file.
"""

from __future__ import annotations

import re

import onnx

# Ops whose `axis` attribute names one axis of input 0: in [-rank, rank - 1].
AXIS_OPS = {"Softmax", "LogSoftmax", "Hardmax", "Concat", "Gather", "GatherElements", "Split",
            "LayerNormalization", "ArgMax", "ArgMin", "Compress", "CumSum", "QuantizeLinear",
            "DequantizeLinear", "ScatterElements"}
# Flatten's `axis` is a split point: in [-rank, rank].
SPLIT_POINT_OPS = {"Flatten"}
# Ops whose `axes` attribute (opsets before 13/18) names axes of input 0.
AXES_OPS = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
            "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Squeeze"}
ONNX_DOMAINS = {"", "ai.onnx", "ai.onnx.ml"}


def node_label(i, node):
    """`node NAME (OP)`, or `node I (OP -> OUTPUT)` for a node without a name."""
    if node.name:
        return f"node {node.name} ({node.op_type})"
    return f"node {i} ({node.op_type} -> {node.output[0] if node.output else '?'})"


def _ranks(model):
    """{tensor: rank} of every tensor whose rank the model or onnx's shape inference states."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # a model shape inference cannot read: only what it declares
        inferred = model
    ranks = {}
    g = inferred.graph
    for v in list(g.input) + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        if v.type.HasField("tensor_type") and t.HasField("shape"):
            ranks[v.name] = len(t.shape.dim)
    for t in g.initializer:
        ranks[t.name] = len(t.dims)
    return ranks


def _ints(node, name):
    for a in node.attribute:
        if a.name == name:
            if a.type == onnx.AttributeProto.INTS:
                return list(a.ints)
            if a.type == onnx.AttributeProto.INT:
                return a.i
    return None


def _opsets(model):
    return {(o.domain or ""): o.version for o in model.opset_import}


def check_structure(model, where):
    """Raises ValueError (one line: `WHERE: node NAME (OP): ...`) on the first broken node."""
    opsets = _opsets(model)
    defined = {i.name for i in model.graph.input} | {t.name for t in model.graph.initializer}
    ranks = None
    for i, node in enumerate(model.graph.node):
        label = f"{where}: {node_label(i, node)}"
        domain = node.domain or ""
        if domain in ONNX_DOMAINS:
            version = opsets.get(domain if domain != "ai.onnx" else "", opsets.get("", 1))
            if not onnx.defs.has(node.op_type, max_inclusive_version=version, domain=domain):
                known = onnx.defs.has(node.op_type, domain=domain)
                why = (f"not defined at opset {version} (a later opset has it)" if known
                       else f"unknown op (not an op of ONNX{' domain ' + domain if domain else ''})")
                raise ValueError(f"{label}: {why}")
        for name in node.input:
            if name and name not in defined:
                raise ValueError(f"{label}: input {name} is not a graph input, an initializer "
                                 f"or the output of an earlier node (a node removed or out of "
                                 f"order)")
        defined.update(o for o in node.output if o)
        if domain not in ONNX_DOMAINS or not node.input:
            continue
        perm = _ints(node, "perm") if node.op_type == "Transpose" else None
        axis = _ints(node, "axis") if node.op_type in AXIS_OPS | SPLIT_POINT_OPS else None
        axes = _ints(node, "axes") if node.op_type in AXES_OPS else None
        if perm is None and axis is None and axes is None:
            continue
        if ranks is None:
            ranks = _ranks(model)
        rank = ranks.get(node.input[0])
        if perm is not None:
            n = rank if rank is not None else len(perm)
            if sorted(perm) != list(range(n)) or len(perm) != n:
                has = f", its input has {rank}" if rank is not None else ""
                raise ValueError(f"{label}: perm: {perm} is not a permutation of the input's "
                                 f"axes ({len(perm)} given{has})")
        if rank is None:
            continue
        if isinstance(axis, int):
            top = rank if node.op_type in SPLIT_POINT_OPS else rank - 1
            if not -rank <= axis <= top:
                raise ValueError(f"{label}: axis: {axis} is outside [{-rank}, {top}] (its input "
                                 f"has {rank} axes)")
        if isinstance(axes, list):
            bad = [a for a in axes if not -rank <= a < rank]
            if bad:
                raise ValueError(f"{label}: axes: {bad[0]} is outside [{-rank}, {rank - 1}] (its "
                                 f"input has {rank} axes)")


_NODE = re.compile(r"Node \(([^)]*)\) Op \(([^)]*)\) (.*)")
_IN_NODE = re.compile(r'In Node, \("([^"]*)", ([^,]+), .*?(Error .*)')
_PREFIX = re.compile(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ")


_UNREGISTERED = re.compile(r"([\w.]*):(\w+)\(-?\d+\) is not a registered function/op")


def ort_message(e, model=None):
    """onnxruntime's refusal of a model, in one line, naming the node when it does (or,
    given the `model`, the first node of an op it says it does not know)."""
    text = " ".join(str(e).split())
    m = _UNREGISTERED.search(text)
    if m and model is not None:
        for i, node in enumerate(model.graph.node):
            if node.op_type == m.group(2) and (node.domain or "") == m.group(1):
                return f"{node_label(i, node)}: onnxruntime refuses it: {_PREFIX.sub('', text)}"
    m = _NODE.search(text)
    if m:
        return f"node {m.group(1)} ({m.group(2)}): {m.group(3)}"
    m = _IN_NODE.search(text)
    if m:
        return f"node {m.group(1)} ({m.group(2).strip()}): {m.group(3)}"
    return "onnxruntime refuses the model: " + _PREFIX.sub("", text)
