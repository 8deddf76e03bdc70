"""The command line of the scripts of tools/ (export_onnx.py, aihwkit_compare.py,
float_reference.py, ort_per_sample.py): argparse's refusals and every other failure told
in one line `error: ...` with exit status 2, never a usage dump or a traceback
(docs/errors.md, "The exporter's refusals are one line")."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys


class Parser(argparse.ArgumentParser):
    """argparse, with its refusals in one line `error: ...` and exit status 2 (argparse
    prints its usage text first, several lines): `--help` shows the usage."""

    def error(self, message):
        message = " ".join(message.split())
        flag = message.split()[1].rstrip(":") if message.startswith("argument --") else None
        if flag and "expected one argument" in message:
            message += (f" (a value that starts with '-', such as a negative number, is written "
                        f"with '=': {flag}=-VALUE)")
        self.exit(2, f"error: {message}; see --help\n")

    def print_help(self, file=None):
        """--help: the text written and flushed here; a stdout that cannot be written
        (> /dev/full) is one line `error: stdout: cannot write: ...`, status 2 (argparse's
        own print swallows the failure: nothing said, status 0, or 120 at exit)."""
        out = sys.stdout if file is None else file
        try:
            out.write(self.format_help())
            out.flush()
        except OSError as e:
            stdout_failed(e)


class _Stdout:
    """sys.stdout while a tool runs (`run`): a write or flush that fails raises
    _StdoutFailed, told as stdout's, not as the file `run` was given (`where`)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as e:
            raise _StdoutFailed(e) from None

    def flush(self):
        try:
            self._stream.flush()
        except OSError as e:
            raise _StdoutFailed(e) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _StdoutFailed(Exception):
    pass


def stdout_failed(e):
    """A stdout that cannot be written (> /dev/full): one line, status 2; os._exit, as the
    unwritten text would be flushed again at exit (a second message, status 120)."""
    sys.stderr.write(f"error: stdout: cannot write: {e.strerror or e}\n")
    sys.stderr.flush()
    os._exit(2)


def positive_int(text):
    """A count flag's value (--samples, --batch, --passes, --threads): an integer of 1 or more."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text[:80]}' is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n}: must be at least 1")
    return n


def run(main, where=None):
    """Calls `main()` and returns the exit status: its return value (0 for None), or 2
    after one line `error: ...` for any failure. An OSError names its file (Python's
    "[Errno 27] File too large" does not; `where` when the error has none). A program
    run by `main` that failed (subprocess.CalledProcessError) has said why in its own
    line on stderr: nothing is added to it. A missing program is named (an OSError)."""
    real = sys.stdout
    sys.stdout = _Stdout(real)
    try:
        code = main() or 0
        sys.stdout.flush()
        return code
    except _StdoutFailed as e:
        stdout_failed(e.args[0])
    except subprocess.CalledProcessError:
        return 2
    except OSError as e:
        print(f"error: {e.filename or where}: {e.strerror or e}", file=sys.stderr)
        return 2
    except Exception as e:  # one line for the user, no traceback
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    finally:
        sys.stdout = real
