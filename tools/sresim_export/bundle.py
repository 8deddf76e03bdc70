"""Workload bundle writer and reader (docs/exporting.md, "The bundle").

A bundle is a directory holding `manifest.json` and `tensors.npz`. Every builder in
tools/ writes bundles through `write_bundle`, so the checks below apply to all of them:
weights and inputs are float32, shapes agree with the listed geometry, and every layer
of a bundle carries the same number of input samples.
"""

from __future__ import annotations

import json
import os
import re
import tempfile

import numpy as np

from .schema import check_manifest

_NAME_OK = re.compile(r"[^A-Za-z0-9_.\-]")


def safe_name(name: str) -> str:
    """A layer name usable as an npz key and a CSV cell: [A-Za-z0-9_.-] only."""
    cleaned = _NAME_OK.sub("_", name).strip("_")
    return cleaned or "layer"


def conv_output_hw(h, w, kernel, stride, padding, dilation):
    """Conv output size with symmetric padding: (H + 2p - d(k-1) - 1) // stride + 1."""
    ho = (h + 2 * padding[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    return ho, wo


def conv_layer(name, weight, inputs, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
               groups=1, extra=None):
    """A conv layer entry: geometry derived from the weight [Cout, Cin/G, R, S] and the
    captured input [N, C, H, W]. Returns (manifest entry, {key: array})."""
    weight = np.ascontiguousarray(weight, dtype=np.float32)
    inputs = np.ascontiguousarray(inputs, dtype=np.float32)
    if weight.ndim != 4:
        raise ValueError(f"{name}: conv weight must be [Cout, Cin/groups, R, S], got {weight.shape}")
    if inputs.ndim != 4:
        raise ValueError(f"{name}: conv input must be [N, C, H, W], got {inputs.shape}")
    cout, cin_g, r, s = (int(d) for d in weight.shape)
    n, c, h, w = (int(d) for d in inputs.shape)
    groups = int(groups)
    if c != cin_g * groups:
        raise ValueError(f"{name}: input has {c} channels but weight expects {cin_g} x {groups} groups")
    if cout % groups:
        raise ValueError(f"{name}: out_channels {cout} not divisible by groups {groups}")
    ho, wo = conv_output_hw(h, w, (r, s), stride, padding, dilation)
    if ho < 1 or wo < 1:
        raise ValueError(f"{name}: empty output {ho}x{wo}")
    key = safe_name(name)
    entry = {
        "name": key, "kind": "conv",
        "in_channels": c, "out_channels": cout,
        "kernel": [r, s], "stride": [int(v) for v in stride],
        "padding": [int(v) for v in padding], "dilation": [int(v) for v in dilation],
        "groups": groups, "input_shape": [c, h, w],
        "weight": f"{key}.weight", "input": f"{key}.input",
    }
    entry.update(extra or {})
    return entry, {f"{key}.weight": weight, f"{key}.input": inputs}


def fc_layer(name, weight, inputs, extra=None):
    """A fully connected layer entry: weight [out, in], captured input [N, in]."""
    weight = np.ascontiguousarray(weight, dtype=np.float32)
    inputs = np.ascontiguousarray(inputs, dtype=np.float32)
    if weight.ndim != 2:
        raise ValueError(f"{name}: fc weight must be [out, in], got {weight.shape}")
    if inputs.ndim != 2 or inputs.shape[1] != weight.shape[1]:
        raise ValueError(f"{name}: fc input must be [N, {weight.shape[1]}], got {inputs.shape}")
    key = safe_name(name)
    entry = {
        "name": key, "kind": "fc",
        "in_features": int(weight.shape[1]), "out_features": int(weight.shape[0]),
        "weight": f"{key}.weight", "input": f"{key}.input",
    }
    entry.update(extra or {})
    return entry, {f"{key}.weight": weight, f"{key}.input": inputs}


def write_bundle(out_dir, name, source, layers, provenance=None, network=None):
    """Writes `layers` (a list of (entry, tensors) pairs from conv_layer/fc_layer) as a
    bundle in `out_dir`. `source` is the one-line human-readable origin (manifest
    `source`); `provenance` is an optional dict with the details (manifest `provenance`).
    Files are written to temporaries and renamed, so a reader never sees half a bundle;
    they get the mode a plain file would (0644 under the usual umask 022).

    `network` (from export.network) adds the network graph: the manifest keys `graph`,
    `graph_input`, `graph_output`, `labels` (when known), each layer's calibrated
    `input_max` and `input_signed`, and their arrays (with `graph.reference`, onnxruntime's
    output on the graph input). The layer entries and
    arrays are the same with or without it.

    A manifest that breaks a rule of sresim's reader (schema.check_manifest) raises
    ValueError before anything is written."""
    if not layers:
        raise ValueError("a bundle needs at least one layer")
    entries, tensors = [], {}
    samples = None
    for entry, arrays in layers:
        if entry["name"] in {e["name"] for e in entries}:
            raise ValueError(f"duplicate layer name {entry['name']}")
        n = arrays[entry["input"]].shape[0]
        if samples is None:
            samples = n
        elif n != samples:
            raise ValueError(f"{entry['name']}: {n} input samples, earlier layers have {samples}")
        entries.append(entry)
        tensors.update(arrays)
    manifest = {"name": name, "source": source, "samples": samples, "layers": entries}
    if provenance is not None:
        manifest["provenance"] = provenance
    if network is not None:
        manifest, tensors = add_network(manifest, tensors, network)
    check_manifest(manifest, os.path.join(out_dir, "manifest.json"))
    os.makedirs(out_dir, exist_ok=True)
    _atomic_write(out_dir, "tensors.npz", lambda f: np.savez_compressed(f, **tensors))
    text = json.dumps(manifest, indent=1) + "\n"
    _atomic_write(out_dir, "manifest.json", lambda f: f.write(text.encode()))
    return manifest


def add_network(manifest, tensors, network):
    """(manifest, tensors) with the network part added (see write_bundle); existing keys,
    layer fields and arrays are kept as they are."""
    manifest = dict(manifest)
    tensors = dict(tensors)
    clash = sorted(set(network["arrays"]) & set(tensors))
    if clash:
        raise ValueError(f"network array {clash[0]} clashes with a layer array")
    calib = network["calibration"]
    layers = []
    for entry in manifest["layers"]:
        entry = dict(entry)
        if entry["name"] in calib:
            top, signed = calib[entry["name"]]
            entry["input_max"] = float(top)
            entry["input_signed"] = bool(signed)
        layers.append(entry)
    manifest["layers"] = layers
    for key in ("graph", "graph_input", "graph_output", "labels"):
        if key in network:
            manifest[key] = network[key]
    tensors.update(network["arrays"])
    return manifest, tensors


def _file_mode():
    """0666 less the process umask: what open() would give a new file (mkstemp's is 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _atomic_write(out_dir, filename, write):
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{filename}.")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, os.path.join(out_dir, filename))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_bundle(path):
    """Returns (manifest dict, {key: array}) of the bundle directory `path`."""
    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    with np.load(os.path.join(path, "tensors.npz")) as npz:
        tensors = {k: npz[k] for k in npz.files}
    return manifest, tensors
