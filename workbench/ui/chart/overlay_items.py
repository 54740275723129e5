"""The canvas's overlays: sweep paths with their ridge crossings, measured points judged
against their predictions, and compared pairs (:mod:`workbench.model.chart.overlay_data`).

:class:`OverlayLayer` owns what each overlay stands for (the sweep paths, measured marks and
pair links of the last scene, recomputed after the edits that move them), their items
(pooled: lines, dots, arrows, bands, and their texts from the chart's text pools) and the
overlays' hover rows (positions, tooltips, operations). A part of
:class:`~workbench.ui.chart.canvas.RooflineCanvas`; the texts are placed by the chart's one text
layout (:mod:`workbench.ui.chart.labels`), which reads them here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from operator import attrgetter

import numpy as np
import pyqtgraph as pg

from workbench.model.chart.machine_texts import whose_measured
from workbench.model.chart.occupancy import Occupancy
from workbench.model.chart.overlay_data import (
    VERDICT_COLORS,
    CrossingMark,
    MeasuredMark,
    PairLink,
    SweepPath,
    drawn_measured_marks,
    kernel_key,
    pair_links,
    run_links,
    sweep_paths,
)
from workbench.model.chart.scene import LegendEntry, Scene, measured_legend, whose_texts
from workbench.ui.chart.axes import to_data, to_view
from workbench.ui.chart.items import Label, Pool, Spots
from workbench.ui.chart.styles import at_z
from workbench.ui.chart.theme import qcolor
from workbench.ui.widgets import escape_html

#: the operation a measured point is attached to (its name, or ``None``)
_OPERATION = attrgetter("operation")


class OverlayLayer:
    """Sweep paths, measured points and compared pairs on the chart."""

    def __init__(self, canvas, add, curve) -> None:
        """``add`` puts an item into the view; ``curve(z, **options)`` makes a line item."""
        self._canvas = canvas
        self._styles = canvas.styles
        self._sweep_pool = Pool(lambda: curve(6), add)
        self._link_pool = Pool(lambda: curve(8), add)
        self._band_pool = Pool(lambda: curve(5, connect="pairs", antialias=False), add)
        self._arrow_pool = Pool(lambda: at_z(pg.ArrowItem(headLen=11, tipAngle=32), 9), add)
        self._add = add
        # (the overlays' scatter items, made by the first draw that has an overlay to show:
        # most charts have none, and each costs a millisecond to make)
        self._sweep_dots: Spots | None = None
        self._predicted_marks: Spots | None = None
        self._crossing_marks: Spots | None = None
        self._measured_marks: Spots | None = None
        self._level_marks: Spots | None = None
        self._level_lines: list[pg.PlotCurveItem] = []
        self._sweeps: dict[int, list[SweepPath]] = {}
        self._measured: list[MeasuredMark] = []
        self._links: list[PairLink] = []
        self._sweep_drawn: list[tuple[SweepPath, pg.PlotCurveItem]] = []
        self._sweep_labels: list[tuple[SweepPath, int, Label]] = []
        self._crossing_labels: list[tuple[CrossingMark, Label]] = []
        self._measured_drawn: list[tuple[MeasuredMark, pg.PlotCurveItem, Label]] = []
        self._pair_drawn: list[tuple[PairLink, pg.PlotCurveItem, pg.ArrowItem, Label]] = []
        self._pair_rows: list[int] = []  # their rows in the overlay hover arrays
        self._pair_apex: list[tuple[float, float]] = []
        self._overlay_xy = np.zeros((0, 2))
        self._overlay_sample = np.zeros(0, dtype=bool)
        self._overlay_tips: list = []
        self._overlay_ops: list[int | None] = []
        self._overlays_shown = False
        self._paths_set: dict = {}  # sweep line item -> (xs, ys, pen) it was last given
        #: the operation whose sweep paths were drawn last, over the others' (the selected)
        self._sweep_on_top: int | None = None
        #: the cells of each line added to the last grid (see add_lines)
        self._line_cells: dict = {}

    def _make_marks(self) -> None:
        """Make the scatter items (once), in the order of their stacking ties: before any
        pooled item (a pair's arrow lies over a prediction's mark, at the same height)."""
        if self._sweep_dots is not None:
            return
        self._sweep_dots = at_z(Spots(), 7)
        self._predicted_marks = at_z(Spots(), 9)
        self._crossing_marks = at_z(Spots(), 13)
        self._measured_marks = at_z(Spots(), 15)
        self._level_marks = at_z(Spots(), 14)
        for item in (self._sweep_dots, self._predicted_marks, self._crossing_marks,
                     self._measured_marks, self._level_marks):
            self._add(item)

    # -- what is drawn (read by the text layout) ----------------------------------------

    @property
    def sweep_curves(self) -> list[pg.PlotCurveItem]:
        """The sweep paths' lines."""
        return [curve for _path, curve in self._sweep_drawn]

    @property
    def link_curves(self) -> list[pg.PlotCurveItem]:
        """The measured points' links, then the compared pairs' arcs."""
        return ([entry[1] for entry in self._measured_drawn] + self._level_lines
                + [entry[1] for entry in self._pair_drawn])

    @property
    def bands(self) -> list[pg.PlotCurveItem]:
        """The verdict bands shown."""
        return self._band_pool.shown

    @property
    def level_marks(self) -> Spots | None:
        """A profiled kernel's marks at its other memory levels (View ▸ All Levels)."""
        return self._level_marks

    @property
    def sweep_dots(self) -> Spots | None:
        return self._sweep_dots

    @property
    def crossing_marks(self) -> Spots | None:
        return self._crossing_marks

    @property
    def measured_marks(self) -> Spots | None:
        return self._measured_marks

    @property
    def predicted_marks(self) -> Spots | None:
        return self._predicted_marks

    @property
    def crossing_texts(self) -> list[tuple[CrossingMark, Label]]:
        """Each ridge crossing with its text (crossings at one corner share one)."""
        return self._crossing_labels

    @property
    def measured_texts(self) -> list[tuple[MeasuredMark, pg.PlotCurveItem, Label]]:
        """Each measured point with its link and text."""
        return self._measured_drawn

    @property
    def pair_texts(self) -> list[tuple[PairLink, pg.PlotCurveItem, pg.ArrowItem, Label]]:
        """Each compared pair drawn with its arc, arrow and text."""
        return self._pair_drawn

    @property
    def pair_apexes(self) -> list[tuple[float, float]]:
        """The apex of each pair's arc in scene pixels (see :meth:`bend_links`)."""
        return self._pair_apex

    @property
    def sweep_paths_drawn(self) -> list[tuple[SweepPath, pg.PlotCurveItem]]:
        """Each sweep path drawn, with its line."""
        return self._sweep_drawn

    @property
    def sweep_texts(self) -> list[tuple[SweepPath, int, Label]]:
        """Each sweep path's end texts: the path, the end's sample index, the text."""
        return self._sweep_labels

    # -- hover ----------------------------------------------------------------------------

    def nearest(self, scene_pos, best_d2: float) -> int | None:
        """The row of the overlay mark nearest ``scene_pos`` if nearer than ``best_d2``
        (squared pixels): a crossing, a measured point or a pair's label wins over a sweep
        sample drawn within about a pixel of it."""
        if not len(self._overlay_xy):
            return None
        ax, bx, ay, by = self._canvas.view_to_scene()
        d2 = ((self._overlay_xy[:, 0] * ax + bx - scene_pos.x()) ** 2
              + (self._overlay_xy[:, 1] * ay + by - scene_pos.y()) ** 2)
        # (a sample next to a crossing is the usual case)
        near = d2 <= d2.min() + 2.0
        marks = near & ~self._overlay_sample
        j = int(np.flatnonzero(marks)[np.argmin(d2[marks])] if marks.any()
                else np.argmin(d2))
        return j if d2[j] < best_d2 else None

    def tooltip(self, row: int) -> str:
        return self._overlay_tips[row]()

    def operation_of(self, row: int) -> int | None:
        """The operation an overlay mark belongs to (None: a standalone measurement)."""
        return self._overlay_ops[row]

    # -- read-outs ----------------------------------------------------------------------

    def sweep_items(self) -> list[tuple[int, int, list[float], list[float]]]:
        """``(op_id, hw_id, xs, ys)`` of every sweep path drawn, in data units, as drawn (the
        samples in parameter order with the ridge crossings in between)."""
        out = []
        for path, curve in self._sweep_drawn:
            if curve.isVisible():
                xs, ys = curve.getData()
                out.append((path.op_id, path.hw_id, [float(v) for v in to_data(xs)],
                            [float(v) for v in to_data(ys)]))
        return out

    def sweep_labels(self) -> list[tuple[int, int, str, float, float]]:
        """``(op_id, hw_id, text, x, y)`` of every end label of a sweep path shown
        (``"m = 1"``), anchored at data ``(x, y)``."""
        out = []
        self._canvas.flush_layout()
        for path, end, label in self._sweep_labels:
            if label.isVisible():
                out.append((path.op_id, path.hw_id, label.toPlainText(),
                            float(path.xs[end]), float(path.ys[end])))
        return out

    def crossing_items(self) -> list[tuple[int, int, str, float, float]]:
        """``(op_id, hw_id, label, x, y)`` of every ridge crossing marked: the label shown
        (``"m* = 255.5"``) and the drawn mark's position in data units."""
        if self._crossing_marks is None or not self._crossing_marks.isVisible():
            return []
        data = self._crossing_marks.data
        out = []
        for (mark, label), x, y in zip(self._crossing_labels, to_data(data["x"]),
                                       to_data(data["y"]), strict=True):
            # crossings at one ridge corner share a label, one line each
            lines = label.toPlainText().splitlines() if label.isVisible() else []
            out.append((mark.op_id, mark.hw_id, mark.label if mark.label in lines else "",
                        float(x), float(y)))
        return out

    def measured_items(self) -> list[dict]:
        """One dict per measured point drawn: ``name``, ``op_id`` (``None`` when standalone),
        ``hw_id``, ``x``/``y`` (the mark, data units), ``link`` (the drawn link's ``(xs, ys)``
        from the prediction to the mark), ``label``, ``color`` and ``verdict``."""
        if self._measured_marks is None or not self._measured_marks.isVisible():
            return []
        data = self._measured_marks.data
        out = []
        for (mark, link, label), x, y in zip(self._measured_drawn, to_data(data["x"]),
                                             to_data(data["y"]), strict=True):
            xs, ys = link.getData()
            out.append({"name": mark.name, "op_id": mark.op_id, "hw_id": mark.hw_id,
                        "x": float(x), "y": float(y),
                        "link": ([float(v) for v in to_data(xs)],
                                 [float(v) for v in to_data(ys)]),
                        "label": label.toPlainText() if label.isVisible() else "",
                        "color": mark.color, "verdict": mark.verdict})
        return out

    def pair_items(self) -> list[dict]:
        """One dict per compared pair drawn on one machine: ``first``, ``second``, ``hw_id``,
        ``link`` (the drawn segment's ``(xs, ys)`` in data units, first → second) and
        ``label`` (``"−268 MB, 2.33× faster"``)."""
        out = []
        for link, curve, _arrow, label in self._pair_drawn:
            if not curve.isVisible():
                continue
            xs, ys = curve.getData()
            out.append({"first": link.first, "second": link.second, "hw_id": link.hw_id,
                        "link": ([float(v) for v in to_data(xs)],
                                 [float(v) for v in to_data(ys)]),
                        "label": label.toPlainText() if label.isVisible() else ""})
        return out

    def add_lines(self, occ: Occupancy, px, air: float) -> None:
        """Cover the cells of the sweep paths and the pairs' links shown in ``occ`` (each
        line grown by ``air``; ``px(x, y)``: view units to pixels). An edit moves one
        operation's paths: the cells of the others are those found for the last grid,
        kept while their pixels and the grid stay."""
        kept, self._line_cells = self._line_cells, {}
        shown = []  # (each line's key, its pixels, its half width)
        for curves, half in ((self.sweep_curves, 0.8 + air), (self.link_curves, 0.9 + air)):
            for curve in curves:
                if curve.isVisible():
                    x, y = px(*curve.getData())
                    shown.append(((occ.frame, occ.cell, half, x.tobytes(), y.tobytes()),
                                  x, y, half))
        # (the straight ones not kept, a figure's links at each of its passes: all at once)
        new = [(key, x, y, half) for key, x, y, half in shown
               if len(x) == 2 and key not in kept]
        if new:
            found = occ.segments_line_cells([(x[0], y[0], x[1], y[1]) for _k, x, y, _h in new],
                                            [half for *_rest, half in new])
            kept.update((key, cells) for (key, *_rest), cells in zip(new, found, strict=True))
        for key, x, y, half in shown:
            cells = kept.get(key, False)
            if cells is False:
                cells = occ.line_cells(x, y, half)
            if cells is not None:
                cells.flags.writeable = False
            self._line_cells[key] = cells
            occ.add_cells(cells, line=True)

    def on_top_after(self, op_id: int | None) -> bool:
        """Whether selecting ``op_id`` changes which operation's sweep paths are drawn over
        the others' (:meth:`draw` then draws them again)."""
        return len(self._sweeps) > 1 and (
            op_id if op_id in self._sweeps else None) != self._sweep_on_top

    def sync(self, scene: Scene) -> None:
        """Draw the scene's overlays."""
        self._sweeps = {}
        for path in scene.sweeps:
            self._sweeps.setdefault(path.op_id, []).append(path)
        self._measured = list(scene.measured)
        self._links = list(scene.links)
        self.draw()

    def _store_overlays(self) -> None:
        """Keep :attr:`scene_model` in step with the overlays redrawn since the last rebuild."""
        if self._canvas.scene_model is not None:
            self._canvas.amend_scene(
                sweeps=tuple(p for paths in self._sweeps.values() for p in paths),
                measured=tuple(self._measured), links=tuple(self._links))

    def refresh_sweep(self, op_id: int) -> None:
        """Recompute one operation's sweep paths (after its sweep or its parameters changed)."""
        scene = self._canvas.scene_model
        if scene is None:
            return
        session = self._canvas.workspace.document.session
        try:
            entry = self._canvas.workspace.document.operation(op_id)
        except KeyError:
            entry = None
        paths: list[SweepPath] = []
        if entry is not None and entry.visible and entry.sweep is not None and session.view.sweeps:
            paths, _notes = sweep_paths(session, entry, scene.machines, session.color_of(entry))
            if len(scene.machines) > 1:  # each crossing names its machine
                paths = whose_texts(session, [], paths, [])[1]
        if paths:
            self._sweeps[op_id] = paths
        else:
            self._sweeps.pop(op_id, None)
        self._store_overlays()

    def refresh_measured(self) -> None:
        """Re-judge the measurements and update their legend entries."""
        scene = self._canvas.scene_model
        if scene is None:
            return
        session = self._canvas.workspace.document.session
        self._measured = []
        total = 0
        most = self._canvas.figure_kernels
        rows: list[str] = []
        hidden = ""
        if session.view.measured and session.measurements:
            self._measured, total, _notes, hidden = drawn_measured_marks(
                session, [m.hw_id for m in scene.machines], most=most)
            if most is not None:
                self._measured, rows = kernel_key(session, self._measured)
            if len(scene.machines) > 1:  # verdicts that differ between machines name them
                self._measured = whose_measured(session, self._measured)
        legend = tuple(e for e in scene.legend if e.kind != "measured"
                       and not (e.kind == "key" and most is not None))
        legend += tuple(measured_legend(self._measured, total, hidden))
        legend += tuple(LegendEntry("key", row) for row in rows)
        self._canvas.amend_scene(legend=legend)
        self._store_overlays()
        self._canvas.sync_legend(self._canvas.scene_model)
        self._canvas.legend.set_visible(session.view.legend and bool(legend))

    def refresh_links(self) -> None:
        """Recompute the compared pairs' links from the cached results."""
        scene = self._canvas.scene_model
        if scene is None:
            return
        session = self._canvas.workspace.document.session
        self._links = []
        if session.view.pairs and session.comparisons:
            names = {n for c in session.comparisons for n in (c.first, c.second)}
            # (a pair whose side cannot be counted has no result: it draws no link, and the
            # chart's notes say why)
            pairs = [self._canvas.workspace.results.pair(entry.id, machine.hw_id)
                     for entry in session.operations
                     if entry.visible and entry.operation.name in names
                     for machine in scene.machines]
            self._links = pair_links(session, pairs, scene.machines)
            if len(scene.machines) > 1:  # figures that differ between machines name them
                self._links = whose_texts(session, [], [], self._links)[2]
        self._store_overlays()

    def refresh_for(self, op_ids: Sequence[int]) -> None:
        """After an edit of these operations: redraw their sweep paths, the measured points
        attached to them and the pairs they are part of (nothing else)."""
        sweeps, measured, links = self._touched(op_ids)
        for op_id in sweeps:
            self.refresh_sweep(op_id)
        if measured:
            self.refresh_measured()
        if links:
            self.refresh_links()
        if sweeps or measured or links:
            self.redraw()

    def redraws_for(self, op_ids: Sequence[int]) -> bool:
        """Whether :meth:`refresh_for` of these operations redraws the overlays (and so
        places every text of the chart again)."""
        sweeps, measured, links = self._touched(op_ids)
        return bool(sweeps or measured or links)

    def _touched(self, op_ids: Sequence[int]) -> tuple[list[int], bool, bool]:
        """What an edit of these operations changes: the operations whose sweep paths are
        recomputed, whether the measured points are, whether the pairs' links are."""
        if self._canvas.scene_model is None:
            return [], False, False
        document = self._canvas.workspace.document
        session = document.session
        if not (self._sweeps or session.measurements or session.comparisons
                or (session.view.sweeps and any(e.sweep is not None
                                                for e in session.operations))):
            return [], False, False  # no overlay at all: nothing an edit could move
        sweeps: list[int] = []
        names = set()
        for op_id in op_ids:
            try:
                entry = document.operation(op_id)
            except KeyError:
                continue
            names.add(entry.operation.name)
            if op_id in self._sweeps or (entry.sweep is not None and session.view.sweeps):
                sweeps.append(op_id)
        # (looked through in C: an imported profile's many kernels, at every edit)
        measured = session.view.measured and any(map(names.__contains__,
                                                     map(_OPERATION, session.measurements)))
        links = session.view.pairs and any(c.first in names or c.second in names
                                           for c in session.comparisons)
        return sweeps, measured, links

    def redraw(self) -> None:
        """Redraw the overlays and place their labels around what is already placed."""
        self.draw()
        self._canvas.layout_annotations()

    def draw(self) -> None:
        """Sync the overlay items to ``_sweeps``, ``_measured`` and ``_links`` (pooled items;
        nothing is created when the pools are large enough)."""
        if (not self._overlays_shown and not self._sweeps and not self._measured
                and not self._links):
            return  # nothing drawn before, nothing to draw now
        self._make_marks()
        theme = self._canvas.theme
        tips: list = []
        ops: list[int | None] = []
        xy: list[np.ndarray] = []
        samples: list[bool] = []  # per row of xy: a plain sweep sample (else a mark, a label)
        for kind in ("sweep", "crossing", "measured", "pair"):
            self._styles.texts(kind).reset()
        for pool in (self._sweep_pool, self._link_pool, self._band_pool, self._arrow_pool):
            pool.reset()

        # sweep paths: a line through samples and crossings, a dot per sample, end labels
        self._sweep_drawn, self._sweep_labels, self._crossing_labels = [], [], []
        dot_x, dot_y, dot_symbols, dot_brushes = [], [], [], []
        cross_x, cross_y, cross_pens = [], [], []
        corners: dict[tuple, list[tuple[CrossingMark, str]]] = {}
        # (the selected operation's paths drawn last, over the others': two sweeps along
        # one roof hide each other's samples)
        top = self._canvas.workspace.selection.current
        self._sweep_on_top = top if top in self._sweeps else None
        for _op_id, paths in sorted(self._sweeps.items(), key=lambda item: item[0] == top):
            for path in paths:
                color = theme.point_color(path.color)
                curve = self._sweep_pool.take()
                line = (to_view(np.asarray(path.path_xs)), to_view(np.asarray(path.path_ys)),
                        self._styles.pen(color, 1.6))
                was = self._paths_set.get(curve)
                # (an edit redraws every path: those of the other operations stay as they
                # were, and are not set again)
                if not (was is not None and was[2] is line[2] and np.array_equal(was[0], line[0])
                        and np.array_equal(was[1], line[1])):
                    curve.setData(x=line[0], y=line[1], pen=line[2])
                    self._paths_set[curve] = line
                self._sweep_drawn.append((path, curve))
                lx, ly = to_view(np.asarray(path.xs)), to_view(np.asarray(path.ys))
                if path.dots:
                    n = len(lx)
                    dot_x.append(lx)
                    dot_y.append(ly)
                    dot_symbols += [path.marker] * n
                    dot_brushes += [self._styles.brush(color)] * n
                    tips += [functools.partial(path.sample_tooltip, i) for i in range(n)]
                    ops += [path.op_id] * n
                    xy.append(np.column_stack((lx, ly)))
                    samples += [True] * n
                for end, text in ((0, path.start_label), (len(lx) - 1, path.end_label)):
                    if text:
                        label = self._styles.take_label("sweep")
                        label.setText(text)
                        label.setColor(qcolor(color))
                        label.setPos(float(lx[end]), float(ly[end]))
                        self._sweep_labels.append((path, end, label))
                for mark in path.crossings:
                    cx, cy = float(to_view(mark.x)), float(to_view(mark.y))
                    cross_x.append(cx)
                    cross_y.append(cy)
                    cross_pens.append(self._styles.pen(color, 2.2))
                    corner = (mark.hw_id, round(cx, 6), round(cy, 6))
                    corners.setdefault(corner, []).append((mark, color))
                    tips.append(functools.partial(str, mark.tooltip))
                    ops.append(mark.op_id)
                    xy.append(np.array([[cx, cy]]))
                    samples.append(False)
        # one label per ridge corner: the crossings of several operations stack in it
        labels_at: dict[tuple, Label] = {}
        for corner, marks in corners.items():
            label = labels_at[corner] = self._styles.take_label("crossing")
            if len(marks) == 1:
                label.setText(marks[0][0].label)
                label.setColor(qcolor(marks[0][1]))
            else:
                label.setHtml("<br>".join(f'<span style="color:{color}">'
                                          f"{escape_html(mark.label)}</span>"
                                          for mark, color in marks))
            label.setPos(corner[1], corner[2])
        for mark, cx, cy in zip((m for p in self._sweep_drawn for m in p[0].crossings),
                                cross_x, cross_y, strict=True):
            self._crossing_labels.append((mark, labels_at[(mark.hw_id, round(cx, 6),
                                                           round(cy, 6))]))
        _set_spots(self._sweep_dots, x=np.concatenate(dot_x) if dot_x else np.zeros(0),
                   y=np.concatenate(dot_y) if dot_y else np.zeros(0),
                   symbol=dot_symbols, size=theme.point_size * 0.55, brush=dot_brushes,
                   pen=self._styles.pen(theme.background, 0.6))
        _set_spots(self._crossing_marks, x=np.asarray(cross_x, float),
                   y=np.asarray(cross_y, float), symbol="o", size=theme.point_size + 5,
                   brush=self._styles.no_brush(), pen=cross_pens)

        # measured points: a link from the prediction, the verdict scale at the prediction
        self._measured_drawn = []
        bands: dict[str, tuple[list[float], list[float]]] = {}
        m_x, m_y, m_brushes, p_x, p_y = [], [], [], [], []
        for mark in self._measured:
            x0, y0 = float(to_view(mark.px)), float(to_view(mark.py))
            x1, y1 = float(to_view(mark.x)), float(to_view(mark.y))
            link = self._link_pool.take()
            link.setData(x=np.asarray([x0, x1]), y=np.asarray([y0, y1]),
                         pen=self._styles.pen(mark.color, 1.5, "dashed"))
            link.setZValue(8)
            label = self._styles.take_label("measured")
            label.setText(mark.label)
            label.setColor(qcolor(theme.text))
            label.setPos(x1, y1)
            self._measured_drawn.append((mark, link, label))
            for key, low, high in mark.bands:
                xs, ys = bands.setdefault(key, ([], []))
                xs += [x0, x0]
                ys += [float(to_view(low)), float(to_view(high))]
            m_x.append(x1)
            m_y.append(y1)
            m_brushes.append(self._styles.brush(mark.color))
            tips.append(functools.partial(str, mark.tooltip))
            ops.append(mark.op_id)
            xy.append(np.array([[x1, y1]]))
            samples.append(False)
            if mark.standalone:
                p_x.append(x0)
                p_y.append(y0)
        # a profiled kernel at every memory level: small marks on a thin line at its FLOP/s
        l_x, l_y = [], []
        self._level_lines = []
        for mark in self._measured:
            if not mark.level_xs:
                continue
            y1 = float(to_view(mark.y))
            xs = [float(to_view(x)) for _level, x, _tip in mark.level_xs]
            line = self._link_pool.take()
            line.setData(x=np.asarray(sorted(xs)), y=np.full(len(xs), y1),
                         pen=self._styles.pen(mark.color, 0.8))
            line.setZValue(7.5)
            self._level_lines.append(line)
            for (_level, _x, tip), lx in zip(mark.level_xs, xs, strict=True):
                l_x.append(lx)
                l_y.append(y1)
                tips.append(functools.partial(str, f"{mark.name}\n{tip}"))
                ops.append(mark.op_id)
                xy.append(np.array([[lx, y1]]))
                samples.append(False)
        _set_spots(self._level_marks, x=np.asarray(l_x, float), y=np.asarray(l_y, float),
                   symbol="o", size=theme.point_size * 0.6,
                   brush=self._styles.brush(theme.background),
                   pen=self._styles.pen(theme.text, 0.9))
        _set_spots(self._measured_marks, x=np.asarray(m_x, float), y=np.asarray(m_y, float),
                   symbol="x", size=theme.point_size * 1.3, brush=m_brushes,
                   pen=self._styles.pen(theme.point_outline, 0.7))
        _set_spots(self._predicted_marks, x=np.asarray(p_x, float), y=np.asarray(p_y, float),
                   symbol="o", size=theme.point_size * 0.9,
                   brush=self._styles.brush(theme.background),
                   pen=self._styles.pen(theme.muted, 1.6))
        for key, (xs, ys) in bands.items():
            curve = self._band_pool.take()
            # half the verdict's colour over the background, opaque: where two machines'
            # scales overlap the colour stays the same in every export
            color = _halfway(VERDICT_COLORS.get(key, "#808080"), theme.background)
            curve.setData(x=np.asarray(xs), y=np.asarray(ys), connect="pairs",
                          pen=self._styles.band_pen(color, 4.0))

        # compared pairs: first → second, labelled with the bytes saved and the speed-up (the
        # link is an arc, bent in pixels when the labels are placed: a straight link between
        # two memory-bound points would lie on the roof)
        self._pair_drawn = []
        self._pair_rows = []
        session = self._canvas.workspace.document.session
        runs = run_links(session, self._measured) if session.view.measured else []
        for link in [*self._links, *runs]:
            color = theme.roof_color(link.style_index)
            x0, y0 = float(to_view(link.x0)), float(to_view(link.y0))
            x1, y1 = float(to_view(link.x1)), float(to_view(link.y1))
            curve = self._link_pool.take()
            curve.setData(x=np.asarray([x0, x1]), y=np.asarray([y0, y1]),
                          pen=self._styles.pen(color, 1.8))
            curve.setZValue(8.5)
            arrow = self._arrow_pool.take()
            arrow.setStyle(pen=self._styles.pen(color, 1.0), brush=self._styles.brush(color))
            arrow.setPos(x1, y1)
            label = self._styles.take_label("pair")
            label.setText(link.label)
            label.setColor(qcolor(theme.text))
            mx, my = (x0 + x1) / 2, (y0 + y1) / 2
            label.setPos(mx, my)
            self._pair_drawn.append((link, curve, arrow, label))
            self._pair_rows.append(sum(len(a) for a in xy))
            tips.append(functools.partial(str, link.tooltip))
            ops.append(link.second_id if link.second_id >= 0 else None)
            xy.append(np.array([[mx, my]]))
            samples.append(False)

        for kind in ("sweep", "crossing", "measured", "pair"):
            self._styles.texts(kind).finish()
        for pool in (self._sweep_pool, self._link_pool, self._band_pool, self._arrow_pool):
            pool.finish()
        self._overlay_tips = tips
        self._overlay_ops = ops
        self._overlay_xy = np.concatenate(xy) if xy else np.zeros((0, 2))
        self._overlay_sample = np.asarray(samples, dtype=bool)
        self._canvas.hover.forget_overlay()
        self._overlays_shown = bool(self._sweeps or self._measured or self._links)

    def bend_links(self) -> None:
        """Bend each compared pair's link into an arc (in pixels: a straight link between
        two memory-bound points would lie on the roof), turn its arrow along it and note the
        arc's apex (its label goes there)."""
        ax, bx, ay, by = self._canvas.view_to_scene()
        theme = self._canvas.theme
        g = theme.point_size / 2 + 2
        self._pair_apex = []
        for (link, curve, arrow, _label), row in zip(self._pair_drawn, self._pair_rows,
                                                     strict=True):
            p0 = np.array([to_view(link.x0) * ax + bx, to_view(link.y0) * ay + by])
            p1 = np.array([to_view(link.x1) * ax + bx, to_view(link.y1) * ay + by])
            d = p1 - p0
            length = float(math.hypot(*d))
            if length < 1.0:
                apex, control = (p0 + p1) / 2, p1
            else:
                normal = np.array([-d[1], d[0]]) / length
                if normal[1] > 0:  # bend upwards on screen
                    normal = -normal
                bend = min(0.2 * length, 32.0)
                apex = (p0 + p1) / 2 + normal * bend
                control = 2 * apex - (p0 + p1) / 2
            s = np.linspace(0.0, 1.0, 33)[:, None]
            arc = (1 - s) ** 2 * p0 + 2 * (1 - s) * s * control + s**2 * p1
            self._pair_apex.append((float(apex[0]), float(apex[1])))
            if not (ax and ay):  # (a plot of no height, a moment while a figure is laid
                continue  # out, has no view units: the arc is drawn at its next placing)
            curve.setData(x=(arc[:, 0] - bx) / ax, y=(arc[:, 1] - by) / ay)
            self._overlay_xy[row] = ((apex[0] - bx) / ax, (apex[1] - by) / ay)
            tangent = p1 - control
            t_len = float(math.hypot(*tangent))
            if length < 2 * g or t_len == 0:
                arrow.setVisible(False)
                continue
            ux, uy = tangent / t_len
            back = theme.point_size / 2 + 1.5  # the tip touches the second point
            sx, sy = p1[0] - ux * back, p1[1] - uy * back
            arrow.setVisible(True)
            arrow.setStyle(angle=math.degrees(math.atan2(-uy, -ux)))
            arrow.setPos((sx - bx) / ax, (sy - by) / ay)

    def dispose(self) -> None:
        """Forget every item and overlay (the chart's items are gone)."""
        for pool in (self._sweep_pool, self._link_pool, self._band_pool, self._arrow_pool):
            pool.items = []
            pool.used = 0
        self._sweeps, self._measured, self._links = {}, [], []
        self._sweep_drawn, self._sweep_labels, self._crossing_labels = [], [], []
        self._measured_drawn, self._pair_drawn, self._pair_rows = [], [], []
        self._level_lines = []
        self._paths_set = {}
        self._line_cells = {}
        self._overlay_xy, self._overlay_tips, self._overlay_ops = np.zeros((0, 2)), [], []
        self._overlay_sample = np.zeros(0, dtype=bool)


def _set_spots(spots: Spots, **data) -> None:
    """``spots.setData(**data)``, but a scatter that shows no point and gets none again is
    left as it is (most charts have no measured points: each redraw set them empty), and
    so is one given the points and looks it shows (:meth:`Spots.show_data`)."""
    if not len(data["x"]) and not len(spots.getData()[0]):
        return
    spots.show_data(**data)


def _halfway(color: str, background: str) -> str:
    """``#rrggbb`` halfway between two ``#rrggbb`` colours."""
    a, b = qcolor(color), qcolor(background)
    return "#" + "".join(f"{(x + y) // 2:02x}" for x, y in (
        (a.red(), b.red()), (a.green(), b.green()), (a.blue(), b.blue())))
