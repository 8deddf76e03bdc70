"""The sparsity of compressed LLMs through from_torch: whole attention heads pruned
(`prune_heads`) and N:M pruning at export (`prune="2:4"`), checked on the bundle written:
every pruned head zero across its packed Q/K/V columns and its output-projection rows,
at most N non-zeros in every M inputs of every pruned layer. Needs torch."""

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not in tools/requirements.txt (CI installs only those); "
                    "from_torch is tested where torch is installed")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import from_torch, prune, read_bundle  # noqa: E402

VOCAB, TOKENS, DIM, HEADS, FF = 11, 6, 16, 4, 32


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, DIM)
        self.enc = torch.nn.TransformerEncoderLayer(DIM, HEADS, FF, dropout=0.0, batch_first=True,
                                                    activation="relu", norm_first=True)
        self.head = torch.nn.Linear(DIM, 3)

    def forward(self, ids):
        return self.head(self.enc(self.emb(ids)).mean(1))


def net():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    return Net().eval()


def ids():
    return torch.from_numpy(np.random.default_rng(2).integers(0, VOCAB, (3, TOKENS)))


def layers(path):
    m, t = read_bundle(str(path))
    return {l["name"]: t[l["weight"]] for l in m["layers"]}, m


@pytest.mark.parametrize("fraction,count", [(0.25, 1), (0.5, 2), (0.6, 2)])
def test_pruned_heads_are_zero_in_their_columns_and_rows(tmp_path, fraction, count):
    n = net()
    before = n.enc.self_attn.in_proj_weight.detach().clone()
    w = from_torch(n, ids(), tmp_path / "b", prune_heads=fraction, log=lambda _: None)
    assert torch.equal(n.enc.self_attn.in_proj_weight, before), "the caller's module is untouched"
    ws, m = layers(tmp_path / "b")
    pruned = m["provenance"]["model"]["pruned_heads"]["enc.self_attn"]
    assert len(pruned) == count and f"{round(fraction * 100, 2):g}% of the heads" in m["provenance"]["model"]["name"]
    qkv = [v for v in ws.values() if v.shape == (3 * DIM, DIM)]
    # the packed in_proj is a MatMul [3D, D], the out_proj a Gemm [D, D] of self_attn
    out = [v for k, v in ws.items() if "self_attn" in k and v.shape == (DIM, DIM)]
    assert len(qkv) == 1 and len(out) == 1, list(ws)
    qkv, out = qkv[0], out[0]
    dh = DIM // HEADS
    for h in range(HEADS):
        cols = [p * DIM + h * dh + i for p in range(3) for i in range(dh)]
        gone = h in pruned
        assert np.all(qkv[cols] == 0) == gone, h
        assert np.all(out[:, h * dh:(h + 1) * dh] == 0) == gone, h
        if not gone:
            assert np.all(np.any(qkv[cols] != 0, axis=1))
    # the heads of least norm go
    a = n.enc.self_attn
    norms = []
    for h in range(HEADS):
        sl = slice(h * dh, (h + 1) * dh)
        ip = a.in_proj_weight.detach().numpy().astype(np.float64)
        norms.append(sum(float(np.sum(ip[p * DIM:(p + 1) * DIM][sl] ** 2)) for p in range(3))
                     + float(np.sum(a.out_proj.weight.detach().numpy().astype(np.float64)[:, sl] ** 2)))
    assert sorted(pruned) == sorted(np.argsort(norms, kind="stable")[:count].tolist())
    assert w.layers == len(m["layers"])


def test_n_m_at_export_and_heads_together(tmp_path):
    w = from_torch(net(), ids(), tmp_path / "b", prune="2:4", prune_heads=0.5, log=lambda _: None)
    ws, m = layers(tmp_path / "b")
    p = m["provenance"]["pruning"]
    assert p["method"] == "2:4" and p["target_sparsity"] == 0.5
    assert "2:4 along the inputs (sparsity 0.5)" in m["source"]
    for name, v in ws.items():
        assert prune.is_n_m(v, 2, 4), name
        # the patterns are exact: every full group of 4 keeps 2 (or fewer where a head is zero)
        assert np.mean(v == 0) >= 0.5 - 1e-9, name
    assert w.top1 is None


def test_refusals_are_one_line(tmp_path):
    with pytest.raises(ValueError, match=r"^prune_heads: Linear has no nn.MultiheadAttention"):
        from_torch(torch.nn.Linear(4, 2), np.ones((2, 4), np.float32), tmp_path / "a", prune_heads=0.5)
    with pytest.raises(ValueError, match=r"^sparsity 0.5: not used with prune 2:4"):
        from_torch(net(), ids(), tmp_path / "a", prune="2:4", sparsity=0.5)
    with pytest.raises(ValueError, match=r"N:M pruning '4:2'"):
        from_torch(net(), ids(), tmp_path / "a", prune="4:2")
    with pytest.raises(ValueError, match=r"prune_heads must be in \[0, 1\)"):
        from_torch(net(), ids(), tmp_path / "a", prune_heads=1.0)
    assert not os.path.exists(tmp_path / "a")
