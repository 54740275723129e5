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
from collections.abc import Callable
from typing import Any

import yaml

from workbench.io.errors import InputError, unknown_key_message
from workbench.io.limits import (
    MAX_ALIASES,
    MAX_DEPTH,
    MAX_LIST_ITEMS,
    MAX_NODES,
    MAX_NUMBER_DIGITS,
    Shape,
)

__all__ = ["compose", "check_shape", "dump"]


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


def _value_done(stack: list[list[Any]]) -> None:
    """A value ended: the mapping holding it expects its next key."""
    if stack and stack[-1][0]:
        stack[-1][4] = True


def compose(text: str, name: str | None = None) -> tuple[Any, dict[tuple[object, ...], int]]:
    """The data of the YAML document ``text`` (``None`` for an empty one) and the line of
    each place in it, read with every limit; what is wrong is an :class:`InputError`
    naming ``name``."""
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


class _Dumper(_DumperBase):
    pass


def _represent_str(dumper, data: str):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(data: Any) -> str:
    """``data`` (plain Python values) as YAML text, as the product writes it."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=100)
