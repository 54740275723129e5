"""Sweep paths, measured points and compared pairs as chart elements (plain data, no Qt).

:func:`~workbench.model.chart.scene.build_scene` adds these to the :class:`~workbench.model.chart.scene.Scene`
when the view shows them; the canvas also calls the builders here on their own to redraw one
kind of element after an edit (a sweep, the measurements, the compared pairs) without
rebuilding the chart. Everything is in data units (FLOP/byte, FLOP/s).

* :class:`SweepPath`: one swept operation on one machine: its samples in (intensity,
  attainable), joined in parameter order through the exact ridge crossings
  (:func:`~workbench.model.sweeps.sweep_crossings`), the end values labelled
  (``"m = 1"``, ``"m = 4096"``) and each crossing marked on the ridge and labelled
  (``"m* = 255.5"``). A crossing's position is the operation evaluated at the crossing value,
  so it lands on the ridge whatever the samples are.
* :class:`MeasuredMark`: a measurement judged on one machine
  (:func:`~workbench.model.measured_session.judge_session`): the measured point (measured intensity,
  achieved FLOP/s), the predicted point it is linked to, its fraction of the predicted ceiling
  and its verdict band, with the bands drawn as a scale at the predicted intensity.
* :class:`PairLink`: a compared pair on one machine
  (:func:`~workbench.model.comparison.compare_session`): a link from the first (baseline)
  point to the second, labelled with the bytes saved and the speed-up the roofline predicts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.model.analysis import Pair
from workbench.model.chart.profiled_kernels import (
    distinct_key_names,
    short_kernel_name,
    top_hidden,
    trace_operator,
)
from workbench.model.chart.readouts import (
    crossing_label,
    crossing_text,
    pair_label,
    sample_text,
    trimmed,
    value_text,
)
from workbench.model.chart.sweep_cache import cache_sweeps, cached_sweep
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.roofline import BOUND_NAMES
from workbench.model.roofline import sweep as roofline_sweep
from workbench.model.roofline import sweep_machines as roofline_sweep_machines
from workbench.model.session import OperationEntry, Session
from workbench.model.units import format_quantity
from workbench.records import record

if TYPE_CHECKING:
    from workbench.model.comparison import PairComparison
    from workbench.model.measured_session import MeasuredPoint
    from workbench.model.profile import LevelPoint

# Sweeps (workbench.model.sweeps), measured points (workbench.model.measured and
# measured_session), profiled kernels (workbench.model.profile) and compared pairs
# (workbench.model.comparison) are imported by the functions that draw them, when a session
# has any: not at start-up.

__all__ = [
    "VERDICT_COLORS",
    "VERDICT_SHORT",
    "MAX_SWEEP_DOTS",
    "CrossingMark",
    "SweepPath",
    "MeasuredMark",
    "run_links",
    "overlay_extent",
    "PairLink",
    "sweep_paths",
    "MAX_MEASURED_DRAWN",
    "measured_marks",
    "drawn_measured_marks",
    "measured_cap_note",
    "pair_links",
    "Overlays",
    "kernel_key",
    "profile_roof_levels",
    "build_overlays",
    "overlay_legend",
    "value_text",
    "crossing_label",
    "pair_label",
]

#: Colour of each verdict band (Okabe–Ito hues: distinguishable with colour-vision
#: deficiencies; the label carries the words as well).
VERDICT_COLORS = {
    "re-measure": "#E69F00",
    "as-predicted": "#009E73",
    "overhead-bound": "#56B4E9",
    "below-prediction": "#CC79A7",
    "likely-bug": "#D55E00",
}
#: Short names of the verdicts for labels on the chart.
VERDICT_SHORT = {
    "re-measure": "re-measure",
    "as-predicted": "as predicted",
    "overhead-bound": "overhead-bound",
    "below-prediction": "below prediction",
    "likely-bug": "likely a bug",
}
#: The verdict scale drawn at a prediction reaches down to this many times its predicted time.
BAND_DEPTH = 4.0
#: Paths with more samples than this are drawn as a line only (no dot per sample).
MAX_SWEEP_DOTS = 256


def _percent(fraction: float | None) -> str:
    """``0.8`` → ``"80 %"``, ``0.8469`` → ``"84.7 %"`` (three figures: a fraction just under a
    band edge does not read as the edge)."""
    if fraction is None:
        return "—"
    text = f"{fraction * 100:.3g}"
    return (trimmed(text) if "e" not in text else f"{fraction * 100:.0f}") + " %"


# ---------------------------------------------------------------------------------------------
# sweeps


@record(frozen=True)
class CrossingMark:
    """Where a swept operation meets one machine's ridge: ``value`` is the exact (real)
    parameter, ``(x, y)`` the operation evaluated there (on the ridge: intensity = peak /
    bandwidth, attainable = peak)."""

    op_id: int
    hw_id: int
    param: str
    value: float
    integer: int | None
    direction: str
    x: float
    y: float
    label: str
    tooltip: str
    color: str


@record(frozen=True)
class SweepPath:
    """One swept operation on one machine.

    ``values``/``xs``/``ys``/``bounds`` are the samples in ascending parameter order;
    ``path_xs``/``path_ys`` are the samples with the crossings inserted where they fall (what
    the line goes through). ``start_label``/``end_label`` name the smallest and largest value.
    """

    op_id: int
    hw_id: int
    operation: str
    machine: str
    param: str
    is_int: bool
    values: tuple[float, ...]
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    bounds: tuple[str, ...]
    times: tuple[float, ...]
    path_xs: tuple[float, ...]
    path_ys: tuple[float, ...]
    color: str
    marker: str
    style_index: int
    start_label: str
    end_label: str
    crossings: tuple[CrossingMark, ...] = ()

    @property
    def dots(self) -> bool:
        """Whether each sample gets a dot (not for very long paths)."""
        return len(self.values) <= MAX_SWEEP_DOTS

    def sample_tooltip(self, i: int) -> str:
        return sample_text(self.operation, self.machine, self.param,
                           value_text(self.values[i], self.is_int), self.xs[i], self.ys[i],
                           self.bounds[i], self.times[i])


def _drawable(x: float, y: float) -> bool:
    return math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0


def _xy(at: dict, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The intensity and attainable FLOP/s of a sweep's results ``at``, over ``shape``."""
    return (np.broadcast_to(np.asarray(at["intensity"], float), shape),
            np.broadcast_to(np.asarray(at["attainable_flops"], float), shape))


def _crossing_points(op, machines: Sequence[Any], sweep, keys: Sequence[tuple]
                     ) -> dict[int, tuple]:
    """The intensity and attainable FLOP/s (:func:`_xy`) at each remembered crossing of
    each of ``machines`` (:class:`Hardware`, remembered by ``keys``: see
    :func:`cache_sweeps`), by ``id`` of the machine, all from one evaluation: every machine
    at every crossing's value (the FLOPs and bytes counted once; each value's figures are
    worked out on their own, the same as on one machine alone). Empty where one cannot be
    evaluated: each is then evaluated by itself."""
    with_crossings = []
    for hw, key in zip(machines, keys, strict=True):
        try:
            _result, found = cached_sweep(op, hw, sweep, key)
        except COUNTING_ERRORS:  # (a SweepError is one: said by the caller)
            return {}
        if found:
            with_crossings.append((hw, found))
    if len(with_crossings) < 2:
        return {}
    values = np.asarray([c.value for _hw, found in with_crossings for c in found])
    try:
        evaluated = roofline_sweep_machines(op, [hw for hw, _found in with_crossings],
                                            **{sweep.param: values})
    except COUNTING_ERRORS:
        return {}
    out: dict[int, tuple] = {}
    start = 0
    for (hw, found), at in zip(with_crossings, evaluated, strict=True):
        own = slice(start, start + len(found))
        start += len(found)
        x, y = _xy(at, values.shape)
        out[id(hw)] = (x[own], y[own])
    return out


def sweep_paths(session: Session, entry: OperationEntry, machines: Sequence[Any], color: str
                ) -> tuple[list[SweepPath], list[str]]:
    """The paths of one swept operation on each of ``machines`` (objects with ``hw_id``,
    ``name``, ``marker`` and ``style_index``, such as
    :class:`~workbench.model.chart.scene.MachineMark`), and notes on what could not be drawn."""
    sweep = entry.sweep
    if sweep is None:
        return [], []
    from workbench.model.sweeps import SweepError  # (see the note at the imports)

    op = entry.operation
    by_id = {h.id: h for h in session.hardware}
    paths: list[SweepPath] = []
    notes: list[str] = []
    shown = [mark for mark in machines if mark.hw_id in by_id]
    hws = [by_id[mark.hw_id].hardware for mark in shown]
    keys = cache_sweeps(op, hws, sweep)
    at_crossings = _crossing_points(op, hws, sweep, keys)
    for mark, hw, key in zip(shown, hws, keys, strict=True):
        try:
            result, found = cached_sweep(op, hw, sweep, key)
        except SweepError as exc:
            notes.append(f"sweep of {op.name}: {exc}")
            return [], notes  # the same for every machine
        except COUNTING_ERRORS:
            continue
        order = np.argsort(result.values, kind="stable")
        values = result.values[order]
        xs = np.asarray(result["intensity"], float)[order]
        ys = np.asarray(result["attainable_flops"], float)[order]
        times = np.asarray(result["t_lower_s"], float)[order]
        bounds = [BOUND_NAMES[int(b)] for b in np.asarray(result["bound"])[order]]
        keep = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
        if not keep.any():
            notes.append(f"sweep of {op.name} on {mark.name}: no drawable value")
            continue
        values, xs, ys, times = values[keep], xs[keep], ys[keep], times[keep]
        bounds = [b for b, k in zip(bounds, keep, strict=True) if k]

        marks: list[CrossingMark] = []
        if found:
            cx, cy = at_crossings.get(id(hw)) or _xy(
                roofline_sweep(op, hw, **{sweep.param: np.asarray([c.value for c in found])}),
                (len(found),))
            for c, x, y in zip(found, cx, cy, strict=True):
                if not _drawable(float(x), float(y)):
                    continue
                marks.append(CrossingMark(
                    op_id=entry.id, hw_id=mark.hw_id, param=c.param, value=c.value,
                    integer=c.integer, direction=c.direction, x=float(x), y=float(y),
                    label=crossing_label(c.param, c.value),
                    tooltip=crossing_text(op.name, mark.name, c), color=color))
        # the line runs through the samples and the crossings, in parameter order
        all_v = np.concatenate([values, [m.value for m in marks]])
        all_x = np.concatenate([xs, [m.x for m in marks]])
        all_y = np.concatenate([ys, [m.y for m in marks]])
        path_order = np.argsort(all_v, kind="stable")
        paths.append(SweepPath(
            op_id=entry.id, hw_id=mark.hw_id, operation=op.name, machine=mark.name,
            param=sweep.param, is_int=result.is_int,
            values=tuple(float(v) for v in values), xs=tuple(float(v) for v in xs),
            ys=tuple(float(v) for v in ys), bounds=tuple(bounds),
            times=tuple(float(v) for v in times),
            path_xs=tuple(float(v) for v in all_x[path_order]),
            path_ys=tuple(float(v) for v in all_y[path_order]),
            color=color, marker=mark.marker, style_index=mark.style_index,
            start_label=f"{sweep.param} = {value_text(values[0], result.is_int)}",
            end_label=(f"{sweep.param} = {value_text(values[-1], result.is_int)}"
                       if len(values) > 1 else ""),
            crossings=tuple(marks),
        ))
    return paths, notes


# ---------------------------------------------------------------------------------------------
# measured points


@record(frozen=True)
class MeasuredMark:
    """One measurement judged on one machine.

    ``(x, y)`` is the measured point (measured intensity, achieved FLOP/s), ``(px, py)`` the
    prediction it is linked to. ``bands`` is the verdict scale at the predicted intensity:
    ``(verdict key, y_low, y_high)`` per band, from ``BAND_DEPTH ×`` the predicted time to
    the ceiling.
    """

    index: int
    name: str
    op_id: int | None
    hw_id: int
    machine: str
    x: float
    y: float
    px: float
    py: float
    fraction: float
    verdict: str
    verdict_label: str
    color: str
    label: str
    tooltip: str
    bands: tuple[tuple[str, float, float], ...] = field(default=(), repr=False)
    #: A profiled kernel in the View's ``all`` levels: ``(level, intensity, tooltip)`` of
    #: each level it has bytes for, innermost first (drawn as small marks on a thin line at
    #: the point's FLOP/s).
    level_xs: tuple[tuple[str, float, str], ...] = ()
    #: The run (profile) the point came from, for before/after arrows.
    run: str | None = None
    #: A figure's tag for a kernel measured on its own ("K3"; :func:`kernel_key`): its label
    #: is the tag, the key names it; "" where the label says the name itself.
    tag: str = ""

    @property
    def standalone(self) -> bool:
        return self.op_id is None


def run_links(session: Session, marks: Sequence[MeasuredMark]) -> list[PairLink]:
    """An arrow per kernel drawn in both of the session's first two runs, per machine: from
    its point in the first run to its point in the second, labelled with its speed-up (mean
    time before / mean time after)."""
    from workbench.model.profile import run_changes  # (see the note at the imports)

    changes = {c.name: c for c in run_changes(session.measurements)}
    if not changes:
        return []
    first = {}
    for mark in marks:
        change = changes.get(mark.name)
        if change is not None and mark.run == change.before.run:
            first[(mark.name, mark.hw_id)] = mark
    out = []
    for mark in marks:
        change = changes.get(mark.name)
        if change is None or mark.run != change.after.run or change.speedup is None:
            continue
        before = first.get((mark.name, mark.hw_id))
        if before is None:
            continue
        tooltip = (f"{mark.name}\n{change.before.run}: "
                   f"{format_quantity(change.before.time_s, 'time')} → {change.after.run}: "
                   f"{format_quantity(change.after.time_s, 'time')} per launch\n"
                   f"speed-up = {format_quantity(change.before.time_s, 'time')} / "
                   f"{format_quantity(change.after.time_s, 'time')} = {change.speedup:.3g}×")
        out.append(PairLink(-1, change.before.run or "", change.after.run or "", -1, -1,
                            mark.hw_id, mark.machine, before.x, before.y, mark.x, mark.y, 0.0,
                            0.0, change.speedup, 0, f"{change.speedup:.2f}×", tooltip))
    return out


def _level_tip(p: LevelPoint) -> str:
    head = f"{p.level}: {format_quantity(p.bytes, 'bytes')}"
    if p.intensity is None:
        return head + ", no intensity (no bytes)"
    head += f", I = {format_quantity(p.intensity, 'intensity')}"
    if p.roof is None:
        return head + f" ({p.problem})"
    return (head + f", roof {format_quantity(p.roof, 'flop_rate')} "
            f"(min(peak, I × {format_quantity(p.bandwidth, 'bandwidth')})): "
            f"{_percent(p.fraction)} of it")


def _measured_tooltip(point: MeasuredPoint, machine: str) -> str:
    j = point.judgement
    assert j is not None  # (only a judged point is drawn, with its tooltip)
    m = point.measurement
    target = (f"the prediction of {m.operation}" if m.operation
              else "the prediction from its own FLOPs and bytes")
    lines = [
        f"Measured: {m.name}",
        f"on {machine}, against {target}",
        f"Measured time: {format_quantity(j.measured_time_s, 'time')}, "
        f"{format_quantity(j.achieved_flops, 'flop_rate')}",
        f"Predicted: T_lower {format_quantity(j.predicted_time_s, 'time')}, "
        f"{format_quantity(j.predicted_attainable_flops, 'flop_rate')} ({j.predicted_bound}-bound)",
        f"Fraction of the predicted ceiling: {_percent(j.fraction)}",
        *([f"Measured / T_predicted: {j.vs_predicted:.2f} × (T_predicted "
           f"{format_quantity(j.t_predicted_s, 'time')})"] if j.vs_predicted else []),
        f"Verdict: {j.verdict_label}",
    ]
    if j.measured_intensity is not None and not math.isclose(
            j.measured_intensity, j.predicted_intensity, rel_tol=1e-9):
        lines.insert(4, f"Intensity: measured {format_quantity(j.measured_intensity, 'intensity')}"
                        f", predicted {format_quantity(j.predicted_intensity, 'intensity')}")
    lines += list(j.notes)
    if m.source:
        lines.append(f"Source: {m.source}")
    return "\n".join(lines)


def _bands(py: float, scale: float = 1.0) -> tuple[tuple[str, float, float], ...]:
    """The verdict scale below a prediction at height ``py``: a measured time r × T_predicted
    draws at py · scale / r, with ``scale`` = T_lower / T_predicted: each band of r from
    :data:`VERDICTS` up to the ceiling, down to r = :data:`BAND_DEPTH`."""
    from workbench.model.measured import VERDICTS  # (see the note at the imports)

    out = []
    for verdict in VERDICTS:
        if math.isnan(verdict.low):
            continue  # overhead-bound: a regime, not a band of times
        low = scale / min(verdict.high, BAND_DEPTH)
        high = min(scale / verdict.low if verdict.low > 0 else math.inf, 1.0)
        if high > low:
            out.append((verdict.key, py * low, py * high))
    return tuple(out)


#: The most measured points a chart draws (one per measurement and machine): each has a
#: marker, a link to its prediction, a verdict scale and a label, and a few thousand of them
#: are unreadable on one chart and slow to place. Beyond it the chart draws the first ones in
#: the session's order (the Measurements table's) and says how many it left out.
MAX_MEASURED_DRAWN = 1_000


def measured_marks(session: Session, machine_ids: Sequence[int],
                   judged: Sequence[MeasuredPoint] | None = None
                   ) -> tuple[list[MeasuredMark], list[str]]:
    """The measured points of ``session`` on the machines ``machine_ids`` (those drawn), and
    notes on measurements that cannot be judged. A measurement attached to a hidden operation
    is not drawn."""
    marks, _total, notes, _hidden = drawn_measured_marks(session, machine_ids, judged,
                                                         limit=None)
    return marks, notes


def drawn_measured_marks(session: Session, machine_ids: Sequence[int],
                         judged: Sequence[MeasuredPoint] | None = None,
                         limit: int | None = MAX_MEASURED_DRAWN, most: int | None = None
                         ) -> tuple[list[MeasuredMark], int, list[str], str]:
    """:func:`measured_marks`, at most ``limit`` of them (the first in the session's order):
    ``(marks, how many could be drawn in all, notes, what the top-N rule hides)``. ``most``:
    a figure's top-N rule (:func:`top_hidden`)."""
    from workbench.model.measured_session import judge_session  # (see the note at the imports)
    from workbench.model.profile import level_points

    judged = judge_session(session) if judged is None else judged
    shown = set(machine_ids)
    index_of = {id(m): i for i, m in enumerate(session.measurements)}
    hidden, hidden_note = top_hidden(session, most)
    level = session.view.level
    marks: list[MeasuredMark] = []
    notes: list[str] = []
    total = 0
    for point in judged:
        m = point.measurement
        if id(m) in hidden:
            continue
        if point.judgement is None:
            where = f" on {point.hardware.hardware.label}" if point.hardware else ""
            notes.append(f"measurement {m.name}{where}: {point.problem}")
            continue
        if point.hardware is None or point.hardware.id not in shown:
            continue
        if point.operation is not None and not point.operation.visible:
            continue
        j = point.judgement
        x = j.measured_intensity if j.measured_intensity else j.predicted_intensity
        y, px, py = j.achieved_flops, j.predicted_intensity, j.predicted_attainable_flops
        levels = (level_points(m, point.hardware.hardware)
                  if m.levels and m.operation is None else [])
        at_level = None
        if levels and level in ("l1", "l2"):
            at_level = next((p for p in levels if p.level == level), None)
            if at_level is None or not at_level.intensity:
                continue  # no bytes counted at that level: no point there
            x = at_level.intensity
            if at_level.roof:  # held against that level's roof, right above it
                px, py = at_level.intensity, at_level.roof
        if not (_drawable(x, y) and _drawable(px, py)):
            continue
        total += 1
        if limit is not None and len(marks) >= limit:
            continue
        machine = point.hardware.hardware.label
        label = f"{_percent(j.fraction)} · {VERDICT_SHORT.get(j.verdict, j.verdict)}"
        if at_level is not None and at_level.fraction is not None:
            label = f"{_percent(at_level.fraction)} of {level} roof"
        if point.operation is None:
            label = f"{short_kernel_name(m.name)}: {label}"
        tooltip = _measured_tooltip(point, machine)
        if levels:
            tooltip += "\n" + "\n".join(_level_tip(p) for p in levels)
        if m.count != 1 or m.run is not None:
            tooltip += (f"\n{m.count:,} launch{'es' if m.count != 1 else ''}, "
                        f"{format_quantity(m.total_time_s or 0.0, 'time')} of GPU time"
                        + (f" in {m.run}" if m.run else ""))
        level_xs: tuple[tuple[str, float, str], ...] = ()
        if level == "all" and len(levels) > 1:
            level_xs = tuple((p.level, float(p.intensity), _level_tip(p)) for p in levels
                             if p.intensity and _drawable(p.intensity, y))
        marks.append(MeasuredMark(
            index=index_of.get(id(m), -1), name=m.name,
            op_id=point.operation.id if point.operation is not None else None,
            hw_id=point.hardware.id, machine=machine, x=float(x), y=float(y), px=float(px),
            py=float(py), fraction=j.fraction, verdict=j.verdict, verdict_label=j.verdict_label,
            color=VERDICT_COLORS.get(j.verdict, "#808080"), label=label,
            tooltip=tooltip, level_xs=level_xs, run=m.run,
            # (a prediction in the overhead regime has no scale of work to draw)
            bands=() if j.predicted_bound == "overhead" else _bands(
                float(py), j.predicted_time_s / j.t_predicted_s if j.t_predicted_s else 1.0)))
    return marks, total, notes, hidden_note


def kernel_key(session: Session, marks: Sequence[MeasuredMark]
               ) -> tuple[list[MeasuredMark], list[str]]:
    """A figure's names of the kernels measured on their own: each drawn kernel (by name, on
    every machine and in every run) gets a tag, ``K1`` for the one with the most GPU time,
    as its label, and a row of the key, ``"K1 — name"`` (:func:`kernel_key_name`).
    ``(marks, rows)``."""
    times: dict[str, float] = {}
    operators: dict[str, str] = {}
    for mark in marks:
        if mark.standalone:
            m = (session.measurements[mark.index]
                 if 0 <= mark.index < len(session.measurements) else None)
            t = (m.total_time_s or 0.0) if m is not None else 0.0
            times[mark.name] = max(times.get(mark.name, 0.0), t)
            if m is not None and m.source:
                operators.setdefault(mark.name, trace_operator(m.source))
    names = sorted(times, key=lambda n: -times[n])  # (stable: ties keep the chart's order)
    tags = {name: f"K{i + 1}" for i, name in enumerate(names)}
    shown = distinct_key_names(names, operators)
    rows = [f"{tags[name]} — {shown[name]}" for name in names]
    return ([replace(mark, label=tags[mark.name], tag=tags[mark.name])
             if mark.name in tags else mark for mark in marks], rows)


def profile_roof_levels(measured: Sequence[MeasuredMark], machines: Sequence,
                        level: str) -> list[tuple[int, str]]:
    """``(machine id, memory level)`` of each cache roof the profiled kernels are placed
    against (at L1 or L2, or at every level): those roofs are drawn on their machines."""
    if not measured:
        return []
    from workbench.model.profile import machine_level  # (see the note at the imports)

    wanted = {"l1": {"l1"}, "l2": {"l2"}, "all": {"l1", "l2"}}.get(level, set())
    out = []
    for mark in measured:
        levels = {name for name, _x, _tip in mark.level_xs}
        if level in ("l1", "l2") and mark.run is not None:
            levels.add(level)
        entry = next((h for h in machines if h.id == mark.hw_id), None)
        for name in sorted(levels & wanted):
            found = machine_level(entry.hardware, name) if entry is not None else None
            if found is not None:
                out.append((mark.hw_id, found))
    return out


def overlay_extent(sweeps: Sequence[SweepPath], measured: Sequence[MeasuredMark]
                   ) -> list[tuple[float, float]]:
    """The data points of sweep paths and measured marks (and their predictions, and a
    profiled kernel's other levels) that the data range should cover."""
    out = [(x, y) for path in sweeps for x, y in zip(path.path_xs, path.path_ys, strict=True)]
    for mark in measured:
        out += [(mark.x, mark.y), (mark.px, mark.py)]
        out += [(x, mark.y) for _level, x, _tip in mark.level_xs]
    return out


def measured_cap_note(drawn: int, total: int) -> str:
    """What the chart says when it draws ``drawn`` of ``total`` measured points ("" when it
    draws them all)."""
    if total <= drawn:
        return ""
    return f"{drawn:,} of {total:,} measured points drawn — the Measurements table lists all"


# ---------------------------------------------------------------------------------------------
# compared pairs


@record(frozen=True)
class PairLink:
    """A compared pair on one machine: a link from the first operation's point ``(x0, y0)``
    to the second's ``(x1, y1)``, labelled with :func:`pair_label`."""

    comparison_id: int
    first: str
    second: str
    first_id: int
    second_id: int
    hw_id: int
    machine: str
    x0: float
    y0: float
    x1: float
    y1: float
    bytes_saved: float
    flops_added: float
    speedup: float
    style_index: int
    label: str
    tooltip: str

    @property
    def mid(self) -> tuple[float, float]:
        """The middle of the link on the log-log chart (geometric means)."""
        return math.sqrt(self.x0 * self.x1), math.sqrt(self.y0 * self.y1)


def _pair_tooltip(c: PairComparison) -> str:
    a, b = c.first_result, c.second_result
    lines = [
        f"{c.first} → {c.second}",
        f"on {c.hardware}",
        f"Bytes: {format_quantity(a.bytes, 'bytes')} → {format_quantity(b.bytes, 'bytes')} "
        f"({pair_label(c.bytes_saved, float('nan'))})",
        f"Intensity: {format_quantity(a.intensity, 'intensity')} → "
        f"{format_quantity(b.intensity, 'intensity')}",
        f"T_lower: {format_quantity(a.t_lower_s, 'time')} → "
        f"{format_quantity(b.t_lower_s, 'time')}",
        f"Predicted speed-up: {value_text(c.speedup, digits=3)}× "
        "(t_lower(first) / t_lower(second))",
    ]
    if c.flops_added:
        sign = "+" if c.flops_added > 0 else "−"
        lines.insert(3, f"FLOPs: {sign}{format_quantity(abs(c.flops_added), 'flops')}")
    return "\n".join(lines)


def pair_links(session: Session, pairs: Sequence[Pair], machines: Sequence[Any]
               ) -> list[PairLink]:
    """A link per compared pair and drawn machine (``machines`` as for :func:`sweep_paths`),
    from evaluated ``pairs`` of visible operations: a pair with a hidden side is not drawn."""
    style = {m.hw_id: m.style_index for m in machines}
    names = {e.operation.name: e.id for e in session.operations}
    pairs = [p for p in pairs if p.hardware.id in style]
    from workbench.model.comparison import compare_session  # (see the note at the imports)

    out: list[PairLink] = []
    for c in compare_session(session, pairs):
        a, b = c.first_result, c.second_result
        if not (_drawable(a.intensity, a.attainable_flops)
                and _drawable(b.intensity, b.attainable_flops)):
            continue
        comparison = next((k for k in session.comparisons
                           if k.first == c.first and k.second == c.second), None)
        out.append(PairLink(
            comparison_id=comparison.id if comparison is not None else -1,
            first=c.first, second=c.second, first_id=names.get(c.first, -1),
            second_id=names.get(c.second, -1), hw_id=c.hw_id, machine=c.hardware,
            x0=a.intensity, y0=a.attainable_flops, x1=b.intensity, y1=b.attainable_flops,
            bytes_saved=c.bytes_saved, flops_added=c.flops_added, speedup=c.speedup,
            style_index=style[c.hw_id], label=pair_label(c.bytes_saved, c.speedup),
            tooltip=_pair_tooltip(c)))
    return out


# ---------------------------------------------------------------------------------------------
# legend


def overlay_legend(measured: Sequence[MeasuredMark]) -> list[tuple[str, str]]:
    """``(verdict key, text)`` for each verdict band that a drawn measured point falls in,
    in band order (the legend explains the colours of the measured markers)."""
    present = {m.verdict for m in measured}
    if not present:
        return []
    from workbench.model.measured import VERDICTS  # (see the note at the imports)

    return [(v.key, f"measured, {VERDICT_SHORT.get(v.key, v.key)}"
                    + ("" if v.key == "overhead-bound" else f" ({v.label.split(':')[0]})"))
            for v in VERDICTS if v.key in present]


@record(frozen=True)
class Overlays:
    """What a chart draws over its roofs and points (:func:`build_overlays`)."""
    sweeps: tuple[SweepPath, ...]
    measured: tuple[MeasuredMark, ...]
    #: how many measured points there are, drawn or not
    measured_total: int
    #: what the top-N rule leaves out of the measured points ("" when nothing)
    hidden_note: str
    #: a figure's key of the kernels measured on their own ("K1 — name")
    kernel_rows: tuple[str, ...]
    links: tuple[PairLink, ...]
    #: why something asked for is not drawn
    notes: tuple[str, ...]


def build_overlays(session: Session, operations: Sequence[OperationEntry],
                   machines: Sequence[Any], colors: dict[int, str], pairs: Sequence[Pair],
                   kernels: int | None = None) -> Overlays:
    """The sweep paths of ``operations`` (with their ``colors``), the measured points and
    the compared pairs on ``machines``, as the session's view asks for them; ``kernels``: a
    figure's top-N rule (:func:`~workbench.model.chart.profiled_kernels.top_hidden`), with a
    tag and a key row for each kernel measured on its own."""
    view = session.view
    notes: list[str] = []
    sweeps: list[SweepPath] = []
    if view.sweeps:
        for entry in operations:
            if entry.sweep is not None:
                found, why = sweep_paths(session, entry, machines, colors[entry.id])
                sweeps += found
                notes += why
    measured: list[MeasuredMark] = []
    total = 0
    hidden = ""
    if view.measured and session.measurements:
        measured, total, why, hidden = drawn_measured_marks(
            session, [m.hw_id for m in machines], most=kernels)
        notes += why
    rows: list[str] = []
    if kernels is not None:
        measured, rows = kernel_key(session, measured)
    links = pair_links(session, pairs, machines) if view.pairs and session.comparisons else []
    return Overlays(tuple(sweeps), tuple(measured), total, hidden, tuple(rows), tuple(links),
                    tuple(notes))
