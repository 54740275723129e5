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

Nsight Compute CSV (``ncu --csv --page raw``)
=============================================

``ncu --csv --page raw …`` (or ``ncu --import REPORT.ncu-rep --csv --page raw``) prints a
header row of column names — ``"ID","Process ID","Process Name","Host Name","Kernel Name",
"Context","Stream","Block Size","Grid Size","Device","CC"`` and then one column per metric —
a second row with each metric's unit (empty for the descriptive columns), and one row per
profiled kernel launch. Values are quoted and large ones carry thousands separators
(``"1,234.56"``). ``ncu … python3 prog.py > out.csv`` also writes the profiled program's own
output and ncu's ``==PROF==`` lines: everything before the header row, and ``==PROF==`` lines
anywhere, are skipped, so such a file imports as it is.

Metrics needed (collect them with ``--metrics`` or a section set that includes them):

* ``gpu__time_duration.sum`` — the kernel's duration; units ``nsecond``, ``usecond``,
  ``msecond`` or ``second``;
* ``dram__bytes_read.sum`` and ``dram__bytes_write.sum`` (or their total ``dram__bytes.sum``)
  — DRAM traffic; units ``byte``, ``Kbyte``, ``Mbyte``, ``Gbyte``, ``Tbyte`` (powers of 1000;
  ``Kibyte``… are powers of 1024);
* FLOP counters, at least one of:

  - CUDA-core FLOPs from SASS thread-instruction counts (``smsp__`` or ``sm__`` prefix):
    fp32 = 2·``…_op_ffma_pred_on.sum`` + ``…_op_fadd_pred_on.sum`` + ``…_op_fmul_pred_on.sum``;
    fp64 likewise from ``dfma``/``dadd``/``dmul`` and fp16 from ``hfma``/``hadd``/``hmul``, with
    ``…`` = ``smsp__sass_thread_inst_executed``. This is the convention of Nsight Compute's own
    roofline sections (an FMA is 2 FLOPs, one per thread instruction). *Approximation:* a packed
    ``HFMA2`` does two fp16 FMAs per thread instruction, so fp16 may be undercounted up to 2×;
    transcendental (MUFU) and integer instructions are not counted.
  - tensor-core FLOPs from ``sm__ops_path_tensor_src_<TYPE>[_dst_<TYPE>].sum`` (for example
    ``sm__ops_path_tensor_src_fp16_dst_fp32.sum``, ``…_src_bf16_dst_fp32.sum``,
    ``…_src_tf32_dst_fp32.sum``, ``…_src_fp8….sum``): every such column is summed and read as
    FLOPs (a multiply-add counted as 2), the unit of Nsight Compute's tensor roofline peaks.
    *Approximation:* check it once against a GEMM of known size on your GPU and tool version.
  - only when no ``sm__ops_path_tensor_…`` column is present: ``sm__inst_executed_pipe_tensor.sum``
    × 512 FLOPs per tensor instruction, the factor Nsight Compute's tensor roofline section
    uses. *Approximation:* the true FLOPs per instruction depend on the architecture and the
    MMA shape; the imported point says so in its ``source``.

Each kernel becomes a standalone :class:`~workbench.model.measured.Measurement` (name: the
kernel name, with ``#ID`` appended when a name repeats) with its time, bytes (read + write),
FLOPs and a precision: the source type of the largest FLOP class (tensor ``fp16``/``bf16``/
``tf32``/``fp8``/…, else ``fp64``, ``fp32`` or ``fp16``; ``fp32`` when no FLOPs were counted).
Link a point to an operation afterwards by setting its ``operation``.

Every problem is an :class:`~workbench.io.errors.InputError` naming the file, the line, the
column and what is wrong: ``ncu.csv:5: gpu__time_duration.sum: expected a number, got 'abc'``.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from workbench.io.errors import InputError
from workbench.model.dtypes import PRECISIONS
from workbench.model.measured import Measurement
from workbench.model.measured_session import measurement_problems
from workbench.model.session import Session
from workbench.model.units import BINARY, DECIMAL, SMALL, QuantityError, parse_quantity, prefixed

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
]

MAX_CSV_BYTES = 64 * 1024 * 1024
TIME_COLUMNS = {"time_s": 1.0, "time_ms": 1e-3, "time_us": 1e-6, "time_ns": 1e-9}
PLAIN_COLUMNS = ("name", "operation", "hardware", *TIME_COLUMNS, "achieved_tflops", "flops",
                 "bytes", "precision", "source")

NCU_TIME = "gpu__time_duration.sum"
NCU_BYTES = ("dram__bytes_read.sum", "dram__bytes_write.sum")
NCU_BYTES_TOTAL = "dram__bytes.sum"
NCU_TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
#: FLOPs per tensor instruction assumed for ``sm__inst_executed_pipe_tensor.sum`` (fallback).
NCU_TENSOR_INST_FLOPS = 512
_SASS = "sass_thread_inst_executed_op_{op}_pred_on.sum"
#: CUDA-core FLOP classes: precision → (fma, add, mul) instruction names.
NCU_CUDA_CORE = {"fp64": ("dfma", "dadd", "dmul"), "fp32": ("ffma", "fadd", "fmul"),
                 "fp16": ("hfma", "hadd", "hmul")}
_TENSOR_RE = re.compile(r"^sm__ops_path_tensor_src_([a-z0-9]+?)(?:_dst_[a-z0-9]+)?\.sum$")

def _nsight_prefix(prefix: str) -> str:
    return "K" if prefix == "k" else prefix


_TIME_UNITS = prefixed({"second": 1.0, "s": 1.0}, {p: SMALL[p] for p in ("", "m", "u", "n")})
# Nsight Compute writes the kilo prefix as "K" (Kbyte, Kinst)
_BYTE_UNITS = {**prefixed({"byte": 1.0, "B": 1.0}, DECIMAL, spelling=_nsight_prefix),
               **prefixed({"byte": 1.0}, BINARY)}
_COUNT_UNITS = {"op": 1.0, "ops": 1.0, "flop": 1.0,
                **prefixed({"": 1.0, "inst": 1.0}, DECIMAL, spelling=_nsight_prefix)}
_MISSING = {"", "n/a", "N/A", "NA", "-"}
_THOUSANDS_RE = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")
_PLAIN_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


# ---------------------------------------------------------------------------------------------
# shared


def _read_text(path: str | os.PathLike[str]) -> tuple[str, str]:
    from workbench.io.limits import read_regular_file

    name = str(path)
    return _decode(read_regular_file(path, MAX_CSV_BYTES, "CSV file"), name), name


def _decode(raw: bytes | str, name: str | None) -> str:
    if isinstance(raw, str):
        return raw
    if b"\x00" in raw:
        raise InputError("not a text file (it contains NUL bytes)", name)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (invalid byte at offset {exc.start})", name) from None


def _rows(text: str, name: str | None) -> list[tuple[int, list[str]]]:
    """``(line, fields)`` per CSV record; ``line`` is where the record starts."""
    out: list[tuple[int, list[str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        for fields in reader:
            out.append((start, fields))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"not valid CSV: {exc}", name, reader.line_num or start) from None
    return out


def _number(text: str) -> float | None:
    """A cell as a number: ``"1,234.56"`` → 1234.56; empty or n/a → ``None``."""
    value = text.strip()
    if value in _MISSING:
        return None
    if _THOUSANDS_RE.match(value):
        value = value.replace(",", "")
    if not _PLAIN_NUMBER_RE.match(value):
        raise ValueError(f"expected a number, got {text!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"expected a finite number, got {text!r}")
    return number


def _scaled(value: float, scale: float) -> float:
    """``value × scale``, dividing by the exact power of ten for sub-unit scales so that
    1426.37 µs is 0.00142637 s, not 0.0014263699999999997."""
    if 0 < scale < 1:
        return value / round(1 / scale)
    return value * scale


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


# ---------------------------------------------------------------------------------------------
# plain CSV


def read_measurements_csv(path: str | os.PathLike[str]) -> list[Measurement]:
    """Measurements from a plain CSV file (see the module docstring for the columns)."""
    text, name = _read_text(path)
    return parse_measurements_csv(text, name)


def parse_measurements_csv(text: str | bytes, name: str | None = None) -> list[Measurement]:
    text = _decode(text, name)
    rows = [(line, fields) for line, fields in _rows(text, name) if any(f.strip() for f in fields)]
    if not rows:
        raise InputError("the file is empty (expected a header row: "
                         f"{', '.join(PLAIN_COLUMNS)})", name)
    header_line, header = rows[0]
    columns = [h.strip().lower() for h in header]
    for i, column in enumerate(columns):
        if column not in PLAIN_COLUMNS:
            import difflib

            close = difflib.get_close_matches(column, PLAIN_COLUMNS, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
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
    for line, fields in rows[1:]:
        if len(fields) != len(columns):
            raise InputError(f"has {len(fields)} fields; the header has {len(columns)}", name,
                             line)
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


# ---------------------------------------------------------------------------------------------
# Nsight Compute


def _is_ncu_header(line: str) -> bool:
    """Whether one text line is the header row of an ncu table (a ``Kernel Name`` column)."""
    if "Kernel Name" not in line:
        return False
    try:
        fields = next(csv.reader([line]), [])
    except csv.Error:
        return False
    return "Kernel Name" in (f.strip() for f in fields)


def _ncu_table(text: str) -> str:
    """``text`` with everything before ncu's header row and every ``==PROF==`` (or other
    ``==…==``) line blanked, line numbers kept. ``ncu … > out.csv`` writes the profiled
    program's own output and ncu's messages around the table; when no header row is found the
    text is returned as it is (the caller then names what is missing)."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _is_ncu_header(line)), None)
    if start is None:
        return text
    return "".join("\n" if i < start or line.startswith("==") else line
                   for i, line in enumerate(lines))


def is_ncu_csv(text: str) -> bool:
    """Whether ``text`` looks like an ``ncu --csv --page raw`` export: its first line that is
    not ncu's ``==…`` message is the table header, or the table follows the profiled program's
    own output (the plain format's header is always its first line, without this column)."""
    for line in text.splitlines():
        if line.startswith("==") or not line.strip():
            continue
        if "Kernel Name" in line:  # ncu's column; the plain format has no such column
            return True
        try:
            first = [f.strip().lower() for f in next(csv.reader([line]), [])]
        except csv.Error:
            first = []
        if first and all(f in PLAIN_COLUMNS for f in first):
            return False  # a plain header
        break
    return any(_is_ncu_header(line) for line in text.splitlines())


def read_ncu_csv(path: str | os.PathLike[str], hardware: str | None = None) -> list[Measurement]:
    """One standalone measurement per kernel of an ``ncu --csv --page raw`` export, all on
    ``hardware`` (a machine of the session, or ``None``). See the module docstring for the
    metrics needed and how FLOPs are derived."""
    text, name = _read_text(path)
    return parse_ncu_csv(text, name, hardware)


def parse_ncu_csv(text: str | bytes, name: str | None = None,
                  hardware: str | None = None) -> list[Measurement]:
    text = _ncu_table(_decode(text, name))
    rows = [(line, fields) for line, fields in _rows(text, name)
            if fields and any(f.strip() for f in fields) and not fields[0].startswith("==")]
    if not rows:
        raise InputError("no Nsight Compute table found (export with ncu --csv --page raw)", name)
    header_line, header = rows[0]
    header = [h.strip() for h in header]
    if "Kernel Name" not in header:
        raise InputError("the first row has no \"Kernel Name\" column: not an ncu --csv --page raw "
                         "export", name, header_line)
    index = {h: i for i, h in enumerate(header)}
    if NCU_TIME not in index:
        raise InputError(f"needs the metric {NCU_TIME} (kernel duration)", name, header_line)
    has_rw = all(m in index for m in NCU_BYTES)
    if not has_rw and NCU_BYTES_TOTAL not in index:
        raise InputError(f"needs the metrics {NCU_BYTES[0]} and {NCU_BYTES[1]} (or "
                         f"{NCU_BYTES_TOTAL}) for DRAM traffic", name, header_line)
    cuda_core = {}
    for precision, ops in NCU_CUDA_CORE.items():
        cols = []
        for op in ops:
            found = next((f"{prefix}__{_SASS.format(op=op)}" for prefix in ("smsp", "sm")
                          if f"{prefix}__{_SASS.format(op=op)}" in index), None)
            cols.append(found)
        if any(cols):
            cuda_core[precision] = cols
    tensor = {h: _TENSOR_RE.match(h).group(1) for h in header if _TENSOR_RE.match(h)}
    use_tensor_inst = not tensor and NCU_TENSOR_INST in index
    if not cuda_core and not tensor and not use_tensor_inst:
        raise InputError(
            "needs FLOP-counting metrics: smsp__sass_thread_inst_executed_op_{ffma,fadd,fmul}"
            "_pred_on.sum (and d…/h… for fp64/fp16), sm__ops_path_tensor_src_*.sum or "
            f"{NCU_TENSOR_INST}", name, header_line)
    if len(rows) < 2:
        raise InputError("no units row after the header (ncu --csv --page raw prints one)", name,
                         header_line + 1)
    units_line, units = rows[1]
    if len(units) != len(header):
        raise InputError(f"the units row has {len(units)} fields; the header has {len(header)}",
                         name, units_line)
    if units[index.get("ID", 0)].strip():
        raise InputError(f"the second row should hold units (its ID cell should be empty), got "
                         f"{_show(units[index.get('ID', 0)])}", name, units_line,
                         ("ID",) if "ID" in index else ())

    def scale(column: str, table: dict[str, float], what: str) -> float:
        unit = units[index[column]].strip()
        if unit not in table:
            known = ", ".join(k for k in table if k) or "none"
            raise InputError(f"unknown {what} unit {unit!r} (known: {known})", name, units_line,
                             (column,))
        return table[unit]

    t_scale = scale(NCU_TIME, _TIME_UNITS, "time")
    byte_cols = list(NCU_BYTES) if has_rw else [NCU_BYTES_TOTAL]
    b_scales = {c: scale(c, _BYTE_UNITS, "byte") for c in byte_cols}
    count_cols = [c for cols in cuda_core.values() for c in cols if c] + list(tensor)
    if use_tensor_inst:
        count_cols.append(NCU_TENSOR_INST)
    c_scales = {c: scale(c, _COUNT_UNITS, "count") for c in count_cols}

    kernels = rows[2:]
    if not kernels:
        raise InputError("no kernel rows after the units row", name, units_line)
    base = Path(name).name if name else "ncu CSV"
    names = [fields[index["Kernel Name"]].strip() if len(fields) == len(header) else ""
             for _, fields in kernels]
    repeated = Counter(names)  # (counted once: names.count per kernel was quadratic)
    out: list[Measurement] = []
    for (line, fields), kernel in zip(kernels, names, strict=True):
        if len(fields) != len(header):
            raise InputError(f"has {len(fields)} fields; the header has {len(header)}", name,
                             line)

        def cell(column: str, required: bool, _fields=fields, _line=line) -> float | None:
            try:
                value = _number(_fields[index[column]])
            except ValueError as exc:
                raise InputError(str(exc), name, _line, (column,)) from None
            if value is None and required:
                raise InputError("has no value (n/a); this metric is needed", name, _line,
                                 (column,))
            if value is not None and value < 0:
                raise InputError(f"must not be negative, got {_fields[index[column]]!r}", name,
                                 _line, (column,))
            return value

        if not kernel:
            raise InputError("the kernel has no name", name, line, ("Kernel Name",))
        duration = _scaled(cell(NCU_TIME, True), t_scale)
        if duration <= 0:
            raise InputError("the kernel duration must be positive", name, line, (NCU_TIME,))
        nbytes = sum(_scaled(cell(c, True), b_scales[c]) for c in byte_cols)
        classes: dict[str, float] = {}
        missing: list[str] = []
        for precision, (fma, add, mul) in cuda_core.items():
            total = 0.0
            for column, weight in ((fma, 2), (add, 1), (mul, 1)):
                if column is None:
                    continue
                value = cell(column, False)
                if value is None:
                    missing.append(column)
                    continue
                total += weight * value * c_scales[column]
            classes[precision] = classes.get(precision, 0.0) + total
        for column, src in tensor.items():
            value = cell(column, False)
            if value is None:
                missing.append(column)
                continue
            key = f"tensor:{src}"
            classes[key] = classes.get(key, 0.0) + value * c_scales[column]
        if use_tensor_inst:
            value = cell(NCU_TENSOR_INST, False)
            if value is None:
                missing.append(NCU_TENSOR_INST)
            else:
                classes["tensor:fp16"] = value * c_scales[NCU_TENSOR_INST] * NCU_TENSOR_INST_FLOPS
        flops = sum(classes.values())
        precision = "fp32"
        if flops > 0:
            top = max(classes, key=lambda k: classes[k])
            precision = top.split(":", 1)[-1]
            if precision not in PRECISIONS:
                precision = "fp16" if top.startswith("tensor:") else "fp32"
        ident = fields[index["ID"]].strip() if "ID" in index else str(len(out))
        label = kernel if repeated[kernel] == 1 else f"{kernel} #{ident}"
        if len(label) > 300:
            label = label[:297] + "..."
        source = f"ncu {base} ID {ident}"
        if use_tensor_inst:
            source += (f"; tensor FLOPs approximated as {NCU_TENSOR_INST} × "
                       f"{NCU_TENSOR_INST_FLOPS}")
        if missing:
            source += f"; n/a counted as 0: {', '.join(sorted(set(missing)))}"
        out.append(Measurement(name=label, hardware=hardware, time_s=duration, flops=flops,
                               bytes=nbytes, precision=precision, source=source))
    return out


# ---------------------------------------------------------------------------------------------


def load_measurements(path: str | os.PathLike[str], hardware: str | None = None
                      ) -> list[Measurement]:
    """Either format, recognised by its header. ``hardware`` is given to ncu imports (which do
    not name the GPU) and to plain rows whose hardware cell is empty."""
    text, name = _read_text(path)
    if is_ncu_csv(text):
        return parse_ncu_csv(text, name, hardware)
    measurements = parse_measurements_csv(text, name)
    if hardware is not None:
        for m in measurements:
            if m.hardware is None:
                m.hardware = hardware
    return measurements


def attach_measurements(session: Session, measurements: Iterable[Measurement],
                        file: str | None = None) -> list[Measurement]:
    """Append ``measurements`` to ``session`` after checking that each can be judged there (its
    operation and machine exist). All or nothing: the first problem raises
    :class:`InputError` naming the measurement (and its source) and nothing is added."""
    items: Sequence[Measurement] = list(measurements)
    problem = import_problem(session, items)
    if problem:
        raise InputError(problem, file)
    for m in items:
        for field_name, problem in measurement_problems(session, m):
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
