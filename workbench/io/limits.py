"""The limits every input obeys, in one place: the readers refuse what breaks them, and the
editor and the importers refuse the same things at entry, with the same messages, so that
whatever can be created can also be saved and opened again.

- files: regular files only (a FIFO or a device would hang or never end), read with a size cap;
- text: a length per kind of text, no control characters (they break vector exports and
  terminals);
- numbers: finite, and within :data:`MIN_MAGNITUDE` … :data:`MAX_MAGNITUDE` in base units.
"""

from __future__ import annotations

import os
import re
import stat

from workbench.io.errors import InputError

__all__ = ["TEXT_LIMITS", "MIN_MAGNITUDE", "MAX_MAGNITUDE", "text_problem", "magnitude_problem",
           "read_regular_file", "terminal_text"]

#: The longest text of each kind, in characters (sessions, machines, measurements).
TEXT_LIMITS = {
    "title": 300,
    "notes": 100_000,
    "operation": 300,
    "machine": 120,
    "measurement": 300,
    "source": 2_000,
    "reference": 300,  # a measurement's operation or machine, a compared pair's names
}

#: The smallest and largest magnitude of a ceiling, FLOP count, byte count, time or
#: efficiency in base units (FLOP/s, B/s, FLOP, B, s, 1); zero is allowed where it means none.
MIN_MAGNITUDE = 1e-30
MAX_MAGNITUDE = 1e30

# C0 controls other than tab, LF and CR; DEL and the C1 controls; the non-characters
# U+FFFE and U+FFFF; lone surrogates (none of them can be written to XML or shown safely).
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")


def text_problem(text: str, kind: str, multiline: bool = False) -> str | None:
    """Why ``text`` cannot be a ``kind`` of text (a key of :data:`TEXT_LIMITS`), or ``None``.
    Single-line texts refuse line breaks too unless ``multiline``."""
    limit = TEXT_LIMITS[kind]
    if len(text) > limit:
        return f"is longer than {limit:,} characters ({len(text):,})"
    bad = _CONTROL_RE.search(text)
    if bad is None and not multiline:
        bad = re.search("[\n\r]", text) if ("\n" in text or "\r" in text) else None
        if bad is not None:
            return "holds a line break; write it on one line"
    if bad is not None:
        return (f"holds the control character U+{ord(bad.group()):04X} at position "
                f"{bad.start() + 1}; remove it")
    return None


def magnitude_problem(value: float) -> str | None:
    """Why ``value`` (in base units) is out of range, or ``None``: not finite, or nonzero and
    outside :data:`MIN_MAGNITUDE` … :data:`MAX_MAGNITUDE`."""
    if value != value or value in (float("inf"), float("-inf")):
        return "must be a finite number"
    if value != 0 and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        return (f"is out of range ({value:.3g}); values are limited to {MIN_MAGNITUDE:g} … "
                f"{MAX_MAGNITUDE:g} in base units")
    return None


def read_regular_file(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or :class:`InputError` naming
    it. A FIFO, a device or a socket is refused before it is read (it would block or never
    end), and so is a file that grows past ``limit`` while read. ``what``: "session file",
    "preset file", "CSV file"…, for the messages."""
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
    if info.st_size > limit:
        raise InputError(f"file is {info.st_size / 1e6:.1f} MB; a {what} is limited to "
                         f"{_size(limit)}", name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced between the stat and the open
            raise InputError(f"is {_special(mode)}, not a {what}: only regular files are "
                             "read", name)
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


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(limit: int) -> str:
    if limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MB"
    return f"{limit / 1e6:g} MB"


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal: control characters (an escape sequence could
    clear the screen) written as ``\\x1b``-style escapes."""
    if not _CONTROL_RE.search(text) and "\n" not in text and "\r" not in text:
        return text
    return re.sub("[\x00-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]",
                  lambda m: m.group().encode("unicode_escape").decode("ascii")
                  if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)
