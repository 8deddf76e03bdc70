"""The guards the Python scripts of scripts/ share (scripts/*-study, scripts/sre-evaluation,
scripts/adc-survey-fit):
a user mistake is one `error: ...` line naming the flag or file, before anything is
written, and a non-zero exit status; never a traceback or the usage text (docs/errors.md,
"Scripts").

Each script imports it from its own folder, found through symlinks:

    sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
    from study_guards import Parser, Refused, main, ...

and ends in `main(run)`. Only the Python standard library is needed.
"""
import argparse
import contextlib
import csv
import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile

class Refused(Exception):
    """A user mistake: its text is the error line (after `error: `)."""


class Parser(argparse.ArgumentParser):
    """argparse, its usage errors in one line (sresim's form) rather than the usage text."""

    def error(self, message):
        sys.stderr.write(f"error: {printable(message)} (see {self.prog} --help)\n")
        sys.exit(2)

    def print_help(self, file=None):
        """--help: the text written and flushed here, as `main` flushes a script's output.
        argparse's own print swallows a failed write and `--help` exits before `main`, so a
        stdout that cannot be written (> /dev/full) said nothing and exited 0 (or 120)."""
        out = sys.stdout if file is None else file
        try:
            out.write(self.format_help())
            out.flush()
        except OSError as e:
            fail(f"stdout: cannot write: {e.strerror or e}", 1)
            sys.stderr.flush()
            os._exit(1)  # the unwritten text is not flushed again at exit (a second message)


ESCAPES = {"\0": "\\0", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


def printable(s):
    """`s` as sresim prints a path or a name (crates/bounds `text::printable`): every
    control character (C0, DEL, C1) and U+FFFE, U+FFFF written as Rust's escape of it
    (`\\n`, `\\t`, `\\r`, `\\0`, else `\\u{1b}`), the rest as it is; a byte that is not
    UTF-8 (in a path) shown as U+FFFD, as Rust's display of a path shows it."""
    s = str(s)
    try:
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        s = s.encode("utf-8", "replace").decode("utf-8")
    return "".join(ESCAPES.get(c, f"\\u{{{ord(c):x}}}")
                   if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in "\ufffe\uffff" else c
                   for c in s)


def check_bin(path, build):
    """--bin names sresim: an executable file whose `--version` says `sresim VERSION`."""
    # A bare name is looked up on PATH, as the shell and subprocess do.
    found = shutil.which(path) if os.sep not in path else path

    if not (found and os.path.isfile(found) and os.access(found, os.X_OK)):
        raise Refused(f"--bin {printable(path)}: not an executable file ({build})")
    try:
        p = subprocess.run([path, "--version"], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise Refused(f"--bin {printable(path)}: does not run: {getattr(e, 'strerror', None) or e}")
    if p.returncode != 0 or not p.stdout.startswith(b"sresim "):
        raise Refused(f"--bin {printable(path)}: not sresim (its --version does not say "
                      f"'sresim VERSION')")


def writable_dir(path, flag, named=None):
    """The directory `path` is or would be made in: it (or its nearest existing ancestor)
    must be a directory where a file can be created (tried, and removed at once). The
    error names `named` (the flag's value) when given, else `path`."""
    shown = printable(path if named is None else named)
    d = os.path.abspath(path)
    while not os.path.lexists(d):
        d = os.path.dirname(d)
    if not os.path.isdir(d):
        what = f"{printable(d)} is not a directory"
        if named is None and d == os.path.abspath(path):
            what = "exists and is not a directory"
        raise Refused(f"{flag} {shown}: {what}")
    try:
        with tempfile.TemporaryFile(dir=d):
            pass
    except OSError as e:
        raise Refused(f"{flag} {shown}: cannot write in {printable(d)}: "
                      f"{e.strerror or e}")


def writable_file(path, flag):
    """`path` can be replaced by a file: a regular file or nothing yet, in a directory
    (or one that can be made) where a file can be created."""
    if os.path.isdir(path):
        raise Refused(f"{flag} {printable(path)}: is a directory, not a file")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise Refused(f"{flag} {printable(path)}: exists and is not a regular file")
    writable_dir(os.path.dirname(os.path.abspath(path)), flag, path)


def write_atomic(path, fill):
    """Writes `path` all or nothing: `fill(f)` writes a temporary file beside it, renamed
    over `path` once complete; on any failure the temporary is removed, `path` untouched."""
    write_together([(path, fill)])


def write_together(files):
    """Writes every (path, fill) of `files` or none: each `fill(f)` writes a temporary
    file beside its path; they are renamed over their paths only once all are complete,
    and on any failure every temporary is removed and no path is touched."""
    made = []
    try:
        mask = os.umask(0)
        os.umask(mask)
        for path, fill in files:
            d = os.path.dirname(os.path.abspath(path))
            os.makedirs(d, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{os.path.basename(path)}.",
                                       suffix=".tmp")
            made.append(tmp)
            try:
                os.fchmod(fd, 0o666 & ~mask)
                with os.fdopen(fd, "w", newline="") as f:
                    fill(f)
            except OSError as e:
                if e.filename is None:
                    raise OSError(e.errno, f"cannot write: {e.strerror or e}", path) from None
                raise
        for tmp, (path, _) in zip(made, files):
            os.replace(tmp, path)
    finally:
        for tmp in made:
            if os.path.lexists(tmp):
                os.unlink(tmp)


def data_error(path, e):
    """A file this script reads (a table, a shape file) that lacks what it needs."""
    if isinstance(e, KeyError):
        return Refused(f"{printable(path)}: no {printable(e.args[0])!r} "
                       "(a column or key this script reads)")
    return Refused(f"{printable(path)}: {printable(e)}")


class Table(list):
    """The rows of a table read by `read_table` (dicts, header to cell), with its path,
    so that a row the script needs and does not find is named with the file."""

    def __init__(self, rows, path, header):
        super().__init__(rows)
        self.path = path
        self.header = header

    def one(self, **cells):
        """The first row whose cells are `cells` (a key's `__` stands for `.`); a row
        missing is refused with the file named."""
        want = {k.replace("__", "."): str(v) for k, v in cells.items()}
        for r in self:
            if all(r.get(k) == v for k, v in want.items()):
                return r
        said = ", ".join(f"{k} = {v}" for k, v in want.items())
        raise Refused(f"{printable(self.path)}: no row with {printable(said)} "
                      "(a row this script reads)")


def regular_file(path, named=None):
    """A file a script reads, checked before it is opened: refused in one line naming it
    (`named`, else its path) when it does not exist or is not a regular file (a FIFO
    would block the read forever; a directory, socket or device is no table)."""
    shown = printable(path if named is None else named)
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise Refused(f"{shown}: cannot read: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise Refused(f"{shown}: is a directory, not a file")
    if not stat.S_ISREG(mode):
        kind = ("FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode)
                else "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file")
        raise Refused(f"{shown}: is a {kind}, not a regular file (a FIFO, socket or device "
                      "cannot be read)")


def read_table(path, columns=(), numbers=(), blank=False, named=None):
    """A CSV a script wrote earlier and reads back (a --markdown's table, a resumed
    table): refused in one line, the file named (`named`, else its path), unless it is
    a regular file of UTF-8 text whose header holds every one of `columns`, each row
    as many cells as the header, and every cell of `numbers` a number (or empty, with
    `blank`): a column of `numbers` is required too. Blank lines are passed over, as
    csv.DictReader passes them."""
    shown = printable(path if named is None else named)
    regular_file(path, named)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Refused(f"{shown}: not UTF-8 text (byte {e.start} is {raw[e.start]:#04x})")
    reader = csv.reader(io.StringIO(text, newline=""))
    rows = []
    try:
        header = next(reader, None)
        if header is None:
            raise Refused(f"{shown}: empty (no header line)")
        for c in [*columns, *numbers]:
            if c not in header:
                raise Refused(f"{shown}: no '{printable(c)}' (a column this script reads)")
        for cells in reader:
            if not cells:
                continue
            if len(cells) != len(header):
                raise Refused(f"{shown}: line {reader.line_num}: {len(cells)} cells, "
                              f"the header has {len(header)}")
            row = dict(zip(header, cells))
            for c in numbers:
                v = row[c]
                if blank and v == "":
                    continue
                try:
                    float(v)
                except ValueError:
                    raise Refused(f"{shown}: line {reader.line_num}: {printable(c)} "
                                  f"'{printable(v)}' is not a number") from None
            rows.append(row)
    except csv.Error as e:
        raise Refused(f"{shown}: line {reader.line_num}: {printable(e)}")
    return Table(rows, path, header)


def printed_whole(work, *args):
    """Runs `work(*args)`, what it prints kept until it has finished: a table refused
    half way leaves nothing on stdout before the error line."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        work(*args)
    sys.stdout.write(buf.getvalue())


def table_dir(path, flag, names):
    """A --data folder a --markdown reads: an existing directory holding at least one of
    `names` (the tables it prints from); refused otherwise, rather than printing nothing."""
    if not os.path.exists(path):
        raise Refused(f"{flag} {printable(path)}: no such directory")
    if not os.path.isdir(path):
        raise Refused(f"{flag} {printable(path)}: exists and is not a directory")
    if not any(os.path.lexists(os.path.join(path, n)) for n in names):
        raise Refused(f"{flag} {printable(path)}: holds none of the tables "
                      f"({', '.join(names[:2])}, ...)")


def main(run):
    """Runs `run()`, the script's work: a Refused, a failing sresim call or a file that
    cannot be read or written ends in one line and an exit status, never a traceback."""
    try:
        run()
        sys.stdout.flush()
        code = 0
    except Refused as e:
        code = fail(str(e), 1)
    except subprocess.CalledProcessError as e:
        # sresim printed its one error line: no traceback after it.
        if e.returncode > 0:
            code = e.returncode
        else:
            code = fail(f"{printable(e.cmd[0])}: ended by signal {-e.returncode}", 1)
    except OSError as e:
        if e.filename is not None:
            code = fail(f"{printable(e.filename)}: {e.strerror or e}", 1)
        else:
            code = fail(f"stdout: cannot write: {e.strerror or e}", 1)
    # os._exit: a stdout that cannot be written (> /dev/full) is not flushed again at exit
    # (a second message).
    sys.stderr.flush()
    os._exit(code)


def fail(message, code):
    sys.stderr.write(f"error: {message}\n")
    return code

