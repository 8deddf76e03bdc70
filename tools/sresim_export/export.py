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
"""

from __future__ import annotations

import copy
import hashlib
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

from . import graph, prune as prune_mod
from .bundle import conv_layer, fc_layer


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
        self.model = None         # the (folded, pruned) model that was run
        self.provenance = {}


def _graph_inputs(model):
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def _session(model):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def run_capture(model, batch, tensor_names):
    """Runs `model` on each sample of `batch`; returns ({name: [N, ...]} for the requested
    tensors, {graph output: [N, ...]})."""
    model = copy.deepcopy(model)
    (inp,) = _graph_inputs(model)
    existing = {o.name for o in model.graph.output}
    final = [o.name for o in model.graph.output]
    for name in tensor_names:
        if name not in existing and name != inp.name:
            model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
            existing.add(name)
    sess = _session(model)
    out_names = [o.name for o in sess.get_outputs()]
    collected = {n: [] for n in out_names}
    for sample in batch:
        values = sess.run(out_names, {inp.name: sample[None].astype(np.float32)})
        for n, v in zip(out_names, values):
            collected[n].append(np.asarray(v))
    stacked = {n: np.concatenate(v, axis=0) for n, v in collected.items()}
    stacked[inp.name] = np.asarray(batch, dtype=np.float32)
    captured = {n: stacked[n] for n in tensor_names}
    return captured, {n: stacked[n] for n in final}


def export(model_path, batch, input_desc, prune_method=None, sparsity=0.0,
           prune_exclude=(), fold_bn=True, log=print, prune_depthwise=True):
    """Exports the model at `model_path` run on `batch` ([N, ...] float32, what the
    model's single input takes). `input_desc` describes the inputs for the provenance.
    Pruning (`prune_method` "magnitude" or "ssl") skips the layers named in
    `prune_exclude`, and depthwise convs (groups == in_channels, one input channel per
    filter) unless `prune_depthwise`. Returns an ExportResult."""
    model = onnx.load(model_path)
    res = ExportResult()
    prov = {
        "model": {"file": os.path.basename(model_path), "sha256": sha256_file(model_path)},
        "inputs": input_desc,
        "samples": int(len(batch)),
        "exporter": "tools/export_onnx.py",
        "onnx": onnx.__version__, "onnxruntime": ort.__version__,
    }
    if len(_graph_inputs(model)) != 1:
        raise ValueError(f"{model_path}: the model must have exactly one input, has "
                         f"{[i.name for i in _graph_inputs(model)]}")
    graph.constants_to_initializers(model)
    if fold_bn:
        prov["batchnorm_folded_into"] = graph.fold_batchnorm(model)
    layers, skipped = graph.find_layers(model)
    if not layers:
        raise ValueError(f"{model_path}: no Conv, Gemm or MatMul layer with constant weights")

    if prune_method:
        unknown = set(prune_exclude) - {l.name for l in layers}
        if unknown:
            raise ValueError(f"--prune-exclude: no layer named {', '.join(sorted(unknown))} "
                             f"(layers: {', '.join(l.name for l in layers)})")
        owners = {}
        for layer in layers:
            owners.setdefault(layer.weight_init, []).append(layer.name)
        per_layer = {}
        for layer in layers:
            depthwise = layer.kind == "conv" and layer.groups > 1 and layer.weight.shape[1] == 1
            if layer.name in prune_exclude or (depthwise and not prune_depthwise):
                per_layer[layer.name] = {"excluded": True, "sparsity": prune_mod.sparsity(layer.weight)}
                continue
            if len(owners[layer.weight_init]) > 1:
                raise ValueError(f"{layer.name}: weight {layer.weight_init} is shared by "
                                 f"{owners[layer.weight_init]}; exclude them from pruning")
            before = prune_mod.sparsity(layer.weight)
            layer.weight = prune_mod.prune(layer.weight, prune_method, sparsity, layer.groups)
            graph.set_init(model, layer.weight_init, layer.weight.T if layer.transposed else layer.weight)
            per_layer[layer.name] = {"before": round(before, 6),
                                     "after": round(prune_mod.sparsity(layer.weight), 6)}
        prov["pruning"] = {"method": prune_method, "target_sparsity": sparsity,
                           "excluded": sorted(prune_exclude), "depthwise_pruned": prune_depthwise,
                           "per_layer": per_layer, "fine_tuned": False}
    else:
        prov["pruning"] = None

    captured, res.outputs = run_capture(model, batch, [l.input_tensor for l in layers])
    folded, dropped = [], []
    for layer in layers:
        x = captured[layer.input_tensor]
        if layer.kind == "fc":
            if x.ndim != 2:
                dropped.append((layer.name, f"fc input of shape {list(x.shape)} is not [N, in]"))
                continue
            res.layers.append(fc_layer(layer.name, layer.weight, x))
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
    for name, why in skipped + dropped:
        log(f"note: {name} not exported: {why}")
    prov["asymmetric_padding_folded"] = folded
    prov["not_exported"] = [{"node": n, "reason": w} for n, w in skipped + dropped]
    res.model = model
    res.provenance = prov
    return res


def describe(prov, name):
    """The one-line manifest `source` for an export."""
    m = prov["model"]
    line = f"{name}: ONNX model {m['file']} (sha256 {m['sha256'][:16]}...) run in onnxruntime on {prov['samples']} input(s)"
    if prov.get("pruning"):
        p = prov["pruning"]
        line += f"; pruned at export: {p['method']} to sparsity {p['target_sparsity']} per layer, no fine-tuning"
    return line + "; inputs are the captured activations of the exported model (details in provenance)"
