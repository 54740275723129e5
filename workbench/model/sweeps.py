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
from typing import Any

import numpy as np

from workbench.model.hardware import Hardware
from workbench.model.limits import MAX_SWEEP_POINTS
from workbench.model.operations import Operation, Param, cross_checks
from workbench.model.roofline import BOUND_NAMES, calibrated_for, sweep_times
from workbench.model.roofline import sweep_machines as roofline_sweep_machines
from workbench.model.rules import compute_bound, ridge
from workbench.records import record

__all__ = [
    "SweepError",
    "Range",
    "linear",
    "log",
    "Sweep",
    "SweepResult",
    "Crossing",
    "evaluate_sweep",
    "evaluate_sweep_on",
    "crossings",
    "crossings_on",
    "sweep_crossings",
    "sweep_crossings_on",
    "MAX_SWEEP_POINTS",
    "SCAN_POINTS",
]

#: Grid points of the scan that brackets crossings before they are refined.
SCAN_POINTS = 1025
SCALES = ("linear", "log")


class SweepError(ValueError):
    """A sweep that cannot be applied to an operation (unknown or non-numeric parameter, values
    below the parameter's minimum, an empty or reversed range…)."""


@record(frozen=True)
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


@record(frozen=True)
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


@record(frozen=True)
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
    return evaluate_sweep_on(operation, [hardware], sweep)[0]


def evaluate_sweep_on(operation: Operation, machines: list[Hardware], sweep: Sweep
                      ) -> list[SweepResult]:
    """:func:`evaluate_sweep` on each of ``machines`` (the same results), the FLOPs and bytes
    counted once for all (:func:`~workbench.model.roofline.sweep_machines`)."""
    param = sweep.param_of(operation)
    values = sweep.values_for(operation)
    counts = operation.counts()
    precision = counts.precision
    out: list[SweepResult] = []
    for hardware, arrays in zip(machines, roofline_sweep_machines(
            operation, machines, **{sweep.param: values}), strict=True):
        arrays = {k: _own(v, values.shape) for k, v in arrays.items()}
        ceiling = hardware.ceiling(precision, counts.unit)
        out.append(SweepResult(
            operation=operation.name,
            hardware=hardware.label,
            param=sweep.param,
            is_int=param.type == "int",
            values=values.copy() if out else values,  # (each result its own)
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
        ))
    return out


def _own(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` as an array of ``shape`` of its own (writable, shared with nothing): a copy,
    spread over the shape where it is a scalar or broadcasts to it."""
    a = np.asarray(value)
    if a.shape == shape:  # (every result of a one-parameter sweep: no broadcast to set up)
        return a.copy()
    return np.broadcast_to(a, shape).copy()


@record(frozen=True)
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


def _look(operation: Operation, machines: list[Hardware], param: str, x: np.ndarray,
          on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The side of the ridge at each x, on machine ``machines[on]`` (``on`` broadcast
    against ``x``), and the balance T_math − T_mem there (one vectorised evaluation, the
    counts shared by the machines). The side is +1 compute-bound, −1 memory-bound
    (:func:`~workbench.model.rules.compute_bound`, the rule that names the bound), 0
    undefined (a NaN time); the balance carries the sign a root search steps by."""
    t_math, t_mem = sweep_times(operation, machines, on, **{param: x})
    shape = np.broadcast_shapes(np.shape(x), np.shape(on))
    t_math = np.broadcast_to(t_math, shape)
    t_mem = np.broadcast_to(t_mem, shape)
    side = np.where(compute_bound(t_math, t_mem), 1, -1)
    side = np.where(np.isnan(t_math) | np.isnan(t_mem), 0, side)
    with np.errstate(invalid="ignore"):
        return side, t_math - t_mem


def _side_at(operation: Operation, machines: list[Hardware], param: str, x: np.ndarray,
             on: np.ndarray) -> np.ndarray:
    """The side of the ridge at each x (see :func:`_look`)."""
    return _look(operation, machines, param, x, on)[0]


#: the floats on each side of a regula falsi step that :func:`_close_in` looks at in the
#: same evaluation: where the balance is a straight line in the parameter (the FLOPs and
#: bytes of a GEMM in one dimension) the first step lands within a few floats of the
#: crossing, and the crossing is among them
WINDOW = 16


def _floats_about(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For each ``x``, the :data:`WINDOW` floats below it, itself and the :data:`WINDOW`
    above, one after the other (rows, ascending), kept within ``[lo, hi]``."""
    down, up = [x], [x]
    for _ in range(WINDOW):
        down.append(np.maximum(np.nextafter(down[-1], -np.inf), lo))
        up.append(np.minimum(np.nextafter(up[-1], np.inf), hi))
    return np.column_stack(down[:0:-1] + up)


def _close_in(operation: Operation, machines: list[Hardware], param: str, a: np.ndarray,
              b: np.ndarray, side_a: np.ndarray, fa: np.ndarray, fb: np.ndarray,
              known: list[dict[float, int]], on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A crossing in each bracket ``a < b`` on machine ``machines[on]`` (side ``side_a`` of
    the ridge at ``a``, the other at ``b``; the balances ``fa`` and ``fb`` there): two
    neighbouring floats, the first on ``a``'s side, the second on the other. All brackets
    at once (those of every machine), by the Illinois variant of regula falsi, each step
    looking at the :data:`WINDOW` floats on either side of where it lands in the same
    evaluation: a few evaluations where bisection takes fifty (the balance is a smooth
    function of the parameter). Every side seen is noted in
    ``known`` (one mapping from parameter to side for each bracket). A bracket with an
    undefined side (a NaN time) within is left as it stands."""
    a, b, fa, fb = a.copy(), b.copy(), fa.copy(), fb.copy()
    last = np.zeros(a.shape, dtype=int)  # the end moved last: −1 a, +1 b
    stuck = np.zeros(a.shape, dtype=bool)
    for _ in range(60):
        live = ~stuck & (np.nextafter(a, b) != b) & np.isfinite(fa) & np.isfinite(fb) \
            & (fa != fb)
        at = np.flatnonzero(live)
        if not len(at):
            break
        la, lb, lfa, lfb = a[at], b[at], fa[at], fb[at]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            x = lb - lfb * (lb - la) / (lfb - lfa)
        x = np.where(np.isfinite(x) & (x > la) & (x < lb), x, 0.5 * la + 0.5 * lb)
        pts = _floats_about(x, np.nextafter(la, lb), np.nextafter(lb, la))
        side, balance = _look(operation, machines, param, pts.ravel(),
                              np.repeat(on[at], pts.shape[1]))
        side, balance = side.reshape(pts.shape), balance.reshape(pts.shape)
        for row, j in enumerate(at.tolist()):
            known[j].update(zip(pts[row].tolist(), side[row].tolist(), strict=True))
        sa = side_a[at][:, None]
        odd = (side == 0).any(axis=1)  # a NaN within: bisection takes it from here
        stuck[at[odd]] = True
        turned = side != sa  # (ascending: the first past the crossing)
        any_turned = turned.any(axis=1)
        i = np.argmax(turned, axis=1)  # the first that turned (0 when none)
        rows = np.arange(len(at))
        moves_a = ~odd & (~any_turned | (i > 0))
        moves_b = ~odd & any_turned
        below = np.where(any_turned, i - 1, pts.shape[1] - 1)  # the last on a's side
        prev = last[at]
        # Illinois: an end that stays while the other moves twice has its value halved
        lfb = np.where(moves_a & ~moves_b & (prev == -1), 0.5 * lfb, lfb)
        lfa = np.where(moves_b & ~moves_a & (prev == 1), 0.5 * lfa, lfa)
        a[at] = np.where(moves_a, pts[rows, below], la)
        fa[at] = np.where(moves_a, balance[rows, below], lfa)
        b[at] = np.where(moves_b, pts[rows, i], lb)
        fb[at] = np.where(moves_b, balance[rows, i], lfb)
        last[at] = np.where(moves_a & moves_b, 0,
                            np.where(moves_a, -1, np.where(moves_b, 1, prev)))
    return a, b


def _bisect(operation: Operation, machines: list[Hardware], param: str, a: np.ndarray,
            b: np.ndarray, side_a: np.ndarray, on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The brackets ``[a, b]`` on machines ``machines[on]`` (side ``side_a`` of the ridge at
    ``a``, the other at ``b``)
    narrowed by bisection, all at once, to the last representable float: one vectorised
    evaluation a step."""
    for _ in range(400):
        mid = 0.5 * (a + b)
        done = (mid <= a) | (mid >= b)
        if done.all():
            break
        side_mid = _side_at(operation, machines, param, mid, on)
        same = (side_mid == side_a) & ~done
        other = (side_mid == -side_a) & ~done
        a = np.where(same, mid, a)
        b = np.where(other, mid, b)
        # a NaN in the middle of a bracket: give up on narrowing it further
        stuck = (side_mid == 0) & ~done
        if stuck.any():
            b = np.where(stuck, a, b)
    return a, b


def _replay(a: float, b: float, side_a: int, known: dict[float, int], below: float,
            above: float) -> tuple[float, float, list[tuple[float, int]]]:
    """:func:`_bisect` of one bracket, without evaluating: the side at each midpoint is
    taken from ``known``, else as the crossing between the neighbouring floats ``below``
    and ``above`` says (``side_a`` up to ``below``, the other side from ``above``). Returns
    where it ends and the sides it took so (to be checked)."""
    taken: list[tuple[float, int]] = []
    while True:
        mid = 0.5 * (a + b)
        if mid <= a or mid >= b:
            return a, b, taken
        side = known.get(mid)
        if side is None:
            side = side_a if mid <= below else -side_a
            taken.append((mid, side))
        if side == side_a:
            a = mid
        elif side == -side_a:
            b = mid
        else:  # (a NaN: as _bisect)
            b = a


def _bisection_ends(operation: Operation, machines: list[Hardware], param: str,
                    a: np.ndarray, b: np.ndarray, side_a: np.ndarray, below: np.ndarray,
                    above: np.ndarray, known: list[dict[float, int]], on: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Where :func:`_bisect` of the brackets ``[a, b]`` (on machines ``machines[on]``) ends,
    without its fifty evaluations
    one after the other: each bisection is replayed (:func:`_replay`) from the sides seen
    (``known``) and, elsewhere, the sides a crossing between the neighbouring floats
    ``below`` and ``above`` gives; the sides so taken are then evaluated, all in one go,
    and where one differs (a few floats about a crossing can lie on either side of the
    ridge, by rounding) the replay runs again with it. The result is bisection's, float
    for float, since every side it took was evaluated; a bracket still unsettled after a
    few rounds is bisected."""
    left, right = a.copy(), b.copy()
    todo = [j for j in range(len(a)) if np.nextafter(below[j], above[j]) == above[j]]
    plain = [j for j in range(len(a)) if j not in todo]
    for _ in range(6):
        checks: list[tuple[int, float, int]] = []
        for j in todo:
            left[j], right[j], taken = _replay(float(a[j]), float(b[j]), int(side_a[j]),
                                               known[j], float(below[j]), float(above[j]))
            checks += [(j, mid, side) for mid, side in taken]
        if not checks:
            todo = []
            break
        seen = _side_at(operation, machines, param, np.array([mid for _j, mid, _s in checks]),
                        np.array([on[j] for j, _mid, _s in checks], dtype=np.intp))
        wrong = set()
        for (j, mid, side), actual in zip(checks, seen.tolist(), strict=True):
            known[j][mid] = actual
            if actual != side:
                wrong.add(j)
        todo = sorted(wrong)
        if not todo:
            break
    plain = sorted(plain + todo)
    if plain:
        at = np.asarray(plain)
        left[at], right[at] = _bisect(operation, machines, param, a[at], b[at], side_a[at],
                                      on[at])
    return left, right


def crossings(operation: Operation, hardware: Hardware, param: str, lo: float, hi: float,
              scan_points: int = SCAN_POINTS) -> list[Crossing]:
    """Every value of ``param`` in ``[lo, hi]`` where ``operation`` crosses ``hardware``'s ridge
    (T_math = T_mem), ascending.

    The parameter is treated as a real number, even for whole-number parameters (the counting
    functions are plain arithmetic): the interval is scanned on ``scan_points`` points (log
    spaced when ``0 < lo`` and ``hi / lo > 10``, else linear) to bracket every change of side,
    so an intensity that rises and falls gives several crossings; each crossing is where
    bisection of its bracket ends, at the last representable float (found by regula falsi
    and a replay of the bisection, checked: :func:`_bisection_ends`, about three
    evaluations in all where bisection takes fifty). Returns ``[]`` when the operation stays
    on one side of the ridge over the whole interval. An excursion across the ridge narrower
    than the scan spacing (or one that only touches it) can be missed.

    The launch overhead plays no part: a crossing is where the roofline's two times are equal,
    whether or not both are below the overhead floor. For whole-number parameters the first
    whole value on the compute-bound side is ``ceil`` of the crossing (see :class:`Crossing`).
    """
    return crossings_on(operation, [hardware], param, lo, hi, scan_points)[0]


def crossings_on(operation: Operation, machines: list[Hardware], param: str, lo: float,
                 hi: float, scan_points: int = SCAN_POINTS) -> list[list[Crossing]]:
    """:func:`crossings` on each of ``machines`` (the same crossings), searched on all at
    once: each evaluation counts the FLOPs and bytes once for every machine's points, and
    each bracket is narrowed as on its machine alone."""
    sweep_param = Sweep(param, [1.0]).param_of(operation)
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)) or not lo < hi:
        raise SweepError(f"need a finite interval lo < hi, got [{lo:g}, {hi:g}]")
    if scan_points < 2:
        raise SweepError("scan_points must be at least 2")
    grid = np.geomspace(lo, hi, scan_points) if lo > 0 and hi / lo > 10 else np.linspace(lo, hi, scan_points)
    grid[0], grid[-1] = lo, hi
    sides, balances = _look(operation, machines, param, grid,
                            np.arange(len(machines))[:, None])  # (a row for each machine)
    # brackets: consecutive defined samples on opposite sides, machine by machine
    brackets = []
    for m, (side, balance) in enumerate(zip(sides, balances, strict=True)):
        defined = np.flatnonzero(side != 0)
        if len(defined) < 2:
            continue
        s = side[defined]
        change = np.flatnonzero(s[:-1] != s[1:])
        if len(change):
            brackets.append((grid[defined[change]], grid[defined[change + 1]], s[change],
                             balance[defined[change]], balance[defined[change + 1]],
                             np.full(len(change), m, dtype=np.intp)))
    found: list[list[Crossing]] = [[] for _ in machines]
    if not brackets:
        return found
    a, b, side_a, fa, fb, on = (np.concatenate(parts) for parts in zip(*brackets, strict=True))
    known: list[dict[float, int]] = [{} for _ in range(len(a))]
    below, above = _close_in(operation, machines, param, a, b, side_a, fa, fb, known, on)
    a, b = _bisection_ends(operation, machines, param, a, b, side_a, below, above, known, on)
    counts = operation.counts()
    ridges = {}
    for left, right, s_left, m in zip(a, b, side_a, on.tolist(), strict=True):
        hardware = machines[m]
        if m not in ridges:
            peak = hardware.peak(counts.precision, counts.unit)
            level = hardware.level_for(operation.level_on(hardware))
            ridges[m] = (ridge(peak, hardware.bandwidth(level)), peak, level)
        at, peak, level = ridges[m]
        # the side boundary lies in [left, right]; report the compute-bound end (it satisfies
        # T_math ≥ T_mem, like the rule that names the bound) unless the other is exactly on it
        value = float(right if s_left < 0 else left)
        direction = "to_compute" if s_left < 0 else "to_memory"
        integer = None
        if sweep_param.type == "int":
            integer = math.ceil(value) if direction == "to_compute" else math.floor(value)
        found[m].append(Crossing(operation.name, hardware.label, param, value, direction,
                                 integer, float(at), float(peak), level))
    return found


def sweep_crossings(operation: Operation, hardware: Hardware, sweep: Sweep) -> list[Crossing]:
    """The crossings inside the span of ``sweep``'s values (what the canvas marks on a path)."""
    return sweep_crossings_on(operation, [hardware], sweep)[0]


def sweep_crossings_on(operation: Operation, machines: list[Hardware], sweep: Sweep
                       ) -> list[list[Crossing]]:
    """:func:`sweep_crossings` on each of ``machines``, searched on all at once
    (:func:`crossings_on`)."""
    values = sweep.values_for(operation)
    lo, hi = float(values.min()), float(values.max())
    if not lo < hi:
        return [[] for _ in machines]
    return crossings_on(operation, machines, sweep.param, lo, hi)
