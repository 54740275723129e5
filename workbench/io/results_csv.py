"""The Results CSV: one set of columns, one header each with its unit, for every table of
results the product writes for a spreadsheet: ``analyze --format csv``, Export Results as
CSV and Copy / Copy All of the Results table. Numbers are in base SI units (a fraction is a
fraction, not a percentage); a pair that could not be evaluated is a row with its operation,
its machine, the FLOPs and bytes where they could be counted, and the reason in ``skipped``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.io.tables import spreadsheet_cell

__all__ = ["RESULT_COLUMNS", "result_header", "result_cells", "skipped_cells"]

#: (the result's field, the column's header)
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("operation", "operation"), ("hardware", "hardware"), ("precision", "precision"),
    ("precision_used", "precision_used"), ("level", "level"), ("flops", "flops [FLOP]"),
    ("bytes", "bytes [B]"), ("intensity", "intensity [FLOP/B]"),
    ("peak_flops", "peak_flops [FLOP/s]"), ("bandwidth", "bandwidth [B/s]"),
    ("ridge", "ridge [FLOP/B]"), ("attainable_flops", "attainable_flops [FLOP/s]"),
    ("fraction_of_peak", "fraction_of_peak [1]"), ("bound", "bound"),
    ("t_math_s", "t_math [s]"), ("t_mem_s", "t_mem [s]"), ("t_lower_s", "t_lower [s]"),
    ("t_upper_s", "t_upper [s]"), ("t_predicted_s", "t_predicted [s]"),
    ("efficiency", "efficiency [1]"), ("launch_overhead_s", "launch_overhead [s]"),
    ("unit", "unit"), ("ceiling_note", "ceiling_note"), ("kernels", "kernels [1]"),
    ("latency_s", "link_latency [s]"), ("t_work_s", "t_work [s]"),
    ("t_fixed_s", "t_fixed [s]"), ("skipped", "skipped"),
)
_KEYS = [key for key, _ in RESULT_COLUMNS]
_CALIBRATED_ONLY = ("t_work_s", "t_fixed_s")  # (empty for the derated prediction)


def result_header() -> list[str]:
    return [header for _, header in RESULT_COLUMNS]


def result_cells(result: Any) -> list[Any]:
    """The row of one :class:`~workbench.model.roofline.Result`, or of a mapping of its
    fields (a sweep's row), text cells made safe for a spreadsheet; a value that does not
    apply is an empty cell."""
    if isinstance(result, Mapping):
        values = dict(result)
    else:
        values = result.as_dict()
        if result.calibrated is not None:
            values.update({key: getattr(result, key) for key in _CALIBRATED_ONLY})
    return [_cell(values.get(key)) for key in _KEYS]


def skipped_cells(operation: str, hardware: str, reason: str, flops: float | None = None,
                  nbytes: float | None = None, intensity: float | None = None) -> list[Any]:
    """The row of a pair that was not evaluated, saying why."""
    given = {"operation": operation, "hardware": hardware, "flops": flops, "bytes": nbytes,
             "intensity": intensity, "skipped": reason or "not evaluated"}
    return [_cell(given.get(key)) for key in _KEYS]


def _cell(value: Any) -> Any:
    return "" if value is None else spreadsheet_cell(value)
