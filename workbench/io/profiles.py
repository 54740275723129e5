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
from pathlib import Path

__all__ = ["profile_kind", "import_profile", "add_machines"]


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
                                 trace.kernels, trace.gpu_time_s, trace.notes, machines)
    from workbench.io.rocprof import read_workload

    work = read_workload(path, hardware, None, cancel)
    for m in work.measurements:
        m.run = run
    not_counted = [NotCounted(why, 1, 0.0, "duration not positive") for why in work.skipped]
    total = sum(m.count * (m.time_s or 0.0) for m in work.measurements)
    machines = [(work.machine, None)] if work.machine is not None else []
    return MeasurementImport(name, "rocprof", work.measurements, not_counted, work.dispatches,
                             total, work.notes, machines)


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
