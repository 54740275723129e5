"""Roofline evaluation of FLOPs and bytes on a machine; vectorised over numpy arrays.

    intensity  I = F / B                       (FLOP/byte)
    ridge        = peak / bandwidth             (FLOP/byte)
    attainable   = min(peak, I · bandwidth)     (FLOP/s)
    T_math = F / peak,  T_mem = B / bandwidth
    lower bound = max(T_math, T_mem),  upper bound = T_math + T_mem
    launch floor = kernels × launch overhead (an unfused chain launches one kernel a step)
    predicted time = max(lower bound / efficiency, launch floor)
    bound: overhead when the launch floor is the larger term of the predicted time (the
           same derated time decides both), else compute if T_math ≥ T_mem, else memory

Calibrated prediction (the session's ``prediction: calibrated``; see
:mod:`workbench.model.prediction`): the kernel's class gives e_math and e_mem,

    T_work      = max(T_math / e_math, T_mem / e_mem)
    T_fixed     = kernels × (launch + start-up)
    T_predicted = max(T_fixed + T_work, kernels × launch floor)    (floor: eager launches)
    bound: overhead when T_fixed or the floor outweighs T_work

With e_math = e_mem = efficiency, no fixed cost and the floor = launch overhead this is the
derated formula: both are :func:`_roofline`. Each rule (intensity, ridge, attainable, the
side of the ridge, T_work) is one function of :mod:`workbench.model.rules`.

The compute peak is the machine's figure for the work's precision on the unit its kind runs
on (:meth:`~workbench.model.hardware.Hardware.ceiling`: matrix or vector).
"""

from __future__ import annotations

import copy
import functools
import math
import os
from typing import Any

import numpy as np

from workbench.model.hardware import Hardware
from workbench.model.operations import Counts, Operation
from workbench.model.prediction import calibration_of, classify
from workbench.model.rules import FORMULAS, attainable, compute_bound, divide, ridge, t_work
from workbench.model.rules import intensity as intensity_of
from workbench.records import record

__all__ = [
    "Result", "evaluate", "evaluate_counts", "evaluate_arrays", "sweep", "sweep_times", "FORMULAS",
    "BOUND_NAMES", "Calibrated", "calibrated_for", "attainable", "compute_bound", "intensity_of",
    "ridge", "t_work",
]



_KEYS = ("flops", "bytes", "intensity", "peak_flops", "bandwidth", "ridge", "attainable_flops",
         "fraction_of_peak", "t_math_s", "t_mem_s", "t_lower_s", "t_upper_s", "t_predicted_s",
         "bound")


def _roofline(m, f, b, p, w, overhead: float | None, efficiency: float | None, kernels=1,
              intensity=None, calibrated: Calibrated | None = None, latency=0.0) -> tuple:
    """The roofline formulas (the module's docstring, :data:`FORMULAS`), written once.

    ``m`` is the arithmetic they run on: :class:`_Floats` for one operation on one machine,
    :class:`_Arrays` for numpy arrays (a sweep, a batch of rows). ``calibrated``, when given,
    replaces ``overhead`` and ``efficiency`` by the calibrated prediction's figures.
    ``latency`` is a collective's link latency (its steps × the link's latency): a floor no
    implementation beats, added to T_lower, T_upper and T_predicted. Returns the values in
    the order of :data:`_KEYS`."""
    if latency if isinstance(latency, (int, float)) else np.any(latency):
        out = _roofline(m, f, b, p, w, overhead, efficiency, kernels, intensity, calibrated)
        return (*out[:10], out[10] + latency, out[11] + latency, out[12] + latency, out[13])
    if intensity is None:
        intensity = intensity_of(f, b)
    t_math = m.div(f, p)
    t_mem = m.div(b, w)
    t_lower = m.maximum(t_math, t_mem)
    t_upper = t_math + t_mem
    reach = attainable(intensity, p, w)
    bound = m.compute_if(compute_bound(t_math, t_mem))  # 1 compute, 0 memory
    if calibrated is not None:
        work = t_work(t_math, t_mem, calibrated.e_math, calibrated.e_mem)
        t_fixed = calibrated.per_kernel * kernels
        t_predicted = work + t_fixed
        floor = calibrated.floor * kernels
        bound = m.overhead_where(work < t_fixed, bound)
        bound = m.overhead_where(t_predicted < floor, bound)
        if calibrated.floor > 0:
            t_predicted = m.at_least(t_predicted, floor)
        return (f, b, intensity, p, w, ridge(p, w), reach, m.div(reach, p), t_math,
                t_mem, t_lower, t_upper, t_predicted, bound)
    per_launch = overhead or 0.0
    eff = efficiency if efficiency else 1.0
    if per_launch > 0:
        floor = per_launch * kernels
        t_predicted = t_lower / eff
        bound = m.overhead_where(t_predicted < floor, bound)
        t_predicted = m.at_least(t_predicted, floor)
    else:
        t_predicted = t_lower / eff if eff != 1.0 else t_lower
    return (f, b, intensity, p, w, ridge(p, w), reach, m.div(reach, p), t_math,
            t_mem, t_lower, t_upper, t_predicted, bound)


@record(frozen=True)
class Calibrated:
    """The calibrated prediction's figures for one operation on one machine (see
    :mod:`workbench.model.prediction`): efficiencies on the compute and bandwidth roofs,
    seconds per kernel (launch + start-up), and the per-kernel floor (eager launches)."""

    e_math: float
    e_mem: float
    per_kernel: float
    floor: float
    math_class: str
    memory_class: str
    launches: str
    reason: str
    assumed: bool = False
    launch: float = 0.0  # per kernel, the part of per_kernel that launching costs
    startup: float = 0.0  # per kernel, the start-up part


def calibrated_for(kind: str, params: dict, hardware: Hardware) -> Calibrated | None:
    """The calibrated figures of an operation of ``kind`` on ``hardware`` when the machine
    predicts calibrated and the kind is covered; else ``None`` (the derated prediction)."""
    if getattr(hardware, "prediction", "derated") != "calibrated":
        return None
    if kind in ("attention", "mla_attention"):  # a parameter left out: its kind's default
        defaults = _class_defaults(kind)
        if any(params.get(name) is None for name in defaults):
            params = {**defaults, **{k: v for k, v in params.items() if v is not None}}
    kc = classify(kind, params)
    if kc is None:
        return None
    cal = calibration_of(hardware)
    launches = hardware.launches
    if launches == "auto":  # an operation on its own: timed alone
        launches = "kernel"
    key = (id(cal), launches, kc)
    known = _CALIBRATED.get(key)
    if known is not None and known[0] is cal:  # the same figures: every edit, every row
        return known[1]
    math_class = kc.math or kc.memory
    launch = cal.launch(launches)
    startup = cal.startup.get(kc.startup, 0.0) if kc.startup else 0.0
    out = Calibrated(cal.efficiency[math_class], cal.efficiency[kc.memory], launch + startup,
                     cal.floor(launches), math_class, kc.memory, launches, kc.reason,
                     cal.assumed, launch, startup)
    if len(_CALIBRATED) > 4096:
        _CALIBRATED.clear()
    _CALIBRATED[key] = (cal, out)
    return out


_CALIBRATED: dict = {}  # (id of the figures, launches, class) → (figures, Calibrated)


@functools.lru_cache(maxsize=8)
def _class_defaults(kind: str) -> dict:
    """The defaults of the parameters that choose an attention kernel's class."""
    from workbench.model.operations import KINDS

    spec = KINDS.get(kind)
    return {p.name: p.default for p in (spec.params if spec is not None else ())
            if p.name in ("implementation", "query_len", "causal")}


class _Floats:
    """The arithmetic of :func:`_roofline` on Python floats, with numpy's IEEE results (x/0
    is ±inf, 0/0 is nan, nan wins a max or a min), without numpy's cost on single numbers:
    a session of thousands of operations evaluates every pair on opening."""

    div = staticmethod(divide)

    @staticmethod
    def maximum(a: float, b: float) -> float:
        if a != a or b != b:
            return math.nan
        return a if a >= b else b

    at_least = maximum

    @staticmethod
    def compute_if(is_compute: bool) -> int:
        return 1 if is_compute else 0

    @staticmethod
    def overhead_where(is_overhead: bool, bound: int) -> int:
        return 2 if is_overhead else bound


class _Arrays:
    """The arithmetic of :func:`_roofline` on numpy arrays. A million-shape sweep is a few
    dozen passes over its arrays, each a fresh 8 MB block the system must zero first: a
    result is written into an operand's memory where that operand is a fresh array of the
    result's shape."""

    div = staticmethod(np.divide)
    maximum = staticmethod(np.maximum)

    @staticmethod
    def _into(ufunc, a, b):
        if isinstance(a, np.ndarray) and a.flags.writeable and np.shape(b) in ((), a.shape):
            return ufunc(a, b, out=a)
        return ufunc(a, b)

    @staticmethod
    def at_least(a, floor):
        return _Arrays._into(np.maximum, a, floor)  # a: T_lower / efficiency, fresh

    @staticmethod
    def compute_if(is_compute):
        return np.asarray(is_compute).view(np.int8)

    @staticmethod
    def overhead_where(is_overhead, bound):
        bound[np.broadcast_to(is_overhead, bound.shape)] = 2
        return bound


def evaluate_arrays(
    flops: Any,
    nbytes: Any,
    peak: Any,
    bandwidth: Any,
    overhead: float | None = None,
    efficiency: float | None = None,
    *,
    intensity: Any = None,
    kernels: Any = 1,
    calibrated: Calibrated | None = None,
    latency: Any = 0.0,
) -> dict[str, np.ndarray]:
    """Everything the roofline says about F FLOPs and B bytes, elementwise over arrays.

    ``bound`` is an integer array: 0 memory, 1 compute, 2 overhead (see :data:`BOUND_NAMES`).
    ``intensity``, when given, is ``flops / nbytes`` already computed (it is the same on
    every machine of a sweep). ``latency``: a collective's link latency (see
    :func:`link_latency`).
    """
    f = np.asarray(flops, dtype=float)
    b = np.asarray(nbytes, dtype=float)
    p = np.asarray(peak, dtype=float)
    w = np.asarray(bandwidth, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # IEEE inf and nan
        values = dict(zip(_KEYS, _roofline(_Arrays, f, b, p, w, overhead, efficiency, kernels,
                                           intensity, calibrated, latency), strict=True))
    shape = np.broadcast(f, b, p, w).shape
    values["latency_s"] = np.asarray(latency, dtype=float)
    for key in ("flops", "bytes", "peak_flops", "bandwidth", "ridge", "latency_s"):
        values[key] = _read_only(values[key], shape)
    # read-only: t_predicted may be t_lower itself, and a sweep's intensity is shared by
    # its machines (a caller's own intensity array is left as it was given)
    for key in ("t_math_s", "t_mem_s", "t_lower_s", "t_upper_s", "attainable_flops",
                "fraction_of_peak", "bound", "t_predicted_s"):
        if isinstance(values[key], np.ndarray):
            values[key].flags.writeable = False
    return values


def _read_only(value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``np.broadcast_to(value, shape)``: a read-only view of ``value`` spread over
    ``shape``; an array already of that shape is only viewed (setting up a broadcast costs
    more than the rest of a small sweep's formulas)."""
    if isinstance(value, np.ndarray) and value.shape == shape:
        view = value.view()
        view.flags.writeable = False
        return view
    return np.broadcast_to(value, shape)


BOUND_NAMES = ("memory", "compute", "overhead")


def evaluate_scalars(flops: float, nbytes: float, peak: float, bandwidth: float,
                     overhead: float | None = None, efficiency: float | None = None,
                     kernels: int = 1) -> dict[str, float]:
    """:func:`evaluate_arrays` for one operation on one machine, in plain floats: the same
    formulas (:func:`_roofline`) on Python floats."""
    out = dict(zip(_KEYS, _roofline(_Floats, float(flops), float(nbytes), float(peak),
                                    float(bandwidth), overhead, efficiency, kernels),
                   strict=True))
    out["latency_s"] = 0.0
    return out


@record(frozen=True)
class Result:
    """One operation on one machine (scalars)."""

    operation: str
    hardware: str
    flops: float
    bytes: float
    intensity: float
    precision: str
    precision_used: str
    level: str
    peak_flops: float
    bandwidth: float
    ridge: float
    attainable_flops: float
    fraction_of_peak: float
    bound: str
    t_math_s: float
    t_mem_s: float
    t_lower_s: float
    t_upper_s: float
    t_predicted_s: float
    efficiency: float | None
    launch_overhead_s: float | None
    unit: str = "matrix"
    ceiling_note: str = ""
    kernels: int = 1
    #: The calibrated prediction's figures (``None``: the derated prediction).
    calibrated: Calibrated | None = None
    #: A collective's link latency in T_lower, T_upper and T_predicted: its steps × the
    #: latency of the link it runs over (0 for any other operation).
    latency_s: float = 0.0

    @property
    def t_work_s(self) -> float:
        """The work part of the prediction: max(T_math / e_math, T_mem / e_mem)."""
        c = self.calibrated
        if c is None:
            return self.t_lower_s / (self.efficiency or 1.0)
        return t_work(self.t_math_s, self.t_mem_s, c.e_math, c.e_mem)

    @property
    def t_fixed_s(self) -> float:
        """The per-kernel part: kernels × (launch + start-up); 0 for the derated prediction."""
        c = self.calibrated
        return 0.0 if c is None else c.per_kernel * self.kernels

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def renamed(self, name: str) -> Result:
        """This result for another operation of the same counts (each layer of a model has
        its own name)."""
        if name == self.operation:
            return self
        # (a copy with one field changed: what dataclasses.replace gives for a class with
        # no __post_init__, without passing all 25 fields through __init__; a model's
        # layers and a large session's repeated operations ask this for every pair)
        out = copy.copy(self)
        out.__dict__["operation"] = name
        return out


def evaluate_counts(
    counts: Counts,
    hardware: Hardware,
    level: str | None = None,
    name: str = "",
    calibrated: Calibrated | None = None,
) -> Result:
    precision, unit = counts.precision, counts.unit
    table = hardware.vector_compute if unit == "vector" else hardware.compute
    peak = table.get(precision) if table else None
    if peak is not None:  # the machine has the precision on the unit: no fallback, no note
        precision_used, unit_used, note = precision, unit, ""
    else:
        ceiling = hardware.ceiling(precision, unit)
        precision_used, peak, unit_used, note = (ceiling.precision, ceiling.peak, ceiling.unit,
                                                 ceiling.note)
    kernels = counts.kernels
    level_used = hardware.level_for(level)
    bandwidth = hardware.bandwidth(level_used)
    latency = link_latency(counts, hardware, level_used)
    flops, nbytes = counts.flops, counts.bytes
    if (isinstance(flops, (int, float)) and not isinstance(flops, bool)
            and isinstance(nbytes, (int, float)) and not isinstance(nbytes, bool)):
        (f, b, intensity, p, w, ridge, attainable, fraction, t_math, t_mem, t_lower, t_upper,
         t_predicted, bound) = _roofline(_Floats, float(flops), float(nbytes), float(peak),
                                         float(bandwidth), hardware.launch_overhead,
                                         hardware.efficiency, kernels, None, calibrated,
                                         latency)
    else:  # counts that are numpy values: the same formulas on arrays
        r = evaluate_arrays(flops, nbytes, peak, bandwidth, hardware.launch_overhead,
                            hardware.efficiency, kernels=kernels, calibrated=calibrated,
                            latency=latency)
        (f, b, intensity, p, w, ridge, attainable, fraction, t_math, t_mem, t_lower, t_upper,
         t_predicted) = (float(r[key]) for key in _KEYS[:-1])
        bound = int(r["bound"])
    return Result(
        operation=name,
        hardware=hardware.label,
        flops=f,
        bytes=b,
        intensity=intensity,
        precision=counts.precision,
        precision_used=precision_used,
        level=level_used,
        peak_flops=p,
        bandwidth=w,
        ridge=ridge,
        attainable_flops=attainable,
        fraction_of_peak=fraction,
        bound=BOUND_NAMES[bound],
        t_math_s=t_math,
        t_mem_s=t_mem,
        t_lower_s=t_lower,
        t_upper_s=t_upper,
        t_predicted_s=float(t_predicted),  # (a whole-number launch overhead is an int)
        # calibrated: no single derating applies; the launch cost is the session's choice
        efficiency=hardware.efficiency if calibrated is None else None,
        launch_overhead_s=(hardware.launch_overhead if calibrated is None
                           else max(calibrated.floor, calibrated.launch) or None),
        unit=unit_used,
        ceiling_note=note,
        kernels=int(kernels),
        calibrated=calibrated,
        latency_s=float(latency),
    )


def link_latency(counts: Counts, hardware: Hardware, level: str) -> float:
    """A collective's latency floor on ``hardware`` across ``level``: its steps × the
    latency of that link (:meth:`Hardware.latency_of`); 0 for other work, or across a
    memory level."""
    steps = counts.latency_steps
    if level not in hardware.interconnect or not np.any(steps):  # (steps of a sweep: an array)
        return 0.0
    return steps * hardware.latency_of(level)[0]


def evaluate(operation: Operation, hardware: Hardware, level: str | None = None) -> Result:
    """Evaluate ``operation`` on ``hardware`` across ``level`` (default: the operation's own
    memory level, else its kind's default — main memory, or the first interconnect for
    communication kinds; see :meth:`Operation.level_on`)."""
    return evaluate_counts(operation.counts(), hardware, level or operation.level_on(hardware),
                           operation.name,
                           calibrated_for(operation.kind, operation.params, hardware))


def sweep(operation: Operation, hardware: Hardware, **arrays: Any) -> dict[str, np.ndarray]:
    """Evaluate ``operation`` with parameters replaced by arrays (one call for a whole sweep)."""
    return sweep_machines(operation, [hardware], **arrays)[0]


def sweep_machines(operation: Operation, machines: list[Hardware], **arrays: Any
                   ) -> list[dict[str, np.ndarray]]:
    """:func:`sweep` on several machines: the FLOPs and bytes are counted once."""
    counts = _swept_counts(operation, {k: np.asarray(v, dtype=float) for k, v in arrays.items()})
    flops = np.asarray(counts.flops, dtype=float)
    nbytes = np.asarray(counts.bytes, dtype=float)
    intensity = intensity_of(flops, nbytes)
    if isinstance(intensity, np.ndarray):
        intensity.flags.writeable = False  # shared by every machine's results

    kernels = counts.kernels

    def one(hardware: Hardware) -> dict[str, np.ndarray]:
        level = operation.level_on(hardware)
        return evaluate_arrays(flops, nbytes, hardware.peak(counts.precision, counts.unit),
                               hardware.bandwidth(level),
                               hardware.launch_overhead, hardware.efficiency,
                               intensity=intensity, kernels=kernels,
                               calibrated=calibrated_for(operation.kind, operation.params,
                                                         hardware),
                               latency=link_latency(counts, hardware,
                                                    hardware.level_for(level)))

    if len(machines) < 2 or intensity.size < PARALLEL_MIN_SHAPES or (os.cpu_count() or 1) < 2:
        return [one(hardware) for hardware in machines]
    # numpy lets go of the interpreter lock in its array loops: the machines of a large sweep
    # are evaluated side by side, one per core
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor  # only large sweeps need it

        _POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1,
                                   thread_name_prefix="roofline-sweep")
    return list(_POOL.map(one, machines))


def sweep_times(operation: Operation, machines: list[Hardware], on: Any, **arrays: Any
                ) -> tuple[np.ndarray, np.ndarray]:
    """T_math and T_mem of :func:`sweep` (the same numbers), on several machines at once:
    the value at each point is on machine ``machines[on]`` (``on`` an array of indices,
    broadcast against the swept arrays: ``on = [[0], [1]]`` gives a row for each machine).
    The FLOPs and bytes are counted once for all machines, and nothing else is worked out
    (a search for where a sweep crosses each machine's ridge looks at these two alone)."""
    counts = _swept_counts(operation, {k: np.asarray(v, dtype=float) for k, v in arrays.items()})
    flops = np.asarray(counts.flops, dtype=float)
    nbytes = np.asarray(counts.bytes, dtype=float)
    peak = np.array([hw.peak(counts.precision, counts.unit) for hw in machines], dtype=float)
    bandwidth = np.array([hw.bandwidth(operation.level_on(hw)) for hw in machines], dtype=float)
    on = np.asarray(on, dtype=np.intp)
    # (the first two of _roofline's formulas, on the same numbers: T_math = F / P, T_mem = B / W)
    return divide(flops, peak[on]), divide(nbytes, bandwidth[on])


@record(frozen=True)
class _PointCounts:
    """The counts of a sweep taken point by point (see :func:`_swept_counts`): what a sweep
    reads of :class:`Counts`, each number an array over the points."""

    flops: np.ndarray
    bytes: np.ndarray
    precision: str
    unit: str
    kernels: np.ndarray
    latency_steps: np.ndarray


#: points of a sweep counted one by one at most (a kind whose counting branches on the swept
#: value: an all-reduce's algorithm, an MoE's experts hit)
MOST_POINTS_ONE_BY_ONE = 20_000


def _swept_counts(operation: Operation, arrays: dict[str, np.ndarray]) -> Any:
    """``operation.counts(**arrays)``, in one call where its kind counts arrays; where its
    counting branches on a swept value (an all-reduce's algorithm by message size), each
    point counted as the operation with that value typed in."""
    try:
        return operation.counts(**arrays)
    except (ValueError, TypeError):
        if not arrays:
            raise
    shape = np.broadcast_shapes(*(np.shape(v) for v in arrays.values()))
    size = int(np.prod(shape))
    flat = {k: np.broadcast_to(v, shape).ravel() for k, v in arrays.items()}
    if size > MOST_POINTS_ONE_BY_ONE:
        names = ", ".join(flat)
        raise ValueError(f"{operation.kind}: {names} is counted point by point; a sweep of "
                         f"{size:,} points is over the {MOST_POINTS_ONE_BY_ONE:,} that allows")
    whole = {k for k in flat if operation.spec.param(k).type == "int"}
    points = [operation.counts(**{k: int(v[i]) if k in whole else float(v[i])
                                  for k, v in flat.items()})
              for i in range(size)]
    first = points[0]
    if any(c.precision != first.precision or c.unit != first.unit for c in points):
        raise ValueError(f"{operation.kind}: the precision or unit changes along the sweep")

    def each(values) -> np.ndarray:
        return np.asarray([float(v) for v in values], dtype=float).reshape(shape)

    return _PointCounts(each(c.flops for c in points), each(c.bytes for c in points),
                        first.precision, first.unit, each(c.kernels for c in points),
                        each(c.latency_steps for c in points))


#: Sweeps with at least this many shapes evaluate their machines in parallel threads (below,
#: handing work to a thread costs more than it saves).
PARALLEL_MIN_SHAPES = 100_000
_POOL: Any = None  # the sweep threads (a concurrent.futures.ThreadPoolExecutor), made when needed


def _forget_pool() -> None:
    """A forked process has none of its parent's threads, only the pool object that names
    them: work handed to it would wait forever. The child makes its own pool when needed."""
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
