"""The pieces the workload builders rely on: the numpy CNN toolkit's gradients and the
tfjs Keras -> ONNX conversion (checked against an independent NHWC numpy forward)."""

import os
import sys

import numpy as np
import pytest
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sresim_export import numpy_nn as nn  # noqa: E402
from sresim_export.tfjs_keras import dequantize, to_onnx  # noqa: E402


def test_conv_and_pool_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 6, 6))
    w = rng.standard_normal((3, 2, 3, 3))
    b = rng.standard_normal(3)
    g = rng.standard_normal((2, 3, 2, 2))   # upstream gradient of pool(conv(x))

    def loss(x, w):
        c, _ = nn.conv_forward(x, w, b)
        p, _ = nn.pool_forward(c)
        return np.sum(p * g)

    c, cols = nn.conv_forward(x, w, b)
    _, arg = nn.pool_forward(c)
    dc = nn.pool_backward(g, arg, c.shape)
    dx, dw, _ = nn.conv_backward(dc, x.shape, cols, w)
    eps = 1e-6
    for idx in [(0, 0, 0, 0), (1, 1, 2, 3), (0, 1, 5, 5)]:
        xp = x.copy(); xp[idx] += eps
        xm = x.copy(); xm[idx] -= eps
        assert abs((loss(xp, w) - loss(xm, w)) / (2 * eps) - dx[idx]) < 1e-5
    for idx in [(0, 0, 0, 0), (2, 1, 1, 2)]:
        wp = w.copy(); wp[idx] += eps
        wm = w.copy(); wm[idx] -= eps
        assert abs((loss(x, wp) - loss(x, wm)) / (2 * eps) - dw[idx]) < 1e-5


def _quantize(name, arr, specs, chunks):
    """tfjs-style uint8 quantization with zero on a level; returns the dequantized array."""
    lo, hi = min(arr.min(), 0.0), max(arr.max(), 0.0)
    scale = (hi - lo) / 255
    zero = round(-lo / scale)
    q = np.clip(np.round(arr / scale) + zero, 0, 255).astype(np.uint8)
    specs.append({"name": name, "shape": list(arr.shape), "dtype": "float32",
                  "quantization": {"min": -zero * scale, "scale": scale, "dtype": "uint8"}})
    chunks.append(q.tobytes())
    return (-zero * scale + scale * q.astype(np.float64)).astype(np.float32)


def _layer(cls, name, inbound, **config):
    config["name"] = name
    return {"class_name": cls, "name": name, "config": config,
            "inbound_nodes": [[[n, 0, 0, {}] for n in inbound]] if inbound else []}


def _conv_nhwc(x, k, stride, pads):
    """x [N,H,W,C], k [R,S,Cin,Cout], pads ((t,b),(l,r))."""
    x = np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)))
    r, s = k.shape[:2]
    ho = (x.shape[1] - r) // stride + 1
    wo = (x.shape[2] - s) // stride + 1
    out = np.zeros((x.shape[0], ho, wo, k.shape[3]))
    for i in range(ho):
        for j in range(wo):
            out[:, i, j] = np.einsum("nrsc,rsco->no", x[:, i * stride:i * stride + r, j * stride:j * stride + s], k)
    return out


def test_tfjs_keras_graph_matches_nhwc_reference():
    rng = np.random.default_rng(3)
    specs, chunks, w = [], [], {}
    for name, shape in [("c1/kernel", (3, 3, 2, 4)), ("bn/gamma", (4,)), ("bn/beta", (4,)),
                        ("bn/moving_mean", (4,)), ("bn/moving_variance", (4,)),
                        ("dw/depthwise_kernel", (3, 3, 4, 1)), ("pw/kernel", (1, 1, 4, 4)), ("pw/bias", (4,)),
                        ("fc/kernel", (16, 3)), ("fc/bias", (3,))]:
        arr = rng.standard_normal(shape).astype(np.float32)
        if "variance" in name or "gamma" in name:
            arr = np.abs(arr) + 0.5
        w[name] = _quantize(name, arr, specs, chunks)
    layers = [
        _layer("InputLayer", "in", None, batch_input_shape=[None, 6, 6, 2]),
        _layer("ZeroPadding2D", "pad", ["in"], padding=[[0, 1], [0, 1]]),
        _layer("Conv2D", "c1", ["pad"], filters=4, kernel_size=[3, 3], strides=[1, 1], padding="valid",
               dilation_rate=[1, 1], activation="linear", use_bias=False),
        _layer("BatchNormalization", "bn", ["c1"], axis=-1, epsilon=0.001),
        _layer("ReLU", "r6", ["bn"], max_value=6, negative_slope=0, threshold=0),
        _layer("DepthwiseConv2D", "dw", ["r6"], kernel_size=[3, 3], strides=[1, 1], padding="same",
               dilation_rate=[1, 1], activation="relu", use_bias=False, depth_multiplier=1),
        _layer("Conv2D", "pw", ["dw"], filters=4, kernel_size=[1, 1], strides=[1, 1], padding="same",
               dilation_rate=[1, 1], activation="linear", use_bias=True),
        _layer("Add", "add", ["r6", "pw"]),
        _layer("MaxPooling2D", "mp", ["add"], pool_size=[2, 2], strides=[2, 2], padding="valid"),
        _layer("Flatten", "fl", ["mp"]),
        _layer("Dropout", "do", ["fl"], rate=0.5),
        _layer("Dense", "fc", ["do"], units=3, activation="softmax", use_bias=True),
    ]
    topo = {"model_config": {"config": {"name": "t", "layers": layers, "output_layers": [["fc", 0, 0]]}}}
    weights = dequantize([{"paths": ["x"], "weights": specs}], b"".join(chunks))
    for k in w:
        np.testing.assert_array_equal(weights[k], w[k])
    model = to_onnx(topo, weights)

    x = rng.random((2, 6, 6, 2)).astype(np.float32)
    # independent NHWC reference
    c1 = _conv_nhwc(x, w["c1/kernel"], 1, ((0, 1), (0, 1)))                      # 7x7 -> 5x5
    bn = (c1 - w["bn/moving_mean"]) / np.sqrt(w["bn/moving_variance"] + 1e-3) * w["bn/gamma"] + w["bn/beta"]
    r6 = np.clip(bn, 0, 6)
    dwk = w["dw/depthwise_kernel"][:, :, :, 0]
    dw = np.zeros_like(r6)
    rp = np.pad(r6, ((0, 0), (1, 1), (1, 1), (0, 0)))
    for i in range(5):
        for j in range(5):
            dw[:, i, j] = np.einsum("nrsc,rsc->nc", rp[:, i:i + 3, j:j + 3], dwk)
    dw = np.maximum(dw, 0)
    pw = _conv_nhwc(dw, w["pw/kernel"], 1, ((0, 0), (0, 0))) + w["pw/bias"]
    add = r6 + pw
    mp = add[:, :4, :4].reshape(2, 2, 2, 2, 2, 4).max(axis=(2, 4))                # valid pool: 5 -> 2
    logits = mp.reshape(2, -1) @ w["fc/kernel"] + w["fc/bias"]
    want = np.exp(logits - logits.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"in": x.transpose(0, 3, 1, 2)})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_tfjs_keras_concatenate_and_same_average_pooling_match_tensorflow_semantics():
    rng = np.random.default_rng(5)
    layers = [
        _layer("InputLayer", "in", None, batch_input_shape=[None, 5, 4, 2]),
        _layer("AveragePooling2D", "ap", ["in"], pool_size=[3, 3], strides=[1, 1], padding="same"),
        _layer("Concatenate", "cat", ["in", "ap"], axis=-1),
        _layer("Flatten", "fl", ["cat"]),
    ]
    topo = {"model_config": {"config": {"name": "t", "layers": layers, "output_layers": [["fl", 0, 0]]}}}
    model = to_onnx(topo, {})
    x = rng.random((2, 5, 4, 2)).astype(np.float32)
    # TensorFlow's 'same' average: the mean of the window's cells inside the input
    ap = np.zeros_like(x)
    for i in range(5):
        for j in range(4):
            ap[:, i, j] = x[:, max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].mean(axis=(1, 2))
    want = np.concatenate([x, ap], axis=-1).reshape(2, -1)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"in": x.transpose(0, 3, 1, 2)})[0]
    np.testing.assert_allclose(got, want, atol=1e-6)
    bad = [dict(layers[0]), _layer("AveragePooling2D", "ap2", ["in"], pool_size=[3, 3], strides=[2, 2], padding="same")]
    with pytest.raises(ValueError, match="ap2: 'same' pooling supported at stride 1 only"):
        to_onnx({"model_config": {"config": {"name": "t", "layers": bad, "output_layers": [["ap2", 0, 0]]}}}, {})
