"""Training small chain CNNs in PyTorch, dense and with Structured Sparsity Learning.

SSL (Wen et al., "Learning Structured Sparsity in Deep Neural Networks", NIPS 2016), as
the workload builders apply it to a trained dense network:
1. train with a group-lasso term added to the loss: for every conv weight W [n, c, r, s]
   sum_n ||W[n]|| (filters) + sum_c ||W[:, c]|| (channels) + sum_(c,r,s) ||W[:, c, r, s]||
   (filter shapes, the crossbar's unrolled rows), and for every fc weight [out, in] its
   rows (outputs) and columns (inputs); each group's L2 norm is weighted by sqrt(group
   size), so every weight feels about the same pull, whatever its group's size;
2. zero every group whose RMS (norm / sqrt(size)) is below `threshold` times the RMS of
   its layer's weights; a removed filter takes its bias along, and a removed filter and
   the channel (fc: input columns) of the next layer that reads it go together, since
   either one alone leaves the other doing nothing;
3. fine-tune with the zero masks held fixed.

A network is a chain given as a list of ops: ("conv", name, cin, cout, k, pad),
("fc", name, in, out), ("relu",), ("maxpool", k), ("flatten",). `to_onnx` writes the same
chain as an ONNX model for the exporter. Everything runs on one CPU thread with seeded
generators and deterministic algorithms, so a rebuild on the same machine gives the
same weights. torch is imported here only: the rest of sresim_export does not need it.
"""

from __future__ import annotations

import numpy as np
import onnx
import torch

from .bundle import write_onnx
from onnx import TensorProto, helper, numpy_helper


def deterministic(seed):
    """One thread, deterministic kernels, seeded torch generator."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)


class ChainNet(torch.nn.Module):
    """The chain of ops `spec`; `weighted` lists its conv and fc layer names in order."""

    def __init__(self, spec):
        super().__init__()
        self.spec = spec
        self.ops = torch.nn.ModuleList()
        self.weighted = []
        for op in spec:
            if op[0] == "conv":
                _, name, cin, cout, k, pad = op
                self.ops.append(torch.nn.Conv2d(cin, cout, k, padding=pad))
                self.weighted.append(name)
            elif op[0] == "fc":
                _, name, fin, fout = op
                self.ops.append(torch.nn.Linear(fin, fout))
                self.weighted.append(name)
            elif op[0] == "relu":
                self.ops.append(torch.nn.ReLU())
            elif op[0] == "maxpool":
                self.ops.append(torch.nn.MaxPool2d(op[1]))
            elif op[0] == "flatten":
                self.ops.append(torch.nn.Flatten())
            else:
                raise ValueError(f"unknown op {op[0]}")

    def forward(self, x):
        for m in self.ops:
            x = m(x)
        return x

    def layers(self):
        """[(name, module)] of the conv and fc layers, in order."""
        mods = [m for m in self.ops if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
        return list(zip(self.weighted, mods))


def evaluate(net, x, y, batch=500):
    """Top-1 of `net` on numpy images x [N, 1, H, W] in [0, 1] and labels y."""
    net.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            out = net(torch.from_numpy(x[i:i + batch]))
            correct += int((out.argmax(1).numpy() == y[i:i + batch]).sum())
    return correct / len(x)


def group_lasso(net, mult=None):
    """The SSL term: sum over groups of sqrt(size) * ||group||, for every layer; `mult`
    {name: factor} scales a layer's groups (Caffe's per-layer decay_mult; absent: 1)."""
    total = 0.0
    for name, m in net.layers():
        w = m.weight
        if w.dim() == 4:
            n, c, r, s = w.shape
            term = (c * r * s) ** 0.5 * w.flatten(1).norm(dim=1).sum()                   # filters
            term = term + (n * r * s) ** 0.5 * w.transpose(0, 1).flatten(1).norm(dim=1).sum()  # channels
            term = term + n ** 0.5 * w.flatten(1).norm(dim=0).sum()                     # shapes
        else:
            o, i = w.shape
            term = i ** 0.5 * w.norm(dim=1).sum() + o ** 0.5 * w.norm(dim=0).sum()
        total = total + (term * mult[name] if mult and name in mult else term)
    return total


def train(net, x, y, epochs, lr, rng, log, batch=64, momentum=0.9, decay=0.0, lasso=0.0,
          masks=None, lr_end=None, lasso_mult=None):
    """SGD with momentum on numpy data, one epoch = one seeded permutation of x. `decay`
    is L2 weight decay on the weights (not biases), `lasso` the SSL term's factor
    (`lasso_mult` its per-layer factors, group_lasso), `masks`
    {name: (weight mask, bias mask)} held fixed after every step. The learning rate falls
    linearly (per epoch) to `lr_end` when given."""
    params_w = [m.weight for _, m in net.layers()]
    params_b = [m.bias for _, m in net.layers()]
    opt = torch.optim.SGD([{"params": params_w, "weight_decay": decay},
                           {"params": params_b, "weight_decay": 0.0}], lr=lr, momentum=momentum)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    for epoch in range(epochs):
        if lr_end is not None and epochs > 1:
            for g in opt.param_groups:
                g["lr"] = lr + (lr_end - lr) * epoch / (epochs - 1)
        net.train()
        order = torch.from_numpy(rng.permutation(len(x)))
        total, reg = 0.0, 0.0
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            loss = torch.nn.functional.cross_entropy(net(xt[idx]), yt[idx])
            total += float(loss.detach()) * len(idx)
            if lasso:
                gl = group_lasso(net, lasso_mult)
                reg += float(gl.detach()) * len(idx)
                loss = loss + lasso * gl
            opt.zero_grad()
            loss.backward()
            opt.step()
            if masks is not None:
                apply_masks(net, masks)
        msg = f"  epoch {epoch + 1}/{epochs}: lr {opt.param_groups[0]['lr']:.4f} loss {total / len(x):.4f}"
        if lasso:
            msg += f" group-lasso {reg / len(x):.2f}"
        log(msg)


def apply_masks(net, masks):
    with torch.no_grad():
        for name, m in net.layers():
            wm, bm = masks[name]
            m.weight.mul_(wm)
            m.bias.mul_(bm)


def _rms(t):
    return t.pow(2).mean().sqrt()


def threshold_groups(net, threshold, hw_after):
    """Step 2 of SSL: the masks {name: (weight mask, bias mask)} that zero every group of
    RMS below `threshold` x the layer's RMS, with removed filters and the next layer's
    channels tied together. `hw_after[name]` is the number of fc inputs one channel of
    conv `name` becomes when the next layer is fc (after pooling and flattening)."""
    masks = {}
    layers = net.layers()
    with torch.no_grad():
        for i, (name, m) in enumerate(layers):
            w = m.weight
            t = threshold * _rms(w)
            keep = torch.ones_like(w)
            # The network's input channels and its outputs (the classes) are never removed.
            if i + 1 < len(layers):
                keep[_rms_over(w, tuple(range(1, w.dim()))) < t] = 0   # filters, fc rows
            if w.dim() == 4:
                if i > 0:
                    keep[:, _rms_over(w, (0, 2, 3)) < t] = 0          # channels
                keep *= (_rms_over(w, (0,)) >= t).float()[None]       # shapes
            else:
                keep[:, _rms_over(w, (0,)) < t] = 0                   # fc columns
            masks[name] = [keep, torch.ones_like(m.bias)]
        # A filter with no kept weight is removed with its bias; a removed filter removes
        # the next layer's channel, and a channel no kept weight reads removes its filter.
        for (name, m), (nxt, m2) in zip(layers, layers[1:]):
            wm, bm = masks[name]
            nm = masks[nxt][0]
            per = hw_after.get(name, 1) if nm.dim() == 2 and wm.dim() == 4 else 1
            cols = nm.reshape(nm.shape[0], -1, per) if nm.dim() == 2 else nm.transpose(0, 1)
            for _ in range(2):
                dead_filter = wm.flatten(1).sum(1) == 0
                if nm.dim() == 2:
                    cols[:, dead_filter, :] = 0
                    dead_channel = cols.sum(dim=(0, 2)) == 0
                else:
                    nm[:, dead_filter] = 0
                    dead_channel = nm.transpose(0, 1).flatten(1).sum(1) == 0
                wm[dead_channel] = 0
            bm[wm.flatten(1).sum(1) == 0] = 0
    apply_masks(net, masks)
    return masks


def _rms_over(w, dims):
    return w.pow(2).mean(dim=dims).sqrt()


def structure(weight):
    """Group sparsity of one layer's numpy weight: counts of removed (all-zero) filters,
    channels and filter shapes (conv) or rows and columns (fc), with the totals."""
    w = weight != 0
    if weight.ndim == 4:
        return {"weights_zero": float(np.mean(~w)),
                "filters_removed": int((~w.any(axis=(1, 2, 3))).sum()), "filters": int(w.shape[0]),
                "channels_removed": int((~w.any(axis=(0, 2, 3))).sum()), "channels": int(w.shape[1]),
                "shapes_removed": int((~w.any(axis=0)).sum()), "shapes": int(np.prod(w.shape[1:]))}
    return {"weights_zero": float(np.mean(~w)),
            "rows_removed": int((~w.any(axis=1)).sum()), "rows": int(w.shape[0]),
            "columns_removed": int((~w.any(axis=0)).sum()), "columns": int(w.shape[1])}


def numpy_params(net):
    """{name: weight, name_b: bias} as float32 numpy arrays."""
    out = {}
    for name, m in net.layers():
        out[name] = m.weight.detach().numpy().astype(np.float32).copy()
        out[name + "_b"] = m.bias.detach().numpy().astype(np.float32).copy()
    return out


def to_onnx(spec, params, in_shape, path, input_scale=1.0):
    """Writes the chain `spec` with `params` (numpy_params) as an ONNX model (opset 13)
    taking x [N, *in_shape]. `input_scale` is folded into the first layer's weight, so the
    model takes inputs / input_scale (e.g. raw 0..255 pixels for a network trained on
    pixels / 255)."""
    init, nodes = [], []
    cur, first = "x", True
    for i, op in enumerate(spec):
        out = f"t{i}"
        if op[0] in ("conv", "fc"):
            name = op[1]
            w = params[name] * np.float32(input_scale) if first else params[name]
            first = False
            init += [numpy_helper.from_array(w.astype(np.float32), name),
                     numpy_helper.from_array(params[name + "_b"], name + "_b")]
            if op[0] == "conv":
                p = op[5]
                nodes.append(helper.make_node("Conv", [cur, name, name + "_b"], [out], name=name,
                                              pads=[p, p, p, p]))
            else:
                nodes.append(helper.make_node("Gemm", [cur, name, name + "_b"], [out], name=name, transB=1))
        elif op[0] == "relu":
            nodes.append(helper.make_node("Relu", [cur], [out]))
        elif op[0] == "maxpool":
            k = op[1]
            nodes.append(helper.make_node("MaxPool", [cur], [out], kernel_shape=[k, k], strides=[k, k]))
        elif op[0] == "flatten":
            nodes.append(helper.make_node("Flatten", [cur], [out], axis=1))
        cur = out
    nodes[-1].output[0] = "logits"
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *in_shape])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", None])], init)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    write_onnx(path, model)


class Run:
    """A training run: its log (printed, and kept for the bundle's train.log) and the test
    sets its top-1 is measured on (a list of (x, y); `acc` gives one top-1 per set)."""

    def __init__(self, evals):
        self.lines = []
        self.evals = evals

    def log(self, msg):
        print(msg, flush=True)
        self.lines.append(msg)

    def acc(self, net):
        return tuple(evaluate(net, x, y) for x, y in self.evals)

    def top1(self, what, net):
        """Measures and logs `net`'s top-1 on every test set; returns them."""
        a = self.acc(net)
        self.log(f"{what}: top-1 (torch float32) " + " / ".join(f"{v:.4f}" for v in a))
        return a


def train_dense(run, net, x, y, rng, epochs, lr, lr_end, decay, batch):
    """Phase 1: the dense network, SGD with momentum 0.9 and weight decay; its top-1."""
    run.log(f"dense: {len(x)} training images, {epochs} epochs, SGD momentum 0.9, lr {lr}->{lr_end}, "
            f"weight decay {decay}, batch {batch}")
    train(net, x, y, epochs, lr, rng, run.log, batch=batch, decay=decay, lr_end=lr_end)
    return run.top1("dense", net)


def train_ssl(run, net, x, y, rng, h, hw_after, batch):
    """SSL on the trained `net`, in place (the module doc's three steps) with the
    hyper-parameters `h` (epochs, lr, lasso, threshold, ft_epochs, ft_lr, ft_lr_end, decay; optional
    lasso_mult {layer: factor});
    the top-1 after each step."""
    run.log(f"SSL: {h['epochs']} epochs from the dense weights, group lasso {h['lasso']}, lr {h['lr']}, "
            f"no weight decay")
    if h.get("lasso_mult"):
        run.log("  per-layer group-lasso factors: " + ", ".join(f"{k} x{v}" for k, v in h["lasso_mult"].items()))
    train(net, x, y, h["epochs"], h["lr"], rng, run.log, batch=batch, lasso=h["lasso"],
          lasso_mult=h.get("lasso_mult"))
    accs = {"after_group_lasso": run.top1("after group lasso", net)}
    masks = threshold_groups(net, h["threshold"], hw_after)
    accs["thresholded"] = run.top1(f"groups below {h['threshold']} x layer RMS zeroed", net)
    for name, (wm, _) in masks.items():
        run.log(f"  {name}: {structure(wm.numpy())}")
    run.log(f"fine-tune: {h['ft_epochs']} epochs, zeros held, lr {h['ft_lr']}->{h['ft_lr_end']}, "
            f"weight decay {h['decay']}")
    train(net, x, y, h["ft_epochs"], h["ft_lr"], rng, run.log, batch=batch, decay=h["decay"], masks=masks,
          lr_end=h["ft_lr_end"])
    accs["fine_tuned"] = run.top1("SSL fine-tuned", net)
    return accs
