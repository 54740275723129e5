"""Terms of a derivation and the helpers that write their formulas.

A :class:`Term` is one FLOP or byte term of an operation's counting: a value, a formula in
symbols (``2·batch·M·N·K``) and the same formula with the values put in. Counting functions
(:mod:`workbench.model.operations`) build terms from templates such as
``"2·{batch}·{m}·{n}·{k}"``; the texts are written only when first read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass
from typing import Any

import numpy as np

from workbench.model.dtypes import DTYPE_BYTES

__all__ = ["Term"]

_LAZY = object()  # a formula or substituted text not written yet
_set = object.__setattr__  # (Term refuses assignment from outside)


class Term:
    """One FLOP term or byte term of a derivation.

    ``kind`` is ``"flop"``, ``"read"`` or ``"write"``. ``formula`` is in symbols
    (``2·batch·M·N·K``), ``substituted`` the same with the values put in.

    Immutable, compared and hashed by its fields like a frozen dataclass. A term counted
    from a template writes its two texts only when one is first read: opening a session
    counts every operation but shows the derivation of one.
    """

    __match_args__ = ("kind", "name", "formula", "substituted", "value", "tensor", "elements",
                      "element_bytes", "dtype")
    __slots__ = ("kind", "name", "value", "tensor", "elements", "element_bytes", "dtype",
                 "_formula", "_substituted", "_template", "_symbols")

    kind: str
    name: str
    value: Any
    tensor: str
    elements: Any
    element_bytes: float | None
    dtype: str

    def __init__(self, kind: str, name: str, formula: str, substituted: str, value: Any,
                 tensor: str = "", elements: Any = None, element_bytes: float | None = None,
                 dtype: str = "") -> None:
        _set(self, "kind", kind)
        _set(self, "name", name)
        _set(self, "_formula", formula)
        _set(self, "_substituted", substituted)
        _set(self, "value", value)
        _set(self, "tensor", tensor)
        _set(self, "elements", elements)
        _set(self, "element_bytes", element_bytes)
        _set(self, "dtype", dtype)

    @property
    def formula(self) -> str:
        if self._formula is _LAZY:
            self._write()
        return self._formula

    @property
    def substituted(self) -> str:
        if self._substituted is _LAZY:
            self._write()
        return self._substituted

    def _write(self) -> None:
        formula, substituted = _texts(self._template, self._symbols)
        _set(self, "_formula", formula)
        _set(self, "_substituted", substituted)
        _set(self, "_template", None)
        _set(self, "_symbols", None)

    def _fields(self) -> tuple:
        return (self.kind, self.name, self.formula, self.substituted, self.value, self.tensor,
                self.elements, self.element_bytes, self.dtype)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._fields() == other._fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(kind={self.kind!r}, name={self.name!r}, "
                f"formula={self.formula!r}, substituted={self.substituted!r}, "
                f"value={self.value!r}, tensor={self.tensor!r}, elements={self.elements!r}, "
                f"element_bytes={self.element_bytes!r}, dtype={self.dtype!r})")

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self):  # pickling and copying: the texts are written first
        return (type(self), self._fields())


# ---------------------------------------------------------------------------------------
# formula helpers


def _fmt(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return "[…]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@functools.lru_cache(maxsize=2048)
def _template_parts(template: str) -> tuple[str, ...]:
    """``"2·{m}·{n}"`` → ``("2·", "m", "·", "n", "")``: text and parameter names alternate."""
    return tuple(_PLACEHOLDER.split(template))


def _texts(template: str, symbols: Mapping[str, Any]) -> tuple[str, str]:
    """The formula of a template such as ``"2·{batch}·{m}·{n}·{k}"``, naming each parameter
    by its symbol, and the substituted text, naming it by its value."""
    formula, substituted = [], []
    for i, part in enumerate(_template_parts(template)):
        if i % 2 == 0:
            formula.append(part)
            substituted.append(part)
        else:
            sym = symbols.get(part)
            formula.append(getattr(sym, "sym", part) if sym is not None else part)
            substituted.append(_fmt(symbols[part].value))
    return "".join(formula), "".join(substituted)


def _term(kind: str, name: str, template: str, value, symbols: Mapping[str, Any],
          tensor: str = "", elements: Any = None, element_bytes: float | None = None,
          dtype: str = "") -> Term:
    """A term whose formula and substituted text come from ``template`` and ``symbols`` when
    first read (``symbols`` is not changed after counting)."""
    term = Term(kind, name, _LAZY, _LAZY, value, tensor, elements, element_bytes, dtype)
    _set(term, "_template", template)
    _set(term, "_symbols", symbols)
    return term


@dataclass(frozen=True)
class _Sym:
    """A parameter's symbol in formulas and its value."""
    sym: str
    value: Any


class _Symbols(Mapping):
    """Symbol and value of every parameter of one counted operation (a read-only view of its
    parameters, plus derived symbols such as the causal fraction ``c``), built into
    :class:`_Sym` entries only when a formula is written."""

    __slots__ = ("_kind", "_params", "_more")

    def __init__(self, kind: Any, params: Mapping[str, Any], more: dict[str, _Sym]) -> None:
        self._kind = kind
        self._params = dict(params)  # the values as counted
        self._more = more

    def __getitem__(self, key: str) -> _Sym:
        if key in self._more:
            return self._more[key]
        sym = self._kind.symbols.get(key)
        if sym is None:
            raise KeyError(key)
        return _Sym(sym, self._params[key])

    def __setitem__(self, key: str, value: _Sym) -> None:
        self._more[key] = value

    def __iter__(self):
        yield from self._kind.symbols
        yield from (k for k in self._more if k not in self._kind.symbols)

    def __len__(self) -> int:
        return len(self._kind.symbols) + sum(k not in self._kind.symbols for k in self._more)


def _symbols(kind: Any, params: Mapping[str, Any], **more) -> _Symbols:
    return _Symbols(kind, params, {key: _Sym(sym, value) for key, (sym, value) in more.items()})


def _tensor(direction: str, tensor: str, what: str, elements_template: str, elements, dtype: str,
            symbols: Mapping[str, Any]) -> Term:
    size = DTYPE_BYTES[dtype]
    return _term(direction, f"{tensor} ({what})" if what else tensor,
                 _tensor_template(elements_template, dtype), elements * size, symbols,
                 tensor, elements, size, dtype)


@functools.lru_cache(maxsize=1024)
def _tensor_template(elements_template: str, dtype: str) -> str:
    """``"{m}·{k}"`` of bf16 → ``"{m}·{k}·2 B [bf16]"``."""
    return f"{elements_template}·{_fmt(DTYPE_BYTES[dtype])} B [{dtype}]"
