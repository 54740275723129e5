"""Reading YAML safely: plain data only, bounded size and aliases, and a line for every key.

``yaml.safe_load`` alone is not enough for files from strangers: an alias bomb of a few
hundred bytes loads fast but explodes when traversed, and validation messages need the line
of each key. :func:`read_yaml` composes the node tree with an alias budget, walks it once with
a node budget (recording ``path → line`` and refusing duplicate keys), then constructs plain
Python data with PyYAML's safe constructor.

Most files are plain data: no anchors, aliases or tags, and only text, numbers, booleans and
nulls. Those are read in one pass over the parser's events (:func:`_read_plain`), which gives
the same data without building the node tree; their lines are found the full way when first
asked for (only a message needs one). Any file the one pass is not sure of (including every
file with a problem) is read the full way above, so messages and limits are unchanged.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)

from workbench.io.errors import InputError

__all__ = ["MAX_FILE_BYTES", "MAX_ALIASES", "MAX_NODES", "YamlDocument", "read_yaml", "parse_yaml",
           "dump_yaml"]

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_ALIASES = 100
MAX_NODES = 200_000


@dataclass
class YamlDocument:
    """Data read from YAML, with the line of each place (for messages)."""
    data: Any
    file: str | None = None
    lines: dict[tuple[object, ...], int] = field(default_factory=dict)
    #: The text of a document read in one pass, whose lines are found when first asked for
    #: (a file without problems never needs them).
    _unread = None

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


def _get_lines(doc: YamlDocument) -> dict[tuple[object, ...], int]:
    text = doc._unread
    if text is not None:
        doc._unread = None
        doc._lines = _lines_of(text, doc.file)
    return doc._lines


def _set_lines(doc: YamlDocument, lines: dict[tuple[object, ...], int]) -> None:
    doc._unread = None
    doc._lines = lines


YamlDocument.lines = property(_get_lines, _set_lines,  # type: ignore[assignment]
                              doc="``path → line`` of every key and list item")


_LoaderBase = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~5x faster


class _Loader(_LoaderBase):
    """The safe loader, remembering the tag of each plain scalar it has resolved: a session
    repeats the same keys and values (``kind``, ``dtype``, ``bf16``…) thousands of times, and
    resolving one tries every implicit-tag pattern. The tag depends only on the text and
    its style (the safe loader has no path resolvers), so the memo is exact."""

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._tags: dict[tuple[str, tuple[bool, bool]], str] = {}

    def construct_object(self, node, deep=False):
        """As the safe loader's, but a value its explicit tag cannot hold (``!!bool maybe``,
        ``!!int ''``, ``!!timestamp nope``) is a YAML error at its line, not a crash of the
        constructor."""
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except (KeyError, IndexError, AttributeError, ValueError, TypeError,
                OverflowError) as exc:
            tag = (node.tag or "").replace("tag:yaml.org,2002:", "!!")
            shown = node.value if isinstance(node.value, str) else "this value"
            raise yaml.constructor.ConstructorError(
                None, None, f"{shown!r} is not a valid {tag} value", node.start_mark) from exc

    def resolve(self, kind, value, implicit):
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = self._tags.get(key)
        if tag is None:
            tag = self._tags[key] = super().resolve(kind, value, implicit)
        return tag


_DumperBase = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def read_yaml(path: str | os.PathLike[str]) -> YamlDocument:
    """Read a YAML file with every safety limit; errors are :class:`InputError` naming it."""
    name = str(path)
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file", name) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    if p.is_dir():
        raise InputError("is a folder, not a session file", name)
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"file is {size / 1e6:.1f} MB; session files are limited to "
            f"{MAX_FILE_BYTES // (1024 * 1024)} MB", name)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", name) from None
    return parse_yaml(raw, name)


def parse_yaml(raw: bytes | str, name: str | None = None) -> YamlDocument:
    if isinstance(raw, bytes):
        if len(raw) > MAX_FILE_BYTES:
            raise InputError(f"document is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB", name)
        if b"\x00" in raw:
            raise InputError("not a text file (it contains NUL bytes)", name)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (invalid byte at offset {exc.start})", name) from None
    else:
        text = raw
    plain = _read_plain(text)
    if plain is not None:
        doc = YamlDocument(plain[0], name)
        doc._unread = text
        return doc
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise InputError(_yaml_message(exc), name, _mark_line(exc)) from None
        except yaml.YAMLError as exc:
            raise InputError(f"not valid YAML: {' '.join(str(exc).split())}", name) from None
        lines: dict[tuple[object, ...], int] = {}
        if node is not None:
            _walk(node, (), lines, _Budget(), name)
        try:
            data = loader.construct_document(node) if node is not None else None
        except yaml.MarkedYAMLError as exc:
            raise InputError(_yaml_message(exc), name, _mark_line(exc)) from None
        except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
            raise InputError(f"cannot read a value: {exc}", name) from None
    finally:
        loader.dispose()
    return YamlDocument(data, name, lines)


def _lines_of(text: str, name: str | None) -> dict[tuple[object, ...], int]:
    """The lines the full reader records for a document it accepts."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        lines: dict[tuple[object, ...], int] = {}
        if node is not None:
            _walk(node, (), lines, _Budget(), name)
        return lines
    finally:
        loader.dispose()


class _Budget:
    """Counts nodes visited (with aliases expanded) and aliases used while walking."""

    def __init__(self) -> None:
        self.nodes = 0
        self.aliases = 0
        self.seen: set[int] = set()


MAX_DEPTH = 64
MAX_NUMBER_DIGITS = 400
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"


def _walk(root: yaml.Node, root_path: tuple[object, ...], lines: dict, budget: _Budget,
          name: str | None) -> None:
    """Visit every node once per path (iteratively: deep nesting cannot overflow the stack),
    recording lines and enforcing the node, alias, depth and number-size limits."""
    stack: list[tuple[yaml.Node, tuple[object, ...]]] = [(root, root_path)]
    while stack:
        node, path = stack.pop()
        line = node.start_mark.line + 1
        budget.nodes += 1
        if budget.nodes > MAX_NODES:
            raise InputError(
                f"document expands to more than {MAX_NODES:,} values (an alias bomb?)", name, line)
        if len(path) > MAX_DEPTH:
            raise InputError(f"nested more than {MAX_DEPTH} levels deep", name, line, path[:8])
        if isinstance(node, yaml.CollectionNode):
            if id(node) in budget.seen:  # a second visit of a collection is an alias (*name)
                budget.aliases += 1
                if budget.aliases > MAX_ALIASES:
                    raise InputError(
                        f"more than {MAX_ALIASES} YAML aliases (*name); session files do not "
                        "need them, and many can expand into a huge document", name, line)
            budget.seen.add(id(node))
        elif node.tag in (_INT_TAG, _FLOAT_TAG) and len(node.value) > MAX_NUMBER_DIGITS:
            raise InputError(f"a number with more than {MAX_NUMBER_DIGITS} digits", name, line,
                             path)
        lines.setdefault(path, line)
        if isinstance(node, yaml.MappingNode):
            seen: set[object] = set()
            children = []
            for key_node, value_node in node.value:
                key_line = key_node.start_mark.line + 1
                if not isinstance(key_node, yaml.ScalarNode):
                    raise InputError("keys must be plain names", name, key_line, path)
                key = key_node.value
                if key == "<<":
                    raise InputError("YAML merge keys (<<) are not supported in session files",
                                     name, key_line, path)
                if key in seen:
                    raise InputError(f"key {key!r} appears twice", name, key_line, path)
                seen.add(key)
                lines.setdefault(path + (key,), key_line)
                children.append((value_node, path + (key,)))
            stack.extend(reversed(children))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed([(item, path + (i,)) for i, item in enumerate(node.value)]))


_STR_TAG = "tag:yaml.org,2002:str"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)").fullmatch  # what int() reads as YAML does
_UNSET = object()


class _NotPlain(Exception):
    """The document needs the full reader."""


def _read_plain(text: str) -> tuple[Any] | None:
    """``(data,)`` of a plain-data document, in one pass over the parser's events; ``None``
    for any document that needs the full reader: anchors, aliases, tags, scalars other than
    text, numbers, booleans and nulls, merge or repeated keys, keys that are not scalars, more
    than one document, a limit reached, or any error at all.

    For every document it accepts, the data equals the full reader's: each plain scalar is
    resolved by the loader's own resolver and built as its safe constructor builds it. Lines
    are not recorded: the full reader finds them if a message needs one."""
    loader = _Loader(text)
    try:
        return _plain_events(loader)
    except Exception:  # noqa: BLE001 - whatever it was, the full reader reports it
        return None
    finally:
        loader.dispose()


def _plain_events(loader: _Loader) -> tuple[Any] | None:
    get = loader.get_event
    if loader.yaml_path_resolvers or type(get()) is not StreamStartEvent \
            or type(get()) is not DocumentStartEvent:
        return None
    constructors = loader.yaml_constructors
    bool_values = loader.bool_values
    resolve = loader.resolve
    plain: dict[str, Any] = {}  # text of a plain scalar → its value (it depends on nothing else)

    def construct(text: str, implicit: tuple[bool, bool]) -> Any:
        tag = resolve(yaml.ScalarNode, text, implicit)
        if tag == _STR_TAG:
            return text
        if tag == _NULL_TAG:
            return None
        if tag == _BOOL_TAG:
            return bool_values[text.lower()]
        if tag in (_INT_TAG, _FLOAT_TAG):
            if len(text) > MAX_NUMBER_DIGITS:
                raise _NotPlain
            if tag == _INT_TAG and _DECIMAL(text):
                return int(text)
            return constructors[tag](loader, yaml.ScalarNode(tag, text))
        raise _NotPlain  # timestamps, binary, "=" …

    root: list[Any] = []
    container: Any = root  # the list or dict being filled
    mapping = False
    keys: set[str] = set()  # keys seen in the mapping being filled
    key: Any = _UNSET  # its key waiting for a value
    outer: list[tuple[Any, bool, set[str]]] = []  # the containers around it
    nodes = 0
    while True:
        event = get()
        cls = type(event)
        if cls is MappingEndEvent or cls is SequenceEndEvent:
            container, mapping, keys = outer.pop()
            continue
        if cls is DocumentEndEvent:
            break
        if cls is ScalarEvent:
            if event.anchor is not None or event.tag is not None:
                return None
            text = event.value
            if event.implicit[0]:
                value = plain.get(text, _UNSET)
                if value is _UNSET:
                    value = plain[text] = construct(text, event.implicit)
            else:
                value = text  # quoted or block text: always a string
            if mapping and key is _UNSET:  # a key: its value comes next
                if text == "<<" or text in keys:
                    return None
                keys.add(text)
                key = value
                continue
            opened = None
        elif cls is MappingStartEvent or cls is SequenceStartEvent:
            if event.anchor is not None or event.tag is not None:
                return None
            if mapping and key is _UNSET:
                return None  # a list or mapping as a key
            value = opened = {} if cls is MappingStartEvent else []
        else:
            return None  # an alias
        if mapping:
            container[key] = value
            key = _UNSET
        else:
            container.append(value)
        nodes += 1
        if nodes > MAX_NODES or len(outer) > MAX_DEPTH:
            return None
        if opened is not None:  # fill the new list or mapping next
            outer.append((container, mapping, keys))
            container = opened
            mapping = cls is MappingStartEvent
            if mapping:
                keys = set()
    if type(get()) is not StreamEndEvent:
        return None
    return (root[0],)


def _mark_line(exc: yaml.MarkedYAMLError) -> int | None:
    mark = exc.problem_mark or exc.context_mark
    return mark.line + 1 if mark is not None else None


def _yaml_message(exc: yaml.MarkedYAMLError) -> str:
    problem = exc.problem or "not valid YAML"
    if "could not determine a constructor for the tag" in problem:
        tag = problem.split("tag", 1)[1].strip().strip("'")
        short = tag.replace("tag:yaml.org,2002:", "!!")
        return f"unsupported YAML tag {short}: session files hold plain data only"
    context = f" {exc.context}" if exc.context else ""
    return f"not valid YAML:{context} {problem}".replace("  ", " ")


# ---------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """numpy scalars and tuples to plain Python values that ``safe_dump`` accepts."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


class _Dumper(_DumperBase):
    pass


def _represent_str(dumper, data: str):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(_plain(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=100)
