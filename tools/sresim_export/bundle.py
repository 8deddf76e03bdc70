"""Workload bundle writer and reader (docs/exporting.md, "The bundle").

A bundle is a directory holding `manifest.json` and `tensors.npz`. Every builder in
tools/ writes bundles through `write_bundle`, so the checks below apply to all of them:
weights and inputs are float32, shapes agree with the listed geometry, and every layer
of a bundle carries the same number of input samples.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
import time

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
            # Zero is told as zero: an all-zero input is not a NaN one (docs/errors.md,
            # "The exporter").
            if np.isfinite(top) and top <= 0:
                raise ValueError(f"{entry['name']}: its input is zero on every calibration "
                                 f"sample (input_max = {top}), so it has no range to quantize "
                                 f"to (an all-zero graph input, or layers before it that "
                                 f"output only zeros)")
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


# The journal of a replacement of several files, shared with sresim's writer (the outdir
# crate: crates/outdir/src/recover.rs, docs/errors.md "Output directories"):
#
#     sresim-commit 2
#     writer export
#     pid 4242
#     file 0 7 - tensors.npz        (directory 0: this one; N of .NAME.tmp.PID.N; old link
#     file 0 8 - manifest.json       or -; the name)
#
# While it exists, sresim refuses to read the directory's files; the next writer of the
# directory completes the renames. A journal is data: recovery renames only
# `.NAME.tmp.PID.N` over NAME and removes only `.NAME.old.PID.N`, NAME a file the exporter
# writes and PID the journal's, after the destination checks of a first write and when
# its files are in a state a writer leaves (`_inconsistent`), and refuses anything else,
# touching nothing.
JOURNAL = ".sresim-commit"
JOURNAL_FORMAT = "sresim-commit 2"
WRITER = "export"
FILES = ("manifest.json", "tensors.npz")
READERS_WAIT_S = 10.0
_serial = itertools.count()


def _scratch(name, kind, pid, n):
    """`.NAME.KIND.PID.N`: a temporary (tmp) or a link to the old content (old)."""
    return f".{name}.{kind}.{pid}.{n}"


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


def _kind(path, dir_fd=None):
    """None when absent, else "file", "dir", "link" or "other" (links not followed)."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(st.st_mode):
        return "file"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "other"


def _destination_problem(shown, kind):
    """Why a destination cannot be replaced (None: absent or a regular file)."""
    if kind == "dir":
        return f"{shown}: is a directory, not a file: cannot replace it"
    if kind == "link":
        return f"{shown}: is a symbolic link: the exporter does not replace one"
    if kind == "other":
        return f"{shown}: not a regular file: cannot replace it"
    return None


def _check_destination(path, shown=None):
    """A destination must be absent or a regular file (not a link, FIFO, device or dir)."""
    problem = _destination_problem(shown or path, _kind(path))
    if problem:
        raise ValueError(problem)


def _cannot_write(shown, e):
    """One line for an OSError met writing `shown` (EFBIG under `ulimit -f`, ENOSPC, EACCES):
    Python's own `[Errno 27] File too large` names no file."""
    return ValueError(f"{shown}: cannot write: {e.strerror or e}")


# One file named on its own (--save-model, from_torch's save_onnx, a builder's README or
# training log). THE RULE: every file the exporter writes goes through `commit` (a
# bundle's two files) or `stage_file`/`write_file` (any other one file); no other code
# under tools/ calls open(..., "w"), onnx.save, np.save or os.replace on a destination the
# user names. The steps are sresim's for one file (docs/errors.md, "One file named on its
# own"): the destination must be absent or a regular file (a FIFO would block the write
# forever, a symbolic link would have its target replaced, a directory or device cannot
# be), the content goes to a temporary `.NAME.tmp.PID.N` beside it, synced, then one
# rename replaces the file; a failure leaves the old file and removes the temporary.
class Staged:
    """A file written to its temporary beside `path`, not yet renamed over it: `commit()`
    renames it into place, `discard()` removes it (both once; either may be called
    again harmlessly)."""

    def __init__(self, path, tmp, shown):
        self.path, self.tmp, self.shown = path, tmp, shown

    def commit(self):
        if self.tmp is None:
            return
        try:
            _check_destination(self.path, self.shown)
            os.replace(self.tmp, self.path)
        except OSError as e:
            self.discard()
            raise _cannot_write(self.shown, e) from None
        except BaseException:
            self.discard()
            raise
        self.tmp = None
        _fsync_dir(os.path.dirname(os.path.abspath(self.path)))

    def discard(self):
        if self.tmp is not None and os.path.lexists(self.tmp):
            os.unlink(self.tmp)
        self.tmp = None


def check_file_destination(path, what=None):
    """Refuses (ValueError, one line naming `what` and `path`) a destination `stage_file`
    would refuse: a directory, a symbolic link, a FIFO, socket or device in its place, or a
    directory to hold it that does not exist. For a check before the work that produces
    the file."""
    shown = f"{what}: {path}" if what else os.fspath(path)
    _check_destination(path, shown)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"{shown}: cannot write: the directory {os.path.dirname(path) or '.'} "
                         f"does not exist")
    return shown


def stage_file(path, write, what=None):
    """Writes one file through `write(f)` (f a binary file) to its temporary beside `path`,
    after the destination checks; returns the Staged file (call `.commit()`). `what` (a
    flag such as "--save-model") is named in every message with the path."""
    path = os.fspath(path)
    shown = check_file_destination(path, what)
    tmp = os.path.join(os.path.dirname(os.path.abspath(path)),
                       _scratch(os.path.basename(path), "tmp", os.getpid(), next(_serial)))
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:
        raise _cannot_write(shown, e) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise _cannot_write(shown, e) from None
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    return Staged(path, tmp, shown)


def write_file(path, write, what=None):
    """`stage_file` and commit: one file replaced whole or not at all."""
    stage_file(path, write, what).commit()


def write_text_file(path, text, what=None):
    write_file(path, lambda f: f.write(text.encode()), what)


def write_onnx(path, model, what=None):
    """An ONNX model (ModelProto) saved through the one writer (not onnx.save, which opens
    the path as given: a FIFO blocks it, a symbolic link has its target overwritten)."""
    write_file(path, lambda f: f.write(model.SerializeToString()), what)


def _lock(out_dir):
    """Locks `out_dir` as sresim's writers do (flock on the directory): refused at once
    when a writer holds it, retried while only readers hold it shared. Returns the open
    descriptor that holds the lock (None where locks are not supported)."""
    try:
        import fcntl
    except ImportError:
        return None
    fd = os.open(out_dir, os.O_RDONLY)
    start = time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            pass
        except OSError:  # a file system without flock: go on unlocked
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            os.close(fd)
            raise ValueError(f"{out_dir}: another process is writing this directory (it is "
                             f"locked); wait for it to finish or choose another directory") from None
        if time.monotonic() - start > READERS_WAIT_S:
            os.close(fd)
            raise ValueError(f"{out_dir}: readers have held this directory's lock (shared) for "
                             f"more than {READERS_WAIT_S:g} s; try again when they are done")
        time.sleep(0.02)


def _number(text):
    """A number as a writer prints one (digits, no sign, no leading zero), or None."""
    if text.isdigit() and text.isascii() and (text == "0" or not text.startswith("0")):
        return int(text)
    return None


def _parse_journal(text):
    """(pid, [(tmp N, old N or None, name)]) of a journal the exporter wrote, or the reason
    it is not one."""
    lines = text.split("\n")
    if lines[-1] != "":
        return "its last line is cut"
    lines = lines[:-1]
    if not lines or lines[0] != JOURNAL_FORMAT:
        if lines and lines[0].startswith("/"):
            return 'written by an earlier sresim or exporter (a list of paths; this one writes "sresim-commit 2")'
        return f'its first line is not "{JOURNAL_FORMAT}"'
    if len(lines) < 3 or not lines[1].startswith("writer ") or not lines[2].startswith("pid "):
        return 'its lines "writer ..." and "pid ..." are absent'
    writer = lines[1][len("writer "):]
    if writer != WRITER:
        return (f"written by sresim's {writer!r} (run a sresim command that writes the directory "
                f"to complete it)")
    pid = _number(lines[2][len("pid "):])
    if not pid or pid >= 1 << 32:
        return f"{lines[2]!r}: not a process id"
    files = []
    numbers = set()
    for line in lines[3:]:
        parts = line.split(" ", 4)
        if len(parts) != 5 or parts[0] != "file":
            return f"line {line!r}: not a file line of the exporter's"
        _, d, t, o, name = parts
        tmp, old = _number(t), (None if o == "-" else _number(o))
        if d != "0" or tmp is None or (o != "-" and old is None):
            return f"line {line!r}: not \"file 0 TMP OLD NAME\""
        if name not in FILES:
            return f"line {line!r}: {name} is not a file the exporter writes"
        if any(f[2] == name for f in files):
            return f"line {line!r}: {name} is named twice"
        # A writer numbers every temporary and link of its process from one counter.
        for n in (tmp, old):
            if n is not None and (n in numbers or (n == old and n == tmp)):
                return f"line {line!r}: {n} numbers two of its files (a writer numbers each once)"
        numbers.update(n for n in (tmp, old) if n is not None)
        files.append((tmp, old, name))
    if not files:
        return "it names no file"
    # A writer journals only a replacement of two files or more (one file is one rename,
    # with no journal): a journal of one would replace one file of a bundle alone.
    if len(files) == 1:
        return (f"it names one file ({files[0][2]}), and a writer journals only a replacement "
                f"of two files or more")
    return pid, files


def recover(out_dir):
    """Completes a replacement a killed writer left (its journal in `out_dir`), touching
    only the exporter's files, their temporaries and old links of the journal's pid; a
    journal that names anything else is refused (ValueError), nothing touched."""
    path = os.path.join(out_dir, JOURNAL)
    kind = _kind(path)
    if kind is None:
        return

    def refuse(why):
        return ValueError(f"{path}: refused, nothing changed: {why}; it is not a journal the "
                          f"exporter or sresim wrote: check the directory's files and remove it")

    if kind != "file" or os.lstat(path).st_size > 1 << 20:
        raise refuse("not a regular file of at most 1 MiB")
    # Only the user whose command was killed completes its replacement (as sresim's
    # recovery): the journal and every temporary and old link it moves are that user's.
    me = os.geteuid() if hasattr(os, "geteuid") else None

    def not_mine(what, owner):
        return ValueError(f"{path}: refused, nothing changed: {what}owned by user {owner}, not by "
                          f"this user ({me}); only the user whose command left the journal "
                          f"completes it: ask them to run it again, or remove it")

    owner = os.lstat(path).st_uid
    if me is not None and owner != me:
        raise not_mine("", owner)
    with open(path, encoding="utf-8", errors="replace") as f:
        parsed = _parse_journal(f.read())
    if isinstance(parsed, str):
        raise refuse(parsed)
    pid, files = parsed
    dir_fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        steps = []
        for tmp_n, old_n, name in files:
            problem = _destination_problem(os.path.join(out_dir, name), _kind(name, dir_fd))
            if problem:
                raise refuse(problem)
            tmp = _scratch(name, "tmp", pid, tmp_n)
            old = None if old_n is None else _scratch(name, "old", pid, old_n)
            for scratch in (tmp, old):
                if scratch is not None and _kind(scratch, dir_fd) not in (None, "file"):
                    raise refuse(f"{os.path.join(out_dir, scratch)}: not a regular file")
                if scratch is not None and me is not None and _kind(scratch, dir_fd):
                    owner = os.stat(scratch, dir_fd=dir_fd, follow_symlinks=False).st_uid
                    if owner != me:
                        raise not_mine(f"{os.path.join(out_dir, scratch)} is ", owner)
            steps.append((tmp if _kind(tmp, dir_fd) else None,
                          old if old and _kind(old, dir_fd) else None, name))
        problem = _inconsistent(out_dir, pid, files, steps)
        if problem:
            raise refuse(problem)
        for tmp, _, name in steps:
            if tmp:
                os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        os.fsync(dir_fd)
        # The journal goes before the links, as a writer's does: while it is there every
        # link it records is, and a recovery killed in between leaves dot files only.
        os.unlink(JOURNAL, dir_fd=dir_fd)
        os.fsync(dir_fd)
        for _, old, _ in steps:
            if old:
                os.unlink(old, dir_fd=dir_fd)
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _inconsistent(out_dir, pid, files, steps):
    """Why the journal's files (`steps`: its temporary and old link where they are, for each
    of its lines `files`) are in a state no writer and no killed recovery leaves, or None
    (the rules of sresim's recovery, crates/outdir/src/recover/states.rs). While its
    journal exists a writer has made every temporary and old link it names, renames in the
    journal's line order and removes its links only after the journal; recovery renames in
    that order and removes the journal before the links. Completing any other state would
    replace one file of the bundle alone, or unmark a bundle a kill left mixed."""
    def tmp_of(k):
        return os.path.join(out_dir, _scratch(files[k][2], "tmp", pid, files[k][0]))

    # The temporaries gone are those of the journal's first lines.
    there = [k for k, s in enumerate(steps) if s[0]]
    if there:
        gone = [j for j in range(there[0], len(steps)) if not steps[j][0]]
        if gone:
            return (f"{tmp_of(there[0])} is there while {tmp_of(gone[0])}, after it in the "
                    f"journal, is gone: a writer renames its temporaries in the journal's order")
    # Every recorded old link stays as long as the journal.
    for (_, old_n, name), (_, old, _) in zip(files, steps):
        if old_n is not None and old is None:
            return (f"{os.path.join(out_dir, _scratch(name, 'old', pid, old_n))}: the old link "
                    f"it records for {name} is gone (a writer removes its links only after its "
                    f"journal)")
    # A temporary of one of its names that is not its own, where its own is gone: a real
    # journal whose pid or names were edited. A writer killed before its journal leaves
    # its temporaries (dot files nothing removes), so with a temporary or link of the
    # journal's own still there only one of its pid under another line's number refuses
    # it (two names swapped); with none, any other temporary of its names does.
    evidence = any(s[0] or s[1] for s in steps)
    numbers = {f[0] for f in files}
    for k, (tmp, _, name) in enumerate(steps):
        if tmp:
            continue
        prefix = f".{name}.tmp."
        for entry in sorted(n for n in os.listdir(out_dir) if n.startswith(prefix)):
            p, _, n = entry[len(prefix):].partition(".")
            p, n = _number(p), _number(n)
            if p is None or n is None:
                continue
            if not evidence or (p == pid and n in numbers):
                return (f"{os.path.join(out_dir, entry)} is there while the journal's own "
                        f"temporary of {name} ({tmp_of(k)}) is gone, and no writer leaves that: "
                        f"its pid or names are not its writer's")
    return None


def check_out_dir(out_dir, what=None):
    """Refuses (one line naming `what` and the path) a bundle directory that exists and is
    not a directory (a file, a FIFO, a link to one): checked before the export runs."""
    shown = f"{what}: {out_dir}" if what else os.fspath(out_dir)
    if os.path.lexists(out_dir) and not os.path.isdir(out_dir):
        raise ValueError(f"{shown}: exists and is not a directory (a bundle is a directory "
                         f"holding manifest.json and tensors.npz)")


def commit(out_dir, files):
    """Writes `files` ((name, write(f)) pairs, names of FILES) into `out_dir` all together
    or not at all, holding the directory's lock as sresim's writers do: a journal a killed
    writer left is completed first, every destination is checked, each file written and
    synced to a temporary `.NAME.tmp.PID.N` beside it, then (for several files) the
    journal is written as the commit point, the temporaries renamed over the destinations
    and the journal removed. The files get the mode a plain file would (0644 under the
    usual umask 022)."""
    for name, _ in files:
        if name not in FILES:
            raise ValueError(f"{name}: not a file of a bundle ({', '.join(FILES)})")
    check_out_dir(out_dir)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise ValueError(f"{out_dir}: cannot create the bundle directory: {e.strerror or e}") from None
    out_dir = os.path.abspath(out_dir)
    lock = _lock(out_dir)
    try:
        _commit_locked(out_dir, files)
    finally:
        if lock is not None:
            os.close(lock)


def _commit_locked(out_dir, files):
    recover(out_dir)
    for name, _ in files:
        _check_destination(os.path.join(out_dir, name))
    pid = os.getpid()
    temps, serials = [], []
    try:
        for name, write in files:
            n = next(_serial)
            tmp = os.path.join(out_dir, _scratch(name, "tmp", pid, n))
            # 0666 less the umask, as a plain new file.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            temps.append(tmp)
            serials.append(n)
            try:
                with os.fdopen(fd, "wb") as f:
                    write(f)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:
                raise _cannot_write(os.path.join(out_dir, name), e) from None
        dsts = [os.path.join(out_dir, name) for name, _ in files]
        journal = None
        if len(files) > 1:
            text = f"{JOURNAL_FORMAT}\nwriter {WRITER}\npid {pid}\n" + "".join(
                f"file 0 {n} - {name}\n" for n, (name, _) in zip(serials, files))
            jtmp = os.path.join(out_dir, _scratch(JOURNAL[1:], "tmp", pid, next(_serial)))
            fd = os.open(jtmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            temps.append(jtmp)
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:
                raise _cannot_write(os.path.join(out_dir, JOURNAL), e) from None
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


def _unique_keys(pairs):
    """A JSON object whose every key is named once (json keeps the last of two; sresim
    refuses such a manifest, docs/errors.md)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"{k}: the key appears twice; a JSON object names each key once")
        out[k] = v
    return out


def read_bundle(path):
    """Returns (manifest dict, {key: array}) of the bundle directory `path`. Each file is
    checked to be a regular file first (a FIFO never blocks the read), and a refusal
    names the file in one line."""
    from .files import check_file

    if not os.path.isdir(path):
        raise ValueError(f"{path}: not a bundle directory (it does not exist or is not a directory)")
    label = os.path.join(path, "manifest.json")
    npz_path = os.path.join(path, "tensors.npz")
    check_file(label, "a manifest")
    check_file(npz_path, "a tensors.npz archive")
    # Both files opened, then no journal or mark of an unfinished replacement beside them
    # and each path still the file opened: the two are of one export (as sresim's reader
    # checks; a replacement between them, or one a kill left half done, is refused).
    with open(label, "rb") as mf, open(npz_path, "rb") as nf:
        for mark in (JOURNAL, ".sresim-commit-export"):
            if os.path.lexists(os.path.join(path, mark)):
                raise ValueError(
                    f"{label}: cannot open: {path} holds an unfinished replacement of its files "
                    f"({mark}): a command that writes {path} as its output directory completes it first")
        for f, p in ((mf, label), (nf, npz_path)):
            st, now = os.fstat(f.fileno()), os.stat(p)
            if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino):
                raise ValueError(f"{p}: replaced while it was opened (the bundle is being "
                                 "exported again): run again once that is done")
        try:
            manifest = json.loads(mf.read().decode("utf-8"), object_pairs_hook=_unique_keys)
        except ValueError as e:
            raise ValueError(f"{label}: {e}") from None
        try:
            with np.load(nf) as npz:
                tensors = {k: npz[k] for k in npz.files}
        except Exception as e:  # numpy's and zipfile's refusals name no file
            raise ValueError(f"{npz_path}: not a readable .npz archive: {' '.join(str(e).split())}") from None
    return manifest, tensors
