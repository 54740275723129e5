"""Sweeps: one numeric parameter of an operation over a list or a range, and exact crossings.

A :class:`Sweep` names a parameter (``m``, ``batch``, ``kv_len``, ``d``, …: any parameter whose
:attr:`~workbench.model.operations.Param.numeric` is true) and its values: an explicit list,
or :func:`linear` / :func:`log` ranges::

    Sweep("m", [1, 16, 256])
    Sweep("m", linear(64, 1024, 16))
    Sweep("m", log(1, 4096, 13))

:func:`evaluate_sweep` evaluates every value in one vectorised call of
:func:`workbench.model.roofline.sweep`. :func:`crossings` finds where an operation crosses a
machine's ridge (T_math = T_mem) by root-finding on the *real-valued* parameter, so the
critical batch of a bf16 GEMM on a TPU v5e comes out as 255.5…, not as whichever sample
happened to lie nearest.

Whole-number parameters (``type == "int"``) are rounded to the nearest integer and
de-duplicated when a sweep is expanded; their crossings are still reported as real numbers,
together with the first whole value on the compute-bound side (see :class:`Crossing`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.model.hardware import Hardware
from workbench.model.limits import MAX_SWEEP_POINTS
from workbench.model.operations import Operation, Param, cross_checks
from workbench.model.roofline import BOUND_NAMES, calibrated_for
from workbench.model.roofline import sweep as roofline_sweep
from workbench.model.rules import compute_bound, ridge

__all__ = [
    "SweepError",
    "Range",
    "linear",
    "log",
    "Sweep",
    "SweepResult",
    "Crossing",
    "evaluate_sweep",
    "crossings",
    "sweep_crossings",
    "MAX_SWEEP_POINTS",
    "SCAN_POINTS",
]

#: Grid points of the scan that brackets crossings before they are refined.
SCAN_POINTS = 1025
SCALES = ("linear", "log")


class SweepError(ValueError):
    """A sweep that cannot be applied to an operation (unknown or non-numeric parameter, values
    below the parameter's minimum, an empty or reversed range…)."""


@dataclass(frozen=True)
class Range:
    """``num`` values from ``start`` to ``stop`` (both included), evenly spaced on a
    ``"linear"`` or ``"log"`` scale. ``start`` may exceed ``stop`` (a descending sweep)."""

    start: float
    stop: float
    num: int
    scale: str = "linear"

    def __post_init__(self) -> None:
        if self.scale not in SCALES:
            raise SweepError(f"scale must be one of: {', '.join(SCALES)}; got {self.scale!r}")
        for name in ("start", "stop"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
                    value):
                raise SweepError(f"{name} must be a finite number, got {value!r}")
        if not math.isfinite(float(self.stop) - float(self.start)):
            raise SweepError(f"the span {self.start:g} … {self.stop:g} is not finite")
        if isinstance(self.num, bool) or not isinstance(self.num, int | np.integer):
            raise SweepError(f"num must be a whole number, got {self.num!r}")
        if not 1 <= self.num <= MAX_SWEEP_POINTS:
            raise SweepError(f"num must be between 1 and {MAX_SWEEP_POINTS}, got {self.num}")
        if self.num > 1 and self.start == self.stop:
            raise SweepError("start and stop are equal; use a list of one value instead")
        if self.scale == "log" and (self.start <= 0 or self.stop <= 0):
            raise SweepError(
                f"a log range needs positive start and stop, got {self.start:g} … {self.stop:g}")

    def expand(self) -> np.ndarray:
        if self.num == 1:
            return np.array([float(self.start)])
        if self.scale == "log":
            return np.geomspace(float(self.start), float(self.stop), int(self.num))
        return np.linspace(float(self.start), float(self.stop), int(self.num))


def linear(start: float, stop: float, num: int) -> Range:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    return Range(start, stop, num, "linear")


def log(start: float, stop: float, num: int) -> Range:
    """``num`` values from ``start`` to ``stop`` inclusive, evenly spaced in log scale."""
    return Range(start, stop, num, "log")


@dataclass(frozen=True)
class Sweep:
    """A parameter and its values: ``Sweep("m", [1, 2, 4])`` or ``Sweep("m", log(1, 4096, 13))``.

    ``spec`` is either a :class:`Range` or a sequence of numbers (kept as a tuple, in the order
    given). Which parameters exist, and whether they are whole numbers, depends on the
    operation's kind: :meth:`values_for` checks and expands against an operation.
    """

    param: str
    spec: Range | tuple[float, ...]

    def __init__(self, param: str, spec: Range | Iterable[float]) -> None:
        if not isinstance(param, str) or not param:
            raise SweepError(f"a sweep needs a parameter name, got {param!r}")
        if not isinstance(spec, Range):
            if isinstance(spec, str | bytes) or not isinstance(spec, Iterable):
                raise SweepError(f"sweep values must be a list of numbers or a range, got {spec!r}")
            values = tuple(spec)
            if not values:
                raise SweepError("a sweep needs at least one value")
            if len(values) > MAX_SWEEP_POINTS:
                raise SweepError(
                    f"a sweep has at most {MAX_SWEEP_POINTS} values, got {len(values)}")
            for v in values:
                number = isinstance(v, int | float | np.integer | np.floating)
                if isinstance(v, bool) or not number or not math.isfinite(float(v)):
                    raise SweepError(f"sweep values must be finite numbers, got {v!r}")
            spec = values
        object.__setattr__(self, "param", param)
        object.__setattr__(self, "spec", spec)

    @property
    def points(self) -> int:
        """How many values the sweep gives (before duplicates are dropped)."""
        return int(self.spec.num) if isinstance(self.spec, Range) else len(self.spec)

    @property
    def range(self) -> Range | None:
        return self.spec if isinstance(self.spec, Range) else None

    @property
    def values(self) -> tuple[float, ...] | None:
        return None if isinstance(self.spec, Range) else self.spec

    def param_of(self, operation: Operation) -> Param:
        """The swept :class:`Param` of ``operation``'s kind (checked to be numeric)."""
        spec = operation.spec
        try:
            param = spec.param(self.param)
        except KeyError:
            numeric = [p.name for p in spec.params if p.numeric]
            raise SweepError(
                f"{spec.label} has no parameter {self.param!r}; numeric parameters: "
                f"{', '.join(numeric) or 'none'}") from None
        if not param.numeric:
            numeric = [p.name for p in spec.params if p.numeric]
            raise SweepError(
                f"{self.param!r} is not a numeric parameter of {spec.label}; numeric parameters: "
                f"{', '.join(numeric)}")
        return param

    def values_for(self, operation: Operation) -> np.ndarray:
        """The swept values for ``operation`` as a float array: whole-number parameters rounded
        to the nearest integer, then duplicates dropped (first occurrence kept, so a range stays
        in order); every value must be at least the parameter's minimum."""
        param = self.param_of(operation)
        raw = self.spec.expand() if isinstance(self.spec, Range) else np.asarray(
            [float(v) for v in self.spec], dtype=float)
        if param.type == "int":
            raw = np.rint(raw)
        _, first = np.unique(raw, return_index=True)
        values = raw[np.sort(first)]
        low = float(values.min())
        if low < param.minimum:
            raise SweepError(
                f"{self.param} must be at least {param.minimum:g}; the sweep reaches {low:g}")
        if param.type == "int" and float(values.max()) > 2.0**53:
            raise SweepError(f"{self.param} is too large (at most 2^53)")
        # every point is checked like a typed value (causal needs query_len ≤ kv_len, …)
        for name, problem in cross_checks(operation.kind, {**operation.params,
                                                           self.param: values}):
            raise SweepError(f"{name}: {problem}")
        return values

    def describe(self) -> str:
        if isinstance(self.spec, Range):
            r = self.spec
            return f"{self.param} = {r.start:g} … {r.stop:g} ({r.num} values, {r.scale})"
        shown = ", ".join(f"{v:g}" for v in self.spec[:6])
        more = ", …" if len(self.spec) > 6 else ""
        return f"{self.param} ∈ {{{shown}{more}}}"


@dataclass(frozen=True)
class SweepResult:
    """One operation on one machine at every swept value.

    ``values`` holds the parameter values (floats; whole numbers for ``int`` parameters) and
    ``arrays`` the roofline quantities of :func:`workbench.model.roofline.evaluate_arrays`,
    each an array of the same length (``bound`` as integers 0 memory, 1 compute,
    2 overhead: see :attr:`bounds` for the names).
    """

    operation: str
    hardware: str
    param: str
    is_int: bool
    values: np.ndarray
    arrays: dict[str, np.ndarray]
    precision: str
    precision_used: str
    level: str
    efficiency: float | None
    launch_overhead_s: float | None
    unit: str = "matrix"
    ceiling_note: str = ""
    kernels: int = 1
    calibrated: Any = None  # the calibrated prediction's figures (None: derated)

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def __len__(self) -> int:
        return len(self.values)

    @property
    def bounds(self) -> list[str]:
        return [BOUND_NAMES[int(b)] for b in self.arrays["bound"]]

    def value(self, i: int) -> int | float:
        """The ``i``-th swept value as a plain ``int`` (whole-number parameters) or ``float``."""
        v = float(self.values[i])
        return int(v) if self.is_int else v

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per value, with the keys of
        :meth:`workbench.model.roofline.Result.as_dict` (``bound`` as a name)."""
        out = []
        for i in range(len(self.values)):
            row: dict[str, Any] = {"operation": self.operation, "hardware": self.hardware,
                                   "precision": self.precision,
                                   "precision_used": self.precision_used, "level": self.level}
            for key, array in self.arrays.items():
                row[key] = BOUND_NAMES[int(array[i])] if key == "bound" else float(array[i])
            row["efficiency"] = self.efficiency
            row["launch_overhead_s"] = self.launch_overhead_s
            row["unit"] = self.unit
            row["ceiling_note"] = self.ceiling_note
            row["kernels"] = self.kernels
            row["calibrated"] = self.calibrated
            out.append(row)
        return out


def evaluate_sweep(operation: Operation, hardware: Hardware, sweep: Sweep) -> SweepResult:
    """Evaluate ``operation`` on ``hardware`` at every value of ``sweep`` in one vectorised
    call. Raises :class:`SweepError` for a sweep the operation cannot take, and
    :class:`~workbench.model.hardware.UnsupportedPrecision` /
    :class:`~workbench.model.hardware.UnknownLevel` like :func:`~workbench.model.roofline.evaluate`.
    """
    param = sweep.param_of(operation)
    values = sweep.values_for(operation)
    arrays = roofline_sweep(operation, hardware, **{sweep.param: values})
    arrays = {k: np.broadcast_to(np.asarray(v), values.shape).copy() for k, v in arrays.items()}
    counts = operation.counts()
    precision = counts.precision
    ceiling = hardware.ceiling(precision, counts.unit)
    return SweepResult(
        operation=operation.name,
        hardware=hardware.label,
        param=sweep.param,
        is_int=param.type == "int",
        values=values,
        arrays=arrays,
        precision=precision,
        precision_used=ceiling.precision,
        level=hardware.level_for(operation.level_on(hardware)),
        efficiency=hardware.efficiency,
        launch_overhead_s=hardware.launch_overhead,
        unit=ceiling.unit,
        ceiling_note=ceiling.note,
        kernels=int(counts.kernels),
        calibrated=calibrated_for(operation.kind, operation.params, hardware),
    )


@dataclass(frozen=True)
class Crossing:
    """Where an operation crosses a machine's ridge as one parameter varies.

    ``value`` is the real-valued parameter at which T_math = T_mem exactly (intensity =
    ridge). ``direction`` is ``"to_compute"`` when the operation turns compute-bound as the
    parameter grows past ``value`` and ``"to_memory"`` when it turns memory-bound.

    For whole-number parameters ``integer`` is the first whole value on the compute-bound
    side: ``ceil(value)`` for ``"to_compute"`` (the critical batch: the smallest batch that is
    compute-bound) and ``floor(value)`` for ``"to_memory"`` (the largest value still
    compute-bound). For real parameters it is ``None``. At the crossing the point sits on the
    ridge: intensity ``ridge`` and attainable ``peak_flops``.
    """

    operation: str
    hardware: str
    param: str
    value: float
    direction: str
    integer: int | None
    ridge: float
    peak_flops: float
    level: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _balance(operation: Operation, hardware: Hardware, param: str, x: np.ndarray) -> np.ndarray:
    """sign-carrying balance T_math − T_mem at each x (one vectorised evaluation)."""
    arrays = roofline_sweep(operation, hardware, **{param: x})
    t_math = np.broadcast_to(np.asarray(arrays["t_math_s"], dtype=float), x.shape)
    t_mem = np.broadcast_to(np.asarray(arrays["t_mem_s"], dtype=float), x.shape)
    with np.errstate(invalid="ignore"):
        return t_math - t_mem


def _side(balance: np.ndarray) -> np.ndarray:
    """+1 compute-bound (:func:`~workbench.model.rules.compute_bound`: T_math ≥ T_mem, so a
    balance of at least 0), −1 memory-bound, 0 undefined (NaN)."""
    out = np.where(compute_bound(balance, 0.0), 1, -1)
    return np.where(np.isnan(balance), 0, out)


def _side_at(operation: Operation, hardware: Hardware, param: str, x: np.ndarray
             ) -> np.ndarray:
    """The side of the ridge at each x (one vectorised evaluation): +1 compute-bound, −1
    memory-bound (:func:`~workbench.model.rules.compute_bound`, the rule that names the
    bound), 0 undefined (a NaN time)."""
    arrays = roofline_sweep(operation, hardware, **{param: x})
    t_math = np.broadcast_to(np.asarray(arrays["t_math_s"], dtype=float), x.shape)
    t_mem = np.broadcast_to(np.asarray(arrays["t_mem_s"], dtype=float), x.shape)
    out = np.where(compute_bound(t_math, t_mem), 1, -1)
    return np.where(np.isnan(t_math) | np.isnan(t_mem), 0, out)


#: the regula falsi of :func:`_narrow` stops once every bracket is this narrow (relative)
NARROW = 1e-12


def _narrow(operation: Operation, hardware: Hardware, param: str, a: np.ndarray,
            b: np.ndarray, side_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The brackets ``[a, b]`` (the balance on side ``side_a`` at ``a``, the other at ``b``)
    narrowed by the Illinois variant of regula falsi, all at once, until each is
    :data:`NARROW` wide relative to its ends: a few evaluations where bisection takes forty
    (the balance is a smooth function of the parameter). Each bracket stays one: the
    bisection that follows ends exactly where bisection from the start would."""
    a, b = a.copy(), b.copy()
    fa = _balance(operation, hardware, param, a)
    fb = _balance(operation, hardware, param, b)
    last = np.zeros(a.shape, dtype=int)  # the end moved last: −1 a, +1 b
    for _ in range(60):
        width = np.abs(b - a)
        live = (width > NARROW * np.maximum(np.abs(a), np.abs(b))) & np.isfinite(fa) \
            & np.isfinite(fb) & (fa != fb)
        if not live.any():
            break
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            x = b - fb * (b - a) / (fb - fa)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        inside = np.isfinite(x) & (x > lo) & (x < hi)
        # a step onto an end (the balance there is 0: the line is straight) is taken a
        # hair inside, which closes the bracket on the next step; else halfway
        near_b = np.abs(x - b) <= np.abs(x - a)
        end, other = np.where(near_b, b, a), np.where(near_b, a, b)
        hair = end + np.sign(other - end) * 0.25 * NARROW * np.maximum(np.abs(end), 1e-300)
        hair = np.where((hair > lo) & (hair < hi), hair, 0.5 * (a + b))
        x = np.where(live & inside, x, hair)
        x = np.where(live, x, a)
        fx = _balance(operation, hardware, param, x)
        side_x = _side(fx)
        to_a = live & (side_x == side_a)
        to_b = live & (side_x == -side_a)
        # Illinois: an end that stays while the other moves twice has its value halved
        fb = np.where(to_a & (last == -1), 0.5 * fb, fb)
        fa = np.where(to_b & (last == 1), 0.5 * fa, fa)
        a, fa = np.where(to_a, x, a), np.where(to_a, fx, fa)
        b, fb = np.where(to_b, x, b), np.where(to_b, fx, fb)
        last = np.where(to_a, -1, np.where(to_b, 1, last))
        if not (to_a | to_b)[live].all():  # a NaN inside: bisection takes it from here
            break
    return a, b


def crossings(operation: Operation, hardware: Hardware, param: str, lo: float, hi: float,
              scan_points: int = SCAN_POINTS) -> list[Crossing]:
    """Every value of ``param`` in ``[lo, hi]`` where ``operation`` crosses ``hardware``'s ridge
    (T_math = T_mem), ascending.

    The parameter is treated as a real number, even for whole-number parameters (the counting
    functions are plain arithmetic): the interval is scanned on ``scan_points`` points (log
    spaced when ``0 < lo`` and ``hi / lo > 10``, else linear) to bracket every change of side,
    so an intensity that rises and falls gives several crossings; each bracket is then refined
    by bisection to the last representable float, all brackets at once with one vectorised
    evaluation per step. Returns ``[]`` when the operation stays on one side of the ridge over
    the whole interval. An excursion across the ridge narrower than the scan spacing (or one
    that only touches it) can be missed.

    The launch overhead plays no part: a crossing is where the roofline's two times are equal,
    whether or not both are below the overhead floor. For whole-number parameters the first
    whole value on the compute-bound side is ``ceil`` of the crossing (see :class:`Crossing`).
    """
    sweep_param = Sweep(param, [1.0]).param_of(operation)
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise SweepError(f"need a finite interval lo < hi, got [{lo:g}, {hi:g}]")
    if scan_points < 2:
        raise SweepError("scan_points must be at least 2")
    grid = np.geomspace(lo, hi, scan_points) if lo > 0 and hi / lo > 10 else np.linspace(lo, hi, scan_points)
    grid[0], grid[-1] = lo, hi
    side = _side_at(operation, hardware, param, grid)
    # brackets: consecutive defined samples on opposite sides
    defined = np.flatnonzero(side != 0)
    if len(defined) < 2:
        return []
    s = side[defined]
    change = np.flatnonzero(s[:-1] != s[1:])
    if len(change) == 0:
        return []
    a = grid[defined[change]].copy()
    b = grid[defined[change + 1]].copy()
    side_a = s[change].copy()
    a, b = _narrow(operation, hardware, param, a, b, side_a)
    for _ in range(400):
        mid = 0.5 * (a + b)
        done = (mid <= a) | (mid >= b)
        if done.all():
            break
        side_mid = _side_at(operation, hardware, param, mid)
        same = (side_mid == side_a) & ~done
        other = (side_mid == -side_a) & ~done
        a = np.where(same, mid, a)
        b = np.where(other, mid, b)
        # a NaN in the middle of a bracket: give up on narrowing it further
        stuck = (side_mid == 0) & ~done
        if stuck.any():
            b = np.where(stuck, a, b)
    counts = operation.counts()
    peak = hardware.peak(counts.precision, counts.unit)
    level = hardware.level_for(operation.level_on(hardware))
    at = ridge(peak, hardware.bandwidth(level))
    out: list[Crossing] = []
    for left, right, s_left in zip(a, b, side_a, strict=True):
        # the side boundary lies in [left, right]; report the compute-bound end (it satisfies
        # T_math ≥ T_mem, like the rule that names the bound) unless the other is exactly on it
        value = float(right if s_left < 0 else left)
        direction = "to_compute" if s_left < 0 else "to_memory"
        integer = None
        if sweep_param.type == "int":
            integer = math.ceil(value) if direction == "to_compute" else math.floor(value)
        out.append(Crossing(operation.name, hardware.label, param, value, direction, integer,
                            float(at), float(peak), level))
    return out


def sweep_crossings(operation: Operation, hardware: Hardware, sweep: Sweep) -> list[Crossing]:
    """The crossings inside the span of ``sweep``'s values (what the canvas marks on a path)."""
    values = sweep.values_for(operation)
    lo, hi = float(values.min()), float(values.max())
    if not lo < hi:
        return []
    return crossings(operation, hardware, sweep.param, lo, hi)

