"""What the chart's marks say: the values on its labels and the read-outs of hovered marks.

Plain text, no Qt: a swept parameter's value (``"255.5"``), a ridge crossing's label
(``"m* = 255.5"``), a compared pair's (``"−268 MB, 2.33× faster"``), and what a sweep's sample
and its crossing of a ridge say when hovered, the same on the chart's sweep path and in the
sweep plot.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from workbench.model.units import format_number, format_quantity

if TYPE_CHECKING:
    from workbench.model.sweeps import Crossing

__all__ = ["crossing_label", "crossing_text", "pair_label", "sample_text", "trimmed",
           "value_text"]


def trimmed(text: str) -> str:
    """``"255.50"`` → ``"255.5"``, ``"4.000"`` → ``"4"``: a decimal without its trailing zeros
    (one with an exponent as it is)."""
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def value_text(value: float, is_int: bool = False, digits: int = 4) -> str:
    """A parameter value as a label shows it, in the product's number format
    (:func:`~workbench.model.units.format_number`): whole numbers whole (``4096``,
    ``26267``), others to ``digits`` significant figures without trailing zeros (``255.5``,
    ``0.125``), an exponent only beyond a million or below a thousandth (``1.5e6``)."""
    if is_int and float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = format_number(value, digits)
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{trimmed(mantissa)}e{exponent}"
    return trimmed(text)


def crossing_label(param: str, value: float) -> str:
    """``"m* = 255.5"``: the real-valued parameter at which the operation meets the ridge."""
    return f"{param}* = {value_text(value)}"


def pair_label(bytes_saved: float, speedup: float) -> str:
    """``"−268 MB, 2.33× faster"``: the change in bytes moved from the first operation to the
    second (minus: fewer) and the predicted speed-up (best-case times)."""
    if bytes_saved > 0:
        moved = f"−{format_quantity(bytes_saved, 'bytes')}"
    elif bytes_saved < 0:
        moved = f"+{format_quantity(-bytes_saved, 'bytes')}"
    else:
        moved = "same bytes"
    if not math.isfinite(speedup) or speedup <= 0:
        return moved
    if math.isclose(speedup, 1.0, rel_tol=5e-4):
        return f"{moved}, same time"
    if speedup >= 1:
        return f"{moved}, {value_text(speedup, digits=3)}× faster"
    return f"{moved}, {value_text(1 / speedup, digits=3)}× slower"


def sample_text(operation: str, machine: str, param: str, value: str, intensity: float,
                attainable: float, bound: str, t_lower: float) -> str:
    """What a sweep's sample says when hovered, on the chart's path and in the sweep plot:
    the operation and machine, the swept value, and the roofline's answer there."""
    return "\n".join([
        f"{operation} on {machine}",
        f"{param} = {value}",
        f"Intensity: {format_quantity(intensity, 'intensity')}",
        f"Attainable: {format_quantity(attainable, 'flop_rate')}",
        f"Bound: {bound}",
        f"T_lower: {format_quantity(t_lower, 'time')}",
    ])


def crossing_text(operation: str, machine: str, crossing: Crossing) -> str:
    """What a sweep's crossing of a ridge says when hovered, on the chart and in the sweep
    plot: the exact value, the side it turns to, the ridge and the peak."""
    lines = [f"{operation} on {machine}",
             f"Crosses the ridge at {crossing.param} = {value_text(crossing.value, digits=6)} "
             "(exact)"]
    side = "compute" if crossing.direction == "to_compute" else "memory"
    if crossing.integer is not None:
        if crossing.direction == "to_compute":
            lines.append(f"Compute-bound from {crossing.param} = {crossing.integer}")
        else:
            lines.append(f"Compute-bound up to {crossing.param} = {crossing.integer}")
    else:
        lines.append(f"{side.capitalize()}-bound above it")
    lines.append(f"Ridge {format_quantity(crossing.ridge, 'intensity')} "
                 f"({crossing.level}), peak {format_quantity(crossing.peak_flops, 'flop_rate')}")
    return "\n".join(lines)
