"""What the roofline chart shows, as plain data in DATA units (no Qt).

:func:`build_scene` turns a :class:`~workbench.model.session.Session` and the evaluated
(operation, machine) pairs into a :class:`Scene`: roofs, ridge points, shaded regions,
operation points with their labels and tooltips, legend entries, axis titles and the data
range. Everything is *linear*: intensities in FLOP/byte, rates in FLOP/s and bytes/s. The
canvas (:mod:`workbench.ui.chart.canvas`) takes log10 of these numbers in one place and maps each
element to a drawing item; the exporter can do the same with another backend.

Drawing rules (per visible machine):

* one sloped **memory roof** (``y = bandwidth · x``) for the main memory, emphasised, and
  one ``"minor"`` roof for each other level (a cache) an operation is measured across, or
  for every level when ``view.all_levels``; each clipped where it meets the highest
  compute roof drawn for that machine;
* one flat **compute roof** per precision used by a visible operation on that machine
  (:attr:`~workbench.model.roofline.Result.precision_used`), plus every other precision when
  ``view.all_precisions``. A machine that no visible operation runs on shows one default
  precision (bf16, else fp16, else fp32, else its highest peak) so that it still has a roofline;
* **interconnect roofs** (sloped, dash-dot) only for the interconnects an operation is
  measured across (:attr:`~workbench.model.operations.Operation.memory_level`);
* the **ridge** of each drawn precision against main memory (``peak / bandwidth``), marked and
  labelled ``"ridge 295 FLOP/B"``;
* **derated** ("practical") roofs, dashed, at ``efficiency ×`` the main-memory roof and each
  drawn compute roof when ``view.derated`` and the machine has an efficiency;
* shaded **memory-/compute-bound regions** when ``view.regions`` — see :func:`build_regions`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import field, replace

from workbench.model.analysis import Pair
from workbench.model.chart.machine_texts import (
    machine_namer,
    machine_of,
    short_name,
    whose_measured,
)
from workbench.model.chart.overlay_data import (
    VERDICT_COLORS,
    MeasuredMark,
    PairLink,
    SweepPath,
    build_overlays,
    measured_cap_note,
    overlay_extent,
    overlay_legend,
    profile_roof_levels,
)
from workbench.model.dtypes import PRECISIONS
from workbench.model.hardware import roof_name
from workbench.model.roofline import Result, attainable, compute_bound, ridge
from workbench.model.session import (
    MARKERS,
    PALETTE,
    HardwareEntry,
    OperationEntry,
    Session,
)
from workbench.model.units import format_number, format_quantity
from workbench.records import record

__all__ = [
    "X_TITLE", "Y_TITLE", "short_axis_title", "MAX_LABELS", "MAX_LEGEND_OPERATIONS",
    "MachineMark", "Roof", "Ridge", "Region", "PointMark", "LegendEntry", "Reference", "Scene",
    "build_scene", "drawn_pairs", "drawn_points", "operation_points", "point_tooltip",
    "ridge_label", "decade_range", "operation_colors", "machine_entries",
    "whose_texts", "overlay_extent", "measured_legend",
]

#: Axis titles, with units.
X_TITLE = "Arithmetic intensity [FLOP/byte]"
Y_TITLE = "Attainable performance [FLOP/s]"
#: Shorter wordings of the axis titles' names and units, for an axis too short for the full
#: title (a small figure): "Intensity [FLOP/B]", "Attainable [FLOP/s]".
_SHORT_NAMES = {"Arithmetic intensity": "Intensity", "Attainable performance": "Attainable"}
_SHORT_UNITS = {"FLOP/byte": "FLOP/B", "OP/byte": "OP/B", "bytes/s": "B/s"}


def short_axis_title(title: str) -> str:
    """The shorter wording of an axis title, its unit kept ("Attainable performance [OP/s]"
    → "Attainable [OP/s]"); the title itself when it has none."""
    name, sep, unit = title.partition(" [")
    name = _SHORT_NAMES.get(name.strip(), name.strip())
    if sep:
        unit = unit.rstrip().removesuffix("]")
        return f"{name} [{_SHORT_UNITS.get(unit, unit)}]"
    return name

#: Above this many labelled points the labels are skipped (the legend says so).
MAX_LABELS = 200
#: Operations listed in the legend; the rest are summarised in one line.
MAX_LEGEND_OPERATIONS = 12

#: Padding factors applied before rounding the data range out to whole decades.
_POINT_PAD = 1.25  # points never sit on the frame
_PEAK_PAD = 1.1  # a compute roof never sits on the top edge
_TOP_ROOM = 3.0  # the top of the chart: this much above the highest roof
_RIDGE_SPAN = 10.0  # one decade of slope before, and of flat roof after, each ridge
#: Roofs extend this many decades beyond the data range, so panning does not reveal their ends.
EXTENT_DECADES = 4

_DEFAULT_PRECISIONS = ("bf16", "fp16", "fp32")


# ---------------------------------------------------------------------------------------
# scene elements


@record(frozen=True)
class MachineMark:
    """A visible machine as drawn.

    ``style_index`` is the machine's position among the *visible* machines (the theme picks
    the roof colour from it); ``bandwidth`` is the main-memory bandwidth in bytes/s and
    ``top_peak`` the highest drawn compute roof in FLOP/s."""

    hw_id: int
    name: str
    marker: str
    style_index: int
    main_memory: str
    bandwidth: float
    precisions: tuple[str, ...]
    top_peak: float
    efficiency: float | None


@record(frozen=True)
class Roof:
    """One roof segment, from ``(xs[0], ys[0])`` to ``(xs[1], ys[1])`` in data units.

    ``kind`` is ``"memory"`` or ``"interconnect"`` (sloped: ``value`` is a bandwidth in
    bytes/s and ``y = value · x``) or ``"compute"`` (flat: ``value`` is a peak in FLOP/s).
    ``name`` is the memory level, interconnect or precision. For a derated roof ``derated``
    is true and ``value`` is already ``efficiency ×`` the nominal figure. ``emphasis`` is
    ``"main"`` or ``"minor"``; ``line`` is ``"solid"``, ``"dashed"`` or ``"dashdot"``."""

    hw_id: int
    kind: str
    name: str
    value: float
    xs: tuple[float, float]
    ys: tuple[float, float]
    style_index: int
    emphasis: str = "main"
    line: str = "solid"
    derated: bool = False
    label: str = ""

    @property
    def sloped(self) -> bool:
        return self.kind != "compute"


@record(frozen=True)
class Ridge:
    """The ridge point of one precision against main memory: ``x`` in FLOP/byte
    (``peak / bandwidth``), ``y`` the peak in FLOP/s."""

    hw_id: int
    precision: str
    x: float
    y: float
    label: str
    style_index: int


@record(frozen=True)
class Region:
    """A shaded region: the area between the upper boundary ``(xs, ys)`` (a polyline in data
    units) and ``floor`` (FLOP/s). ``kind`` is ``"memory"`` or ``"compute"``."""

    kind: str
    hw_id: int
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    floor: float
    label: str


@record(frozen=True, init=False)
class PointMark:
    """One operation on one machine at ``(x, y)`` = (intensity in FLOP/byte, attainable
    FLOP/s). ``color`` is the operation's colour (``#RRGGBB``), ``marker`` the machine's
    marker (one of :data:`MARKERS`). ``show_label`` marks the single point of each operation
    that carries its name (the highest of its column: an operation has the same intensity on
    every machine). ``overhead`` flags overhead-bound points. ``label`` is the operation's
    name; ``result`` may be shared with operations of the same counts (a model's layers)
    and then names the first of them."""

    op_id: int
    hw_id: int
    x: float
    y: float
    color: str
    marker: str
    label: str
    show_label: bool
    bound: str
    precision_used: str
    machine: str
    result: Result = field(compare=False, repr=False)

    def __init__(self, op_id: int, hw_id: int, x: float, y: float, color: str, marker: str, label: str,
                 show_label: bool, bound: str, precision_used: str, machine: str, result: Result) -> None:
        # (each field set once: the frozen dataclass's own __init__ calls object.__setattr__
        # for each, and a whole model's edit makes thousands of marks)
        f = self.__dict__
        f["op_id"], f["hw_id"], f["x"], f["y"], f["color"], f["marker"], f["label"] = (
            op_id, hw_id, x, y, color, marker, label)
        f["show_label"], f["bound"], f["precision_used"], f["machine"], f["result"] = (
            show_label, bound, precision_used, machine, result)

    @property
    def overhead(self) -> bool:
        return self.bound == "overhead"

    @property
    def tooltip(self) -> str:
        """Operation, machine, intensity, attainable, bound, % of peak, precision, times."""
        return point_tooltip(self.result, self.machine, self.label)


@record(frozen=True)
class LegendEntry:
    """``kind`` ``"machine"`` (``marker`` and ``style_index`` set), ``"operation"``
    (``color`` set), ``"measured"`` (a verdict band of the measured points: ``marker`` and
    ``color`` set) or ``"note"`` (text only, or with a hollow ``marker`` for the
    overhead-bound explanation)."""

    kind: str
    text: str
    id: int | None = None
    color: str | None = None
    marker: str | None = None
    style_index: int | None = None


@record(frozen=True)
class Reference:
    """A machine as the cursor read-out (each visible one) and the shaded regions (the
    first) see it: its main-memory ``bandwidth`` (bytes/s) and its highest drawn ``peak``
    (FLOP/s) at ``precision``."""

    hw_id: int
    name: str
    bandwidth: float
    peak: float
    precision: str

    @property
    def ridge(self) -> float:
        """FLOP/byte."""
        return ridge(self.peak, self.bandwidth)

    def roof(self, x: float) -> float:
        """Attainable FLOP/s at intensity ``x`` FLOP/byte."""
        return attainable(x, self.peak, self.bandwidth)

    def regime_at(self, x: float, y: float | None = None, tolerance: float = 1e-9) -> str:
        """``"memory-bound"`` / ``"compute-bound"`` at intensity ``x``; ``"above the roof"``
        when ``y`` (FLOP/s) lies above the roof there by more than the relative
        ``tolerance`` (a cursor a pixel above a point on the roof is still on it)."""
        if y is not None and y > self.roof(x) * (1 + tolerance):
            return "above the roof"
        return "compute-bound" if compute_bound(x / self.peak, 1 / self.bandwidth) else "memory-bound"


@record(frozen=True)
class Scene:
    """Everything the chart shows. Ranges are ``(low, high)`` in data units, whole decades;
    ``extent`` is the x span (FLOP/byte) the roofs are drawn over (wider than ``x_range``).
    ``sweeps``, ``measured`` and ``links`` are the sweep paths, measured points and compared
    pairs (see :mod:`workbench.model.chart.overlay_data`), empty when the view hides them."""

    title: str
    machines: tuple[MachineMark, ...]
    roofs: tuple[Roof, ...]
    ridges: tuple[Ridge, ...]
    regions: tuple[Region, ...]
    points: tuple[PointMark, ...]
    legend: tuple[LegendEntry, ...]
    x_title: str
    y_title: str
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    extent: tuple[float, float]
    #: every visible machine's, in order (the cursor read-out speaks of each)
    references: tuple[Reference, ...]
    labels_suppressed: int = 0
    notes: tuple[str, ...] = ()
    sweeps: tuple[SweepPath, ...] = ()
    measured: tuple[MeasuredMark, ...] = ()
    links: tuple[PairLink, ...] = ()

    @property
    def labels_allowed(self) -> bool:
        return self.labels_suppressed == 0

    def cursor_text(self, x: float, y: float, tolerance: float = 1e-9) -> str:
        """Status read-out at a cursor position (data units):
        ``"I = 12.3 FLOP/B, 45.6 TFLOP/s — memory-bound on H100"``, each machine's regime
        there (``"… — compute-bound on H100; memory-bound on TPU v5e"``); see
        :meth:`Reference.regime_at` for ``tolerance``."""
        text = f"I = {format_quantity(x, 'intensity')}, {format_quantity(y, 'flop_rate')}"
        # each machine's regime there, machines of one regime said together
        by_regime: dict[str, list[str]] = {}
        for ref in self.references:
            by_regime.setdefault(ref.regime_at(x, y, tolerance), []).append(ref.name)
        parts = [f"above the roof of {', '.join(names)}" if regime == "above the roof"
                 else f"{regime} on {', '.join(names)}" for regime, names in by_regime.items()]
        return f"{text} — {'; '.join(parts)}" if parts else text


# ---------------------------------------------------------------------------------------
# formatting


def point_tooltip(result: Result, machine: str, name: str | None = None) -> str:
    """Tooltip text of one point, numbers to 3 significant figures; ``name`` is the
    operation's (default: the one the result names)."""
    precision = result.precision_used
    if result.precision != result.precision_used:
        precision = f"{result.precision} (runs at {result.precision_used})"
    pct = format_number(result.fraction_of_peak * 100)
    lines = [
        result.operation if name is None else name,
        f"on {machine}",
        f"Intensity: {format_quantity(result.intensity, 'intensity')} (across {result.level})",
        f"Attainable: {format_quantity(result.attainable_flops, 'flop_rate')}"
        f" ({pct} % of peak)",
        f"Bound: {result.bound}",
        f"Precision: {precision}, {'vector ' if result.unit == 'vector' else ''}peak "
        f"{format_quantity(result.peak_flops, 'flop_rate')}",
        f"T_lower: {format_quantity(result.t_lower_s, 'time')}",
        f"Predicted time: {format_quantity(result.t_predicted_s, 'time')}",
    ]
    if result.bound == "overhead" and result.launch_overhead_s:
        launches = (f"{result.kernels} × " if result.kernels > 1 else "")
        lines[4] += (f" (T_lower / efficiency below {launches}the "
                     f"{format_quantity(result.launch_overhead_s, 'time')} launch overhead)")
    return "\n".join(lines)


def ridge_label(ridge: float, precision: str = "") -> str:
    """``"ridge 295 FLOP/B"`` (with ``" (fp8)"`` when a machine shows several precisions)."""
    text = f"ridge {_trim(format_number(ridge))} FLOP/B"
    return f"{text} ({precision})" if precision else text


def _trim(text: str) -> str:
    """``"25.0"`` → ``"25"``; ``"2.50"`` → ``"2.5"`` (exponent forms are left alone)."""
    if "." in text and "e" not in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _rate(value: float) -> str:
    return format_quantity(value, "flop_rate")


def _bandwidth(value: float) -> str:
    return format_quantity(value, "bandwidth")


# ---------------------------------------------------------------------------------------
# building


def decade_range(low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` rounded outwards to whole decades, at least one decade wide."""
    lo = 10.0 ** math.floor(math.log10(low) + 1e-9)
    hi = 10.0 ** math.ceil(math.log10(high) - 1e-9)
    if hi <= lo:
        hi = lo * 10
    return lo, hi


def operation_colors(session: Session) -> dict[int, str]:
    """Colour of every operation by id; the same as :meth:`Session.color_of` in one pass."""
    return {e.id: e.color or e.auto_color or PALETTE[i % len(PALETTE)]
            for i, e in enumerate(session.operations)}


def _machine_markers(session: Session) -> dict[int, str]:
    return {e.id: e.marker or MARKERS[i % len(MARKERS)] for i, e in enumerate(session.hardware)}


def _drawable(result: Result | None) -> bool:
    if result is None:
        return False
    x, y = result.intensity, result.attainable_flops
    return math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0


def drawn_pairs(pairs: Iterable[Pair], markers: dict[int, str]) -> list[tuple]:
    """What the points of one operation show, one tuple per pair that can be drawn:
    ``(hw_id, x, y, marker, bound, precision_used, machine, result, highest)``, where
    ``highest`` marks the point that carries the operation's name. Operations that share a
    row of pairs (a model's layers) share this too."""
    drawn = [(p, p.result) for p in pairs if p.result is not None and _drawable(p.result)]
    top = max(drawn, key=lambda d: d[1].attainable_flops, default=(None, None))[0]
    out = []
    for pair, r in drawn:
        hw_id = pair.hardware.id
        out.append((hw_id, r.intensity, r.attainable_flops, markers.get(hw_id, MARKERS[0]),
                    r.bound, r.precision_used, pair.hardware.hardware.label, r, pair is top))
    return out


def operation_points(
    entry: OperationEntry,
    pairs: Iterable[Pair],
    color: str,
    markers: dict[int, str],
    labels_allowed: bool = True,
    show_labels: bool = True,
    drawn: list[tuple] | None = None,
) -> list[PointMark]:
    """The points of one operation (one per machine it could be evaluated on).

    Used by :func:`build_scene` and by the canvas to move one operation's points after an
    edit without rebuilding the scene. The label goes on the highest point of the column
    when ``show_labels`` (the view shows labels), the entry wants one and ``labels_allowed``.
    ``drawn`` is :func:`drawn_pairs` of ``pairs`` when the caller has it already.
    """
    if drawn is None:
        drawn = drawn_pairs(pairs, markers)
    wants_label = bool(show_labels and entry.label and labels_allowed)
    return drawn_points(entry.id, entry.operation.name, color, wants_label, drawn)


def drawn_points(op_id: int, name: str, color: str, wants_label: bool,
                 drawn: list[tuple]) -> list[PointMark]:
    """The points of operation ``op_id`` named ``name`` that show ``drawn``
    (:func:`drawn_pairs`); the highest carries the name when ``wants_label``."""
    return [PointMark(op_id, hw_id, x, y, color, marker, name, wants_label and highest, bound,
                      precision, machine, r)
            for hw_id, x, y, marker, bound, precision, machine, r, highest in drawn]


def _order(precision: str) -> int:
    base = precision.removesuffix(" vector")
    return PRECISIONS.index(base) if base in PRECISIONS else len(PRECISIONS)


def _peak_groups(compute: dict[str, float], precisions: Sequence[str]) -> list[tuple[str, float]]:
    """Precisions with the same peak share one roof and one ridge: ``[("fp16/bf16", 1e14)]``,
    highest peak first (``precisions`` come sorted that way)."""
    groups: dict[float, list[str]] = {}
    for name in precisions:
        groups.setdefault(compute[name], []).append(name)
    return [(_group_name(names), peak) for peak, names in groups.items()]


def _group_name(names: list[str]) -> str:
    """``bf16/fp16``; vector roofs share one suffix: ``bf16/fp16 vector``."""
    if len(names) > 1 and all(n.endswith(" vector") for n in names):
        return "/".join(n.removesuffix(" vector") for n in names) + " vector"
    return "/".join(names)


def _default_precision(compute: dict[str, float]) -> str:
    for name in _DEFAULT_PRECISIONS:
        if name in compute:
            return name
    return max(compute, key=lambda k: compute[k])


def build_scene(session: Session, pairs: Sequence[Pair], kernels: int | None = None) -> Scene:
    """The chart for ``session`` given its evaluated ``pairs`` (any order; pairs of hidden
    operations or machines are ignored).

    ``kernels`` (a figure, which has no tooltips to name a point): at most this many
    profiled kernels of each run are drawn, those with the most GPU time, and each kernel
    measured on its own is named by a tag and a row of the key (:func:`kernel_key`)."""
    view = session.view
    visible_hw = machine_entries(session)
    visible_hw_ids = {h.id for h in visible_hw}
    visible_ops = [e for e in session.operations if e.visible]
    visible_op_ids = {e.id for e in visible_ops}
    pairs = [p for p in pairs
             if p.operation.id in visible_op_ids and p.hardware.id in visible_hw_ids]
    by_op: dict[int, list[Pair]] = {}
    for pair in pairs:
        by_op.setdefault(pair.operation.id, []).append(pair)

    colors = operation_colors(session)
    markers = _machine_markers(session)
    notes = [f"{p.skipped.operation} on {p.skipped.hardware}: {p.skipped.reason}"
             for p in pairs if p.skipped is not None]
    notes += [f"{p.operation.operation.name} on {p.hardware.hardware.label}: not drawn "
              f"(intensity or performance is not a positive number)"
              for p in pairs if p.result is not None and not _drawable(p.result)]

    # labels: one per labelled, visible operation; all skipped above MAX_LABELS
    wanted = sum(1 for e in visible_ops if e.label and any(
        _drawable(p.result) for p in by_op.get(e.id, ()))) if view.labels else 0
    suppressed = wanted if wanted > MAX_LABELS else 0

    points: list[PointMark] = []
    for entry in visible_ops:
        points += operation_points(entry, by_op.get(entry.id, ()), colors[entry.id], markers,
                                   labels_allowed=not suppressed, show_labels=view.labels)

    # what each machine needs drawn
    used_precisions: dict[int, set[str]] = {h.id: set() for h in visible_hw}
    used_levels: dict[int, set[str]] = {h.id: set() for h in visible_hw}
    for pair in pairs:
        if pair.result is not None:
            # the roof the result was judged against: a matrix or a vector peak
            used_precisions[pair.hardware.id].add(
                roof_name(pair.result.precision_used, pair.result.unit))
            used_levels[pair.hardware.id].add(pair.result.level)

    machines: list[MachineMark] = []
    for index, hw_entry in enumerate(visible_hw):
        hw = hw_entry.hardware
        peaks = hw.roof_peaks()
        if view.all_precisions:
            names = set(peaks)
        else:
            names = {p for p in used_precisions[hw_entry.id] if p in peaks}
            if not names:
                names = {_default_precision(hw.compute)}
        # (by name last: a matrix and a vector peak of one precision tie, and a set's order
        # changes with the process)
        precisions = tuple(sorted(names, key=lambda p: (-peaks[p], _order(p), p)))
        machines.append(MachineMark(
            hw_id=hw_entry.id,
            name=hw.label,
            marker=markers[hw_entry.id],
            style_index=index,
            main_memory=hw.main_memory,
            bandwidth=hw.bandwidth(),
            precisions=precisions,
            top_peak=peaks[precisions[0]],
            efficiency=hw.efficiency,
        ))

    # ridges first: they fix the data range, which fixes the roofs' extent
    ridges: list[Ridge] = []
    for mark in machines:
        groups = _peak_groups(machine_of(session, mark.hw_id).roof_peaks(), mark.precisions)
        for name, peak in groups:
            x = ridge(peak, mark.bandwidth)
            ridges.append(Ridge(mark.hw_id, name, x, peak,
                                ridge_label(x, name if len(groups) > 1 else ""),
                                mark.style_index))

    # sweep paths, measured points and compared pairs, as the view asks
    found = build_overlays(session, visible_ops, machines, colors, pairs, kernels)
    sweeps, measured, links = list(found.sweeps), list(found.measured), list(found.links)
    notes += found.notes
    if len(machines) > 1:
        ridges, sweeps, links = whose_texts(session, ridges, sweeps, links)
        measured = whose_measured(session, measured)

    for hw_id, name in profile_roof_levels(measured, visible_hw, view.level):
        used_levels[hw_id].add(name)
    x_range, y_range = _data_range(points, ridges, machines,
                                   overlay_extent(sweeps, measured))
    if view.x_range:
        x_range = (float(view.x_range[0]), float(view.x_range[1]))
    if view.y_range:
        y_range = (float(view.y_range[0]), float(view.y_range[1]))
    extent = (x_range[0] / 10.0**EXTENT_DECADES, x_range[1] * 10.0**EXTENT_DECADES)

    roofs: list[Roof] = []
    for mark in machines:
        roofs += _machine_roofs(session, mark, used_levels[mark.hw_id], extent, view.derated,
                                view.all_levels)

    references = tuple(Reference(m.hw_id, m.name, m.bandwidth, m.top_peak, m.precisions[0])
                       for m in machines)
    regions = (build_regions(references[0] if references else None, extent, y_range)
               if view.regions else ())

    # operations named on the chart need no legend row: machines only, then the notes
    labelled = {p.op_id for p in points if p.show_label}
    legend = _legend(session, machines, [e for e in visible_ops if e.id not in labelled],
                     colors, points, suppressed)
    legend += measured_legend(measured, found.measured_total, found.hidden_note)
    legend += [LegendEntry("key", row) for row in found.kernel_rows]
    return Scene(
        title=session.title,
        machines=tuple(machines),
        roofs=tuple(roofs),
        ridges=tuple(ridges),
        regions=tuple(regions),
        points=tuple(points),
        legend=tuple(legend),
        x_title=X_TITLE,
        y_title=Y_TITLE,
        x_range=x_range,
        y_range=y_range,
        extent=extent,
        references=references,
        labels_suppressed=suppressed,
        notes=tuple(notes),
        sweeps=tuple(sweeps),
        measured=tuple(measured),
        links=tuple(links),
    )


def whose_texts(session: Session, ridges: list[Ridge], sweeps: list[SweepPath],
                links: list[PairLink]) -> tuple[list, list, list]:
    """On a chart of several machines, the texts that belong to one machine name it (its
    short name, as its roof labels do): ridge labels, sweep crossings ("H100 SXM5 80GB:
    m* = 318.3"), and a compared pair's figures where they differ between machines, one line
    each in one text (the same figures on every machine are said once, for all)."""
    whose = machine_namer(session)
    ridges = [replace(r, label=whose(r.hw_id, r.label)) for r in ridges]
    sweeps = [replace(p, crossings=tuple(replace(c, label=whose(c.hw_id, c.label))
                                         for c in p.crossings)) if p.crossings else p
              for p in sweeps]
    by_pair: dict[tuple[str, str], list[PairLink]] = {}
    for link in links:
        by_pair.setdefault((link.first, link.second), []).append(link)
    # figures that differ: one text for the pair, a line per machine (placed by whichever
    # link has room)
    said = {pair: "\n".join(whose(k.hw_id, k.label) for k in group)
            for pair, group in by_pair.items() if len({k.label for k in group}) > 1}
    links = [replace(k, label=said[(k.first, k.second)]) if (k.first, k.second) in said
             else k for k in links]
    return ridges, sweeps, links


def measured_legend(measured: Sequence[MeasuredMark], total: int = 0,
                    hidden: str = "") -> list[LegendEntry]:
    """One legend entry per verdict band the drawn measured points fall in, then (text only)
    how many of the ``total`` measured points are drawn when not all of them are, and which
    profiled kernels the top-N rule hides (``hidden``)."""
    cap = measured_cap_note(len(measured), total)
    return ([LegendEntry("measured", text, color=VERDICT_COLORS[key], marker="x")
             for key, text in overlay_legend(measured)] + [LegendEntry("measured", cap)] * bool(cap)
            + [LegendEntry("measured", hidden)] * bool(hidden))


def _data_range(points: Sequence[PointMark], ridges: Sequence[Ridge],
                machines: Sequence[MachineMark], extra: Sequence[tuple[float, float]] = ()
                ) -> tuple[tuple[float, float], tuple[float, float]]:
    """Covers every point (padded by ×1.25), every ridge with a decade of slope before it and
    a decade of flat roof after it, every drawn compute roof, and the ``extra`` points (sweep
    paths, measured points); rounded out to decades, but for the top: ×3 above the highest
    roof (or the highest point, when that is higher)."""
    xs_lo = [p.x / _POINT_PAD for p in points] + [r.x / _RIDGE_SPAN for r in ridges]
    xs_hi = [p.x * _POINT_PAD for p in points] + [r.x * _RIDGE_SPAN for r in ridges]
    ys_lo = [p.y / _POINT_PAD for p in points] + [r.y / _RIDGE_SPAN for r in ridges]
    ys_hi = [p.y * _POINT_PAD for p in points] + [m.top_peak * _PEAK_PAD for m in machines]
    xs_lo += [x / _POINT_PAD for x, _ in extra]
    xs_hi += [x * _POINT_PAD for x, _ in extra]
    ys_lo += [y / _POINT_PAD for _, y in extra]
    ys_hi += [y * _POINT_PAD for _, y in extra]
    if not xs_lo:
        return (0.1, 1000.0), (1e9, 1e15)
    y_range = decade_range(min(ys_lo), max(ys_hi))
    roofs_top = max((m.top_peak for m in machines), default=0.0)
    if roofs_top > 0:
        # the top sits just above the highest roof (room for the texts over it), not at the
        # next decade: a whole empty decade would take a fifth of the chart
        data_top = max([p.y * _POINT_PAD for p in points] + [y * _POINT_PAD for _, y in extra],
                       default=0.0)
        top = max(roofs_top * _TOP_ROOM, data_top)
        if y_range[0] < top < y_range[1]:
            y_range = (y_range[0], top)
    return decade_range(min(xs_lo), max(xs_hi)), y_range


def _machine_roofs(session: Session, mark: MachineMark, levels: set[str],
                   extent: tuple[float, float], derated: bool,
                   all_levels: bool = False) -> list[Roof]:
    hw = machine_of(session, mark.hw_id)
    x_lo, x_hi = extent
    top = mark.top_peak
    roofs: list[Roof] = []
    sloped = [("memory", name, bw) for name, bw in hw.memory.items()
              if all_levels or name == hw.main_memory or name in levels]
    sloped += [("interconnect", name, bw) for name, bw in hw.interconnect.items()
               if name in levels and name not in hw.memory]
    fastest = max(bw for _, _, bw in sloped)
    for kind, name, bw in sloped:
        main = kind == "memory" and name == hw.main_memory
        roofs.append(Roof(
            hw_id=mark.hw_id, kind=kind, name=name, value=bw,
            xs=(x_lo, ridge(top, bw)), ys=(attainable(x_lo, top, bw), top),
            style_index=mark.style_index,
            emphasis="main" if main else "minor",
            line="dashdot" if kind == "interconnect" else "solid",
            label=f"{name} {_bandwidth(bw)}",
        ))
    groups = _peak_groups(hw.roof_peaks(), mark.precisions)
    for i, (name, peak) in enumerate(groups):
        text = f"{name} {_rate(peak)}"
        roofs.append(Roof(
            hw_id=mark.hw_id, kind="compute", name=name, value=peak,
            xs=(ridge(peak, fastest), x_hi), ys=(peak, peak),
            style_index=mark.style_index,
            emphasis="main" if i == 0 else "minor",
            label=f"{short_name(hw)}: {text}" if i == 0 else text,
        ))
    eff = mark.efficiency
    if derated and eff:
        pct = _trim(format_number(eff * 100))
        bw = mark.bandwidth * eff
        top_d = top * eff
        roofs.append(Roof(
            hw_id=mark.hw_id, kind="memory", name=hw.main_memory, value=bw,
            xs=(x_lo, ridge(top_d, bw)), ys=(attainable(x_lo, top_d, bw), top_d),
            style_index=mark.style_index, emphasis="minor", line="dashed", derated=True, label="",
        ))
        for name, nominal in groups:
            peak = nominal * eff
            roofs.append(Roof(
                hw_id=mark.hw_id, kind="compute", name=name, value=peak,
                xs=(ridge(peak, bw), x_hi), ys=(peak, peak), style_index=mark.style_index,
                emphasis="minor", line="dashed", derated=True,
                label=f"practical {pct} %: {_rate(peak)}",
            ))
    return roofs


def build_regions(reference: Reference | None, extent: tuple[float, float],
                  y_range: tuple[float, float]) -> tuple[Region, ...]:
    """Memory-bound (left of the ridge) and compute-bound (right of it) regions under the
    roof of the **first visible machine, at its highest drawn precision** against its main
    memory. With several machines the regions refer to that one machine only."""
    if reference is None:
        return ()
    x_lo, x_hi = extent
    at = reference.ridge
    floor = y_range[0] / 10.0**EXTENT_DECADES
    peak = reference.peak
    return (
        Region("memory", reference.hw_id, (x_lo, at), (reference.roof(x_lo), peak),
               floor, "memory-bound"),
        Region("compute", reference.hw_id, (at, x_hi), (peak, peak), floor, "compute-bound"),
    )


def _legend(session: Session, machines: Sequence[MachineMark], ops: Sequence[OperationEntry],
            colors: dict[int, str], points: Sequence[PointMark], suppressed: int
            ) -> list[LegendEntry]:
    out = [LegendEntry("machine", m.name, m.hw_id, None, m.marker, m.style_index)
           for m in machines]
    shown = ops[:MAX_LEGEND_OPERATIONS]
    out += [LegendEntry("operation", e.operation.name, e.id, colors[e.id]) for e in shown]
    if len(ops) > len(shown):
        out.append(LegendEntry("note", f"and {len(ops) - len(shown)} more operations"))
    if any(p.overhead for p in points):
        out.append(LegendEntry("note", "hollow marker: overhead-bound", marker="o"))
    if suppressed:
        out.append(LegendEntry("note", f"labels off: {suppressed} labelled operations "
                                       f"(more than {MAX_LABELS})"))
    return out


def machine_entries(session: Session) -> list[HardwareEntry]:
    """Visible machines that can be drawn, in session order (style indices follow this)."""
    return [h for h in session.hardware
            if h.visible and h.hardware.compute and h.hardware.memory]
