"""The live roofline chart: a thin pyqtgraph view of :mod:`workbench.model.scene`.

Log-log the robust way: every item lives in **log10 coordinates** (:func:`to_view` is the
only place a logarithm is taken, :func:`to_data` the only inverse) and only the two
:class:`LogAxis` items are in log mode, for their tick labels. ``PlotItem.setLogMode`` is never
called (it would transform curves but not scatter or text items).

Updates are incremental: one scatter item per machine holds the points of every operation
but the selected one, whose points live in a small item of their own: an edit of the
selected operation's parameters calls ``setData`` on that small item and re-places only the
texts its points touch (:mod:`workbench.ui.canvas_layout`); roofs are rebuilt only when
machines, the view or the set of precisions / memory levels in use change. Items are pooled
and reused, never created and destroyed per edit; the large, unchanging items are cached by
Qt as pixmaps between repaints.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QPen
from PySide6.QtWidgets import QGraphicsItem, QMenu, QToolTip, QVBoxLayout, QWidget

from workbench.document import Change
from workbench.document.changes import What
from workbench.model.analysis import Pair
from workbench.model.hardware import roof_name
from workbench.model.overlays import CrossingMark, MeasuredMark, PairLink, SweepPath
from workbench.model.scene import (
    PointMark,
    Region,
    Ridge,
    Roof,
    Scene,
    build_scene,
    drawn_pairs,
    machine_entries,
    operation_points,
)
from workbench.ui.axes import LogAxis, to_data, to_view
from workbench.ui.canvas_key import KeyMixin
from workbench.ui.canvas_layout import LayoutMixin
from workbench.ui.canvas_overlays import OverlaysMixin
from workbench.ui.canvas_session import SessionViewMixin
from workbench.ui.canvas_sync import SyncMixin
from workbench.ui.chart_items import NO_CACHE, Label, Legend, Pool, Spots
from workbench.ui.theme import Theme, get_theme

__all__ = ["RooflineCanvas", "LogAxis", "to_view", "to_data"]

#: Operation fields that only restyle or re-show points; they take the full path.
_STYLE_FIELDS = {"visible", "color", "label", "memory_level"}
#: Hover and click pick the nearest point within this many pixels.
PICK_RADIUS = 10.0
#: Fit-to-data leaves this fraction of each span around the decade-rounded data range.
FIT_PADDING = 0.015


#: how many of the other operations drawn at a hovered point its tooltip names
ALSO_NAMED = 3


class RooflineCanvas(KeyMixin, LayoutMixin, OverlaysMixin, SyncMixin, SessionViewMixin, QWidget):
    """The roofline chart of a :class:`~workbench.ui.bridge.Workspace`.

    Public, read-only helpers report what is drawn, in data units (for tests and the
    exporter): :meth:`point_items`, :meth:`roof_items`, :meth:`ridge_labels`,
    :meth:`label_items`, :meth:`region_items`, :meth:`legend_texts`, :meth:`background_color`,
    :meth:`view_range`. :meth:`pixel_of` maps a data point to viewport pixels.
    """

    #: Status read-out on mouse move: ``"I = 12.3 FLOP/B, 45.6 TFLOP/s — memory-bound on H100"``.
    cursor_text = Signal(str)

    def __init__(self, workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rooflineCanvas")
        self.workspace = workspace
        self._theme: Theme | None = None
        self._scene: Scene | None = None
        self._brushes: dict[str, QBrush] = {}
        self._pens: dict[tuple[str, float], QPen] = {}

        self._x_axis = LogAxis("bottom", "intensity")
        self._y_axis = LogAxis("left", "rate")
        # no pyqtgraph context menus (built for nothing: the canvas has its own, and their
        # "Log X" entries would break the log10 coordinates)
        self.plot_widget = pg.PlotWidget(enableMenu=False, axisItems={
            "bottom": self._x_axis, "left": self._y_axis,
            "top": LogAxis("top", "intensity"), "right": LogAxis("right", "rate")})
        self.plot_widget.setObjectName("rooflinePlot")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot_widget)

        plot = self._plot = self.plot_widget.getPlotItem()
        vb = self._vb = plot.getViewBox()
        plot.hideAxis("top")  # given (to have no automatic SI prefix), pyqtgraph shows them
        plot.hideAxis("right")
        plot.hideButtons()
        self._base_margins = (6, 6, 28, 6)  # room for the last x tick label
        plot.setContentsMargins(*self._base_margins)
        vb.disableAutoRange()
        self._x_axis.setLogMode(True)
        self._y_axis.setLogMode(True)

        def add(item):
            vb.addItem(item, ignoreBounds=True)

        def curve(z: float, **kwargs):
            return self._z(pg.PlotCurveItem(antialias=kwargs.pop("antialias", True), **kwargs), z)

        self._region_pool = Pool(lambda: curve(-20), add)
        self._roof_pool = Pool(lambda: curve(-1), add)
        self._text_pools = {
            kind: Pool(lambda z=z: self._z(Label(), z), add)
            for kind, z in (("region", -15), ("roof", 3), ("ridge", 4), ("point", 20),
                            ("pair", 17), ("sweep", 19), ("crossing", 21), ("measured", 22))
        }
        self._scatter_pool = Pool(lambda: self._z(Spots(), 10), add)
        #: the selected operation's points: the item an edit changes
        self._live = self._z(Spots(), 10.5)
        self._live_op: int | None = None
        self._live_keys: list[tuple[int, int]] = []
        #: per machine, the keys of the points each spot of its scatter item stands for
        self._scatter_keys: dict[int, list[list[tuple[int, int]]]] = {}
        self._ridge_lines = curve(-5, connect="pairs")
        self._ridge_marks = self._z(Spots(), 2)
        self._ring = self._z(Spots(), 11)
        # leader lines drawn without antialiasing: a repaint of part of one draws the same
        # pixels as a repaint of all of it
        self._leaders = Pool(lambda: curve(18, antialias=False), add)
        self._ring_keys: list[tuple[int, int]] = []
        self._ring_style: tuple = ()
        for item in (self._ridge_lines, self._ridge_marks, self._ring, self._live):
            add(item)
        # sweep paths, measured points and compared pairs (workbench.model.overlays)
        self._sweep_pool = Pool(lambda: curve(6), add)
        self._link_pool = Pool(lambda: curve(8), add)
        self._band_pool = Pool(lambda: curve(5, connect="pairs", antialias=False), add)
        self._arrow_pool = Pool(lambda: self._z(pg.ArrowItem(headLen=11, tipAngle=32), 9), add)
        self._sweep_dots = self._z(Spots(), 7)
        self._predicted_marks = self._z(Spots(), 9)
        self._crossing_marks = self._z(Spots(), 13)
        self._measured_marks = self._z(Spots(), 15)
        for item in (self._sweep_dots, self._predicted_marks, self._crossing_marks,
                     self._measured_marks):
            add(item)
        self._legend = Legend(offset=(12, 12))
        self._legend.on_dragged = self._legend_dragged
        self._legend.setParentItem(vb)
        self._legend_key: tuple = ()

        # drawn state
        self._roofs: list[tuple[Roof, pg.PlotCurveItem]] = []
        self._roof_labels: list[tuple[Roof, Label]] = []
        self._ridge_items: list[tuple[Ridge, Label]] = []
        self._region_items: list[tuple[Region, pg.PlotCurveItem, Label]] = []
        self._points: dict[tuple[int, int], PointMark] = {}
        self._op_points: dict[int, list[tuple[int, int]]] = {}
        self._scatter_for: dict[int, pg.ScatterPlotItem] = {}
        self._labels: dict[int, Label] = {}
        self._label_of: dict = {}  # layout key -> (label item, its request)
        self._pair_apex: list[tuple[float, float]] = []
        self._usage: dict[int, frozenset] = {}
        self._usage_count: Counter = Counter()
        self._hover_keys: list[tuple[int, int]] = []
        self._hover_xy = np.zeros((0, 2))
        self._hover_row: dict[tuple[int, int], int] = {}
        self._hover_key: tuple[int, int] | None = None
        self._hover_text = ""
        self._sweeps: dict[int, list[SweepPath]] = {}
        self._measured: list[MeasuredMark] = []
        self._links: list[PairLink] = []
        self._sweep_drawn: list[tuple[SweepPath, pg.PlotCurveItem]] = []
        self._sweep_labels: list[tuple[SweepPath, int, Label]] = []
        self._crossing_labels: list[tuple[CrossingMark, Label]] = []
        self._measured_drawn: list[tuple[MeasuredMark, pg.PlotCurveItem, Label]] = []
        self._pair_drawn: list[tuple[PairLink, pg.PlotCurveItem, pg.ArrowItem, Label]] = []
        self._pair_rows: list[int] = []  # their rows in the overlay hover arrays
        self._overlay_xy = np.zeros((0, 2))
        self._overlay_sample = np.zeros(0, dtype=bool)
        self._overlay_tips: list = []
        self._overlay_ops: list[int | None] = []
        self._overlays_shown = False

        self._layout_timer = QTimer(self)
        self._layout_timer.setSingleShot(True)
        self._layout_timer.setInterval(40)
        self._layout_timer.timeout.connect(self._layout_annotations)
        # a rebuild while the canvas is hidden (a window being built) places the labels when
        # it is next painted or read, at the size it is shown at, not now
        self._layout_pending = False

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        scene = self.plot_widget.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)
        self._label_transform = None
        scene.sigPrepareForPaint.connect(self._update_label_transforms)
        vb.sigRangeChanged.connect(self._on_range_changed)
        vb.sigResized.connect(self._on_range_changed)

        self._init_session_view()
        self.rebuild(fit=True)
        self.destroyed.connect(functools.partial(_release, self.__dict__))

    def dispose(self) -> None:
        """Disconnect from the workspace and remove every chart item. Call it before the
        widget is destroyed when the workspace lives on (a main window closing, a test's
        teardown); the canvas draws nothing afterwards."""
        self._layout_timer.stop()
        try:
            self.workspace.signals.changed.disconnect(self._on_change)
            self.workspace.selection.changed.disconnect(self._on_selection)
        except (RuntimeError, TypeError):
            pass
        self._legend.set_rows([])
        self._vb.clear()
        for pool in [self._region_pool, self._roof_pool, self._scatter_pool, self._sweep_pool,
                     self._link_pool, self._band_pool, self._arrow_pool,
                     *self._text_pools.values()]:
            pool.items = []
            pool.used = 0
        self._roofs, self._roof_labels, self._ridge_items, self._region_items = [], [], [], []
        self._points, self._op_points, self._scatter_for, self._labels = {}, {}, {}, {}
        self._sweeps, self._measured, self._links = {}, [], []
        self._sweep_drawn, self._sweep_labels, self._crossing_labels = [], [], []
        self._measured_drawn, self._pair_drawn, self._pair_rows = [], [], []
        self._overlay_xy, self._overlay_tips, self._overlay_ops = np.zeros((0, 2)), [], []
        self._overlay_sample = np.zeros(0, dtype=bool)

    def _update_label_transforms(self) -> None:
        """Labels keep their size and angle on screen whatever the view's scale: when the
        view's transform has changed since the last paint, re-derive theirs (one check per
        paint instead of one Python call per label)."""
        self._flush_layout()
        transform = self._vb.childGroup.sceneTransform()
        if transform == self._label_transform:
            return
        self._label_transform = transform
        for item in self._vb.childGroup.childItems():
            if isinstance(item, Label) and item.isVisible():
                item.updateTransform()

    @staticmethod
    def _z(item, z: float):
        item.setZValue(z)
        return item

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self._apply_title()
        # a new size: the legend may fit inside the plot again
        self._set_legend_outside(None)
        self._place_outside_hint()

    def _legend_dragged(self) -> None:
        self.legend_user_placed = True
        self._layout_timer.start()

    # ------------------------------------------------------------------------------------
    # public API

    @property
    def scene_model(self) -> Scene | None:
        """The :class:`~workbench.model.scene.Scene` of the last full rebuild (point positions
        may have moved since; :meth:`point_items` has the current ones)."""
        return self._scene

    @property
    def theme(self) -> Theme:
        return self._theme or get_theme("light")

    def relayout(self) -> None:
        """Place the labels now for the current view (normally done a moment after a zoom,
        pan or resize; call it before grabbing or exporting)."""
        self._layout_timer.stop()
        self._layout_annotations()

    def fit_to_data(self) -> None:
        """Rebuild (so the range covers points moved since) and show the whole data range."""
        self.rebuild(fit=True, honour_view_range=False)

    @contextmanager
    def export_mode(self) -> Iterator[None]:
        """Within this block the chart paints for a figure: no pixmap caches (axes and labels
        stay vector in SVG/PDF) and no selection rings. pyqtgraph exporters switch the caches
        off themselves (``setExportMode``); use this around a plain ``QGraphicsScene.render``
        or an exporter, after :meth:`relayout`."""
        all_items = self.plot_widget.scene().items()
        items = [item for item in all_items if hasattr(item, "setExportMode")]
        cached = [(item, item.cacheMode()) for item in all_items
                  if item.cacheMode() != NO_CACHE]
        ring_shown = self._ring.isVisible()
        self._ring.setVisible(False)
        for item in items:
            item.setExportMode(True, {})
        for item, _mode in cached:
            item.setCacheMode(NO_CACHE)
        try:
            yield
        finally:
            for item in items:
                item.setExportMode(False)
            for item, mode in cached:
                item.setCacheMode(mode)
            self._ring.setVisible(ring_shown)

    def view_range(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """The visible ranges ``((x_lo, x_hi), (y_lo, y_hi))`` in data units."""
        (x0, x1), (y0, y1) = self._vb.viewRange()
        return ((float(to_data(x0)), float(to_data(x1))), (float(to_data(y0)), float(to_data(y1))))

    def set_view_range(self, x_range: Sequence[float], y_range: Sequence[float],
                       padding: float = 0.0) -> None:
        """Show ``x_range`` (FLOP/byte) × ``y_range`` (FLOP/s), plus ``padding`` (a fraction
        of each span) on every side."""
        self._vb.setRange(xRange=tuple(to_view(np.asarray(x_range, dtype=float))),
                          yRange=tuple(to_view(np.asarray(y_range, dtype=float))),
                          padding=padding)

    def point_items(self) -> list[tuple[int, int, float, float]]:
        """``(op_id, hw_id, x, y)`` of every drawn point, in data units, as drawn."""
        out = []
        drawn = [(self._scatter_for[hw_id], keys) for hw_id, keys in self._scatter_keys.items()
                 if hw_id in self._scatter_for]
        live = [[key] for key in self._live_keys]
        for scatter, spots in [*drawn, (self._live, live)]:
            xs, ys = scatter.getData()
            if xs is None:
                continue
            for keys, x, y in zip(spots, to_data(xs), to_data(ys), strict=True):
                out.extend((op_id, hw_id, float(x), float(y)) for op_id, hw_id in keys)
        return out

    def roof_items(self) -> list[tuple[int, str, str, list[float], list[float]]]:
        """``(hw_id, kind, name, xs, ys)`` of every drawn roof in data units. ``kind`` is
        ``memory``, ``compute`` or ``interconnect``, prefixed ``derated `` for practical roofs."""
        out = []
        for roof, curve in self._roofs:
            xs, ys = curve.getData()
            kind = f"derated {roof.kind}" if roof.derated else roof.kind
            out.append((roof.hw_id, kind, roof.name, [float(v) for v in to_data(xs)],
                        [float(v) for v in to_data(ys)]))
        return out

    def ridge_labels(self) -> list[str]:
        """Text of every ridge label shown."""
        self._flush_layout()
        return [item.toPlainText() for _, item in self._ridge_items if item.isVisible()]

    def roof_labels(self) -> list[str]:
        self._flush_layout()
        return [item.toPlainText() for _, item in self._roof_labels if item.isVisible()]

    def label_items(self) -> list[tuple[int, str, float, float]]:
        """``(op_id, text, x, y)`` of every point label shown; ``(x, y)`` is the data point it
        names (the text itself sits next to it, or at the end of its leader line)."""
        self._flush_layout()
        out = []
        for op_id, item in self._labels.items():
            if item.isVisible():
                point = self._points[self._label_key(op_id)]
                out.append((op_id, item.toPlainText(), float(point.x), float(point.y)))
        return out

    def text_items(self) -> list[tuple[str, str, tuple[float, float, float, float]]]:
        """``(kind, text, (left, top, right, bottom))`` of every text shown on the plot, its
        box in viewport pixels (the layout's box: the text item less its margin)."""
        self._flush_layout()
        out = []
        for key, (label, _request) in self._label_of.items():
            if label.isVisible():
                r = label.textItem.mapRectToScene(label.textItem.boundingRect())
                m = 3.0
                out.append((key[0], label.toPlainText(),
                            (r.left() + m, r.top() + m, r.right() - m, r.bottom() - m)))
        return out

    def region_items(self) -> list[tuple[str, str]]:
        """``(kind, label)`` of every shaded region shown."""
        self._flush_layout()
        return [(region.kind, label.toPlainText()) for region, curve, label in self._region_items
                if curve.isVisible()]

    @property
    def legend_item(self) -> QGraphicsItem:
        """The legend's chart item (for its place and size)."""
        return self._legend

    def legend_texts(self) -> list[str]:
        """Entries of the legend, or ``[]`` when it is hidden."""
        if not self._legend.isVisible():
            return []
        return [text for text, _ in self._legend.rows]

    def background_color(self) -> str:
        return self.plot_widget.backgroundBrush().color().name()

    def selected_points(self) -> list[tuple[float, float]]:
        """Data positions of the selection rings shown."""
        if not self._ring.isVisible():
            return []
        data = self._ring.data
        return [(float(x), float(y)) for x, y in zip(to_data(data["x"]), to_data(data["y"]),
                                                     strict=True)]

    def hover_text(self) -> str:
        """Tooltip text of the point under the mouse ("" when none)."""
        return self._hover_text

    def pixel_of(self, x: float, y: float) -> QPoint:
        """Viewport pixel of data point ``(x, y)`` (for clicks in tests)."""
        scene_pos = self._vb.mapViewToScene(QPointF(float(to_view(x)), float(to_view(y))))
        return self.plot_widget.mapFromScene(scene_pos)

    # ------------------------------------------------------------------------------------
    # change handling

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what == What.STATE:
            return
        if what == What.TITLE:
            self._apply_title()
            return
        if what == What.OPERATION and change.ids:
            fields = set(change.fields)
            if not fields or fields & _STYLE_FIELDS:
                self.rebuild()
                return
            if fields == {"sweep"}:  # only that operation's sweep paths change
                for op_id in change.ids:
                    self._refresh_sweep(op_id)
                self._redraw_overlays()
                return
            if fields == {"name"}:
                for op_id in change.ids:
                    self._rename(op_id)
                self._refresh_overlays_for(change.ids)
                return
            if not self._update_operations(tuple(change.ids)):
                self.rebuild()
                return
            self._refresh_overlays_for(change.ids)
            return
        if what == What.MEASUREMENTS:
            self._refresh_measured()
            self._redraw_overlays()
            return
        if what == What.COMPARISONS:
            self._refresh_links()
            self._redraw_overlays()
            return
        if what == What.SESSION:
            if self.workspace.document.session is not self._session_shown:
                self._forget_session()
            self.rebuild(fit=True)
            return
        if what == What.VIEW and set(change.fields) & {"x_range", "y_range"}:
            self.rebuild(fit=True)
            return
        self.rebuild()

    def _on_selection(self, op_id) -> None:
        self._set_live(op_id)
        self._sync_ring()
        if op_id in self._labels:  # its label goes first now
            self._layout_timer.start()

    def _pairs(self) -> list[Pair]:
        """Every (visible operation, visible machine) pair; one whose operation cannot be
        counted has no result and says why (the chart lists it among its notes)."""
        session = self.workspace.document.session
        results = self.workspace.results
        machines = machine_entries(session)
        return [results.pair(op.id, hw.id) for op in session.operations if op.visible
                for hw in machines]

    def rebuild(self, fit: bool = False, honour_view_range: bool = True) -> None:
        """Rebuild the scene and sync every item to it (reusing items)."""
        session = self.workspace.document.session
        scene = build_scene(session, self._pairs())
        self._scene = scene
        theme = get_theme(session.view.theme)
        if theme != self._theme:
            self._apply_theme(theme)
        self._apply_title()
        self._sync_regions(scene)
        self._sync_roofs(scene)
        self._sync_ridges(scene)
        self._sync_points(scene)
        self._sync_overlays(scene)
        self._ring_keys = []  # a rebuild restyles the ring as well
        self._sync_ring()
        self._sync_legend(scene)
        self._legend.setVisible(session.view.legend and bool(scene.legend))
        self._set_limits(scene)
        if fit:
            # a new chart: the legend starts inside the plot, the fit sees the whole plot
            self._set_legend_outside(None)
            x_range, y_range = scene.x_range, scene.y_range
            padding = FIT_PADDING  # a little room so the edge decades get their tick labels
            if honour_view_range and session.view.x_range:
                x_range, padding = session.view.x_range, 0.0
            if honour_view_range and session.view.y_range:
                y_range, padding = session.view.y_range, 0.0
            self.set_view_range(x_range, y_range, padding)
        if self.isVisible():
            self._layout_annotations()
        else:
            self._layout_pending = True
        self._count_outside()
        self._show_not_drawn(scene.notes)

    def _flush_layout(self) -> None:
        """Place the labels now if a rebuild while hidden left them to the next paint."""
        if self._layout_pending:
            self._layout_annotations()

    def _update_operation(self, op_id: int) -> bool:
        """Move one operation's points and label after a parameter edit. Returns False when
        a full rebuild is needed (roofs in use or the set of points changed)."""
        return self._update_operations((op_id,))

    def _update_operations(self, op_ids: Sequence[int]) -> bool:
        """Move these operations' points and labels after a parameter edit, as one batch:
        every new position is computed first, then each machine's scatter item is set once
        and the texts the moved markers touch are placed again once. Returns False when a
        full rebuild is needed (roofs in use or the set of points changed)."""
        scene = self._scene
        if scene is None:
            return False
        document = self.workspace.document
        results = self.workspace.results
        markers = {m.hw_id: m.marker for m in scene.machines}
        hw_ids = [m.hw_id for m in scene.machines]
        show_labels = document.session.view.labels
        updates: dict[int, list] = {}
        entries = []
        for op_id in op_ids:
            try:
                entry = document.operation(op_id)
            except KeyError:
                return False
            if entry.visible:
                entries.append(entry)
        # (operations with the same counts, as a model's layers, share one row of pairs)
        shared = results.shared_rows(entries, hw_ids)
        of_row: dict[int, tuple[frozenset, list]] = {}  # id of a row → its usage, points
        for entry in entries:
            op_id = entry.id
            old_keys = self._op_points.get(op_id, [])
            pairs = shared[op_id]
            known = of_row.get(id(pairs))
            if known is None:
                known = of_row[id(pairs)] = (
                    frozenset((p.hardware.id, roof_name(p.result.precision_used, p.result.unit),
                               p.result.level) for p in pairs if p.result is not None),
                    drawn_pairs(pairs, markers))
            usage, drawn = known
            if usage != self._usage.get(op_id, frozenset()):
                before = set(self._usage_count)
                self._usage_count.subtract(self._usage.get(op_id, frozenset()))
                self._usage_count.update(usage)
                self._usage_count = +self._usage_count
                self._usage[op_id] = usage
                if set(self._usage_count) != before:
                    return False
            if not old_keys:
                return False
            color = self._points[old_keys[0]].color
            points = operation_points(entry, pairs, color, markers,
                                      labels_allowed=scene.labels_allowed,
                                      show_labels=show_labels, drawn=drawn)
            if [(p.op_id, p.hw_id) for p in points] != old_keys:
                return False
            updates[op_id] = points
        if not updates:
            return True
        if len(op_ids) == 1:
            self._set_live(op_ids[0])  # one operation: only its few points are set again
        keys, xs, ys = [], [], []
        for op_id, points in updates.items():
            for point in points:
                key = (op_id, point.hw_id)
                self._points[key] = point
                keys.append(key)
                xs.append(point.x)
                ys.append(point.y)
        rows = np.array([self._hover_row[key] for key in keys], dtype=int)
        xy = to_view(np.array([xs, ys], dtype=float)).T.reshape(-1, 2)
        self._hover_xy[rows] = xy
        refill = {key[1] for key in keys if key[0] != self._live_op}
        for hw_id in refill:
            if hw_id in self._scatter_for:
                self._fill_scatter(hw_id)
        if self._live_op in updates:
            self._fill_live()
        self._relayout_moved(keys, rows, xy)
        if self.workspace.selection.current in updates:
            self._sync_ring()
        if self._hover_key is not None and self._hover_key[0] in updates:
            self._hover_text = self._points[self._hover_key].tooltip
        self._count_outside()
        return True

    def _rename(self, op_id: int) -> None:
        try:
            entry = self.workspace.document.operation(op_id)
        except KeyError:
            return
        if not entry.visible:
            return
        # tooltips read the result, which carries the name: refresh this op's points
        if not self._update_operation(op_id):
            self.rebuild()
            return
        if op_id in self._key_tags:  # named by the key: its row says the new name
            self.rebuild()
            return
        name = entry.operation.name
        label = self._labels.get(op_id)
        if label is not None:
            label.setText(name)
            self._relayout_keys([("point", op_id)])
        scene = self._scene
        legend = tuple(replace(e, text=name) if e.kind == "operation" and e.id == op_id else e
                       for e in scene.legend)
        if legend != scene.legend:
            self._scene = replace(scene, legend=legend)
            self._sync_legend(self._scene)

    # ------------------------------------------------------------------------------------
    # annotation layout (pixel space)

    def _on_range_changed(self, *_args) -> None:
        self._layout_timer.start()
        self._count_outside()

    def _view_to_scene(self) -> tuple[float, float, float, float]:
        """``(ax, bx, ay, by)``: scene_x = ax·view_x + bx, scene_y = ay·view_y + by."""
        self._vb.updateMatrix()  # pyqtgraph defers it after a range change
        t = self._vb.childGroup.sceneTransform()
        return t.m11(), t.dx(), t.m22(), t.dy()

    def _point_pixels(self) -> np.ndarray:
        ax, bx, ay, by = self._view_to_scene()
        if not len(self._hover_xy):
            return np.zeros((0, 2))
        return np.column_stack((self._hover_xy[:, 0] * ax + bx, self._hover_xy[:, 1] * ay + by))

    # ------------------------------------------------------------------------------------
    # mouse

    def _nearest(self, scene_pos) -> tuple | None:
        """The key of the nearest point within :data:`PICK_RADIUS`: ``(op_id, hw_id)`` for an
        operation's point, ``("overlay", i)`` for a sweep sample, a crossing, a measured
        point or a compared pair's label (operation points win ties)."""
        best, best_d2 = None, PICK_RADIUS**2
        if len(self._hover_xy):
            pts = self._point_pixels()
            d2 = (pts[:, 0] - scene_pos.x()) ** 2 + (pts[:, 1] - scene_pos.y()) ** 2
            i = int(np.argmin(d2))
            if d2[i] <= best_d2:
                best, best_d2 = self._hover_keys[i], d2[i]
        if len(self._overlay_xy):
            ax, bx, ay, by = self._view_to_scene()
            d2 = ((self._overlay_xy[:, 0] * ax + bx - scene_pos.x()) ** 2
                  + (self._overlay_xy[:, 1] * ay + by - scene_pos.y()) ** 2)
            # a crossing, a measured point or a pair's label wins over a sweep sample drawn
            # within about a pixel of it (a sample next to a crossing is the usual case)
            near = d2 <= d2.min() + 2.0
            marks = near & ~self._overlay_sample
            j = int(np.flatnonzero(marks)[np.argmin(d2[marks])] if marks.any()
                    else np.argmin(d2))
            if d2[j] < best_d2:
                best = ("overlay", j)
        return best

    def _tooltip_of(self, key: tuple) -> str:
        if key[0] == "overlay":
            return self._overlay_tips[key[1]]()
        point = self._points[key]
        text = point.tooltip
        # points drawn exactly here too (a model's layers coincide): named, not hidden
        row = self._hover_row.get(key)
        if row is None:
            return text
        same = np.flatnonzero((self._hover_xy == self._hover_xy[row]).all(axis=1))
        others = [self._points[self._hover_keys[i]] for i in same.tolist() if i != row]
        if not others:
            return text
        names = [p.label if p.hw_id == point.hw_id else f"{p.label} (on {p.machine})"
                 for p in others[:ALSO_NAMED]]
        more = len(others) - len(names)
        listed = ", ".join(names) + (f" and {more} more" if more else "")
        return f"{text}\nAlso at this point ({len(others)}): {listed}"

    def _on_mouse_moved(self, scene_pos) -> None:
        if not self._vb.sceneBoundingRect().contains(scene_pos):
            if self._hover_key is not None:
                self._hover_key = None
                self._hover_text = ""
                QToolTip.hideText()
            return
        view = self._vb.mapSceneToView(scene_pos)
        x, y = float(to_data(view.x())), float(to_data(view.y()))
        key = self._nearest(scene_pos)
        if self._scene is not None and math.isfinite(x) and math.isfinite(y):
            point = self._points.get(key) if key is not None and key[0] != "overlay" else None
            if point is not None:  # a point speaks of its own machine
                self.cursor_text.emit(self._scene.cursor_text(point.x, point.y).split(" — ")[0]
                                      + f" — {point.label}: {point.bound}-bound on "
                                      f"{point.machine}")
            else:
                # within 2 pixels of the roof counts as on it
                tolerance = 10.0 ** (2 * abs(self._vb.viewPixelSize()[1])) - 1
                self.cursor_text.emit(self._scene.cursor_text(x, y, tolerance))
        if key == self._hover_key:
            return
        self._hover_key = key
        if key is None:
            self._hover_text = ""
            QToolTip.hideText()
            return
        self._hover_text = self._tooltip_of(key)
        pixel = self.plot_widget.mapFromScene(scene_pos)
        r = int(PICK_RADIUS)
        # the tip hides as soon as the mouse leaves the picking circle's square
        QToolTip.showText(self.plot_widget.mapToGlobal(pixel) + QPoint(14, 14),
                          self._hover_text, self.plot_widget,
                          QRect(pixel.x() - r, pixel.y() - r, 2 * r, 2 * r))

    def _on_mouse_clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            key = self._nearest(event.scenePos())
            if key is not None:
                op_id = self._overlay_ops[key[1]] if key[0] == "overlay" else key[0]
                if op_id is not None:
                    self.workspace.selection.select(op_id)
                event.accept()
            elif event.double():
                self.fit_to_data()
                event.accept()
        elif event.button() == Qt.MouseButton.RightButton:
            menu = QMenu(self)
            menu.addAction("Fit to data", self.fit_to_data)
            event.accept()
            menu.popup(event.screenPos().toPoint())


def _release(state: dict) -> None:
    """Run when the canvas's widget is destroyed: drop the Python references to its chart
    items. Otherwise a canvas wrapper that outlives its widget (held by a failed test's
    traceback, say) keeps wrappers of deleted items alive, and PySide crashes later in an
    unrelated paint."""
    state.clear()
