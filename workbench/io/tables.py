"""Cells of the tables the product writes for spreadsheets: CSV files (``analyze --format
csv``, Export Results as CSV) and tab-separated text on the clipboard (Copy, Copy All).

A spreadsheet runs a cell whose text begins with ``=``, ``+``, ``-`` or ``@`` (or a tab or
carriage return before one) as a formula, so an operation named ``=cmd|' /C calc'!A0``
could run a program when the table is opened. :func:`spreadsheet_cell` writes such text
with a leading ``'``, which spreadsheets show as plain text; numbers stay numbers (a
negative number is written as a number, not as text).
"""

from __future__ import annotations

from typing import Any

__all__ = ["FORMULA_STARTS", "spreadsheet_cell"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: Any) -> Any:
    """``value`` as a cell: text a spreadsheet would run as a formula gets a leading ``'``;
    anything else (numbers, None) is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
