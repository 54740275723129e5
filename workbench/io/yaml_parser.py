"""PyYAML's half of reading and writing YAML; callers use :mod:`workbench.io.yamlio`.

The node tree is composed with libyaml's parser and composer when PyYAML has them
(``yaml.CSafeLoader``), else with PyYAML's own, and walked once with the limits of
:mod:`workbench.io.limits` (:func:`compose`); a large document's shape is checked from
libyaml's parse events before that (:func:`check_shape`); :func:`dump` writes. This module is
imported with the first document parsed or written: a start-up that finds its shipped files
already parsed (:func:`workbench.io.yamlio.read_yaml`) does not import PyYAML at all.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import yaml

from workbench.io.errors import InputError, ReadProgress, unknown_key_message
from workbench.io.limits import (
    MAX_ALIASES,
    MAX_DEPTH,
    MAX_LIST_ITEMS,
    MAX_NODES,
    MAX_NUMBER_DIGITS,
    Shape,
)

__all__ = ["compose", "check_shape", "dump", "dump_with_items", "fast_dump", "list_item"]


_LoaderBase: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: ~5x faster


#: Tags of plain scalars resolved so far, by (text, style); values of plain-typed scalars
#: built so far, by (tag, text). Both depend on nothing else, so they are kept across files
#: (a bounded number of entries).
_TAGS: dict[tuple[str, tuple[bool, bool]], str] = {}
_VALUES: dict[tuple[str, str], Any] = {}
_MEMO_LIMIT = 50_000


_SCALAR_NODE = yaml.ScalarNode


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
        if kind is not _SCALAR_NODE or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)
        if not implicit[0]:
            return _STR_TAG  # (a quoted text is a text)
        key = (value, implicit)
        tag = _TAGS.get(key)
        if tag is None:
            if len(_TAGS) >= _MEMO_LIMIT:
                _TAGS.clear()
            tag = _TAGS[key] = super().resolve(kind, value, implicit)
        return tag


_DumperBase: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


_EVENTS = (yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.MappingEndEvent,
           yaml.SequenceEndEvent, yaml.ScalarEvent, yaml.AliasEvent)


def check_shape(text: str, shape: Shape, name: str | None = None,
                steps: ReadProgress | None = None) -> None:
    """Refuse, before any object is built, a document with a key that ``shape`` does not
    know, a list longer than its limit, or nesting deeper than :data:`MAX_DEPTH`: one pass
    over libyaml's parse events (memory does not grow with the document), stopped at the
    first problem. A document that is not YAML is left to the reader's own message.
    ``steps``: told the progress, which it may stop."""
    mapping_start, sequence_start, mapping_end, sequence_end, scalar, _alias = _EVENTS
    loader = _LoaderBase(_source(text, steps))
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


def _value_done(stack: list[list[Any]]) -> None:
    """A value ended: the mapping holding it expects its next key."""
    if stack and stack[-1][0]:
        stack[-1][4] = True


class _Pieces:
    """A text the parser reads in pieces (of 16 KB), telling ``steps`` how far it has come
    at each; the parser names it in its messages as it names a text given whole."""

    name = "<unicode string>"

    def __init__(self, text: str, steps: ReadProgress) -> None:
        self.text = text
        self.at = 0
        self.steps = steps

    def read(self, size: int) -> str:
        start = self.at
        self.steps(start / max(len(self.text), 1))
        self.at += size
        return self.text[start:self.at]


def _source(text: str, steps: ReadProgress | None) -> str | _Pieces:
    """What the parser reads ``text`` from: the text itself, or with ``steps``, its pieces."""
    return text if steps is None else _Pieces(text, steps)


def compose(text: str, name: str | None = None, steps: ReadProgress | None = None
            ) -> tuple[Any, dict[tuple[object, ...], int]]:
    """The data of the YAML document ``text`` (``None`` for an empty one) and the line of
    each place in it, read with every limit; what is wrong is an :class:`InputError`
    naming ``name``. ``steps``: told the progress, which it may stop."""
    # (the shares of the node tree and of the walk: their times for many measured points)
    loader = _Loader(_source(text, steps.part(0.0, 0.65) if steps is not None else None))
    walked = steps.part(0.65, 1.0) if steps is not None else None
    try:
        try:
            node = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise InputError(_yaml_message(exc), name, _mark_line(exc)) from None
        except yaml.YAMLError as exc:
            raise InputError(f"not valid YAML: {' '.join(str(exc).split())}", name) from None
        lines: dict[tuple[object, ...], int] = {}
        data = (_read_tree(node, loader, lines, name, walked, text.count("\n") + 1)
                if node is not None else None)
    finally:
        loader.dispose()
    return data, lines


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


def _read_tree(root: yaml.Node, loader: _Loader, lines: dict, name: str | None,
               steps: ReadProgress | None = None, total_lines: int = 1) -> Any:
    """The data of the node tree under ``root``, as the safe constructor builds it.

    Every node is visited once per path (aliases expanded; iteratively, so that deep nesting
    cannot overflow the stack), recording lines and enforcing the node, alias, depth and
    number-size limits. Plain mappings and lists are filled on the way, and a scalar of a
    plain type is built once per text (a session repeats the same values thousands of times);
    any other node is built by the safe constructor. An alias is the same object as its
    anchor, as with ``yaml.safe_load``. A value that cannot be built is reported after the
    walk, so that a limit reached anywhere is what a document is refused for first.
    ``steps`` is told the line reached (of ``total_lines``) every few thousand nodes."""
    nodes = aliases = 0
    left = _NODES_PER_STEP
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
        if steps is not None:
            left -= 1
            if not left:
                steps(line / total_lines)
                left = _NODES_PER_STEP
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


#: how many nodes the walk builds between two reports of its progress
_NODES_PER_STEP = 4096


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


class _Dumper(_DumperBase):
    pass


def _represent_str(dumper, data: str):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


_WIDTH = 100  # the line width the product writes at


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=_WIDTH)


def dump(data: Any) -> str:
    """``data`` (plain Python values) as YAML text, as the product writes it.

    A top-level list of mappings (a session's measured points, operations, machines) is
    written item by item by :func:`_list_items`, character for character as libyaml's
    emitter writes it but without building PyYAML's node tree for it (a session of 100,000
    measured points is written several times faster); an item it does not know how to
    write exactly (a nested list, a float, a text that needs double quotes or several
    lines) is written by PyYAML, alone."""
    text = dump_with_items(data, {})
    return _dump(data) if text is None else text


def dump_with_items(data: Any, written: dict[str, str]) -> str | None:
    """As :func:`dump`, with the items of some top-level lists written already (by
    :func:`list_item`, joined): ``written`` maps each such key of ``data`` (whose value there
    is only a place holder) to that text. ``None`` where the document must be written whole
    by PyYAML (no libyaml, or a document that ends open): the caller then gives :func:`dump`
    the lists themselves."""
    if not fast_dump() or type(data) is not dict:
        return None
    tokens: dict[str, list[Any] | str] = {}
    shell: dict[Any, Any] = {}
    for key, value in data.items():
        if key in written or (type(value) is list and value and type(key) is str
                              and all(type(item) is dict for item in value)):  # (else flow)
            token = f"roofline-workbench-list-{uuid.uuid4().hex}"
            tokens[token] = written.get(key) or value  # (a list written is never empty)
            value = [{token: 0}]  # (a list of mappings is written in block style)
        shell[key] = value
    if not tokens:
        return None
    text = _dump(shell)
    if _ends_open(text):
        return None
    for token, items in tokens.items():
        line = f"\n- {{{token}: 0}}\n"
        items_text = items if isinstance(items, str) else _list_items(items)
        if items_text is None or text.count(token) != 1 or line not in text:
            return None  # (written whole by PyYAML)
        text = text.replace(line, "\n" + items_text, 1)
    return text


def fast_dump() -> bool:
    """Whether :func:`dump` writes the items of top-level lists itself (libyaml is there to
    be matched); else :func:`list_item` is of no use."""
    return _DumperBase is getattr(yaml, "CSafeDumper", None)


#: How libyaml ends a document whose last text written on lines of its own keeps its
#: trailing line breaks (``|+``), after the last of them (``\n``, or a break of the text
#: itself: U+2028, U+2029, U+0085): that depends on what comes after, so such a document is
#: written whole by PyYAML.
_OPEN_END = "...\n"
_LINE_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


def _ends_open(text: str) -> bool:
    """Whether libyaml ended ``text`` as a document left open (see :data:`_OPEN_END`)."""
    return text.endswith(_OPEN_END) and text[:-len(_OPEN_END)].endswith(_LINE_BREAKS)


def _list_items(items: list[Any]) -> str | None:
    """The items of a top-level list, each from its ``-`` to its line's end (``None``: one
    leaves the document open-ended)."""
    out = []
    for item in items:
        written = list_item(item)
        if written is None:
            return None
        out.append(written)
    return "".join(out)


def list_item(item: dict[Any, Any]) -> str | None:
    """One mapping in a top-level list as :func:`dump` writes it, from its ``-`` to its
    line's end: it depends on the item alone (``None``: it leaves the document open-ended,
    which is then written whole by PyYAML)."""
    written = _mapping_item(item) if item else None
    if written is None:
        written = _dump({"k": [item]})[3:]
        if _ends_open(written):
            return None
    return written


#: Characters written as they are in a plain or single-quoted text: printable ones of the
#: Basic Multilingual Plane but line breaks (U+2028, U+2029) and the byte order mark; any
#: other makes libyaml write the text in double quotes (or on several lines).
_FAST_TEXT = re.compile("[\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*"
                        ).fullmatch
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_FLOW_INDICATORS = re.compile(r"[,?\[\]{}:]").search
#: PyYAML's resolver's patterns of plain texts read as other types than text (a null, a
#: boolean, a number, a date…), by their first character, as its ``resolve`` tries them
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_ANY_FIRST = tuple(_IMPLICIT.get(None, ()))  # (patterns for any first character: none)
_STYLES: dict[str, tuple[bool, bool] | None] = {}


def _styles(text: str) -> tuple[bool, bool] | None:
    """Whether libyaml writes ``text`` plain in a flow collection and in block context (else
    in single quotes), as its ``yaml_emitter_analyze_scalar`` and
    ``yaml_emitter_select_scalar_style`` decide; ``None`` where it writes it in double
    quotes or on several lines."""
    styles = _STYLES.get(text, ())
    if styles != ():
        return styles  # type: ignore[return-value]
    if not _FAST_TEXT(text):
        styles = None
    elif not text or any(regexp.match(text) for _tag, regexp
                                   in (*_IMPLICIT.get(text[0], ()), *_ANY_FIRST)):
        styles = (False, False)  # (read plain it would not be this text: '', 'yes', '12')
    else:
        first, spaced = text[0], text[1:2] in ("", " ")
        block = (first in _FIRST_INDICATORS or (first in "?-" and spaced)
                 or text.startswith(("---", "...")) or ": " in text or text.endswith(":")
                 or " #" in text)
        flow = block or first in "?:" or _FLOW_INDICATORS(text, 1) is not None
        blank = first == " " or text[-1] == " "
        styles = (not (flow or blank), not (block or blank))
    if len(text) <= 40:  # (names of units, precisions, machines, runs: repeated)
        if len(_STYLES) >= _MEMO_LIMIT:
            _STYLES.clear()
        _STYLES[text] = styles
    return styles


def _scalar(value: Any, column: int, indent: int, flow: bool, breaks: bool
            ) -> tuple[str, int] | None:
    """``value`` (a text or a whole number) written from ``column`` (after a space libyaml
    puts before it), and the column after it; ``indent``: where a long text goes on after a
    line break (only at a space past the line width, where ``breaks``); ``None`` where
    :func:`dump` leaves it to PyYAML."""
    if type(value) is int:
        text = str(value)
        return text, column + len(text)
    if type(value) is not str:
        return None
    styles = _styles(value)
    if styles is None:
        return None
    quoted = not styles[0 if flow else 1]
    start = column + quoted
    if not breaks or start + len(value) + (value.count("'") if quoted else 0) <= _WIDTH + 1:
        end = start + len(value) + (value.count("'") if quoted else 0)  # (no space past the width)
        return ((f"'{value.replace(chr(39), chr(39) * 2)}'", end + 1) if quoted
                else (value, end))
    pieces = []
    at, base, last = 0, start, len(value) - 1
    space = value.find(" ")
    while space != -1:
        column = base + space - at + (value.count("'", at, space) if quoted else 0)
        if (column > _WIDTH and (space == 0 or value[space - 1] != " ")
                and value[space + 1:space + 2] != " "
                and not (quoted and (space == 0 or space == last))):
            pieces.append(value[at:space])
            at, base = space + 1, indent
        space = value.find(" ", space + 1)
    pieces.append(value[at:])
    end = base + len(value) - at + (value.count("'", at) if quoted else 0)
    text = ("\n" + " " * indent).join(pieces)
    return (f"'{text.replace(chr(39), chr(39) * 2)}'", end + 1) if quoted else (text, end)


_KEYS: dict[tuple[str, bool], str] = {}


def _key(key: Any, column: int, flow: bool) -> tuple[str, int] | None:
    """A mapping's key, written from ``column`` as libyaml writes a simple key."""
    if type(key) is not str:
        return None
    text = _KEYS.get((key, flow))
    if text is None:
        if len(key.encode("utf-8")) > 128:
            return None  # (not a simple key: libyaml writes it after "? ")
        written = _scalar(key, 0, 0, flow, False)
        if written is None:
            return None
        text = written[0]
        if len(key) <= 40:
            if len(_KEYS) >= _MEMO_LIMIT:
                _KEYS.clear()
            _KEYS[key, flow] = text
    return text, column + len(text)


def _flow_mapping(mapping: dict[Any, Any], column: int, indent: int) -> tuple[str, int] | None:
    """`` {key: value, …}`` from ``column``, in a block whose indent is ``indent``."""
    parts = [" {"]
    column += 2
    first = True
    for key, value in mapping.items():
        if not first:
            parts.append(",")
            column += 1
        if column > _WIDTH:
            parts.append("\n" + " " * (indent + 2))
            column = indent + 2
        elif not first:
            parts.append(" ")
            column += 1
        first = False
        written = _key(key, column, True)
        if written is None:
            return None
        parts.append(written[0])
        parts.append(": ")
        written = _scalar(value, written[1] + 2, indent + 4, True, True)
        if written is None:
            return None
        parts.append(written[0])
        column = written[1]
    parts.append("}")
    return "".join(parts), column + 1


def _mapping_item(item: dict[Any, Any]) -> str | None:
    """An item of a top-level list that is a mapping, as libyaml writes it: in flow style
    (``- {key: value, …}``) when every value is a text or number, else in block style with
    each value a text, a number or a flow mapping of those."""
    if all(type(v) is str or type(v) is int for v in item.values()):
        written = _flow_mapping(item, 1, 0)
        return None if written is None else "-" + written[0] + "\n"
    parts = ["- "]
    for key, value in item.items():
        if len(parts) > 1:
            parts.append("\n  ")
        written = _key(key, 2, False)
        if written is None:
            return None
        parts.append(written[0])
        parts.append(":")
        if type(value) is dict:
            if not value or not all(type(v) is str or type(v) is int for v in value.values()):
                return None
            written = _flow_mapping(value, written[1] + 1, 2)
        else:
            parts.append(" ")
            written = _scalar(value, written[1] + 2, 4, False, True)
        if written is None:
            return None
        parts.append(written[0])
    parts.append("\n")
    return "".join(parts)
