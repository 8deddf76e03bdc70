"""sresim_export.from_torch: a torch module and example inputs to a bundle in one call. The
bundle's float network computes the module's own outputs, its traces are the module's
activations, sresim opens it, and it is the bundle tools/export_onnx.py writes from the
same ONNX model, byte for byte (one code path)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not in tools/requirements.txt (CI installs only those); "
                    "from_torch is tested where torch is installed")
from torch import nn  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import from_torch, read_bundle  # noqa: E402
from sresim_export.netexec import run_graph  # noqa: E402
from sresim_export.schema import find_binary, manifest_error  # noqa: E402


class Tiny(nn.Module):
    """conv 3x3 -> BatchNorm -> ReLU -> MaxPool 2 -> flatten -> linear, on 1 x 8 x 8."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def features(self, x):
        return torch.flatten(self.pool(torch.relu(self.bn(self.conv(x)))), 1)

    def forward(self, x):
        return self.fc(self.features(x))


def tiny():
    """A seeded Tiny with BatchNorm statistics of its own (so eval and train mode differ),
    left in training mode; six inputs; its eval-mode logits."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = Tiny()
    with torch.no_grad():
        for _ in range(3):
            net(3 * torch.randn(16, 1, 8, 8) + 1)   # moves the running mean and variance
    x = torch.randn(6, 1, 8, 8)
    net.eval()
    with torch.no_grad():
        logits = net(x).numpy().astype(np.float64)
    net.train()
    return net, x, logits


def wrong_on_two(logits):
    """Labels: the module's predictions, with samples 0 and 1 given another class (top-1 4/6)."""
    labels = np.argmax(logits, 1)
    labels[:2] = (labels[:2] + 1) % logits.shape[1]
    return labels


def test_the_bundle_computes_the_modules_outputs(tmp_path):
    net, x, logits = tiny()
    labels = wrong_on_two(logits)
    lines = []
    w = from_torch(net, x, tmp_path / "b", labels=labels, name="tiny", log=lines.append)
    assert net.training, "the module's training flag is restored"
    assert (w.layers, w.samples, w.top1) == (2, 6, 4 / 6)
    assert str(w) == f"wrote {tmp_path / 'b'}: 2 layers, 6 samples"
    m, t = read_bundle(str(tmp_path / "b"))
    assert manifest_error(m) is None          # the schema mirror of sresim's reader
    assert m["name"] == "tiny" and m["samples"] == 6
    assert [(l["kind"], l.get("kernel"), l.get("in_features")) for l in m["layers"]] == [
        ("conv", [3, 3], None), ("fc", None, 64)]
    assert m["provenance"]["exporter"] == "sresim_export.from_torch"
    # eval mode: the BatchNorm's running statistics are folded into the conv's weight
    bn = net.bn
    scale = (bn.weight / torch.sqrt(bn.running_var + bn.eps)).detach().numpy()
    folded = net.conv.weight.detach().numpy() * scale[:, None, None, None]
    np.testing.assert_allclose(t[m["layers"][0]["weight"]], folded, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(t[m["labels"]], labels)
    # the traces are the module's activations: its input, and the flattened pooled features
    conv, fc = m["layers"]
    np.testing.assert_array_equal(t[conv["input"]], x.numpy())
    net.eval()
    with torch.no_grad():
        feats = net.features(x).numpy()
    np.testing.assert_allclose(t[fc["input"]], feats, rtol=1e-5, atol=1e-6)
    # the float network (numpy executor) and onnxruntime's reference are the module's logits
    got = run_graph(m, t, t[m["graph_input"]])[m["graph_output"]]
    np.testing.assert_allclose(got, logits, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(t["graph.reference"], logits, rtol=1e-4, atol=1e-4)


def binary_with_check():
    binary = find_binary()
    if binary is None:
        pytest.skip("no built sresim binary (cargo build, or set SRESIM)")
    if "unrecognized subcommand" in subprocess.run([binary, "check", "."], capture_output=True,
                                                   text=True).stderr:
        pytest.skip(f"{binary} predates `sresim check` (rebuild it)")
    return binary


def test_sresim_checks_the_bundle_and_its_accuracy_is_the_modules(tmp_path):
    binary = binary_with_check()
    net, x, logits = tiny()
    labels = wrong_on_two(logits)
    lines = []
    w = from_torch(net, x, tmp_path / "b", labels=labels, name="tiny", log=lines.append)
    assert w.checked is not None and lines[-1] == f"sresim check: {w.checked}"
    r = subprocess.run([binary, "check", str(tmp_path / "b")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == (f"ok: {tmp_path / 'b'}: tiny: 2 layers, 6 samples; "
                                f"graph of 5 nodes over 6 samples, labelled")
    r = subprocess.run([binary, "accuracy", "--workload", str(tmp_path / "b"), "--modes", "none",
                        "--out", str(tmp_path / "acc"), "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "acc" / "accuracy.csv") as f:
        head, *rows = [l.split(",") for l in f.read().splitlines()]
    total = dict(zip(head, next(r for r in rows if r[1] == "TOTAL")))
    assert float(total["top1_float"]) == pytest.approx(4 / 6)
    out = tmp_path / "float.npy"
    r = subprocess.run([binary, "accuracy", "--workload", str(tmp_path / "b"), "--float-logits",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(out), logits, rtol=1e-4, atol=1e-4)


# The manifest keys that say where a bundle came from (the tool, the model's origin, the
# inputs' description); everything else is the export itself.
ORIGIN = ("source", "provenance.model", "provenance.inputs", "provenance.exporter")


def without_origin(manifest):
    m = json.loads(json.dumps(manifest))
    origin = {"source": m.pop("source")}
    for key in ("model", "inputs", "exporter"):
        origin[f"provenance.{key}"] = m["provenance"].pop(key)
    return m, origin


@pytest.mark.parametrize("prune", [None, "ssl"])
def test_from_torch_and_the_command_line_write_the_same_bundle(tmp_path, prune):
    net, x, logits = tiny()
    labels = wrong_on_two(logits)
    onnx_file, npy = tmp_path / "tiny.onnx", tmp_path / "x.npy"
    opts = {"prune": prune, "sparsity": 0.5} if prune else {}
    w = from_torch(net, x, tmp_path / "api", labels=labels, name="tiny", save_onnx=onnx_file,
                   log=lambda _: None, **opts)
    np.save(npy, x.numpy())
    flags = ["--prune", prune, "--sparsity", "0.5"] if prune else []
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "export_onnx.py"), str(onnx_file),
                        "--input", str(npy), "--labels", ",".join(map(str, labels)), "--name", "tiny",
                        "--out", str(tmp_path / "cli"), *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"wrote {tmp_path / 'cli'}: 2 layers, 6 samples\n"
    with open(tmp_path / "api" / "tensors.npz", "rb") as a, open(tmp_path / "cli" / "tensors.npz", "rb") as c:
        assert a.read() == c.read(), "tensors.npz differ"
    api, api_origin = without_origin(read_bundle(str(tmp_path / "api"))[0])
    cli, cli_origin = without_origin(read_bundle(str(tmp_path / "cli"))[0])
    assert json.dumps(api, indent=1) == json.dumps(cli, indent=1)
    assert (api["provenance"]["pruning"] is None) == (prune is None)
    # the origin: the same ONNX bytes, said differently
    assert api_origin["provenance.model"]["sha256"] == cli_origin["provenance.model"]["sha256"]
    assert cli_origin["provenance.model"]["file"] == "tiny.onnx"
    assert api_origin["provenance.model"]["torch"] == torch.__version__
    assert api_origin["provenance.exporter"] == "sresim_export.from_torch"
    assert cli_origin["provenance.exporter"] == "tools/export_onnx.py"
    assert api_origin["provenance.inputs"] == {"array": [6, 1, 8, 8], "input": "input"}
    assert api_origin["source"].startswith("tiny: torch module Tiny exported by torch.onnx at opset 17")


def test_refusals_are_one_line_and_write_nothing(tmp_path):
    net, x, logits = tiny()
    cases = [((net, x[0, 0, 0]), {}, "inputs: expected a batch [N, ...] of at least one sample, got shape [8]"),
             ((net, x.to(torch.bool)), {}, "inputs: expected floating-point values (or integer token ids), got bool"),
             # integers are token ids: a module that takes floats refuses them when traced
             ((net, x.to(torch.int64)), {}, "torch.onnx.export of Tiny failed: "),
             ((net, x), {"labels": [0, 1]}, "labels: 2 labels for 6 inputs"),
             ((net, x), {"labels": [0.5] * 6}, "labels: expected a 1-D array of integer class indices, got float64 [6]"),
             ((net, x), {"prune": "ssl"}, "sparsity must be in (0, 1) when pruning, got 0.0"),
             ((net, x[:, :, :4]), {}, "torch.onnx.export of Tiny failed: ")]
    for (module, inputs), kw, want in cases:
        with pytest.raises(ValueError) as e:
            from_torch(module, inputs, tmp_path / "b", log=lambda _: None, **kw)
        assert str(e.value).startswith(want) and "\n" not in str(e.value)
        assert not (tmp_path / "b").exists()
    assert net.training


def test_a_vision_transformer_in_one_call_with_a_graph_input_of_its_own(tmp_path):
    """tools/build_fmnist_vit.py's ViT at a toy size: 2 layer-trace samples, a graph input of
    5 uint8 images of its own (stored as uint8), labelled; the projections are fc layers over
    the 10 tokens and the float network computes the module's logits."""
    sys.path.insert(0, os.path.join(REPO, "tools"))
    from build_fmnist_vit import ViT

    torch.set_num_threads(1)
    torch.manual_seed(0)
    net = ViT(patch=4, dim=16, heads=2, depth=1, mlp=32, size=12).eval()
    gx = np.random.default_rng(1).integers(0, 256, (5, 1, 12, 12), dtype=np.uint8)
    labels = np.array([0, 1, 2, 3, 4])
    w = from_torch(net, torch.randn(2, 1, 12, 12), tmp_path / "vit", labels=labels, graph_inputs=gx,
                   log=lambda _: None)
    m, t = read_bundle(str(tmp_path / "vit"))
    assert (w.samples, m["samples"], t[m["graph_input"]].dtype) == (2, 2, np.uint8)
    assert np.array_equal(t[m["graph_input"]], gx) and np.array_equal(t[m["labels"]], labels)
    assert [l.get("tokens") for l in m["layers"]] == [None] + [10] * 6 + [None]
    with torch.no_grad():
        want = net(torch.from_numpy(gx.astype(np.float32))).numpy()
    np.testing.assert_allclose(run_graph(m, t, gx)[m["graph_output"]], want, rtol=1e-4, atol=1e-5)
    assert w.top1 == float(np.mean(np.argmax(want, 1) == labels))
    with pytest.raises(ValueError, match=r"graph_inputs: expected \[M, 1, 12, 12\], got \[5, 12, 12\]"):
        from_torch(net, torch.randn(2, 1, 12, 12), tmp_path / "bad", graph_inputs=gx[:, 0])
