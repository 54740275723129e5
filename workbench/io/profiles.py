"""Profiler files beyond CSV: which reader a path needs, and what an import brings besides
its points (a machine to add, lines to tell the user).

* a PyTorch profiler trace (``.json``, ``.json.gz``, ``.pt.trace.json.gz``, or any file that
  is gzip or starts with ``{``): :mod:`workbench.io.kineto`;
* a rocprof-compute workload folder, its ``pmc_perf.csv`` or its ``roofline.csv``:
  :mod:`workbench.io.rocprof`.

:func:`profile_kind` tells them apart (``None``: a CSV of the other formats, read by
:mod:`workbench.io.measurements`); :func:`import_profile` reads one into a
:class:`~workbench.model.profile.MeasurementImport`; :func:`add_machines` adds the machines
it names to a session that lacks them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["profile_kind", "import_profile", "add_machines", "gpu_vendor", "check_vendor",
           "run_name"]


def run_name(path: str | os.PathLike[str], taken: set[str]) -> str:
    """The run a profile's points are marked with: its file name, numbered when ``taken``
    (the runs a session already has) holds that name."""
    base = Path(path).name
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base} ({n})"
    return name


def import_profile(path: str | os.PathLike[str], kind: str, hardware: str | None = None, *,
                   progress=None, cancel=None, run: str | None = None):
    """A trace (``kind`` ``"kineto"``) or workload (``"rocprof"``) as a
    :class:`~workbench.model.profile.MeasurementImport`: one point per kernel and shape, the
    kernels not counted, the run's totals and the machines the file names. ``hardware``
    names the session's machine they ran on; ``None``: the machine the file names (a preset
    for a trace's GPU, ``roofline.csv`` for a workload). ``progress(fraction)`` is told how
    far a trace's read has got; ``cancel()`` returning true stops the read
    (:class:`~workbench.io.cells.ImportCancelled`) before anything is added."""
    from workbench.model.profile import DispatchGroups, MeasurementImport, NotCounted

    name = os.fspath(path)
    if kind == "kineto":
        from workbench.io.kineto import read_kineto_trace
        from workbench.io.presets import get_preset

        trace = read_kineto_trace(path, hardware, progress, cancel)
        groups = DispatchGroups()
        for m in trace.measurements:  # one operator's kernels each; grouped by name and shape
            m.run = run
            groups.add(m, m.source.split(": ", 1)[-1])
        for kernel, seconds, why in trace.uncounted:
            groups.add_not_counted(kernel, seconds, why)
        machines: list = ([(get_preset(trace.preset), trace.preset)]
                    if hardware is None and trace.preset is not None else [])
        return MeasurementImport(name, "kineto", groups.measurements(), groups.not_counted(),
                                 trace.kernels, trace.gpu_time_s, trace.notes, machines,
                                 gpu=trace.gpu, vendor=gpu_vendor(trace.gpu))
    from workbench.io.rocprof import read_workload

    work = read_workload(path, hardware, None, cancel)
    for m in work.measurements:
        m.run = run
    not_counted = [NotCounted(why, 1, 0.0, "duration not positive") for why in work.skipped]
    total = sum(m.count * (m.time_s or 0.0) for m in work.measurements)
    machines = [(work.machine, None)] if work.machine is not None else []
    return MeasurementImport(name, "rocprof", work.measurements, not_counted, work.dispatches,
                             total, work.notes, machines,
                             gpu=work.machine.name if work.machine is not None else "an AMD GPU",
                             vendor="AMD")  # (rocprof-compute profiles AMD GPUs only)


def add_machines(session, result) -> list:
    """Add to ``session`` the machines ``result`` names that it lacks (by preset or name);
    the entries added."""
    from workbench.model.session import HardwareEntry

    added = []
    for hardware, preset in getattr(result, "machines", ()):
        if not session.machines_matching(preset or hardware.name):
            entry = HardwareEntry(hardware, preset=preset)
            session.hardware.append(entry)
            added.append(entry)
    return added


def gpu_vendor(name: str | None) -> str | None:
    """The maker of a GPU as a profile names it ("NVIDIA A100-SXM4-80GB" → ``"NVIDIA"``,
    "AMD Radeon Graphics" → ``"AMD"``), or ``None`` when the name does not tell."""
    if not name:
        return None
    if re.search(r"\bAMD\b|Radeon|Instinct|\bMI\d{3}", name):
        return "AMD"
    if re.search(r"NVIDIA|Tesla|GeForce|Quadro|\bRTX\b|\b[ABHL]\d{1,3}\b", name):
        return "NVIDIA"
    return None


def check_vendor(session, result, hardware: str | None = None) -> None:
    """Refuse a profile of one maker's GPU that would be judged only on another maker's
    machines (an AMD trace on an H100): :class:`~workbench.io.errors.InputError`, one line
    naming the file, the GPU and the machines. ``hardware``: the machine the user named for
    the points; ``None``: the machines the file brings, else every machine of the session
    (where exactly one machine is of the profile's maker, the points are judged on it)."""
    from workbench.io.errors import InputError

    vendor = result.vendor
    if vendor is None or (hardware is None and result.machines):
        return
    entries = session.machines_matching(hardware) if hardware else list(session.hardware)
    known = [e for e in entries if e.hardware.vendor.lower() not in ("", "none")]
    same = [e for e in known if e.hardware.vendor.lower() == vendor.lower()]
    if not known or same or len(known) < len(entries):
        if hardware is None and len(same) == 1 and len(entries) > 1:
            for m in result.measurements:  # (not on the other makers' machines)
                if m.hardware is None:
                    m.hardware = same[0].hardware.name
        return
    gpu = f"{result.gpu!r}, an {vendor} GPU" if result.gpu else f"an {vendor} GPU"
    machines = ", ".join(e.hardware.label if e.hardware.vendor.lower() in e.hardware.label.lower()
                         else f"{e.hardware.label} ({e.hardware.vendor})" for e in known[:3])
    machines += f" and {len(known) - 3} more" if len(known) > 3 else ""
    if hardware:
        raise InputError(f"the profile ran on {gpu}; the machine named to judge it on is "
                         f"{machines}: name an {vendor} machine of the session", result.file)
    raise InputError(f"the profile ran on {gpu}, and the session has no {vendor} machine to "
                     f"judge its kernels on (it has {machines}): add one, then import again",
                     result.file)


def profile_kind(path: str | os.PathLike[str]) -> str | None:
    """``"kineto"``, ``"rocprof"`` or ``None`` (a CSV of the other formats)."""
    from workbench.io.kineto import is_kineto_trace
    from workbench.io.rocprof import is_workload

    p = Path(path)
    if is_workload(p):
        return "rocprof"
    if p.is_dir():
        return None
    if is_kineto_trace(p):
        return "kineto"
    return None
