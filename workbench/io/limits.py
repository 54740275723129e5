"""The limits every input obeys, in one place: the readers refuse what breaks them, and the
editor and the importers refuse the same things at entry, with the same messages, so that
whatever can be created can also be saved and opened again.

- files: regular files only (a FIFO or a device would hang or never end), read with a size cap;
- text: a length per kind of text, no control characters (they break vector exports and
  terminals);
- numbers: finite, and within :data:`MIN_MAGNITUDE` … :data:`MAX_MAGNITUDE` in base units;
- YAML documents: a size, aliases, depth and digits of a number bounded, and what each place
  may hold (:class:`Shape`), checked as a large document's text streams by.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import stat
from dataclasses import field
from typing import TYPE_CHECKING

from workbench.io.errors import InputError
from workbench.model.limits import TEXT_LIMITS, text_problem
from workbench.model.units import BINARY, MAX_MAGNITUDE, MIN_MAGNITUDE, magnitude_problem
from workbench.records import record

__all__ = ["TEXT_LIMITS", "MIN_MAGNITUDE", "MAX_MAGNITUDE", "text_problem", "magnitude_problem",
           "read_regular_file", "open_regular_file",
           "terminal_text", "MAX_FILE_BYTES", "MAX_ALIASES", "MAX_NODES", "MAX_DEPTH",
           "MAX_NUMBER_DIGITS", "MAX_LIST_ITEMS", "SHAPE_CHECK_CHARS",
           "Shape", "no_cyclic_gc"]  # (the first four from the model: one table)

#: the most bytes of a YAML file (a session has its own cap, :data:`MAX_SESSION_BYTES
#: <workbench.model.limits.MAX_SESSION_BYTES>`)
MAX_FILE_BYTES = 5 * 1024 * 1024
#: the most YAML aliases (``*name``) in a document
MAX_ALIASES = 100
#: the most values that aliases add (an alias bomb), not values written out
MAX_NODES = 200_000
#: the deepest nesting of a YAML document
MAX_DEPTH = 64
#: the most digits of a number in a YAML document
MAX_NUMBER_DIGITS = 400
#: the most items of any list whose :class:`Shape` sets no limit
MAX_LIST_ITEMS = 100_000
#: YAML documents from this length on are checked as their text streams by, before they are
#: composed; a shorter one is read at once (its size bounds the work)
SHAPE_CHECK_CHARS = 1_000_000


@record(frozen=True)
class Shape:
    """What a place of a document may hold, checked while the text streams by
    (:func:`~workbench.io.yaml_parser.check_shape`): the keys a mapping may have (``None``:
    any), the most items a list may have, and the shape of each key's value (``children``)
    or list item (``item``). ``what`` names a list's items in messages."""

    keys: frozenset[str] | None = None
    most: int | None = None
    what: str = "items"
    item: Shape | None = None
    children: dict[str, Shape] = field(default_factory=dict)


if TYPE_CHECKING:
    from collections.abc import Callable

    #: a :class:`Shape`, or the function that makes it when a document is long enough to
    #: check
    ShapeSource = Shape | Callable[[], Shape] | None


def read_regular_file(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or :class:`InputError` naming
    it. A FIFO, a device or a socket is refused before it is read (it would block or never
    end), and so is a file that grows past ``limit`` while read. ``what``: "session file",
    "preset file", "CSV file"…, for the messages."""
    fd, name = _open_regular(path, what, limit)
    try:
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise InputError(f"file is larger than {_size(limit)}; a {what} is limited "
                                 f"to {_size(limit)}", name)
            chunks.append(chunk)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def open_regular_file(path: str | os.PathLike[str], what: str):
    """A regular file opened for reading in binary (the caller closes it), and its size, or
    :class:`InputError`: the same refusals as :func:`read_regular_file`, without a size cap
    (a streaming reader bounds what it keeps instead)."""
    fd, _name = _open_regular(path, what, None)
    size = os.fstat(fd).st_size
    with contextlib.suppress(OSError):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), size


def _open_regular(path, what: str, limit: int | None) -> tuple[int, str]:
    """The descriptor of a regular file (at most ``limit`` bytes when given) and its name."""
    name = os.fspath(path)
    if not str(name).strip():
        raise InputError(f"no file name given (expected a {what})", repr(str(name)))
    try:
        info = os.stat(name)
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"is a folder, not a {what}", name)
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"is {_special(info.st_mode)}, not a {what}: only regular files are "
                         "read", name)
    if limit is not None and info.st_size > limit:
        raise InputError(f"file is {info.st_size / 1e6:.1f} MB; a {what} is limited to "
                         f"{_size(limit)}", name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # replaced between the stat and the open
        os.close(fd)
        raise InputError(f"is {_special(mode)}, not a {what}: only regular files are read",
                         name)
    return fd, name


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(limit: int) -> str:
    if limit % BINARY["Mi"] == 0:  # (said "MB", as the limits were announced)
        return f"{limit // BINARY['Mi']} MB"
    return f"{limit / 1e6:g} MB"


def terminal_text(text: str, keep_lines: bool = False) -> str:
    """``text`` safe to print on a terminal: control characters (an escape sequence could
    clear the screen) and the bidirectional controls (one could reverse the numbers after
    a name) written as ``\\x1b``-style escapes; line feeds too unless
    ``keep_lines`` (a table's own lines)."""
    pattern = _TERMINAL_LINES if keep_lines else _TERMINAL
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


# (with the bidirectional embeddings, overrides and isolates, U+202A–U+202E and
# U+2066–U+2069: one in a name reverses the rest of its line on a terminal, the numbers
# printed after the name included)
_TERMINAL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                       "\ufffe\uffff\ud800-\udfff]")
_TERMINAL_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                             "\ufffe\uffff\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


@contextlib.contextmanager
def no_cyclic_gc():
    """The cycle collector paused while a file is read: what is decoded and kept holds no
    cycles, and with it running every collection walks all that was kept so far (the read
    of a trace of 10⁵ kernels took ten times as long; the open of a session of 20,000
    measured points 1.6 times)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
