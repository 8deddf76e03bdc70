"""ONNX model + input batch -> workload bundle layers.

Steps: copy the model, move Constant tensors to initializers, fold BatchNormalization
into the preceding Conv (optional, on by default), find the crossbar-mapped layers,
prune their weights (optional) and write the pruned weights back into the model, then
run the model in onnxruntime with every layer's input tensor exposed as an extra graph
output, one sample at a time. The captured tensors are therefore the activations of the
model that is simulated (the pruned one, when pruning).

Asymmetric conv padding (top != bottom or left != right, e.g. TensorFlow "SAME" with
stride 2) cannot be written in the bundle, whose padding is symmetric. The exporter keeps
the smaller pad of each axis as `padding` and folds the extra rows/columns into the
captured input as zeros (the input grows by that much); the layer output is unchanged.
The layer entry then carries `onnx_pads` and `padding_folded_into_input`, and the
provenance lists it.

A ConvTranspose becomes a conv layer over its zero-inserted input (tconv.py). Its output
is captured too, and the rebuilt conv is checked against it: a layer that does not
reproduce onnxruntime's output is not exported. Quantized weights are dequantized
(quant.py), and a QOperator layer's quantized input with the node's input scale and zero
point. Every weight-bearing node that is not exported is printed as a `note:` and listed
in `provenance.not_exported`.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from . import capture, graph, prune as prune_mod, structure, tconv, values
from .bundle import conv_layer, fc_layer, safe_name
from .files import load_onnx
from .files import check_file
from .layers import find_layers, write_weight
from .layout import TRIVIAL, Batch, first_shape
from .capture import run_capture  # noqa: F401  (kept importable from here)


def check_model_file(path):
    """A model file that cannot be an ONNX model gets its own one-line message (onnx.load
    of a zero-byte file would return an empty model and fail later, obscurely; a FIFO
    would block it)."""
    check_file(path, "an ONNX model")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class ExportResult:
    def __init__(self):
        self.layers = []          # (entry, tensors) pairs for bundle.write_bundle
        self.outputs = {}         # graph output name -> [N, ...] array
        self.outputs_before_pruning = None  # the same, of the model before pruning (when pruned)
        self.model = None         # the (folded, pruned) model that was run
        self.provenance = {}
        self.layer_nodes = {}     # node index in `model` -> bundle layer name
        self.folded_pads = {}     # bundle layer name -> (top, left, bottom, right) folded into its input
        self.tconv_layers = set() # bundle layers rebuilt from a ConvTranspose
        self.feeds = {}           # fixed arrays fed to the model's other inputs
        self.batch = {}           # tensor -> layout.Batch: where the batch is (layout.py)
        self.where = "model"      # the model file (or name), for messages
        self.labels = {}          # output tensor -> "node I (OP -> OUT)" of the model as written


def load_model(model_path, model_info=None):
    """(ModelProto, provenance `model` entry, name for messages) of `model_path`: an ONNX
    file, or a serialized model (bytes, e.g. torch.onnx's output in memory) described by
    `model_info` (a dict with at least "name"; the sha256 of the bytes is added)."""
    if isinstance(model_path, (bytes, bytearray)):
        info = dict(model_info or {"name": "model"})
        info["sha256"] = hashlib.sha256(model_path).hexdigest()
        return onnx.load_from_string(bytes(model_path)), info, info["name"]
    model = load_onnx(model_path)
    info = {"file": os.path.basename(model_path), "sha256": sha256_file(model_path)}
    return model, info, model_path


def export(model_path, batch, input_desc, prune_method=None, sparsity=0.0,
           prune_exclude=(), fold_bn=True, log=print, prune_depthwise=True, feeds=None,
           model_info=None, exporter="tools/export_onnx.py"):
    """Exports the model at `model_path` (a file, or the model's bytes with `model_info`,
    see load_model) run on `batch` ([N, ...] float32, what the model's data input takes;
    `feeds` gives fixed arrays to its other inputs, if any).
    `input_desc` describes the inputs for the provenance, `exporter` the tool.
    Pruning (`prune_method` "magnitude", "ssl" or "N:M" such as "2:4") skips the layers named in
    `prune_exclude`, and depthwise convs (groups == in_channels, one input channel per
    filter) unless `prune_depthwise`. Returns an ExportResult."""
    model, model_prov, where = load_model(model_path, model_info)
    feeds = dict(feeds or {})
    capture.data_input(model, feeds, where=where)
    # Checked on the model as written (its node numbers), before anything runs.
    structure.check_structure(model, where)
    labels = values.node_labels(model)
    values.check_values(model, where)
    for name, arr in [("the input batch", batch)] + [(f"--feed {n}", v) for n, v in feeds.items()]:
        bad = values._not_finite(np.asarray(arr))
        if bad:
            raise ValueError(f"{name}: {bad} of {np.size(arr)} values are NaN or infinite")
    res = ExportResult()
    res.where, res.labels = where, labels
    prov = {
        "model": model_prov,
        "inputs": input_desc,
        "samples": int(len(batch)),
        "exporter": exporter,
        "onnx": onnx.__version__, "onnxruntime": ort.__version__,
    }
    if feeds:
        prov["fixed_inputs"] = {n: list(np.shape(v)) for n, v in feeds.items()}
    graph.constants_to_initializers(model)
    if fold_bn:
        prov["batchnorm_folded_into"] = graph.fold_batchnorm(model)
    layers, skipped = find_layers(model)
    if not layers:
        raise ValueError(no_layer_message(where, model, skipped))

    if prune_method:
        # the unpruned (folded) model's outputs, for the top-1 that pruning cost
        _, res.outputs_before_pruning = capture.run_capture(model, batch, [], feeds, where=where)
        values.check_run(model, batch, feeds, res.outputs_before_pruning, where, labels)
        prov["pruning"] = _prune(model, layers, prune_method, sparsity, prune_exclude, prune_depthwise)
    else:
        prov["pruning"] = None

    names = [l.input_tensor for l in layers] + [l.output_tensor for l in layers if l.output_tensor]
    types = {l.input_tensor: helper.np_dtype_to_tensor_dtype(l.input_quant[2])
             for l in layers if l.input_quant}
    captured, res.outputs = capture.run_capture(model, batch, names, feeds, types, where=where)
    # where the batch is in each tensor (layout.py): a projection over [T*N, D] or
    # [T, N, D] is captured as T tokens of each of the N samples
    from .netgraph import batch_axes
    res.batch = batch_axes(model, batch, feeds)
    values.check_run(model, batch, feeds, {**captured, **res.outputs}, where, labels)
    inits = graph.initializers(model)
    folded, dropped, tconvs, quantized = [], [], {}, {}
    for layer in layers:
        x = captured[layer.input_tensor]
        if layer.input_quant:
            scale, zero, _ = layer.input_quant
            x = ((x.astype(np.int64) - zero) * scale).astype(np.float32)
        if layer.stored.quantized is not None or layer.input_quant:
            quantized[layer.name] = {"op": layer.op, "weight": layer.stored.how}
            if layer.input_quant:
                quantized[layer.name]["input"] = {"scale": layer.input_quant[0],
                                                  "zero_point": layer.input_quant[1]}
        if layer.kind == "fc":
            b = res.batch.get(layer.input_tensor)
            if isinstance(b, Batch) and b != TRIVIAL and b.axis < x.ndim - 1:
                per_sample = [x.shape[0] // len(batch)] + list(x.shape[1:])
                x = x.reshape([len(batch)] + first_shape(per_sample, b)[1:])
            if x.ndim != 2 and not (x.ndim == 3 and layer.op in ("MatMul", "Gemm", "QGemm", "QLinearMatMul")):
                dropped.append((layer.name, layer.op, f"fc input of shape {list(x.shape)} is not [N, in] "
                                                      f"(or a MatMul's [N, tokens, in])"))
                continue
            res.layers.append(fc_layer(layer.name, layer.weight, x))
            res.layer_nodes[layer.node_index] = res.layers[-1][0]["name"]
            continue
        if layer.layout == "tconv":
            entry, why = _transposed(layer, x, captured[layer.output_tensor], inits)
            if entry is None:
                dropped.append((layer.name, layer.op, why))
                continue
            tconvs[layer.name] = entry[1]
            res.layers.append(entry[0])
            res.layer_nodes[layer.node_index] = entry[0][0]["name"]
            res.tconv_layers.add(entry[0][0]["name"])
            continue
        t, l, b, r = graph.resolve_pads(layer, x.shape[2:])
        ph, pw = min(t, b), min(l, r)
        extra = {}
        if (t, l, b, r) != (ph, pw, ph, pw):
            x = np.pad(x, ((0, 0), (0, 0), (t - ph, b - ph), (l - pw, r - pw)))
            extra = {"onnx_pads": [t, l, b, r],
                     "padding_folded_into_input": [t - ph, l - pw, b - ph, r - pw]}
            folded.append(layer.name)
            log(f"note: {layer.name}: asymmetric pads (top,left,bottom,right)={t, l, b, r}; "
                f"padding [{ph}, {pw}] kept, the rest folded into the captured input as zeros")
        res.layers.append(conv_layer(layer.name, layer.weight, x, layer.stride, (ph, pw),
                                     layer.dilation, layer.groups, extra))
        res.layer_nodes[layer.node_index] = res.layers[-1][0]["name"]
        if extra:
            res.folded_pads[res.layers[-1][0]["name"]] = tuple(extra["padding_folded_into_input"])
    for name, op, why in skipped + dropped:
        log(f"note: {name} ({op}) not exported: {why}")
    if not res.layers:
        raise ValueError(no_layer_message(where, model, skipped + dropped))
    prov["asymmetric_padding_folded"] = folded
    if tconvs:
        prov["transposed_convs"] = tconvs
    gone = {name for name, _, _ in dropped}
    quantized = {name: how for name, how in quantized.items() if name not in gone}
    if quantized:
        prov["dequantized"] = quantized
    prov["not_exported"] = [{"node": n, "op": op, "reason": w} for n, op, w in skipped + dropped]
    res.model = model
    res.provenance = prov
    res.feeds = feeds
    return res


# The array of onnxruntime's output on the graph input (the float reference of the tests).
REFERENCE = "graph.reference"


def network(res, x, labels=None, input_name="graph.input"):
    """The network part of a bundle (docs/exporting.md, "The network graph") for an export
    `res`: the graph of the model that was run, its input `x` ([M, ...], M samples of its
    own), the labels (ints, or None), onnxruntime's outputs on `x` as the float reference,
    and each layer's input range calibrated on the float network over `x`. Returns a dict
    for bundle.write_bundle(network=...)."""
    from .netexec import calibrate
    from .netgraph import network_graph

    if res.tconv_layers:
        raise ValueError(f"{sorted(res.tconv_layers)[0]}: a layer rebuilt from a ConvTranspose has no "
                         f"op in a bundle graph; export without the graph")
    x = np.ascontiguousarray(x, dtype=np.int64 if np.asarray(x).dtype.kind in "iu" else np.float32)
    nodes, out, biases, constants = network_graph(res.model, res.layer_nodes, res.folded_pads, x[:2], res.feeds,
                                                  res.batch or None)
    inp = capture.data_input(res.model, res.feeds).name
    for node in nodes:
        if "inputs" in node:
            node["inputs"] = [input_name if i == inp else i for i in node["inputs"]]
    _, outputs = capture.run_capture(res.model, x, [], res.feeds, where=res.where)
    values.check_run(res.model, x, res.feeds, outputs, res.where, res.labels)
    reference = next(iter(outputs.values())).astype(np.float32)
    arrays = {input_name: x, REFERENCE: reference}
    arrays.update({f"{name}.bias": b for name, b in biases.items()})
    arrays.update(constants)
    net = {"graph": nodes, "graph_input": input_name, "graph_output": out, "arrays": arrays}
    if labels is not None:
        labels = np.asarray(labels, dtype=np.int64)
        if labels.shape != (len(x),):
            raise ValueError(f"{len(labels)} labels for {len(x)} graph input samples")
        net["labels"] = "graph.labels"
        arrays["graph.labels"] = labels
    manifest = {"layers": [e for e, _ in res.layers], **{k: v for k, v in net.items() if k != "arrays"}}
    tensors = {k: v for _, t in res.layers for k, v in t.items()}
    tensors.update(arrays)
    batches = []
    net["calibration"] = calibrate(manifest, tensors, x, outputs=batches)
    check_graph(np.concatenate(batches).reshape(reference.shape), reference)
    return net


def check_graph(got, reference):
    """The bundle graph, run on the graph input in batches of samples (netexec), computes
    onnxruntime's outputs (one sample at a time) within 1e-4 of their largest magnitude:
    a graph that mixes samples or drops a rewrite is refused here, not written."""
    scale = max(1.0, float(np.max(np.abs(reference)))) if reference.size else 1.0
    err = float(np.max(np.abs(got - reference))) if reference.size else 0.0
    if not err <= 1e-4 * scale:
        worst = int(np.argmax(np.abs(got - reference).reshape(len(reference), -1).max(axis=1)))
        raise ValueError(f"the network graph's output differs from onnxruntime's by {err:.3g} "
                         f"(of {scale:.3g}; sample {worst}): the graph was not written")


def top1(outputs, labels):
    """Float top-1 (a fraction) of the model's first output ([N, classes]) against `labels`,
    or None when that output is not [N, classes]."""
    y = np.asarray(next(iter(outputs.values())))
    if y.ndim != 2 or len(y) != len(labels):
        return None
    return float(np.mean(np.argmax(y, axis=1) == np.asarray(labels)))


def pruning_cost(res, labels):
    """With labels and pruning: (top-1 before, top-1 after) of the float model on the
    exported inputs, also recorded in the provenance's pruning entry; None otherwise."""
    if labels is None or res.outputs_before_pruning is None:
        return None
    before, after = top1(res.outputs_before_pruning, labels), top1(res.outputs, labels)
    if before is None or after is None:
        return None
    res.provenance["pruning"].update(top1_before=before, top1_after=after)
    return before, after


def no_layer_message(model_path, model, skipped):
    """Why nothing could be exported, in one line."""
    if skipped:
        name, op, why = skipped[0]
        more = f" (and {len(skipped) - 1} more node(s) not exported)" if len(skipped) > 1 else ""
        return f"{model_path}: no layer could be exported: {name} ({op}): {why}{more}"
    ops = {n.op_type for n in model.graph.node}
    if ops & {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"}:
        return (f"{model_path}: no Conv, ConvTranspose, Gemm or MatMul layer with constant weights; "
                f"the graph is quantized ({', '.join(sorted(ops & QUANT_OPS))}) and none of its "
                f"weights is a DequantizeLinear of constants or a QLinearConv/QLinearMatMul/QGemm weight")
    return f"{model_path}: no Conv, ConvTranspose, Gemm or MatMul layer with constant weights"


QUANT_OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
             "QLinearMatMul", "ConvInteger", "MatMulInteger"}


def _prune(model, layers, method, sparsity, exclude, prune_depthwise):
    # a layer is named by its ONNX node name (/stem/stem.0/Conv) or by the bundle layer
    # name `run` prints (stem_stem.0_Conv)
    names = {}
    for l in layers:
        names[l.name] = l.name
        names.setdefault(safe_name(l.name), l.name)
    unknown = set(exclude) - set(names)
    if unknown:
        raise ValueError(f"--prune-exclude: no layer named {', '.join(sorted(unknown))} "
                         f"(layers: {', '.join(safe_name(l.name) for l in layers)}; the ONNX node "
                         f"names are accepted too)")
    given = sorted(exclude)
    exclude = {names[e] for e in exclude}
    owners = {}
    for layer in layers:
        owners.setdefault(layer.weight_init, []).append(layer.name)
    per_layer = {}
    for layer in layers:
        depthwise = layer.kind == "conv" and layer.groups > 1 and layer.weight.shape[1] == 1
        if layer.name in exclude or (depthwise and not prune_depthwise):
            per_layer[layer.name] = {"excluded": True, "sparsity": prune_mod.sparsity(layer.weight)}
            continue
        if len(owners[layer.weight_init]) > 1:
            raise ValueError(f"{layer.name}: weight {layer.weight_init} is shared by "
                             f"{owners[layer.weight_init]}; exclude them from pruning")
        before = prune_mod.sparsity(layer.weight)
        layer.weight = prune_mod.prune(layer.weight, method, sparsity, layer.groups)
        write_weight(model, layer)
        per_layer[layer.name] = {"before": round(before, 6),
                                 "after": round(prune_mod.sparsity(layer.weight), 6)}
    nm = prune_mod.parse_nm(method)
    if nm:
        sparsity = 1 - nm[0] / nm[1]
    return {"method": method, "target_sparsity": sparsity, "excluded": given,
            "depthwise_pruned": prune_depthwise, "per_layer": per_layer, "fine_tuned": False}


def _transposed(layer, x, y, inits):
    """The conv layer entry of a ConvTranspose, checked against onnxruntime's output `y`;
    ((entry, tensors), provenance) or (None, reason)."""
    kernel = layer.weight.shape[2:]
    xb, padding, info = tconv.conv_input(x, layer.attrs, kernel, y.shape[2:])
    try:
        entry = conv_layer(layer.name, layer.weight, xb, (1, 1), padding, layer.dilation, layer.groups)
    except ValueError as e:
        return None, f"transposed conv rebuilt as a conv: {e}"
    want = y.astype(np.float64)
    if layer.bias:
        if layer.bias not in inits:
            return None, "ConvTranspose bias is not a constant"
        want = want - numpy_helper.to_array(inits[layer.bias]).astype(np.float64)[None, :, None, None]
    got = tconv.conv2d(xb, layer.weight, (1, 1), padding, layer.dilation, layer.groups)
    if got.shape != want.shape:
        return None, f"transposed conv rebuilt as a conv gives {list(got.shape)}, onnxruntime {list(want.shape)}"
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    if err > 1e-4 * max(scale, 1.0):
        return None, (f"transposed conv rebuilt as a conv differs from onnxruntime's output "
                      f"by up to {err:.3g} (of {scale:.3g})")
    a = layer.attrs
    info = {"onnx": {k: a[k] for k in ("strides", "pads", "output_padding", "dilations", "group",
                                        "auto_pad", "output_shape") if k in a},
            **info, "max_abs_error_vs_onnxruntime": err}
    return (entry, info), None


def describe(prov, name):
    """The one-line manifest `source` for an export."""
    m = prov["model"]
    what = f"ONNX model {m['file']}" if "file" in m else m["name"]
    line = f"{name}: {what} (sha256 {m['sha256'][:16]}...) run in onnxruntime on {prov['samples']} input(s)"
    if prov.get("pruning"):
        p = prov["pruning"]
        if prune_mod.parse_nm(p["method"]):
            line += (f"; pruned at export: {p['method']} along the inputs (sparsity "
                     f"{p['target_sparsity']:g}) per layer, no fine-tuning")
        else:
            line += f"; pruned at export: {p['method']} to sparsity {p['target_sparsity']} per layer, no fine-tuning"
    return line + "; inputs are the captured activations of the exported model (details in provenance)"
