"""One measurement of this machine: plan, run with progress and cancel, build the machine.

:func:`measure_machine` runs the bandwidth sweep (in this process) and the GEMM sweeps (in
child processes, all cores then one core) of a :class:`Profile`, reporting a
:class:`Progress` after every step and stopping with :class:`Cancelled` as soon as
``cancelled()`` says so. The result is a :class:`MeasuredMachine`: a
:class:`~workbench.model.hardware.Hardware` like any preset (dense peaks per precision,
bandwidth per named level, DRAM as main memory) and its provenance (plain data, written
next to it in the preset file).

Conventions (also written into every measured machine's notes):

* a precision's peak is the best GEMM rate (2·n³ FLOPs per n×n×n product) at the sizes where
  the rate has levelled off, on all cores (each timed sample there lasting a fraction of a
  second, the product repeated: a sustained rate) or on one, whichever is higher (on a busy
  machine one core can beat two);
* a level's bandwidth is the **copy** kernel's (load + store counted, 16 bytes per element)
  over the working sets that belong to that level; read and triad are kept as curves;
* every figure is the best of repeated runs, with its spread (see
  :mod:`workbench.measure.analysis`).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import time
from collections.abc import Callable
from dataclasses import field
from typing import Any

from workbench.measure import system
from workbench.measure.analysis import best_of, name_levels, order_problems
from workbench.measure.kernels import BANDWIDTH_KERNELS, Buffers, Cancelled, run_gemm_child, time_bandwidth
from workbench.model.hardware import Hardware
from workbench.model.units import BINARY, format_binary_bytes
from workbench.records import record

__all__ = ["Profile", "PROFILES", "Progress", "MeasuredMachine", "measure_machine",
           "Cancelled", "profile_from_env", "PROFILE_VARIABLE", "compare_to_datasheet"]

PROFILE_VARIABLE = "ROOFLINE_WORKBENCH_MEASURE_PROFILE"
ROOF_KERNEL = "copy"
#: fresh allocations the roof kernel is timed on at each working set beyond the LLC
DRAM_ALLOCATIONS = 5
GIB = BINARY["Gi"]


@record(frozen=True)
class Profile:
    """How long and how finely to measure."""

    name: str
    points_per_octave: int
    smallest: int  # bytes
    largest_cap: int  # bytes: the largest working set never exceeds this
    bw_budget_s: float  # per kernel and working set
    bw_min_runs: int
    gemm_sizes: tuple[int, ...]
    gemm_budget_s: float  # per size
    gemm_min_runs: int
    gemm_max_runs: int
    gemm_min_n: int  # the sweep may stop (levelled off) from this size on
    gemm_tol: float = 0.10
    one_core: bool = True
    #: for the roof kernel (copy) at working sets beyond the last-level cache: DRAM is what
    #: other programs share most, for seconds at a time, so it gets more runs (the best of
    #: them is the figure)
    dram_budget_s: float = 0.0
    #: per GEMM size from ``gemm_min_n`` on, where the peak is read: other programs take
    #: cores for seconds at a time, so the peak gets many runs
    gemm_peak_budget_s: float = 0.0
    #: ... and each timed sample there lasts at least this long (the product repeated), so
    #: that the peak is a sustained rate
    gemm_sample_s: float = 0.0


PROFILES = {
    # sizes avoid powers of two (their cache-set conflicts dip the GEMM rate)
    "quick": Profile("quick", 2, 8 * 1024, 512 * 1024**2, 0.02, 3, (500, 1000, 2000), 0.15, 2,
                     30, 2000, dram_budget_s=1.5, gemm_peak_budget_s=1.5,
                     gemm_sample_s=0.4),
    "full": Profile("full", 3, 4 * 1024, 2 * GIB, 0.10, 5, (500, 1000, 2000, 3000, 4000), 0.5,
                    3, 40, 2000, dram_budget_s=3.0, gemm_peak_budget_s=3.0,
                    gemm_sample_s=0.8),
    # for tests of the machinery, not of the machine: seconds, not minutes
    "tiny": Profile("tiny", 1, 8 * 1024, 8 * 1024**2, 0.002, 2, (64, 128), 0.005, 1, 2, 64),
}


def profile_from_env(default: str) -> Profile:
    """The profile named by ``$ROOFLINE_WORKBENCH_MEASURE_PROFILE`` (tests make runs tiny),
    else ``default``."""
    return PROFILES.get(os.environ.get(PROFILE_VARIABLE, ""), PROFILES[default])


@record(frozen=True)
class Progress:
    """How far a measurement has come, for its progress bar."""

    fraction: float  # 0…1 of the planned work
    elapsed_s: float
    remaining_s: float  # estimate
    stage: str


@record
class MeasuredMachine:
    """A machine as measured, with how it was measured (``provenance``)."""

    hardware: Hardware
    provenance: dict[str, Any] = field(default_factory=dict)


def working_sets(profile: Profile, caches: dict[str, int]) -> list[int]:
    """Geometric working sets from ``smallest`` to several times the last-level cache
    (four times, at least 64 MiB, at most the profile's cap and a quarter of free memory)."""
    llc = max(caches.values(), default=32 * 1024**2)
    largest = max(4 * llc, 64 * 1024**2)
    largest = min(largest, profile.largest_cap)
    free = system.available_memory()
    if free:
        largest = min(largest, max(free // 4, 16 * 1024**2))
    sizes, ws, step = set(), float(profile.smallest), 2 ** (1 / profile.points_per_octave)
    while ws < largest:
        sizes.add(int(ws) // 64 * 64)
        # beyond 32 MiB the curve is DRAM's or a large cache's: an octave apart is enough
        ws *= step if ws < 32 * 1024**2 else 2
    sizes.add(int(largest) // 64 * 64)
    return sorted(sizes)


def slug(text: str, default: str) -> str:
    """``text`` as part of a preset id: lower case, runs of other characters as one
    hyphen, at most 40 characters (``default`` when nothing is left)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or default


class Clock:
    """Planned seconds per step → fraction done and an estimate of the time left."""

    def __init__(self, planned: float, report: Callable[[Progress], None]) -> None:
        self.planned = max(planned, 1e-6)
        self.done = 0.0
        self.start = time.perf_counter()
        self.report = report

    def step(self, planned: float, stage: str) -> None:
        self.done += planned
        elapsed = time.perf_counter() - self.start
        fraction = min(1.0, self.done / self.planned)
        remaining = elapsed * (1 - fraction) / fraction if fraction > 0.05 else self.planned - self.done
        self.report(Progress(fraction, elapsed, max(0.0, remaining), stage))


def _bw_cost(profile: Profile, ws: int, llc: int) -> float:
    """Planned seconds for one kernel at one working set (assumes ~10 GB/s beyond caches),
    before the extra runs of the roof kernel in DRAM."""
    one = ws * 2 / 10e9
    return max(profile.bw_budget_s, profile.bw_min_runs * one) + one


def _gemm_cost(profile: Profile) -> float:
    return sum(max(profile.gemm_peak_budget_s if n >= profile.gemm_min_n else 0.0,
                   profile.gemm_budget_s, profile.gemm_min_runs * 2 * n**3 / 50e9) + 0.05
               for n in profile.gemm_sizes) + 0.3


def measure_machine(profile: Profile | str = "quick",
                    progress: Callable[[Progress], None] = lambda p: None,
                    cancelled: Callable[[], bool] = lambda: False) -> MeasuredMachine:
    """Measure this machine (see the module docstring). Raises :class:`Cancelled`."""
    import numpy as np

    if isinstance(profile, str):
        profile = PROFILES[profile]
    started = time.perf_counter()
    caches, caches_source = system.cache_sizes()
    cores = system.core_count()
    sizes = working_sets(profile, caches)
    gemm_runs = [("fp64", "float64", cores), ("fp32", "float32", cores)]
    if profile.one_core and cores > 1:
        gemm_runs += [("fp64", "float64", 1), ("fp32", "float32", 1)]
    llc = max(caches.values(), default=32 * 1024**2)
    planned = (sum(_bw_cost(profile, ws, llc) for ws in sizes) * len(BANDWIDTH_KERNELS)
               + sum(profile.dram_budget_s for ws in sizes if ws > llc)
               + sizes[-1] / 1e9
               + _gemm_cost(profile) * len(gemm_runs) + 0.5)
    clock = Clock(planned, progress)
    notes: list[str] = []

    curves: dict[str, list[dict]] = {k: [] for k in BANDWIDTH_KERNELS}
    buffers = Buffers(sizes[-1])
    clock.step(sizes[-1] / 1e9, "bandwidth: arrays allocated")
    for ws in sizes:
        for kernel in BANDWIDTH_KERNELS:
            if cancelled():
                raise Cancelled
            budget = (profile.dram_budget_s if ws > llc and kernel == ROOF_KERNEL
                      else profile.bw_budget_s)
            if ws > llc and kernel == ROOF_KERNEL:
                # beyond the LLC the roof kernel runs on arrays of its own, allocated afresh
                # several times: how much of a new array the OS backs with huge pages (which
                # changes a DRAM copy's rate up to twofold) varies from one allocation to the
                # next, and the best is what a program can reach
                tries = [time_bandwidth(kernel, ws, budget / DRAM_ALLOCATIONS,
                                        profile.bw_min_runs, cancelled=cancelled)
                         for _ in range(DRAM_ALLOCATIONS)]
                timing = best_of([t for tr in tries for t in tr.times], tries[0].work)
            else:
                timing = time_bandwidth(kernel, ws, budget, profile.bw_min_runs,
                                        cancelled=cancelled, buffers=buffers)
            curves[kernel].append({"working_set": ws, "rate": timing.rate,
                                   "spread": round(timing.spread, 4), "runs": timing.runs})
            clock.step(_bw_cost(profile, ws, llc)
                       + (profile.dram_budget_s if ws > llc and kernel == ROOF_KERNEL else 0),
                       f"bandwidth: {kernel}, {format_bytes(ws)} working set")

    levels_by_kernel = {}
    for kernel, rows in curves.items():
        levels_by_kernel[kernel] = name_levels([r["working_set"] for r in rows],
                                               [r["rate"] for r in rows], caches)
    levels = levels_by_kernel[ROOF_KERNEL]
    for level in levels:
        notes.extend(level.notes)

    notes.append("bf16, fp8 and integer products: numpy has no BLAS path for them, so they "
                 "are not measured")
    gemm: dict[str, dict[str, Any]] = {}
    for precision, dtype, threads in _gemm_runs(gemm_runs, gemm, cores, notes, np):
        key = "all_cores" if threads == cores else "one_core"
        stage = f"GEMM {precision}, {'all ' + str(cores) + ' cores' if key == 'all_cores' else 'one core'}"

        def on_size(row, stage=stage):
            clock.report(Progress(clock.done / clock.planned, time.perf_counter() - clock.start,
                                  max(0.0, clock.planned - clock.done), f"{stage}, n = {row['n']}"))

        rows = run_gemm_child(dtype, threads, list(profile.gemm_sizes), profile.gemm_budget_s,
                              profile.gemm_min_runs, profile.gemm_max_runs, profile.gemm_min_n,
                              profile.gemm_tol, on_size=on_size, cancelled=cancelled,
                              peak_budget_s=max(profile.gemm_peak_budget_s,
                                                profile.gemm_budget_s),
                              # one core cannot run faster than its own peak, so short
                              # samples are best; on all cores a short one may catch a
                              # moment when other programs paused
                              sample_s=profile.gemm_sample_s if key == "all_cores" else 0.0)
        timed = [(row["n"], best_of(row["times"], row["flops"])) for row in rows]
        levelled = [item for item in timed if item[0] >= profile.gemm_min_n] or timed[-1:]
        n_best, best = max(levelled, key=lambda item: item[1].rate)
        gemm.setdefault(precision, {})[key] = {
            "threads": threads, "rate": best.rate, "n": n_best, "runs": best.runs,
            "spread": round(best.spread, 4),
            "curve": [{"n": n, "rate": t.rate, "spread": round(t.spread, 4)} for n, t in timed]}
        clock.step(_gemm_cost(profile), stage)

    compute = {}
    for precision, runs in gemm.items():
        compute[precision] = max(r["rate"] for r in runs.values())
        if "one_core" in runs and runs["one_core"]["rate"] > runs["all_cores"]["rate"]:
            notes.append(f"{precision}: one core measured faster than all {cores} "
                         "(other work was running); the peak is the one-core figure")

    memory = {level.name: level.rate for level in levels}
    if "DRAM" in memory:
        main = "DRAM"
    else:
        main = levels[-1].name
        notes.append(f"DRAM was not reached (largest working set {format_bytes(sizes[-1])}); "
                     f"{main} stands for main memory")
    problems = order_problems(memory)
    if problems:  # name_levels drops out-of-order levels, so this is a guard
        raise RuntimeError("measured levels out of order: " + "; ".join(problems))

    cpu = system.cpu_model()
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
    hw = Hardware(
        name=f"{' '.join(cpu.split())} ({cores} cores, measured {now:%Y-%m-%d})",
        compute=compute, memory=memory, main_memory=main,
        id=f"measured-{slug(cpu, 'cpu')}-{now:%Y%m%d-%H%M%S}", vendor=system.cpu_vendor(),
        kind="cpu", vector_compute=dict(compute))
    hw.measured = ([f"compute.{p}" for p in compute] + [f"vector_compute.{p}" for p in compute]
                   + [f"memory.{name}" for name in memory])
    notes.append("fp64 and fp32 GEMM run on the vector units (AVX, NEON FMA), so each peak is "
                 "also the vector peak that elementwise work, norms and reductions meet")
    info = system.blas_info()
    hw.sources = [f"measured on this machine with roofline-workbench measure "
                  f"({profile.name}), numpy {info['numpy']}, "
                  f"{info.get('blas', 'BLAS')} {info.get('blas_version', '')}".strip()]
    provenance: dict[str, Any] = {
        "method": f"roofline-workbench measure, {profile.name} profile: GEMM np.matmul "
                  f"(2·n³ FLOPs) all cores and one core; bandwidth read/copy/triad numpy "
                  f"ufuncs with out=, roofs from {ROOF_KERNEL}; best of repeated runs",
        "profile": profile.name, "date": now.isoformat(),
        "duration_s": round(time.perf_counter() - started, 2),
        "cpu": cpu, "vendor": hw.vendor, "cores": cores, **info,
        "caches": dict(caches), "caches_source": caches_source,
        "roof_kernel": ROOF_KERNEL,
        "levels": {lv.name: {"rate": lv.rate, "from": lv.first_size, "to": lv.last_size,
                             "points": lv.points, "on_plateau": lv.on_plateau}
                   for lv in levels},
        "levels_by_kernel": {k: {lv.name: lv.rate for lv in lvs}
                             for k, lvs in levels_by_kernel.items()},
        "gemm": gemm, "bandwidth": curves, "notes": notes,
    }
    hw.notes = describe(hw, provenance)
    return MeasuredMachine(hw, provenance)


def _gemm_runs(runs: list, gemm: dict, cores: int, notes: list[str], np):
    """The planned GEMM runs, then fp16 on all cores if numpy runs it natively (checked
    against the fp32 peak just measured)."""
    yield from runs
    if "fp32" in gemm:
        native, note = _fp16_native(np, max(r["rate"] for r in gemm["fp32"].values()))
        notes.append(note)
        if native:
            yield "fp16", "float16", cores


def _fp16_native(np, fp32_peak: float) -> tuple[bool, str]:
    """Whether numpy multiplies float16 matrices at least a quarter as fast as the fp32
    peak (a native path); numpy's own float16 loop is about a hundred times slower."""
    a = np.ones((128, 128), "float16")
    c = np.empty((128, 128), "float16")
    np.matmul(a, a, out=c)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        np.matmul(a, a, out=c)
        best = min(best, time.perf_counter() - t0)
    rate = 2 * 128**3 / max(best, 1e-9)
    if rate >= 0.25 * fp32_peak:
        return True, "fp16: numpy multiplies float16 matrices natively here; measured"
    return False, (f"fp16: not native in numpy here ({rate / 1e9:.3g} GFLOP/s at n = 128, "
                   f"against the fp32 peak of {fp32_peak / 1e9:.3g}), so no fp16 roof")


def format_bytes(n: float) -> str:
    return format_binary_bytes(n)


def describe(hw: Hardware, provenance: dict[str, Any]) -> str:
    """The notes of a measured machine: what was measured, how, and what each roof is."""
    lines = [f"Measured on {provenance['cpu']} ({provenance['cores']} cores), "
             f"{provenance['date']}, {provenance['profile']} profile, in "
             f"{provenance['duration_s']:.0f} s. numpy {provenance.get('numpy')}, "
             f"{provenance.get('blas', 'BLAS')} {provenance.get('blas_version', '')}."]
    for precision, runs in provenance["gemm"].items():
        parts = [f"{key.replace('_', ' ')} {r['rate'] / 1e9:.3g} GFLOP/s at n = {r['n']} "
                 f"(best of {r['runs']}, spread {100 * r['spread']:.0f} %)"
                 for key, r in runs.items()]
        lines.append(f"{precision} peak = max of GEMM 2·n³/t: " + "; ".join(parts) + ".")
    caches = provenance.get("caches") or {}
    for name, lv in provenance["levels"].items():
        cache = f", cache {format_bytes(caches[name])}" if name in caches else ""
        lines.append(f"{name} = {lv['rate'] / 1e9:.3g} GB/s: {provenance['roof_kernel']} "
                     f"(16 B per element) over working sets {format_bytes(lv['from'])}–"
                     f"{format_bytes(lv['to'])}{cache}.")
    lines.extend(provenance.get("notes", []))
    if provenance.get("compared_to"):
        lines.append(provenance["gap_text"])
    return "\n".join(lines)


def compare_to_datasheet(measured: MeasuredMachine, datasheet: Hardware,
                         datasheet_id: str) -> None:
    """Label the gap to a datasheet machine: main memory and each common precision as a
    fraction measured / datasheet, in the name, the notes and the provenance."""
    hw = measured.hardware
    gaps: dict[str, float] = {}
    formulas = []
    main = datasheet.bandwidth()
    gaps[hw.main_memory] = hw.bandwidth() / main
    formulas.append(f"{hw.main_memory} {gaps[hw.main_memory]:.2f}× = "
                    f"{hw.bandwidth() / 1e9:.3g} GB/s / {main / 1e9:.4g} GB/s "
                    f"({datasheet.main_memory})")
    for precision, rate in hw.compute.items():
        if precision in datasheet.compute:
            gaps[precision] = rate / datasheet.compute[precision]
            formulas.append(f"{precision} {gaps[precision]:.2f}× = {rate / 1e9:.4g} GFLOP/s / "
                            f"{datasheet.compute[precision] / 1e9:.4g} GFLOP/s")
    measured.provenance["compared_to"] = datasheet_id
    measured.provenance["gap"] = gaps
    measured.provenance["gap_text"] = (f"Gap to the {datasheet.label} datasheet "
                                       f"({datasheet_id}), measured / datasheet: "
                                       + "; ".join(formulas) + ".")
    short = ", ".join(f"{k} {v:.2f}×" for k, v in list(gaps.items())[:2])
    base = hw.name.split(" · ")[0]
    hw.name = f"{base} · {short} datasheet"[:120]
    hw.notes = describe(hw, measured.provenance)

