"""Cells of the tables the product writes for spreadsheets: CSV files (``analyze --format
csv``, Export Results as CSV) and tab-separated text on the clipboard (Copy, Copy All).

A spreadsheet runs a cell whose text begins with ``=``, ``+``, ``-`` or ``@`` (or a tab,
carriage return or line feed before one) as a formula, so an operation named
``=cmd|' /C calc'!A0`` could run a program when the table is opened. :func:`spreadsheet_cell`
writes such text with a leading ``'``, which spreadsheets show as plain text; numbers stay
numbers (a negative number is written as a number, not as text).

Rows of a CSV file (:func:`csv_text`) end with CR LF, as RFC 4180 says, and a field holding
a carriage return or a line feed is quoted, so that no text in a name can start a row of
its own. Tab-separated text (:func:`tsv_text`) has no quoting: tabs and line breaks inside
a cell become spaces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["FORMULA_STARTS", "spreadsheet_cell", "csv_text", "tsv_text", "RESULT_COLUMNS",
           "result_header", "result_cells", "skipped_cells"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


def spreadsheet_cell(value: Any) -> Any:
    """``value`` as a cell: text a spreadsheet would run as a formula gets a leading ``'``;
    anything else (numbers, None) is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    """``rows`` as CSV text (RFC 4180): every row ends with CR LF, a field holding a comma,
    a quote, CR or LF is quoted, and text a spreadsheet would run as a formula gets a
    leading ``'`` (:func:`spreadsheet_cell`); ``None`` is an empty field."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")  # (quotes any field with CR or LF)
    for row in rows:
        writer.writerow(["" if v is None else spreadsheet_cell(v) for v in row])
    return buffer.getvalue()


def tsv_text(rows: Iterable[Sequence[str]]) -> str:
    """``rows`` of cell texts as tab-separated lines (the clipboard's tables): a tab, CR or
    LF inside a cell becomes a space, and a cell a spreadsheet would run as a formula gets
    a leading ``'``."""
    return "".join("\t".join(_tsv_cell(v) for v in row) + "\n" for row in rows)


def _tsv_cell(value: Any) -> str:
    text = str(spreadsheet_cell(value))
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")

# -- the Results CSV: one set of columns, one header each with its unit, for every table of
# results written for a spreadsheet (``analyze --format csv``, Export Results as CSV, Copy /
# Copy All of the Results table). Numbers are in base SI units (a fraction is a fraction,
# not a percentage); a pair that could not be evaluated is a row with its operation, its
# machine, the FLOPs and bytes where they could be counted, and the reason in ``skipped``.

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
    return [_result_cell(values.get(key)) for key in _KEYS]


def skipped_cells(operation: str, hardware: str, reason: str, flops: float | None = None,
                  nbytes: float | None = None, intensity: float | None = None) -> list[Any]:
    """The row of a pair that was not evaluated, saying why."""
    given = {"operation": operation, "hardware": hardware, "flops": flops, "bytes": nbytes,
             "intensity": intensity, "skipped": reason or "not evaluated"}
    return [_result_cell(given.get(key)) for key in _KEYS]


def _result_cell(value: Any) -> Any:
    return "" if value is None else spreadsheet_cell(value)
