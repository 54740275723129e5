"""Import the GPU kernels of a PyTorch profiler trace (Kineto's Chrome-trace JSON, ``.json``
or gzip-compressed ``.json.gz`` / ``.pt.trace.json.gz``).

What is read
============

The trace is one JSON object whose ``traceEvents`` list holds complete events (``"ph": "X"``)
with a category ``cat``, a start ``ts`` and a duration ``dur`` in microseconds:

* ``kernel`` events are the GPU kernels; their ``args.correlation`` names the launch;
* ``cuda_runtime`` / ``cuda_driver`` events are the launches on the CPU thread that made them
  (``cudaLaunchKernel``, ``hipLaunchKernel``, …), with the same ``correlation``;
* ``cpu_op`` events are the operators (``aten::mm``…), with ``Input Dims`` and ``Input type``
  when profiled with ``record_shapes=True`` (and ``Concrete Inputs`` from PyTorch 2.1 on).

A kernel is tied to the operator that launched it: the innermost operator whose time span on
the launching thread holds the launch, walking outwards to the first operator whose work can
be counted (``aten::linear`` holds ``aten::addmm``, which is counted). Where a trace has no
launch event for a kernel, its ``External id`` names the operator (newer traces give the
operator's id to its kernels). The kernels one operator launched are one measured point: the
sum of their durations, the operator's FLOPs and bytes (:mod:`workbench.model.opcount`), named
after its longest kernel.

Kernels whose work cannot be counted (no operator, an operator without a FLOP rule, shapes
not recorded) are listed with their share of GPU time (the sum of all kernel durations; copies
and memsets are not kernels), never silently dropped.

``deviceProperties`` names the GPU; a known name picks the hardware preset the points are
judged on. ROCm builds of PyTorch write AMD GPUs as "AMD Radeon Graphics" without the model:
such a trace is read the same way and the import says that no preset was chosen.

Bounds, checked before the work: the file at most :data:`MAX_TRACE_FILE_BYTES` on disk and
:data:`MAX_TRACE_TEXT_BYTES` of JSON once decompressed, one event at most
:data:`MAX_EVENT_CHARS`, at most :data:`MAX_TRACE_KERNELS` kernels,
:data:`MAX_TRACE_OPERATORS` operators, :data:`MAX_TRACE_LAUNCHES` runtime calls and
:data:`MAX_TRACE_SHAPE_BYTES` of distinct recorded shapes (the read stays within about
1.5 GB). The file is read in 1 MiB pieces, one event at a time; only the fields used are
kept: the shapes operators share once for all of them, their times in arrays of 8-byte floats
(about 60 bytes an operator, where a million took 900 MB).
"""

from __future__ import annotations

import codecs
import gzip
import json
import marshal
import os
import re
import stat
import struct
import sys
import zlib
from array import array
from collections import defaultdict
from collections.abc import Callable
from dataclasses import field
from itertools import chain
from pathlib import Path
from typing import Any

from workbench.io.errors import InputError
from workbench.io.limits import no_cyclic_gc
from workbench.model.measured import Measurement
from workbench.model.opcount import (
    ARGUMENT_OPERATORS,
    COUNTED_OPERATORS,
    KERNEL_OPERATORS,
    OpCount,
    convolution_outputs,
    count_operator,
    forward_convolution_key,
    not_counted_reason,
)
from workbench.model.profile import COLLECTIVE_WHY, counted_time, outside_collectives
from workbench.model.units import format_share
from workbench.records import record

__all__ = ["TraceImport", "read_kineto_trace", "is_kineto_trace", "preset_for_gpu",
           "MAX_TRACE_FILE_BYTES", "MAX_TRACE_TEXT_BYTES", "MAX_EVENT_CHARS",
           "MAX_TRACE_KERNELS", "MAX_TRACE_OPERATORS", "MAX_TRACE_LAUNCHES",
           "MAX_TRACE_SHAPE_BYTES"]

MAX_TRACE_FILE_BYTES = 1 << 30          # on disk (1 GiB)
MAX_TRACE_TEXT_BYTES = 4 << 30          # JSON text once decompressed (4 GiB)
MAX_EVENT_CHARS = 16 << 20              # one event (16 MiB)
MAX_TRACE_KERNELS = 200_000
MAX_TRACE_OPERATORS = 4_000_000       # (about 60 bytes each, kept)
MAX_TRACE_LAUNCHES = 1_000_000        # runtime calls with a correlation (about 300 bytes each)
#: The distinct (Input Dims, Input type, Concrete Inputs) of the counted operators, as marshal
#: writes them; each is kept decoded, about 9 bytes for each of these (300 MB)
MAX_TRACE_SHAPE_BYTES = 32 << 20
_CHUNK = 1 << 20

_KERNEL_CATS = {"kernel"}
_LAUNCH_CATS = {"cuda_runtime", "cuda_driver", "runtime"}
_OP_CATS = {"cpu_op", "operator"}
#: The operator names torch.compile (Inductor) gives the Triton kernels it generates, and
#: why their work is not counted.
_GENERATED = ("triton_", "Torch-Compiled Region")
_GENERATED_WHY = ("a kernel torch.compile generated (Triton): the operations it fuses are not "
                  "in the trace")
#: The autograd functions of a torch.compile'd graph (AOTAutograd's forward and backward), and
#: why the kernels they launch with no operator recorded inside them are not counted.
_COMPILED = ("CompiledFunction", "CompiledFunctionBackward")
_COMPILED_WHY = ("launched by a torch.compile'd graph (CompiledFunction): the operators it ran "
                 "are not in the trace")
#: Why a kernel replayed from a CUDA graph is not counted.
_GRAPH_WHY = ("replayed from a CUDA graph (cudaGraphLaunch): its operators were recorded when "
              "the graph was captured, not in this trace")
#: The kernels of NCCL's (and RCCL's) collectives, and why their time is not counted.
_COLLECTIVE = ("ncclKernel", "ncclDevKernel")
_ALL_CATS = _KERNEL_CATS | _LAUNCH_CATS | _OP_CATS


@record
class TraceImport:
    """What a trace gave: one measured point per counted operator, the kernels not counted,
    the GPU, and the lines the import says (``notes``)."""
    measurements: list[Measurement]
    gpu: str | None = None
    preset: str | None = None
    kernels: int = 0
    gpu_time_s: float = 0.0
    counted_time_s: float = 0.0
    #: (what, kernels, seconds) per reason a kernel was not counted, largest first
    not_counted: list[tuple[str, int, float]] = field(default_factory=list)
    #: (kernel name, seconds, reason) of every kernel not counted, in trace order
    uncounted: list[tuple[str, float, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the id of the device whose ``deviceProperties`` entry gives no name (as written), or None
    unnamed_device: str | None = None


# ---------------------------------------------------------------------------------------------
# the GPU


#: GPU names as CUDA and ROCm report them → preset id (first match wins).
_GPU_PRESETS: tuple[tuple[str, str], ...] = (
    (r"GH200", "gh200"), (r"GB200", "gb200"), (r"\bB200\b", "b200"), (r"H200", "h200"),
    (r"H100.*PCIe", "h100-pcie"), (r"H100", "h100-sxm"), (r"L40S", "l40s"), (r"\bL4\b", "l4"),
    (r"RTX 6000 Ada", "rtx-6000-ada"), (r"RTX 5090", "rtx-5090"), (r"RTX 4090", "rtx-4090"),
    (r"RTX 4080", "rtx-4080"), (r"RTX 4070 Laptop", "rtx-4070-laptop"),
    (r"RTX 4070", "rtx-4070"), (r"MI355", "mi355x"), (r"MI325", "mi325x"),
    (r"MI300X", "mi300x"), (r"MI250X", "mi250x"),
)


def preset_for_gpu(name: str, memory_bytes: float | None = None) -> str | None:
    """The hardware preset of a GPU as the trace names it (``"NVIDIA H100 80GB HBM3"`` →
    ``h100-sxm``; an A100 by its memory: over 60 GB is the 80 GB model; a V100 by its form
    and memory, as CUDA names it: ``Tesla V100-SXM2-16GB``, DGX Station's ``V100-DGXS-32GB``
    (the SXM2 part), ``Tesla V100-PCIE-32GB``), or ``None``."""
    if re.search(r"A100", name):
        if memory_bytes is None:
            return None
        return "a100-80gb" if memory_bytes > 60e9 else "a100-40gb"
    v100 = re.search(r"V100-(SXM2|DGXS|PCIE)-(16|32)GB", name)
    if v100 is not None:  # (not the V100S, nor the 150 W FHHL card: no preset)
        form = "pcie" if v100.group(1) == "PCIE" else "sxm2"
        return f"v100-{form}-{v100.group(2)}gb"
    if "V100" in name:
        return None
    for pattern, preset in _GPU_PRESETS:
        if re.search(pattern, name):
            return preset
    return None


# ---------------------------------------------------------------------------------------------
# reading


class _Text:
    """The file's JSON text, decompressed and decoded a piece at a time, with a cursor."""

    def __init__(self, path: str, name: str) -> None:
        self.name = name
        self.raw = open(path, "rb")  # noqa: SIM115 - closed by close()
        magic = self.raw.read(2)
        self.raw.seek(0)
        self.gzip = magic == b"\x1f\x8b"
        self.stream = gzip.GzipFile(fileobj=self.raw) if self.gzip else self.raw
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.read_chars = 0  # characters before buf[0]
        self.total = 0

    def close(self) -> None:
        self.raw.close()

    def fraction(self) -> float:
        """How far through the file the read has got, 0 to 1 (by the bytes on disk)."""
        size = os.fstat(self.raw.fileno()).st_size
        return min(1.0, self.raw.tell() / size) if size else 1.0

    def offset(self) -> int:
        return self.read_chars + self.pos

    def error(self, problem: str) -> InputError:
        return InputError(f"at character {self.offset():,}: {problem}", self.name)

    def fill(self) -> bool:
        if self.eof:
            return False
        try:
            chunk = self.stream.read(_CHUNK)
        except EOFError:  # (what this last read unpacked is lost with it: "past" the rest)
            past = f", past {self.total:,} bytes of JSON" if self.total else ""
            raise InputError("the compressed file is truncated (it ends before the end of "
                             f"its gzip stream{past})", self.name) from None
        except (OSError, zlib.error) as exc:
            raise InputError(f"not a readable gzip file ({exc})", self.name) from None
        self.total += len(chunk)
        if self.total > MAX_TRACE_TEXT_BYTES:
            raise InputError(f"holds more than {MAX_TRACE_TEXT_BYTES >> 30} GB of JSON; a trace "
                             "is limited to that (profile fewer steps)", self.name)
        if b"\x00" in chunk:
            raise InputError("not a text file (it contains NUL bytes)", self.name)
        try:
            text = self.decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            where = self.total - len(chunk) + exc.start
            raise InputError(f"not UTF-8 text (invalid byte near byte {where:,})",
                             self.name) from None
        if self.pos:
            self.read_chars += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += text
        if not chunk:
            self.eof = True
        return True

    def skip_space(self) -> str:
        """The next character that is not white space ("" at the end)."""
        while True:
            buf, pos = self.buf, self.pos
            n = len(buf)
            while pos < n and buf[pos] in " \t\r\n":
                pos += 1
            self.pos = pos
            if pos < n:
                return buf[pos]
            if not self.fill():
                return ""

    def next_item(self, closer: str) -> str | None:
        """The first character of the next item of a list or object (past white space and
        commas), or ``None`` past its ``closer``; "" at the end of the text."""
        while True:
            c = self.skip_space()
            if c == closer:
                self.pos += 1
                return None
            if c != ",":
                return c
            self.pos += 1

    def value(self, decoder: json.JSONDecoder) -> Any:
        if self.skip_space() == "":
            raise self.error("the JSON text ends where a value should be (the file is "
                             "truncated)")
        while True:
            try:
                value, end = decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    if exc.pos >= len(self.buf) - 1 or "Unterminated" in exc.msg:
                        raise self.error("the JSON text ends in the middle of a value (the "
                                         "file is truncated)") from None
                    raise self.error(f"not valid JSON: {exc.msg}") from None
                if len(self.buf) - self.pos > MAX_EVENT_CHARS:
                    raise self.error(f"not valid JSON, or one value longer than "
                                     f"{MAX_EVENT_CHARS >> 20} MB: {exc.msg}") from None
                self.fill()
                continue
            except ValueError:  # an integer longer than Python converts (4,300 digits)
                raise self.error(f"holds a number with more than "
                                 f"{sys.get_int_max_str_digits():,} digits") from None
            if end >= len(self.buf) and not self.eof:  # a number may go on in the next piece
                self.fill()
                continue
            self.pos = end
            return value


def _check_file(path: str | os.PathLike[str]) -> str:
    """The name of a regular file within :data:`MAX_TRACE_FILE_BYTES`, checked before it
    is read."""
    from workbench.io.limits import open_regular_file

    stream, size = open_regular_file(path, "PyTorch trace")
    stream.close()
    name = os.fspath(path)
    if size > MAX_TRACE_FILE_BYTES:
        raise InputError(f"file is {size / 1e6:.1f} MB; a PyTorch trace is limited to "
                         f"{MAX_TRACE_FILE_BYTES >> 20} MB", name)
    return name


def is_kineto_trace(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` looks like a Chrome-trace JSON file: by its name (``.json``,
    ``.json.gz``) or, for any name, a gzip stream or text starting with ``{`` or ``[``."""
    name = os.fspath(path).lower()
    if name.endswith((".json", ".json.gz")):
        return True
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # a FIFO or a device is never opened here (it could block)
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    return head.startswith(b"\x1f\x8b") or head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{",)


class _Spans:
    """The operators of one thread: start, end and index of each, 8-byte floats in one array
    (24 bytes an operator, where a tuple of Python numbers took 140). Where a value is not
    held exactly by a float within ±2⁵³ (NaN, an integer time in nanoseconds), the thread
    keeps Python tuples instead, so that the result does not change."""

    __slots__ = ("values", "tuples")

    def __init__(self) -> None:
        self.values = array("d")
        #: (start, −end, index) of each operator, once a value is not held exactly
        self.tuples: list[tuple[Any, Any, int]] | None = None

    def extend(self, spans: list[tuple[Any, Any, int]]) -> None:
        """Adds the (start, end, index) of operators read."""
        if self.tuples is None:
            import numpy as np

            try:
                packed = struct.pack(f"{3 * len(spans)}d", *chain.from_iterable(spans))
            except OverflowError:  # (an integer past any float)
                packed = None
            if packed is not None and np.abs(np.frombuffer(packed)).max() <= _EXACT:
                self.values.frombytes(packed)  # (NaN, compared, is never within)
                return
            old = np.frombuffer(self.values).reshape(-1, 3).tolist()
            self.tuples = [(start, -end, int(i)) for start, end, i in old]
            self.values = array("d")
        self.tuples.extend((start, -end, i) for start, end, i in spans)

    def in_order(self) -> tuple[Any, Any, Any]:
        """(starts, ends, indices) by start, the longer (outer) span first."""
        if self.tuples is not None:
            self.tuples.sort()
            return ([s for s, _, _ in self.tuples], [-e for _, e, _ in self.tuples],
                    [i for _, _, i in self.tuples])
        import numpy as np

        values = np.frombuffer(self.values).reshape(-1, 3)
        starts, ends, index = values[:, 0], values[:, 1], values[:, 2]
        order = np.lexsort((index, -ends, starts))
        return (array("d", starts[order].tobytes()), array("d", ends[order].tobytes()),
                array("q", index[order].astype(np.int64).tobytes()))


_EXACT = float(1 << 53)


class _ByExternal:
    """External id → the (last) counted operator that has it: two arrays of 8-byte integers
    while the ids are integers, made a dictionary where first looked up (only a kernel with
    no launch event looks)."""

    __slots__ = ("ids", "ops", "table")

    def __init__(self) -> None:
        self.ids = array("q")
        self.ops = array("q")
        self.table: dict[Any, int] | None = None

    def _made(self) -> dict[Any, int]:
        if self.table is None:
            self.table = dict(zip(self.ids, self.ops, strict=True))
            self.ids, self.ops = array("q"), array("q")
        return self.table

    def add(self, ext: Any, index: int) -> None:
        if self.table is None and type(ext) is int and -_I64 <= ext < _I64:
            self.ids.append(ext)
            self.ops.append(index)
        else:
            self._made()[ext] = index

    def get(self, ext: Any) -> int | None:
        return self._made().get(ext)


_I64 = 1 << 63


@record
class _Raw:
    """The fields kept from the events, compactly."""
    kernels: list[tuple[str, Any, Any, Any, Any]] = field(default_factory=list)
    launches: dict[Any, tuple[Any, Any]] = field(default_factory=dict)
    #: per thread: the span and index of each operator
    ops: dict[Any, _Spans] = field(default_factory=dict)
    op_names: list[str] = field(default_factory=list)
    #: per operator: (Input Dims, Input type, Concrete Inputs) of a counted one, else None;
    #: operators with the same arguments share one tuple
    op_args: list[tuple | None] = field(default_factory=list)
    op_by_external: _ByExternal = field(default_factory=_ByExternal)
    #: correlations of the launches that replayed a CUDA (HIP) graph
    graph_launches: set = field(default_factory=set)
    device_properties: list = field(default_factory=list)
    events: int = 0
    #: complete events of the categories not read, by category (what a trace without
    #: kernels holds instead)
    other: dict[str, int] = field(default_factory=dict)


def _read_events(text: _Text, progress: Callable[[int], None] | None,
                 cancelled: Callable[[], bool] | None) -> _Raw:
    raw = _Raw()
    decoder = json.JSONDecoder()
    names: dict[str, str] = {}
    first = text.skip_space()
    if first == "[":
        text.pos += 1
        _read_array(text, decoder, raw, names, progress, cancelled)
        return raw
    if first != "{":
        if text.gzip:  # (any gzip file comes here: a compressed CSV export too)
            raise text.error("a compressed file that holds no JSON: only a PyTorch trace is "
                             "read compressed (.json.gz); decompress a CSV export first "
                             "(gunzip) and import the .csv")
        raise text.error("not a Chrome-trace JSON file (expected '{' with \"traceEvents\")")
    text.pos += 1
    seen_events = False
    while True:
        c = text.next_item("}")
        if c is None:
            break
        if c != '"':
            raise text.error("the JSON text ends in the middle of the top-level object (the "
                             "file is truncated)" if c == "" else f"not valid JSON: expected "
                             f"a key, got {c!r}")
        key = text.value(decoder)
        if text.skip_space() != ":":
            raise text.error("not valid JSON: expected ':' after a key")
        text.pos += 1
        if key == "traceEvents":
            if text.skip_space() != "[":
                raise text.error("traceEvents is not a list")
            text.pos += 1
            _read_array(text, decoder, raw, names, progress, cancelled)
            seen_events = True
        else:
            value = text.value(decoder)
            if key == "deviceProperties" and isinstance(value, list):
                raw.device_properties = value
    if not seen_events:
        raise InputError("not a PyTorch profiler trace: no \"traceEvents\" list", text.name)
    return raw


def _read_array(text: _Text, decoder, raw: _Raw, names: dict[str, str],
                progress, cancelled) -> None:
    """The events of ``traceEvents``, decoded a batch at a time: everything in the buffer
    up to the last ``},`` is tried as one JSON list (a cut inside a string or a nested object
    cannot decode, so a batch that decodes ends on an event boundary); where that fails, one
    event at a time until the next piece is read."""
    n = 0
    no_batch_before = -1  # buffer length at which batching last failed
    handle = _Handler(text, raw, names)
    while True:
        c = text.next_item("]")
        if c is None:
            break
        if c == "":
            raise text.error("the JSON text ends inside traceEvents (the file is truncated)")
        buf, start = text.buf, text.pos
        batch = None
        if len(buf) != no_batch_before:
            cut = buf.rfind("},", start)
            if cut > start:
                try:
                    batch = decoder.decode("[" + buf[start:cut + 1] + "]")
                    text.pos = cut + 1
                except ValueError:  # (a number too long too: said by the event's own read)
                    no_batch_before = len(buf)
        if batch is None:
            batch = (text.value(decoder),)
        n += len(batch)
        handle(batch)
        if cancelled is not None and cancelled():
            raise _Cancelled
        if progress is not None:
            progress(text.fraction())
    raw.events += n


class _Handler:
    """Keeps what is used of each event (see :class:`_Raw`)."""

    def __init__(self, text: _Text, raw: _Raw, names: dict[str, str]) -> None:
        self.text, self.raw, self.names = text, raw, names
        #: (pid, tid) → itself, one tuple per thread for all its launches
        self.threads: dict[tuple, tuple] = {}
        #: an operator's arguments, marshalled → their one shared tuple
        self.shared_args: dict[bytes | None, tuple] = {}
        self.shape_bytes = 0  # (the keys' lengths, summed)

    def __call__(self, batch) -> None:
        # (an operator's span is a tuple while its batch is read, then 24 bytes of an array)
        pending: dict[Any, list[tuple[Any, Any, int]]] = defaultdict(list)  # per thread
        self.read(batch, pending)
        ops = self.raw.ops
        for thread, spans in pending.items():
            kept = ops.get(thread)
            if kept is None:
                kept = ops[thread] = _Spans()
            kept.extend(spans)

    def read(self, batch, pending) -> None:
        raw, names, threads, shared = self.raw, self.names, self.threads, self.shared_args
        kernels, launches, other = raw.kernels, raw.launches, raw.other
        op_names, op_args, by_external = raw.op_names, raw.op_args, raw.op_by_external
        ext_ids, ext_ops = by_external.ids, by_external.ops  # (while the ids are integers)
        counted = COUNTED_OPERATORS
        number = (int, float)
        ids = _IDS
        for event in batch:
            if type(event) is not dict or event.get("ph") != "X":
                continue
            cat = event.get("cat")
            if type(cat) is not str:
                continue
            if cat not in _ALL_CATS:
                cat = cat.lower()
                if cat not in _ALL_CATS:
                    if cat in other or len(other) < 64:  # (a file's many made-up ones: not kept)
                        other[cat] = other.get(cat, 0) + 1
                    continue
            args = event.get("args")
            if type(args) is not dict:
                args = {}
            ts: Any = event.get("ts")
            if type(ts) not in number:
                ts = 0.0
            if cat in _KERNEL_CATS:
                if len(kernels) >= MAX_TRACE_KERNELS:
                    raise self.text.error(f"more than {MAX_TRACE_KERNELS:,} GPU kernels; a "
                                          "trace is limited to that (profile fewer steps)")
                name = event.get("name")
                name = names.setdefault(name, name) if type(name) is str else "(unnamed)"
                dur = event.get("dur")
                kernels.append((name, dur if type(dur) in number else 0.0,
                                _id(args.get("correlation")), _id(args.get("External id")),
                                _id(args.get("device"))))
            elif cat in _LAUNCH_CATS:
                corr = _id(args.get("correlation"))
                if corr is not None:
                    if len(launches) >= MAX_TRACE_LAUNCHES and corr not in launches:
                        raise self.text.error(f"more than {MAX_TRACE_LAUNCHES:,} runtime calls "
                                              "(cuda_runtime, cuda_driver); a trace is limited "
                                              "to that (profile fewer steps)")
                    thread = (_id(event.get("pid")), _id(event.get("tid")))
                    launches[corr] = (threads.setdefault(thread, thread), ts)
                    name = event.get("name")
                    if type(name) is str and name.endswith("GraphLaunch"):
                        raw.graph_launches.add(corr)
            else:
                if len(op_names) >= MAX_TRACE_OPERATORS:
                    raise self.text.error(f"more than {MAX_TRACE_OPERATORS:,} operator events; "
                                          "a trace is limited to that (profile fewer steps)")
                name = event.get("name")
                if type(name) is not str:
                    continue
                name = names.setdefault(name, name)
                index = len(op_names)
                op_names.append(name)
                dur = event.get("dur")
                pid, tid = event.get("pid"), event.get("tid")  # (as _id, without its calls)
                pending[(pid if type(pid) in ids else None, tid if type(tid) in ids else None)
                        ].append((ts, ts + (dur if type(dur) in number else 0.0), index))
                if name not in counted:
                    op_args.append(None)
                    continue
                kept = (args.get("Input Dims"), args.get("Input type"),
                        args.get("Concrete Inputs"))
                # (the same text is the same value: the decoded lists are dropped for the
                # tuple already kept)
                try:
                    key = marshal.dumps(kept, 2)  # (version 2: no references, one text a value)
                except ValueError:  # (nested past what marshal writes)
                    key = None
                same = shared.get(key)
                if same is None and key is not None:
                    self.shape_bytes += len(key)
                    if self.shape_bytes > MAX_TRACE_SHAPE_BYTES:
                        raise self.text.error(
                            f"more than {MAX_TRACE_SHAPE_BYTES >> 20} MB of distinct operator "
                            "shapes (Input Dims, Input type, Concrete Inputs); a trace is "
                            "limited to that (profile fewer steps)")
                    shared[key] = kept
                op_args.append(kept if same is None else same)
                ext = args.get("External id")
                if type(ext) is int and by_external.table is None and -_I64 <= ext < _I64:
                    ext_ids.append(ext)
                    ext_ops.append(index)
                elif type(ext) in ids:
                    by_external.add(ext, index)


_IDS = (int, float, str)


def _id(value: Any) -> Any:
    """An event's correlation, External id or device: a number or a text, else None (what
    is not one joins nothing)."""
    return value if type(value) in _IDS else None


class _Cancelled(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# kernels → operators


def _launchers(raw: _Raw) -> dict[Any, tuple[int | None, int | None]]:
    """correlation → (innermost operator, innermost counted operator) holding the launch."""
    by_thread: dict[Any, list[tuple[float, Any]]] = defaultdict(list)
    for corr, (thread, ts) in raw.launches.items():
        by_thread[thread].append((ts, corr))
    out: dict[Any, tuple[int | None, int | None]] = {}
    names, counted = raw.op_names, COUNTED_OPERATORS
    for thread, launches in by_thread.items():
        spans = raw.ops.get(thread)
        starts, ends, index = spans.in_order() if spans is not None else ((), (), ())
        launches.sort(key=lambda item: item[0])
        stack: list[int] = []  # positions in the spans by start
        j, n = 0, len(starts)
        for ts, corr in launches:
            while j < n and starts[j] <= ts:
                start = starts[j]
                while stack and ends[stack[-1]] < start:
                    stack.pop()
                stack.append(j)
                j += 1
            while stack and ends[stack[-1]] < ts:
                stack.pop()
            if not stack:
                out[corr] = (None, None)
                continue
            found = None
            for k in reversed(stack):
                if names[index[k]] in counted:
                    found = index[k]
                    break
            out[corr] = (index[stack[-1]], found)
    return out


def read_kineto_trace(path: str | os.PathLike[str], hardware: str | None = None,
                      progress: Callable[[int], None] | None = None,
                      cancelled: Callable[[], bool] | None = None) -> TraceImport:
    """The measured points of a PyTorch profiler trace (see the module docstring).
    ``hardware``: the machine of the session they ran on; ``None``: the preset the trace's GPU
    names, else every machine. ``progress(fraction)`` is told after each 1 MiB piece;
    ``cancelled()`` returning true stops the read (:class:`~workbench.io.cells.ImportCancelled`).
    """
    name = _check_file(path)
    with no_cyclic_gc():
        text = _Text(name, name)
        try:
            try:
                raw = _read_events(text, progress, cancelled)
            except _Cancelled:
                from workbench.io.cells import ImportCancelled

                raise ImportCancelled(name) from None
            except RecursionError:
                raise text.error("nested too deeply") from None
        finally:
            text.close()
        result = _assemble(raw, name, hardware)
        del raw  # freed before the collector runs again: it then walks only the result
    return result


#: Device activity of accelerators other than CUDA and ROCm GPUs, by its category's start
_OTHER_DEVICES = {"mtia": "MTIA"}


def _without_kernels(raw: _Raw) -> str:
    """What a trace with no kernel events holds instead, and what to do."""
    ops = len(raw.op_names)
    cpu = f"{ops:,} CPU operator event{'s' * (ops != 1)}"
    for stem, device in _OTHER_DEVICES.items():
        cats = sorted(c for c in raw.other if c.startswith(stem))
        if cats:
            return (f"{cpu}; its device events are {device}'s ({', '.join(cats)}), an "
                    "accelerator with no machine here, not a CUDA or ROCm GPU's kernels")
    if raw.launches:
        ranges = raw.other.get("cuda_profiler_range", 0)
        return (f"{cpu} and {len(raw.launches):,} runtime calls, but no kernel's own "
                "record: " + (f"its {ranges:,} cuda_profiler_range events are the CUPTI range "
                              "profiler's (profiler_metrics), which counts each kernel's "
                              "instructions but keeps no kernel's time: profile without it"
                              if ranges else "profile with ProfilerActivity.CUDA"))
    return (f"{cpu}; a CPU-only trace has nothing to place on a GPU roofline: profile with "
            "ProfilerActivity.CUDA")


def _assemble(raw: _Raw, name: str, hardware: str | None) -> TraceImport:
    base = Path(name).name
    result = TraceImport([])
    if not raw.kernels:
        raise InputError(f"holds no GPU kernels ({_without_kernels(raw)})", name)
    devices: dict[Any, dict] = {}
    for d in raw.device_properties:  # (an id given twice: its first entry, as CUDA lists them)
        if isinstance(d, dict):
            devices.setdefault(d.get("id"), d)
    used = {k[4] for k in raw.kernels}
    device = devices.get(next(iter(used)) if len(used) == 1 else None) or (
        next(iter(devices.values())) if devices else None)
    if device is not None and not isinstance(device.get("name"), str):
        result.unnamed_device = repr(device.get("id"))
    elif device is not None:
        result.gpu = device["name"]
        memory = device.get("totalGlobalMem")
        result.preset = preset_for_gpu(result.gpu, memory if isinstance(memory, int | float)
                                       else None)
    target = hardware or result.preset
    launchers = _launchers(raw)
    groups: dict[int, list[int]] = defaultdict(list)   # counted operator → its kernels
    reasons: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    counts: dict[Any, OpCount | str] = {}
    by_args: dict[tuple[str, int, str | None], OpCount | str] = {}  # the same, by shared tuple
    results: dict[int, OpCount] = {}
    # (a forward convolution's output shape, by its input's and weight's, from the backward
    # records: worked out at the first forward convolution a trace holds)
    outputs: dict[tuple, list[int]] | None = None
    total = 0.0
    for i, (kname, dur, corr, ext, _dev) in enumerate(raw.kernels):
        total += dur
        inner, op = launchers.get(corr, (None, None)) if corr is not None else (None, None)
        if inner is None and op is None and ext is not None and corr not in launchers:
            op = raw.op_by_external.get(ext)
            inner = op
        why: str
        if kname.startswith(_COLLECTIVE):
            why = COLLECTIVE_WHY
        elif op is None:
            if inner is not None and raw.op_names[inner].startswith(_GENERATED):
                why = _GENERATED_WHY
            elif inner is not None and raw.op_names[inner] in _COMPILED:
                why = _COMPILED_WHY
            elif inner is not None:
                why = not_counted_reason(raw.op_names[inner])
            elif corr in raw.graph_launches:
                why = _GRAPH_WHY
            elif corr is not None and corr in raw.launches:
                why = "launched outside any recorded operator"
            else:
                why = "its launch is not in the trace (made before the profiled span)"
        else:
            if op not in results:
                args = raw.op_args[op]
                assert args is not None  # (kept for every counted operator)
                opname = raw.op_names[op]
                kernel = kname if opname in KERNEL_OPERATORS else None
                same = (opname, id(args), kernel)  # (operators of equal arguments share them)
                got = by_args.get(same)
                if got is None:
                    dims, types, concrete = args
                    key = (opname, repr(dims), _hashable(types),
                           repr(concrete) if opname in ARGUMENT_OPERATORS else None, kernel)
                    if key not in counts:
                        conv = forward_convolution_key(opname, dims, types)
                        if conv is not None and outputs is None:
                            outputs = convolution_outputs(
                                (raw.op_names[j], *kept[:2])
                                for j, kept in enumerate(raw.op_args) if kept is not None)
                        counts[key] = count_operator(
                            opname, dims if isinstance(dims, list) else None,
                            types if isinstance(types, list) else None,
                            concrete if isinstance(concrete, list) else None, kernel,
                            outputs.get(conv) if conv is not None and outputs else None)
                    got = by_args[same] = counts[key]
                if isinstance(got, str):
                    why = got
                    reason = reasons[why]
                    reason[0] += 1
                    reason[1] += dur
                    result.uncounted.append((raw.kernels[i][0], dur * 1e-6, why))
                    continue
                results[op] = got
            groups[op].append(i)
            continue
        reason = reasons[why]
        reason[0] += 1
        reason[1] += dur
        result.uncounted.append((raw.kernels[i][0], dur * 1e-6, why))
    result.kernels = len(raw.kernels)
    result.gpu_time_s = total * 1e-6
    kernels = raw.kernels
    sources: dict[int, str] = {}  # one text per distinct count, shared by its points
    for op, members in groups.items():
        got = results[op]
        if len(members) == 1:
            main, t, *_ = kernels[members[0]]
        else:
            durations = [kernels[i][1] for i in members]
            t = sum(durations)
            main = kernels[members[max(range(len(members)), key=durations.__getitem__)]][0]
        if t <= 0:
            reasons["kernels of zero duration"][0] += len(members)
            continue
        label = main if len(main) <= 240 else main[:237] + "..."
        if len(members) > 1:
            label += f" (+{len(members) - 1} kernel{'s' * (len(members) > 2)})"
        source = sources.get(id(got))
        if source is None:
            source = sources[id(got)] = f"{base}: {got.formula}"[:2000]
        result.measurements.append(Measurement(
            name=label, hardware=target, time_s=t * 1e-6, flops=got.flops, bytes=got.bytes,
            precision=got.precision, source=source, unit=got.unit))
    result.not_counted = sorted(((w, int(c), s * 1e-6) for w, (c, s) in reasons.items()),
                                key=lambda item: -item[2])
    result.counted_time_s = counted_time(result.gpu_time_s, bool(result.measurements),
                                         [s for _, _, s in result.not_counted])
    result.notes = _notes(result, hardware)
    return result


def _hashable(value: Any) -> Any:
    """``value`` as a dictionary key: a list of strings as a tuple, anything else as text."""
    if type(value) is list:
        key = tuple(value)
        try:
            hash(key)
        except TypeError:  # (a list holding lists: its text is the key)
            return repr(value)
        return key
    return repr(value)


def _notes(result: TraceImport, hardware: str | None) -> list[str]:
    notes = []
    total = result.gpu_time_s
    counted = result.counted_time_s
    missing = total - counted
    uncounted = sum(c for _, c, _ in result.not_counted)
    collectives = sum(s for what, _, s in result.not_counted if what == COLLECTIVE_WHY)
    aside = outside_collectives(counted, total, collectives)
    line = (f"counted {format_share(counted, total)} of GPU time "
            f"({f'{aside}; ' if aside else ''}{result.kernels - uncounted:,} of "
            f"{result.kernels:,} kernels, "
            f"{len(result.measurements):,} operators)")
    if uncounted:
        listed = "; ".join(f"{what} ({count:,} kernel{'s' * (count != 1)}, "
                           f"{format_share(seconds, total)})"
                           for what, count, seconds in result.not_counted[:8])
        more = len(result.not_counted) - 8
        line += (f"; {format_share(missing, total)} in {uncounted:,} kernel{'s' * (uncounted != 1)} "
                 f"not counted: {listed}" + (f"; and {more} more" if more > 0 else ""))
    notes.append(line)
    if hardware is None:
        if result.gpu is None:
            why = ("no deviceProperties" if result.unnamed_device is None else
                   f"the deviceProperties entry of device {result.unnamed_device} has no "
                   "name")
            notes.append(f"the trace names no GPU ({why}): the points are judged on every "
                         "machine of the session")
        elif result.preset is None:
            amd = "AMD" in result.gpu or "Radeon" in result.gpu
            notes.append(f"the trace's GPU {result.gpu!r} matches no preset"
                         + (" (ROCm reports AMD GPUs without their model)" if amd else "")
                         + ": the points are judged on every machine of the session; name "
                           "the machine to judge them on one")
        else:
            notes.append(f"GPU {result.gpu!r}: judged on the {result.preset} preset")
    return notes
