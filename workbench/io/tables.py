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

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["FORMULA_STARTS", "spreadsheet_cell", "csv_text", "tsv_text"]

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
