"""from_torch on the transformer modules of fixtures/make_torch_seq.py, untrained, at every
opset torch writes attention at (14-17, TorchScript) and with the dynamo exporter: each
goes in unedited (integer token ids, the fused fast path off while exporting) and the
bundle's float network computes the module's own logits. The Python snippets of
docs/exporting.md run as written. Needs torch (and transformers for BERT)."""

import os
import re
import sys

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not in tools/requirements.txt (CI installs only those); "
                    "from_torch is tested where torch is installed")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "fixtures"))

from sresim_export import from_torch, read_bundle  # noqa: E402
from sresim_export.netexec import run_graph  # noqa: E402

import make_torch_seq as seq  # noqa: E402

KINDS = {"layer": seq.EncoderLayerNet, "encoder": seq.EncoderNet, "mha": seq.MhaNet, "bert": seq.BertNet}
EXPORTS = [("torchscript", 14), ("torchscript", 15), ("torchscript", 16), ("torchscript", 17), ("dynamo", 17)]


def module(kind):
    if kind == "bert":
        pytest.importorskip("transformers", reason="transformers is not installed (BERT is built from its config)")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    return KINDS[kind]().eval()


@pytest.mark.parametrize("exporter,opset", EXPORTS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_transformer_module_goes_in_unedited(tmp_path, kind, exporter, opset):
    net = module(kind)
    ids = torch.from_numpy(np.random.default_rng(1).integers(0, seq.VOCAB, (5, seq.TOKENS)))
    with torch.no_grad():
        logits = net(ids).numpy()
    labels = np.argmax(logits, 1)
    w = from_torch(net, ids, tmp_path / "b", labels=labels, opset=opset, dynamo=exporter == "dynamo",
                   log=lambda _: None)
    assert w.top1 == 1.0
    assert torch.backends.mha.get_fastpath_enabled(), "the fast path is turned back on"
    m, t = read_bundle(str(tmp_path / "b"))
    tokens = seq.TOKENS + (kind == "encoder")
    assert {l.get("tokens") for l in m["layers"]} == {tokens, None}
    assert t[m["graph_input"]].dtype == np.int64
    got = run_graph(m, t, t[m["graph_input"]])[m["graph_output"]]
    # the graph computes onnxruntime's outputs to float rounding; onnxruntime's float32
    # kernels (the tanh GELU's above all) and torch's differ by up to ~2e-4 here
    np.testing.assert_allclose(got, t["graph.reference"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, logits, rtol=1e-3, atol=1e-3)


def test_opset_13_is_refused_by_torch_in_one_line(tmp_path):
    with pytest.raises(ValueError) as e:
        from_torch(module("layer"), torch.zeros(2, seq.TOKENS, dtype=torch.long), tmp_path / "b", opset=13,
                   log=lambda _: None)
    assert str(e.value).startswith("torch.onnx.export of EncoderLayerNet failed: ") and "\n" not in str(e.value)
    assert "scaled_dot_product_attention" in str(e.value) and not (tmp_path / "b").exists()


def python_blocks(path):
    """The ```python blocks of a Markdown file, in order."""
    text = open(os.path.join(REPO, path), encoding="utf-8").read()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


class MyNet(torch.nn.Module):
    """The reader's own image model of the snippets: a conv and a linear head on [3, H, W]."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, stride=4)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(torch.relu(self.conv(x))), 1))


def test_the_snippets_of_the_export_docs_run_as_written(tmp_path, monkeypatch):
    blocks = python_blocks("docs/exporting.md")
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    os.symlink(os.path.join(REPO, "tools"), tmp_path / "tools")
    torch.manual_seed(0)
    np.save("x.npy", np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32))
    np.save("y.npy", np.array([0, 1, 2, 0]))
    os.makedirs("workloads")
    for block in blocks:
        exec(compile(block, "docs/exporting.md", "exec"), {"MyNet": MyNet, "__name__": "snippet"})
    assert os.path.exists("m.onnx")
    for d in ("workloads/mynet", "textnet"):
        assert os.path.exists(os.path.join(d, "manifest.json")), d
