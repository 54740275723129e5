"""Nsight Compute CSV exports, read streaming: ``--page raw`` (one row per kernel) and
``--page details`` (the default page, ``--section …`` / ``--metrics …``: one row per metric).

How to record one (docs/measurements.md has the full command lines)::

    ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\\
    lts__t_bytes.sum,l1tex__t_bytes.sum,sm__ops_path_tensor_src_bf16_dst_fp32.sum,\\
    smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,… --csv --page raw python3 prog.py > out.csv

The file is read line by line and only the columns used are kept, so its size does not
matter; what is bounded is what is kept: at most :data:`MAX_DISPATCHES` kernel launches are
read and at most :data:`MAX_KERNELS` distinct kernels kept. Everything before the table (the
profiled program's own output) and ncu's ``==PROF==`` lines anywhere are skipped.

Metrics read (whichever the file has, first listed first):

* **time** — ``gpu__time_duration.sum``; else ``sm__cycles_elapsed.avg`` ÷
  ``sm__cycles_elapsed.avg.per_second`` (the time of Nsight Compute's own roofline sections);
* **bytes per level** (the metrics of the hierarchical roofline sections
  ``SpeedOfLight_Hierarchical*RooflineChart``):

  - ``dram`` = ``dram__bytes_read.sum`` + ``dram__bytes_write.sum``, or ``dram__bytes.sum``,
    or 32 × ``dram__sectors_read.sum`` + 32 × ``dram__sectors_write.sum``, or
    32 × ``dram__sectors.sum`` (required);
  - ``l2`` = ``lts__t_bytes.sum``, or 32 × ``lts__t_sectors.sum``;
  - ``l1`` = ``l1tex__t_bytes.sum``, or 32 × ``l1tex__t_sectors.sum``;

* **FLOPs per precision** — CUDA cores (SIMT, judged against the machine's *vector* peak):
  fp32 = 2·ffma + fadd + fmul of ``smsp__sass_thread_inst_executed_op_<op>_pred_on.sum``
  (or the ``sm__`` spelling), fp64 from dfma/dadd/dmul, fp16 from hfma/hadd/hmul; tensor
  cores (judged against the *matrix* peak): every ``sm__ops_path_tensor_src_<type>….sum``
  read as FLOPs, or, when there is none, ``sm__inst_executed_pipe_tensor.sum`` × 512 (an
  approximation the point's source names). The kernel's precision and unit are those of its
  largest class.

A kernel whose FLOPs the file cannot give is not a point: it is listed, with its time and the
reason, as not counted — a kernel that runs on tensor cores by its name (``hmma``, ``bf16``,
``fmha``, …) in a file without tensor counters (only its FFMA epilogue would be counted), or
one whose FLOP counters are all ``n/a``.

Numbers may carry thousands separators (``"1,234,567.5"``, as ncu writes them in most
locales) and are read as such; anything else that is not a number (``"1.234.567,5"``, a
decimal comma) is refused with the file, line and column.
"""

from __future__ import annotations

import csv
import functools
import io
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from workbench.io.cells import (
    BYTE_UNITS,
    COUNT_UNITS,
    PLAIN_COLUMNS,
    THOUSANDS_RE,
    TIME_UNITS,
    ImportCancelled,
    decode,
    number,
    scaled,
    show,
)
from workbench.io.errors import InputError
from workbench.model.dtypes import PRECISIONS
from workbench.model.measured import Measurement
from workbench.model.profile import MeasurementImport, NotCounted

__all__ = ["NCU_TIME", "NCU_BYTES", "NCU_TENSOR_INST_FLOPS", "MAX_DISPATCHES", "MAX_KERNELS",
           "is_ncu_csv", "read_ncu_csv", "parse_ncu_csv", "import_ncu", "import_ncu_text", "LEVEL_METRICS"]

NCU_TIME = "gpu__time_duration.sum"
NCU_CYCLES = ("sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second")
NCU_BYTES = ("dram__bytes_read.sum", "dram__bytes_write.sum")
NCU_BYTES_TOTAL = "dram__bytes.sum"
NCU_TENSOR_INST = "sm__inst_executed_pipe_tensor.sum"
#: FLOPs per tensor instruction assumed for ``sm__inst_executed_pipe_tensor.sum`` (fallback,
#: before compute capability 9.0: see :data:`NCU_TENSOR_INST_UNTIL`).
NCU_TENSOR_INST_FLOPS = 512
#: From this compute capability on (Hopper), a tensor instruction's FLOPs depend on its shape
#: (two bf16 GEMMs of one H200 export: 65,536 and 49,152 FLOPs per instruction) and kernels
#: with no matrix work count instructions there too: the fallback is not used.
NCU_TENSOR_INST_UNTIL = 9
SECTOR_BYTES = 32
#: Bytes per memory level: alternatives in order, each ``(columns, bytes per unit)``.
LEVEL_METRICS: dict[str, tuple[tuple[tuple[str, ...], int], ...]] = {
    "dram": ((NCU_BYTES, 1), ((NCU_BYTES_TOTAL,), 1),
             (("dram__sectors_read.sum", "dram__sectors_write.sum"), SECTOR_BYTES),
             (("dram__sectors.sum",), SECTOR_BYTES)),
    "l2": ((("lts__t_bytes.sum",), 1), (("lts__t_sectors.sum",), SECTOR_BYTES)),
    "l1": ((("l1tex__t_bytes.sum",), 1), (("l1tex__t_sectors.sum",), SECTOR_BYTES)),
}
_SASS = "sass_thread_inst_executed_op_{op}_pred_on.sum"
#: CUDA-core FLOP classes: precision → (fma, add, mul) instruction names.
NCU_CUDA_CORE = {"fp64": ("dfma", "dadd", "dmul"), "fp32": ("ffma", "fadd", "fmul"),
                 "fp16": ("hfma", "hadd", "hmul")}
_TENSOR_RE = re.compile(r"^sm__ops_path_tensor_src_([a-z0-9]+?)(?:_dst_[a-z0-9]+)?\.sum$")
#: Kernel names that say the work runs on tensor cores.
TENSOR_NAME_RE = re.compile(r"hmma|wgmma|tensorop|xmma|nvjet|s16816|s1688|s884|bf16|fp16|"
                            r"f16|half|fp8|e4m3|e5m2|tf32|fmha|flash", re.IGNORECASE)
#: Kernel names of matrix multiplies on tensor cores (by the instruction or the library: not
#: by a type, which elementwise kernels name too).
MMA_NAME_RE = re.compile(r"hmma|gmma|tensorop|xmma|nvjet|s16816|s1688|s884|fmha|flash",
                         re.IGNORECASE)
#: At most this many kernel launches are read from one file (about 1.2 GB of a 300-column
#: raw export); at most this many distinct kernels (name and shape) are kept.
MAX_DISPATCHES = 500_000
MAX_KERNELS = 100_000
#: At most this many points one per dispatch (the session's own bound).
MAX_POINTS = 100_000
# (newer Nsight Compute writes a clock rate as a frequency: "hz" in a CSV, "Ghz" on screen)
_RATE_UNITS = {"cycle/second": 1.0, "cycle/msecond": 1e3, "cycle/usecond": 1e6,
               "cycle/nsecond": 1e9, "cycle/s": 1.0,
               "hz": 1.0, "Khz": 1e3, "Mhz": 1e6, "Ghz": 1e9}
_CYCLE_UNITS = {"cycle": 1.0, "Kcycle": 1e3, "Mcycle": 1e6, "Gcycle": 1e9, "": 1.0}
_DETAILS = ("Metric Name", "Metric Unit", "Metric Value")
_SHAPE_COLUMNS = ("Grid Size", "Block Size")
_CHUNK = 500  # rows between progress reports and cancel checks
_BLOCK = 1 << 20  # bytes read at a time
#: The longest line read (a file without line ends is not an export, whatever its size).
MAX_LINE_BYTES = 64 << 20

Progress = Callable[[float], None]
Cancel = Callable[[], bool]


def _needed(name: str) -> bool:
    return name in _NEEDED or _TENSOR_RE.match(name) is not None


_NEEDED = {NCU_TIME, *NCU_CYCLES, NCU_TENSOR_INST, "Duration",
           *(c for alternatives in LEVEL_METRICS.values() for cols, _ in alternatives
             for c in cols),
           *(f"{prefix}__{_SASS.format(op=op)}" for prefix in ("smsp", "sm")
             for ops in NCU_CUDA_CORE.values() for op in ops)}


# ---------------------------------------------------------------------------------------------
# recognising


def _is_ncu_header(line: str) -> bool:
    """Whether one text line is the header row of an ncu table (a ``Kernel Name`` column)."""
    if "Kernel Name" not in line:
        return False
    try:
        fields = next(csv.reader([line]), [])
    except csv.Error:
        return False
    return "Kernel Name" in (f.strip() for f in fields)


def is_ncu_csv(text: str) -> bool:
    """Whether ``text`` (a file's beginning) looks like an ncu ``--csv`` export: its first line
    that is not ncu's ``==…`` message is the table header, or the table follows the profiled
    program's own output (a plain measurements CSV's header is its first line, without a
    ``Kernel Name`` column)."""
    for line in text.splitlines():
        if line.startswith("==") or not line.strip():
            continue
        if "Kernel Name" in line:
            return True
        try:
            first = [f.strip().lower() for f in next(csv.reader([line]), [])]
        except csv.Error:
            first = []
        if first and all(f in PLAIN_COLUMNS for f in first):
            return False
        break
    return any(_is_ncu_header(line) for line in text.splitlines())


# ---------------------------------------------------------------------------------------------
# records


class _Records:
    """CSV records of a byte stream, line by line: ``(line, fields)``. Lines whose every field
    is quoted and holds no quote are split directly (ncu writes every field so); any other line
    goes through the csv module, joined with the following lines while a quote is open."""

    def __init__(self, stream, name: str | None, total: int, progress: Progress | None,
                 cancel: Cancel | None) -> None:
        self.stream = stream
        self.name = name
        self.total = max(1, total)
        self.progress = progress
        self.cancel = cancel
        self.line = 0
        self.done = 0
        self.first = True

    def lines(self) -> Iterator[tuple[int, str]]:
        """``(line number, text without its line end)``, NUL and UTF-8 checked; read in
        blocks, a line at most :data:`MAX_LINE_BYTES` long."""
        pending = b""
        count = 0
        while True:
            block = self.stream.read(_BLOCK)
            data = pending + block
            if block:
                cut = data.rfind(b"\n") + 1
                pending, data = data[cut:], data[:cut]
                if len(pending) > MAX_LINE_BYTES:
                    raise InputError(f"a line longer than {MAX_LINE_BYTES // 2**20} MB: not a "
                                     "CSV export", self.name, self.line + 1)
            else:
                pending = b""
            if data:
                text = self.decode(data)
                ends = text.endswith("\n")
                rows = text.split("\n")
                if ends:
                    rows.pop()
                for row in rows:
                    self.line += 1
                    self.done += len(row) + 1  # (characters: bytes for the ASCII of a table)
                    count += 1
                    if count >= _CHUNK:
                        count = 0
                        self.tick()
                    yield self.line, row.rstrip("\r")
            if not block:
                return

    def decode(self, data: bytes) -> str:
        """``data`` (whole lines) as text, or :class:`InputError` naming the line."""
        nul = data.find(b"\x00")
        if nul >= 0:
            raise InputError("not a text file (it contains NUL bytes)", self.name,
                             self.line + data.count(b"\n", 0, nul) + 1)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            start = data.rfind(b"\n", 0, exc.start) + 1
            raise InputError(f"not UTF-8 text (invalid byte at offset {exc.start - start} of "
                             "the line)", self.name,
                             self.line + data.count(b"\n", 0, exc.start) + 1) from None
        if self.first:
            self.first = False
            text = text.removeprefix("\ufeff")
        return text

    def tick(self) -> None:
        if self.cancel is not None and self.cancel():
            raise ImportCancelled("import cancelled")
        if self.progress is not None:
            self.progress(min(1.0, self.done / self.total))

    def records(self, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, list[str]]]:
        """Records (the caller checks their width); blank lines and ncu's ``==`` lines are
        skipped."""
        for number_, text in lines:
            if not text or text.startswith("=="):
                continue
            if text[0] == '"':
                body = text.rstrip(",")
                if len(body) > 1 and body[-1] == '"':
                    fields = body[1:-1].split('","')
                    if body.count('"') == 2 * len(fields):
                        if len(body) < len(text):  # empty unquoted fields at the end
                            fields += [""] * (len(text) - len(body))
                        yield number_, fields
                        continue
            yield number_, self.parse(number_, text, lines)

    def parse(self, start: int, text: str, lines: Iterator[tuple[int, str]]) -> list[str]:
        """One record by the csv module, reading on while a quoted field is open."""
        joined = text
        while joined.count('"') % 2:
            try:
                _, more = next(lines)
            except StopIteration:
                break
            joined += "\n" + more
        try:
            rows = list(csv.reader(io.StringIO(joined, newline=""), strict=True))
        except csv.Error as exc:
            raise InputError(f"not valid CSV: {exc}", self.name, start) from None
        if len(rows) != 1:
            raise InputError("not valid CSV: a record spans lines it should not", self.name,
                             start)
        return rows[0]


# ---------------------------------------------------------------------------------------------
# the metrics of one file (or one kernel of a details export)


class _Plan:
    """Which columns give time, bytes per level and FLOPs, from the metric names present."""

    def __init__(self, names, name: str | None, line: int, where: str = "") -> None:
        names = set(names)
        self.time = NCU_TIME if NCU_TIME in names else None
        self.cycles = not self.time and all(c in names for c in NCU_CYCLES)
        self.duration_label = not self.time and not self.cycles and "Duration" in names
        if not (self.time or self.cycles or self.duration_label):
            raise InputError(f"{where}needs the metric {NCU_TIME} (kernel duration), or "
                             f"{NCU_CYCLES[0]} and {NCU_CYCLES[1]}", name, line)
        self.levels: dict[str, tuple[tuple[str, ...], int]] = {}
        for level, alternatives in LEVEL_METRICS.items():
            for cols, factor in alternatives:
                if all(c in names for c in cols):
                    self.levels[level] = (cols, factor)
                    break
        if "dram" not in self.levels:
            sections = (": this export holds Nsight Compute's sections alone (ncu --csv, or "
                        "--set roofline, whose chart is not written to CSV: percentages and "
                        "durations, no bytes or FLOPs); profile with ncu --csv --page raw "
                        f"--metrics {NCU_TIME},{NCU_BYTES_TOTAL},lts__t_bytes.sum,"
                        "l1tex__t_bytes.sum and the FLOP counters (smsp__sass_thread_inst_"
                        "executed_op_ffma_pred_on.sum, sm__ops_path_tensor_src_bf16_dst_fp32.sum"
                        ", …)") if self.duration_label else ""
            raise InputError(f"{where}needs the metrics {NCU_BYTES[0]} and {NCU_BYTES[1]} (or "
                             f"{NCU_BYTES_TOTAL}) for DRAM traffic{sections}", name, line)
        self.cuda_core: dict[str, list[str | None]] = {}
        for precision, ops in NCU_CUDA_CORE.items():
            found = [next((f"{p}__{_SASS.format(op=op)}" for p in ("smsp", "sm")
                           if f"{p}__{_SASS.format(op=op)}" in names), None) for op in ops]
            if any(found):
                self.cuda_core[precision] = found
        tensor = {h: m.group(1) for h in sorted(names) if (m := _TENSOR_RE.match(h))}
        # a type's counter (…_src_fp16, as Hopper has it) beside counters of that type by
        # accumulator (…_src_fp16_dst_fp32) would count its work twice: those are kept
        split = {src for h, src in tensor.items() if "_dst_" in h}
        self.tensor = {h: src for h, src in tensor.items()
                       if "_dst_" in h or src not in split}
        #: whether the file has tensor instructions: read as FLOPs where it has no tensor
        #: FLOP counter (``tensor_inst``), else to check that each MMA kernel was counted
        self.tensor_inst_column = NCU_TENSOR_INST in names
        self.tensor_inst = not self.tensor and self.tensor_inst_column
        if not self.cuda_core and not self.tensor and not self.tensor_inst:
            raise InputError(
                f"{where}needs FLOP-counting metrics: smsp__sass_thread_inst_executed_op_"
                "{ffma,fadd,fmul}_pred_on.sum (and d…/h… for fp64/fp16), "
                f"sm__ops_path_tensor_src_*.sum or {NCU_TENSOR_INST}", name, line)

    def columns(self) -> list[tuple[str, str]]:
        """``(column, kind)`` of every metric used; kind picks its unit table."""
        out: list[tuple[str, str]] = []
        if self.time:
            out.append((self.time, "time"))
        elif self.cycles:
            out += [(NCU_CYCLES[0], "cycles"), (NCU_CYCLES[1], "rate")]
        else:
            out.append(("Duration", "time"))
        for cols, factor in self.levels.values():
            out += [(c, "bytes" if factor == 1 else "count") for c in cols]
        out += [(c, "count") for cols in self.cuda_core.values() for c in cols if c]
        out += [(c, "count") for c in self.tensor]
        if self.tensor_inst_column:
            out.append((NCU_TENSOR_INST, "count"))
        return out


_UNIT_TABLES = {"time": (TIME_UNITS, "time"), "bytes": (BYTE_UNITS, "byte"),
                "count": (COUNT_UNITS, "count"), "cycles": (_CYCLE_UNITS, "cycle"),
                "rate": (_RATE_UNITS, "clock rate")}


def _unit_scale(unit: str, kind: str, column: str, name: str | None, line: int) -> float:
    table, what = _UNIT_TABLES[kind]
    unit = unit.strip()
    if unit not in table:
        known = ", ".join(k for k in table if k) or "none"
        raise InputError(f"unknown {what} unit {unit!r} (known: {known})", name, line, (column,))
    return table[unit]


_FAST_CELLS = re.compile(r"[0-9.eE+-]+")


@functools.lru_cache(maxsize=64)
def _exact(scales: tuple[float, ...]) -> tuple[tuple[bool, float], ...]:
    """Each scale as ``(divide, k)``: sub-unit scales divide by the exact power of ten (see
    :func:`~workbench.io.cells.scaled`)."""
    return tuple((True, round(1 / s)) if 0 < s < 1 else (False, s) for s in scales)


class _Columns:
    """The metric columns a plan uses, in order, with how each is scaled to base units and
    which must have a value; converts one row's cells to numbers."""

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.kinds = plan.columns()
        self.names = [c for c, _ in self.kinds]
        self.position = {c: j for j, c in enumerate(self.names)}
        time = [plan.time] if plan.time else list(NCU_CYCLES) if plan.cycles else ["Duration"]
        self.required = {self.position[c] for c in (*time, *plan.levels["dram"][0])}
        self.time_at = [self.position[c] for c in time]

    def convert(self, texts: list[str], scales: tuple[float, ...], name: str | None,
                lines: list[int] | int) -> list[float | None]:
        """Numbers in base units (``None``: n/a), or :class:`InputError` naming the cell."""
        plain = texts
        joined = "".join(texts)
        if "," in joined:  # thousands separators, where they group digits by three
            plain = [t.replace(",", "") if "," in t and THOUSANDS_RE.match(t) else t
                     for t in texts]
            joined = "".join(plain)
        if _FAST_CELLS.fullmatch(joined):  # the common case: plain numbers
            try:
                values = list(map(float, plain))
            except ValueError:
                values = None
            if values is not None and min(values, default=0.0) >= 0:
                return [v / k if divide else v * k
                        for v, (divide, k) in zip(values, _exact(scales), strict=True)]
        out: list[float | None] = []
        for j, (text, scale) in enumerate(zip(texts, scales, strict=True)):
            column, line = self.names[j], lines[j] if isinstance(lines, list) else lines
            try:
                value = number(text)
            except ValueError as exc:
                raise InputError(str(exc), name, line, (column,)) from None
            if value is None:
                if j in self.required:
                    raise InputError("has no value (n/a); this metric is needed", name, line,
                                     (column,))
                out.append(None)
                continue
            if value < 0:
                raise InputError(f"must not be negative, got {text!r}", name, line, (column,))
            out.append(scaled(value, scale))
        return out

    def duration(self, values: list[float | None], name: str | None, line: int) -> float:
        if len(self.time_at) == 2:
            cycles, rate = (values[j] for j in self.time_at)
            duration = cycles / rate if rate and cycles is not None else 0.0
        else:
            duration = values[self.time_at[0]] or 0.0  # (a missing time is refused below)
        if not duration > 0:
            raise InputError("the kernel duration must be positive", name, line,
                             (self.names[self.time_at[0]],))
        return duration


class _Group:
    """Dispatches of one kernel (name and shape) added up: count, Σ time, Σ each metric and
    how many dispatches had it n/a."""

    __slots__ = ("columns", "kernel", "shape", "ident", "cc", "count", "time", "sums", "na")

    def __init__(self, columns: _Columns, kernel: str, shape: str, ident: str,
                 cc: str = "") -> None:
        self.columns = columns
        self.kernel, self.shape, self.ident = kernel, shape, ident
        #: the compute capability ncu names (its ``CC`` column, "9.0"), or ""
        self.cc = cc
        self.count = 0
        self.time = 0.0
        self.sums = [0.0] * len(columns.names)
        self.na = [0] * len(columns.names)

    def add(self, duration: float, values: list[float | None]) -> None:
        self.count += 1
        self.time += duration
        sums, na = self.sums, self.na
        for j, v in enumerate(values):
            if v is None:
                na[j] += 1
            else:
                sums[j] += v

    def mean(self, column: str) -> float | None:
        """The mean over the dispatches that have the metric; ``None`` when none has it."""
        j = self.columns.position[column]
        have = self.count - self.na[j]
        return self.sums[j] / have if have else None

    def missing(self, column: str) -> bool:
        return self.na[self.columns.position[column]] > 0


@functools.lru_cache(maxsize=4096)
def _tensor_named(kernel: str) -> bool:
    return TENSOR_NAME_RE.search(kernel) is not None


def _major(cc: str) -> int:
    """The major compute capability of ncu's ``CC`` cell ("9.0" → 9; 0 when not given)."""
    head = cc.strip().split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def _evaluate(g: _Group, base: str) -> tuple[Measurement, str | None]:
    """A group of dispatches (often one) as a point of mean values, and why its FLOPs cannot
    be counted (``None`` when they can)."""
    plan = g.columns.plan
    levels: dict[str, float] = {}
    for level, (cols, factor) in plan.levels.items():
        values = [g.mean(c) for c in cols]
        if any(v is None for v in values):
            continue
        levels[level] = factor * sum(v for v in values if v is not None)
    classes: dict[str, float] = {}
    missing: list[str] = []
    counters = 0
    absent = 0

    def counted(column: str) -> float:
        nonlocal counters, absent
        counters += 1
        value = g.mean(column)
        if g.missing(column):
            missing.append(column)
        if value is None:
            absent += 1
            return 0.0
        return value * (g.count - g.na[g.columns.position[column]]) / g.count

    for precision, (fma, add, mul) in plan.cuda_core.items():
        total = 0.0
        for column, weight in ((fma, 2), (add, 1), (mul, 1)):
            if column is not None:
                total += weight * counted(column)
        classes[precision] = classes.get(precision, 0.0) + total
    for column, src in plan.tensor.items():
        key = f"tensor:{src}"
        classes[key] = classes.get(key, 0.0) + counted(column)
    shaped = _major(g.cc) >= NCU_TENSOR_INST_UNTIL  # (no FLOPs per tensor instruction)
    fallback = plan.tensor_inst and not shaped
    if fallback:
        classes["tensor:fp16"] = counted(NCU_TENSOR_INST) * NCU_TENSOR_INST_FLOPS
    flops = sum(classes.values())
    precision, unit = "fp32", "vector"
    if flops > 0:
        top = max(classes, key=lambda c: classes[c])
        unit = "matrix" if top.startswith("tensor:") else "vector"
        precision = top.split(":", 1)[-1]
        if precision not in PRECISIONS:
            precision = "fp16" if unit == "matrix" else "fp32"
    reason = None
    instructions = g.mean(NCU_TENSOR_INST) if plan.tensor_inst_column else None
    if counters and absent == counters:
        reason = "its FLOP counters are all n/a"
    elif not (plan.tensor or fallback) and _tensor_named(g.kernel):
        reason = ("runs on tensor cores (by its name) but the file has no tensor-core counters "
                  f"(sm__ops_path_tensor_src_*.sum or {NCU_TENSOR_INST}): only its CUDA-core "
                  "FLOPs would be counted")
        if plan.tensor_inst:
            reason = (f"runs on tensor cores (by its name) and {NCU_TENSOR_INST} gives no "
                      f"FLOPs on compute capability {g.cc.strip()}: a tensor instruction "
                      "does from thousands to tens of thousands of FLOPs by its shape; "
                      "profile with sm__ops_path_tensor_src_*.sum")
    elif (plan.tensor and MMA_NAME_RE.search(g.kernel)
          and not any(v for c, v in classes.items() if c.startswith("tensor:"))
          and (instructions is None or instructions > 0)):
        ran = "" if instructions is None else f" and ran {instructions:,.0f} tensor instructions"
        reason = (f"runs on tensor cores (by its name{ran}) but no tensor-core counter of the "
                  "file counted its FLOPs: the file lacks the counter of its input type "
                  "(ncu leaves out a metric the GPU does not have; on Hopper, fp16 is "
                  "sm__ops_path_tensor_src_fp16.sum)")
    source = f"ncu {base} ID {g.ident}"
    if g.count > 1:
        source += f" and {g.count - 1:,} more dispatches (means)"
    if fallback and classes.get("tensor:fp16"):
        source += (f"; tensor FLOPs approximated as {NCU_TENSOR_INST} × "
                   f"{NCU_TENSOR_INST_FLOPS}")
    if plan.cycles:
        source += f"; time = {NCU_CYCLES[0]} / {NCU_CYCLES[1]}"
    if missing and reason is None:
        source += f"; n/a counted as 0: {', '.join(sorted(set(missing)))}"
    label = g.kernel if len(g.kernel) <= 300 else g.kernel[:297] + "..."
    m = Measurement(name=label, time_s=g.time / g.count, flops=flops, bytes=levels["dram"],
                    precision=precision, source=source, unit=unit,
                    levels=levels if len(levels) > 1 else None, count=g.count)
    return m, reason


# ---------------------------------------------------------------------------------------------
# the two pages


def _dispatches(stream, name: str | None, total: int, progress: Progress | None,
                cancel: Cancel | None, gpus: set[str] | None = None) -> Iterator[tuple]:
    """``(columns, kernel, shape, ID, line, duration, values, compute capability)`` per
    kernel launch; ``gpus`` gets the GPU names a raw export gives
    (``device__attribute_display_name``)."""
    reader = _Records(stream, name, total, progress, cancel)
    lines = reader.lines()
    first: tuple[int, str] | None = None
    header_line = 0
    header: list[str] | None = None
    for number_, text in lines:
        if not text.strip() or text.startswith("=="):
            continue
        if first is None:
            first = (number_, text)
        if _is_ncu_header(text):
            header_line = number_
            header = [h.strip() for h in reader.parse(number_, text, lines)]
            break
    if header is None:
        if first is None:
            raise InputError("no Nsight Compute table found (export with ncu --csv --page raw)",
                             name)
        fields = reader.parse(first[0], first[1], iter(()))
        if "Kernel Name" not in (f.strip() for f in fields):
            raise InputError("the first row has no \"Kernel Name\" column: not an ncu --csv "
                             "export", name, first[0])
    assert header is not None  # (a file without one is refused above)
    base = Path(name).name if name else "ncu CSV"
    if all(c in header for c in _DETAILS):
        yield from _details(reader, lines, header, header_line, name, base, total)
    else:
        yield from _raw(reader, lines, header, header_line, name, base, total, gpus)


def _too_many(name, line, size: int, per_row: float) -> InputError:
    estimate = f" (about {size / per_row:,.0f} in {size / 1e9:.1f} GB)" if per_row else ""
    return InputError(f"more than {MAX_DISPATCHES:,} kernel launches{estimate}: at most "
                      f"{MAX_DISPATCHES:,} are read; profile fewer (ncu --launch-count N, "
                      "--launch-skip, -k NAME) or split the export", name, line)


def _raw(reader: _Records, lines, header: list[str], header_line: int, name, base: str,
         size: int, gpus: set[str] | None = None):
    width = len(header)
    index = {h: i for i, h in enumerate(header)}
    columns = _Columns(_Plan(index, name, header_line))
    records = reader.records(lines)
    units_row = next(records, None)
    if units_row is None:
        raise InputError("no units row after the header (ncu --csv --page raw prints one)", name,
                         header_line + 1)
    units_line, units = units_row
    if len(units) != width:
        raise InputError(f"the units row has {len(units)} fields; the header has {width}",
                         name, units_line)
    if units[index.get("ID", 0)].strip():
        raise InputError(f"the second row should hold units (its ID cell should be empty), got "
                         f"{show(units[index.get('ID', 0)])}", name, units_line,
                         ("ID",) if "ID" in index else ())
    scales = tuple(_unit_scale(units[index[column]], kind, column, name, units_line)
                   for column, kind in columns.kinds)
    at = [index[column] for column in columns.names]
    i_name = index["Kernel Name"]
    i_id = index.get("ID")
    i_cc = index.get("CC")
    i_gpu = index.get("device__attribute_display_name") if gpus is not None else None
    shape_at = [(c.split()[0].lower(), index[c]) for c in _SHAPE_COLUMNS if c in index]
    count = 0
    for line, fields in records:
        if len(fields) != width:
            raise InputError(f"has {len(fields)} fields; the header has {width}", name, line)
        count += 1
        if count > MAX_DISPATCHES:
            raise _too_many(name, line, size, reader.done / max(1, count))
        if count == 1 and size - reader.done > MAX_DISPATCHES * 1.1 * len(_joined(fields)):
            raise _too_many(name, line, size, len(_joined(fields)))  # before the work
        kernel = fields[i_name].strip()
        if not kernel:
            raise InputError("the kernel has no name", name, line, ("Kernel Name",))
        values = columns.convert([fields[i] for i in at], scales, name, line)
        duration = columns.duration(values, name, line)
        ident = fields[i_id].strip() if i_id is not None else str(count - 1)
        shape = " ".join(f"{label} {fields[i]}" for label, i in shape_at)
        cc = fields[i_cc] if i_cc is not None else ""
        if gpus is not None and i_gpu is not None and len(gpus) < 8:
            gpus.add(fields[i_gpu].strip())
        yield columns, kernel, shape, ident, line, duration, values, cc
    if count == 0:
        raise InputError("no kernel rows after the units row", name, units_line)


def _joined(fields: list[str]) -> str:
    return '"' + '","'.join(fields) + '"\n'


def _details(reader: _Records, lines, header: list[str], header_line: int, name, base: str,
             size: int):
    index = {h: i for i, h in enumerate(header)}
    i_metric, i_unit, i_value = (index[c] for c in _DETAILS)
    i_name = index["Kernel Name"]
    i_id = index.get("ID")
    i_cc = index.get("CC")
    shape_at = [(c, index[c]) for c in _SHAPE_COLUMNS if c in index]
    plans: dict[frozenset, _Columns] = {}
    current: str | None = None
    cells: dict[str, tuple[str, str, int]] = {}
    shape: dict[str, str] = {}
    kernel = cc = ""
    start = 0
    count = 0

    def finish():
        names = frozenset(cells)
        columns = plans.get(names)
        if columns is None:
            columns = plans[names] = _Columns(_Plan(names, name, start,
                                                    f"kernel ID {current} ({_short(kernel)}): "))
        used = [cells[c] for c in columns.names]
        scales = tuple(_unit_scale(unit, kind, c, name, line)
                       for (c, kind), (_text, unit, line) in zip(columns.kinds, used, strict=True))
        values = columns.convert([text for text, _, _ in used], scales, name,
                                 [line for _, _, line in used])
        duration = columns.duration(values, name, start)
        text = " ".join(f"{c.split()[0].lower()} {shape[c]}" for c in _SHAPE_COLUMNS
                        if c in shape)
        return columns, kernel, text, current, start, duration, values, cc

    need = max(i for i in (i_metric, i_unit, i_value, i_name, i_id or 0)) + 1
    for line, fields in reader.records(lines):
        if len(fields) < need:
            raise InputError(f"has {len(fields)} fields; the header has {len(header)}", name,
                             line)
        ident = fields[i_id].strip() if i_id is not None else fields[i_name]
        if ident != current:
            if current is not None:
                yield finish()
            count += 1
            if count > MAX_DISPATCHES:
                raise _too_many(name, line, size, reader.done / max(1, count))
            current, cells, start = ident, {}, line
            kernel = fields[i_name].strip()
            if not kernel:
                raise InputError("the kernel has no name", name, line, ("Kernel Name",))
            shape = {c: fields[i] for c, i in shape_at}
            cc = fields[i_cc] if i_cc is not None and i_cc < len(fields) else ""
        metric = fields[i_metric].strip()
        if metric in _SHAPE_COLUMNS and metric not in shape:
            shape[metric] = fields[i_value]
        elif _needed(metric) and metric not in cells:
            cells[metric] = (fields[i_value], fields[i_unit], line)
    if current is None:
        raise InputError("no kernel rows after the header", name, header_line)
    yield finish()


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---------------------------------------------------------------------------------------------
# public readers


def _open(path) -> tuple[BinaryIO, int, str]:
    from workbench.io.limits import open_regular_file

    stream, size = open_regular_file(path, "CSV file")
    return stream, size, os.fspath(path)


def import_ncu(path: str | os.PathLike[str], hardware: str | None = None, *,
               progress: Progress | None = None, cancel: Cancel | None = None,
               run: str | None = None) -> MeasurementImport:
    """An ncu export as one point per kernel (dispatches grouped by name and shape; see
    :class:`~workbench.model.profile.DispatchGroups`), the kernels not counted, and the
    run's totals. ``progress(fraction)`` is called and ``cancel()`` asked every few thousand
    rows; a true answer raises :class:`~workbench.io.cells.ImportCancelled`."""
    stream, size, name = _open(path)
    gpus: set[str] = set()
    with stream:
        result = _grouped(_dispatches(stream, name, size, progress, cancel, gpus), name,
                          hardware, run)
    gpus.discard("")
    if len(gpus) == 1:  # (several: the points are judged as the user says)
        result.gpu = next(iter(gpus))
    return result


def _grouped(dispatches, name, hardware, run) -> MeasurementImport:
    """Dispatches added up by kernel and shape (see :mod:`workbench.model.profile`)."""
    groups: dict[tuple, _Group] = {}
    shapes: dict[str, set[str]] = {}
    dispatches_read = 0
    gpu_time = 0.0
    base = Path(name).name if name else "ncu CSV"
    for columns, kernel, shape, ident, line, duration, values, cc in dispatches:
        dispatches_read += 1
        gpu_time += duration
        key = (kernel, shape, id(columns))
        group = groups.get(key)
        if group is None:
            if len(groups) >= MAX_KERNELS:
                raise InputError(f"more than {MAX_KERNELS:,} distinct kernels (name and launch "
                                 f"shape): at most {MAX_KERNELS:,} are kept", name, line)
            group = groups[key] = _Group(columns, kernel, shape, ident, cc)
            shapes.setdefault(kernel, set()).add(shape)
        group.add(duration, values)
    points: list[Measurement] = []
    left: dict[str, NotCounted] = {}
    for group in groups.values():
        m, reason = _evaluate(group, base)
        if reason is not None:
            item = left.setdefault(m.name, NotCounted(m.name, 0, 0.0, reason))
            item.count += group.count
            item.time_s += group.time
            continue
        if len(shapes[group.kernel]) > 1 and group.shape:
            suffix = f" [{group.shape}]"[:120]
            name_part = group.kernel
            if len(name_part) + len(suffix) > 300:
                name_part = name_part[:297 - len(suffix)] + "..."
            m.name = name_part + suffix
        m.hardware, m.run = hardware, run
        points.append(m)
    not_counted = sorted(left.values(), key=lambda n: -n.time_s)
    return MeasurementImport(name, "ncu", points, not_counted, dispatches_read, gpu_time)


def import_ncu_text(text: str | bytes, name: str | None = None, hardware: str | None = None,
                    run: str | None = None) -> MeasurementImport:
    """:func:`import_ncu` of an export already in memory."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    decode(raw, name)
    return _grouped(_dispatches(io.BytesIO(raw), name, len(raw), None, None), name, hardware,
                    run)


def read_ncu_csv(path: str | os.PathLike[str], hardware: str | None = None) -> list[Measurement]:
    """One standalone measurement per kernel launch of an ncu export, all on ``hardware`` (a
    machine of the session, or ``None``); launches whose FLOPs cannot be counted are left
    out (:func:`import_ncu` lists them)."""
    stream, size, name = _open(path)
    with stream:
        return _points(_dispatches(stream, name, size, None, None), name, hardware)


def parse_ncu_csv(text: str | bytes, name: str | None = None,
                  hardware: str | None = None) -> list[Measurement]:
    raw = text if isinstance(text, bytes) else text.encode("utf-8")
    decode(raw, name)  # whole-text checks first: NUL bytes, UTF-8
    stream = io.BytesIO(raw)
    return _points(_dispatches(stream, name, len(raw), None, None), name, hardware)


def _points(dispatches, name, hardware) -> list[Measurement]:
    """One point per counted dispatch; a name that repeats gets ``#ID``."""
    out: list[tuple[Measurement, str]] = []
    base = Path(name).name if name else "ncu CSV"
    for columns, kernel, shape, ident, line, duration, values, cc in dispatches:
        group = _Group(columns, kernel, shape, ident, cc)
        group.add(duration, values)
        m, reason = _evaluate(group, base)
        if reason is not None:
            continue
        if len(out) >= MAX_POINTS:
            raise InputError(f"more than {MAX_POINTS:,} kernels to keep one point each; import "
                             "grouped by kernel instead", name, line)
        m.hardware = hardware
        out.append((m, ident))
    repeated = Counter(m.name for m, _ in out)
    for m, ident in out:
        if repeated[m.name] > 1:
            m.name = f"{m.name} #{ident}"
    return [m for m, _ in out]
