"""A profiled run: its kernels grouped, the few that make its time, its memory levels, and
how a second run of the same program compares.

A profiler writes one record per *dispatch* (kernel launch). :class:`DispatchGroups` adds
them up by kernel name and launch shape into one :class:`~workbench.model.measured.Measurement`
per kernel: ``count`` dispatches whose mean time, FLOPs and bytes per level are

    time  = Σ time  / count        FLOPs = Σ FLOPs / count        bytes = Σ bytes / count

so FLOP/s (= Σ FLOPs / Σ time) and intensity (= Σ FLOPs / Σ bytes) of the group are those
of all its dispatches together, and the group's share of the run is

    % of GPU time = count × time / Σ time of every dispatch of the run (counted or not).

A dispatch whose FLOPs the file cannot give is kept apart as :class:`NotCounted`, with the
reason, and never drawn as a point at 0 FLOP/s.

**Memory levels** (:func:`level_points`): a kernel with bytes counted at ``l1``, ``l2`` and
``dram`` is one point per level, each at its own intensity I_level = FLOPs / bytes_level and
the same FLOP/s, held against that level's roof on the machine:
roof_level = min(peak, I_level × bandwidth_level). ``dram`` is the machine's main memory;
``l2`` and ``l1`` its levels of those names (a machine without one has no roof for it).

**Top N** (:func:`top_kernels`): the kernels by total GPU time, largest first; by default
the fewest that make 95 % of the counted time.

**Before / after** (:func:`compare_runs`): the kernels present in both runs (same name),
each with speed-up = mean time before / mean time after.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import field

from workbench.model.hardware import Hardware, UnsupportedPrecision
from workbench.model.limits import TEXT_LIMITS
from workbench.model.measured import MEMORY_LEVELS, Measurement
from workbench.model.rules import attainable
from workbench.model.rules import intensity as intensity_of
from workbench.model.units import format_share
from workbench.records import record

__all__ = ["NotCounted", "MeasurementImport", "counted_time", "DispatchGroups", "LevelPoint",
           "level_points", "machine_level", "top_kernels", "TOP_SHARE", "RunChange",
           "compare_runs", "gpu_time_shares", "LEVEL_CHOICES", "runs_of", "run_changes",
           "COLLECTIVE_WHY", "outside_collectives"]

#: Why a collective's kernel (NCCL's, RCCL's) is not counted: no roofline of one GPU sets its
#: time. A share of GPU time is also told without them (see :func:`outside_collectives`).
COLLECTIVE_WHY = ("a collective (NCCL): its time is set by the links and the other ranks, not "
                  "by this GPU's roofline")


def counted_time(total_s: float, any_counted: bool, left_out_s: Sequence[float]) -> float:
    """The GPU time in counted kernels, of ``total_s``: all of it where nothing was left out,
    none where nothing was counted (``any_counted`` false), else what the kernels left out
    (``left_out_s``) leave. Never the counted kernels summed again, nor a difference that
    keeps the last bits of two sums in different orders: a trace with nothing counted said
    "counted -0 %" or "2e-14 %", and "99.99999 %" not counted."""
    if not left_out_s:
        return total_s
    if not any_counted:
        return 0.0
    return min(total_s, max(0.0, total_s - math.fsum(left_out_s)))


def outside_collectives(counted_s: float, total_s: float, collectives_s: float) -> str:
    """``N % of the time outside collectives`` where collectives took some of ``total_s`` and
    left time outside them; else ``""``."""
    outside = total_s - collectives_s
    if collectives_s <= 0 or outside <= 0:
        return ""
    return f"{format_share(counted_s, outside)} of the time outside collectives"

#: The default of the top-N rule: the fewest kernels that make this share of the GPU time.
TOP_SHARE = 0.95
#: What the View's level choice can show: one level's intensity, or every level.
LEVEL_CHOICES: tuple[str, ...] = (*MEMORY_LEVELS, "all")
#: The names a machine's memory table may give each profiler level (first found is used).
_MACHINE_NAMES = {"l1": ("l1", "l1/smem", "smem", "lds"), "l2": ("l2", "l2/lds")}


@record
class NotCounted:
    """Dispatches of one kernel whose work the file cannot count, and why."""

    name: str
    count: int
    time_s: float  # total over the dispatches
    reason: str

    def as_dict(self) -> dict:
        return {"name": self.name, "count": self.count, "time_s": self.time_s,
                "reason": self.reason}


@record
class MeasurementImport:
    """What one profile file gave: its kernels (``measurements``, grouped or one per
    dispatch), the dispatches not counted, and the run's totals."""

    file: str
    format: str
    measurements: list[Measurement]
    not_counted: list[NotCounted] = field(default_factory=list)
    dispatches: int = 0
    #: Σ time of every dispatch, counted or not (the denominator of every share).
    gpu_time_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: Machines the file names, ``(hardware, preset id or None)``, for a session that lacks
    #: them (a trace's GPU preset, a rocprof-compute ``roofline.csv``).
    machines: list = field(default_factory=list)
    #: The GPU the profile ran on, as the file names it, and its maker ("NVIDIA", "AMD"),
    #: where the file tells (None: unknown)
    gpu: str | None = None
    vendor: str | None = None

    @property
    def counted_share(self) -> float:
        """Share of the GPU time in counted kernels (1 when nothing was left out, 0 when
        nothing was counted: see :func:`counted_time`)."""
        if not self.gpu_time_s:
            return 1.0
        return counted_time(self.gpu_time_s, bool(self.measurements),
                            [n.time_s for n in self.not_counted]) / self.gpu_time_s

    def summary(self) -> str:
        """One line: how many dispatches and kernels, and the share of time counted."""
        kernels = len(self.measurements)
        line = (f"{self.dispatches:,} dispatch{'es' if self.dispatches != 1 else ''} of "
                f"{kernels + len(self.not_counted):,} kernel"
                f"{'s' if kernels + len(self.not_counted) != 1 else ''}")
        if self.not_counted:
            share = self.counted_share
            collectives = sum(n.time_s for n in self.not_counted if n.reason == COLLECTIVE_WHY)
            aside = outside_collectives(share * self.gpu_time_s, self.gpu_time_s, collectives)
            line += (f"; counted {format_share(share, 1)} of GPU time"
                     f"{f' ({aside})' if aside else ''}; "
                     f"{format_share(1 - share, 1)} in {len(self.not_counted)} "
                     f"kernel{'s' if len(self.not_counted) != 1 else ''} not counted ("
                     + ", ".join(_listed(n.name) for n in self.not_counted[:5])
                     + (", …" if len(self.not_counted) > 5 else "") + ")")
        return line


#: The parts of a C++ kernel signature that every kernel of a library shares: ``void``, and
#: the namespaces (``at::native::(anonymous namespace)::``) before each name.
_SHARED_PARTS = re.compile(r"^void |(?:[A-Za-z_]\w*|\(anonymous namespace\)|<unnamed>)::")


def _short(name: str, limit: int = 48) -> str:
    return name if len(name) <= limit else name[:limit - 1] + "…"


def _listed(name: str, limit: int = 48) -> str:
    """A kernel's name in a line that lists some: a long C++ signature without what kernels
    of a library share (so that two cut short still differ), then cut to ``limit``."""
    return _short(_SHARED_PARTS.sub("", name) if len(name) > limit else name, limit)


class DispatchGroups:
    """Adds dispatches up by (kernel name, shape); see the module docstring. At most
    ``limit`` distinct kernels are kept (memory stays bounded whatever the file's size)."""

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._groups: dict[tuple[str, str], list] = {}
        self._shapes: dict[str, set[str]] = {}
        self._not_counted: dict[str, NotCounted] = {}
        self.dispatches = 0
        self.gpu_time_s = 0.0

    def __len__(self) -> int:
        return len(self._groups) + len(self._not_counted)

    def add(self, m: Measurement, shape: str = "") -> None:
        """One counted dispatch (``m.count`` is 1, its values those of the dispatch)."""
        self.dispatches += 1
        self.gpu_time_s += m.time_s or 0.0
        key = (m.name, shape)
        group = self._groups.get(key)
        if group is None:
            if len(self) >= self.limit:
                raise OverflowError(f"more than {self.limit:,} distinct kernels")
            self._groups[key] = [m, 1, m.time_s or 0.0, m.flops or 0.0, m.bytes or 0.0,
                                 dict(m.levels or {})]
            self._shapes.setdefault(m.name, set()).add(shape)
            return
        group[1] += 1
        group[2] += m.time_s or 0.0
        group[3] += m.flops or 0.0
        group[4] += m.bytes or 0.0
        levels = group[5]
        for level, value in (m.levels or {}).items():
            levels[level] = levels.get(level, 0.0) + value

    def add_not_counted(self, name: str, time_s: float, reason: str) -> None:
        self.dispatches += 1
        self.gpu_time_s += time_s
        item = self._not_counted.get(name)
        if item is None:
            if len(self) >= self.limit:
                raise OverflowError(f"more than {self.limit:,} distinct kernels")
            self._not_counted[name] = NotCounted(name, 1, time_s, reason)
        else:
            item.count += 1
            item.time_s += time_s

    def measurements(self) -> list[Measurement]:
        """One point per kernel and shape, in the order of their first dispatch."""
        out = []
        for (name, shape), (first, count, time, flops, nbytes, levels) in self._groups.items():
            m = first.copy()
            if len(self._shapes[name]) > 1 and shape:
                # the kernel's name gives way to its shape, within a name's limit
                room = TEXT_LIMITS["measurement"] - len(shape) - 3
                m.name = _short(f"{_short(name, room)} [{shape}]" if room > 1 else
                                f"{name} [{shape}]", TEXT_LIMITS["measurement"])
            m.count = count
            m.time_s = time / count
            m.flops = flops / count
            m.bytes = nbytes / count
            m.levels = {k: v / count for k, v in levels.items()} if first.levels else None
            if count > 1:
                more = f" and {count - 1:,} more dispatch{'es' * (count != 2)} (means)"
                m.source = _short(m.source, TEXT_LIMITS["source"] - len(more)) + more
            out.append(m)
        return out

    def not_counted(self) -> list[NotCounted]:
        return sorted(self._not_counted.values(), key=lambda n: -n.time_s)


def gpu_time_shares(measurements: Sequence[Measurement], total: float | None = None
                    ) -> list[float]:
    """Each point's share of the GPU time: count × time / ``total`` (default: the sum over
    ``measurements``); 0 for a point without a time."""
    times = [m.total_time_s or 0.0 for m in measurements]
    total = sum(times) if total is None else total
    return [t / total if total else 0.0 for t in times]


def top_kernels(measurements: Sequence[Measurement], n: int | None = None,
                share: float = TOP_SHARE) -> tuple[list[Measurement], list[Measurement]]:
    """``(shown, hidden)``: the ``n`` points of largest total GPU time (count × time) or, when
    ``n`` is ``None``, the fewest that together make ``share`` of the time. Ties keep the
    input order; points without a time come last."""
    order = sorted(range(len(measurements)),
                   key=lambda i: (-(measurements[i].total_time_s or 0.0), i))
    ranked = [measurements[i] for i in order]
    if n is None:
        total = sum(m.total_time_s or 0.0 for m in ranked)
        running = 0.0
        n = 0
        for m in ranked:
            if total and running >= share * total * (1 - 1e-12):
                break
            running += m.total_time_s or 0.0
            n += 1
    n = max(0, min(n, len(ranked)))
    return ranked[:n], ranked[n:]


def machine_level(hardware: Hardware, level: str) -> str | None:
    """The machine's memory level a profiler level is held against: ``dram`` → main memory;
    ``l2`` / ``l1`` → the level of that name; ``None`` when the machine has none."""
    if level == "dram":
        return hardware.main_memory or None
    for name in _MACHINE_NAMES.get(level, (level,)):
        for key in hardware.memory:
            if key.lower() == name:
                return key
    return None


@record(frozen=True)
class LevelPoint:
    """One kernel at one memory level (see the module docstring)."""

    level: str
    bytes: float
    intensity: float | None  # FLOPs / bytes; None when no bytes moved
    achieved_flops: float  # FLOPs / time, the same at every level
    machine_level: str | None
    bandwidth: float | None
    peak: float | None
    roof: float | None  # min(peak, I × bandwidth)
    fraction: float | None  # achieved / roof
    problem: str | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def level_points(m: Measurement, hardware: Hardware) -> list[LevelPoint]:
    """The kernel's point at each level it has bytes for (``dram`` from ``bytes`` when no
    levels were counted), innermost first."""
    levels = dict(m.levels) if m.levels else {}
    if "dram" not in levels and m.bytes is not None:
        levels["dram"] = m.bytes
    time = m.time_s if m.time_s else (
        (m.flops or 0.0) / m.achieved_flops if m.achieved_flops else None)
    flops = m.flops or 0.0
    achieved = flops / time if time else 0.0
    try:
        peak: float | None = hardware.ceiling(m.precision or "bf16", m.unit or "matrix").peak
        peak_problem = None
    except UnsupportedPrecision as exc:
        peak, peak_problem = None, str(exc).strip("'\"")
    out = []
    for level in MEMORY_LEVELS:
        if level not in levels:
            continue
        nbytes = levels[level]
        intensity = intensity_of(flops, nbytes) if nbytes > 0 else None  # (none: no bytes)
        name = machine_level(hardware, level)
        bandwidth = hardware.memory.get(name) if name else None
        roof = fraction = None
        problem = peak_problem
        if bandwidth is None and problem is None:
            problem = f"{hardware.label} has no {level} bandwidth (no roof for this level)"
        if peak is not None and bandwidth and intensity is not None:
            roof = attainable(intensity, peak, bandwidth)
            fraction = achieved / roof if roof > 0 else None
        out.append(LevelPoint(level, nbytes, intensity, achieved, name, bandwidth, peak, roof,
                              fraction, problem))
    return out


@record(frozen=True)
class RunChange:
    """A kernel present in two runs: its mean time and position before and after."""

    name: str
    before: Measurement
    after: Measurement

    @property
    def speedup(self) -> float | None:
        """Mean time before / mean time after (> 1: faster)."""
        if not self.before.time_s or not self.after.time_s:
            return None
        return self.before.time_s / self.after.time_s

    def as_dict(self) -> dict:
        return {"name": self.name, "before_time_s": self.before.time_s,
                "after_time_s": self.after.time_s, "speedup": self.speedup,
                "before_run": self.before.run, "after_run": self.after.run}


def compare_runs(before: Iterable[Measurement], after: Iterable[Measurement]
                 ) -> list[RunChange]:
    """Every kernel (by name) present in both runs, in the order of ``after``."""
    first: dict[str, Measurement] = {}
    for m in before:
        first.setdefault(m.name, m)
    return [RunChange(m.name, first[m.name], m) for m in after if m.name in first]


def runs_of(measurements: Iterable[Measurement]) -> list[str]:
    """The runs named by ``measurements``, in order of first appearance."""
    return list(dict.fromkeys(m.run for m in measurements if m.run is not None))


def run_changes(measurements: Sequence[Measurement]) -> list[RunChange]:
    """Before/after of the first two runs of the session's measurements (empty if fewer)."""
    runs = runs_of(measurements)
    if len(runs) < 2:
        return []
    return compare_runs([m for m in measurements if m.run == runs[0]],
                        [m for m in measurements if m.run == runs[1]])


