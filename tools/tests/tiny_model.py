"""A small ONNX model built with onnx.helper, and its numpy forward pass.

x [N,3,12,12] -> conv1 (3->8, 3x3, stride 2, pad 1) -> BatchNorm -> Relu      [8,6,6]
 -> conv2 depthwise (8 groups, 3x3, pad 1) -> Relu                            [8,6,6]
 -> conv3 (8->4, 2 groups, 2x2, stride 2, pads top/left 0, bottom/right 1) -> Relu [4,3,3]
 -> Flatten -> fc1 Gemm transB=1 (36->10) -> Relu
 -> fc2 Gemm transB=0 (B [10,6]) -> Relu -> fc3 MatMul (B [6,3]) -> y
"""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def params(seed=0):
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        "w1": f(8, 3, 3, 3), "b1": f(8),
        "gamma": (1 + 0.1 * f(8)), "beta": f(8), "mean": f(8), "var": (0.5 + rng.random(8)).astype(np.float32),
        "w2": f(8, 1, 3, 3), "b2": f(8),
        "w3": f(4, 4, 2, 2),
        "fc1": f(10, 36), "fc1b": f(10),
        "fc2": f(10, 6),
        "fc3": f(6, 3),
    }


def build(path, p):
    init = [numpy_helper.from_array(v, k) for k, v in p.items()]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn1"], epsilon=1e-5),
        helper.make_node("Relu", ["bn1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], name="conv3", group=2, strides=[2, 2], pads=[0, 0, 1, 1]),
        helper.make_node("Relu", ["c3"], ["r3"]),
        helper.make_node("Flatten", ["r3"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc1", "fc1b"], ["g1"], name="fc1", transB=1),
        helper.make_node("Relu", ["g1"], ["r4"]),
        helper.make_node("Gemm", ["r4", "fc2"], ["g2"], name="fc2"),
        helper.make_node("Relu", ["g2"], ["r5"]),
        helper.make_node("MatMul", ["r5", "fc3"], ["y"], name="fc3"),
    ]
    # the BN parameters and conv3/fc weights as initializers; fc3 as a Constant node
    init = [t for t in init if t.name != "fc3"]
    nodes.insert(0, helper.make_node("Constant", [], ["fc3"], value=numpy_helper.from_array(p["fc3"], "fc3")))
    g = helper.make_graph(nodes, "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def conv2d(x, w, b=None, stride=(1, 1), pads=(0, 0, 0, 0), groups=1, dilation=(1, 1)):
    """Direct convolution. x [N,C,H,W], w [Cout,Cin/G,R,S], pads (top,left,bottom,right)."""
    t, l, bo, r = pads
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (t, bo), (l, r)))
    n, c, h, wd = x.shape
    cout, cg, kr, ks = w.shape
    dh, dw = dilation
    ho, wo = (h - dh * (kr - 1) - 1) // stride[0] + 1, (wd - dw * (ks - 1) - 1) // stride[1] + 1
    out = np.zeros((n, cout, ho, wo))
    per = cout // groups
    for o in range(cout):
        g = o // per
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(ho):
            for j in range(wo):
                patch = xs[:, :, i * stride[0]:i * stride[0] + dh * (kr - 1) + 1:dh,
                           j * stride[1]:j * stride[1] + dw * (ks - 1) + 1:dw]
                out[:, o, i, j] = np.sum(patch * w[o], axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


def forward(x, p):
    """Returns the tensor entering each layer: {layer name: array}."""
    relu = lambda v: np.maximum(v, 0)  # noqa: E731
    acts = {"conv1": x.astype(np.float64)}
    c1 = conv2d(x, p["w1"], p["b1"], (2, 2), (1, 1, 1, 1))
    s = p["gamma"] / np.sqrt(p["var"].astype(np.float64) + 1e-5)
    r1 = relu((c1 - p["mean"][None, :, None, None]) * s[None, :, None, None] + p["beta"][None, :, None, None])
    acts["conv2"] = r1
    r2 = relu(conv2d(r1, p["w2"], p["b2"], (1, 1), (1, 1, 1, 1), groups=8))
    acts["conv3"] = r2
    r3 = relu(conv2d(r2, p["w3"], None, (2, 2), (0, 0, 1, 1), groups=2))
    flat = r3.reshape(len(x), -1)
    acts["fc1"] = flat
    r4 = relu(flat @ p["fc1"].T + p["fc1b"])
    acts["fc2"] = r4
    r5 = relu(r4 @ p["fc2"])
    acts["fc3"] = r5
    return acts, r5 @ p["fc3"]
