"""The MobileNetV2 builder's reduced input size: at_size() changes only the input layer and
the average-pooling head, and the head stays the global average of the final map."""

import os
import sys

import numpy as np
import onnxruntime as ort
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from build_mobilenetv2_nsfwjs import at_size, final_map  # noqa: E402
from sresim_export.tfjs_keras import to_onnx  # noqa: E402
from test_builders_core import _conv_nhwc, _layer  # noqa: E402


def test_final_map_of_five_padded_stride2_stages():
    # one stage: ZeroPadding2D((0, 1), (0, 1)) then a valid 3x3 stride-2 conv,
    # n -> (n + 1 - 3) // 2 + 1: 224 -> 112 -> 56 -> 28 -> 14 -> 7; 96 -> 48 -> 24 -> 12 -> 6 -> 3
    assert final_map(224) == 7
    assert final_map(96) == 3
    assert final_map(128) == 4
    assert final_map(100) == 3   # 100 -> 50 -> 25 -> 12 (= (25 - 2) // 2 + 1) -> 6 -> 3
    assert final_map(33) == 1    # 33 -> 16 -> 8 -> 4 -> 2 -> 1


def _net(pool=7):
    """Five MobileNetV2-like stride-2 stages on one channel, then nsfwjs's head."""
    rng = np.random.default_rng(5)
    layers = [_layer("InputLayer", "in", None, batch_input_shape=[None, 224, 224, 1])]
    weights, prev = {}, "in"
    for i in range(5):
        layers.append(_layer("ZeroPadding2D", f"p{i}", [prev], padding=[[0, 1], [0, 1]]))
        layers.append(_layer("Conv2D", f"c{i}", [f"p{i}"], filters=1, kernel_size=[3, 3], strides=[2, 2],
                             padding="valid", dilation_rate=[1, 1], activation="linear", use_bias=False))
        weights[f"c{i}/kernel"] = rng.standard_normal((3, 3, 1, 1)).astype(np.float32) / 3
        prev = f"c{i}"
    layers += [_layer("AveragePooling2D", "avg", [prev], pool_size=[pool, pool], strides=[pool, pool],
                      padding="valid"),
               _layer("Flatten", "fl", ["avg"]),
               _layer("Dense", "fc", ["fl"], units=2, activation="linear", use_bias=False)]
    weights["fc/kernel"] = rng.standard_normal((1, 2)).astype(np.float32)
    topo = {"model_config": {"config": {"name": "t", "layers": layers, "output_layers": [["fc", 0, 0]]}}}
    return topo, weights


def test_at_size_keeps_the_head_a_global_average():
    topo, w = _net()
    small = at_size(topo, 96)
    cfg = {l["name"]: l["config"] for l in small["model_config"]["config"]["layers"]}
    assert cfg["in"]["batch_input_shape"] == [None, 96, 96, 1]
    assert cfg["avg"]["pool_size"] == [3, 3] and cfg["avg"]["strides"] == [3, 3]
    # the shipped topology is not touched
    assert topo["model_config"]["config"]["layers"][0]["config"]["batch_input_shape"] == [None, 224, 224, 1]

    x = np.random.default_rng(6).random((1, 96, 96, 1)).astype(np.float32)
    y = x.astype(np.float64)
    for i in range(5):
        y = _conv_nhwc(y, w[f"c{i}/kernel"], 2, ((0, 1), (0, 1)))
    assert y.shape == (1, 3, 3, 1)
    want = y.mean(axis=(1, 2)) @ w["fc/kernel"]          # global average, then the dense layer
    sess = ort.InferenceSession(to_onnx(small, w).SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"in": x.transpose(0, 3, 1, 2)})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_at_size_refuses_a_head_that_is_not_global():
    topo, _ = _net(pool=5)
    with pytest.raises(ValueError, match="global average pooling head"):
        at_size(topo, 96)
