"""Import a rocprof-compute (formerly omniperf) workload folder: ``roofline.csv`` becomes a
machine, ``pmc_perf.csv`` one measured point per kernel with its bytes at each memory level.

``roofline.csv``
================

One row per GPU (``device``) with the empirical roofs the tool measured, bandwidths in GB/s
and peaks in GFLOP/s (GOP/s for int8), header spelled as AMD writes it (``HBMBw``, ``L2Bw``,
``L1Bw``, ``LDSBw``, ``FP32Flops``, ``FP64Flops``, ``MFMAF16Flops``, ``MFMABF16Flops``,
``MFMAF32Flops``, ``MFMAF64Flops``, ``MFMAI8Ops``, each with ``…Low`` / ``…High`` bounds that
are not used; names are matched without regard to case). The machine gets memory levels
``hbm`` (main memory), ``l2``, ``l1`` and ``lds``, matrix (MFMA) peaks per precision and vector
(VALU) peaks for fp32 and fp64, every figure marked as measured.

``pmc_perf.csv``
================

One row per kernel dispatch: ``Dispatch_ID``, ``Kernel_Name``, ``GPU_ID``,
``Start_Timestamp`` and ``End_Timestamp`` (ns), and the counters. FLOPs and bytes follow the
formulas of rocprof-compute's own roofline (per dispatch; a wavefront is 64 lanes, an MFMA
"MOPS" count is in units of 512 FLOPs):

* VALU FLOPs per precision p ∈ {F16, F32, F64}:
  64·(``SQ_INSTS_VALU_ADD_p`` + ``SQ_INSTS_VALU_MUL_p`` + 2·``SQ_INSTS_VALU_FMA_p`` +
  ``SQ_INSTS_VALU_TRANS_p``);
* MFMA FLOPs per precision p ∈ {F16, BF16, F32, F64}: 512·``SQ_INSTS_VALU_MFMA_MOPS_p``
  (int8: 512·``SQ_INSTS_VALU_MFMA_MOPS_I8`` operations, not added to the FLOPs);
* LDS bytes: (``SQ_LDS_IDX_ACTIVE`` − ``SQ_LDS_BANK_CONFLICT``)·4·``lds_banks_per_cu``
  (from ``sysinfo.csv``, 32 when absent);
* L1 (vL1D) bytes: 64·``TCP_TOTAL_CACHE_ACCESSES_sum``;
* L2 bytes: 64·(``TCP_TCC_READ_REQ_sum`` + ``TCP_TCC_WRITE_REQ_sum`` +
  ``TCP_TCC_ATOMIC_WITH_RET_REQ_sum`` + ``TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum``);
* HBM bytes, MI200 counters: 32·``TCC_EA_RDREQ_32B_sum`` + 64·(``TCC_EA_RDREQ_sum`` −
  ``TCC_EA_RDREQ_32B_sum``) + 64·``TCC_EA_WRREQ_64B_sum`` + 32·(``TCC_EA_WRREQ_sum`` −
  ``TCC_EA_WRREQ_64B_sum``); MI300 counters: 128·``TCC_BUBBLE_sum`` +
  32·``TCC_EA0_RDREQ_32B_sum`` + 64·(``TCC_EA0_RDREQ_sum`` − ``TCC_BUBBLE_sum`` −
  ``TCC_EA0_RDREQ_32B_sum``) + 32·(``TCC_EA0_WRREQ_sum`` − ``TCC_EA0_WRREQ_64B_sum``) +
  64·``TCC_EA0_WRREQ_64B_sum``;
* time: ``End_Timestamp`` − ``Start_Timestamp``.

The dispatches of one kernel (by ``Kernel_Name``) make one point, as rocprof-compute's own
roofline groups them: time, FLOPs and bytes per dispatch (the sums over its dispatches divided
by their number, ``count`` the dispatches), with its bytes at each level in ``levels``
(``l1``, ``l2``, and HBM as ``dram``, the main memory) so that the chart places it at each
level's intensity against that level's roof; LDS bytes are named in its source. Its unit and
precision are those of its largest FLOP class (MFMA: matrix, VALU: vector; ``fp32`` on the
vector unit when it counted no FLOPs). A dispatch of zero or negative duration is listed,
not counted.

The CSV is read one row at a time, keeping only the columns named above and a sum per kernel,
so a file of 10⁵ dispatches and a thousand columns streams in bounded memory (it grows with
the kernels, not the dispatches). Limits: the file at most :data:`MAX_PMC_BYTES`; at most
:data:`MAX_DISPATCHES` dispatches.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from workbench.io.errors import InputError
from workbench.model.hardware import Hardware
from workbench.model.measured import Measurement
from workbench.model.units import MAX_MAGNITUDE, MIN_MAGNITUDE
from workbench.records import record

__all__ = ["WorkloadImport", "read_workload", "read_roofline_csv", "read_pmc_perf",
           "is_workload", "MAX_PMC_BYTES", "MAX_DISPATCHES", "LEVELS"]

MAX_PMC_BYTES = 1 << 30           # 1 GiB
MAX_ROOFLINE_BYTES = 1 << 20
MAX_DISPATCHES = 1_000_000
#: Memory levels of a point, in the order they are listed, with their labels.
LEVELS = {"lds": "LDS", "l1": "L1", "l2": "L2", "hbm": "HBM"}

_MEMORY_COLUMNS = {"hbmbw": "hbm", "l2bw": "l2", "l1bw": "l1", "ldsbw": "lds"}
_VECTOR_COLUMNS = {"fp32flops": "fp32", "fp64flops": "fp64"}
_MFMA_RE = re.compile(r"^mfma(f16|bf16|f32|f64|f8|fp8|i8)(flops|ops)$")
_MFMA_PRECISION = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f64": "fp64", "f8": "fp8",
                   "fp8": "fp8", "i8": "int8"}

_VALU = {"F16": "fp16", "F32": "fp32", "F64": "fp64"}
_MFMA = {"F16": "fp16", "BF16": "bf16", "F32": "fp32", "F64": "fp64"}
_L2 = ("TCP_TCC_READ_REQ_sum", "TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum",
       "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum")
_HBM_MI200 = ("TCC_EA_RDREQ_32B_sum", "TCC_EA_RDREQ_sum", "TCC_EA_WRREQ_64B_sum",
              "TCC_EA_WRREQ_sum")
_HBM_MI300 = ("TCC_BUBBLE_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_EA0_RDREQ_sum",
              "TCC_EA0_WRREQ_64B_sum", "TCC_EA0_WRREQ_sum")
_LDS = ("SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT")
_L1 = "TCP_TOTAL_CACHE_ACCESSES_sum"
_REQUIRED = ("Kernel_Name", "Start_Timestamp", "End_Timestamp")


@record
class WorkloadImport:
    """A workload folder's points, the machine its ``roofline.csv`` gives (or ``None``), and
    the lines the import says."""
    measurements: list[Measurement]
    machine: Hardware | None = None
    dispatches: int = 0
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def is_workload(path: str | os.PathLike[str]) -> bool:
    """A rocprof-compute workload folder (holding ``pmc_perf.csv``) or its ``pmc_perf.csv`` /
    ``roofline.csv``."""
    p = Path(path)
    if p.is_dir():
        return (p / "pmc_perf.csv").is_file()
    return p.name in ("pmc_perf.csv", "roofline.csv")


def _open_csv(path: Path, limit: int, what: str):
    from workbench.io.limits import open_regular_file

    stream, size = open_regular_file(path, what)
    stream.close()
    if size > limit:
        raise InputError(f"file is {size / 1e6:.1f} MB; a {what} is limited to "
                         f"{limit >> 20} MB", str(path))
    return open(path, newline="", encoding="utf-8-sig", errors="strict")


def _float(text: str, name: str, line: int, column: str) -> float:
    value = text.strip()
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"expected a number, got {value[:40]!r}", name, line,
                         (column,)) from None
    if number != number or number in (float("inf"), float("-inf")):
        raise InputError(f"expected a finite number, got {value!r}", name, line, (column,))
    return number


def read_roofline_csv(path: str | os.PathLike[str], device: int | None = None,
                      gpu_model: str | None = None) -> Hardware:
    """The machine of ``roofline.csv``'s row for ``device`` (the first row when ``None``)."""
    path = Path(path)
    name = str(path)
    with _open_csv(path, MAX_ROOFLINE_BYTES, "roofline.csv") as f:
        try:
            rows = list(csv.reader(f, strict=True))
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InputError(f"not a valid CSV file: {exc}", name) from None
    rows = [r for r in rows if any(c.strip() for c in r)]
    if len(rows) < 2:
        raise InputError("needs a header row and a row per GPU (device, HBMBw, …)", name)
    header = [h.strip() for h in rows[0]]
    lower = [h.lower() for h in header]
    if "device" not in lower or "hbmbw" not in lower:
        raise InputError("not a rocprof-compute roofline.csv (no device and HBMBw columns)",
                         name, 1)
    chosen = None
    for line, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise InputError(f"has {len(row)} fields; the header has {len(header)}", name, line)
        dev = _float(row[lower.index("device")], name, line, "device")
        if device is None or int(dev) == device:
            chosen = (line, row, int(dev))
            break
    if chosen is None:
        raise _NoDeviceRow(f"has no row for device {device} (the GPU the kernels ran on)", name)
    line, row, dev = chosen
    memory: dict[str, float] = {}
    vector: dict[str, float] = {}
    compute: dict[str, float] = {}
    for column, cell in zip(header, row, strict=True):
        key = column.lower()
        if key in _MEMORY_COLUMNS:
            roofs, roof = memory, _MEMORY_COLUMNS[key]
        elif key in _VECTOR_COLUMNS:
            roofs, roof = vector, _VECTOR_COLUMNS[key]
        elif mfma_key := _MFMA_RE.match(key):
            roofs, roof = compute, _MFMA_PRECISION[mfma_key.group(1)]
        else:
            continue
        value = _float(cell, name, line, column) * 1e9
        if not value > 0:  # (checked per column: FP32Flops and MFMAF32Flops are both fp32)
            raise InputError(f"the measured roof must be positive, got {cell.strip()}", name,
                             line, (column,))
        if not value <= MAX_MAGNITUDE:  # (as every machine's figure: saved, it opens again)
            raise InputError(f"the measured roof {cell.strip()} is out of range: at most "
                             f"{MAX_MAGNITUDE / 1e9:g} (GB/s or GFLOP/s, as written)", name,
                             line, (column,))
        if not value >= MIN_MAGNITUDE:
            raise InputError(f"the measured roof {cell.strip()} is out of range: at least "
                             f"{MIN_MAGNITUDE / 1e9:g} (GB/s or GFLOP/s, as written)", name,
                             line, (column,))
        roofs[roof] = value
    for precision, value in vector.items():
        compute.setdefault(precision, value)
    model = gpu_model or "AMD GPU"
    figures = ([f"memory.{k}" for k in memory] + [f"compute.{k}" for k in compute]
               + [f"vector_compute.{k}" for k in vector])
    return Hardware(name=f"{model} GPU {dev} (rocprof-compute roofline)", compute=compute,
                    memory=memory, main_memory="hbm", id=f"rocprof-{model.lower()}-gpu{dev}",
                    vendor="AMD", kind="gpu", vector_compute=vector, measured=figures,
                    sources=[f"{path.name} device {dev}"],
                    notes=f"Empirical roofs measured by rocprof-compute ({path.name}, device "
                          f"{dev}): bandwidths in GB/s and peaks in GFLOP/s as written.")


def _sysinfo(folder: Path) -> dict[str, str]:
    path = folder / "sysinfo.csv"
    if not path.is_file():
        return {}
    try:
        with _open_csv(path, MAX_ROOFLINE_BYTES, "sysinfo.csv") as f:
            rows = list(csv.reader(f))
    except (csv.Error, UnicodeDecodeError, InputError):
        return {}
    if len(rows) < 2 or len(rows[0]) != len(rows[1]):
        return {}
    return {k.strip(): v.strip() for k, v in zip(rows[0], rows[1], strict=True)}


def read_pmc_perf(path: str | os.PathLike[str], hardware: str | None = None,
                  lds_banks: int = 32, progress: Callable[[int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None
                  ) -> tuple[list[Measurement], list[str], set[str], int]:
    """Points of ``pmc_perf.csv``: (measurements, skipped dispatches, GPU ids, dispatches).
    ``progress(rows_read)`` is told every 4,096 rows; ``cancelled()`` returning true stops
    the read (:class:`~workbench.io.cells.ImportCancelled`)."""
    path = Path(path)
    name = str(path)
    skipped: list[str] = []
    gpus: set[str] = set()
    kernels: dict[str, _Kernel] = {}
    with _open_csv(path, MAX_PMC_BYTES, "pmc_perf.csv") as f:
        reader = _Records(f)
        try:
            header = [h.strip() for h in next(reader, (1, []))[1]]
            index = {h: i for i, h in enumerate(header)}
            valu, mfma, levels = _pmc_counters(index, name)
            numeric = sorted({c for cols in valu.values() for c in cols if c in index}
                             | set(mfma.values()) | {c for cols in levels.values() for c in cols}
                             | {"Start_Timestamp", "End_Timestamp"})
            at = [index[c] for c in numeric]
            kernel_at, dispatch_at, gpu_at = (index["Kernel_Name"], index.get("Dispatch_ID"),
                                              index.get("GPU_ID"))
            width = len(header)
            finite = math.isfinite
            dispatches = 0
            for line, row in reader:
                if len(row) != width:
                    if not any(c.strip() for c in row):
                        continue
                    raise InputError(f"has {len(row)} fields; the header has {width}", name,
                                     line)
                dispatches += 1
                if not dispatches & 0xFFF:
                    _tell_progress(dispatches, name, progress, cancelled)
                if dispatches > MAX_DISPATCHES:
                    raise InputError(f"more than {MAX_DISPATCHES:,} dispatches; a pmc_perf.csv "
                                     "is limited to that (filter with --dispatch or -k)", name,
                                     line)
                try:
                    values = [float(row[i]) if row[i] else 0.0 for i in at]
                    if not finite(sum(values)):
                        raise ValueError
                except ValueError:
                    for column, i in zip(numeric, at, strict=True):
                        if row[i].strip():
                            _float(row[i], name, line, column)
                    values = [float(row[i]) if row[i].strip() else 0.0 for i in at]
                if min(values) < 0:  # (a counter in a sum would pass unseen under the others)
                    for column, i, value in zip(numeric, at, values, strict=True):
                        if value < 0 and not column.endswith("_Timestamp"):
                            raise InputError(f"must not be negative, got {row[i].strip()!r}",
                                             name, line, (column,))
                v = dict(zip(numeric, values, strict=True))
                kernel = row[kernel_at].strip()
                dispatch = row[dispatch_at].strip() if dispatch_at is not None else \
                    str(dispatches - 1)
                if not kernel:
                    raise InputError("the kernel has no name", name, line, ("Kernel_Name",))
                if gpu_at is not None:
                    gpus.add(row[gpu_at].strip())
                duration = (v["End_Timestamp"] - v["Start_Timestamp"]) * 1e-9
                if not duration > 0:
                    skipped.append(f"{kernel} #{dispatch} (line {line}): duration "
                                   f"{duration * 1e9:g} ns")
                    continue
                got = kernels.get(kernel)
                if got is None:
                    got = kernels[kernel] = _Kernel()
                got.add_dispatch(dispatch, duration, v, valu, mfma)
                _add_level_bytes(got, levels, v, lds_banks, name, line)
        except csv.Error as exc:
            raise InputError(f"not valid CSV: {exc}", name, reader.line_num) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason})", name) from None
    out = _kernel_points(kernels, hardware, path.name, skipped)
    return out, skipped, gpus, dispatches


def _pmc_counters(index: dict[str, int], name: str
                  ) -> tuple[dict[str, tuple[str, ...]], dict[str, str], dict[str, Any]]:
    """The counters of ``pmc_perf.csv``'s header that the roofline uses: VALU columns per
    precision, the MFMA column per precision and the columns of each memory level. A file
    without the required columns or any memory counter is refused."""
    for column in _REQUIRED:
        if column not in index:
            raise InputError(f"needs the column {column} (a rocprof-compute "
                             "pmc_perf.csv)", name, 1)
    valu = {p: tuple(f"SQ_INSTS_VALU_{op}_{p}" for op in ("ADD", "MUL", "FMA", "TRANS"))
            for p in _VALU if f"SQ_INSTS_VALU_FMA_{p}" in index}
    mfma = {p: f"SQ_INSTS_VALU_MFMA_MOPS_{p}" for p in _MFMA
            if f"SQ_INSTS_VALU_MFMA_MOPS_{p}" in index}
    levels: dict[str, Any] = {}  # (the counters of each level)
    if all(c in index for c in _LDS):
        levels["lds"] = _LDS
    if _L1 in index:
        levels["l1"] = (_L1,)
    if all(c in index for c in _L2):
        levels["l2"] = _L2
    if all(c in index for c in _HBM_MI300):
        levels["hbm"] = _HBM_MI300
    elif all(c in index for c in _HBM_MI200):
        levels["hbm"] = _HBM_MI200
    if not levels:
        raise InputError("has no memory counters the roofline uses (TCP_TOTAL_CACHE_"
                         "ACCESSES_sum, TCP_TCC_*_REQ_sum, TCC_EA*_RDREQ_sum, "
                         "SQ_LDS_IDX_ACTIVE): profile with the roofline block", name, 1)
    return valu, mfma, levels


def _tell_progress(dispatches: int, name: str, progress: Callable[[int], None] | None,
                   cancelled: Callable[[], bool] | None) -> None:
    """Stop the read if ``cancelled()`` says so, else report the dispatches read so far."""
    if cancelled is not None and cancelled():
        from workbench.io.cells import ImportCancelled

        raise ImportCancelled(name)
    if progress is not None:
        progress(dispatches)


def _add_level_bytes(got: _Kernel, levels: dict[str, Any], v: dict[str, float],
                     lds_banks: int, name: str, line: int) -> None:
    """Add one dispatch's bytes at each memory level to its kernel's sums."""
    for level, columns in levels.items():
        nbytes = _level_bytes(level, columns, v, lds_banks)
        if nbytes < 0:
            raise InputError(f"the {LEVELS[level]} counters give negative bytes "
                             f"({nbytes:g})", name, line, (columns[0],))
        got.bytes[level] = got.bytes.get(level, 0.0) + nbytes


def _kernel_points(kernels: dict[str, _Kernel], hardware: str | None, base: str,
                   skipped: list[str]) -> list[Measurement]:
    """One point per kernel, per dispatch; a kernel without HBM bytes is added to
    ``skipped`` instead."""
    out: list[Measurement] = []
    for kernel, got in kernels.items():
        n = got.dispatches
        flops = sum(got.flops.values())
        precision, unit = "fp32", "vector"
        if flops > 0:
            top = max(sorted(got.flops, reverse=True), key=got.flops.__getitem__)
            where, precision = top.split(":", 1)
            unit = "matrix" if where == "matrix" else "vector"
        label = kernel if len(kernel) <= 240 else kernel[:237] + "..."
        ids = ", ".join(f"#{d}" for d in got.ids) + (", …" if n > len(got.ids) else "")
        levels = {_POINT_LEVEL[k]: v / n for k, v in got.bytes.items()
                  if k in _POINT_LEVEL and v > 0}
        if "dram" not in levels:
            skipped.append(f"{kernel}: no HBM counters")
            continue
        source = (f"rocprof-compute {base}: dispatch {ids}" if n == 1 else
                  f"rocprof-compute {base}: {n:,} dispatches ({ids}), per dispatch")
        if got.bytes.get("lds"):
            source += f"; LDS {got.bytes['lds'] / n:.6g} B per dispatch"
        out.append(Measurement(
            name=label, hardware=hardware, time_s=got.time / n, flops=flops / n,
            bytes=levels["dram"], precision=precision, source=source, levels=levels,
            unit=unit, count=n))
    return out


#: The workload's levels as a point's ``levels``: HBM is the main memory (``dram``).
_POINT_LEVEL = {"l1": "l1", "l2": "l2", "hbm": "dram"}


@record
class _Kernel:
    """The sums over one kernel's dispatches."""
    dispatches: int = 0
    time: float = 0.0
    flops: dict[str, float] = field(default_factory=dict)
    bytes: dict[str, float] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)

    def add_dispatch(self, dispatch: str, duration: float, v: dict[str, float],
                     valu: dict[str, tuple[str, ...]], mfma: dict[str, str]) -> None:
        """Count one dispatch: its time, its id (the first five are kept) and its VALU and
        MFMA FLOPs per precision."""
        self.dispatches += 1
        self.time += duration
        if len(self.ids) < 5:
            self.ids.append(dispatch)
        for p, (add, mul, fma, trans) in valu.items():
            key = f"vector:{_VALU[p]}"
            self.flops[key] = self.flops.get(key, 0.0) + 64 * (
                v.get(add, 0.0) + v.get(mul, 0.0) + 2 * v[fma] + v.get(trans, 0.0))
        for p, column in mfma.items():
            key = f"matrix:{_MFMA[p]}"
            self.flops[key] = self.flops.get(key, 0.0) + 512 * v[column]


class _Records:
    """``(line, fields)`` of each CSV record of a file, fast for the usual line: one without
    quotes is split at its commas, one with a single quoted field (a kernel name with commas
    in it) around that field; anything else (escaped quotes, a line break inside quotes) goes
    through the csv module. ``line`` is where the record starts."""

    def __init__(self, f) -> None:
        self.f = f
        self.line_num = 0

    def __iter__(self):
        return self

    def __next__(self) -> tuple[int, list[str]]:
        text = self.f.readline()
        if not text:
            raise StopIteration
        self.line_num += 1
        start = self.line_num
        quotes = text.count('"')
        if quotes == 0:
            return start, text.rstrip("\r\n").split(",")
        if quotes == 2:
            before, quoted, after = text.split('"')
            after = after.rstrip("\r\n")
            if (not before or before[-1] == ",") and (not after or after[0] == ","):
                return start, ((before[:-1].split(",") if before else []) + [quoted]
                               + (after[1:].split(",") if after else []))
        while text.count('"') % 2:  # a line break inside a quoted field
            more = self.f.readline()
            if not more:
                raise csv.Error("unexpected end of data: a quoted field is not closed")
            self.line_num += 1
            text += more
        return start, next(csv.reader([text], strict=True))


def _level_bytes(level: str, columns: tuple[str, ...], v: dict[str, float],
                 lds_banks: int) -> float:
    if level == "lds":
        return (v[_LDS[0]] - v[_LDS[1]]) * 4 * lds_banks
    if level == "l1":
        return 64 * v[_L1]
    if level == "l2":
        return 64 * sum(v[c] for c in _L2)
    if columns == _HBM_MI300:
        bubble, rd32, rd, wr64, wr = (v[c] for c in columns)
        return 128 * bubble + 32 * rd32 + 64 * (rd - bubble - rd32) + 32 * (wr - wr64) + 64 * wr64
    rd32, rd, wr64, wr = (v[c] for c in columns)
    return 32 * rd32 + 64 * (rd - rd32) + 64 * wr64 + 32 * (wr - wr64)


def read_workload(path: str | os.PathLike[str], hardware: str | None = None,
                  progress: Callable[[int], None] | None = None,
                  cancelled: Callable[[], bool] | None = None) -> WorkloadImport:
    """A workload folder (or its ``pmc_perf.csv``, or a ``roofline.csv`` alone: the machine
    only). With a ``roofline.csv`` beside the counters and no ``hardware`` given, the points
    are judged on the machine it gives."""
    p = Path(path)
    folder = p if p.is_dir() else p.parent
    if p.is_dir() and not (p / "pmc_perf.csv").is_file():
        raise InputError("not a rocprof-compute workload folder (no pmc_perf.csv in it)", str(p))
    info = _sysinfo(folder)
    banks = info.get("lds_banks_per_cu", "")
    lds_banks = int(banks) if banks.isdigit() and 0 < int(banks) <= 1024 else 32
    model = info.get("gpu_model") or None
    result = WorkloadImport([])
    roofline = folder / "roofline.csv"
    if p.name == "roofline.csv":
        result.machine = read_roofline_csv(p, gpu_model=model)
        result.notes.append(f"{result.machine.name}: the empirical roofs of {p.name}")
        return result
    pmc = p if p.is_file() else folder / "pmc_perf.csv"
    # the machine first (small), so that its name can go on every point
    gpus: set[str] = set()
    if roofline.is_file():
        result.machine = read_roofline_csv(roofline, None, model)
    target = hardware or (result.machine.name if result.machine else None)
    from workbench.io.limits import no_cyclic_gc

    with no_cyclic_gc():
        measurements, skipped, gpus, dispatches = read_pmc_perf(pmc, target, lds_banks,
                                                                progress, cancelled)
    if result.machine is not None and len(gpus) == 1 and next(iter(gpus)).isdigit():
        device = int(next(iter(gpus)))
        try:
            machine = read_roofline_csv(roofline, device, model)
        except _NoDeviceRow:  # (a row that is there but wrong is refused, not passed over)
            machine = None
        if machine is not None and machine.name != result.machine.name:
            result.machine = machine
            if hardware is None:
                for m in measurements:
                    m.hardware = machine.name
    if not measurements:
        why = f": {skipped[0]}" if skipped else ""
        raise InputError(f"none of its {dispatches:,} dispatches could be imported{why}"
                         + (" (start and end timestamps are equal: were they rounded, e.g. "
                            "by a spreadsheet?)" if skipped and len(skipped) == dispatches
                            else ""), str(pmc))
    result.measurements = measurements
    result.dispatches = dispatches
    result.skipped = skipped
    levels = sorted({lv for m in measurements for lv in (m.levels or {})},
                    key=("l1", "l2", "dram").index)
    result.notes.append(f"{dispatches:,} dispatch{'es' * (dispatches != 1)} of "
                        f"{len(measurements):,} kernel{'s' * (len(measurements) != 1)}, "
                        f"bytes at {', '.join(levels)}")
    if skipped:
        result.notes.append(f"{len(skipped)} dispatch{'es' * (len(skipped) != 1)} not imported: "
                            + "; ".join(skipped[:5]) + ("; …" if len(skipped) > 5 else ""))
    if result.machine is not None:
        result.notes.append(f"machine {result.machine.name!r} from {roofline.name}")
    elif hardware is None:
        result.notes.append("no roofline.csv beside the counters: the points are judged on "
                            "every machine of the session that has their memory level")
    return result


class _NoDeviceRow(InputError):
    """``roofline.csv`` has no row for the device asked for."""
