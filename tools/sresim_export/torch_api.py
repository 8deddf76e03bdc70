"""A PyTorch module and its example inputs to a workload bundle, in one call:

    from sresim_export import from_torch
    written = from_torch(model, x, labels=y, out="workloads/mynet")

`from_torch` exports the module with torch.onnx into memory (no file) and hands the bytes
to pipeline.export_bundle, the code path of tools/export_onnx.py: the same layers, graph,
pruning, checks and bundle as the command line on the same ONNX model.

torch is imported only when `from_torch` is called, so the package imports without it.
torch.onnx's TorchScript-based exporter is used by default (`dynamo=False`, what the
committed bundles were built with); `dynamo=True` uses the torch.export-based one, torch's
default since 2.9 (it needs onnxscript, in tools/requirements.txt). Both are tested on the
modules of tools/tests/fixtures/make_torch_seq.py. The export runs with PyTorch's fused
attention fast path off (`torch.backends.mha.set_fastpath_enabled(False)`): in eval mode
`nn.TransformerEncoderLayer` and `nn.MultiheadAttention` otherwise call
`aten::_transformer_encoder_layer_fwd` and `aten::_native_multi_head_attention`, which no
ONNX exporter writes. The module computes the same either way.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np

from .bundle import check_file_destination, write_file
from .pipeline import export_bundle

INPUT_NAME = "input"
OUTPUT_NAME = "output"


def _as_array(inputs, torch):
    if isinstance(inputs, torch.Tensor):
        inputs = inputs.detach().cpu().numpy()
    x = np.asarray(inputs)
    if x.ndim < 2 or len(x) == 0:
        raise ValueError(f"inputs: expected a batch [N, ...] of at least one sample, got shape "
                         f"{list(x.shape)}")
    if np.issubdtype(x.dtype, np.integer):
        return np.ascontiguousarray(x, dtype=np.int64)   # token ids, for an nn.Embedding
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"inputs: expected floating-point values (or integer token ids), got {x.dtype}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if not np.all(np.isfinite(x)):
        raise ValueError("inputs: NaN or infinite values")
    return x


@contextlib.contextmanager
def _quiet_loggers(names=("torch.onnx", "onnxscript", "onnx_ir")):
    """The dynamo exporter's notes (optional packages it skips, its opset conversion
    attempts) at error level only, while it runs."""
    import logging

    saved = [(logging.getLogger(n), logging.getLogger(n).level) for n in names]
    for logger, _ in saved:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in saved:
            logger.setLevel(level)


@contextlib.contextmanager
def _no_fast_path(torch):
    """PyTorch's fused transformer inference path turned off, and back as it was."""
    mha = getattr(getattr(torch, "backends", None), "mha", None)
    if mha is None or not hasattr(mha, "set_fastpath_enabled"):
        yield
        return
    was = mha.get_fastpath_enabled()
    mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        mha.set_fastpath_enabled(was)


def to_onnx(module, example, opset=17, dynamo=False):
    """The serialized ONNX model (bytes) of `module` in eval mode, traced on `example`
    (an array [B, ...]: float32, or int64 token ids), one input `input` and output
    `output` with a dynamic batch axis. `dynamo`: torch's torch.export-based exporter
    (which needs B >= 2 to keep the batch dynamic: a sample of batch 1 is repeated),
    else the TorchScript-based one. The module's training flag is restored afterwards."""
    import torch

    buf = io.BytesIO()
    was_training = module.training
    module.eval()
    try:
        with torch.no_grad(), warnings.catch_warnings(), _no_fast_path(torch):
            # torch announces that the TorchScript-based exporter is the legacy one
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export.*")
            if dynamo:
                if len(example) < 2:
                    example = np.concatenate([example[:1], example[:1]])
                batch = torch.export.Dim("N", min=1)
                with contextlib.redirect_stdout(io.StringIO()), _quiet_loggers():   # its progress lines
                    program = torch.onnx.export(module, (torch.from_numpy(example[:2]),), None,
                                                input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                                                opset_version=opset, dynamo=True,
                                                dynamic_shapes=({0: batch},), verbose=False)
                program.model_proto  # noqa: B018 (raises if it was not built)
                buf.write(program.model_proto.SerializeToString())
            else:
                torch.onnx.export(module, (torch.from_numpy(example[:1]),), buf,
                                  input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                                  opset_version=opset, dynamo=False,
                                  dynamic_axes={INPUT_NAME: {0: "N"}, OUTPUT_NAME: {0: "N"}})
    except Exception as e:  # torch's own message, in one line
        first = " ".join(str(e).split())
        raise ValueError(f"torch.onnx.export of {type(module).__name__} failed: {first}") from e
    finally:
        module.train(was_training)
    return buf.getvalue()


def prune_attention_heads(module, fraction, torch):
    """A copy of `module` with round(fraction x H) heads of every `nn.MultiheadAttention`
    pruned (prune.heads: the heads of least L2 norm over their Q, K, V rows and output
    projection columns), and {module name: pruned head indices}. Raises ValueError when
    `fraction` is outside [0, 1) or the module has no nn.MultiheadAttention."""
    import copy

    from . import prune as prune_mod

    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"prune_heads must be in [0, 1), got {fraction}")
    module = copy.deepcopy(module)
    found = {}
    with torch.no_grad():
        for mname, m in module.named_modules():
            if not isinstance(m, torch.nn.MultiheadAttention):
                continue
            e = m.embed_dim
            if m._qkv_same_embed_dim:
                w = m.in_proj_weight.detach().cpu().numpy()
                q, k, v = w[:e], w[e:2 * e], w[2 * e:]
            else:
                q, k, v = (t.detach().cpu().numpy() for t in (m.q_proj_weight, m.k_proj_weight, m.v_proj_weight))
            b = None if m.in_proj_bias is None else m.in_proj_bias.detach().cpu().numpy()
            bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
            o = m.out_proj.weight.detach().cpu().numpy()
            q, k, v, o, bq, bk, bv, pruned = prune_mod.heads(q, k, v, o, m.num_heads, fraction, bq, bk, bv)
            if m._qkv_same_embed_dim:
                m.in_proj_weight.copy_(torch.from_numpy(np.concatenate([q, k, v])))
            else:
                for t, a in ((m.q_proj_weight, q), (m.k_proj_weight, k), (m.v_proj_weight, v)):
                    t.copy_(torch.from_numpy(a))
            if b is not None:
                m.in_proj_bias.copy_(torch.from_numpy(np.concatenate([bq, bk, bv])))
            m.out_proj.weight.copy_(torch.from_numpy(o))
            found[mname or type(m).__name__] = [int(h) for h in pruned]
    if not found:
        raise ValueError(f"prune_heads: {type(module).__name__} has no nn.MultiheadAttention "
                         f"(the heads pruned are those of torch's attention module)")
    return module, found


def from_torch(module, inputs, out, *, labels=None, name=None, prune=None, sparsity=0.0,
               prune_exclude=(), prune_keep_depthwise=False, fold_bn=True, graph=True,
               opset=17, save_onnx=None, save_model=None, graph_inputs=None, log=None,
               dynamo=False, prune_heads=0.0):
    """Writes the bundle `out` of the torch module `module` run on `inputs`, and returns
    pipeline.Written (path, layers, samples, top1 when labelled, ...).

    - `inputs`: a float tensor or array [N, ...], the module's single input, already
      preprocessed (N samples; the bundle holds them all and its graph input is the same);
    - `labels`: N integer class indices, or None; with them the bundle is labelled (for
      `sresim accuracy`) and `top1` is the float model's top-1 on `inputs`;
    - `name`: the network name (default: the module's class name);
    - `prune_heads`: a fraction in [0, 1): round(fraction x H) heads of every
      `nn.MultiheadAttention` are pruned before export (a copy of the module; `module` is
      untouched): the heads of least L2 norm over their Q, K and V rows (weights and biases)
      and output-projection columns become 0 (prune.heads); provenance `model.pruned_heads`
      lists them per attention module;
    - `prune` ("magnitude", "ssl", or "N:M" such as "2:4"), `sparsity`, `prune_exclude` (layer names),
      `prune_keep_depthwise`, `fold_bn`, `graph`: as export_onnx.py's --prune, --sparsity,
      --prune-exclude, --prune-keep-depthwise, --no-fold-bn, --no-graph;
    - `opset`: the ONNX opset torch.onnx writes; `save_onnx`: also save the ONNX model torch
      wrote (what export_onnx.py would take); `save_model`: the folded/pruned model that was
      run (--save-model);
    - `graph_inputs`: [M, ...] samples of the same shape (float, or uint8 pixels, stored as
      given and fed as float32) for the network graph, when it should not be `inputs`: the
      layer traces stay few while `sresim accuracy` gets many; `labels` then label them;
    - `log`: a function taking each note line (default: print to stderr);
    - `dynamo`: export with torch's torch.export-based exporter (needs onnxscript) rather
      than the TorchScript-based one.
    `inputs` may be integer token ids (an `nn.Embedding` first): they are fed as int64.
    The module is exported in eval mode (its training flag is restored after), with
    PyTorch's fused attention fast path off. Raises
    ValueError with one line on anything refused; `out` is then left as it was."""
    import torch

    x = _as_array(inputs, torch)
    if save_onnx:  # before torch.onnx runs: a destination refused costs no export
        check_file_destination(save_onnx, "save_onnx")
    pruned_heads = None
    if prune_heads:
        module, pruned_heads = prune_attention_heads(module, prune_heads, torch)
    onnx_bytes = to_onnx(module, x[:2], opset, dynamo)
    if save_onnx:
        write_file(save_onnx, lambda f: f.write(onnx_bytes), "save_onnx")
    name = name or type(module).__name__
    info = {"name": f"torch module {type(module).__name__} exported by torch.onnx at opset {opset}",
            "torch": torch.__version__, "opset": opset}
    if dynamo:
        info["name"] = (f"torch module {type(module).__name__} exported by torch.onnx (dynamo) at "
                        f"opset {opset}")
        info["dynamo"] = True
    if pruned_heads is not None:
        info["pruned_heads"] = pruned_heads
        info["name"] += (f", {round(prune_heads * 100, 2):g}% of the heads of each attention "
                         f"module pruned")
    desc = {"array": list(x.shape), "input": INPUT_NAME}
    kwargs = {} if log is None else {"log": log}
    if graph_inputs is not None:
        g = np.asarray(graph_inputs.detach().cpu().numpy() if isinstance(graph_inputs, torch.Tensor)
                       else graph_inputs)
        if g.ndim < 2 or len(g) == 0 or g.shape[1:] != x.shape[1:]:
            raise ValueError(f"graph_inputs: expected [M, {', '.join(map(str, x.shape[1:]))}], got "
                             f"{list(g.shape)}")
        if x.dtype == np.int64:
            if not np.issubdtype(g.dtype, np.integer):
                raise ValueError(f"graph_inputs: expected integer token ids like inputs, got {g.dtype}")
            g = g.astype(np.int64)
        elif not (np.issubdtype(g.dtype, np.floating) or g.dtype == np.uint8):
            raise ValueError(f"graph_inputs: expected float or uint8 values, got {g.dtype}")
        if np.issubdtype(g.dtype, np.floating) and not np.all(np.isfinite(g)):
            raise ValueError("graph_inputs: NaN or infinite values")
        kwargs["graph_batch"] = g
        desc["graph_inputs"] = list(g.shape)
    return export_bundle(onnx_bytes, x, out, name, desc, labels=labels, prune=prune,
                         sparsity=sparsity, prune_exclude=prune_exclude,
                         prune_depthwise=not prune_keep_depthwise, fold_bn=fold_bn, graph=graph,
                         model_info=info, exporter="sresim_export.from_torch",
                         save_model=save_model, save_model_flag="save_model", **kwargs)
