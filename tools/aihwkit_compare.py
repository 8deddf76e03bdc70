#!/usr/bin/env python3
"""sresim's PCM preset side by side with IBM AIHWKit's PCM model on a bundle's network.

    OMP_NUM_THREADS=1 python3 tools/aihwkit_compare.py --sresim target/release/sresim \\
        --samples 200 --draws 3 --out docs/plots/aihwkit-compare.csv

Needs torch and aihwkit (pip install aihwkit==1.1.0, with the torch it was built with,
2.10; not in CI). For each time since
programming t in 1 s, 1 hour, 1 day, 1 year and drift compensation off and on:

- AIHWKit: the bundle's float network with every crossbar layer converted to an analog
  layer (InferenceRPUConfig, PCMLikeNoiseModel with g_max = 25 uS, a perfect periphery:
  forward.is_perfect, no tiling: one tile per layer, so its weights map to conductances
  by the layer's max |w| as sresim's quantization does; GlobalDriftCompensation or none),
  programmed and drifted to t, DRAWS times (torch seeds 0..DRAWS-1);
- sresim: `sresim accuracy --modes dense` with device.preset = nandakumar-pcm at
  device.time_s = t, one 8-bit cell per weight magnitude (precision.weight_bits = 9,
  crossbar.cell_bits = 8: a differential pair per weight, AIHWKit's single-pair mapping)
  and `--draws SRESIM_DRAWS` (default 1: draw 0, whose per-layer errors are reported).

Per layer: the relative error of the layer's output against the ideal product of the
same input, ||y - y_ideal|| / ||y_ideal|| without bias (sresim's func_rel_rmse of draw 0;
AIHWKit's mean over its draws), and top-1 (mean over draws, 95% Student-t interval).
Writes one CSV row per (simulator, t, compensation, layer) with the TOTAL row holding
top-1.
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sresim_export.bundle import check_file_destination, write_text_file  # noqa: E402
from sresim_export.cli import Parser, positive_int, run  # noqa: E402

TIMES = [("1 s", 1.0), ("1 hour", 3600.0), ("1 day", 86400.0), ("1 year", 365 * 86400.0)]
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def interval(xs):
    """Mean and half-width of the 95% Student-t interval (0 for one value)."""
    m = float(np.mean(xs))
    if len(xs) < 2:
        return m, 0.0
    return m, T975.get(len(xs) - 1, 1.96) * float(np.std(xs, ddof=1)) / math.sqrt(len(xs))


def torch_network(bundle):
    """The bundle's graph as a torch module (the ops of lenet5-mnist and fmnist-cnn)."""
    import torch
    from torch import nn

    m = json.loads((bundle / "manifest.json").read_text())
    t = np.load(bundle / "tensors.npz")
    layers = {l["name"]: l for l in m["layers"]}

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleDict()
            for name, l in layers.items():
                w = torch.tensor(t[l["weight"]], dtype=torch.float32)
                bias = f"{name}.bias" in t.files
                if l["kind"] == "conv":
                    mod = nn.Conv2d(
                        l["in_channels"], l["out_channels"], tuple(l["kernel"]),
                        stride=tuple(l["stride"]), padding=tuple(l["padding"]),
                        dilation=tuple(l["dilation"]), groups=l["groups"], bias=bias,
                    )
                else:
                    mod = nn.Linear(w.shape[1], w.shape[0], bias=bias)
                mod.weight.data.copy_(w)
                if bias:
                    mod.bias.data.copy_(torch.tensor(t[f"{name}.bias"], dtype=torch.float32))
                self.layers[name] = mod

        def forward(self, x):
            env = {"graph.input": x}
            for node in m["graph"]:
                op, xin = node["op"], env[node["inputs"][0]]
                if op == "layer":
                    y = self.layers[node["layer"]](xin)
                elif op == "MaxPool":
                    y = nn.functional.max_pool2d(xin, node["kernel_shape"], node.get("strides"))
                elif op == "AveragePool":
                    y = nn.functional.avg_pool2d(xin, node["kernel_shape"], node.get("strides"))
                elif op == "Relu":
                    y = torch.relu(xin)
                elif op in ("Reshape", "Flatten"):
                    y = xin.reshape(xin.shape[0], -1)
                else:
                    sys.exit(f"error: {bundle}: graph: op {op} is not supported here")
                env[node["output"]] = y
            return env[m["graph"][-1]["output"]]

    x = torch.tensor(t["graph.input"], dtype=torch.float32)
    labels = np.asarray(t["graph.labels"])
    weights = {n: torch.tensor(t[l["weight"]], dtype=torch.float32) for n, l in layers.items()}
    return Net(), x, labels, weights, layers


def aihwkit_rows(bundle, samples, draws):
    import torch
    from aihwkit.inference import GlobalDriftCompensation, PCMLikeNoiseModel
    from aihwkit.nn.conversion import convert_to_analog
    from aihwkit.simulator.configs import InferenceRPUConfig
    from aihwkit.simulator.parameters.io import IOParameters

    torch.set_num_threads(1)
    net, x, labels, weights, layers = torch_network(bundle)
    x, labels = x[:samples], labels[:samples]
    rows = []
    for comp in ("off", "on"):
        cfg = InferenceRPUConfig()
        cfg.forward = IOParameters(is_perfect=True)
        cfg.mapping.max_input_size = 0
        cfg.mapping.max_output_size = 0
        cfg.noise_model = PCMLikeNoiseModel(g_max=25.0)
        cfg.drift_compensation = GlobalDriftCompensation() if comp == "on" else None
        for label, t in TIMES:
            top1, errs = [], {n: [] for n in layers}
            for d in range(draws):
                torch.manual_seed(d)
                model = convert_to_analog(net, cfg)
                model.eval()
                captured = {}

                def hook(name):
                    def f(mod, inp, out):
                        captured[name] = (inp[0].detach(), out.detach())
                    return f

                handles = [model.layers[n].register_forward_hook(hook(n)) for n in layers]
                model.program_analog_weights()
                model.drift_analog_weights(t)
                with torch.no_grad():
                    logits = model(x)
                for h in handles:
                    h.remove()
                top1.append(float((logits.argmax(1).numpy() == labels).mean()))
                for n, l in layers.items():
                    xin, y = captured[n]
                    w = weights[n]
                    # The bias is added digitally (exactly): the bundle's.
                    b = net.layers[n].bias
                    if l["kind"] == "conv":
                        ideal = torch.nn.functional.conv2d(
                            xin, w, None, tuple(l["stride"]), tuple(l["padding"]),
                            tuple(l["dilation"]), l["groups"])
                        if b is not None:
                            y = y - b.detach()[None, :, None, None]
                    else:
                        ideal = xin @ w.T
                        if b is not None:
                            y = y - b.detach()[None, :]
                    errs[n].append(float((y - ideal).norm() / ideal.norm()))
            m, h = interval(top1)
            rows.append(("aihwkit", label, comp, "TOTAL", m, h, ""))
            for n in layers:
                rows.append(("aihwkit", label, comp, n, "", "", float(np.mean(errs[n]))))
            print(f"aihwkit t={label} compensation={comp}: top-1 {m:.4f} +- {h:.4f}", flush=True)
    return rows


def sresim_rows(binary, bundle, samples, draws):
    rows = []
    for comp in ("off", "on"):
        for label, t in TIMES:
            with tempfile.TemporaryDirectory() as out:
                cmd = [
                    binary, "accuracy", "-w", str(bundle), "--modes", "dense",
                    "--samples", str(samples), "--draws", str(draws), "-q", "-o", out,
                    "--set", "device.preset=nandakumar-pcm",
                    "--set", f"device.time_s={t}",
                    "--set", f"device.drift_compensation={comp}",
                    "--set", "precision.weight_bits=9",
                    "--set", "crossbar.cell_bits=8",
                ]
                subprocess.run(cmd, check=True)
                with open(Path(out) / "accuracy.csv") as f:
                    recs = [r for r in csv.DictReader(f) if r["mode"] == "dense"]
            for r in recs:
                if r["layer"] == "TOTAL":
                    m = float(r.get("top1_mean") or r["top1"])
                    lo = r.get("top1_ci_low")
                    h = m - float(lo) if lo else 0.0
                    rows.append(("sresim", label, comp, "TOTAL", m, h, ""))
                    print(f"sresim t={label} compensation={comp}: top-1 {m:.4f} +- {h:.4f}", flush=True)
                else:
                    rows.append(("sresim", label, comp, r["layer"], "", "", float(r["func_rel_rmse"])))
    return rows


def main(argv=None):
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", type=Path, default=Path("workloads/lenet5-mnist"))
    ap.add_argument("--sresim", default="target/release/sresim")
    ap.add_argument("--samples", type=positive_int, default=500)
    ap.add_argument("--draws", type=positive_int, default=3, help="AIHWKit's draws (torch seeds)")
    ap.add_argument("--sresim-draws", type=positive_int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", choices=["aihwkit", "sresim"])
    a = ap.parse_args(argv)

    def compare():
        # the destination first: a FIFO or directory at --out costs no run
        check_file_destination(a.out, "--out")
        rows = []
        if a.only != "sresim":
            rows += aihwkit_rows(a.bundle, a.samples, a.draws)
        if a.only != "aihwkit":
            rows += sresim_rows(a.sresim, a.bundle, a.samples, a.sresim_draws)
        text = io.StringIO(newline="")
        w = csv.writer(text)
        w.writerow(["simulator", "time", "compensation", "layer", "top1_mean", "top1_ci_half", "rel_error"])
        w.writerows(rows)
        write_text_file(a.out, text.getvalue(), "--out")

    return run(compare, where=a.out)


if __name__ == "__main__":
    sys.exit(main())
