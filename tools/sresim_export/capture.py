"""Running a model in onnxruntime and capturing inner tensors, one sample at a time.

The model's inputs are checked first, so that a user mistake is a one-line error that
says what to pass rather than an onnxruntime traceback: the input that receives the
samples is the only graph input not given a fixed array (`feeds`); a dynamic input size
needs `--size` for images (or .npy inputs of the size the model accepts).
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper


def graph_inputs(model):
    """The model's real inputs (old models also list initializers among the inputs)."""
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def dims(value_info):
    """The dims of a graph input: ints where static, None where dynamic."""
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
            for d in value_info.type.tensor_type.shape.dim]


def describe_input(value_info):
    shown = [str(d.dim_value) if d.HasField("dim_value") and d.dim_value > 0 else (d.dim_param or "?")
             for d in value_info.type.tensor_type.shape.dim]
    dtype = onnx.TensorProto.DataType.Name(value_info.type.tensor_type.elem_type).lower()
    return f"{value_info.name} [{', '.join(shown)}] {dtype}"


def data_input(model, feeds=(), where="model"):
    """The graph input that receives the samples: the one input not in `feeds`."""
    inputs = graph_inputs(model)
    names = {i.name for i in inputs}
    unknown = [n for n in feeds if n not in names]
    if unknown:
        raise ValueError(f"--feed {unknown[0]}: the model has no input of that name (inputs: "
                         f"{'; '.join(describe_input(i) for i in inputs)})")
    free = [i for i in inputs if i.name not in feeds]
    if len(free) == 1:
        return free[0]
    if not free:
        raise ValueError(f"{where}: every input is given by --feed; leave the one that takes "
                         f"--input out of --feed")
    listed = "; ".join(describe_input(i) for i in free)
    raise ValueError(f"{where}: the model has {len(free)} inputs not given by --feed ({listed}); "
                     f"--input feeds one of them: give each other one a fixed array with "
                     f"--feed NAME=FILE.npy")


def input_dtype(value_info):
    """The numpy dtype of a graph input (float32 for an image or feature input, int64 for
    token ids)."""
    return helper.tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type)


def as_input(x, value_info, what="inputs"):
    """`x` in the dtype of the graph input `value_info`: floats for a float input; for an
    integer input (token ids), integer values only (a float array of whole numbers is
    converted; anything else is refused, naming the input)."""
    want = np.dtype(input_dtype(value_info))
    x = np.asarray(x)
    if want.kind == "f":
        if x.dtype.kind not in "fiub":
            raise ValueError(f"{what}: {x.dtype} values for input {describe_input(value_info)}")
        return x.astype(want)
    if want.kind in "iu":
        if x.dtype.kind == "f":
            if not np.all(np.isfinite(x)) or np.any(x != np.round(x)):
                raise ValueError(f"{what}: input {describe_input(value_info)} takes integers "
                                 f"(token ids), the values given are not whole numbers")
        elif x.dtype.kind not in "iub":
            raise ValueError(f"{what}: {x.dtype} values for input {describe_input(value_info)}")
        info = np.iinfo(want)
        if x.size and (x.min() < info.min or x.max() > info.max):
            raise ValueError(f"{what}: values outside the range of input {describe_input(value_info)}")
        return x.astype(want)
    raise ValueError(f"{what}: input {describe_input(value_info)}: only float and integer inputs "
                     f"can take the samples")


def session(model, where="model"):
    """An onnxruntime session of `model`; a model onnxruntime refuses is one line naming
    `where` (the model file) and the node (structure.ort_message)."""
    from .structure import ort_message

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4   # errors are reported by the exporter, in one line
    try:
        return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime's Fail/InvalidGraph/...: several lines, no file
        raise ValueError(f"{where}: {ort_message(e, model)}") from None


def _ort_message(e):
    text = " ".join(str(e).split())
    marker = "Status Message: "
    return text.split(marker, 1)[1] if marker in text else text


def _hint(inp, sample):
    """What to try after onnxruntime refused a sample: another size, for an input whose
    size is free or differs from the sample's; nothing else is known to help."""
    want = dims(inp)[1:]
    if len(want) != sample.ndim or any(w is not None and w != g for w, g in zip(want, sample.shape)):
        return f"; the input is {describe_input(inp)}: give samples of that shape"
    if any(w is None for w in want):
        return "; if the model needs another input size, pass --size H W (or .npy inputs of that size)"
    return ""


def run_capture(model, batch, tensor_names, feeds=None, types=None, where="model"):
    """Runs `model` on each sample of `batch`; returns ({name: [N, ...]} for the requested
    tensors, {graph output: [N, ...]}). `feeds` gives fixed arrays to the other inputs;
    `types` the ONNX element type of captured tensors that are not float; `where` (the
    model file) is named in onnxruntime's refusals."""
    feeds = dict(feeds or {})
    types = types or {}
    model = copy.deepcopy(model)
    inp = data_input(model, feeds)
    existing = {o.name for o in model.graph.output}
    final = [o.name for o in model.graph.output]
    for name in tensor_names:
        if name not in existing and name != inp.name:
            elem = types.get(name, onnx.TensorProto.FLOAT)
            model.graph.output.append(helper.make_tensor_value_info(name, elem, None))
            existing.add(name)
    sess = session(model, where)
    out_names = [o.name for o in sess.get_outputs()]
    collected = {n: [] for n in out_names}
    batch = as_input(batch, inp)
    for i, sample in enumerate(batch):
        try:
            values = sess.run(out_names, {inp.name: sample[None], **feeds})
        except Exception as e:  # onnxruntime's own errors: say which sample and what to try
            raise ValueError(f"{where}: onnxruntime could not run the model on sample {i} (input {inp.name} "
                             f"{list(sample[None].shape)}): {_ort_message(e)}{_hint(inp, sample)}") from None
        for n, v in zip(out_names, values):
            collected[n].append(np.asarray(v))
    stacked = {n: np.concatenate(v, axis=0) for n, v in collected.items()}
    stacked[inp.name] = batch
    captured = {n: stacked[n] for n in tensor_names}
    return captured, {n: stacked[n] for n in final}
