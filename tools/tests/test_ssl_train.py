"""The SSL group-lasso term of tools/sresim_export/ssl_train.py: a hand-computed fc
example, and the per-layer factors (lasso_mult, used by lenet5-mnist-ssl-paper) scaling
exactly their own layer's groups. Needs torch (skipped without it: CI does not install it)."""

import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (it builds workloads, not CI)")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sresim_export import ssl_train as st  # noqa: E402

SPEC = [("conv", "c1", 1, 3, 3, 0), ("relu",), ("flatten",), ("fc", "f1", 12, 4), ("fc", "f2", 4, 2)]


def gl(net, mult=None):
    return float(st.group_lasso(net, mult).detach())


def tiny():
    st.deterministic(7)
    return st.ChainNet(SPEC)


def test_an_fc_weight_of_two_rows_and_two_columns_by_hand():
    net = st.ChainNet([("fc", "f", 2, 2)])
    with torch.no_grad():
        net.layers()[0][1].weight.copy_(torch.tensor([[3.0, 4.0], [0.0, 0.0]]))
    # rows: norms 5 and 0, each weighted by sqrt(2 inputs); columns: 3 and 4, by sqrt(2 outputs)
    assert gl(net) == pytest.approx(12 * 2 ** 0.5)
    assert gl(net, {"f": 0.5}) == pytest.approx(6 * 2 ** 0.5)
    assert gl(net, {"other": 9.0}) == pytest.approx(12 * 2 ** 0.5)


def test_layer_factors_scale_only_their_own_layer():
    net = tiny()
    names = [n for n, _ in net.layers()]
    # each layer's own term: every other layer's factor 0
    own = {n: gl(net, {m: 0.0 for m in names if m != n}) for n in names}
    assert all(v > 0 for v in own.values())
    assert gl(net) == pytest.approx(sum(own.values()), rel=1e-6)
    assert gl(net, {}) == pytest.approx(sum(own.values()), rel=1e-6)
    scaled = gl(net, {"c1": 8.0, "f1": 0.7})
    assert scaled == pytest.approx(8 * own["c1"] + 0.7 * own["f1"] + own["f2"], rel=1e-6)


def test_the_gradient_of_a_scaled_layer_is_scaled_and_the_others_untouched():
    net = tiny()
    grads = []
    for mult in (None, {"c1": 3.0}):
        net.zero_grad()
        st.group_lasso(net, mult).backward()
        grads.append({n: m.weight.grad.clone() for n, m in net.layers()})
    assert torch.allclose(grads[1]["c1"], 3 * grads[0]["c1"])
    for n in ("f1", "f2"):
        assert torch.equal(grads[1][n], grads[0][n])
