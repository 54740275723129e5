"""Validation of machines and operations from plain data, with key paths and lines.

Each ``parse_*`` function takes the plain data, the :class:`YamlDocument` it came from (for
line numbers) and the key path of that data inside the document, and either returns model
objects or raises :class:`InputError` such as
``session.yaml:12: operations[2].m: must be a positive integer``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from typing import Any

from workbench.io.errors import InputError, did_you_mean, unknown_key_message
from workbench.io.yamlio import YamlDocument
from workbench.model.dtypes import DTYPE_BYTES, PRECISIONS
from workbench.model.hardware import FIGURE_TABLES, SINGLE_FIGURES, Hardware
from workbench.model.limits import MAX_STEPS, text_problem
from workbench.model.operations import KINDS, STEP_OPS, Kind, Operation, Param, cross_checks
from workbench.model.units import MAX_MAGNITUDE, QuantityError, format_list, parse_number, parse_quantity

__all__ = [
    "Place",
    "parse_hardware",
    "parse_operation",
    "check_param",
    "HARDWARE_KEYS",
    "MAX_DIMENSION",
]

MAX_DIMENSION = 2**53  # exact in a float; far beyond any real tensor
_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
_COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")


class Place:
    """Where data sits: the document (for lines) and the key path."""

    __slots__ = ("doc", "path")

    def __init__(self, doc: YamlDocument | None, path: tuple[object, ...] = ()) -> None:
        self.doc = doc or YamlDocument(None)
        self.path = path if type(path) is tuple else tuple(path)

    def at(self, *more: object) -> Place:
        return Place(self.doc, self.path + more)

    def error(self, message: str) -> InputError:
        return self.doc.error(self.path, message)


def expect_mapping(value: Any, place: Place, what: str) -> Mapping[str, Any]:
    if type(value) is not dict and not isinstance(value, Mapping):
        raise place.error(f"must be a mapping of keys to values ({what}), not {_kind(value)}")
    return value


def expect_list(value: Any, place: Place, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise place.error(f"must be a list ({what}), not {_kind(value)}")
    return value


_did_you_mean = did_you_mean


def check_keys(data: Mapping[str, Any], allowed: Collection[str], place: Place) -> None:
    for key in data:
        if key not in allowed:
            raise place.at(key).error(unknown_key_message(key, allowed))


def expect_str(value: Any, place: Place, allow_empty: bool = False, limit: int | str = 500
               ) -> str:
    """Text of at most ``limit`` characters (a length, or a kind of text of
    :data:`~workbench.model.limits.TEXT_LIMITS`), without control characters."""
    if not isinstance(value, str):
        raise place.error(f"must be text, not {_kind(value)}")
    if not allow_empty and not value.strip():
        raise place.error("must not be empty")
    problem = text_problem(value, limit)
    if problem is not None:
        raise place.error(problem)
    return value


def expect_bool(value: Any, place: Place) -> bool:
    if not isinstance(value, bool):
        raise place.error(f"must be true or false, not {_kind(value)}")
    return value


def expect_quantity(value: Any, unit: str, place: Place, positive: bool = True,
                    minimum: float | None = None) -> float:
    try:
        number = parse_quantity(value, unit)
    except QuantityError as exc:
        raise place.error(str(exc)) from None
    if positive and number <= 0:
        raise place.error(f"must be positive, got {value!r}")
    if minimum is not None and number < minimum:
        raise place.error(f"must be at least {minimum:g}, got {value!r}")
    return number


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        shown = value if len(value) <= 30 else value[:27] + "..."
        return f"the text {shown!r}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return f"a {type(value).__name__}"


# ---------------------------------------------------------------------------------------------
# hardware

HARDWARE_KEYS = (
    "id", "name", "vendor", "kind", "compute", "vector_compute", "memory", "main_memory",
    "capacity", "interconnect", "launch_overhead", "efficiency", "sparse_halved", "measured",
    "sources", "notes", "link_latency", "price_per_hour", "calibration", "runtime_reserve",
)
CALIBRATION_KEYS = ("source", "efficiency", "startup", "launch_alone", "launch_eager",
                    "launch_graph", "sustained")


def _rates(value: Any, place: Place, unit: str, what: str, names: tuple[str, ...] | None,
           required: bool) -> dict[str, float]:
    if value is None and not required:
        return {}
    mapping = expect_mapping(value, place, what)
    if required and not mapping:
        raise place.error(f"must list at least one {what}")
    out: dict[str, float] = {}
    for key, rate in mapping.items():
        key_place = place.at(key)
        if names is not None and key not in names:
            hint = _did_you_mean(str(key), list(names))
            raise key_place.error(f"unknown precision {key!r}{hint}; one of: {', '.join(names)}")
        if names is None and (not isinstance(key, str) or not _NAME_RE.match(key)):
            raise key_place.error(
                f"level name {key!r} must start with a letter and hold letters, digits, _ or -")
        out[str(key)] = expect_quantity(rate, unit, key_place)
    return out


def parse_hardware(data: Any, place: Place, extra_keys: tuple[str, ...] = ()) -> Hardware:
    """A machine from plain data (a preset file, or an inline machine in a session)."""
    data = expect_mapping(data, place, "a machine")
    check_keys(data, set(HARDWARE_KEYS) | set(extra_keys), place)
    if "name" not in data:
        raise place.error("a machine needs a name")
    name = expect_str(data["name"], place.at("name"), limit="machine")
    if "compute" not in data:
        raise place.error("a machine needs compute: peak FLOP/s per precision")
    if "memory" not in data:
        raise place.error("a machine needs memory: bandwidth per memory level")
    compute = _rates(data["compute"], place.at("compute"), "flop_rate", "precision", PRECISIONS,
                     True)
    memory = _rates(data["memory"], place.at("memory"), "bandwidth", "memory level", None, True)
    interconnect = _rates(data.get("interconnect"), place.at("interconnect"), "bandwidth",
                          "interconnect", None, False)
    vector = _rates(data.get("vector_compute"), place.at("vector_compute"), "flop_rate",
                    "vector precision", PRECISIONS, False)
    clash = set(memory) & set(interconnect)
    if clash:
        raise place.at("interconnect").error(
            f"{sorted(clash)[0]!r} is already a memory level; give the link another name")
    main = data.get("main_memory") or next(iter(memory))
    if not isinstance(main, str) or main not in memory:
        raise place.at("main_memory").error(
            f"must name one of the memory levels ({', '.join(memory)}), not {main!r}")
    hw = Hardware(name=name, compute=compute, memory=memory, main_memory=main,
                  interconnect=interconnect, vector_compute=vector)
    if "id" in data:
        hw.id = expect_str(data["id"], place.at("id"), limit=80)
    for key in ("vendor", "kind", "notes"):
        if key in data and data[key] is not None:
            setattr(hw, key, expect_str(data[key], place.at(key), allow_empty=True, limit=20_000))
    if data.get("capacity") is not None:
        hw.capacity = expect_quantity(data["capacity"], "bytes", place.at("capacity"))
    if data.get("launch_overhead") is not None:
        hw.launch_overhead = expect_quantity(data["launch_overhead"], "time",
                                             place.at("launch_overhead"), positive=False,
                                             minimum=0.0) or None
    if data.get("link_latency") is not None:
        latency = _rates(data["link_latency"], place.at("link_latency"), "time",
                         "link latency", None, False)
        for link in latency:
            if link not in interconnect:
                raise place.at("link_latency").at(link).error(
                    f"names no interconnect of this machine (it has: "
                    f"{', '.join(interconnect) or 'none'})")
        hw.link_latency = latency
    if data.get("price_per_hour") is not None:
        hw.price_per_hour = expect_quantity(data["price_per_hour"], "count",
                                            place.at("price_per_hour"))
    if data.get("runtime_reserve") is not None:
        hw.runtime_reserve = expect_quantity(data["runtime_reserve"], "bytes",
                                             place.at("runtime_reserve"), positive=False,
                                             minimum=0.0)
    if data.get("efficiency") is not None:
        eff = expect_quantity(data["efficiency"], "count", place.at("efficiency"))
        if eff > 1:
            raise place.at("efficiency").error(f"must be a fraction in (0, 1], got {eff:g}")
        hw.efficiency = eff
    if "sparse_halved" in data:
        hw.sparse_halved = expect_bool(data["sparse_halved"], place.at("sparse_halved"))
    if data.get("sources") is not None:
        sources = expect_list(data["sources"], place.at("sources"), "of URLs or citations")
        hw.sources = [expect_str(s, place.at("sources", i)) for i, s in enumerate(sources)]
    if data.get("measured") is not None:
        hw.measured = _measured_paths(data["measured"], hw, place.at("measured"))
    if data.get("calibration") is not None:
        hw.calibration = parse_calibration(data["calibration"], place.at("calibration"))
    return hw


def parse_calibration(data: Any, place: Place, base=None):
    """A machine's ``calibration`` block (see :mod:`workbench.model.prediction`): fractions
    per kernel class, start-up seconds per unit, launch costs, the sustained fraction and
    their source. A class or figure left out keeps ``base``'s (a preset's own figures), else
    takes the stated assumption (the H100 SXM's)."""
    from workbench.model.prediction import ASSUMED, CLASSES, STARTUP_UNITS, Calibration

    base = base or ASSUMED
    data = expect_mapping(data, place, "the calibrated prediction's figures")
    check_keys(data, CALIBRATION_KEYS, place)

    def fraction(value: Any, where: Place) -> float:
        number = expect_quantity(value, "count", where)
        if number > 1:
            raise where.error(f"must be a fraction in (0, 1], got {number:g}")
        return number

    efficiency = dict(base.efficiency)
    if data.get("efficiency") is not None:
        table = expect_mapping(data["efficiency"], place.at("efficiency"),
                               "a fraction per kernel class")
        check_keys(table, tuple(CLASSES), place.at("efficiency"))
        for key, value in table.items():
            efficiency[key] = fraction(value, place.at("efficiency", key))
    startup = dict(base.startup)
    if data.get("startup") is not None:
        table = expect_mapping(data["startup"], place.at("startup"), "seconds per kernel unit")
        check_keys(table, tuple(STARTUP_UNITS), place.at("startup"))
        for key, value in table.items():
            startup[key] = expect_quantity(value, "time", place.at("startup", key),
                                           positive=False, minimum=0.0)
    times: dict[str, Any] = {}
    for key in ("launch_alone", "launch_eager", "launch_graph"):
        times[key] = (expect_quantity(data[key], "time", place.at(key), positive=False,
                                      minimum=0.0)
                      if data.get(key) is not None else getattr(base, key))
    sustained = (fraction(data["sustained"], place.at("sustained"))
                 if data.get("sustained") is not None else base.sustained)
    source = (expect_str(data["source"], place.at("source"), limit=2000)
              if data.get("source") is not None else
              "" if base is ASSUMED else f"{base.source}; edited")
    return Calibration(efficiency, startup, sustained=sustained, source=source, **times)


def _measured_paths(value: Any, hw: Hardware, place: Place) -> list[str]:
    """``measured:`` — figures of this machine that are measurements, as key paths:
    ``memory.l2``, ``compute.fp32``, ``vector_compute.fp32``, ``interconnect.nvlink``,
    ``capacity``, ``launch_overhead``, ``efficiency``."""
    items = expect_list(value, place, "of figure paths such as memory.l2 or compute.fp32")
    out: list[str] = []
    for i, item in enumerate(items):
        at = place.at(i)
        path = expect_str(item, at, limit=120).strip()
        table, dot, key = path.partition(".")
        if not dot:
            if path not in SINGLE_FIGURES:
                raise at.error(
                    f"{path!r} is not a figure path; write TABLE.KEY with TABLE one of "
                    f"{', '.join(FIGURE_TABLES)} (memory.l2, compute.fp32), or one of "
                    f"{', '.join(SINGLE_FIGURES)}")
            if getattr(hw, path) is None:
                raise at.error(f"{path!r}: this machine gives no {path}")
        else:
            if table not in FIGURE_TABLES:
                hint = _did_you_mean(table, list(FIGURE_TABLES))
                raise at.error(f"unknown table {table!r} in {path!r}{hint}; one of: "
                               f"{', '.join(FIGURE_TABLES)}")
            figures = getattr(hw, table)
            if key not in figures:
                raise at.error(f"{path!r}: this machine has no {key!r} in {table} "
                               f"(it has: {', '.join(figures) or 'none'})")
        if path in out:
            raise at.error(f"{path!r} is listed twice")
        out.append(path)
    return out


# ---------------------------------------------------------------------------------------------
# operations

OPERATION_KEYS = ("name", "kind", "memory_level", "color", "visible", "label")


def check_param(param: Param, value: Any, place: Place) -> Any:
    """Validate one parameter value; returns the normalised value."""
    t = param.type
    if t == "int":
        if type(value) is int and param.minimum <= value <= MAX_DIMENSION:
            return value  # (the common case, as the checks below would return it)
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_DIMENSION:
            raise place.error(f"is too large (at most 2^53), got {value!r}")
        if isinstance(value, int) and not isinstance(value, bool) and value < param.minimum:
            raise place.error(_int_message(param) + f", got {value!r}")
        try:
            number = parse_number(value)
        except QuantityError as exc:
            why = f" ({exc})" if "not a decimal number" in str(exc) else ""
            raise place.error(_int_message(param) + f", not {_kind(value)}{why}") from None
        if not number.is_integer() or number < param.minimum:
            raise place.error(_int_message(param) + f", got {value!r}")
        if number > MAX_DIMENSION:
            raise place.error(f"is too large (at most 2^53), got {value!r}")
        return int(number)
    if t in ("float", "quantity"):
        number = expect_quantity(value, param.unit or "count", place, positive=False)
        if number < param.minimum:
            raise place.error(f"must be at least {param.minimum:g}, got {value!r}")
        return number
    if t == "dtype":
        if not isinstance(value, str) or value not in DTYPE_BYTES:  # (a mapping is unhashable)
            raise place.error(f"unknown element type {value!r}; one of: {', '.join(DTYPE_BYTES)}")
        return value
    if t == "precision":
        if not isinstance(value, str) or value not in PRECISIONS:
            raise place.error(f"unknown precision {value!r}; one of: {', '.join(PRECISIONS)}")
        return value
    if t == "bool":
        return expect_bool(value, place)
    if t == "choice":
        if not isinstance(value, str) or value not in param.choices:
            raise place.error(f"must be one of: {', '.join(param.choices)}; got {value!r}")
        return value
    if t == "str":
        text = expect_str(value, place, limit=80)
        if not _NAME_RE.match(text):
            raise place.error(f"tensor name {text!r} must start with a letter and hold letters,"
                              " digits, _ or -")
        return text
    if t == "steps":
        return _check_steps(value, place)
    raise AssertionError(t)


def _int_message(param: Param) -> str:
    if param.minimum == 1:
        return "must be a positive integer"
    return f"must be a whole number ≥ {param.minimum:g}"


_STEP_KEYS = ("op", "inputs", "flops")


def _check_steps(value: Any, place: Place) -> list[dict[str, Any]]:
    steps = expect_list(value, place, "of steps, each with op and optional inputs and flops")
    if not steps:
        raise place.error("needs at least one step")
    if len(steps) > MAX_STEPS:
        raise place.error(f"has {len(steps):,} steps; at most {MAX_STEPS}")
    out = []
    for i, step in enumerate(steps):
        sp = place.at(i)
        step = expect_mapping(step, sp, "a step: op, inputs, flops")
        check_keys(step, _STEP_KEYS, sp)
        if "op" not in step:
            raise sp.error(f"a step needs op: one of {', '.join(STEP_OPS)}")
        op = step["op"]
        if not isinstance(op, str) or op not in STEP_OPS:
            hint = _did_you_mean(str(op), list(STEP_OPS))
            raise sp.at("op").error(f"unknown step {op!r}{hint}; one of: {', '.join(STEP_OPS)}")
        clean: dict[str, Any] = {"op": op}
        if step.get("inputs") is not None:
            inputs = expect_list(step["inputs"], sp.at("inputs"), "of extra input tensor names")
            names = []
            for j, name in enumerate(inputs):
                names.append(check_param(Param("input", "str", None, "", ""), name,
                                         sp.at("inputs", j)))
            clean["inputs"] = names
        if step.get("flops") is not None:
            clean["flops"] = expect_quantity(step["flops"], "count", sp.at("flops"),
                                             positive=False, minimum=0.0)
        elif op == "custom":
            raise sp.error("a custom step needs flops (FLOPs per element)")
        out.append(clean)
    return out


def kind_checks(kind: str, params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Checks across parameters: ``[(param, problem), …]`` (the model's own, which sweeps
    apply to every swept point too), and FLOPs and bytes within what a session holds (the
    reader and the editor both ask here, so a typed operation always reopens)."""
    problems = cross_checks(kind, params)
    if problems:
        return problems
    try:
        counts = Operation(kind, dict(params)).counts()
        totals = (("FLOPs", float(counts.flops)), ("bytes", float(counts.bytes)))
    except (ArithmeticError, ValueError, TypeError, KeyError):
        return problems
    for what, value in totals:
        if not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
            numeric = [(v, n) for n, v in params.items() if type(v) in (int, float)]
            blamed = max(numeric)[1] if numeric else next(iter(params), "kind")
            problems.append((blamed, f"makes {what} {value:.3g}, beyond the {MAX_MAGNITUDE:.0e} "
                                     "a session can hold".replace("e+", "e")))
            break
    return problems


def _kind_checks_once(kind: str, params: Mapping[str, Any],
                      checked: dict[tuple, list[tuple[str, str]]] | None
                      ) -> list[tuple[str, str]]:
    """:func:`kind_checks`, looked up in ``checked`` (and kept there) by the parameters'
    values and types (2 and 2.0 may count differently; a list, as an elementwise chain's
    steps, by its text, where its items' types show)."""
    if checked is None:
        return kind_checks(kind, params)
    types = tuple(map(type, params.values()))
    key = (kind, tuple(params), types,
           tuple(repr(v) if t in (list, tuple, dict) else v
                 for v, t in zip(params.values(), types, strict=True)))
    try:
        problems = checked.get(key)
    except TypeError:  # (a value that cannot be a key: checked each time)
        return kind_checks(kind, params)
    if problems is None:
        problems = checked[key] = kind_checks(kind, params)
    return problems


def _missing(spec: Kind, param: Param) -> str:
    """``missing: a GEMM needs m, n and k (K: contraction dimension …)``."""
    return (f"missing: {spec.label} needs {format_list(spec.required)} (no value is assumed for "
            f"{param.name}: {param.doc.rstrip('.')})")


_OPERATION_KEYS_OF: dict[str, tuple[Kind, frozenset[str]]] = {}


def _operation_keys(spec: Kind) -> frozenset[str]:
    """The keys an operation of this kind may have (kept per kind)."""
    kept = _OPERATION_KEYS_OF.get(spec.kind)
    if kept is None or kept[0] is not spec:
        kept = _OPERATION_KEYS_OF[spec.kind] = (
            spec, frozenset(OPERATION_KEYS) | frozenset(spec.param_names))
    return kept[1]


def parse_operation(data: Any, place: Place, require: bool = True,
                    checked: dict[tuple, list[tuple[str, str]]] | None = None
                    ) -> tuple[Operation, dict[str, Any]]:
    """An operation and its display settings (color, visible, label) from plain data.
    ``require``: refuse a missing required dimension (files before schema_version 2 took
    an example value). ``checked``, kept by the caller over one file, holds the
    :func:`kind_checks` of the parameters read so far: a file's repeated operations (a
    model's layers written out) are counted once."""
    data = expect_mapping(data, place, "an operation")
    if "kind" not in data:
        raise place.error(f"an operation needs a kind: one of {', '.join(KINDS)}")
    kind = data["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        hint = _did_you_mean(str(kind), list(KINDS))
        raise place.at("kind").error(f"unknown kind {kind!r}{hint}; one of: {', '.join(KINDS)}")
    spec = KINDS[kind]
    check_keys(data, _operation_keys(spec), place)
    params: dict[str, Any] = {}
    for p in spec.params:
        value = data.get(p.name)
        if value is not None:
            params[p.name] = check_param(p, value, place.at(p.name))
        elif p.required and require:
            raise place.at(p.name).error(_missing(spec, p))
    for name, problem in _kind_checks_once(kind, params, checked):
        raise place.at(name).error(problem)
    name = data.get("name")
    name = (expect_str(name, place.at("name"), limit="operation") if name is not None
            else spec.default_name)
    level = data.get("memory_level")
    if level is not None:
        level = expect_str(level, place.at("memory_level"), limit=80)
    style: dict[str, Any] = {}
    if data.get("color") is not None:
        color = data["color"]
        if not isinstance(color, str) or not _COLOR_RE.match(color):
            raise place.at("color").error(f"must be a colour like '#0072B2', got {color!r}")
        style["color"] = color
    for key in ("visible", "label"):
        if key in data:
            style[key] = expect_bool(data[key], place.at(key))
    return Operation(kind, params, name, level), style
