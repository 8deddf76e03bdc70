"""A tiny numpy CNN toolkit (forward and backward) for training small networks here,
without a deep-learning framework: conv (im2col), 2x2 max pooling, fully connected,
ReLU, softmax cross-entropy. float32 throughout. Used by tools/build_lenet5_mnist.py.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def im2col(x, r, s):
    """x [B, C, H, W] -> [B, Ho*Wo, C*R*S] (stride 1, no padding); column k = (c*R + r)*S + s."""
    b, c, h, w = x.shape
    win = sliding_window_view(x, (r, s), axis=(2, 3))  # [B, C, Ho, Wo, R, S]
    ho, wo = h - r + 1, w - s + 1
    return win.transpose(0, 2, 3, 1, 4, 5).reshape(b, ho * wo, c * r * s), ho, wo


def conv_forward(x, w, bias):
    cout, cin, r, s = w.shape
    cols, ho, wo = im2col(x, r, s)
    out = cols @ w.reshape(cout, -1).T + bias  # [B, Ho*Wo, Cout]
    return out.transpose(0, 2, 1).reshape(x.shape[0], cout, ho, wo), cols


def conv_backward(dout, x_shape, cols, w):
    b, cin, h, wd = x_shape
    cout, _, r, s = w.shape
    d = dout.reshape(b, cout, -1).transpose(0, 2, 1)  # [B, P, Cout]
    dw = np.einsum("bpo,bpk->ok", d, cols).reshape(w.shape)
    db = d.sum(axis=(0, 1))
    dcols = (d @ w.reshape(cout, -1)).reshape(b, h - r + 1, wd - s + 1, cin, r, s)
    dx = np.zeros(x_shape, dtype=dout.dtype)
    ho, wo = h - r + 1, wd - s + 1
    for i in range(r):
        for j in range(s):
            dx[:, :, i:i + ho, j:j + wo] += dcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return dx, dw, db


def pool_forward(x):
    b, c, h, w = x.shape
    v = x.reshape(b, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(b, c, h // 2, w // 2, 4)
    arg = v.argmax(axis=-1)
    return np.take_along_axis(v, arg[..., None], -1)[..., 0], arg


def pool_backward(dout, arg, x_shape):
    b, c, h, w = x_shape
    v = np.zeros((b, c, h // 2, w // 2, 4), dtype=dout.dtype)
    np.put_along_axis(v, arg[..., None], dout[..., None], -1)
    return v.reshape(b, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(x_shape)


def softmax_xent(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.mean(np.log(p[np.arange(len(labels)), labels] + 1e-12))
    grad = p.copy()
    grad[np.arange(len(labels)), labels] -= 1
    return loss, grad / len(labels)
