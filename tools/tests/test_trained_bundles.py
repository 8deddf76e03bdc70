"""The trained bundles (fmnist-cnn, fmnist-cnn-ssl, lenet5-mnist-ssl, lenet5-mnist-ssl-paper, the transformers
fmnist-vit, fmnist-vit-relu and fmnist-vit-relu-2of4 for their graph input and top-1, and
the residual networks fmnist-resnet20 and fmnist-resnet20-pruned) against their READMEs,
with numpy only (no torch): the per-layer sparsity and zero-group table is what the weights
hold, the float top-1 over the whole graph input is what the stored onnxruntime outputs
give, the graph input is >= 2000 labelled uint8 images, SSL removed whole groups, 2:4
holds in every pruned layer and a ReLU feed-forward's second layer reads mostly zeros; the
ResNet-20s hold 1,000 labelled images, 31.0 M MACs an image, nine residual adds, and the
pruned one 60% zeros in each block conv and none elsewhere; lenet5-mnist-ssl-paper is as
sparse as its README sets it beside the SSL paper (about 90% zero, at most 1 point of top-1
below the dense network's).
tests/sresim/trained_workloads.rs checks the `sresim accuracy` figures."""

import os
import re
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))

from sresim_export import read_bundle  # noqa: E402
from sresim_export.trained import mac_rows, structure_rows  # noqa: E402

TRAINED = ["fmnist-cnn", "fmnist-cnn-ssl", "lenet5-mnist-ssl", "lenet5-mnist-ssl-paper"]
RELU_VIT = ["fmnist-vit-relu", "fmnist-vit-relu-2of4"]
LABELLED = TRAINED + ["fmnist-vit"] + RELU_VIT
SSL = ["fmnist-cnn-ssl", "lenet5-mnist-ssl", "lenet5-mnist-ssl-paper"]
RESNET = ["fmnist-resnet20", "fmnist-resnet20-pruned"]


def load(name):
    path = os.path.join(REPO, "workloads", name)
    manifest, tensors = read_bundle(path)
    with open(os.path.join(path, "README.md")) as f:
        readme = f.read()
    return manifest, tensors, readme


def layer_pairs(manifest, tensors):
    return [(e, {e["weight"]: tensors[e["weight"]]}) for e in manifest["layers"]]


class Res:
    def __init__(self, layers):
        self.layers = layers


@pytest.mark.parametrize("name", TRAINED)
def test_readme_layer_table_is_what_the_weights_hold(name):
    manifest, tensors, readme = load(name)
    for row in structure_rows(Res(layer_pairs(manifest, tensors))):
        assert row in readme, f"{name}: README lacks the row {row}"


@pytest.mark.parametrize("name", LABELLED)
def test_graph_input_is_2000_labelled_uint8_images(name):
    manifest, tensors, _ = load(name)
    x = tensors[manifest["graph_input"]]
    labels = tensors[manifest["labels"]]
    assert x.dtype == np.uint8 and x.shape[1:] == (1, 28, 28) and len(x) >= 2000
    assert labels.shape == (len(x),) and set(np.unique(labels)) == set(range(10))
    # the first layer's trace is the first images of the graph input, as 0..255 floats
    first = manifest["layers"][0]
    trace = tensors[first["input"]]
    assert np.array_equal(trace, x[:len(trace)].astype(np.float32))


@pytest.mark.parametrize("name", LABELLED + RESNET)
def test_readme_float_top1_is_the_stored_reference_top1(name):
    manifest, tensors, readme = load(name)
    labels = tensors[manifest["labels"]]
    ref = tensors["graph.reference"]
    m = re.search(r"^\| all graph-input images \| (\d+) \| ([0-9.]+)% \| ([0-9.]+)% \|$", readme, re.M)
    assert m, f"{name}: README has no accuracy row for the whole graph input"
    assert int(m.group(1)) == len(labels)
    top1 = float(np.mean(ref.argmax(1) == labels))
    assert f"{top1:.2%}" == m.group(2) + "%"
    # the quantized network stays within a point of the float one
    assert abs(float(m.group(3)) - float(m.group(2))) < 1.0


@pytest.mark.parametrize("name", SSL)
def test_ssl_removed_whole_groups_in_every_hidden_layer(name):
    manifest, tensors, _ = load(name)
    for e in manifest["layers"][:-1]:
        w = tensors[e["weight"]] != 0
        rows = ~w.any(axis=0)  # zero filter shapes (conv) or columns (fc)
        filters = ~w.reshape(len(w), -1).any(axis=1)
        assert rows.any() or filters.any(), f"{name}: {e['name']} has no zero group"
        # what is zero is zero by groups: every zero weight lies in a zero filter or row
        zero = ~w
        grouped = filters.reshape(-1, *([1] * (w.ndim - 1))) | rows[None]
        if w.ndim == 4:
            grouped = grouped | (~w.any(axis=(0, 2, 3)))[None, :, None, None]
        assert not (zero & ~grouped).any(), f"{name}: {e['name']}: zeros outside removed groups"


def test_the_paper_strength_ssl_bundle_is_as_sparse_and_accurate_as_its_readme_says():
    manifest, tensors, readme = load("lenet5-mnist-ssl-paper")
    w = {e["name"]: tensors[e["weight"]] for e in manifest["layers"]}
    zero = sum(int((v == 0).sum()) for v in w.values()) / sum(v.size for v in w.values())
    assert zero > 0.89, f"{zero:.2%} zero weights"
    # the kept conv1-conv2-fc1 filters and neurons the README sets beside the paper's
    kept = [int(w["conv1"].reshape(20, -1).any(axis=1).sum()), int(w["conv2"].reshape(50, -1).any(axis=1).sum()),
            int(w["fc1"].any(axis=1).sum())]
    assert f"| kept conv1-conv2-fc1 filters / neurons | 3-15-175 | 2-11-134 | {kept[0]}-{kept[1]}-{kept[2]} |" in readme
    # the fine-tuned float top-1 is within a point of the dense one (both in train.log)
    with open(os.path.join(REPO, "workloads", "lenet5-mnist-ssl-paper", "train.log")) as f:
        log = f.read()
    dense = float(re.search(r"^dense: top-1 \(torch float32\) ([0-9.]+)", log, re.M).group(1))
    tuned = float(re.search(r"^SSL fine-tuned: top-1 \(torch float32\) ([0-9.]+)", log, re.M).group(1))
    assert dense - tuned <= 0.01, (dense, tuned)
    ref = tensors["graph.reference"]
    assert f"{float(np.mean(ref.argmax(1) == tensors[manifest['labels']])):.4f}" == f"{tuned:.4f}"


def test_the_vit_projects_its_17_tokens_on_crossbars_and_its_readme_lists_them():
    manifest, tensors, readme = load("fmnist-vit")
    layers = manifest["layers"]
    assert layers[0]["kind"] == "conv" and layers[-1].get("tokens") is None
    assert [l.get("tokens") for l in layers[1:-1]] == [17] * 18
    for l in layers[1:-1]:
        assert tensors[l["input"]].shape == (8, 17, l["in_features"])
        assert f"| {l['name']} | fc | {[l['out_features'], l['in_features']]} | 17 |" in readme
    assert [n["op"] for n in manifest["graph"]].count("MatMul") == 6
    assert "torch's float32 top-1 on all 10,000 test images" in readme


def is_two_of_four(w):
    """At most 2 non-zeros in every 4 consecutive inputs of each output of fc [out, in]."""
    out, k = w.shape
    nz = np.zeros((out, -(-k // 4) * 4), dtype=np.int64)
    nz[:, :k] = w != 0
    return bool(np.all(nz.reshape(out, -1, 4).sum(axis=2) <= 2))


@pytest.mark.parametrize("name", RELU_VIT)
def test_the_relu_vits_hold_2_of_4_and_relu_zeros_where_their_readmes_say(name):
    manifest, tensors, readme = load(name)
    layers = manifest["layers"]
    assert layers[0]["kind"] == "conv" and layers[-1].get("tokens") is None
    encoder = layers[1:-1]
    assert [l.get("tokens") for l in encoder] == [17] * 12
    pruned = name.endswith("2of4")
    for l in encoder:
        w = tensors[l["weight"]]
        # the pruned network: exactly half of every encoder weight is zero, 2 of every 4
        # inputs; the dense one: no layer is 2:4
        assert is_two_of_four(w) == pruned, l["name"]
        if pruned:
            assert np.mean(w == 0) >= 0.5
        assert f"| {l['name']} | fc | {[l['out_features'], l['in_features']]} | 17 |" in readme
    # every fourth encoder layer is the feed-forward's second (linear2): it reads the ReLU's
    # output, mostly zeros; the others read a LayerNorm's or the attention's (no zeros)
    for i, l in enumerate(encoder):
        zeros = float(np.mean(tensors[l["input"]] == 0))
        if i % 4 == 3:
            assert "linear2" in l["name"] and zeros > 0.5, (l["name"], zeros)
        else:
            assert zeros < 0.05, (l["name"], zeros)
    assert "torch's float32 top-1 on all 10,000 test images" in readme


@pytest.mark.parametrize("name", RESNET)
def test_the_resnets_are_cifar_size_residual_networks_as_their_readmes_say(name):
    manifest, tensors, readme = load(name)
    x = tensors[manifest["graph_input"]]
    labels = tensors[manifest["labels"]]
    assert x.dtype == np.uint8 and x.shape == (1000, 1, 28, 28)
    assert labels.shape == (1000,) and set(np.unique(labels)) == set(range(10))
    first = manifest["layers"][0]
    trace = tensors[first["input"]]
    assert np.array_equal(trace, x[:len(trace)].astype(np.float32))
    rows, macs = mac_rows(manifest, tensors)
    for row in rows:
        assert row in readme, f"{name}: README lacks the row {row}"
    # ResNet-20 at 28x28: the stem, 18 block convs, 2 shortcuts, the head; 31.0 M MACs
    layers = manifest["layers"]
    assert len(layers) == 22 and macs == 31021952
    assert [n["op"] for n in manifest["graph"]].count("Add") == 9
    pruned = name.endswith("pruned")
    for e in layers:
        w = tensors[e["weight"]]
        block_conv = e["kind"] == "conv" and list(w.shape[2:]) == [3, 3] and e is not layers[0]
        zeros = int((w == 0).sum())
        if pruned and block_conv:
            assert zeros == int(np.ceil(0.6 * w.size - 1e-9)), e["name"]
        else:
            assert zeros == 0, e["name"]
