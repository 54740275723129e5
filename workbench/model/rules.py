"""The roofline's rules, each written once: every number the engine, the chart, the sweeps,
the dialogs and the tables show of intensity, ridge, attainable FLOP/s, the side of the ridge
and the calibrated work time comes from these functions, and every formula text the user
reads comes from :data:`FORMULAS` (a test reads the sources to keep it so).

Each takes Python floats or numpy arrays (elementwise) and follows IEEE arithmetic.

**Zero bytes.** An operation that moves no bytes has an infinite intensity (``F / 0 = +∞``
FLOP/byte): it lies right of every ridge, compute-bound, its attainable rate the peak. With no
FLOPs either (``0 / 0``) there is no work and the intensity is NaN ("—" in a table); a
machine with no bandwidth has an infinite ridge the same way.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["FORMULAS", "attainable", "compute_bound", "divide", "formula", "intensity",
           "ridge", "t_work"]

#: the formula texts, one per rule: the derivation, the conventions, the guide and the
#: command line show these, never a copy
FORMULAS: dict[str, str] = {
    "intensity": "I = FLOPs / bytes",
    "ridge": "ridge = peak / bandwidth",
    "attainable": "attainable = min(peak, I × bandwidth)",
    "t_math": "T_math = FLOPs / peak",
    "t_mem": "T_mem = bytes / bandwidth",
    "t_lower": "T_lower = max(T_math, T_mem) (+ link latency, for a collective)",
    "t_upper": "T_upper = T_math + T_mem (+ link latency, for a collective)",
    "fraction_of_peak": "% of peak = attainable / peak",
    "t_predicted": "T_predicted = max(T_lower / efficiency, kernels × launch overhead)",
    "bound": "overhead if T_lower / efficiency < kernels × launch overhead; else compute if "
             "T_math ≥ T_mem; else memory",
    "t_work": "T_work = max(T_math / e_math, T_mem / e_mem)",
    "t_fixed": "T_fixed = kernels × (launch + start-up)",
    "t_predicted_calibrated": "T_predicted = max(T_fixed + T_work, kernels × launch floor)",
    "bound_calibrated": "overhead if T_work < T_fixed or T_fixed + T_work < kernels × launch "
                        "floor; else compute if T_math ≥ T_mem; else memory",
}


def formula(key: str) -> str:
    """The right-hand side of a formula of :data:`FORMULAS` (``"peak / bandwidth"`` for the
    ridge), to write out with the values substituted."""
    return FORMULAS[key].split(" = ", 1)[1]


def divide(a: Any, b: Any) -> Any:
    """``a / b`` with IEEE results on floats as on arrays: ``x / 0`` is ±∞, ``0 / 0`` NaN."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.divide(a, b)
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def intensity(flops: Any, nbytes: Any) -> Any:
    """Arithmetic intensity, FLOP/byte: ``I = FLOPs / bytes`` (zero bytes: +∞)."""
    return divide(flops, nbytes)


def ridge(peak: Any, bandwidth: Any) -> Any:
    """The ridge point, FLOP/byte: ``peak / bandwidth``, where the sloped roof meets the flat."""
    return divide(peak, bandwidth)


def attainable(intensity: Any, peak: Any, bandwidth: Any) -> Any:
    """Attainable FLOP/s at ``intensity``: ``min(peak, I × bandwidth)`` (NaN stays NaN)."""
    slope = intensity * bandwidth
    if isinstance(slope, np.ndarray) or isinstance(peak, np.ndarray):
        if isinstance(slope, np.ndarray) and slope.flags.writeable and np.shape(peak) in (
                (), slope.shape):
            return np.minimum(slope, peak, out=slope)  # (a fresh array: written in place)
        return np.minimum(slope, peak)
    if slope != slope or peak != peak:
        return math.nan
    return slope if slope <= peak else peak


def compute_bound(t_math: Any, t_mem: Any) -> Any:
    """The side of the ridge: compute-bound where ``T_math ≥ T_mem`` (at the ridge itself
    too), else memory-bound. ``T_math ≥ T_mem`` is ``I ≥ ridge`` written in times."""
    return t_math >= t_mem


def t_work(t_math: Any, t_mem: Any, e_math: float, e_mem: float) -> Any:
    """The calibrated prediction's work time: ``max(T_math / e_math, T_mem / e_mem)``."""
    a, b = t_math / e_math, t_mem / e_mem
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.maximum(a, b)
    if a != a or b != b:
        return math.nan
    return a if a >= b else b
