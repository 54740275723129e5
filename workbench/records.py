"""Records: dataclasses whose methods are made without compiling code.

Python 3.11's :func:`dataclasses.dataclass` writes each method it adds as source text and
compiles it: six for a frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``), three for another. The window's first paint needs 53 of the
product's classes, and parsing and compiling their 264 methods was the largest part of
start-up that the bare-window floor does not have: some 0.2 G instructions (0.85 M each, most
of it the parser), 7 % of it.

:func:`record` is :func:`~dataclasses.dataclass` asked for none of those methods, which are
made here instead, by functions that close over the class's fields:

* ``a == b`` compares the tuples of the fields with ``compare=True`` when both are of the
  same class, else ``NotImplemented``; both tuples come from one :func:`operator.itemgetter`
  over the instances' ``__dict__``;
* ``hash(a)`` is the hash of the tuple of the fields with ``hash=True`` (or, where ``hash``
  is not given, ``compare=True``), for a frozen class; a mutable one is unhashable;
* ``repr(a)`` is ``ClassName(field=value, …)`` over the fields with ``repr=True``, ``...``
  where a record holds itself;
* ``__init__`` takes the fields with ``init=True`` in order, by position or by name, with
  their defaults (a ``default_factory`` called for each instance), sets them in order (and
  one with ``init=False`` from its ``default_factory``), through the class's descriptors
  and own ``__setattr__`` where it has them, then calls ``__post_init__`` where the class
  has one. Its code is a template of as many parameters, compiled once a process for
  each number of them and renamed for the class (:meth:`types.CodeType.replace`): Python
  binds the arguments and says what is missing or unexpected, as it does for the
  dataclass's own;
* a frozen record's ``__setattr__`` and ``__delattr__`` raise
  :class:`~dataclasses.FrozenInstanceError` for its fields, as the dataclass's do;
* a method the class defines itself is kept, as the dataclass keeps it.

A record is a dataclass in every other way (:func:`~dataclasses.fields`,
:func:`~dataclasses.replace`, :func:`~dataclasses.asdict`, ``__match_args__``), but for two
kinds of field it refuses with a ``TypeError``: keyword-only fields and ``InitVar``.
"""

from __future__ import annotations

import reprlib
import types
from collections.abc import Callable
from dataclasses import MISSING, Field, FrozenInstanceError, dataclass, field, fields
from operator import itemgetter
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["record"]

T = TypeVar("T", bound=type)


@overload
def record(cls: T, /) -> T: ...


@overload
def record(*, frozen: bool = False, init: bool = True, eq: bool = True) -> Callable[[T], T]: ...


@dataclass_transform(field_specifiers=(field, Field))
def record(cls: Any = None, /, *, frozen: bool = False, init: bool = True, eq: bool = True):
    """``@record``, ``@record(frozen=True)``: :func:`~dataclasses.dataclass` with the same
    arguments (see the module docstring)."""

    def wrap(klass: T) -> T:
        own = klass.__dict__
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        if frozen:
            for name in ("__setattr__", "__delattr__"):
                if name in own:
                    raise TypeError(f"Cannot overwrite attribute {name} in class "
                                    f"{klass.__name__}")
        made: Any = dataclass(klass, init=False, repr=False, eq=False, frozen=False)
        every = fields(made)
        methods: dict[str, Any] = {"__repr__": _repr([f.name for f in every if f.repr])}
        if eq:
            compared = [f.name for f in every if f.compare]
            key = _key(compared)
            methods["__eq__"] = _eq(key)
            if not explicit_hash:
                hashed = [f.name for f in every if (f.compare if f.hash is None else f.hash)]
                methods["__hash__"] = (_hash(key if hashed == compared else _key(hashed))
                                       if frozen else None)
        _check_fields(made, every)
        if init and "__init__" not in own:
            methods["__init__"] = _init(made, every, frozen)
        if frozen:
            names = frozenset(f.name for f in every)
            methods["__setattr__"] = _frozen_setattr(made, names)
            methods["__delattr__"] = _frozen_delattr(made, names)
        for name, method in methods.items():
            if name in own and name != "__hash__":
                continue  # (the class's own, as the dataclass keeps it)
            if method is not None:
                method.__name__, method.__qualname__ = name, f"{made.__qualname__}.{name}"
            setattr(made, name, method)
        return made

    return wrap if cls is None else wrap(cls)


def _key(names: list[str]) -> Callable[[dict], tuple]:
    """The tuple of the fields ``names``, from a record's ``__dict__`` (where a dataclass's
    ``__init__`` keeps every field): what a dataclass compares and hashes. One comparison
    costs about 1.7 × the compiled one's instructions and one hash 1.3 × (measured with
    callgrind on a four-field record); the chart's edits compare and hash a few hundred
    records at most, against ~0.1 G instructions of compiling saved at every start."""
    if not names:
        return lambda _values: ()
    if len(names) == 1:
        one = itemgetter(names[0])
        return lambda values: (one(values),)
    return itemgetter(*names)  # (a tuple already)


def _eq(key: Callable[[dict], tuple]):
    def equal(self, other):
        if other.__class__ is self.__class__:
            return key(self.__dict__) == key(other.__dict__)
        return NotImplemented

    return equal


def _hash(key: Callable[[dict], tuple]):
    def hashed(self):
        return hash(key(self.__dict__))

    return hashed


def _repr(names: list[str]):
    @reprlib.recursive_repr()
    def text(self):
        return (f"{self.__class__.__qualname__}("
                + ", ".join(f"{name}={getattr(self, name)!r}" for name in names) + ")")

    return text


def _check_fields(klass: Any, every: tuple[Field, ...]) -> None:
    """Refuse what a record's ``__init__`` does not take: keyword-only and ``InitVar``
    fields (a ``ClassVar`` is no field, and is left alone as by the dataclass)."""
    for f in every:
        if f.kw_only:
            raise TypeError(f"{klass.__name__}.{f.name}: a record has no keyword-only fields")
    for name in klass.__dataclass_fields__.keys() - {f.name for f in every}:
        if "InitVar" in str(klass.__annotations__.get(name, "")):
            raise TypeError(f"{klass.__name__}.{name}: a record has no InitVar fields")


#: the default of a parameter whose field has a ``default_factory``
_FACTORY = type("_HasDefaultFactory", (), {"__repr__": lambda _self: "<factory>"})()
#: ``__init__`` templates by their number of parameters besides ``self``
_TEMPLATES: dict[int, types.CodeType] = {}


def _template(count: int) -> types.CodeType:
    """The code of ``def __init__(self, a0, …): fill(self, (a0, …))`` (compiled once a
    process for each ``count``)."""
    code = _TEMPLATES.get(count)
    if code is None:
        params = [f"a{i}" for i in range(count)]
        text = (f"def __init__(self{''.join(', ' + p for p in params)}):\n"
                f"    fill(self, ({''.join(p + ', ' for p in params)}))\n")
        scope: dict[str, Any] = {}
        exec(compile(text, "<record __init__>", "exec"), scope)
        code = _TEMPLATES[count] = scope["__init__"].__code__
    return code


def _init(klass: type, every: tuple[Field, ...], frozen: bool):
    """The ``__init__`` of ``klass`` (see the module docstring): the template of as many
    parameters as it has fields with ``init=True``, its parameters named after them, with
    their defaults, calling a filler that sets every field."""
    taken = [f for f in every if f.init]
    defaults: list[Any] = []
    for f in taken:
        if f.default is not MISSING:
            defaults.append(f.default)
        elif f.default_factory is not MISSING:
            defaults.append(_FACTORY)
        elif defaults:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
    names = tuple(f.name for f in taken)
    this = "__dataclass_self__" if "self" in names else "self"  # (as the dataclass names it)
    code = _template(len(names)).replace(co_varnames=(this, *names), co_name="__init__",
                                         co_qualname=f"{klass.__qualname__}.__init__")
    post_init = hasattr(klass, "__post_init__")
    # a field the class holds as a data descriptor, or a mutable class's own __setattr__:
    # set as the dataclass sets it (through them), not into the instance's dict
    described = _described(klass, [f.name for f in every])
    if frozen:
        setter: Callable | None = object.__setattr__ if described else None
    else:
        setter = (setattr if described or klass.__setattr__ is not object.__setattr__
                  else None)
    if (setter is None and len(taken) == len(every) and not post_init
            and all(f.default_factory is MISSING for f in every)):
        def fill(self, values):
            self.__dict__.update(zip(names, values, strict=True))
    else:
        fill = _filler(every, post_init, setter)
    scope = {"fill": fill, "__builtins__": __builtins__, "__name__": klass.__module__}
    return types.FunctionType(code, scope, "__init__", tuple(defaults) or None)


def _described(klass: type, names: list[str]) -> bool:
    """Whether the class or a base holds one of ``names`` as a data descriptor."""
    for holder in klass.__mro__[:-1]:  # (object holds none of a record's fields)
        held = holder.__dict__
        for name in names:
            if name in held and hasattr(type(held[name]), "__set__"):
                return True
    return False


def _filler(every: tuple[Field, ...], post_init: bool, setter: Callable | None):
    """What sets the fields ``every`` from the values of the ``__init__``'s parameters: a
    ``default_factory`` called where its parameter was not given or for a field with
    ``init=False`` (one with a plain default reads the class's attribute), in order, into the
    instance's dict or with ``setter``; then ``__post_init__`` when ``post_init``."""
    steps: list[tuple[str, int, Any]] = []  # (name, parameter or -1, factory)
    at = 0
    for f in every:
        factory = None if f.default_factory is MISSING else f.default_factory
        if f.init:
            steps.append((f.name, at, factory))
            at += 1
        elif factory is not None:  # (a plain default is the class's attribute, as there)
            steps.append((f.name, -1, factory))

    def fill(self, values):
        into = self.__dict__
        for name, i, factory in steps:
            if i < 0:
                value = factory()
            else:
                value = values[i]
                if value is _FACTORY:
                    value = factory()
            if setter is None:
                into[name] = value
            else:
                setter(self, name, value)
        if post_init:
            self.__post_init__()

    return fill


def _frozen_setattr(klass: type, names: frozenset[str]):
    def setattr_(self, name, value):
        if type(self) is klass or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(klass, self).__setattr__(name, value)

    return setattr_


def _frozen_delattr(klass: type, names: frozenset[str]):
    def delattr_(self, name):
        if type(self) is klass or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(klass, self).__delattr__(name)

    return delattr_
