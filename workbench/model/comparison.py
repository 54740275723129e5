"""Compared pairs (fused vs unfused, naive vs flash) and one operation across machines.

A :class:`~workbench.model.session.Comparison` names two operations; on each machine the
roofline predicts both, and the pair view shows what changing from the first (the baseline)
to the second buys:

* ``bytes_saved = bytes(first) − bytes(second)`` (negative: the second moves more bytes);
* ``flops_added = flops(second) − flops(first)`` (recomputation, e.g. FlashAttention's
  backward pass, shows up here);
* ``speedup = T_predicted(first) / T_predicted(second)``, where ``T_predicted =
  max(T_lower / efficiency, kernels × launch overhead)``: the same predicted time the results
  show, so an unfused chain pays one launch per step (fusing saves launches as well as
  bytes). On a machine without a launch overhead this is ``t_lower(first) / t_lower(second)``.

No Qt here; :mod:`workbench.ui.chart.canvas` draws the link and the tooltip reads these numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.model.analysis import Pair
from workbench.model.roofline import Result
from workbench.model.session import Comparison, Session
from workbench.records import record

__all__ = ["PairComparison", "compare_results", "compare_session", "across_machines",
           "SPEEDUP_FORMULA"]

SPEEDUP_FORMULA = ("speed-up = T_predicted(first) / T_predicted(second), T_predicted = "
                   "max(max(T_math, T_mem) / efficiency, kernels × launch overhead)")


@record(frozen=True)
class PairComparison:
    """Two operations of a compared pair on one machine."""

    first: str
    second: str
    hardware: str
    hw_id: int
    first_result: Result
    second_result: Result

    @property
    def bytes_saved(self) -> float:
        return self.first_result.bytes - self.second_result.bytes

    @property
    def flops_added(self) -> float:
        return self.second_result.flops - self.first_result.flops

    @property
    def speedup(self) -> float:
        return self.first_result.t_predicted_s / self.second_result.t_predicted_s

    @property
    def intensity_ratio(self) -> float:
        return self.second_result.intensity / self.first_result.intensity

    def as_dict(self) -> dict[str, Any]:
        return {"first": self.first, "second": self.second, "hardware": self.hardware,
                "bytes_saved": self.bytes_saved, "flops_added": self.flops_added,
                "speedup": self.speedup, "intensity_ratio": self.intensity_ratio,
                "t_first_s": self.first_result.t_predicted_s,
                "t_second_s": self.second_result.t_predicted_s}


def compare_results(comparison: Comparison, first: Pair, second: Pair) -> PairComparison | None:
    """The pair on one machine, or ``None`` when either side cannot be evaluated there."""
    if first.result is None or second.result is None:
        return None
    if first.result.t_predicted_s <= 0 or second.result.t_predicted_s <= 0:
        return None
    return PairComparison(comparison.first, comparison.second, first.hardware.hardware.label,
                          first.hardware.id, first.result, second.result)


def compare_session(session: Session, pairs: Sequence[Pair]) -> list[PairComparison]:
    """Every compared pair on every machine, from evaluated ``pairs`` (as
    :func:`~workbench.model.analysis.evaluate_session` gives them)."""
    by_key = {(p.operation.operation.name, p.hardware.id): p for p in pairs}
    out = []
    for comparison in session.comparisons:
        for hw in session.hardware:
            a = by_key.get((comparison.first, hw.id))
            b = by_key.get((comparison.second, hw.id))
            if a is None or b is None:
                continue
            compared = compare_results(comparison, a, b)
            if compared is not None:
                out.append(compared)
    return out


def across_machines(pairs: Sequence[Pair], op_id: int) -> list[Result]:
    """One operation's results on every machine it could be evaluated on, fastest first
    (predicted time, then lower bound)."""
    results = [p.result for p in pairs if p.operation.id == op_id and p.result is not None]
    return sorted(results, key=lambda r: (r.t_predicted_s, r.t_lower_s))
