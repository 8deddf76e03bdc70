"""A transposed convolution (ONNX ConvTranspose) as the crossbar conv layer it is.

ConvTranspose scatters every input pixel, times the kernel, into the output at stride
`s`. The same output is a plain convolution (stride 1, same dilation `d`) over the
*zero-inserted* input: s - 1 zero rows/columns between neighbouring input pixels, then
`d * (k - 1) - pad_head` zeros before and `d * (k - 1) - pad_tail + output_padding` after
(a negative count crops instead). Its weight is the ConvTranspose weight rearranged:

    ONNX  W [Cin, Cout/G, R, S]  ->  conv  W' [Cout, Cin/G, R, S],
    W'[g*Cog + o, c, r, s] = W[g*Cig + c, o, R-1-r, S-1-s]

(per group g: input and output channel axes swapped, kernel flipped in both axes).
On the crossbar that is an ordinary conv layer; the inserted zeros are zero input rows,
which dynamic OU formation skips.
"""

from __future__ import annotations

import numpy as np


def to_conv_weight(w, groups):
    """ONNX ConvTranspose weight [Cin, Cout/G, R, S] -> conv weight [Cout, Cin/G, R, S]."""
    cin, cog, r, s = w.shape
    cig = cin // groups
    v = w.reshape(groups, cig, cog, r, s).transpose(0, 2, 1, 3, 4)
    return np.ascontiguousarray(v.reshape(groups * cog, cig, r, s)[:, :, ::-1, ::-1])


def from_conv_weight(w, groups):
    """The inverse of to_conv_weight."""
    cout, cig, r, s = w.shape
    cog = cout // groups
    v = w[:, :, ::-1, ::-1].reshape(groups, cog, cig, r, s).transpose(0, 2, 1, 3, 4)
    return np.ascontiguousarray(v.reshape(groups * cig, cog, r, s))


def head_pads(attrs, in_hw, kernel):
    """The ConvTranspose's leading pad (top, left), as onnxruntime applies it: `pads` when
    explicit; for auto_pad SAME_UPPER / SAME_LOWER and for an explicit `output_shape`, from
    the total pad that gives that output (SAME_UPPER puts the odd one at the end,
    SAME_LOWER and output_shape at the start)."""
    stride = attrs.get("strides", [1, 1])
    dil = attrs.get("dilations", [1, 1])
    opad = attrs.get("output_padding", [0, 0])
    auto = attrs.get("auto_pad", "NOTSET")
    shape = attrs.get("output_shape")
    heads = []
    for ax in range(2):
        natural = (in_hw[ax] - 1) * stride[ax] + opad[ax] + dil[ax] * (kernel[ax] - 1) + 1
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            total = natural - in_hw[ax] * stride[ax]
            heads.append(total // 2 if auto == "SAME_UPPER" else total - total // 2)
        elif auto == "VALID":
            heads.append(0)
        elif shape:
            total = natural - int(shape[-2 + ax])
            heads.append(total - total // 2)
        else:
            heads.append(int(attrs.get("pads", [0, 0, 0, 0])[ax]))
    return heads


def conv_input(x, attrs, kernel, out_hw):
    """The conv layer equivalent to a ConvTranspose with input `x` [N, C, H, W] whose
    output (from onnxruntime) is `out_hw`. Returns (input [N, C, H', W'], padding
    [ph, pw], info): the input is zero-inserted, then padded (or cropped) by what the
    symmetric `padding` does not cover. `info` records the rebuild for the provenance."""
    stride = [int(v) for v in attrs.get("strides", [1, 1])]
    dil = [int(v) for v in attrs.get("dilations", [1, 1])]
    n, c, h, w = x.shape
    up = np.zeros((n, c, (h - 1) * stride[0] + 1, (w - 1) * stride[1] + 1), dtype=x.dtype)
    up[:, :, ::stride[0], ::stride[1]] = x
    heads = head_pads(attrs, (h, w), kernel)
    eq_head, eq_tail, kept = [], [], []
    for ax in range(2):
        reach = dil[ax] * (kernel[ax] - 1)
        head = reach - heads[ax]
        tail = out_hw[ax] - up.shape[2 + ax] - head + reach
        eq_head.append(head)
        eq_tail.append(tail)
        kept.append(max(0, min(head, tail)))
    for ax in range(2):
        lo, hi = eq_head[ax] - kept[ax], eq_tail[ax] - kept[ax]
        axis = 2 + ax
        if lo < 0:
            up = np.take(up, range(-lo, up.shape[axis]), axis=axis)
        if hi < 0:
            up = np.take(up, range(0, up.shape[axis] + hi), axis=axis)
        width = [(0, 0)] * 4
        width[axis] = (max(lo, 0), max(hi, 0))
        up = np.pad(up, width)
    info = {"zero_insertion": stride,
            "conv_pads": [eq_head[0], eq_head[1], eq_tail[0], eq_tail[1]],
            "padding_folded_into_input": [eq_head[0] - kept[0], eq_head[1] - kept[1],
                                          eq_tail[0] - kept[0], eq_tail[1] - kept[1]]}
    return np.ascontiguousarray(up), kept, info


def conv2d(x, w, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """Direct float64 convolution with symmetric padding, the bundle's geometry:
    x [N, C, H, W], w [Cout, C/G, R, S] -> [N, Cout, Ho, Wo]."""
    x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    w = np.asarray(w, np.float64)
    n, c, h, wd = x.shape
    cout, cig, r, s = w.shape
    cog = cout // groups
    ho = (h - dilation[0] * (r - 1) - 1) // stride[0] + 1
    wo = (wd - dilation[1] * (s - 1) - 1) // stride[1] + 1
    xg = x.reshape(n, groups, cig, h, wd)
    wg = w.reshape(groups, cog, cig, r, s)
    out = np.zeros((n, groups, cog, ho, wo))
    for i in range(r):
        for j in range(s):
            y0, x0 = i * dilation[0], j * dilation[1]
            patch = xg[:, :, :, y0:y0 + (ho - 1) * stride[0] + 1:stride[0],
                       x0:x0 + (wo - 1) * stride[1] + 1:stride[1]]
            out += np.einsum("ngchw,goc->ngohw", patch, wg[:, :, :, i, j])
    return out.reshape(n, cout, ho, wo)
