"""Measured points: predict, then verify.

A :class:`Measurement` is what a profiler or a stopwatch said about one kernel on one machine:
a time (or an achieved FLOP/s), and optionally the FLOPs and bytes it measured. It is either
*attached* to an operation of the session (``operation`` names it; the operation's counts give
the prediction) or *standalone* (``operation`` is ``None``; its own ``flops`` and ``bytes``, at
``precision``, give the prediction).

:func:`judge` holds a measurement against its predicted roofline :class:`Result` (the
measurements of a whole session are judged in :mod:`workbench.model.measured_session`):

* measured time ``t`` = ``time_s``, or FLOPs / ``achieved_flops`` when only a rate is given
  (the measured FLOPs when known, else the predicted ones);
* **fraction of the predicted ceiling** = predicted lower-bound time / measured time
  = ``T_lower / t`` with ``T_lower = max(T_math, T_mem)`` of the prediction. With the same FLOPs
  this is exactly achieved FLOP/s ÷ attainable FLOP/s, the height of the measured point over
  the roof at the predicted intensity. It is shown as its own figure; it is not the verdict
  (a kernel of a few microseconds is a small fraction of its roof however well it runs);
* the **verdict**, against the prediction of the point's own machine and mode (T_predicted,
  launch and start-up included): ``r = t / T_predicted``. A point whose prediction is in the
  overhead regime (launch and start-up outweigh the work) and that takes no longer than
  1.2 × its prediction is ``overhead-bound``, labelled with the seconds of launch and
  start-up it pays; any other point takes the band of ``r``:

  ============== ================== ======================================================
  r              key                meaning
  ============== ================== ======================================================
  < 0.8          ``re-measure``     faster than predicted: re-measure (cache, timer) or
                                    check the machine's figures
  0.8–1.2        ``as-predicted``   within ±20 % of the prediction
  1.2–2          ``below-prediction`` slower than predicted: room to improve
  > 2            ``likely-bug``     likely a bug (wrong tile, dtype path, no tensor cores, …)
  ============== ================== ======================================================

  0.8 and 1.2 are ``as-predicted``, 2 ``below-prediction``. Ratios are rounded to 9 decimals
  before banding so that a time typed as exactly 1.2 × the prediction is not judged on a
  rounding error.
"""

from __future__ import annotations

import functools
import math
from dataclasses import field, replace
from typing import Any

from workbench.model.dtypes import PRECISIONS
from workbench.model.limits import text_problem
from workbench.model.operations import Operation
from workbench.model.roofline import Result
from workbench.model.rules import attainable
from workbench.model.rules import intensity as intensity_of
from workbench.model.units import MAX_MAGNITUDE, MIN_MAGNITUDE, magnitude_problem
from workbench.records import record

__all__ = [
    "Measurement",
    "MEMORY_LEVELS",
    "MAX_COUNT",
    "Verdict",
    "VERDICTS",
    "verdict_for",
    "overhead_verdict",
    "overhead_s",
    "OVERHEAD_SLACK",
    "Judgement",
    "judge",
    "roof_at",
]


@record
class Measurement:
    """One measured kernel. Rates and sizes in base SI units (s, FLOP/s, FLOP, B).

    ``operation`` is the *name* of an operation of the session, or ``None`` for a standalone
    measurement (which then needs ``flops`` and ``bytes``). ``hardware`` is a preset id, a
    machine id or a machine name of the session, or ``None``: judged on every machine of the
    session. At least one of ``time_s`` and ``achieved_flops`` is needed. ``precision`` is the
    compute precision of a standalone measurement's ceiling (default ``bf16``); an attached one
    uses its operation's.
    """

    name: str
    operation: str | None = None
    hardware: str | None = None
    time_s: float | None = None
    achieved_flops: float | None = None
    flops: float | None = None
    bytes: float | None = None
    precision: str | None = None
    source: str = ""
    #: Bytes moved at each memory level a profiler counted, per dispatch: ``l1``, ``l2``,
    #: ``dram`` (see :data:`MEMORY_LEVELS`); ``None`` when only ``bytes`` is known. ``bytes``
    #: is the main-memory (``dram``) figure.
    levels: dict[str, float] | None = None
    #: The unit the work ran on (``matrix``: tensor cores; ``vector``: CUDA cores / SIMT),
    #: whose peak is its roof; ``None``: the matrix peak (the custom operation's default).
    unit: str | None = None
    #: How many dispatches of one kernel (same name, same shape) this point stands for;
    #: ``time_s``, ``flops``, ``bytes`` and ``levels`` are then the mean of one dispatch.
    count: int = 1
    #: The run (profile) this point came from, to compare runs of one program; ``None``: none.
    run: str | None = None

    @property
    def total_time_s(self) -> float | None:
        """GPU time of every dispatch this point stands for: count × time."""
        return None if self.time_s is None else self.count * self.time_s

    @property
    def standalone(self) -> bool:
        return self.operation is None

    def problems(self) -> list[tuple[str, str]]:
        """``[(field, problem), …]``; empty when the measurement can be judged."""
        out: list[tuple[str, str]] = []
        if not isinstance(self.name, str) or not self.name.strip():
            out.append(("name", "a measurement needs a name"))
        for key, kind in (("name", "measurement"), ("operation", "measurement"),
                          ("hardware", "measurement"), ("source", "source")):
            text = getattr(self, key)
            problem = text_problem(text, kind) if isinstance(text, str) else None
            if problem is not None:
                out.append((key, problem))
        out.extend(self._range_problems())
        if self.time_s is None and self.achieved_flops is None:
            out.append(("time_s", "needs a measured time (time) or an achieved FLOP/s "
                                  "(achieved)"))
        if self.standalone:
            for key in ("flops", "bytes"):
                if getattr(self, key) is None:
                    out.append((key, f"a standalone measurement (no operation) needs {key}: "
                                     "the FLOPs and bytes its prediction is made from"))
            if self.time_s is None and self.achieved_flops is not None and not self.flops:
                out.append(("time_s", "an achieved FLOP/s alone gives no time when flops is 0"))
        if self.precision is not None and self.precision not in PRECISIONS:
            out.append(("precision", f"unknown precision {self.precision!r}; one of: "
                                     f"{', '.join(PRECISIONS)}"))
        out.extend(self._levels_problems())
        if self.unit is not None and self.unit not in ("matrix", "vector"):
            out.append(("unit", f"unknown unit {self.unit!r}; one of: matrix, vector"))
        if (not isinstance(self.count, int) or isinstance(self.count, bool)
                or not 1 <= self.count <= MAX_COUNT):
            out.append(("count", f"must be a whole number from 1 to {MAX_COUNT}, got "
                                 f"{self.count!r}"))
        if self.run is not None:
            problem = text_problem(self.run, "measurement") if isinstance(self.run, str) \
                else "must be text"
            if problem is not None:
                out.append(("run", problem))
        return out

    def _range_problems(self) -> list[tuple[str, str]]:
        """The numbers outside their limits: FLOPs and bytes 0 or within range, the others
        positive and within range."""
        out: list[tuple[str, str]] = []
        for key, (low, high, unit) in _LIMITS.items():
            value = getattr(self, key)
            if value is None:
                continue
            if key in ("flops", "bytes"):
                if not (_finite(value) and value >= 0):
                    out.append((key, f"must be a number ≥ 0, got {value!r}"))
                elif value != 0 and not low <= value <= high:
                    out.append((key, f"must be 0 or between {low:g} and {high:g} {unit}, "
                                     f"got {value:g}"))
            elif not (_finite(value) and value > 0):
                out.append((key, f"must be a positive number, got {value!r}"))
            elif not low <= value <= high:
                out.append((key, f"must be between {low:g} and {high:g} {unit}, got {value:g}"))
        return out

    def _levels_problems(self) -> list[tuple[str, str]]:
        """What is wrong with the bytes per memory level (none when there are none)."""
        if self.levels is None:
            return []
        if not isinstance(self.levels, dict):
            return [("levels", "must map memory levels to bytes")]
        out: list[tuple[str, str]] = []
        for level, value in self.levels.items():
            if level not in MEMORY_LEVELS:
                out.append(("levels", f"unknown memory level {level!r}; one of: "
                                      f"{', '.join(MEMORY_LEVELS)}"))
            elif not (_finite(value) and value >= 0):
                out.append(("levels", f"{level}: must be a number of bytes ≥ 0, got "
                                      f"{value!r}"))
            elif magnitude_problem(value) is not None:  # (as a session file's, to reopen)
                out.append(("levels", f"{level}: {magnitude_problem(value)}"))
        return out

    def as_operation(self) -> Operation:
        """A standalone measurement's own prediction: a custom operation with its FLOPs and
        bytes at its precision."""
        params = {"flops": float(self.flops or 0.0), "bytes": float(self.bytes or 0.0),
                  "precision": self.precision or "bf16"}
        if self.unit is not None:
            params["unit"] = self.unit
        return Operation("custom", params, self.name)

    def copy(self) -> Measurement:
        fields = dict(self.__dict__)
        if self.levels is not None:
            fields["levels"] = dict(self.levels)
        return Measurement(**fields)


#: The memory levels a profiler's bytes are counted at, innermost first.
MEMORY_LEVELS: tuple[str, ...] = ("l1", "l2", "dram")
#: The most dispatches one grouped point may stand for.
MAX_COUNT = 10**9

#: Plausible ranges (base units) that keep every derived number finite, within the range of
#: every quantity a session file holds (:data:`~workbench.model.units.MAX_MAGNITUDE`).
_LIMITS = {"time_s": (1e-12, 1e9, "s"), "achieved_flops": (1.0, MAX_MAGNITUDE, "FLOP/s"),
           "flops": (MIN_MAGNITUDE, MAX_MAGNITUDE, "FLOP"),
           "bytes": (MIN_MAGNITUDE, MAX_MAGNITUDE, "B")}


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@record(frozen=True)
class Verdict:
    """A band of measured time over T_predicted, ``low < r ≤ high`` (``as-predicted``:
    ``low ≤ r ≤ high``), and what it suggests; ``overhead-bound`` has no band of its own."""
    key: str
    low: float
    high: float
    label: str


VERDICTS: tuple[Verdict, ...] = (
    Verdict("re-measure", -math.inf, 0.8,
            "< 0.8 × predicted: re-measure (cache, timer) or check the machine's figures"),
    Verdict("as-predicted", 0.8, 1.2, "0.8–1.2 × predicted: as predicted"),
    Verdict("below-prediction", 1.2, 2.0, "1.2–2 × predicted: slower than predicted, room to "
                                          "improve"),
    Verdict("likely-bug", 2.0, math.inf, "> 2 × predicted: likely a bug"),
    Verdict("overhead-bound", math.nan, math.nan,
            "overhead-bound: launch and start-up outweigh the work, and the kernel meets "
            "its prediction"),
)
#: How close to its prediction a point in the overhead regime must come to be called so.
OVERHEAD_SLACK = 1.2


def verdict_for(ratio: float) -> Verdict:
    """The band of a measured time over T_predicted (0.8 and 1.2 as predicted, 2 slower)."""
    if not isinstance(ratio, int | float) or math.isnan(ratio):
        raise ValueError(f"ratio must be a number, got {ratio!r}")
    r = round(float(ratio), 9)
    if r < 0.8:
        return VERDICTS[0]
    if r <= 1.2:
        return VERDICTS[1]
    if r <= 2.0:
        return VERDICTS[2]
    return VERDICTS[3]


def overhead_verdict(result: Result) -> Verdict:
    """``overhead-bound`` with the launch and start-up seconds of ``result`` in its label."""
    return _overhead_verdict(overhead_s(result))


@functools.lru_cache(maxsize=256)
def _overhead_verdict(fixed: float) -> Verdict:
    """(Imported kernels share a few launch costs: each label is written once.)"""
    from workbench.model.units import format_quantity

    return replace(VERDICTS[4], label=f"overhead-bound: {format_quantity(fixed, 'time')} of "
                                      "launch and start-up")


@functools.lru_cache(maxsize=256)
def _overhead_note(fixed: float) -> str:
    from workbench.model.units import format_quantity

    return (f"predicted overhead-bound ({format_quantity(fixed, 'time')} of launch and "
            "start-up outweigh the work): the fraction of the roof is low however well the "
            "kernel runs; the fix for wall-clock time is fusion or CUDA graphs, not the kernel")


def overhead_s(result: Result) -> float:
    """Seconds of launch and start-up in a prediction: kernels × (launch + start-up) in the
    calibrated prediction (at least the eager floor), kernels × launch overhead in the
    derated one."""
    if result.calibrated is not None:
        return max(result.t_fixed_s, result.calibrated.floor * result.kernels)
    return (result.launch_overhead_s or 0.0) * result.kernels


@record(frozen=True)
class Judgement:
    """A measurement held against its prediction.

    ``measured_intensity`` uses the measured FLOPs and bytes where given (else the predicted
    ones): with ``achieved_flops`` it places the measured point on the chart; ``predicted_*``
    place the prediction it is linked to.
    """

    measurement: str
    operation: str | None
    hardware: str
    measured_time_s: float
    flops: float
    bytes: float
    achieved_flops: float
    achieved_bandwidth: float | None
    measured_intensity: float | None
    predicted_time_s: float
    predicted_attainable_flops: float
    predicted_intensity: float
    predicted_bound: str
    fraction: float
    verdict: str
    verdict_label: str
    notes: tuple[str, ...] = field(default=())
    #: Faster than the roofline allows at the measured intensity (see :func:`roof_at`).
    above_roof: bool = False
    #: Measured bytes over the operation's ideal bytes (``None`` when bytes were not measured
    #: or the point is standalone).
    bytes_ratio: float | None = None
    #: The prediction's T_predicted (with the machine's efficiency or calibration).
    t_predicted_s: float | None = None

    @property
    def vs_predicted(self) -> float | None:
        """Measured time / T_predicted: 1 where the prediction meets the kernel."""
        if not self.t_predicted_s:
            return None
        return self.measured_time_s / self.t_predicted_s

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["notes"] = list(self.notes)
        return out


def judge(measurement: Measurement, result: Result, *, checked: bool = False) -> Judgement:
    """Hold ``measurement`` against its predicted ``result`` (see the module docstring).
    ``checked``: the caller has found no :meth:`~Measurement.problems` in it already."""
    problems = [] if checked else measurement.problems()
    if problems:
        key, problem = problems[0]
        raise ValueError(f"measurement {measurement.name!r}: {key}: {problem}")
    flops = float(measurement.flops) if measurement.flops is not None else result.flops
    nbytes = float(measurement.bytes) if measurement.bytes is not None else result.bytes
    notes: list[str] = []
    if measurement.time_s is not None:
        t = float(measurement.time_s)
        achieved = flops / t
        if measurement.achieved_flops is not None and not math.isclose(
                measurement.achieved_flops, achieved, rel_tol=0.01):
            notes.append(
                f"achieved FLOP/s given ({measurement.achieved_flops:.4g}) differs from "
                f"FLOPs / time ({achieved:.4g}); the time is used")
    else:
        assert measurement.achieved_flops is not None  # (a measurement gives one of the two)
        achieved = float(measurement.achieved_flops)
        if flops <= 0:
            raise ValueError(f"measurement {measurement.name!r}: an achieved FLOP/s needs FLOPs "
                             "to give a time")
        t = flops / achieved
    fraction = result.t_lower_s / t
    ratio = t / result.t_predicted_s if result.t_predicted_s > 0 else math.inf
    if result.bound == "overhead" and round(ratio, 9) <= OVERHEAD_SLACK:
        verdict = overhead_verdict(result)
    else:
        verdict = verdict_for(ratio)
    if measurement.flops is not None and result.flops and not math.isclose(
            measurement.flops, result.flops, rel_tol=0.05):
        notes.append(f"measured FLOPs differ from the model's by "
                     f"{100 * (measurement.flops / result.flops - 1):+.0f} %")
    bytes_ratio = None
    if measurement.bytes is not None and result.bytes and measurement.operation is not None:
        bytes_ratio = float(measurement.bytes) / result.bytes
    if bytes_ratio is not None and not math.isclose(bytes_ratio, 1.0, rel_tol=0.05):
        from workbench.model.units import format_quantity

        notes.append(f"measured bytes: moved {format_quantity(nbytes, 'bytes', 4)} where "
                     f"{format_quantity(result.bytes, 'bytes', 4)} is the ideal: "
                     f"{bytes_ratio:.2f} ×"
                     + (" (fewer: cache hits?)" if bytes_ratio < 1 else ""))
    # no bytes measured: no measured intensity (the predicted one stands in)
    measured_at = intensity_of(flops, nbytes) if nbytes else None
    above = achieved > roof_at(result, measured_at) * (1 + 1e-9)
    if above:
        notes.append("above its roof: check the counting or the peak (or the timer, or whether "
                     "the data stayed in cache)")
    if measurement.operation is not None and result.attainable_flops > 0:
        from workbench.model.units import format_quantity

        notes.append(f"achieved {format_quantity(achieved, 'flop_rate')} of the "
                     f"{format_quantity(result.attainable_flops, 'flop_rate')} attainable "
                     f"({100 * achieved / result.attainable_flops:.0f} %)")
    if result.bound == "overhead":
        notes.append(_overhead_note(overhead_s(result)))
    return Judgement(
        measurement=measurement.name,
        operation=measurement.operation,
        hardware=result.hardware,
        measured_time_s=t,
        flops=flops,
        bytes=nbytes,
        achieved_flops=achieved,
        achieved_bandwidth=nbytes / t if nbytes else None,
        measured_intensity=measured_at,
        predicted_time_s=result.t_lower_s,
        predicted_attainable_flops=result.attainable_flops,
        predicted_intensity=result.intensity,
        predicted_bound=result.bound,
        fraction=fraction,
        verdict=verdict.key,
        verdict_label=verdict.label,
        notes=tuple(notes),
        above_roof=above,
        bytes_ratio=bytes_ratio,
        t_predicted_s=result.t_predicted_s,
    )


def roof_at(result: Result, intensity: float | None) -> float:
    """The roof a measured point is held to: min(peak, I × bandwidth) of its prediction's
    machine at the measured intensity ``intensity`` (the predicted one when not measured)."""
    if intensity is None or not intensity > 0:
        return result.attainable_flops
    return attainable(intensity, result.peak_flops, result.bandwidth)
