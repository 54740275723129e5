"""A session: the machines and operations a user is looking at, and how they are shown.

Plain data, no Qt and no I/O: :mod:`workbench.io.sessions` reads and writes it as YAML and
:mod:`workbench.document` wraps it with undoable edits.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from workbench.model.hardware import Hardware
from workbench.model.operations import Operation
from workbench.records import record

if TYPE_CHECKING:
    # (sweeps and measurements are imported where one is made or used, when a session has
    # any: a session that has none starts without their modules)
    from workbench.model.measured import Measurement
    from workbench.model.sweeps import Sweep

__all__ = ["HardwareEntry", "OperationEntry", "Comparison", "ViewSettings", "Session", "PALETTE",
           "MORE_COLORS", "MARKERS", "free_color", "number_from_one"]

#: Okabe–Ito, a palette that stays distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: Colours a new operation takes once every colour of :data:`PALETTE` but black is in use
#: (a whole model's kinds beside a few operations): from Paul Tol's "muted" scheme, clear of
#: the machines' roof colours; black comes last (the first machine's roofs are near-black).
MORE_COLORS = ("#CC6677", "#44AA99", "#AA4499", "#999933", "#88CCEE")
#: Marker per machine, as a session file writes it: o circle, s square, t triangle, d diamond,
#: star, p pentagon, h hexagon, t1 triangle pointing up (the user interface draws each).
MARKERS = ("o", "s", "t", "d", "star", "p", "h", "t1")

#: the order in which :func:`free_color` gives colours
_FREE_ORDER = (*(c for c in PALETTE if c != "#000000"), *MORE_COLORS, "#000000")

_ids = itertools.count(1)


def free_color(used: Iterable[str | None], avoid: Iterable[str] = ()) -> str:
    """The first colour not in ``used``: of :data:`PALETTE` but black, then of
    :data:`MORE_COLORS`, then black; once every one is, the least used. Colours in
    ``avoid`` are taken only when there is no other."""
    counts: dict[str, int] = {}
    for color in used:
        if color:
            key = color.upper()
            counts[key] = counts.get(key, 0) + 1
    skip = {c.upper() for c in avoid}
    order = _FREE_ORDER
    return min([c for c in order if c not in skip] or order, key=lambda c: counts.get(c, 0))


def new_id() -> int:
    return next(_ids)


def number_from_one(session: Session) -> None:
    """Give the entries of ``session`` (a copy made for a file) the ids 1, 2, … in order:
    machines, operations, pairs, then models (their operations' ids with them). A file made
    from it then says the same whatever the process made before (ids come from one counter,
    and an HTML page names its marks by them); ids handed out later by :func:`new_id` are
    larger than any of these."""
    number = itertools.count(1)
    ops: dict[int, int] = {}
    for entry in session.hardware:
        entry.id = next(number)
    for op in session.operations:
        ops[op.id] = next(number)
        op.id = ops[op.id]
    for pair in session.comparisons:
        pair.id = next(number)
    for model in session.models:
        model.id = next(number)
        model.op_ids = [ops.get(i, i) for i in model.op_ids]


@record
class HardwareEntry:
    """A machine of the session, with how it is drawn."""
    hardware: Hardware
    preset: str | None = None
    visible: bool = True
    marker: str | None = None
    id: int = field(default_factory=new_id)


@record
class OperationEntry:
    """An operation of the session, with how it is drawn and its optional sweep."""
    operation: Operation
    color: str | None = None
    visible: bool = True
    label: bool = True
    id: int = field(default_factory=new_id)
    #: One parameter swept over values (drawn as a path; see :mod:`workbench.model.sweeps`).
    sweep: Sweep | None = None
    #: The colour the session gave it when it joined (``color`` is one the user chose): an
    #: operation keeps its colour wherever it moves (see :meth:`Session.give_colors`).
    auto_color: str | None = None


THEMES = ("light", "dark", "presentation")


@record
class Comparison:
    """Two operations of the session compared on one chart (fused vs unfused, naive vs flash):
    ``first`` is the baseline and ``second`` the alternative, both by operation *name*, as
    measurements refer to operations."""

    first: str
    second: str
    id: int = field(default_factory=new_id)


@record
class ViewSettings:
    """What the chart shows, and its theme and zoom."""
    theme: str = "light"
    legend: bool = True
    labels: bool = True
    regions: bool = False
    derated: bool = False
    all_precisions: bool = False
    #: Draw every memory level's roof, not only main memory and the levels in use.
    all_levels: bool = False
    #: Draw sweep paths, measured points and comparison pairs.
    sweeps: bool = True
    measured: bool = True
    pairs: bool = True
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None
    #: The memory level whose intensity places a profiled kernel (``l1``, ``l2``, ``dram``),
    #: or ``all``: one point per level it has bytes for, joined by a thin line.
    level: str = "dram"
    #: How many profiled kernels of each run the chart draws, by GPU time; 0: the fewest that
    #: make 95 % of the run's time.
    top: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@record
class Session:
    """Everything a session file holds: machines, operations, view, measurements, pairs."""
    title: str = ""
    hardware: list[HardwareEntry] = field(default_factory=list)
    operations: list[OperationEntry] = field(default_factory=list)
    view: ViewSettings = field(default_factory=ViewSettings)
    notes: str = ""
    #: Measured points, attached to an operation by its name or standalone
    #: (see :mod:`workbench.model.measured`).
    measurements: list[Measurement] = field(default_factory=list)
    #: Pairs of operations compared on the chart (see :mod:`workbench.model.comparison`).
    comparisons: list[Comparison] = field(default_factory=list)
    #: Whole models (:class:`workbench.model.llm.session.ModelEntry`); each expands into
    #: operations of :attr:`operations`, listed in its ``op_ids``.
    models: list = field(default_factory=list)

    def model_of(self, op_id: int):
        """The model whose expansion holds operation ``op_id``, or ``None``."""
        for model in self.models:
            if op_id in model.op_ids:
                return model
        return None

    def operation_named(self, name: str) -> OperationEntry | None:
        """The first operation called ``name`` (measurements refer to operations by name)."""
        return next((e for e in self.operations if e.operation.name == name), None)

    def machines_matching(self, ref: str) -> list[HardwareEntry]:
        """Machines that ``ref`` names: by name first; else by preset id or machine id."""
        by_name = [e for e in self.hardware if e.hardware.name == ref]
        if by_name:
            return by_name
        return [e for e in self.hardware if ref in (e.preset, e.hardware.id)]

    def machine_ref(self, entry: HardwareEntry) -> str:
        """How a measured point names machine ``entry``: its preset id when that names this
        machine alone, else its name."""
        if entry.preset and [e.id for e in self.machines_matching(entry.preset)] == [entry.id]:
            return entry.preset
        return entry.hardware.name

    def color_of(self, entry: OperationEntry) -> str:
        chosen = entry.color or entry.auto_color
        if chosen:
            return chosen
        index = next((i for i, e in enumerate(self.operations) if e.id == entry.id), 0)
        return PALETTE[index % len(PALETTE)]

    def colors_in_use(self, exclude: Iterable[int] = ()) -> list[str]:
        """The colour of every operation but those in ``exclude`` (ids), with the colours the
        session's models keep for their kinds of operation."""
        skip = set(exclude)
        used = [e.color or e.auto_color or PALETTE[i % len(PALETTE)]
                for i, e in enumerate(self.operations) if e.id not in skip]
        for model in self.models:
            used.extend(getattr(model, "colors", {}).values())
        return used

    def give_colors(self) -> None:
        """Operations that have no colour yet take the one of their place in the list (how
        a session without colours has always been drawn); from then on it is theirs."""
        for i, e in enumerate(self.operations):
            if not (e.color or e.auto_color):
                e.auto_color = PALETTE[i % len(PALETTE)]

    def new_color(self) -> str:
        """A colour for an operation joining the session: one not in use while any is left."""
        return free_color(self.colors_in_use())

    def marker_of(self, entry: HardwareEntry) -> str:
        if entry.marker:
            return entry.marker
        index = next((i for i, e in enumerate(self.hardware) if e.id == entry.id), 0)
        return MARKERS[index % len(MARKERS)]
