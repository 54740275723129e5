"""Profiler files beyond CSV: which reader a path needs, and what an import brings besides
its points (a machine to add, lines to tell the user).

* a PyTorch profiler trace (``.json``, ``.json.gz``, ``.pt.trace.json.gz``, or any file that
  is gzip or starts with ``{``): :mod:`workbench.io.kineto`;
* a rocprof-compute workload folder, its ``pmc_perf.csv`` or its ``roofline.csv``:
  :mod:`workbench.io.rocprof`.

:func:`load_profile` returns an :class:`ImportedMeasurements` (a list of measured points
with ``machines`` and ``notes``), or ``None`` for a file of another format (plain or Nsight
Compute CSV, read by :mod:`workbench.io.measurements`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from workbench.model.hardware import Hardware

__all__ = ["ImportedMeasurements", "load_profile", "profile_kind", "machines_to_add",
           "notes_of"]


class ImportedMeasurements(list):
    """Measured points, with the machines they are judged on that the session may lack
    (``(hardware, preset id or None)``) and what the import has to say (``notes``)."""

    def __init__(self, items=(), machines=(), notes=()) -> None:
        super().__init__(items)
        self.machines: list[tuple[Hardware, str | None]] = list(machines)
        self.notes: list[str] = list(notes)


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


def load_profile(path: str | os.PathLike[str], hardware: str | None = None,
                 progress: Callable[[int], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> ImportedMeasurements | None:
    """The points of a trace or workload folder, or ``None`` when ``path`` is neither.
    ``hardware`` names the session's machine they ran on; ``None``: the machine the file
    names (a preset for a trace's GPU, ``roofline.csv`` for a workload). ``progress`` is
    told how far the read has got (bytes of a trace, rows of a ``pmc_perf.csv``) now and
    then; ``cancelled()`` returning true stops it with :class:`InputError` "import
    cancelled", before anything is added anywhere."""
    kind = profile_kind(path)
    if kind == "kineto":
        from workbench.io.kineto import read_kineto_trace
        from workbench.io.presets import get_preset

        trace = read_kineto_trace(path, hardware, progress, cancelled)
        machines = []
        if hardware is None and trace.preset is not None:
            machines.append((get_preset(trace.preset), trace.preset))
        return ImportedMeasurements(trace.measurements, machines, trace.notes)
    if kind == "rocprof":
        from workbench.io.rocprof import read_workload

        work = read_workload(path, hardware, progress, cancelled)
        machines = [(work.machine, None)] if work.machine is not None else []
        return ImportedMeasurements(work.measurements, machines, work.notes)
    return None


def machines_to_add(session, measurements) -> list[tuple[Hardware, str | None]]:
    """The machines an import brings that ``session`` does not have yet (by name, preset or
    id, as a measurement names its machine)."""
    out = []
    for hardware, preset in getattr(measurements, "machines", ()):
        if not session.machines_matching(preset or hardware.name):
            out.append((hardware, preset))
    return out


def notes_of(measurements) -> list[str]:
    return list(getattr(measurements, "notes", ()))
