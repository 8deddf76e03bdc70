"""The exporter's reading of a file the user names (a model, an input, a --feed array):
a regular file with data, checked before it is opened, so that a FIFO never blocks the
read and an empty file is told as such, naming it (sresim's own reader does the same:
docs/errors.md, "Files are checked to be files")."""

from __future__ import annotations

import os
import stat

import numpy as np


def check_file(path, what):
    """Refuses (ValueError, one line naming `path`) what cannot be `what` ("an ONNX model",
    "a .npy array", ...): a path that does not exist, a directory, a FIFO, socket or
    device, and an empty file."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror}") from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise ValueError(f"{path}: is a directory, not a file")
    kind = ("FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
            else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None)
    if kind or not stat.S_ISREG(mode):
        raise ValueError(f"{path}: is a {kind or 'special file'}, not a regular file (a FIFO, "
                         f"socket or device cannot be read)")
    if st.st_size == 0:
        raise ValueError(f"{path}: empty file (0 bytes), not {what}")


def load_npy(path):
    """The array of the .npy file `path`, after `check_file`; numpy's refusal of a damaged
    file is told in one line naming it."""
    check_file(path, "a .npy array")
    # Without the signature numpy tries the file as a pickle and calls any other file
    # "pickled (object) data"; what is wrong is that it is no .npy file at all.
    with open(path, "rb") as f:
        head = f.read(6)
    if head != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy array: it does not begin with the .npy "
                         f"signature (\\x93NUMPY)")
    try:
        return np.load(path)
    except Exception as e:  # numpy's ValueError/EOFError/UnpicklingError: one line
        raise ValueError(f"{path}: not a .npy array: {' '.join(str(e).split())}") from None


def load_onnx(path):
    """The ModelProto of the ONNX file `path`, after `check_file`; protobuf's refusal of a
    file that is not a model ("Error parsing message ...: Wire format was corrupt", which
    names no file) is told in one line naming it."""
    import onnx

    check_file(path, "an ONNX model")
    try:
        return onnx.load(path)
    except Exception as e:  # google.protobuf's DecodeError and the like: one line
        raise ValueError(f"{path}: not a readable ONNX model: {' '.join(str(e).split())}") from None
