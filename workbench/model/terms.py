"""What every operation kind is declared with: terms, counts, parameters, kinds.

A :class:`Term` is one FLOP or byte term of an operation's counting: a value, a formula in
symbols (``2·batch·M·N·K``) and the same formula with the values put in. Counting functions
build terms from templates such as ``"2·{batch}·{m}·{n}·{k}"``; the texts are written only
when first read. :class:`Counts` holds an operation's terms, :class:`Param` and
:class:`Kind` declare a kind, and :data:`KINDS` is the registry every kind joins: the basic
kinds in :mod:`workbench.model.operations`, the whole-model kinds in
:mod:`workbench.model.llm.kinds` (both build on this module, not on each other).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import FrozenInstanceError, field
from typing import Any

import numpy as np

from workbench.model.dtypes import DTYPE_BYTES
from workbench.records import record

__all__ = ["Term", "Counts", "Param", "Kind", "KINDS", "Sym", "term", "symbols", "tensor", "fmt",
           "causal_fraction", "register", "AtMost", "CAUSAL_SHAPE"]

_LAZY: Any = object()  # a formula or substituted text not written yet
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
    _formula: str
    _substituted: str
    _template: Any  # (a str until the texts are written)
    _symbols: Any  # (a Mapping until then)

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


def fmt(value: Any) -> str:
    """A value as formulas show it: ``2.0`` → ``2``, ``True`` → ``true``, an array → ``[…]``."""
    if isinstance(value, np.ndarray):
        return "[…]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        text, digits = f"{value:.4g}", 4
        while text.lstrip("-").isdigit() and digits < 17:
            # 110.96 must not read as the whole number 111, nor 1000.5 as 1000: as many
            # figures as tell it from a whole number (110.96, 1000.5)
            digits += 1
            text = f"{value:.{digits}g}"
        return text
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
            substituted.append(fmt(symbols[part].value))
    return "".join(formula), "".join(substituted)


def term(kind: str, name: str, template: str, value, symbols: Mapping[str, Any],
         tensor: str = "", elements: Any = None, element_bytes: float | None = None,
         dtype: str = "") -> Term:
    """A term whose formula and substituted text come from ``template`` and ``symbols`` when
    first read (``symbols`` is not changed after counting)."""
    term = Term(kind, name, _LAZY, _LAZY, value, tensor, elements, element_bytes, dtype)
    _set(term, "_template", template)
    _set(term, "_symbols", symbols)
    return term


@record(frozen=True)
class Sym:
    """A parameter's symbol in formulas and its value."""
    sym: str
    value: Any


class _Symbols(Mapping):
    """Symbol and value of every parameter of one counted operation (a read-only view of its
    parameters, plus derived symbols such as the causal fraction ``c``), built into
    :class:`Sym` entries only when a formula is written."""

    __slots__ = ("_kind", "_params", "_more")

    def __init__(self, kind: Any, params: Mapping[str, Any], more: dict[str, Sym]) -> None:
        self._kind = kind
        self._params = dict(params)  # the values as counted
        self._more = more

    def __getitem__(self, key: str) -> Sym:
        if key in self._more:
            return self._more[key]
        sym = self._kind.symbols.get(key)
        if sym is None:
            raise KeyError(key)
        return Sym(sym, self._params[key])

    def __setitem__(self, key: str, value: Sym) -> None:
        self._more[key] = value

    def __iter__(self):
        yield from self._kind.symbols
        yield from (k for k in self._more if k not in self._kind.symbols)

    def __len__(self) -> int:
        return len(self._kind.symbols) + sum(k not in self._kind.symbols for k in self._more)


def symbols(kind: Any, params: Mapping[str, Any], **more) -> _Symbols:
    """The symbols of one counted operation: its parameters, plus ``more`` (key=(symbol, value))."""
    return _Symbols(kind, params, {key: Sym(sym, value) for key, (sym, value) in more.items()})


def tensor(direction: str, tensor: str, what: str, elements_template: str, elements, dtype: str,
           symbols: Mapping[str, Any]) -> Term:
    """The read or write term of one tensor: ``elements`` of ``dtype``, named ``tensor (what)``."""
    size = DTYPE_BYTES[dtype]
    return term(direction, f"{tensor} ({what})" if what else tensor,
                _tensor_template(elements_template, dtype), elements * size, symbols,
                tensor, elements, size, dtype)


@functools.lru_cache(maxsize=1024)
def _tensor_template(elements_template: str, dtype: str) -> str:
    """``"{m}·{k}"`` of bf16 → ``"{m}·{k}·2 B [bf16]"``."""
    return f"{elements_template}·{fmt(DTYPE_BYTES[dtype])} B [{dtype}]"


# ---------------------------------------------------------------------------------------
# counts, parameters, kinds


@record
class Counts:
    """The FLOP and byte terms of one operation, at the precision it is counted in.

    ``unit`` is the execution unit the work runs on (``matrix`` or ``vector``: see
    the kind's :attr:`Kind.unit`), ``kernels`` how many kernels it launches (each pays the
    machine's launch overhead at least once). A collective has ``latency_steps``: the steps
    of its algorithm, each paying the link's latency (``latency_formula`` says how many, in
    symbols and with values: ``("2·(t−1)", "2·(8−1)")``)."""
    flop_terms: list[Term]
    byte_terms: list[Term]
    precision: str
    notes: list[str] = field(default_factory=list)
    unit: str = "matrix"
    kernels: Any = 1
    latency_steps: Any = 0
    latency_formula: tuple[str, str] = ("", "")

    @property
    def flops(self):
        return _sum(t.value for t in self.flop_terms)

    @property
    def bytes(self):
        return _sum(t.value for t in self.byte_terms)

    @property
    def bytes_read(self):
        return _sum(t.value for t in self.byte_terms if t.kind == "read")

    @property
    def bytes_written(self):
        return _sum(t.value for t in self.byte_terms if t.kind == "write")


def _sum(values):
    """The sum of term values (numbers or arrays), starting from the first: no pass over a
    sweep's arrays to add zero."""
    total = None
    for value in values:
        total = value if total is None else total + value
    return 0 if total is None else total


@record(frozen=True)
class Param:
    """A parameter of an operation kind.

    ``type`` is one of ``int`` (whole number ≥ ``minimum``), ``float``, ``quantity``
    (number with ``unit``), ``dtype``, ``precision``, ``bool``, ``choice``, ``str``, ``steps``.
    ``default`` of ``None`` with ``inherit`` set means "same as parameter ``inherit``".
    """

    name: str
    type: str
    default: Any
    label: str
    doc: str
    symbol: str = ""
    minimum: float = 1
    choices: tuple[str, ...] = ()
    unit: str = ""
    inherit: str = ""
    only_if: tuple[str, Any] | None = None
    #: A session file must give it: a dimension without a neutral value (GEMM m, n, k, …).
    #: Edit ▸ Add Operation still starts from ``default``.
    required: bool = False

    @property
    def numeric(self) -> bool:
        return self.type in ("int", "float", "quantity")

    @property
    def sym(self) -> str:
        return self.symbol or self.name


@record(frozen=True)
class AtMost:
    """A rule across a kind's parameters: ``param`` must not exceed ``limit`` (another
    parameter), while the boolean parameter ``when`` is true (always, without one).
    ``message`` says it, with ``{limit}`` and ``{value}`` put in (the limit's value and the
    value given)."""

    param: str
    limit: str
    message: str
    when: str | None = None


#: A causal mask hides the keys after each query: it needs no more queries than keys.
CAUSAL_SHAPE = AtMost("query_len", "kv_len",
                      "a causal mask needs query_len ≤ kv_len ({limit}), got {value}",
                      when="causal")


@record(frozen=True)
class Kind:
    """An operation kind: its parameters, its counting function and its documentation."""
    kind: str
    label: str
    doc: str
    params: tuple[Param, ...]
    count: Callable[[Mapping[str, Any]], Counts]
    default_name: str
    #: Where bytes are counted when the operation names no level: ``""`` for the machine's
    #: main memory, ``"interconnect"`` for its first interconnect (communication kinds).
    default_level: str = ""
    #: The execution unit the kind's FLOPs run on: ``matrix`` (tensor cores, MXU, AMX) or
    #: ``vector`` (CUDA cores, VPU, AVX): which table of peaks is its roof.
    unit: str = "matrix"
    #: Rules across the parameters (:class:`AtMost`), declared once: the editor, the reader,
    #: the sweeps and the model builder all check them (see
    #: :func:`workbench.model.operations.cross_checks`).
    constraints: tuple[AtMost, ...] = ()

    @functools.cached_property
    def required(self) -> tuple[str, ...]:
        """The parameters a session file must give."""
        return tuple(p.name for p in self.params if p.required)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @functools.cached_property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @functools.cached_property
    def symbols(self) -> dict[str, str]:
        """The symbol of each parameter in formulas."""
        return {p.name: p.sym for p in self.params}

    @functools.cached_property
    def _defaults(self) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, str], ...]]:
        """``((name, default), …)`` and ``((name, inherited from), …)``, in order."""
        return (tuple((p.name, p.default) for p in self.params),
                tuple((p.name, p.inherit) for p in self.params if p.inherit))

    def resolve(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Fill defaults and inherited values (``a_dtype`` follows ``dtype`` when unset)."""
        defaults, inherits = self._defaults
        get = params.get
        full: dict[str, Any] = {}
        for name, default in defaults:
            value = get(name)
            full[name] = default if value is None else value
        for name, inherit in inherits:
            if full[name] is None:
                full[name] = full[inherit]
        return full



def causal_fraction(q, k, causal):
    """The share of the query × key scores a causal mask keeps (1 without the mask)."""
    if not causal:
        return 1
    return 1 - np.minimum(q, k) / (2 * k) if isinstance(q, np.ndarray) or isinstance(
        k, np.ndarray) else 1 - min(q, k) / (2 * k)


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    """Add ``kind`` to :data:`KINDS` under its id."""
    KINDS[kind.kind] = kind
