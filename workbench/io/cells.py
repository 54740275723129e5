"""Cells of profiler CSV files: numbers as profilers write them, their units, the text checks.

A number is plain (``4862``, ``4.3e9``) or carries thousands separators (``"1,234,567.5"``:
groups of three digits after the first one to three), as Nsight Compute writes them in most
locales; ``n/a``, ``-`` and an empty cell are "no value". Anything else — a decimal comma
(``"1.234,5"``), groups that are not of three (``"12,34"``), a unit glued on — is refused, so
that a number is never read as another one.
"""

from __future__ import annotations

import math
import re

from workbench.io.errors import InputError
from workbench.model.units import BINARY, DECIMAL, SMALL, prefixed

__all__ = ["PLAIN_COLUMNS", "TIME_COLUMNS", "TIME_UNITS", "BYTE_UNITS", "COUNT_UNITS", "MISSING",
           "THOUSANDS_RE", "PLAIN_NUMBER_RE", "number", "scaled", "decode", "show", "ImportCancelled"]


class ImportCancelled(Exception):
    """The user cancelled a running import; nothing was changed."""


def _nsight_prefix(prefix: str) -> str:
    return "K" if prefix == "k" else prefix


TIME_UNITS = prefixed({"second": 1.0, "s": 1.0}, {p: SMALL[p] for p in ("", "m", "u", "n")})
# Nsight Compute writes the kilo prefix as "K" (Kbyte, Kinst)
BYTE_UNITS = {**prefixed({"byte": 1.0, "B": 1.0}, DECIMAL, spelling=_nsight_prefix),
              **prefixed({"byte": 1.0}, BINARY)}
COUNT_UNITS = {"op": 1.0, "ops": 1.0, "flop": 1.0,
               **prefixed({"": 1.0, "inst": 1.0, "sector": 1.0}, DECIMAL,
                          spelling=_nsight_prefix)}
#: The columns of the plain measurements format (see :mod:`workbench.io.measurements`).
TIME_COLUMNS = {"time_s": 1.0, "time_ms": 1e-3, "time_us": 1e-6, "time_ns": 1e-9}
PLAIN_COLUMNS = ("name", "operation", "hardware", *TIME_COLUMNS, "achieved_tflops", "flops",
                 "bytes", "precision", "source")
MISSING = {"", "n/a", "N/A", "NA", "-"}
THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")
PLAIN_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def number(text: str) -> float | None:
    """A cell as a number: ``"1,234.56"`` → 1234.56; empty or n/a → ``None``; anything else
    raises ``ValueError`` saying what was found."""
    value = text.strip()
    if value in MISSING:
        return None
    try:  # the common case: a plain number
        result = float(value)
    except ValueError:
        if not THOUSANDS_RE.match(value):
            raise ValueError(_not_a_number(text)) from None
        result = float(value.replace(",", ""))
    else:
        if not PLAIN_NUMBER_RE.match(value):  # float() also takes "nan", "1_000", "inf"
            raise ValueError(_not_a_number(text))
    if not math.isfinite(result):
        raise ValueError(f"expected a finite number, got {text!r}")
    return result


def _not_a_number(text: str) -> str:
    value = text.strip()
    if re.fullmatch(r"[+-]?[\d.,]+", value) and "," in value:
        return (f"expected a number, got {text!r} (thousands separators must group three "
                "digits, with a decimal point: 1,234,567.5)")
    return f"expected a number, got {text!r}"


def scaled(value: float, scale: float) -> float:
    """``value × scale``, dividing by the exact power of ten for sub-unit scales so that
    1426.37 µs is 0.00142637 s, not 0.0014263699999999997."""
    if 0 < scale < 1:
        return value / round(1 / scale)
    return value * scale


def decode(raw: bytes | str, name: str | None) -> str:
    if isinstance(raw, str):
        return raw
    if b"\x00" in raw:
        raise InputError("not a text file (it contains NUL bytes)", name)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (invalid byte at offset {exc.start})", name) from None


def show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
