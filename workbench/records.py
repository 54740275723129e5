"""Records: dataclasses whose comparison, hash and text are made without compiling code.

Python 3.11's :func:`dataclasses.dataclass` writes each method it adds as source text and
compiles it: six for a frozen class (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``), three for another. The window's first paint needs 53 of the
product's classes, and compiling their 264 methods was the largest part of start-up that the
bare-window floor does not have: some 0.2 G instructions, 7 % of it.

:func:`record` is :func:`~dataclasses.dataclass` with ``repr`` and ``eq`` left to functions
made here from one :func:`operator.itemgetter` per class, so that the decorator compiles only
``__init__`` (and a frozen class's ``__setattr__`` and ``__delattr__``). A record is a
dataclass in every other way (:func:`~dataclasses.fields`, :func:`~dataclasses.replace`,
:func:`~dataclasses.asdict`, ``__match_args__``), and its methods give the dataclass's
answers:

* ``a == b`` compares the tuples of the fields with ``compare=True`` when both are of the
  same class, else ``NotImplemented``;
* ``hash(a)`` is the hash of the tuple of the fields with ``hash=True`` (or, where ``hash``
  is not given, ``compare=True``), for a frozen class; a mutable one is unhashable;
* ``repr(a)`` is ``ClassName(field=value, …)`` over the fields with ``repr=True``, ``...``
  where a record holds itself;
* a method the class defines itself is kept, as the dataclass keeps it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
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
        made: Any = dataclass(klass, init=init, repr=False, eq=False, frozen=frozen)
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
