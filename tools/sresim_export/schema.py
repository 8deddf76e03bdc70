"""The bundle rules sresim applies when it opens a bundle, for the exporter to check what it
writes (docs/exporting.md, "Checking a bundle").

`sresim check BUNDLE` is the authority: it applies every rule `run` and `accuracy` apply
(arrays, shapes, ranges, the graph's shape inference). `check_bundle` runs it when an
sresim binary is found ($SRESIM, else `sresim` on PATH, else the repository's most
recent target/release or target/debug build). Without a binary, `check_manifest` mirrors the
schema part: the keys of the manifest, of each layer and of each graph node (the tables in
schema.json, which tests/sresim/bundles.rs compares with the Rust reader's) and the attribute
values the exporter passes through from ONNX (pool `dilations`). Its messages are the
reader's, word for word; tools/tests/test_schema.py runs both on the same cases.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.normpath(os.path.join(_HERE, "..", ".."))

with open(os.path.join(_HERE, "schema.json")) as _f:
    SCHEMA = json.load(_f)


def _unknown(obj, known, at, what):
    for k in sorted(obj):  # the reader's JSON objects keep their keys sorted
        if k not in known:
            return f"{at}{k}: unknown key (expected {what}{', '.join(known)})"
    return None


def _node(i, node):
    if not isinstance(node, dict):
        return f"graph[{i}]: expected a JSON object"
    ops = SCHEMA["graph_ops"]
    op = node.get("op")
    if not isinstance(op, str) or not op:
        return f"graph[{i}]: op: absent (expected one of: {', '.join(ops)})"
    at = f"graph[{i}] ({op} -> {node.get('output')})"
    if op not in ops:
        return f'{at}: op: unknown op "{op}" (expected one of: {", ".join(ops)})'
    known = SCHEMA["node_keys"] + ops[op]
    bad = _unknown(node, known, f"{at}: ", "")
    if bad:
        return bad
    if op in ("MaxPool", "AveragePool") and "dilations" in node:
        d = node["dilations"]
        if not (isinstance(d, list) and len(d) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in d)):
            return f"{at}: dilations: expected 2 positive integers"
        if d != [1, 1]:
            return f"{at}: dilations: dilated pooling is not supported (expected [1, 1])"
    return None


def manifest_error(manifest):
    """The first schema rule `manifest` (a dict) breaks, as the reader words it without the
    file name, or None."""
    bad = _unknown(manifest, SCHEMA["manifest_keys"], "", "a manifest key: ")
    if bad:
        return bad
    for i, layer in enumerate(manifest.get("layers") or []):
        at = f"layers[{i}]."
        kind = layer.get("kind")
        if kind not in ("conv", "fc"):
            return f'{at}kind: expected "conv" or "fc"' + (f', got "{kind}"' if isinstance(kind, str) else "")
        known = SCHEMA["conv_keys"] if kind == "conv" else SCHEMA["fc_keys"]
        bad = _unknown(layer, known, at, f"a key of {'a conv' if kind == 'conv' else 'an fc'} layer: ")
        if bad:
            return bad
    if manifest.get("graph") is None:
        for k in SCHEMA["graph_keys"]:
            if k in manifest:
                return f"{k}: given without graph (it names part of the graph)"
        return None
    for i, node in enumerate(manifest["graph"]):
        bad = _node(i, node)
        if bad:
            return bad
    return None


def check_manifest(manifest, label="manifest.json"):
    """Raises ValueError("LABEL: field: problem") on the first rule `manifest` breaks."""
    bad = manifest_error(manifest)
    if bad:
        raise ValueError(f"{label}: {bad}")


def find_binary():
    """The sresim binary: $SRESIM, `sresim` on PATH, or the most recent build of this
    repository (target/release or target/debug); None when there is none."""
    env = os.environ.get("SRESIM")
    if env:
        return env if os.path.isfile(env) else None
    on_path = shutil.which("sresim")
    if on_path:
        return on_path
    built = [p for p in (os.path.join(_REPO, "target", k, "sresim") for k in ("release", "debug"))
             if os.path.isfile(p) and os.access(p, os.X_OK)]
    return max(built, key=os.path.getmtime) if built else None


def check_bundle(path, binary=None):
    """`sresim check PATH` with `binary` (default: find_binary()): its `ok: ...` line, or
    None without a binary (or with one that predates `sresim check`). Raises ValueError with sresim's error line on a refusal."""
    binary = binary or find_binary()
    if binary is None:
        return None
    r = subprocess.run([binary, "check", path], capture_output=True, text=True)
    if "unrecognized subcommand" in r.stderr:
        return None  # a binary that predates `sresim check`
    if r.returncode != 0:
        line = (r.stderr.strip().splitlines() or [f"sresim check exited with {r.returncode}"])[-1]
        raise ValueError(line.removeprefix("error: "))
    return r.stdout.strip()


def publish_bundle(out_dir, write, binary=None):
    """Writes a bundle to `out_dir` only if sresim would open it: `write(dir)` writes it
    (bundle.write_bundle, which applies `check_manifest` first) into a staging directory
    beside `out_dir`; `sresim check` (when a binary is found) reads it there; then its two
    files replace those of `out_dir` together (bundle.commit). Returns (what `write` returned, the `ok: ...` line
    or None without a binary). A refusal raises ValueError naming `out_dir` and leaves
    `out_dir` as it was."""
    from .bundle import check_out_dir, commit  # bundle imports this module

    check_out_dir(out_dir)
    parent = os.path.dirname(os.path.abspath(out_dir)) or "."
    try:
        os.makedirs(parent, exist_ok=True)
        stage = tempfile.mkdtemp(prefix=".sresim-bundle.", dir=parent)
    except OSError as e:
        raise ValueError(f"{out_dir}: cannot create the bundle directory's staging folder in "
                         f"{parent}: {e.strerror or e}") from None
    try:
        try:
            result = write(stage)
            line = check_bundle(stage, binary)
        except ValueError as e:
            raise ValueError(str(e).replace(stage, out_dir.rstrip("/"))) from None

        def copy(name):
            def write(f):
                with open(os.path.join(stage, name), "rb") as src:
                    shutil.copyfileobj(src, f)
            return write
        # Both files replaced together (bundle.commit's journal), never one beside an old other.
        commit(out_dir, [(n, copy(n)) for n in ("tensors.npz", "manifest.json")])
        return result, line.replace(stage, out_dir.rstrip("/")) if line else None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
