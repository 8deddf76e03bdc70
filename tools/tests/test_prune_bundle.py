"""Pruning functions and the bundle writer on hand-made arrays."""

import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sresim_export import bundle, prune  # noqa: E402


def test_magnitude_hand_example():
    w = np.array([[0.5, -0.1, 0.3], [-0.9, 0.2, 0.05]], np.float32)
    # 0.5 * 6 = 3 smallest |w|: 0.05, 0.1, 0.2
    out = prune.magnitude(w, 0.5)
    np.testing.assert_array_equal(out, np.array([[0.5, 0, 0.3], [-0.9, 0, 0]], np.float32))
    assert w[0, 1] == -0.1  # input untouched


def test_ssl_hand_example_fc():
    # fc [out=2, in=3]. filter RMS: f0 = sqrt((1+1+1)/3)=1, f1 = sqrt((4+.01+4)/3)=1.63;
    # row (input feature) RMS: r0 = sqrt((1+4)/2)=1.58, r1 = sqrt((1+.01)/2)=0.71, r2 = 1.58.
    # smallest first: r1 (zeros 2 of 6 = 0.33), then f0 (adds 2 more: 4 of 6 = 0.67).
    w = np.array([[1.0, 1.0, -1.0], [2.0, 0.1, 2.0]], np.float32)
    np.testing.assert_array_equal(prune.ssl(w, 0.3), [[1, 0, -1], [2, 0, 2]])
    np.testing.assert_array_equal(prune.ssl(w, 0.5), [[0, 0, 0], [2, 0, 2]])


def test_ssl_grouped_conv_rows_stay_in_group():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)  # 2 groups of 2 filters, K = 18
    w[2:, 1, 0, 0] *= 1e-3   # one row of group 1 is tiny: it goes first
    out = prune.ssl(w, 0.05, groups=2)   # 0.05 * 72 = 3.6 -> needs 4 zeros: a row (2) then another group
    assert np.all(out[2:, 1, 0, 0] == 0)
    assert np.mean(out == 0) >= 0.05


def test_sparsity_bounds():
    with pytest.raises(ValueError):
        prune.magnitude(np.ones(3, np.float32), 1.0)


def test_bundle_writer_checks_and_roundtrip(tmp_path):
    w = np.ones((4, 2, 3, 3), np.float32)
    x = np.zeros((2, 4, 5, 5), np.float32)
    conv = bundle.conv_layer("block/conv 1", w, x, stride=(1, 1), padding=(1, 1), groups=2)
    fc = bundle.fc_layer("fc", np.ones((3, 100), np.float32), np.ones((2, 100), np.float32))
    m = bundle.write_bundle(str(tmp_path), "t", "made by hand", [conv, fc], {"k": 1})
    assert m["layers"][0]["name"] == "block_conv_1"
    m2, t = bundle.read_bundle(str(tmp_path))
    assert m2 == json.loads(json.dumps(m)) and set(t) == {"block_conv_1.weight", "block_conv_1.input", "fc.weight", "fc.input"}
    with pytest.raises(ValueError, match="channels"):
        bundle.conv_layer("c", w, np.zeros((2, 3, 5, 5), np.float32), groups=2)
    with pytest.raises(ValueError, match="samples"):
        bundle.write_bundle(str(tmp_path), "t", "s", [conv, bundle.fc_layer("f", np.ones((3, 4)), np.ones((5, 4)))])
    with pytest.raises(ValueError, match="empty output"):
        bundle.conv_layer("c", np.ones((1, 1, 7, 7)), np.zeros((1, 1, 5, 5)))


def test_same_padding_follows_onnx_spec():
    from sresim_export import graph

    # H=6, k=3, s=2: out = ceil(6/2) = 3, total pad = (3-1)*2 + 3 - 6 = 1 -> UPPER puts it after
    assert graph._same_pads(6, 3, 2, 1, upper=True) == (0, 1)
    assert graph._same_pads(6, 3, 2, 1, upper=False) == (1, 0)
    # H=7, k=3, s=2: out = 4, total = 3*2 + 3 - 7 = 2 -> (1, 1) either way
    assert graph._same_pads(7, 3, 2, 1, upper=True) == (1, 1)


def test_n_m_hand_example_fc():
    # fc [out=2, in=6], 2:4: groups are inputs 0-3 and 4-5 (a short last group) of each output
    w = np.array([[0.1, -0.9, 0.3, 0.2, 0.5, -0.4],
                  [1.0, 1.0, -1.0, 0.0, 0.0, 0.7]], np.float32)
    out = prune.n_m(w, 2, 4)
    # row 0: |0.1 0.9 0.3 0.2| keeps 0.9, 0.3; the short group keeps both
    # row 1: three equal magnitudes: the earlier two (inputs 0, 1) are kept
    np.testing.assert_array_equal(out, np.array([[0, -0.9, 0.3, 0, 0.5, -0.4],
                                                 [1.0, 1.0, 0, 0, 0, 0.7]], np.float32))
    assert prune.is_n_m(out, 2, 4) and not prune.is_n_m(w, 2, 4)
    assert w[0, 0] == np.float32(0.1)  # input untouched
    assert prune.prune(w, "2:4", 0.0).tolist() == out.tolist()


def test_n_m_conv_groups_run_along_the_unrolled_filter():
    # conv [Cout=1, Cin=2, 2, 2], 1:4: K = 8 rows in the order (c, r, s); the groups are
    # channel 0's four taps and channel 1's four taps, not 4 channels at one tap.
    w = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2)
    out = prune.n_m(w, 1, 4)
    want = np.zeros_like(w)
    want[0, 0, 1, 1], want[0, 1, 1, 1] = 4, 8
    np.testing.assert_array_equal(out, want)
    # grouped conv: every group's K rows are cut on their own
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)   # 2 groups, K = 27: 6 groups of 4 + 3
    out = prune.n_m(w, 2, 4, groups=2)
    assert prune.is_n_m(out, 2, 4, groups=2)
    assert int(np.sum(out != 0)) == 4 * (6 * 2 + 2)


@pytest.mark.parametrize("n,m", [(2, 4), (4, 8), (1, 2), (3, 8)])
@pytest.mark.parametrize("seed", range(6))
def test_n_m_holds_its_definition_on_random_layers(n, m, seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 9)), int(rng.integers(1, 40)))
    w = rng.standard_normal(shape).astype(np.float32)
    out = prune.n_m(w, n, m)
    assert prune.is_n_m(out, n, m)
    k = shape[1]
    kept_per_row = (k // m) * n + min(n, k % m)
    assert int(np.sum(out != 0)) == shape[0] * kept_per_row
    # kept weights are the input's, and each kept |w| is at least every pruned |w| of its group
    assert np.all((out == 0) | (out == w))
    for o in range(shape[0]):
        for g in range(0, k, m):
            kept = np.abs(out[o, g:g + m][out[o, g:g + m] != 0])
            dropped = np.abs(w[o, g:g + m][out[o, g:g + m] == 0])
            if kept.size and dropped.size:
                assert kept.min() >= dropped.max()


def test_n_m_text_is_checked():
    assert prune.parse_nm("2:4") == (2, 4) and prune.parse_nm("magnitude") is None
    for bad in ("4:2", "0:4", "2:2", "a:4", "2:65"):
        with pytest.raises(ValueError, match="N:M pruning"):
            prune.parse_nm(bad)
    with pytest.raises(ValueError, match="unknown pruning method"):
        prune.prune(np.ones((2, 4)), "blocky", 0.5)


def test_heads_hand_example():
    # 4 heads of width 1 over D = 4: q, k, v [4, 4], o [3, 4]; head 2 has the smallest norm,
    # then heads 0 and 3 tie (the earlier goes), head 1 is largest
    q = np.diag([1.0, 3.0, 0.1, 1.0]).astype(np.float32)
    k, v = q.copy(), q.copy()
    o = np.ones((3, 4), np.float32)
    bq = np.array([1, 2, 3, 4], np.float32)
    q2, k2, v2, o2, bq2, bk2, bv2, pruned = prune.heads(q, k, v, o, 4, 0.5, bq, None, None)
    assert pruned == [0, 2]
    for t in (q2, k2, v2):
        assert np.all(t[[0, 2]] == 0) and np.all(t[[1, 3]] == q[[1, 3]])
    assert np.all(o2[:, [0, 2]] == 0) and np.all(o2[:, [1, 3]] == 1)
    assert bq2.tolist() == [0, 2, 0, 4] and bk2 is None and bv2 is None
    assert np.all(q[0] == [1, 0, 0, 0])   # inputs untouched
    with pytest.raises(ValueError, match="not 3 heads"):
        prune.heads(q, k, v, o, 3, 0.5)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        prune.heads(q, k, v, o, 4, 1.0)


def test_export_onnx_prunes_n_m_and_refuses_bad_values_in_one_line(tmp_path):
    import subprocess

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import tiny_model

    model = str(tmp_path / "tiny.onnx")
    tiny_model.build(model, tiny_model.params())
    np.save(tmp_path / "x.npy", np.random.default_rng(0).standard_normal((2, 3, 12, 12)).astype(np.float32))
    cli = [sys.executable, os.path.join(os.path.dirname(here), "export_onnx.py"), model,
           "--input", str(tmp_path / "x.npy")]
    r = subprocess.run(cli + ["--prune", "2:4", "--prune-keep-depthwise", "--out", str(tmp_path / "b")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m, t = bundle.read_bundle(str(tmp_path / "b"))
    assert m["provenance"]["pruning"]["target_sparsity"] == 0.5
    assert "pruned at export: 2:4 along the inputs (sparsity 0.5) per layer" in m["source"]
    for layer in m["layers"]:
        w = t[layer["weight"]]
        if layer["name"] == "conv2":   # depthwise, kept
            continue
        assert prune.is_n_m(w, 2, 4, layer.get("groups", 1)), layer["name"]
        k = w.size // w.shape[0]   # a column's rows (per conv group)
        assert int(np.sum(w != 0)) <= w.shape[0] * ((k // 4) * 2 + min(2, k % 4)), layer["name"]
    for bad, want in ((["--prune", "4:2"], "error: N:M pruning '4:2': expected 1 <= N < M <= 64"),
                      (["--prune", "blocky"], "error: prune 'blocky': expected none, magnitude, ssl or N:M"),
                      (["--prune", "2:4", "--sparsity", "0.5"], "error: sparsity 0.5: not used with prune 2:4")):
        r = subprocess.run(cli + bad + ["--out", str(tmp_path / "c")], capture_output=True, text=True)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith(want), r.stderr
        assert not os.path.exists(tmp_path / "c")
