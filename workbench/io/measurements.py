"""Import measured points from CSV: a plain documented format, and Nsight Compute exports.

Plain CSV
=========

A header row, then one measurement per row. Column names are case-insensitive; columns may
come in any order; unknown columns are refused (a typo would otherwise lose data)::

    name,operation,hardware,time_us,achieved_tflops,flops,bytes,precision,source
    FFN up (cuBLAS),"FFN up, prefill",h100-sxm,4862,,,,,
    my softmax,,h100-sxm,35.5,,4.3e9,"35,651,584",fp32,bench.py

========================  ======================================================================
column                    meaning
========================  ======================================================================
``name``                  required: the measured point's label
``operation``             the name of an operation of the session it verifies; empty: standalone
``hardware``              a machine of the session (name, preset id or id); empty: every machine
``time_s`` / ``time_ms``  measured time, in the column's unit; use exactly one of these columns
/ ``time_us`` /
``time_ns``
``achieved_tflops``       measured rate in TFLOP/s (10¹² FLOP/s); needed where time is empty
``flops``                 measured FLOPs (required for a standalone row)
``bytes``                 measured bytes (required for a standalone row)
``precision``             compute precision of a standalone row's ceiling (default bf16)
``source``                free text; default "FILE line N"
========================  ======================================================================

Numbers are plain (``4862``, ``4.3e9``), may use thousands separators inside quotes
(``"35,651,584"``), and ``flops`` / ``bytes`` may carry their SI unit (``4.3 GFLOP``, ``35.7 MB``).

Profiler exports
================

:func:`import_measurements` recognises each format by its beginning (:func:`detect_format`)
and reads it with its own reader, streaming: an Nsight Compute ``--csv`` export, raw or
details page (:mod:`workbench.io.ncu`: time, bytes at L1, L2 and DRAM, FLOPs per precision).
A profile's launches are grouped by kernel into one point each, and the kernels whose work
the file cannot count are listed apart (:class:`~workbench.model.profile.MeasurementImport`).

Every problem is an :class:`~workbench.io.errors.InputError` naming the file, the line, the
column and what is wrong: ``ncu.csv:5: gpu__time_duration.sum: expected a number, got 'abc'``.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from workbench.io.cells import PLAIN_COLUMNS, TIME_COLUMNS, ImportCancelled
from workbench.io.cells import PLAIN_NUMBER_RE as _PLAIN_NUMBER_RE
from workbench.io.cells import THOUSANDS_RE as _THOUSANDS_RE
from workbench.io.cells import decode as _decode
from workbench.io.cells import number as _number
from workbench.io.cells import scaled as _scaled
from workbench.io.errors import InputError
from workbench.io.ncu import (
    NCU_BYTES,
    NCU_TENSOR_INST_FLOPS,
    NCU_TIME,
    import_ncu,
    is_ncu_csv,
    parse_ncu_csv,
    read_ncu_csv,
)
from workbench.model.dtypes import PRECISIONS
from workbench.model.limits import MAX_MEASUREMENTS
from workbench.model.measured import Measurement
from workbench.model.measured_session import SessionJudge
from workbench.model.profile import MeasurementImport
from workbench.model.session import Session
from workbench.model.units import QuantityError, parse_quantity

__all__ = [
    "PLAIN_COLUMNS",
    "import_problem",
    "TIME_COLUMNS",
    "NCU_TIME",
    "NCU_BYTES",
    "NCU_TENSOR_INST_FLOPS",
    "MAX_CSV_BYTES",
    "read_measurements_csv",
    "read_ncu_csv",
    "load_measurements",
    "parse_measurements_csv",
    "parse_ncu_csv",
    "is_ncu_csv",
    "attach_measurements",
    "import_measurements",
    "detect_format",
    "MeasurementImport",
    "ImportCancelled",
    "SNIFF_BYTES",
]

#: The plain format (typed or written by a script) is read whole, up to this size; profiler
#: exports are read streaming, bounded by what they keep (see :mod:`workbench.io.ncu`).
MAX_CSV_BYTES = 64 * 1024 * 1024
#: How much of a file's beginning is read to recognise its format.
SNIFF_BYTES = 1 << 20

# ---------------------------------------------------------------------------------------------
# shared


def _read_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    from workbench.io.limits import read_regular_file

    name = str(path)
    return _decode(read_regular_file(path, MAX_CSV_BYTES, "CSV file"), name), name


def _rows(text: str, name: str | None) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` per CSV record, as they are read; ``line`` is where the record
    starts."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        for fields in reader:
            yield start, fields
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"not valid CSV: {exc}", name, reader.line_num or start) from None


# ---------------------------------------------------------------------------------------------
# plain CSV


def read_measurements_csv(path: str | os.PathLike[str]) -> list[Measurement]:
    """Measurements from a plain CSV file (see the module docstring for the columns)."""
    text, name = _read_text(path)
    return parse_measurements_csv(text, name)


def parse_measurements_csv(text: str | bytes, name: str | None = None) -> list[Measurement]:
    text = _decode(text, name)
    rows = ((line, fields) for line, fields in _rows(text, name) if any(f.strip() for f in fields))
    first = next(rows, None)
    if first is None:
        raise InputError("the file is empty (expected a header row: "
                         f"{', '.join(PLAIN_COLUMNS)})", name)
    header_line, header = first
    columns = [h.strip().lower() for h in header]
    for i, column in enumerate(columns):
        if column not in PLAIN_COLUMNS:
            import difflib

            close = difflib.get_close_matches(column, PLAIN_COLUMNS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            separator = _other_separator(column)
            if separator is not None:  # a spreadsheet's export in a locale with decimal commas
                raise InputError(f"the columns are separated by {separator!r}, not by commas: "
                                 "save the file as comma-separated CSV (with a decimal point)",
                                 name, header_line)
            raise InputError(f"unknown column {header[i].strip()!r}{hint}; columns: "
                             f"{', '.join(PLAIN_COLUMNS)}", name, header_line,
                             (header[i].strip() or f"column {i + 1}",))
        if columns.index(column) != i:
            raise InputError(f"column {column!r} appears twice", name, header_line, (column,))
    if "name" not in columns:
        raise InputError("needs a name column", name, header_line)
    times = [c for c in columns if c in TIME_COLUMNS]
    if len(times) > 1:
        raise InputError(f"give one time column, not {len(times)} ({', '.join(times)})", name,
                         header_line, (times[1],))
    if not times and "achieved_tflops" not in columns:
        raise InputError("needs a time column (time_s, time_ms, time_us or time_ns) or "
                         "achieved_tflops", name, header_line)
    base = Path(name).name if name else "CSV"
    out: list[Measurement] = []
    for line, fields in rows:
        if len(out) == MAX_MEASUREMENTS:  # (refused as it is reached, not after every row)
            raise InputError(f"holds more than {MAX_MEASUREMENTS:,} measured points; a "
                             f"session holds at most {MAX_MEASUREMENTS:,}", name, line)
        if len(fields) != len(columns):
            # ("4,862,000" unquoted is three fields: say so where a cell looks like a group)
            grouped = len(fields) > len(columns) and any(
                re.fullmatch(r"\d{3}", f.strip()) for f in fields[1:])
            raise InputError(f"has {len(fields)} fields; the header has {len(columns)}"
                             + ("; a number with thousands separators must be quoted "
                                "(\"1,234,567\")" if grouped else ""), name, line)
        cells = dict(zip(columns, fields, strict=True))
        m = Measurement(name=cells["name"].strip(), source=f"{base} line {line}")

        def number(column: str, unit: str | None = None, _cells=cells, _line=line):
            text = _cells.get(column, "")
            try:
                if unit is not None and text.strip() and not _PLAIN_NUMBER_RE.match(
                        text.strip()) and not _THOUSANDS_RE.match(text.strip()):
                    return parse_quantity(text.strip(), unit)
                return _number(text)
            except (ValueError, QuantityError) as exc:
                raise InputError(str(exc), name, _line, (column,)) from None

        for key in ("operation", "hardware"):
            value = cells.get(key, "").strip()
            setattr(m, key, value or None)
        if times:
            t = number(times[0])
            m.time_s = None if t is None else _scaled(t, TIME_COLUMNS[times[0]])
        rate = number("achieved_tflops")
        m.achieved_flops = None if rate is None else rate * 1e12
        m.flops = number("flops", "flops")
        m.bytes = number("bytes", "bytes")
        precision = cells.get("precision", "").strip()
        if precision:
            if precision not in PRECISIONS:
                raise InputError(f"unknown precision {precision!r}; one of: "
                                 f"{', '.join(PRECISIONS)}", name, line, ("precision",))
            m.precision = precision
        if cells.get("source", "").strip():
            m.source = cells["source"].strip()
        for field_name, problem in m.problems():
            column = {"time_s": times[0] if times else "achieved_tflops",
                      "achieved_flops": "achieved_tflops"}.get(field_name, field_name)
            raise InputError(problem, name, line, (column,))
        out.append(m)
    return out


def _other_separator(header: str) -> str | None:
    """``";"`` or a tab where ``header`` (one cell of a header row read with commas) is a
    header row of known columns split by it, else ``None``."""
    for separator in (";", "\t"):
        cells = [c.strip() for c in header.split(separator)]
        if len(cells) > 1 and "name" in cells and all(c in PLAIN_COLUMNS for c in cells if c):
            return separator
    return None


# ---------------------------------------------------------------------------------------------


def detect_format(path: str | os.PathLike[str]) -> str:
    """The format of a measurements file from its beginning: ``ncu`` (an Nsight Compute
    ``--csv`` export, raw or details page), ``kineto`` (a PyTorch profiler trace, by its name
    or content), ``rocprof`` (a rocprof-compute workload folder or its CSVs) or ``plain``
    (the documented columns). A new
    format is one more test here and one more branch in :func:`import_measurements`, whose
    reader returns a :class:`~workbench.model.profile.MeasurementImport`."""
    from workbench.io.limits import open_regular_file
    from workbench.io.profiles import profile_kind

    kind = profile_kind(path)  # a PyTorch trace or a rocprof-compute workload
    if kind is not None:
        return kind
    stream, _size = open_regular_file(path, "CSV file")
    with stream:
        head = stream.read(SNIFF_BYTES)
    text = head.decode("utf-8-sig", errors="replace")
    if is_ncu_csv(text):
        return "ncu"
    return "plain"


def import_measurements(path: str | os.PathLike[str], hardware: str | None = None, *,
                        progress=None, cancel=None, run: str | None = None
                        ) -> MeasurementImport:
    """Every format, recognised by :func:`detect_format`: one point per kernel (a profile's
    dispatches grouped by kernel), the kernels whose work could not be counted, and the run's
    totals. ``hardware`` is given to every point that names no machine; ``run`` names the
    run (for before/after). ``progress(fraction)`` and ``cancel()`` are called every few
    thousand rows of a profile; cancelling raises :class:`ImportCancelled`."""
    kind = detect_format(path)
    if kind == "ncu":
        result = import_ncu(path, hardware, progress=progress, cancel=cancel, run=run)
        result.vendor = "NVIDIA"  # (Nsight Compute profiles NVIDIA GPUs only)
        if hardware is None and result.gpu is not None:
            _judge_on_its_gpu(result)
        return _counted(result)
    if kind in ("kineto", "rocprof"):
        from workbench.io.profiles import import_profile

        return _counted(import_profile(path, kind, hardware, progress=progress,
                                       cancel=cancel, run=run))
    text, name = _read_text(path)
    measurements = parse_measurements_csv(text, name)
    for m in measurements:
        if m.hardware is None:
            m.hardware = hardware
        m.run = run
    total = sum(m.time_s or 0.0 for m in measurements)
    return MeasurementImport(name, "plain", measurements, [], len(measurements), total)


def _judge_on_its_gpu(result: MeasurementImport) -> None:
    """Points of an export that names its GPU (a raw page's
    ``device__attribute_display_name``) judged on that GPU's preset, which joins a session
    that lacks it, as a trace's are; a GPU no preset matches is said, its points judged on
    every machine."""
    from workbench.io.kineto import preset_for_gpu
    from workbench.io.presets import get_preset

    gpu = result.gpu
    assert gpu is not None
    preset = preset_for_gpu(gpu)
    if preset is None:
        result.notes.append(f"the export's GPU {gpu!r} matches no preset: the points are "
                            "judged on every machine of the session; name the machine to "
                            "judge them on one")
        return
    for m in result.measurements:
        if m.hardware is None:
            m.hardware = preset
    result.machines = [(get_preset(preset), preset)]
    result.notes.append(f"GPU {gpu!r}: judged on the {preset} preset")


def _counted(result: MeasurementImport) -> MeasurementImport:
    """``result``, unless none of its kernels could be counted (a trace of operators the
    workbench has no FLOP rule for): then :class:`InputError`, one line naming the file and
    the largest kernels with their reasons, and nothing is imported."""
    if result.measurements or not result.not_counted:
        return result
    kernels = sum(n.count for n in result.not_counted)
    reasons = "; ".join(n.reason if n.reason.startswith(f"{n.name}: ")
                        else f"{n.name[:60]}: {n.reason}" for n in result.not_counted[:3])
    more = len(result.not_counted) - 3
    what = ("its one GPU kernel could not be counted" if kernels == 1 else
            f"none of its {kernels:,} GPU kernels could be counted")
    raise InputError(f"{what} ({reasons}" + (f"; and {more:,} more" if more > 0 else "")
                     + "): nothing to place on the roofline", result.file)


def load_measurements(path: str | os.PathLike[str], hardware: str | None = None
                      ) -> list[Measurement]:
    """The points of :func:`import_measurements` (a profile's kernels grouped by name)."""
    return import_measurements(path, hardware).measurements


def attach_measurements(session: Session, measurements: Iterable[Measurement],
                        file: str | None = None) -> list[Measurement]:
    """Append ``measurements`` to ``session`` after checking that each can be judged there (its
    operation and machine exist). All or nothing: the first problem raises
    :class:`InputError` naming the measurement (and its source) and nothing is added."""
    items: Sequence[Measurement] = list(measurements)
    problem = import_problem(session, items)
    if problem:
        raise InputError(problem, file)
    judge = SessionJudge(session, adding=len(items))
    for m in items:
        for field_name, problem in judge.problems(m):
            where = f" ({m.source})" if m.source else ""
            raise InputError(f"measurement {m.name!r}{where}: {problem}", file,
                             path=(field_name,))
    session.measurements.extend(items)
    return list(items)


def import_problem(session: Session, added: Sequence[Measurement]) -> str | None:
    """Why ``added`` cannot join ``session``'s measured points (the session would pass its
    budget, :mod:`workbench.model.limits`), with the numbers; or ``None``."""
    from dataclasses import replace

    from workbench.model.limits import budget_problem, measurement_bytes, session_totals

    before = session_totals(session)
    after = replace(before, measurements=before.measurements + len(added),
                    bytes=before.bytes + sum(map(measurement_bytes, added)))
    problem = budget_problem(after, before)
    if problem is None:
        return None
    return f"importing {len(added):,} measured points: {problem}; nothing was imported"
