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
