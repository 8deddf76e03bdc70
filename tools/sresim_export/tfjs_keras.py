"""A TensorFlow.js Layers model (Keras topology + quantized weight shards) as ONNX.

Reads the `modelTopology` / `weightsManifest` pair of a tfjs Layers model and the raw
bytes of its weight shards, dequantizes the weights (tfjs uint8/uint16 quantization:
value = min + scale * q), and builds an equivalent NCHW ONNX graph with onnx.helper, so
that the model runs in onnxruntime and goes through the common exporter.

Supported Keras layers: InputLayer, ZeroPadding2D, Conv2D, DepthwiseConv2D (depth
multiplier 1), BatchNormalization (channels axis), ReLU (with max_value: ReLU6), Activation,
Add, Concatenate (channels axis), AveragePooling2D/MaxPooling2D (valid; 'same' at stride 1,
averaging over the window's cells inside the input as TensorFlow does), GlobalAveragePooling2D,
Flatten, Dense, Dropout (identity at inference). Anything else raises ValueError naming the
layer.
'same' convolution padding is written as auto_pad SAME_UPPER (TensorFlow's rule: the odd
extra pad goes after).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

_DTYPES = {"uint8": np.uint8, "uint16": np.uint16, "float32": np.float32, "int32": np.int32}


def dequantize(manifest, data):
    """{weight name: float32 array} from the weightsManifest and the concatenated shards."""
    out, offset = {}, 0
    for group in manifest:
        for spec in group["weights"]:
            shape = spec["shape"]
            count = int(np.prod(shape)) if shape else 1
            q = spec.get("quantization")
            dtype = _DTYPES[q["dtype"] if q else spec["dtype"]]
            nbytes = count * np.dtype(dtype).itemsize
            raw = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
            offset += nbytes
            if q:
                if "min" not in q:
                    raise ValueError(f"{spec['name']}: quantization without min/scale is not supported")
                val = q["min"] + q["scale"] * raw.astype(np.float64)
            else:
                val = raw
            out[spec["name"]] = val.astype(np.float32).reshape(shape)
    if offset != len(data):
        raise ValueError(f"weight shards hold {len(data)} bytes, the manifest describes {offset}")
    return out


def _act(nodes, name, act, x):
    if act in (None, "linear"):
        return x
    ops = {"relu": "Relu", "softmax": "Softmax", "sigmoid": "Sigmoid", "tanh": "Tanh"}
    if act not in ops:
        raise ValueError(f"{name}: activation {act!r} not supported")
    kw = {"axis": -1} if act == "softmax" else {}
    nodes.append(helper.make_node(ops[act], [x], [f"{name}/act"], **kw))
    return f"{name}/act"


def to_onnx(topology, weights, input_hw=None):
    """ONNX model (input 'input' [N, 3, H, W] NCHW float) of a Keras functional model."""
    cfg = topology["model_config"]["config"]
    nodes, inits = [], []
    out_of = {}          # keras layer name -> onnx tensor name of its output
    layout = {}          # keras layer name -> "nchw" or "flat"
    graph_input = None

    def w(layer, key):
        return weights[f"{layer}/{key}"]

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    for layer in cfg["layers"]:
        cls, c, name = layer["class_name"], layer["config"], layer["name"]
        ins = [out_of[n[0]] for n in layer["inbound_nodes"][0]] if layer["inbound_nodes"] else []
        if c.get("data_format", "channels_last") != "channels_last":
            raise ValueError(f"{name}: only channels_last models are supported")
        y = name
        if cls == "InputLayer":
            shape = c["batch_input_shape"]
            h, wd = input_hw or shape[1:3]
            graph_input = helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", shape[3], h, wd])
            out_of[name], layout[name] = name, "nchw"
            continue
        elif cls == "ZeroPadding2D":
            (t, b), (l, r) = c["padding"]
            pads = init(f"{name}/pads", np.array([0, 0, t, l, 0, 0, b, r], np.int64))
            nodes.append(helper.make_node("Pad", [ins[0], pads], [y], mode="constant", name=name))
        elif cls in ("Conv2D", "DepthwiseConv2D"):
            if cls == "Conv2D":
                k = w(name, "kernel").transpose(3, 2, 0, 1)        # [R,S,Cin,Cout] -> [Cout,Cin,R,S]
                group = 1
            else:
                if c.get("depth_multiplier", 1) != 1:
                    raise ValueError(f"{name}: depth_multiplier != 1 not supported")
                k = w(name, "depthwise_kernel").transpose(2, 3, 0, 1)  # [R,S,C,1] -> [C,1,R,S]
                group = k.shape[0]
            inputs = [ins[0], init(f"{name}/kernel", k)]
            if c.get("use_bias"):
                inputs.append(init(f"{name}/bias", w(name, "bias")))
            pad = {"same": "SAME_UPPER", "valid": "VALID"}[c["padding"]]
            nodes.append(helper.make_node("Conv", inputs, [f"{name}/conv"], name=name, group=group,
                                          strides=c["strides"], dilations=c["dilation_rate"],
                                          kernel_shape=list(k.shape[2:]), auto_pad=pad))
            y = _act(nodes, name, c.get("activation"), f"{name}/conv")
        elif cls == "BatchNormalization":
            if c.get("axis") not in (-1, 3, [3], [-1]):
                raise ValueError(f"{name}: BatchNormalization axis {c.get('axis')} not supported")
            ch = w(name, "moving_mean").shape[0]
            gamma = w(name, "gamma") if c.get("scale", True) else np.ones(ch, np.float32)
            beta = w(name, "beta") if c.get("center", True) else np.zeros(ch, np.float32)
            names = [init(f"{name}/{k}", v) for k, v in
                     [("gamma", gamma), ("beta", beta), ("mean", w(name, "moving_mean")),
                      ("var", w(name, "moving_variance"))]]
            nodes.append(helper.make_node("BatchNormalization", [ins[0], *names], [y], name=name,
                                          epsilon=float(c["epsilon"])))
        elif cls == "ReLU":
            if c.get("negative_slope", 0) or c.get("threshold", 0):
                raise ValueError(f"{name}: leaky/thresholded ReLU not supported")
            if c.get("max_value") is not None:
                lo = init(f"{name}/lo", np.array(0, np.float32))
                hi = init(f"{name}/hi", np.array(c["max_value"], np.float32))
                nodes.append(helper.make_node("Clip", [ins[0], lo, hi], [y], name=name))
            else:
                nodes.append(helper.make_node("Relu", [ins[0]], [y], name=name))
        elif cls == "Activation":
            y = _act(nodes, name, c["activation"], ins[0])
        elif cls == "Add":
            nodes.append(helper.make_node("Sum", ins, [y], name=name))
        elif cls == "Concatenate":
            if c.get("axis", -1) not in (-1, 3):
                raise ValueError(f"{name}: Concatenate axis {c.get('axis')} not supported (channels only)")
            nodes.append(helper.make_node("Concat", ins, [y], name=name, axis=1))
        elif cls in ("AveragePooling2D", "MaxPooling2D"):
            op = "AveragePool" if cls == "AveragePooling2D" else "MaxPool"
            kw = {}
            if c["padding"] == "same":
                # At stride 1 'same' pads k - 1 in all, the odd one after (TensorFlow's rule),
                # whatever the input size; the average counts only cells inside the input
                # (MaxPool's padding is never the max, in ONNX as in TensorFlow).
                if list(c["strides"]) != [1, 1]:
                    raise ValueError(f"{name}: 'same' pooling supported at stride 1 only")
                kh, kw_ = c["pool_size"]
                kw["pads"] = [(kh - 1) // 2, (kw_ - 1) // 2, kh // 2, kw_ // 2]
                if op == "AveragePool":
                    kw["count_include_pad"] = 0
            elif c["padding"] != "valid":
                raise ValueError(f"{name}: pooling padding {c['padding']!r} not supported")
            nodes.append(helper.make_node(op, [ins[0]], [y], name=name, kernel_shape=c["pool_size"],
                                          strides=c["strides"], **kw))
        elif cls == "GlobalAveragePooling2D":
            nodes.append(helper.make_node("GlobalAveragePool", [ins[0]], [f"{name}/gap"]))
            nodes.append(helper.make_node("Flatten", [f"{name}/gap"], [y], axis=1, name=name))
            layout[name] = "flat"
        elif cls == "Flatten":
            # Keras flattens NHWC: transpose back before flattening so the order matches
            nodes.append(helper.make_node("Transpose", [ins[0]], [f"{name}/nhwc"], perm=[0, 2, 3, 1]))
            nodes.append(helper.make_node("Flatten", [f"{name}/nhwc"], [y], axis=1, name=name))
            layout[name] = "flat"
        elif cls == "Dense":
            inputs = [ins[0], init(f"{name}/kernel", w(name, "kernel"))]   # [in, out]
            if c.get("use_bias"):
                inputs.append(init(f"{name}/bias", w(name, "bias")))
            nodes.append(helper.make_node("Gemm", inputs, [f"{name}/dense"], name=name))
            y = _act(nodes, name, c.get("activation"), f"{name}/dense")
        elif cls == "Dropout":
            y = ins[0]
        else:
            raise ValueError(f"{name}: Keras layer {cls} not supported")
        out_of[name] = y
        layout.setdefault(name, layout.get(layer["inbound_nodes"][0][0][0], "nchw"))

    (out_layer,) = [o[0] for o in cfg["output_layers"]]
    dims = ["N", "K"] if layout[out_layer] == "flat" else ["N", "C", "H", "W"]
    g = helper.make_graph(nodes, cfg.get("name", "keras"), [graph_input],
                          [helper.make_tensor_value_info(out_of[out_layer], TensorProto.FLOAT, dims)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
