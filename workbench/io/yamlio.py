"""Reading YAML safely: plain data only, bounded size and aliases, and a line for every key.

``yaml.safe_load`` alone is not enough for files from strangers: an alias bomb of a few
hundred bytes loads fast but explodes when traversed, and validation messages need the line
of each key. :func:`read_yaml` reads regular files only, composes the node tree with an alias
budget, walks it once with a budget for what aliases add to it (what is written out is bounded
by the file size; recording ``path → line`` and refusing duplicate keys), then constructs plain
Python data with PyYAML's safe constructor. Integers in YAML 1.1's other bases (``010`` is 8,
``1:30`` is 90) are refused with the number they read as. Every document is read this one
way, with libyaml's parser and composer when PyYAML has them (``yaml.CSafeLoader``), else with
PyYAML's own (:mod:`workbench.io.yaml_parser`). A large document given a
:class:`~workbench.io.limits.Shape` (a session file) is first checked as its text streams by,
before the node tree (whose size grows with the document) is built: unknown keys, lists past
their limits and nesting are refused from a count of the lines of its top-level lists and one
pass over the parse events (:func:`~workbench.io.yaml_parser.check_shape`); the limits are
those of :mod:`workbench.io.limits`.

The files that ship with the package (the example sessions and hardware presets) are read at
every start. What :func:`read_yaml` made of one (``keep=True``) is kept in the user's cache
folder and taken from there while the file's bytes, the product's version and this reader are
the same: a start-up on the built-in example then neither imports PyYAML (a tenth of a second
on a slow machine, most of it compiling one regular expression of its reader) nor parses.
"""

from __future__ import annotations

import marshal
import math
import os
import re
import sys
import zlib
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.io.errors import InputError, ReadProgress
from workbench.io.limits import MAX_FILE_BYTES, SHAPE_CHECK_CHARS, Shape, read_regular_file
from workbench.model.limits import MAX_SESSION_BYTES as _SESSION_BYTES
from workbench.records import record

if TYPE_CHECKING:
    from collections.abc import Callable

    from workbench.io.limits import ShapeSource

__all__ = ["MAX_SESSION_BYTES", "YamlDocument", "read_yaml", "parse_yaml", "dump_yaml",
           "plain_data", "count_top_lists", "kept_folder"]

#: A session file's own cap (see :data:`workbench.model.limits.MAX_SESSION_BYTES`): a save
#: never writes a file beyond it, and an edit that would take the session past it is refused.
MAX_SESSION_BYTES = _SESSION_BYTES


@record
class YamlDocument:
    """Data read from YAML, with the line of each place (for messages)."""
    data: Any
    file: str | None = None
    lines: dict[tuple[object, ...], int] = field(default_factory=dict)

    def line(self, path: tuple[object, ...]) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def error(self, path: tuple[object, ...], message: str) -> InputError:
        return InputError(message, self.file, self.line(path), path)


def read_yaml(path: str | os.PathLike[str], what: str = "session file",
              limit: int = MAX_FILE_BYTES, shape: ShapeSource = None,
              keep: bool = False, progress: Callable[[float], None] | None = None,
              cancelled: Callable[[], bool] | None = None) -> YamlDocument:
    """Read a YAML file with every safety limit; errors are :class:`InputError` naming it.
    ``what`` names the kind of file in messages ("session file", "preset file"); ``limit``
    is its size cap in bytes; ``shape`` as for :func:`parse_yaml`. ``keep``: the file ships
    with the package; what it reads as is kept in the user's cache folder and, next time,
    taken from there when the file's bytes are the same (see :func:`kept_folder`).
    ``progress(fraction)`` is told how far the read has come, every 16 KB of text or few
    thousand values; ``cancelled()`` is asked as often, and when true the read stops
    (:class:`~workbench.io.errors.ReadCancelled`)."""
    name = str(path)
    steps = (ReadProgress(progress, cancelled, name)
             if progress is not None or cancelled is not None else None)
    raw = read_regular_file(path, limit, what)
    key = _kept_key(raw) if keep else None
    if key is None:
        return parse_yaml(raw, name, limit, shape, steps)
    found = _read_kept(key, raw)
    if found is not None:
        return YamlDocument(found[0], name, found[1])
    doc = parse_yaml(raw, name, limit, shape, steps)
    _keep(key, raw, doc)
    return doc


def kept_folder() -> Path:
    """Where :func:`read_yaml` keeps what the shipped files read as: ``parsed`` in the
    user's cache folder (:func:`~workbench.io.atomic.user_folder`). Anything in it may be
    deleted at any time."""
    from workbench.io.atomic import user_folder

    return user_folder("cache") / "parsed"


#: the version of the kept form itself (its key also holds the product's version, Python's,
#: marshal's, the sizes and times of the reader's own source files, and the file's length
#: and checksum; what is kept holds the file's bytes too, compared whole)
_KEPT_FORMAT = 1


def _kept_key(raw: bytes) -> str | None:
    """What a kept parse of ``raw`` is kept under, or ``None`` where the reader's source
    files cannot be looked at (an application frozen into one file): then nothing is kept."""
    from workbench import __version__

    here = Path(__file__)
    try:
        code = [os.stat(p) for p in (here, here.with_name("yaml_parser.py"),
                                     here.with_name("limits.py"))]
    except OSError:
        return None
    return "|".join([str(_KEPT_FORMAT), __version__, sys.version, str(marshal.version),
                     *(f"{s.st_size}:{s.st_mtime_ns}" for s in code),
                     f"{len(raw)}:{zlib.crc32(raw):08x}"])


def _kept_file(key: str) -> Path:
    return kept_folder() / f"{zlib.crc32(key.encode()):08x}.marshal"


def _read_kept(key: str, raw: bytes) -> tuple[Any, dict] | None:
    """The data and lines kept for ``raw`` under ``key``, or ``None`` (none kept, or not
    for these bytes: what is kept holds the whole key and the file's bytes, compared)."""
    try:
        kept = marshal.loads(_kept_file(key).read_bytes())
    except (OSError, RuntimeError, ValueError, EOFError, TypeError):
        return None  # (RuntimeError: no home folder to find the cache in)
    if (type(kept) is tuple and len(kept) == 4 and kept[0] == key and kept[1] == raw
            and type(kept[3]) is dict):
        return kept[2], kept[3]
    return None


def _keep(key: str, raw: bytes, doc: YamlDocument) -> None:
    """Keep what ``raw`` read as, where it reads back as the same (plain data does): a
    failure to write is no failure to read, and is only logged."""
    try:
        payload = marshal.dumps((key, raw, doc.data, doc.lines))
    except ValueError:
        return  # (a value marshal cannot hold: read again next time)
    if marshal.loads(payload)[2:] != (doc.data, doc.lines):
        return
    from workbench.io.atomic import write_atomic

    try:
        path = _kept_file(key)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_atomic(path, payload, new_mode=0o600)
        _prune(path.parent)
    except (OSError, RuntimeError) as exc:
        import logging

        logging.getLogger(__name__).info("could not keep the parsed %s: %s", doc.file, exc)


#: the most files kept (the shipped files number fifteen or so a version; those of earlier
#: versions go, the oldest first: one still used is only written again)
MOST_KEPT = 64


def _prune(folder: Path) -> None:
    kept = sorted(folder.glob("*.marshal"), key=lambda p: p.stat().st_mtime_ns)
    for old in kept[:max(0, len(kept) - MOST_KEPT)]:
        old.unlink(missing_ok=True)


_KEY_LINE = re.compile(r"^[^ \t\r\n#\-].*", re.M)  # a line at the left margin, not an item
_ITEM_LINE = re.compile(r"^-(?:[ \t\r]|$)", re.M)
_TOP_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*:(?:[ \t]+(.*))?")
_CLOSERS = {'"': '"', "'": "'", "[": "]", "{": "}"}


def count_top_lists(text: str, shape: Shape, name: str | None = None) -> None:
    """The cheap scan before the event pass: in a document written in block style (as the
    app writes it), the items of a top-level list are the lines that begin with ``-`` at the
    left margin under its key, so a list past its limit is refused from a count of those
    lines alone. A document in another style (a top-level value in flow style or quoted
    over several lines, anchors, several documents, an unknown key) is left to the event
    pass."""
    lines = list(_KEY_LINE.finditer(text))
    for i, line in enumerate(lines):
        match = _TOP_KEY.fullmatch(line.group().rstrip())
        if match is None or (shape.keys is not None and match.group(1) not in shape.keys):
            return  # (---, ..., ? key, a quoted key, an unknown key: the event pass says)
        value = (match.group(2) or "").strip()
        if (value[:1] in "&*!" and value) or (
                value[:1] in _CLOSERS and not (len(value) > 1
                                                and value[-1] == _CLOSERS[value[0]])):
            return  # (an anchor, an alias, a tag, or a value that goes on below)
        child = shape.children.get(match.group(1))
        if value or child is None or not child.most:
            continue
        end = lines[i + 1].start() if i + 1 < len(lines) else len(text)
        start = line.end()
        count = (text.count("\n- ", start, end) + text.count("\n-\n", start, end)
                 + text.count("\n-\r", start, end) + text.count("\n-\t", start, end))
        if count > child.most:
            items = _ITEM_LINE.finditer(text, start, end)
            for _ in range(child.most):
                next(items)
            at = next(items).start()
            raise InputError(f"has more than {child.most:,} {child.what}; at most "
                             f"{child.most:,}", name, text.count("\n", 0, at) + 1,
                             (match.group(1),))


def parse_yaml(raw: bytes | str, name: str | None = None,
               limit: int = MAX_FILE_BYTES, shape: ShapeSource = None,
               steps: ReadProgress | None = None) -> YamlDocument:
    """The document in ``raw``, read with every safety limit; ``shape``, when given, is
    checked first as the text streams (:func:`~workbench.io.yaml_parser.check_shape`) in a
    document of :data:`~workbench.io.limits.SHAPE_CHECK_CHARS` or more. It may be given as
    the function that makes it, called only for such a document (a session's shape imports
    every kind of entry). ``steps``: told the progress of the read, which it may stop."""
    if isinstance(raw, bytes):
        if len(raw) > limit:
            raise InputError(f"document is larger than {limit // (1024 * 1024)} MB", name)
        if b"\x00" in raw:
            raise InputError("not a text file (it contains NUL bytes)", name)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (invalid byte at offset {exc.start})", name) from None
    else:
        text = raw
    from workbench.io.yaml_parser import check_shape, compose

    if shape is not None and len(text) > SHAPE_CHECK_CHARS:
        if not isinstance(shape, Shape):
            shape = shape()
        count_top_lists(text, shape, name)
        check_shape(text, shape, name, steps.part(0.0, 0.25) if steps is not None else None)
    # (the shares of the steps: their times for a session of many measured points)
    data, lines = compose(text, name, steps.part(0.25, 1.0) if steps is not None else None)
    return YamlDocument(data, name, lines)


# ---------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """numpy scalars and tuples to plain Python values that ``safe_dump`` accepts."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, str) and type(value) is not str:
        return str(value)  # a library's version string (torch's TorchVersion), an enum
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


#: A copy of ``data`` in plain Python values (new containers; what :func:`dump_yaml` writes).
plain_data = _plain


def dump_yaml(data: Any) -> str:
    """``data`` as YAML text, as the product writes it (numpy scalars and tuples as plain
    values)."""
    from workbench.io.yaml_parser import dump

    return dump(_plain(data))
