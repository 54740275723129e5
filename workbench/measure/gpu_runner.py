"""One measurement of a GPU: plan, run with progress and cancel, fit, build the machine.

:func:`measure_gpu` drives a :class:`~workbench.measure.gpu_backend.GpuBackend` through the
stages of a :class:`GpuProfile` and returns a :class:`~workbench.measure.runner.MeasuredMachine`
(the same kind the CPU measurement returns): a machine like any preset and its provenance.
Nothing here imports a GPU library; every rule is checked in the tests with a device that
replays the reference H100 and H200 measurements.

Methods (those with which the reference measurements in calibration/gpu-measurements/ were
taken, so that the figures are comparable with them):

* every timing is a **median** of repeated runs after warm-ups (GPU time by CUDA events
  where the library has them); its **spread** is ``(slowest − fastest) / median``;
* a precision's **peak** is 2·m·n·k / median time of a square GEMM, the best over the sizes
  tried (sizes grow while their projected time fits the stage's share of the budget);
* **main memory** bandwidth: copy (bytes read + written, the reference's figure), read (a
  sum) and triad (a = b + s·c, three arrays) over arrays far beyond the L2 (512 MiB each in
  the quick mode, 1 GiB in the full one); the roof is the fastest of the three, so that no
  streaming kernel beats it;
* the **L2 plateau**: a read kernel over working sets from 1 MiB to 8 × the L2, each read
  enough times in one kernel that the launch cost vanishes; plateaus and levels are found
  by :func:`workbench.measure.analysis.name_levels` (the L2's figure is the fastest plateau
  of working sets up to ¾ of the L2 size);
* **launch** costs: tiny adds launched back to back from the host (wall time per launch),
  and the same replayed from a CUDA graph;
* **kernel-class efficiencies**: the operations of :data:`workbench.measure.gpu_suite.QUICK`
  or ``FULL``, fitted by :func:`workbench.measure.gpu_suite.fit_calibration` against the
  measured machine's own roofs.

Time is bounded: each stage has a share of the profile's budget, a GEMM size whose projected
time does not fit is skipped, and a stage that would not fit at all is left out; every skip
is recorded in the notes.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import statistics
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from workbench.measure.analysis import name_levels
from workbench.measure.gpu_backend import DeviceInfo, GpuBackend, Unavailable
from workbench.measure.gpu_suite import FULL, QUICK, SUITE, KernelTime, fit_calibration
from workbench.measure.kernels import Cancelled
from workbench.measure.runner import Clock, MeasuredMachine, Progress, format_bytes
from workbench.measure.runner import slug as preset_slug
from workbench.model.hardware import Hardware
from workbench.model.prediction import CLASSES, MATH_CLASSES
from workbench.model.units import BINARY
from workbench.records import record

__all__ = ["GpuProfile", "GPU_PROFILES", "gpu_profile_from_env", "GEMM_PRECISIONS", "Timing", "timing",
           "measure_gpu", "l2_plateau", "sweep_sizes", "datasheet_for", "comparison_rows",
           "comparison_lines", "gpu_summary_lines", "planned_seconds"]

MIB = 1024**2
GIB = BINARY["Gi"]
#: the GEMM precisions a measurement tries, most used first
GEMM_PRECISIONS = ("bf16", "fp16", "fp8", "tf32", "fp32", "fp64")
STREAM_KERNELS = ("copy", "read", "triad")
#: bytes moved per byte of one array, by stream kernel (copy: read x, write y; triad: read
#: b and c, write a)
TRAFFIC = {"copy": 2, "read": 1, "triad": 3}
ARRAYS = {"copy": 2, "read": 1, "triad": 3}


@record(frozen=True)
class GpuProfile:
    """How long and how finely to measure a GPU."""

    name: str
    budget_s: float  # the whole measurement, on the reference H100
    gemm_sizes: tuple[int, ...]
    gemm_runs: int
    gemm_warmup: int
    gemm_budget_s: float  # per precision
    stream_bytes: int  # each array of the main-memory figures
    stream_runs: int
    sweep_per_octave: int
    sweep_traffic: int  # bytes read by one timed read kernel of the L2 sweep
    sweep_runs: int
    launch_count: int
    launch_runs: int
    suite: tuple[str, ...]
    suite_runs: int
    suite_warmup: int = 3


GPU_PROFILES = {
    "quick": GpuProfile("quick", 30.0, (2048, 4096, 8192), 10, 3, 1.5, 512 * MIB, 10, 1,
                        GIB, 5, 2000, 3, QUICK, 10),
    "full": GpuProfile("full", 120.0, (2048, 4096, 8192, 16384), 20, 3, 6.0, GIB, 20, 2,
                       2 * GIB, 10, 5000, 5, FULL, 20),
    # for tests of the machinery: few runs, small sizes
    "tiny": GpuProfile("tiny", 30.0, (2048, 8192), 3, 1, 1.5, 256 * MIB, 3, 1, 256 * MIB, 2,
                       200, 2, QUICK, 3, 1),
}


def gpu_profile_from_env(default: str) -> GpuProfile:
    """The profile named by ``$ROOFLINE_WORKBENCH_MEASURE_PROFILE`` (tests make runs tiny),
    else ``default``."""
    import os

    from workbench.measure.runner import PROFILE_VARIABLE

    return GPU_PROFILES.get(os.environ.get(PROFILE_VARIABLE, ""), GPU_PROFILES[default])


# -- timings -----------------------------------------------------------------------------


@record(frozen=True)
class Timing:
    """Repeated timings of the same work (FLOPs or bytes): the figure is work / median."""

    times: tuple[float, ...]
    work: float

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def rate(self) -> float:
        return self.work / self.median

    @property
    def spread(self) -> float:
        """(slowest − fastest) / median."""
        return (max(self.times) - min(self.times)) / self.median

    def record(self, **extra) -> dict[str, Any]:
        return {"rate": self.rate, "median_s": self.median, "min_s": min(self.times),
                "max_s": max(self.times), "runs": len(self.times),
                "spread": round(self.spread, 4), **extra}


def timing(times: Sequence[float], work: float) -> Timing:
    clean = tuple(float(t) for t in times if t is not None and math.isfinite(t) and t > 0)
    if not clean:
        raise ValueError("no valid timing among the runs (every time was zero or missing)")
    if not (math.isfinite(work) and work > 0):
        raise ValueError(f"the work of a timed run must be positive, got {work!r}")
    return Timing(clean, float(work))


# -- the L2 sweep -------------------------------------------------------------------------


def sweep_sizes(profile: GpuProfile, l2: int, largest: int) -> list[int]:
    """Working sets of the L2 sweep: from 1 MiB, ``sweep_per_octave`` a doubling, to eight
    times the L2 (64 MiB when the L2 size is unknown), at most ``largest``."""
    top = min(max(8 * l2, 64 * MIB) if l2 else 64 * MIB * 8, largest)
    sizes, ws, step = set(), float(MIB), 2 ** (1 / profile.sweep_per_octave)
    while ws <= top * 1.0001:
        sizes.add(int(ws) // 4096 * 4096)
        ws *= step
    return sorted(sizes)


def l2_plateau(sizes: Sequence[float], rates: Sequence[float], l2: int,
               tol: float = 0.15) -> tuple[dict[str, Any] | None, dict[str, Any] | None, list[str]]:
    """The L2 and main-memory levels of a read sweep: ``(l2, beyond, notes)``, each level
    ``{rate, from, to, points, on_plateau}`` or ``None`` when the sweep shows none.

    With the L2 size known the levels are named by it (see
    :func:`~workbench.measure.analysis.name_levels`: the L2 is the fastest plateau of working
    sets up to ¾ of its size, main memory the longest beyond twice it); without it the
    fastest plateau is taken for the L2 and the last for main memory."""
    levels = name_levels(sizes, rates, {"L2": l2} if l2 else None, tol)
    notes = [n for lv in levels for n in lv.notes]
    found = {lv.name: {"rate": lv.rate, "from": lv.first_size, "to": lv.last_size,
                       "points": lv.points, "on_plateau": lv.on_plateau} for lv in levels}
    cache = found.get("L2") or found.get("L1")
    beyond = found.get("DRAM")
    if cache is not None and beyond is not None and cache["rate"] <= beyond["rate"] * 1.05:
        notes.append(f"no L2 plateau: working sets within the L2 read at "
                     f"{cache['rate'] / 1e12:.3g} TB/s, no faster than beyond it "
                     f"({beyond['rate'] / 1e12:.3g} TB/s)")
        cache = None
    return cache, beyond, notes


# -- matching a datasheet preset ----------------------------------------------------------

#: (pattern on the device name as the driver reports it, built-in preset id), first match
#: wins; the H100 SXM reports itself as "NVIDIA H100 80GB HBM3"
_DATASHEETS = (
    (r"\bGH200\b", "gh200"), (r"\bGB200\b", "gb200"), (r"\bB200\b", "b200"),
    (r"\bH200\b", "h200"), (r"\bH100\b.*\bPCIe\b", "h100-pcie"),
    (r"\bH100\b.*(HBM3|SXM)", "h100-sxm"),
    (r"\bA100\b.*\b40\s*GB\b", "a100-40gb"), (r"\bA100\b", "a100-80gb"),
    (r"\bL40S\b", "l40s"), (r"\bL4\b", "l4"), (r"RTX 6000 Ada", "rtx-6000-ada"),
    (r"RTX 5090", "rtx-5090"), (r"RTX 4090", "rtx-4090"), (r"RTX 4080", "rtx-4080"),
    (r"RTX 4070.*Laptop", "rtx-4070-laptop"), (r"RTX 4070", "rtx-4070"),
    (r"\bMI355X\b", "mi355x"), (r"\bMI325X\b", "mi325x"), (r"\bMI300X\b", "mi300x"),
    (r"\bMI250X?\b", "mi250x"), (r"Orin", "jetson-agx-orin"),
    (r"Apple M4 Max", "apple-m4-max"), (r"Apple M4 Pro", "apple-m4-pro"),
    (r"Apple M3 Max", "apple-m3-max"),
)


def datasheet_for(device_name: str, known: Collection[str] | None = None) -> str | None:
    """The built-in preset id of the GPU named ``device_name``, or ``None`` (and ``None``
    when ``known`` is given and lacks the id)."""
    for pattern, preset_id in _DATASHEETS:
        if re.search(pattern, device_name, re.IGNORECASE):
            return preset_id if known is None or preset_id in known else None
    return None


# -- the plan -----------------------------------------------------------------------------


def _gemm_guess(precision: str, datasheet: Hardware | None) -> float:
    """FLOP/s to plan a GEMM with: the datasheet's peak, else a modest GPU's."""
    if datasheet is not None and precision in datasheet.compute:
        return datasheet.compute[precision]
    return {"fp64": 1e12, "fp32": 20e12}.get(precision, 100e12)


def planned_seconds(profile: GpuProfile, precisions: Sequence[str],
                    datasheet: Hardware | None = None, bandwidth: float = 1e12) -> dict[str, float]:
    """Planned seconds of each stage (for progress and the estimate), before it runs."""
    plan: dict[str, float] = {}
    for p in precisions:
        rate = _gemm_guess(p, datasheet)
        plan[f"gemm {p}"] = min(profile.gemm_budget_s, 0.2 + sum(
            (profile.gemm_runs + profile.gemm_warmup) * 2 * n**3 / rate
            for n in profile.gemm_sizes))
    for k in STREAM_KERNELS:
        plan[f"stream {k}"] = 0.3 + (profile.stream_runs + 2) * TRAFFIC[k] \
            * profile.stream_bytes / bandwidth
    plan["launch"] = 0.5 + profile.launch_runs * 2 * profile.launch_count * 10e-6
    plan["l2 sweep"] = 0.5 + 14 * profile.sweep_per_octave * (profile.sweep_runs + 1) \
        * profile.sweep_traffic / (2 * bandwidth)
    plan["suite"] = 0.3 * len(profile.suite)
    return plan


# -- the measurement ----------------------------------------------------------------------


def measure_gpu(backend: GpuBackend, device: int = 0, profile: GpuProfile | str = "quick",
                progress: Callable[[Progress], None] = lambda p: None,
                cancelled: Callable[[], bool] = lambda: False,
                datasheet: Hardware | None = None, datasheet_id: str | None = None,
                clock: Callable[[], float] = time.perf_counter) -> MeasuredMachine:
    """Measure GPU ``device`` of ``backend`` (see the module docstring). ``datasheet``: the
    preset of the same GPU, for the plan, the figures not measured and the comparison.
    Raises :class:`~workbench.measure.kernels.Cancelled`."""
    if isinstance(profile, str):
        profile = GPU_PROFILES[profile]
    started = clock()
    info: DeviceInfo = backend.select(device)
    precisions = [p for p in GEMM_PRECISIONS if p in backend.precisions()]
    guess_bw = datasheet.bandwidth() if datasheet is not None else 1e12
    plan = planned_seconds(profile, precisions, datasheet, guess_bw)
    run = _Run(backend, profile, plan, Clock(sum(plan.values()), progress), cancelled,
               clock, started)

    # 1. GEMM peaks, bf16 first (the figure most wanted), then the other precisions
    gemm: dict[str, dict[str, Any]] = {}
    for precision in precisions:
        stage = f"gemm {precision}"
        run.check()
        if precision != precisions[0] and not run.fits(stage):
            run.finished(stage, f"GEMM {precision}: left out (time budget)")
            continue
        curve, why = _gemm_curve(run, precision)
        if curve:
            best = max(curve, key=lambda r: r["rate"])
            gemm[precision] = {**best, "curve": curve}
        else:
            run.notes.append(f"{precision}: not measured ({why})")
        run.finished(stage, f"GEMM {precision}")

    # 2. main-memory bandwidth: copy, read, triad over arrays far beyond the L2
    array_bytes = min(profile.stream_bytes, max(16 * MIB, info.memory // 16))
    stream = _stream_rates(run, array_bytes)
    if "copy" not in stream:
        raise RuntimeError("the copy kernel could not be timed, so there is no memory roof")

    # 3. launch costs
    launch = _launch_costs(run)

    # 4. the L2 plateau
    sweep, l2_level, beyond = _l2_sweep(run, info, array_bytes)

    # 5. the kernel suite
    kernels = _suite_times(run)

    return _build(backend, info, profile, datasheet, datasheet_id, gemm, stream, launch, sweep,
                  l2_level, beyond, kernels, run.notes, run.skipped, run.elapsed())


class _Run:
    """One measurement under way: its plan and budget, progress, cancel, and the notes and
    left-out stages it gathers."""

    def __init__(self, backend: GpuBackend, profile: GpuProfile, plan: dict[str, float],
                 progress_clock: Clock, cancelled: Callable[[], bool],
                 clock: Callable[[], float], started: float) -> None:
        self.backend = backend
        self.profile = profile
        self.plan = plan
        self.progress_clock = progress_clock
        self.cancelled = cancelled
        self.clock = clock
        self.started = started
        self.notes: list[str] = []
        self.skipped: list[str] = []
        self.done_plan = 0.0  # planned seconds of the stages done, against the time they took

    def check(self) -> None:
        if self.cancelled():
            raise Cancelled

    def elapsed(self) -> float:
        return self.clock() - self.started

    def slowness(self) -> float:
        """How much longer than planned the stages so far took (at least 1)."""
        return max(1.0, self.elapsed() / self.done_plan) if self.done_plan > 0 else 1.0

    def fits(self, stage: str) -> bool:
        """Whether the stage, its plan scaled by the slowness so far, fits what is left of
        the budget."""
        left = self.profile.budget_s - self.elapsed()
        need = self.plan[stage] * self.slowness()
        if need <= left:
            return True
        self.skipped.append(f"{stage}: left out, {need:.1f} s expected and "
                            f"{max(0.0, left):.1f} s of the {self.profile.budget_s:.0f} s "
                            "budget left")
        return False

    def finished(self, stage: str, text: str) -> None:
        self.done_plan += self.plan[stage]
        self.progress_clock.step(self.plan[stage], text)

    def report(self, text: str) -> None:
        """Progress within a stage (the fraction done stays where the last stage left it)."""
        pc = self.progress_clock
        self.progress_clock.report(Progress(pc.done / pc.planned, self.elapsed(),
                                            max(0.0, pc.planned - pc.done), text))


def _gemm_curve(run: _Run, precision: str) -> tuple[list[dict[str, Any]], str]:
    """The GEMM rates of ``precision`` over the profile's sizes, stopping before a size
    projected past the stage's budget; and why there are none, if so."""
    profile = run.profile
    stage_started = run.elapsed()
    curve: list[dict[str, Any]] = []
    why = "no size fitted the time budget"
    for n in profile.gemm_sizes:
        run.check()
        if curve:  # project this size's time from the last one's (n³ work)
            last = curve[-1]
            projected = ((profile.gemm_runs + profile.gemm_warmup) * last["median_s"]
                         * (n / last["n"]) ** 3)
            if run.elapsed() - stage_started + projected > profile.gemm_budget_s:
                run.skipped.append(f"GEMM {precision} n = {n}: left out, projected "
                                   f"{projected:.2g} s over the stage's "
                                   f"{profile.gemm_budget_s:g} s")
                break
        try:
            times = run.backend.time_gemm(precision, n, n, n, profile.gemm_runs,
                                          profile.gemm_warmup)
        except Unavailable as exc:
            why = str(exc)
            run.skipped.append(f"GEMM {precision} n = {n}: {exc}")
            continue
        t = timing(times, 2.0 * n**3)
        curve.append(t.record(n=n))
        run.report(f"GEMM {precision}, n = {n}")
    return curve, why


def _stream_rates(run: _Run, array_bytes: int) -> dict[str, dict[str, Any]]:
    """Copy, read and triad over arrays of ``array_bytes`` (copy always; the others when
    they fit the budget)."""
    stream: dict[str, dict[str, Any]] = {}
    for kernel in STREAM_KERNELS:
        stage = f"stream {kernel}"
        run.check()
        if kernel != "copy" and not run.fits(stage):
            run.finished(stage, f"bandwidth {kernel}: left out (time budget)")
            continue
        try:
            times = run.backend.time_stream(kernel, array_bytes, run.profile.stream_runs, 2)
        except Unavailable as exc:
            run.notes.append(f"{kernel} bandwidth: not measured ({exc})")
        else:
            t = timing(times, TRAFFIC[kernel] * array_bytes)
            stream[kernel] = t.record(array_bytes=array_bytes, arrays=ARRAYS[kernel],
                                      traffic_bytes=TRAFFIC[kernel] * array_bytes)
        run.finished(stage, f"bandwidth: {kernel}, arrays of {format_bytes(array_bytes)}")
    return stream


def _launch_costs(run: _Run) -> dict[str, dict[str, Any]]:
    """Seconds per launch, eager and from a CUDA graph, when they fit the budget."""
    profile = run.profile
    launch: dict[str, dict[str, Any]] = {}
    run.check()
    if run.fits("launch"):
        for mode in ("eager", "graph"):
            run.check()
            try:
                per = run.backend.time_launch(mode, profile.launch_count, profile.launch_runs)
            except Unavailable as exc:
                run.notes.append(f"launch from a {'CUDA graph' if mode == 'graph' else 'host'}"
                                 f": not measured ({exc})")
                continue
            t = timing(per, 1.0)
            launch[mode] = {"seconds": t.median, "min_s": min(t.times), "max_s": max(t.times),
                            "runs": len(t.times), "spread": round(t.spread, 4),
                            "launches": profile.launch_count}
    run.finished("launch", "launch costs")
    return launch


def _l2_sweep(run: _Run, info: DeviceInfo, array_bytes: int
              ) -> tuple[list[dict[str, Any]], dict[str, Any] | None, dict[str, Any] | None]:
    """The read sweep over working sets up to the arrays of the bandwidth stage, and the L2
    plateau and what lies beyond it found in it (``None`` when not found)."""
    profile = run.profile
    l2_level = beyond = None
    sweep: list[dict[str, Any]] = []
    run.check()
    if run.fits("l2 sweep"):
        for ws in sweep_sizes(profile, info.l2, array_bytes):
            run.check()
            passes = max(1, math.ceil(profile.sweep_traffic / ws))
            try:
                times = run.backend.time_stream("read", ws, profile.sweep_runs, 1,
                                                passes=passes)
            except Unavailable as exc:
                run.notes.append(f"L2 sweep: not measured ({exc})")
                break
            sweep.append(timing(times, ws * passes).record(working_set=ws, passes=passes))
        if sweep:
            l2_level, beyond, sweep_notes = l2_plateau(
                [r["working_set"] for r in sweep], [r["rate"] for r in sweep], info.l2)
            run.notes.extend(sweep_notes)
    run.finished("l2 sweep", "L2 sweep")
    return sweep, l2_level, beyond


def _suite_times(run: _Run) -> dict[str, dict[str, Any]]:
    """The kernel suite's times per operation id (or the error that kept one from running),
    as far as the budget goes."""
    profile = run.profile
    kernels: dict[str, dict[str, Any]] = {}
    if run.fits("suite"):
        for i, oid in enumerate(profile.suite):
            run.check()
            if run.elapsed() > profile.budget_s:
                run.skipped.append(f"kernel suite: {', '.join(profile.suite[i:])} left out, "
                                   f"the {profile.budget_s:.0f} s budget spent")
                break
            kind, params = SUITE[oid]
            try:
                times = run.backend.time_kernel(kind, params, profile.suite_runs,
                                                profile.suite_warmup)
            except Unavailable as exc:
                kernels[oid] = {"error": str(exc)}
                continue
            t = timing(times, 1.0)
            kernels[oid] = {"median_s": t.median, "min_s": min(t.times), "max_s": max(t.times),
                            "runs": len(t.times), "spread": round(t.spread, 4)}
            run.report(f"kernel suite: {oid}")
    run.finished("suite", "kernel suite")
    return kernels


def _build(backend, info: DeviceInfo, profile: GpuProfile, datasheet: Hardware | None,
           datasheet_id: str | None, gemm, stream, launch, sweep, l2_level, beyond, kernels,
           notes, skipped, duration: float) -> MeasuredMachine:
    now = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
    main = (datasheet.main_memory if datasheet is not None and datasheet.main_memory
            else "unified" if info.kind == "mps" else "hbm")
    roof_kernel = max(stream, key=lambda k: stream[k]["rate"])
    memory = {main: stream[roof_kernel]["rate"]}
    if l2_level is not None and l2_level["rate"] > memory[main]:
        memory["l2"] = l2_level["rate"]
    compute = {p: g["rate"] for p, g in gemm.items()}
    measured = [f"compute.{p}" for p in compute] + [f"memory.{m}" for m in memory]
    measured += ["capacity"] + (["launch_overhead"] if "eager" in launch else [])
    borrowed = []
    vector: dict[str, float] = {}
    if datasheet is not None:
        for p, rate in datasheet.compute.items():
            if p not in compute:
                compute[p] = rate
                borrowed.append(f"compute.{p}")
        vector = dict(datasheet.vector_compute)
        if vector:
            borrowed.append("vector_compute")
    # (the GPU's own, whatever it is compared with)
    slug = datasheet_for(info.name) or preset_slug(info.name, "gpu")
    hw = Hardware(
        name=f"{info.name} (measured {now:%Y-%m-%d})", compute=compute, memory=memory,
        main_memory=main, id=f"measured-{slug}-{now:%Y%m%d-%H%M%S}", vendor=info.vendor,
        kind="gpu", capacity=float(info.memory) if info.memory else None,
        interconnect=dict(datasheet.interconnect) if datasheet is not None else {},
        launch_overhead=launch["eager"]["seconds"] if "eager" in launch else None,
        vector_compute=vector, measured=measured)
    if hw.capacity is None:
        hw.measured.remove("capacity")
    versions = backend.versions()
    software = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    hw.sources = [f"measured on this machine with roofline-workbench measure --device "
                  f"{info.kind} ({profile.name}), {backend.name} backend: {software}"]
    if borrowed:
        notes.append(f"not measured, taken from the {datasheet_id} datasheet preset: "
                     + ", ".join(borrowed))

    fit_details: dict[str, Any] = {}
    times = [KernelTime(oid, *SUITE[oid], rec["median_s"]) for oid, rec in kernels.items()
             if "median_s" in rec]
    if times and "eager" in launch:
        sustained = 1.0
        try:
            cal, fit_details = fit_calibration(
                times, hw, launch_eager=launch["eager"]["seconds"],
                launch_graph=launch.get("graph", launch["eager"])["seconds"],
                sustained=sustained,
                source=f"measured {now:%Y-%m-%d}, {backend.name} backend ({software}): "
                       f"roofline-workbench measure --device {info.kind}, {profile.name}, "
                       f"{len(times)} kernels")
        except ValueError as exc:
            notes.append(f"kernel-class efficiencies: not fitted ({exc})")
        else:
            over = {c: e for c, e in cal.efficiency.items() if e > 1.0}
            if over:  # a kernel beat a measured roof: the roof is a short run's rate
                cal = replace(cal, efficiency={c: min(1.0, e) for c, e in cal.efficiency.items()})
                notes.append("kernel classes faster than the measured roof, stored as 1.0: "
                             + ", ".join(f"{c} {e:.3g}" for c, e in over.items()))
            hw.calibration = cal
            missing = [c for c in CLASSES if c not in cal.efficiency]
            if missing:
                notes.append("kernel classes without a measured kernel (the assumed figures "
                             "are used for them): " + ", ".join(missing))
            notes.append("sustained (the compute fraction kept in long runs) is not measured "
                         "here: it needs whole-model runs; 1.0 is stored")
    provenance: dict[str, Any] = {
        "method": (f"roofline-workbench measure --device {info.kind}, {profile.name} profile: "
                   "GEMM 2·n³/median (square sizes, fp32 without TF32); bandwidth copy "
                   "(read + write counted), read (sum) and triad (a = b + s·c) over arrays "
                   f"of {format_bytes(stream['copy']['array_bytes'])}, roof from the fastest "
                   "of the three; L2 "
                   "from a read sweep over working sets from 1 MiB; launch from tiny adds "
                   "eager and from a CUDA graph; kernel suite timed by CUDA events after an "
                   "L2 flush, fitted as calibration/fit.py; medians with spread "
                   "(max − min) / median"),
        "profile": profile.name, "date": now.isoformat(), "duration_s": round(duration, 2),
        "device": {"name": info.name, "index": info.index, "kind": info.kind,
                   "vendor": info.vendor, "memory": info.memory, "l2": info.l2,
                   "units": info.units, "arch": info.arch, **info.extra},
        "backend": backend.name, "versions": versions,
        "gemm": gemm, "stream": stream, "launch": launch,
        "roof_kernel": roof_kernel,
        "l2_sweep": sweep, "levels": {"l2": l2_level, "beyond_l2": beyond},
        "kernels": kernels, "fit": fit_details, "notes": notes, "skipped": skipped,
    }
    measured_machine = MeasuredMachine(hw, provenance)
    if datasheet is not None:
        compare_gpu(measured_machine, datasheet, datasheet_id or datasheet.id)
    hw.notes = describe_gpu(measured_machine)
    return measured_machine


# -- comparison and text ------------------------------------------------------------------


def comparison_rows(measured: Hardware, datasheet: Hardware) -> list[dict[str, Any]]:
    """Figure by figure, measured against the datasheet: ``{figure, unit, measured,
    datasheet, ratio}`` for every measured peak and level, the launch costs and each
    kernel-class efficiency both machines have (the measured one restated as a fraction of
    the datasheet's roof, see :func:`_roof_scale`)."""
    rows = []

    def add(figure, unit, value, sheet):
        if value is None or sheet is None:
            return
        rows.append({"figure": figure, "unit": unit, "measured": value, "datasheet": sheet,
                     "ratio": value / sheet if sheet else None})

    for p, rate in measured.compute.items():
        if f"compute.{p}" in measured.measured:
            add(f"{p} peak", "flop_rate", rate, datasheet.compute.get(p))
    main = measured.main_memory
    add(f"{main} bandwidth", "bandwidth", measured.memory.get(main), datasheet.bandwidth())
    if "l2" in measured.memory:
        add("l2 bandwidth", "bandwidth", measured.memory["l2"], datasheet.memory.get("l2"))
    add("launch (eager)", "time", measured.launch_overhead, datasheet.launch_overhead)
    mine, theirs = measured.calibration, datasheet.calibration
    if mine is not None and theirs is not None:
        add("launch (graph)", "time", mine.launch_graph, theirs.launch_graph or None)
        add("kernel alone", "time", mine.launch_alone, theirs.launch_alone or None)
        for c, e in mine.efficiency.items():
            scale = _roof_scale(c, measured, datasheet)
            if scale is not None:
                add(f"efficiency {c}", "fraction", e * scale, theirs.efficiency.get(c))
    return rows


def _roof_scale(cls: str, measured: Hardware, datasheet: Hardware) -> float | None:
    """measured roof / datasheet roof for a kernel class: a measured efficiency (a fraction
    of the measured roof) times this is the same kernels' fraction of the datasheet roof,
    comparable with the datasheet's own calibration. Compute classes are the suite's bf16
    kernels; the others stream main memory."""
    if cls in MATH_CLASSES:
        mine, theirs = measured.compute.get("bf16"), datasheet.compute.get("bf16")
    else:
        mine, theirs = measured.bandwidth(), datasheet.bandwidth()
    return mine / theirs if mine and theirs else None


def compare_gpu(measured: MeasuredMachine, datasheet: Hardware, datasheet_id: str) -> None:
    """Record the comparison with the datasheet preset in the provenance and the name."""
    rows = comparison_rows(measured.hardware, datasheet)
    measured.provenance["compared_to"] = datasheet_id
    measured.provenance["comparison"] = rows
    measured.provenance["gap"] = {r["figure"]: r["ratio"] for r in rows}
    hw = measured.hardware
    short = [f"{r['figure'].split()[0]} {r['ratio']:.2f}×" for r in rows
             if r["figure"] in ("bf16 peak", f"{hw.main_memory} bandwidth")]
    if short:
        hw.name = f"{hw.name.split(' · ')[0]} · {', '.join(short)} datasheet"[:120]


def _format(value: float, unit: str) -> str:
    from workbench.model.units import format_quantity

    if unit == "fraction":
        return f"{value:.3g}"
    if unit == "time":
        return f"{value * 1e6:.3g} µs"
    return format_quantity(value, unit)


def comparison_lines(measured: MeasuredMachine) -> list[str]:
    """The comparison with the datasheet as a small table (empty without one)."""
    rows = measured.provenance.get("comparison") or []
    if not rows:
        return []
    out = [f"  compared with the datasheet preset {measured.provenance['compared_to']}:",
           f"  {'figure':28} {'measured':>14} {'datasheet':>14} {'ratio':>7}"]
    for r in rows:
        out.append(f"  {r['figure']:28} {_format(r['measured'], r['unit']):>14} "
                   f"{_format(r['datasheet'], r['unit']):>14} {r['ratio']:>6.2f}×")
    out.append("  (efficiencies as fractions of the datasheet's roofs: the measured machine "
               "stores them as fractions of its own, measured roofs)")
    return out


def gpu_summary_lines(measured: MeasuredMachine) -> list[str]:
    """The measured figures, one line each, then the comparison table."""
    hw, prov = measured.hardware, measured.provenance
    lines = [f"{hw.name}: {prov['profile']} measurement in {prov['duration_s']:.1f} s "
             f"({prov['backend']})"]
    for p, g in prov["gemm"].items():
        lines.append(f"  {p:6} {_format(g['rate'], 'flop_rate'):>14}   GEMM n = {g['n']}, "
                     f"median of {g['runs']}, spread {100 * g['spread']:.1f} %")
    for k, s in prov["stream"].items():
        lines.append(f"  {k:6} {_format(s['rate'], 'bandwidth'):>14}   arrays of "
                     f"{format_bytes(s['array_bytes'])}, median of {s['runs']}, spread "
                     f"{100 * s['spread']:.1f} %")
    l2 = (prov.get("levels") or {}).get("l2")
    if l2:
        lines.append(f"  l2     {_format(l2['rate'], 'bandwidth'):>14}   read plateau over "
                     f"{format_bytes(l2['from'])}–{format_bytes(l2['to'])} "
                     f"({l2['points']} working sets)")
    for mode, rec in prov["launch"].items():
        lines.append(f"  launch {mode:6} {rec['seconds'] * 1e6:.3g} µs per kernel "
                     f"(spread {100 * rec['spread']:.1f} %)")
    cal = hw.calibration
    if cal is not None:
        lines.append("  efficiencies: " + ", ".join(f"{c} {e:.3g}"
                                                    for c, e in cal.efficiency.items()))
    lines.extend(comparison_lines(measured))
    for item in prov.get("skipped", []):
        lines.append(f"  skipped: {item}")
    return lines


def describe_gpu(measured: MeasuredMachine) -> str:
    """The notes of a measured GPU: what was measured, how, and the comparison."""
    prov = measured.provenance
    dev = prov["device"]
    lines = [f"Measured on {dev['name']} ({dev['kind']}:{dev['index']}), {prov['date']}, "
             f"{prov['profile']} profile, in {prov['duration_s']:.0f} s, {prov['backend']} "
             "backend: " + ", ".join(f"{k} {v}" for k, v in prov["versions"].items() if v) + ".",
             prov["method"] + "."]
    lines.extend(prov.get("notes", []))
    lines.extend(line.strip() for line in comparison_lines(measured))
    return "\n".join(lines)
