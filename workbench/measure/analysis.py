"""Turning repeated timings into figures: best-of with spread, plateaus, cache levels.

Pure functions on numbers (no timing happens here), so that every rule can be checked on
synthetic curves.

* **Best of N.** A figure is the *best* of N repeated runs (the shortest time: noise on a
  shared machine only ever makes a run slower). Its **spread** is
  ``(median time − best time) / best time``: 0 when the runs agree, 0.10 when the typical run
  was 10 % slower than the best.
* **Plateaus.** Bandwidth against working set (bytes touched by one pass of the kernel) is
  flat while the working set fits one level of the memory hierarchy and falls between levels.
  Walking the curve from small to large working sets, a point joins the current run of points
  while it stays within ``tol`` (relative, in log space) of the run's median; otherwise a new
  run starts. Runs of at least ``min_points`` points are plateaus; the points between them
  are transitions.
* **Levels.** With the cache sizes the operating system reports (L1d, L2, L3), working sets
  up to ¾ of a cache and above 1½ times the cache before it belong to that cache; above the
  last-level cache (preferably twice it), to DRAM. A level's bandwidth is the median of the
  points of one plateau in its range (the fastest for a cache, the longest for DRAM), or of
  all its points when none lies on a plateau. Without reported sizes,
  plateaus are named in order: the largest working sets are DRAM, the smaller ones L1, L2, L3.
* **Order.** A faster level sits closer to the core, so L1 ≥ L2 ≥ L3 ≥ DRAM must hold. A cache
  level that measures *below* the level after it (for instance an L1 figure held down by the
  per-call overhead of numpy) is not a roof: it is dropped, and the reason recorded.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import field

from workbench.records import record

__all__ = [
    "BestOf",
    "best_of",
    "Plateau",
    "find_plateaus",
    "Level",
    "LEVEL_ORDER",
    "level_ranges",
    "name_levels",
    "order_problems",
    "leveled_off",
]

LEVEL_ORDER = ("L1", "L2", "L3", "DRAM")


@record(frozen=True)
class BestOf:
    """N repeated timings of the same work (in ``work`` units: FLOPs or bytes)."""

    times: tuple[float, ...]
    work: float

    @property
    def best_time(self) -> float:
        return min(self.times)

    @property
    def median_time(self) -> float:
        return statistics.median(self.times)

    @property
    def rate(self) -> float:
        """work / best time."""
        return self.work / self.best_time

    @property
    def spread(self) -> float:
        """(median time − best time) / best time."""
        return self.median_time / self.best_time - 1.0

    @property
    def runs(self) -> int:
        return len(self.times)


def best_of(times: Sequence[float], work: float) -> BestOf:
    clean = tuple(float(t) for t in times if t is not None and math.isfinite(t) and t > 0)
    if not clean:
        raise ValueError("no valid timing among the runs (every time was zero or missing)")
    if not (math.isfinite(work) and work > 0):
        raise ValueError(f"the work of a timed run must be positive, got {work!r}")
    return BestOf(clean, float(work))


@record(frozen=True)
class Plateau:
    """A run of neighbouring points (indices into the curve) with about the same rate."""

    indices: tuple[int, ...]
    first_size: float
    last_size: float
    rate: float  # median rate of its points
    spread: float  # (max − min) / median over its points


def _close(rate: float, reference: float, tol: float) -> bool:
    return abs(math.log(rate / reference)) <= math.log1p(tol)


def find_plateaus(sizes: Sequence[float], rates: Sequence[float], tol: float = 0.15,
                  min_points: int = 2) -> list[Plateau]:
    """Plateaus of a curve given in increasing ``sizes`` (see the module's rule)."""
    if len(sizes) != len(rates):
        raise ValueError("sizes and rates differ in length")
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    runs: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if not (rates[i] > 0 and math.isfinite(rates[i])):
            continue
        if current and _close(rates[i], statistics.median(rates[j] for j in current), tol):
            current.append(i)
        else:
            if current:
                runs.append(current)
            current = [i]
    if current:
        runs.append(current)
    out = []
    for run in runs:
        if len(run) < min_points:
            continue
        values = [rates[j] for j in run]
        median = statistics.median(values)
        out.append(Plateau(tuple(run), float(sizes[run[0]]), float(sizes[run[-1]]),
                           float(median), float((max(values) - min(values)) / median)))
    return out


@record
class Level:
    """A named level of the memory hierarchy with its measured bandwidth."""

    name: str
    rate: float
    first_size: float
    last_size: float
    points: int
    on_plateau: bool
    cache_size: float | None = None  # what the OS reports for this level (None for DRAM)
    notes: list[str] = field(default_factory=list)


def level_ranges(caches: Mapping[str, float], largest: float) -> dict[str, tuple[float, float]]:
    """Working-set range (low exclusive, high inclusive) that belongs to each level.

    ``caches`` maps ``L1``/``L2``/``L3`` to the sizes the OS reports, in increasing order;
    ``largest`` is the largest working set measured. DRAM starts at twice the last-level
    cache, or just above it when the measurement did not reach twice.
    """
    names = [n for n in LEVEL_ORDER[:-1] if caches.get(n)]
    out: dict[str, tuple[float, float]] = {}
    previous = 0.0
    for name in names:
        size = float(caches[name])
        out[name] = (previous * 1.5, size * 0.75)
        previous = size
    if names:
        llc = float(caches[names[-1]])
        out["DRAM"] = (2 * llc if largest > 2 * llc else llc, math.inf)
    return out


def name_levels(sizes: Sequence[float], rates: Sequence[float],
                caches: Mapping[str, float] | None = None, tol: float = 0.15) -> list[Level]:
    """Named levels, fastest first, with the order L1 ≥ L2 ≥ L3 ≥ DRAM enforced."""
    plateaus = find_plateaus(sizes, rates, tol)
    on_plateau = {i for p in plateaus for i in p.indices}
    levels: list[Level] = []
    caches = {k: v for k, v in (caches or {}).items() if v}
    if caches:
        for name, (low, high) in level_ranges(caches, max(sizes, default=0)).items():
            inside = [i for i in range(len(sizes)) if low < sizes[i] <= high and rates[i] > 0]
            if not inside:
                continue
            chosen = _choose(name, inside, plateaus, rates) or inside
            levels.append(Level(name, float(statistics.median(rates[i] for i in chosen)),
                                float(min(sizes[i] for i in chosen)),
                                float(max(sizes[i] for i in chosen)), len(chosen),
                                all(i in on_plateau for i in chosen),
                                caches.get(name)))
    else:
        names = list(LEVEL_ORDER[:-1][: max(0, len(plateaus) - 1)]) + ["DRAM"]
        kept = plateaus[:len(names) - 1] + plateaus[-1:] if plateaus else []
        for name, p in zip(names, kept, strict=False):
            levels.append(Level(name, p.rate, p.first_size, p.last_size, len(p.indices), True))
        for level in levels:
            level.notes.append("named by order: the operating system reported no cache sizes")
    return _enforce_order(levels)


def _choose(name: str, inside: list[int], plateaus: list[Plateau],
            rates: Sequence[float]) -> list[int]:
    """The points of a level's range that lie on one plateau: for a cache the fastest
    plateau in its range (slower ones are the next level showing through where a cache holds
    less than the OS reports, as a virtual machine's share of a shared cache does, or a dip
    where the library changes strategy); for DRAM the plateau with the most points."""
    parts = [[i for i in p.indices if i in inside] for p in plateaus]
    parts = [part for part in parts if len(part) >= 2]
    if not parts:
        return []
    if name == "DRAM":
        return max(parts, key=len)
    return max(parts, key=lambda part: statistics.median(rates[i] for i in part))


def _enforce_order(levels: list[Level]) -> list[Level]:
    """Drop every cache level slower than a level farther from the core."""
    kept: list[Level] = []
    for level in reversed(levels):  # from DRAM inwards
        if kept and level.rate < kept[-1].rate:
            kept[-1].notes.append(
                f"{level.name} dropped: it measured {level.rate / 1e9:.3g} GB/s, below "
                f"{kept[-1].name} ({kept[-1].rate / 1e9:.3g} GB/s), so it is no roof")
            continue
        kept.append(level)
    return list(reversed(kept))


def order_problems(memory: Mapping[str, float]) -> list[str]:
    """Where named levels break L1 ≥ L2 ≥ L3 ≥ DRAM (empty when they are ordered)."""
    present = [(n, memory[n]) for n in LEVEL_ORDER if n in memory]
    problems = []
    for (a, ra), (b, rb) in itertools.pairwise(present):
        if ra < rb:
            problems.append(f"{a} ({ra:.4g} B/s) is below {b} ({rb:.4g} B/s)")
    for name, rate in memory.items():
        if not (rate > 0 and math.isfinite(rate)):
            problems.append(f"{name} is not a positive bandwidth: {rate!r}")
    return problems


def leveled_off(rates: Sequence[float], tol: float = 0.10) -> bool:
    """True when the last of rising sizes' rates gains less than ``tol`` over the best
    before it (the rate has stopped growing with size)."""
    if len(rates) < 2:
        return False
    return rates[-1] <= (1 + tol) * max(rates[:-1])
