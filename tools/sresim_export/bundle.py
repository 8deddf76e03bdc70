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
import stat
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
    """A fully connected layer entry: weight [out, in], captured input [N, in], or
    [N, T, in] for a projection over a sequence of T tokens (the entry's `tokens`: each
    token is one input vector of the crossbar)."""
    weight = np.ascontiguousarray(weight, dtype=np.float32)
    inputs = np.ascontiguousarray(inputs, dtype=np.float32)
    if weight.ndim != 2:
        raise ValueError(f"{name}: fc weight must be [out, in], got {weight.shape}")
    if inputs.ndim not in (2, 3) or inputs.shape[-1] != weight.shape[1]:
        raise ValueError(f"{name}: fc input must be [N, {weight.shape[1]}] or [N, T, {weight.shape[1]}], "
                         f"got {inputs.shape}")
    key = safe_name(name)
    entry = {
        "name": key, "kind": "fc",
        "in_features": int(weight.shape[1]), "out_features": int(weight.shape[0]),
        "weight": f"{key}.weight", "input": f"{key}.input",
    }
    if inputs.ndim == 3:
        entry["tokens"] = int(inputs.shape[1])
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
    return rewrite_bundle(out_dir, manifest, tensors)


def rewrite_bundle(out_dir, manifest, tensors):
    """Writes `manifest` and `tensors` as the bundle `out_dir`, both files replaced together
    (see commit), after the checks of the schema mirror and of check_finite. Returns the
    manifest."""
    check_manifest(manifest, os.path.join(out_dir, "manifest.json"))
    check_finite(manifest, tensors)
    text = json.dumps(manifest, indent=1, allow_nan=False) + "\n"
    commit(out_dir, [("tensors.npz", lambda f: np.savez_compressed(f, **tensors)),
                     ("manifest.json", lambda f: f.write(text.encode()))])
    return manifest


def check_finite(manifest, tensors):
    """Refuses, naming the tensor or layer, what sresim would refuse: a float array holding
    NaN or an infinity (a weight, an input, a bias, the reference) and a calibrated
    `input_max` that is not a positive finite number (an input that calibrates to a
    non-finite or empty range)."""
    for key in sorted(tensors):
        a = np.asarray(tensors[key])
        if a.dtype.kind in "fc" and a.size and not np.all(np.isfinite(a)):
            bad = int(a.size - np.count_nonzero(np.isfinite(a)))
            raise ValueError(f"{key}: {bad} of {a.size} values are NaN or infinite; "
                             f"sresim refuses a tensor that is not finite")
    for entry in manifest["layers"]:
        if "input_max" in entry:
            top = entry["input_max"]
            if not (np.isfinite(top) and top > 0):
                raise ValueError(f"{entry['name']}: its input calibrates to input_max = {top}, "
                                 f"not a positive finite number (the graph input holds NaN or "
                                 f"inf values, or the network overflows float)")


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


# The journal of a replacement of several files, shared with sresim's writer (the outdir
# crate, docs/errors.md "Output directories"): three lines a file (its temporary, its
# destination, an old link or nothing), absolute paths. While it exists, sresim refuses to
# read the directory's files; the next writer of the directory completes the renames.
JOURNAL = ".sresim-commit"


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _check_destination(path):
    """A destination must be absent or a regular file (not a link, FIFO, device or dir)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{path}: is a directory, not a file: cannot replace it")
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{path}: is a symbolic link: the exporter does not replace one")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path}: not a regular file: cannot replace it")


def recover(out_dir):
    """Completes a replacement a killed writer left (its journal in `out_dir`)."""
    path = os.path.join(out_dir, JOURNAL)
    if not os.path.lexists(path):
        return
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size > 1 << 20:
        raise ValueError(f"{path}: not a journal the exporter or sresim wrote: remove it")
    with open(path) as f:
        lines = f.read().split("\n")[:-1]
    if len(lines) % 3:
        raise ValueError(f"{path}: not a journal the exporter or sresim wrote: remove it")
    for i in range(0, len(lines), 3):
        tmp, dst, old = lines[i:i + 3]
        same = os.path.dirname(tmp) == os.path.dirname(dst)
        if not (same and os.path.basename(tmp).startswith(".")):
            raise ValueError(f"{path}: not a journal the exporter or sresim wrote: remove it")
        if os.path.lexists(tmp):
            os.replace(tmp, dst)
        if old and os.path.lexists(old) and os.path.basename(old).startswith("."):
            os.unlink(old)
    _fsync_dir(out_dir)
    os.unlink(path)
    _fsync_dir(out_dir)


def commit(out_dir, files):
    """Writes `files` ((name, write(f)) pairs) into `out_dir` all together or not at all:
    every destination is checked, each file written and synced to a temporary beside it,
    then (for several files) the journal is written as the commit point, the temporaries
    renamed over the destinations and the journal removed. The files get the mode a plain
    file would (0644 under the usual umask 022)."""
    os.makedirs(out_dir, exist_ok=True)
    out_dir = os.path.abspath(out_dir)
    recover(out_dir)
    for name, _ in files:
        _check_destination(os.path.join(out_dir, name))
    temps = []
    try:
        for name, write in files:
            fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=f".{name}.tmp.")
            temps.append(tmp)
            with os.fdopen(fd, "wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, _file_mode())
        dsts = [os.path.join(out_dir, name) for name, _ in files]
        journal = None
        if len(files) > 1:
            fd, jtmp = tempfile.mkstemp(dir=out_dir, prefix=f"{JOURNAL}.tmp.")
            temps.append(jtmp)
            with os.fdopen(fd, "w") as f:
                f.write("".join(f"{t}\n{d}\n\n" for t, d in zip(temps, dsts)))
                f.flush()
                os.fsync(f.fileno())
            journal = os.path.join(out_dir, JOURNAL)
            os.replace(jtmp, journal)
            temps.pop()
            _fsync_dir(out_dir)
    except BaseException:
        for t in temps:
            if os.path.lexists(t):
                os.unlink(t)
        raise
    abort_after = os.environ.get("SRESIM_TEST_ABORT_AFTER_RENAMES")
    for i, (tmp, dst) in enumerate(zip(temps, dsts)):
        if abort_after is not None and int(abort_after) == i and journal:
            os.abort()  # a writer killed between two renames (tests only)
        os.replace(tmp, dst)
    _fsync_dir(out_dir)
    if journal:
        os.unlink(journal)
        _fsync_dir(out_dir)


def read_bundle(path):
    """Returns (manifest dict, {key: array}) of the bundle directory `path`."""
    with open(os.path.join(path, "manifest.json")) as f:
        manifest = json.load(f)
    with np.load(os.path.join(path, "tensors.npz")) as npz:
        tensors = {k: npz[k] for k in npz.files}
    return manifest, tensors
