"""Reading YAML safely: plain data only, bounded size and aliases, and a line for every key.

``yaml.safe_load`` alone is not enough for files from strangers: an alias bomb of a few
hundred bytes loads fast but explodes when traversed, and validation messages need the line
of each key. :func:`read_yaml` reads regular files only, composes the node tree with an alias
budget, walks it once with a budget for what aliases add to it (what is written out is bounded
by the file size; recording ``path → line`` and refusing duplicate keys), then constructs plain
Python data with PyYAML's safe constructor. Integers in YAML 1.1's other bases (``010`` is 8,
``1:30`` is 90) are refused with the number they read as. Every document is read this one
way, with libyaml's parser and composer when PyYAML has them (``yaml.CSafeLoader``), else with
PyYAML's own. A large document given a :class:`Shape` (a session file) is first checked as its
text streams by, before the node tree (whose size grows with the document) is built: unknown
keys, lists past their limits and nesting are refused from a count of the lines of its
top-level lists and one pass over the parse events (:func:`check_shape`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

import yaml

from workbench.io.errors import InputError
from workbench.model.limits import MAX_SESSION_BYTES as _SESSION_BYTES
from workbench.records import record

__all__ = ["MAX_FILE_BYTES", "MAX_SESSION_BYTES", "Shape", "check_shape",
           "MAX_ALIASES", "MAX_NODES", "YamlDocument", "read_yaml", "parse_yaml",
           "dump_yaml", "plain_data"]

MAX_FILE_BYTES = 5 * 1024 * 1024
#: A session file's own cap (see :data:`workbench.model.limits.MAX_SESSION_BYTES`): a save
#: never writes a file beyond it, and an edit that would take the session past it is refused.
MAX_SESSION_BYTES = _SESSION_BYTES
MAX_ALIASES = 100
MAX_NODES = 200_000  # values that aliases add (an alias bomb), not values written out


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


_LoaderBase: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~5x faster


#: Tags of plain scalars resolved so far, by (text, style); values of plain-typed scalars
#: built so far, by (tag, text). Both depend on nothing else, so they are kept across files
#: (a bounded number of entries).
_TAGS: dict[tuple[str, tuple[bool, bool]], str] = {}
_VALUES: dict[tuple[str, str], Any] = {}
_MEMO_LIMIT = 50_000


class _Loader(_LoaderBase):
    """The safe loader, remembering the tag of each plain scalar it has resolved: a session
    repeats the same keys and values (``kind``, ``dtype``, ``bf16``…) thousands of times, and
    resolving one tries every implicit-tag pattern. The tag depends only on the text and
    its style (the safe loader has no path resolvers), so the memo is exact."""

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
        tag = _TAGS.get(key)
        if tag is None:
            if len(_TAGS) >= _MEMO_LIMIT:
                _TAGS.clear()
            tag = _TAGS[key] = super().resolve(kind, value, implicit)
        return tag


_DumperBase: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def read_yaml(path: str | os.PathLike[str], what: str = "session file",
              limit: int = MAX_FILE_BYTES, shape: ShapeSource = None) -> YamlDocument:
    """Read a YAML file with every safety limit; errors are :class:`InputError` naming it.
    ``what`` names the kind of file in messages ("session file", "preset file"); ``limit``
    is its size cap in bytes; ``shape`` as for :func:`parse_yaml`."""
    from workbench.io.limits import read_regular_file

    name = str(path)
    return parse_yaml(read_regular_file(path, limit, what), name, limit, shape)


def did_you_mean(word: str, options: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options``, or ``""``."""
    import difflib  # only a message needs it

    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key_message(key: object, allowed) -> str:
    """``unknown key 'x' (did you mean 'y'?); expected one of: …``."""
    hint = did_you_mean(str(key), [str(a) for a in allowed])
    return f"unknown key {key!r}{hint}; expected one of: {', '.join(sorted(allowed))}"


@record(frozen=True)
class Shape:
    """What a place of a document may hold, checked while the text streams by
    (:func:`check_shape`): the keys a mapping may have (``None``: any), the most items a
    list may have, and the shape of each key's value (``children``) or list item (``item``).
    ``what`` names a list's items in messages."""

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

#: Documents from this length on are checked as their text streams by (:func:`check_shape`)
#: before they are composed; a shorter one is read at once (its size bounds the work).
SHAPE_CHECK_CHARS = 1_000_000
#: The most items of any list whose shape sets no limit.
MAX_LIST_ITEMS = 100_000
_EVENTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.MappingEndEvent,
           yaml.SequenceEndEvent, yaml.ScalarEvent, yaml.AliasEvent)


def check_shape(text: str, shape: Shape, name: str | None = None) -> None:
    """Refuse, before any object is built, a document with a key that ``shape`` does not
    know, a list longer than its limit, or nesting deeper than :data:`MAX_DEPTH`: one pass
    over libyaml's parse events (memory does not grow with the document), stopped at the
    first problem. A document that is not YAML is left to the reader's own message."""
    mapping_start, sequence_start, mapping_end, sequence_end, scalar, _alias = _EVENTS
    loader = _LoaderBase(text)
    # each open collection: [is a mapping, its shape, its path, items or keys seen,
    # expecting a key (mappings), the key being read]
    stack: list[list[Any]] = []
    try:
        while True:
            event = loader.get_event()
            kind = type(event)
            if stack:
                top = stack[-1]
                if top[0] and top[4]:  # a mapping's key
                    top[4] = False
                    if kind is mapping_end:
                        stack.pop()
                        _value_done(stack)
                        continue
                    key = event.value if kind is scalar else None
                    top[5] = key
                    keys = top[1].keys if top[1] is not None else None
                    if keys is not None and key is not None and key not in keys and key != "<<":
                        raise InputError(unknown_key_message(key, keys), name,
                                         event.start_mark.line + 1, top[2] + (key,))
                    if kind is not scalar:
                        # (a complex key: the reader refuses it with its own message)
                        return
                    continue
                if not top[0]:
                    if kind is sequence_end:
                        stack.pop()
                        _value_done(stack)
                        continue
                    top[3] += 1
                    shape_ = top[1]
                    most = shape_.most if shape_ is not None and shape_.most else MAX_LIST_ITEMS
                    if top[3] > most:
                        what = shape_.what if shape_ is not None else "items"
                        raise InputError(f"has more than {most:,} {what}; at most {most:,}", name,
                                         event.start_mark.line + 1, top[2])
            if kind is mapping_start or kind is sequence_start:
                if len(stack) >= MAX_DEPTH:
                    raise InputError(f"nested more than {MAX_DEPTH} levels deep", name,
                                     event.start_mark.line + 1)
                if stack:
                    top = stack[-1]
                    if top[0]:
                        child = top[1].children.get(top[5]) if top[1] is not None else None
                        path = top[2] + (top[5],)
                    else:
                        child = top[1].item if top[1] is not None else None
                        path = top[2] + (top[3] - 1,)
                else:
                    child, path = shape, ()
                stack.append([kind is mapping_start, child, path, 0, True, None])
            elif kind is scalar or kind is _alias:
                _value_done(stack)
            elif isinstance(event, yaml.StreamEndEvent):
                return
    except yaml.YAMLError:
        return  # (the reader says what is wrong, with its line)
    finally:
        loader.dispose()


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


def _value_done(stack: list[list[Any]]) -> None:
    """A value ended: the mapping holding it expects its next key."""
    if stack and stack[-1][0]:
        stack[-1][4] = True


def parse_yaml(raw: bytes | str, name: str | None = None,
               limit: int = MAX_FILE_BYTES, shape: ShapeSource = None) -> YamlDocument:
    """The document in ``raw``, read with every safety limit; ``shape``, when given, is
    checked first as the text streams (:func:`check_shape`) in a document of
    :data:`SHAPE_CHECK_CHARS` or more. It may be given as the function that makes it, called
    only for such a document (a session's shape imports every kind of entry)."""
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
    if shape is not None and len(text) > SHAPE_CHECK_CHARS:
        if not isinstance(shape, Shape):
            shape = shape()
        count_top_lists(text, shape, name)
        check_shape(text, shape, name)
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise InputError(_yaml_message(exc), name, _mark_line(exc)) from None
        except yaml.YAMLError as exc:
            raise InputError(f"not valid YAML: {' '.join(str(exc).split())}", name) from None
        lines: dict[tuple[object, ...], int] = {}
        data = _read_tree(node, loader, lines, name) if node is not None else None
    finally:
        loader.dispose()
    return YamlDocument(data, name, lines)


MAX_DEPTH = 64
MAX_NUMBER_DIGITS = 400
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_PLAIN_TAGS = frozenset((_INT_TAG, _FLOAT_TAG, _STR_TAG, _NULL_TAG, _BOOL_TAG))
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)").fullmatch  # what int() reads as YAML does
#: YAML 1.1's integers in other bases: octal 010, binary 0b10, hexadecimal 0x10, base 60 1:30
_OTHER_BASE = re.compile(r"[-+]?(?:0[0-7_]+|0b[01_]+|0x[0-9a-fA-F_]+|[1-9][0-9_]*(?::[0-5]?[0-9])+)"
                         ).fullmatch


def _read_tree(root: yaml.Node, loader: _Loader, lines: dict, name: str | None) -> Any:
    """The data of the node tree under ``root``, as the safe constructor builds it.

    Every node is visited once per path (aliases expanded; iteratively, so that deep nesting
    cannot overflow the stack), recording lines and enforcing the node, alias, depth and
    number-size limits. Plain mappings and lists are filled on the way, and a scalar of a
    plain type is built once per text (a session repeats the same values thousands of times);
    any other node is built by the safe constructor. An alias is the same object as its
    anchor, as with ``yaml.safe_load``. A value that cannot be built is reported after the
    walk, so that a limit reached anywhere is what a document is refused for first."""
    nodes = aliases = 0
    built: dict[int, Any] = {}  # collection node → its value (an alias gets the same one)
    construct = _Constructor(loader)

    root_value: list[Any] = []
    # (node, its path, the list or dict it goes into (None: only walked), its key there,
    # whether it is reached through an alias). The file size bounds the nodes written out;
    # only what aliases add is counted against MAX_NODES.
    stack: list[tuple[yaml.Node, tuple[object, ...], Any, Any, bool]] = [
        (root, (), root_value, None, False)]
    while stack:
        node, path, into, at, expanded = stack.pop()
        line = node.start_mark.line + 1
        if len(path) > MAX_DEPTH:
            raise InputError(f"nested more than {MAX_DEPTH} levels deep", name, line, path[:8])
        fill: Any = None  # the new list or mapping whose items come next
        if isinstance(node, yaml.CollectionNode):
            if id(node) in built:  # a second visit of a collection is an alias (*name)
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise InputError(
                        f"more than {MAX_ALIASES} YAML aliases (*name); session files do not "
                        "need them, and many can expand into a huge document", name, line)
                value = built[id(node)]
                expanded = True
            elif node.tag == _MAP_TAG and isinstance(node, yaml.MappingNode):
                value = fill = {}
            elif node.tag == _SEQ_TAG and isinstance(node, yaml.SequenceNode):
                value = fill = []
            else:
                value = construct(node)
            built[id(node)] = value
        else:
            _check_number(node, name, line, path)
            value = construct(node)
        if expanded:
            nodes += 1
            if nodes > MAX_NODES:
                raise InputError(
                    f"aliases (*name) expand the document by more than {MAX_NODES:,} values",
                    name, line)
        if into is not None:
            if at is None and type(into) is list:
                into.append(value)
            else:
                into[at] = value
        lines.setdefault(path, line)
        if isinstance(node, yaml.MappingNode):
            stack.extend(reversed(_mapping_items(node, path, fill, expanded, construct, lines,
                                                 name)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed([(item, path + (i,), fill, None, expanded)
                                   for i, item in enumerate(node.value)]))
    failure = construct.failure
    if failure is not None:
        if isinstance(failure, yaml.MarkedYAMLError):
            raise InputError(_yaml_message(failure), name, _mark_line(failure)) from None
        raise InputError(f"cannot read a value: {failure}", name) from None
    return root_value[0]


class _Constructor:
    """Builds one node's value as the safe constructor does, a scalar of a plain type once
    per text; a value that cannot be built gives ``None``, and the first such error is kept
    in ``failure``."""

    def __init__(self, loader: _Loader) -> None:
        self.loader = loader
        self.failure: Exception | None = None  # the first value that could not be built

    def __call__(self, node: yaml.Node) -> Any:
        tag = node.tag
        if tag == _STR_TAG:
            return node.value
        memo = tag in _PLAIN_TAGS
        if memo:
            value = _VALUES.get((tag, node.value), _VALUES)
            if value is not _VALUES:
                return value
        try:
            if tag == _INT_TAG and _DECIMAL(node.value):
                value = int(node.value)
            else:
                value = self.loader.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
            self.failure = self.failure or exc
            return None
        if memo:
            if len(_VALUES) >= _MEMO_LIMIT:
                _VALUES.clear()
            _VALUES[(tag, node.value)] = value
        return value


def _check_number(node: yaml.Node, name: str | None, line: int,
                  path: tuple[object, ...]) -> None:
    """Refuse a number of more than :data:`MAX_NUMBER_DIGITS` digits, or one written in a
    base YAML 1.1 reads differently from how it looks (``010``, ``0x10``, ``1:30``)."""
    if node.tag in (_INT_TAG, _FLOAT_TAG) and len(node.value) > MAX_NUMBER_DIGITS:
        raise InputError(f"a number with more than {MAX_NUMBER_DIGITS} digits", name,
                         line, path)
    if (node.tag == _INT_TAG and _OTHER_BASE(node.value)) or (
            node.tag == _FLOAT_TAG and ":" in node.value):
        raise InputError(_yaml11_number(node.value), name, line, path)


def _mapping_items(node: yaml.MappingNode, path: tuple[object, ...], fill: Any,
                   expanded: bool, construct: Callable[[yaml.Node], Any], lines: dict,
                   name: str | None) -> list[tuple[yaml.Node, tuple[object, ...], Any, Any, bool]]:
    """The walk's entries for a mapping's values, in order, with each key's line recorded:
    keys must be plain, unique (by text and type) and no merge key (``<<``). ``fill`` is
    the new mapping they go into (``None``: only walked, and the keys are not built)."""
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
        # (by text and type: '0' and 0 are two keys, as YAML reads them)
        if (key_node.tag, key) in seen:
            raise InputError(f"key {key!r} appears twice", name, key_line, path)
        seen.add((key_node.tag, key))
        lines.setdefault(path + (key,), key_line)
        children.append((value_node, path + (key,), fill,
                         construct(key_node) if fill is not None else None, expanded))
    return children


def _yaml11_number(text: str) -> str:
    """The message for an integer written in one of YAML 1.1's other bases (``010`` is 8,
    ``0x10`` 16, ``0b10`` 2, ``1:30`` 90): they read as a number other than the one seen."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = None
    body = text.lstrip("+-").replace("_", "")
    kinds = (("0x", "a hexadecimal"), ("0b", "a binary"))
    kind = next((k for prefix, k in kinds if body.lower().startswith(prefix)), None)
    if kind is None:
        kind = "a base-60" if ":" in body else "an octal"
    if isinstance(value, int | float) and not isinstance(value, bool):
        shown = repr(value) if isinstance(value, float) else str(value)
        seen = text.replace("_", "").lstrip("+")
        digits = seen.lstrip("-").lstrip("0") or "0"
        literal = ("-" if seen.startswith("-") else "") + digits
        options = (f"write {literal} or {shown}" if kind == "an octal" and literal != shown
                   else f"write {shown}")
        return (f"{text} is {kind} number in YAML 1.1 (it reads as {shown}); {options}, "
                f"or quote it to keep it as text")
    return f"{text} is {kind} number in YAML 1.1; write a plain decimal number"


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
    if isinstance(value, str) and type(value) is not str:
        return str(value)  # a library's version string (torch's TorchVersion), an enum
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


#: A copy of ``data`` in plain Python values (new containers; what :func:`dump_yaml` writes).
plain_data = _plain


class _Dumper(_DumperBase):
    pass


def _represent_str(dumper, data: str):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(_plain(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=100)
