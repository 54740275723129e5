"""Warnings about numbers that look wrong: they do not stop anything, they ask for a check.

* a **measured point above its roof**: the achieved FLOP/s beat what the roofline allows at
  the measured intensity, so the FLOP or byte counting, or the machine's peak, is off;
* a machine whose **figures look sparse**: int8 or fp8 more than 2× the bf16 (else fp16)
  figure of the same units, where dense ratios are 2× (vendors print 2:4-sparse figures
  beside dense ones; the model wants dense);
* a machine defined in place with **no main-memory level**: no levels at all, or a main
  level named like a cache (``l2``, ``smem``, ``vmem``…), so every operation would be
  judged against cache bandwidth.

Presets are checked by their own tests; the machine checks here apply to machines defined
or edited by hand (the caller says which).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from workbench.model.hardware import Hardware
from workbench.model.measured import roof_at
from workbench.model.session import HardwareEntry, Session
from workbench.model.units import format_number, format_quantity
from workbench.records import record

__all__ = ["Advisory", "machine_advisories", "measured_advisories", "session_advisories",
           "SPARSE_RATIO"]

#: Dense int8 and fp8 peaks are at most this many times the bf16 (or fp16) peak.
SPARSE_RATIO = 2.0
_SLACK = 1.01  # rounded vendor figures (1979 vs 2 × 989.4)
_CACHE_NAME = re.compile(r"^(l[0-9]|llc|slc|smem|shared|sram|vmem|cmem|cache|reg|tmem|tcm)",
                         re.IGNORECASE)


@record(frozen=True)
class Advisory:
    """One warning: ``kind`` (``measured-above-roof``, ``sparse-figures``,
    ``no-main-memory``), what it is about, and the message shown."""

    kind: str
    subject: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def machine_advisories(hw: Hardware) -> list[Advisory]:
    """The checks of a machine's own figures (sparse-looking peaks, no main memory)."""
    out: list[Advisory] = []
    label = hw.label
    for table_name, table in (("compute", hw.compute), ("vector_compute", hw.vector_compute)):
        base_name = "bf16" if "bf16" in table else "fp16" if "fp16" in table else None
        if base_name is None:
            continue
        base = table[base_name]
        for narrow in ("fp8", "int8"):
            value = table.get(narrow)
            if value is not None and base > 0 and value > SPARSE_RATIO * base * _SLACK:
                out.append(Advisory(
                    "sparse-figures", label,
                    f"{label}: {table_name}.{narrow} {_rate(value, narrow)} is "
                    f"{format_number(value / base)}× {table_name}.{base_name} "
                    f"{format_quantity(base, 'flop_rate')}, where dense figures are 2×: it "
                    "looks like a sparse (2:4) figure; the model wants dense peaks (halve it "
                    "if the datasheet says 'with sparsity')"))
    if not hw.memory or hw.main_memory not in hw.memory:
        out.append(Advisory(
            "no-main-memory", label,
            f"{label} has no main-memory level: give it the bandwidth of its DRAM/HBM"))
    elif _CACHE_NAME.match(hw.main_memory):
        out.append(Advisory(
            "no-main-memory", label,
            f"{label}: its main-memory level {hw.main_memory!r} looks like a cache; operations "
            "are judged against it unless they name a level: add the DRAM/HBM level and make "
            "it main memory"))
    return out


def _rate(value: float, precision: str) -> str:
    text = format_quantity(value, "flop_rate")
    return text.replace("FLOP/s", "OP/s") if precision.startswith("int") else text


def measured_advisories(points: Sequence[Any]) -> list[Advisory]:
    """Measured points (:class:`~workbench.model.measured_session.MeasuredPoint`) above their roof
    at their own intensity."""
    out: list[Advisory] = []
    for point in points:
        judgement, result = point.judgement, point.result
        if judgement is None or result is None or not judgement.above_roof:
            continue
        intensity = judgement.measured_intensity
        roof = roof_at(result, intensity)
        out.append(Advisory(
            "measured-above-roof", judgement.measurement,
            f"measured point {judgement.measurement!r} on {judgement.hardware}: "
            f"{format_quantity(judgement.achieved_flops, 'flop_rate')} is above its roof "
            f"({format_quantity(roof, 'flop_rate')} at "
            f"{format_number(intensity if intensity else result.intensity)} FLOP/B): "
            "check the counting or the peak"))
    return out


def session_advisories(session: Session, points: Sequence[Any] | None = None,
                       hand_made: Callable[[HardwareEntry], bool] | None = None
                       ) -> list[Advisory]:
    """Every warning of ``session``: machines first (those ``hand_made`` says were defined
    or edited by hand; by default those not from a preset), then measured points
    (``points`` as :func:`~workbench.model.measured_session.judge_session` gives them; judged here
    when not given)."""
    hand_made = hand_made or (lambda entry: entry.preset is None)
    out: list[Advisory] = []
    for entry in session.hardware:
        if hand_made(entry):
            out += machine_advisories(entry.hardware)
    if session.measurements:
        if points is None:
            from workbench.model.measured_session import judge_session

            points = judge_session(session)
        out += measured_advisories(points)
    return out
