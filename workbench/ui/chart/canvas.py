"""The live roofline chart: a thin pyqtgraph view of :mod:`workbench.model.chart.scene`.

Log-log the robust way: every item lives in **log10 coordinates** (:func:`to_view` is the
only place a logarithm is taken, :func:`to_data` the only inverse) and only the two
:class:`LogAxis` items are in log mode, for their tick labels. ``PlotItem.setLogMode`` is never
called (it would transform curves but not scatter or text items).

Updates are incremental: one scatter item per machine holds the points of every operation
but the selected one, whose points live in a small item of their own: an edit of the
selected operation's parameters calls ``setData`` on that small item and re-places only the
texts its points touch (:mod:`workbench.ui.chart.labels`); roofs are rebuilt only when
machines, the view or the set of precisions / memory levels in use change. Items are pooled
and reused, never created and destroyed per edit; the large, unchanging items are cached by
Qt as pixmaps between repaints.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Signal
from PySide6.QtWidgets import QGraphicsItem, QVBoxLayout, QWidget

from workbench.document import Change
from workbench.document.changes import What
from workbench.model.analysis import Pair
from workbench.model.chart.scene import Scene, build_scene, machine_entries
from workbench.ui.chart.axes import LogAxis, PlotWidget, to_data, to_view
from workbench.ui.chart.hover import Hover
from workbench.ui.chart.items import Label, painted_for_figure
from workbench.ui.chart.labels import TEXT_INSET, LabelLayer
from workbench.ui.chart.legend import ChartLegend
from workbench.ui.chart.overlay_items import OverlayLayer
from workbench.ui.chart.points import PointLayer
from workbench.ui.chart.roof_values import say_values_short
from workbench.ui.chart.roofs import RoofLayer
from workbench.ui.chart.session_view import SessionView
from workbench.ui.chart.styles import ChartStyles, at_z
from workbench.ui.chart.tags import TagsAndKey
from workbench.ui.chart.theme import Theme, get_theme, make_font, qcolor
from workbench.ui.chart.titles import ChartTitles

__all__ = ["RooflineCanvas", "LogAxis", "to_view", "to_data"]

#: Operation fields that only restyle or re-show points; they take the full path.
_STYLE_FIELDS = {"visible", "color", "label", "memory_level"}
#: Fit-to-data leaves this fraction of each span around the decade-rounded data range.
FIT_PADDING = 0.015
#: A fitted view whose points' tags find no place (the crowded roofs are at the top) is
#: given this many times more room over its highest points (a decade, on the log axis),
#: kept only when more names are then told.
HEADROOM = 10.0


class RooflineCanvas(QWidget):
    """The roofline chart of a :class:`~workbench.ui.bridge.Workspace`.

    The widget assembles the chart's parts, each owning its state and items, and routes the
    workspace's changes to them:

    * :attr:`styles` (:class:`~workbench.ui.chart.styles.ChartStyles`): theme, pens,
      brushes, fonts, the text items' pools;
    * :attr:`roofs` (:class:`~workbench.ui.chart.roofs.RoofLayer`): regions, roofs, ridges;
    * :attr:`points` (:class:`~workbench.ui.chart.points.PointLayer`): the operations'
      points, the live item, the selection ring, the points' positions;
    * :attr:`overlays` (:class:`~workbench.ui.chart.overlay_items.OverlayLayer`): sweep paths,
      measured points, compared pairs;
    * :attr:`labels` (:class:`~workbench.ui.chart.labels.LabelLayer`): the operations'
      names, the layout of every text, leader lines, when to place the texts again;
    * :attr:`key` (:class:`~workbench.ui.chart.tags.TagsAndKey`): the tags and the key;
    * :attr:`legend` (:class:`~workbench.ui.chart.legend.ChartLegend`): the legend's rows
      and place;
    * :attr:`titles` (:class:`~workbench.ui.chart.titles.ChartTitles`): title, axis titles;
    * :attr:`hover` (:class:`~workbench.ui.chart.hover.Hover`): the mark under the mouse;
    * :attr:`session_view` (:class:`~workbench.ui.chart.session_view.SessionView`): the session
      drawn and the notes over the plot.

    Public, read-only helpers report what is drawn, in data units (for tests and the
    exporter): :meth:`point_items`, :meth:`roof_items`, :meth:`ridge_labels`,
    :meth:`label_items`, :meth:`region_items`, :meth:`legend_texts`, :meth:`background_color`,
    :meth:`view_range`. :meth:`pixel_of` maps a data point to viewport pixels.

    A figure's canvas (:mod:`workbench.ui.figures.export`) changes the policy attributes
    (:attr:`key_on_screen`, :attr:`search_legend_places`, :attr:`figure_type_scale`) and
    overrides the hooks :meth:`layout_annotations`, :meth:`outside_side` and
    :meth:`sync_legend`.
    """

    #: Status read-out on mouse move: ``"I = 12.3 FLOP/B, 45.6 TFLOP/s — memory-bound on H100"``.
    cursor_text = Signal(str)

    #: on screen, names with no clean place are told by tags and the legend's key, as in
    #: figures (a figure's canvas makes its own legend and keeps its key between passes)
    key_on_screen = True
    #: try the legend's other places when names find no place (figures; on screen the
    #: legend stays put while the user works, and can be dragged or collapsed)
    search_legend_places = False
    #: how much larger than on screen the chart is drawn (a figure's type scale): an axis
    #: title is never set below :data:`~workbench.ui.chart.titles.AXIS_TITLE_MIN_PT` at that
    #: scale
    figure_type_scale = 1.0
    #: the share of a figure's height its key below the plot may take (rows past it are
    #: counted in one line); the export makes the page taller first
    figure_key_share = 0.35
    #: a figure's top-N rule: at most this many profiled kernels of each run, each named by
    #: a tag and the key (:func:`~workbench.model.chart.scene.build_scene`); None on screen,
    #: where a point's tooltip names it
    figure_kernels: int | None = None

    def __init__(self, workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rooflineCanvas")
        self.workspace = workspace
        self._scene: Scene | None = None

        self._x_axis = LogAxis("bottom", "intensity")
        self._y_axis = LogAxis("left", "rate")
        # no pyqtgraph context menus (built for nothing: the canvas has its own, and their
        # "Log X" entries would break the log10 coordinates)
        self.plot_widget = PlotWidget(enableMenu=False, axisItems={
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
            return at_z(pg.PlotCurveItem(antialias=kwargs.pop("antialias", True), **kwargs), z)

        self.styles = ChartStyles(add)
        self.roofs = RoofLayer(self, add, curve)
        self.points = PointLayer(self, add)
        self.overlays = OverlayLayer(self, add, curve)
        for item in (*self.roofs.fixed_items(), *self.points.fixed_items()):
            add(item)
        self.legend = ChartLegend(self)
        self.titles = ChartTitles(self)
        self.labels = LabelLayer(self, add)
        self.key = TagsAndKey(self)
        self.hover = Hover(self)
        self.session_view = SessionView(self)
        self.outside_hint = self.session_view.outside_hint
        self.not_drawn_hint = self.session_view.not_drawn_hint
        self._parts = (self.styles, self.roofs, self.points, self.overlays, self.legend,
                       self.titles, self.labels, self.key, self.hover, self.session_view)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        scene = self.plot_widget.scene()
        scene.sigMouseMoved.connect(self.hover.on_mouse_moved)
        scene.sigMouseClicked.connect(self.hover.on_mouse_clicked)
        self._label_transform = None
        scene.sigPrepareForPaint.connect(self._update_label_transforms)
        vb.sigRangeChanged.connect(self._on_range_changed)
        vb.sigResized.connect(self._on_resized)
        # (the lines' boxes have room for their pens in pixels: see Segment)
        vb.sigTransformChanged.connect(self._lines_follow_view)
        vb.sigResized.connect(self.hover.recheck)

        #: a fit happened: the next full placing may give the fitted view its headroom
        self._headroom_pending = False
        #: the view range the last fit showed (None: a fit that set a saved view aside)
        self._fitted_view = None
        #: each change rebuilds and shows the whole data (see :meth:`fitting_changes`)
        self._fit_changes = False
        #: the chart's size when its plot was last resized
        self._size_placed = (0, 0)
        self.rebuild(fit=True)
        self.destroyed.connect(functools.partial(_release, self.__dict__))

    def dispose(self) -> None:
        """Disconnect from the workspace and remove every chart item. Call it before the
        widget is destroyed when the workspace lives on (a main window closing, a test's
        teardown); the canvas draws nothing afterwards."""
        self.labels.stop()
        with contextlib.suppress(RuntimeError, TypeError):  # (disposed of already)
            self.workspace.signals.changed.disconnect(self._on_change)
            self.workspace.selection.changed.disconnect(self._on_selection)
        self.legend.clear()
        self._vb.clear()
        for part in (self.roofs, self.points, self.overlays, self.styles, self.labels):
            part.dispose()

    def _update_label_transforms(self) -> None:
        """Labels keep their size and angle on screen whatever the view's scale: when the
        view's transform has changed since the last paint, re-derive theirs (one check per
        paint instead of one Python call per label)."""
        self.flush_layout()
        transform = self._vb.childGroup.sceneTransform()
        if transform == self._label_transform:
            return
        self._label_transform = transform
        for item in self._vb.childGroup.childItems():
            if isinstance(item, Label) and item.isVisible():
                item.updateTransform()

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        self.hover.left()  # (the read-out spoke of the last place under the pointer)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            self.titles.apply()
        # a new size: the legend may fit inside the plot again
        self.legend.set_outside(None)
        self.session_view.place_hints()

    # ------------------------------------------------------------------------------------
    # what the parts share

    @property
    def view_box(self) -> pg.ViewBox:
        """The plot's view (log10 data coordinates)."""
        return self._vb

    @property
    def plot_item(self) -> pg.PlotItem:
        return self._plot

    @property
    def x_axis(self) -> LogAxis:
        return self._x_axis

    @property
    def y_axis(self) -> LogAxis:
        return self._y_axis

    @property
    def base_margins(self) -> tuple[int, int, int, int]:
        """The plot's margins without a legend outside it: left, top, right, bottom."""
        return self._base_margins

    def view_to_scene(self) -> tuple[float, float, float, float]:
        """``(ax, bx, ay, by)``: scene_x = ax·view_x + bx, scene_y = ay·view_y + by."""
        self._vb.updateMatrix()  # pyqtgraph defers it after a range change
        t = self._vb.childGroup.sceneTransform()
        return t.m11(), t.dx(), t.m22(), t.dy()

    def refit_plot(self) -> None:
        """Lay the plot out again within the view (its least size may have changed: a title
        on two lines, a legend beside the plot); the view only does so when resized."""
        view = self.plot_widget
        pg.GraphicsView.setRange(view, view.range, padding=0, disableAutoPixel=False)
        self._plot.layout.activate()

    def amend_scene(self, **changes) -> None:
        """Keep :attr:`scene_model` in step with what was redrawn since the last rebuild
        (the overlays, the legend)."""
        self._scene = replace(self._scene, **changes)

    def flush_layout(self) -> None:
        """Place the labels now if a rebuild while hidden left them to the next paint."""
        if self.labels.pending:
            self.layout_annotations()

    # ------------------------------------------------------------------------------------
    # hooks (a figure's canvas overrides them)

    def layout_annotations(self) -> None:
        """Place every text of the chart: on screen, names with no clean place are told by
        tags and the key (:meth:`TagsAndKey.layout_on_screen`); after a fit, where tags still
        find no place, the fitted view is tried with :data:`HEADROOM` over its top."""
        with self.labels.placing():
            self.roofs.lengthen()  # (each text tried in full first: see say_values_short)
            self.key.layout_on_screen()
            if self._headroom_pending:
                self._headroom_pending = False
                self._give_headroom()
            if say_values_short(self):  # (roof values with no place in full)
                self.labels.redraw_leaders()  # (one said short away from its mark)
        self.session_view.place_hints()  # (clear of the legend where it now lies)

    def _give_headroom(self) -> None:
        untold = self.key.untold()
        if not untold:
            return
        (x0, x1), (y0, y1) = self.view_range()
        fitted = self._fitted_view is not None
        self.set_view_range((x0, x1), (y0, y1 * HEADROOM))
        self.labels.stop()  # (placed now, not a moment after the range change)
        self.key.layout_on_screen()
        if self.key.untold() >= untold:  # no better: the view as it was fitted
            self.set_view_range((x0, x1), (y0, y1))
            self.labels.stop()
            self.key.layout_on_screen()
        if fitted:  # (the fit, its headroom given or not)
            self._fitted_view = self._vb.viewRange()

    def outside_side(self) -> str:
        """The side of the plot a legend that fits in no corner goes to."""
        return self.legend.natural_side()

    def sync_legend(self, scene: Scene, force: bool = False) -> None:
        """Set the legend's rows to ``scene``'s legend (unless they are so already)."""
        self.legend.sync(scene, force)

    # ------------------------------------------------------------------------------------
    # public API

    @property
    def scene_model(self) -> Scene | None:
        """The :class:`~workbench.model.chart.scene.Scene` of the last full rebuild (point positions
        may have moved since; :meth:`point_items` has the current ones)."""
        return self._scene

    @property
    def theme(self) -> Theme:
        return self.styles.theme

    @property
    def legend_user_placed(self) -> bool:
        """Whether the user dragged the legend (it stays where it was put)."""
        return self.legend.user_placed

    @legend_user_placed.setter
    def legend_user_placed(self, placed: bool) -> None:
        self.legend.user_placed = placed

    def relayout(self) -> None:
        """Place the labels now for the current view (normally done a moment after a zoom,
        pan or resize; call it before grabbing or exporting)."""
        self.labels.stop()
        self.layout_annotations()

    def fit_to_data(self) -> None:
        """Rebuild (so the range covers points moved since) and show the whole data range."""
        self.rebuild(fit=True, honour_view_range=False)

    @contextmanager
    def fitting_changes(self) -> Iterator[None]:
        """Within this block each change of the document rebuilds the chart and shows the
        whole data range, as :meth:`fit_to_data` after it would (an import into a chart that
        showed the whole data), in the one rebuild: not a refresh of the changed marks and
        then a rebuild to fit."""
        self._fit_changes = True
        try:
            yield
        finally:
            self._fit_changes = False

    @contextmanager
    def export_mode(self) -> Iterator[None]:
        """Within this block the chart paints for a figure (:func:`painted_for_figure`), with
        no selection rings; use this around a plain ``QGraphicsScene.render`` or an exporter,
        after :meth:`relayout`."""
        ring = self.points.ring
        ring_shown = ring.isVisible()
        ring.setVisible(False)
        try:
            with painted_for_figure(self.plot_widget.scene()):
                yield
        finally:
            ring.setVisible(ring_shown)

    @property
    def shows_fit(self) -> bool:
        """Whether the chart shows the view its last fit gave (the session's saved view, or
        the whole data), not one zoomed or panned since: a figure of it is then fitted to
        its own page, as the command line fits one."""
        fitted = self._fitted_view
        if fitted is None:
            return False
        now = self._vb.viewRange()
        return all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
                   for pair_now, pair_then in zip(now, fitted, strict=True)
                   for a, b in zip(pair_now, pair_then, strict=True))

    def figure_view_range(self):
        """The view range a figure of the chart shows: None (fitted to its page, as the
        command line does) while the chart shows its fit, else the range on screen."""
        return None if self.shows_fit else self.view_range()

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
        return self.points.point_items()

    def point_colors(self) -> dict[tuple[int, int], str]:
        """``{(op_id, hw_id): "#rrggbb"}``: the colour of every drawn point, as drawn: its
        fill, or the ring of a hollow (overhead-bound) marker."""
        return self.points.point_colors()

    def roof_items(self) -> list[tuple[int, str, str, list[float], list[float]]]:
        """``(hw_id, kind, name, xs, ys)`` of every drawn roof in data units. ``kind`` is
        ``memory``, ``compute`` or ``interconnect``, prefixed ``derated `` for practical roofs."""
        return self.roofs.roof_items()

    def ridge_labels(self) -> list[str]:
        """Text of every ridge label shown."""
        self.flush_layout()
        return self.roofs.ridge_labels()

    def roof_labels(self) -> list[str]:
        self.flush_layout()
        return self.roofs.roof_labels()

    def label_items(self) -> list[tuple[int, str, float, float]]:
        """``(op_id, text, x, y)`` of every point label shown; ``(x, y)`` is the data point it
        names (the text itself sits next to it, or at the end of its leader line)."""
        self.flush_layout()
        out = []
        for op_id, item in self.labels.point_labels.items():
            if item.isVisible():
                point = self.points.label_point(op_id)
                out.append((op_id, item.toPlainText(), float(point.x), float(point.y)))
        return out

    def text_items(self) -> list[tuple[str, str, tuple[float, float, float, float]]]:
        """``(kind, text, (left, top, right, bottom))`` of every text shown on the plot, its
        box in viewport pixels (the layout's box: the text item less its margin)."""
        self.flush_layout()
        return self.shown_texts()

    def shown_texts(self) -> list[tuple[str, str, tuple[float, float, float, float]]]:
        """:meth:`text_items` as the texts lie now (a placing under way not waited for)."""
        out = []
        for key, label, _request in self.labels.entries():
            if label.isVisible():
                r = label.textItem.mapRectToScene(label.textItem.boundingRect())
                m = TEXT_INSET
                out.append((key[0], label.toPlainText(),
                            (r.left() + m, r.top() + m, r.right() - m, r.bottom() - m)))
        return out

    def leader_lines(self) -> list[tuple[float, float, float, float]]:
        """The leader lines drawn, ``(x0, y0, x1, y1)`` in viewport pixels (as the layout's
        leaders are given: what a reader sees joining a text to its mark)."""
        ax, bx, ay, by = self.view_to_scene()
        out = []
        for curve in self.labels.leader_curves:
            xs, ys = curve.getData()
            if curve.isVisible() and xs is not None and len(xs) == 2:
                out.append((float(xs[0] * ax + bx), float(ys[0] * ay + by),
                            float(xs[1] * ax + bx), float(ys[1] * ay + by)))
        return out

    def region_items(self) -> list[tuple[str, str]]:
        """``(kind, label)`` of every shaded region shown."""
        self.flush_layout()
        return self.roofs.region_items()

    def sweep_items(self) -> list[tuple[int, int, list[float], list[float]]]:
        """``(op_id, hw_id, xs, ys)`` of every sweep path drawn, in data units, as drawn (the
        samples in parameter order with the ridge crossings in between)."""
        return self.overlays.sweep_items()

    def sweep_labels(self) -> list[tuple[int, int, str, float, float]]:
        """``(op_id, hw_id, text, x, y)`` of every end label of a sweep path shown
        (``"m = 1"``), anchored at data ``(x, y)``."""
        return self.overlays.sweep_labels()

    def crossing_items(self) -> list[tuple[int, int, str, float, float]]:
        """``(op_id, hw_id, label, x, y)`` of every ridge crossing marked (see
        :meth:`OverlayLayer.crossing_items`)."""
        return self.overlays.crossing_items()

    def measured_items(self) -> list[dict]:
        """One dict per measured point drawn (see :meth:`OverlayLayer.measured_items`)."""
        return self.overlays.measured_items()

    def pair_items(self) -> list[dict]:
        """One dict per compared pair drawn on one machine (see
        :meth:`OverlayLayer.pair_items`)."""
        return self.overlays.pair_items()

    @property
    def legend_item(self) -> QGraphicsItem:
        """The legend's chart item (for its place and size)."""
        return self.legend.item

    def legend_texts(self) -> list[str]:
        """Entries of the legend, or ``[]`` when it is hidden."""
        return self.legend.texts()

    def title_lines(self) -> tuple[list[str], float]:
        """The title as set: its lines (one, or two when it is wider than the chart) and
        its size in points (smaller than the theme's when even two lines are too wide)."""
        return self.titles.title_lines()

    def axis_titles(self) -> dict[str, tuple[str, float]]:
        """The axis titles as set: side → (wording, size in points)."""
        return self.titles.axis_titles()

    def not_drawn_text(self) -> str:
        """The note over the plot about what could not be drawn ("" when none)."""
        return self.session_view.not_drawn_text()

    def background_color(self) -> str:
        return self.plot_widget.backgroundBrush().color().name()

    def selected_points(self) -> list[tuple[float, float]]:
        """Data positions of the selection rings shown."""
        return self.points.selected_points()

    def hover_text(self) -> str:
        """Tooltip text of the point under the mouse ("" when none)."""
        return self.hover.text

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
        if self._fit_changes:
            self.rebuild(fit=True, honour_view_range=False)
            return
        if what == What.TITLE:
            self.titles.apply()
            return
        if what == What.OPERATION and change.ids:
            fields = set(change.fields)
            if not fields or fields & _STYLE_FIELDS:
                self.rebuild()
                return
            if fields == {"sweep"}:  # only that operation's sweep paths change
                for op_id in change.ids:
                    self.overlays.refresh_sweep(op_id)
                self.overlays.redraw()
                return
            if fields == {"name"}:
                for op_id in change.ids:
                    self._rename(op_id)
                self.overlays.refresh_for(change.ids)
                return
            # (when the overlays redraw, every text is placed again after them: the texts
            # the moved markers touch need no placing of their own before)
            replaced = self.overlays.redraws_for(change.ids)
            if not self._update_operations(tuple(change.ids), place=not replaced):
                self.rebuild()
                return
            self.overlays.refresh_for(change.ids)
            return
        if what == What.MEASUREMENTS:
            self.overlays.refresh_measured()
            self.overlays.redraw()
            return
        if what == What.COMPARISONS:
            self.overlays.refresh_links()
            self.overlays.redraw()
            return
        if what == What.SESSION:
            if self.session_view.other_session():
                self.session_view.forget_session()
            self.rebuild(fit=True)
            return
        if what == What.VIEW and set(change.fields) & {"x_range", "y_range"}:
            self.rebuild(fit=True)
            return
        # the first points of a chart that had none (a new session's first operation) are
        # shown: the view of an empty chart was made for no data
        self.rebuild(fit=self._scene is not None and not self._scene.points)
        # what the user added is shown, the view grown to it (no edit: the view is not
        # part of the document)
        self.session_view.show_added(change)

    def _on_selection(self, op_id) -> None:
        self.points.set_live(op_id)
        self.points.sync_ring()
        if self.overlays.on_top_after(op_id):  # its sweep drawn over the others now
            self.overlays.redraw()
        elif op_id in self.labels.point_labels:  # its label goes first now
            self.labels.schedule()

    def _pairs(self) -> list[Pair]:
        """Every (visible operation, visible machine) pair; one whose operation cannot be
        counted has no result and says why (the chart lists it among its notes)."""
        session = self.workspace.document.session
        results = self.workspace.results
        machines = machine_entries(session)
        return [results.pair(op.id, hw.id) for op in session.operations if op.visible
                for hw in machines]

    def _apply_theme(self, theme: Theme) -> None:
        styles = self.styles
        styles.set_theme(theme)
        self.plot_widget.setBackground(qcolor(theme.background))
        tick_font = make_font(theme, theme.tick_size)
        for axis in (self._x_axis, self._y_axis):
            axis.setPen(styles.pen(theme.foreground, 1.0))
            axis.setTextPen(styles.pen(theme.foreground, 1.0))
            axis.setTickFont(tick_font)
            axis.setStyle(tickTextOffset=6, tickLength=-6)
        self._plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        self.legend.set_style(theme)
        styles.restyle_texts()

    def _set_limits(self, scene: Scene) -> None:
        lo, hi = to_view(np.asarray(scene.extent))
        ylo, yhi = to_view(np.asarray(scene.y_range))
        self._vb.setLimits(xMin=float(lo), xMax=float(hi), yMin=float(ylo) - 6,
                           yMax=float(yhi) + 6, minXRange=0.05, minYRange=0.05,
                           maxXRange=float(hi - lo), maxYRange=float(yhi - ylo) + 12)

    def rebuild(self, fit: bool = False, honour_view_range: bool = True) -> None:
        """Rebuild the scene and sync every item to it (reusing items)."""
        # (a plot resized meanwhile, as by a title of another length, places no text among
        # items half synced: the texts are placed at the end)
        self._rebuilding = True
        try:
            self._rebuild(fit, honour_view_range)
        finally:
            self._rebuilding = False

    #: within :meth:`rebuild`
    _rebuilding = False

    def _rebuild(self, fit: bool, honour_view_range: bool) -> None:
        session = self.workspace.document.session
        scene = self._new_scene(session)
        self._scene = scene
        theme = get_theme(session.view.theme)
        if theme != self.styles.theme_set:
            self._apply_theme(theme)
        self.titles.apply()
        self.key.clear()  # each point carries its own name again
        self.roofs.sync_regions(scene)
        self.roofs.sync_roofs(scene)
        self.roofs.sync_ridges(scene)
        self.points.sync(scene)
        self.hover.forget()
        self.labels.sync_points(scene)
        self.overlays.sync(scene)
        self.points.sync_ring()  # a rebuild restyles the ring as well
        self.sync_legend(scene)
        self.legend.set_visible(session.view.legend and bool(scene.legend))
        self._set_limits(scene)
        if fit:
            # a new chart: the legend starts inside the plot, the fit sees the whole plot
            self.legend.set_outside(None)
            x_range, y_range = scene.x_range, scene.y_range
            padding = FIT_PADDING  # a little room so the edge decades get their tick labels
            if honour_view_range and session.view.x_range:
                x_range, padding = session.view.x_range, 0.0
            if honour_view_range and session.view.y_range:
                y_range, padding = session.view.y_range, 0.0
            self.set_view_range(x_range, y_range, padding)
            # (a view the session saved is shown as it was)
            self._headroom_pending = not (honour_view_range and session.view.y_range)
            # a figure fits the chart as the command line does, where this fit is the same
            # (no saved view set aside)
            self._fitted_view = (self._vb.viewRange() if honour_view_range
                                 or not (session.view.x_range or session.view.y_range)
                                 else None)
        if self.isVisible():
            self.layout_annotations()
        else:
            self.labels.hold_until_shown()
        self.session_view.count_outside()
        self.session_view.show_not_drawn(scene.notes)

    def _new_scene(self, session) -> Scene:
        """The scene of ``session``, its pairs evaluated (what :meth:`rebuild` draws)."""
        return build_scene(session, self._pairs(), self.figure_kernels)

    def _update_operation(self, op_id: int) -> bool:
        """Move one operation's points and label after a parameter edit. Returns False when
        a full rebuild is needed (roofs in use or the set of points changed)."""
        return self._update_operations((op_id,))

    def _update_operations(self, op_ids: Sequence[int], place: bool = True) -> bool:
        """Move these operations' points and labels after a parameter edit, as one batch:
        every new position is computed first, then each machine's scatter item is set once
        and the texts the moved markers touch are placed again once (not with ``place``
        False: a full placing follows). Returns False when a full rebuild is needed (roofs
        in use or the set of points changed)."""
        scene = self._scene
        if scene is None:
            return False
        moved = self.points.move(op_ids, scene)
        if moved is None:
            return False
        if not moved:
            return True
        keys, rows, xy, updated = moved
        if place and not self.labels.pending and (
                not self.key.tags.keys().isdisjoint(updated)
                or self.workspace.document.stepping):
            # Tags are shared by the tagged markers that touch (a crowd's "A, B: 2, 5, 8")
            # and placed around the whole crowd: which touch changes as tagged points move,
            # so the texts are placed as after a zoom, now (re-placing only the texts the
            # moved markers meet left a crowd's text by markers that had left it, and a
            # marker that left its crowd with no name). So too after an undo or redo: a
            # text the edit had moved off a place the undo frees (a roof's value beside
            # the point that went back) returns to it, as on the chart before the edit
            self.labels.stop()
            self.layout_annotations()
        elif place:
            self.labels.relayout_moved(keys, rows, xy)
        if self.workspace.selection.current in updated:
            self.points.sync_ring()
        self.hover.refresh(updated)
        self.session_view.count_outside()
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
        if op_id in self.key.tags:  # named by the key: its row says the new name
            self.rebuild()
            return
        name = entry.operation.name
        label = self.labels.point_labels.get(op_id)
        if label is not None:
            label.setText(name)
            self.labels.relayout_keys([("point", op_id)])
        scene = self._scene
        legend = tuple(replace(e, text=name) if e.kind == "operation" and e.id == op_id else e
                       for e in scene.legend)
        if legend != scene.legend:
            self._scene = replace(scene, legend=legend)
            self.sync_legend(self._scene)

    #: the view's scale the lines' boxes were last made for
    _lines_scale: tuple | None = None

    def _lines_follow_view(self, *_args) -> None:
        ax, _bx, ay, _by = self.view_to_scene()
        if (ax, ay) == self._lines_scale:  # (moved, not scaled: their boxes hold)
            return
        self._lines_scale = (ax, ay)
        for line in (*self.roofs.lines(), *self.labels.leader_lines_all):
            line.follow_view()

    def _on_range_changed(self, *_args) -> None:
        self.labels.schedule()
        self.session_view.count_outside()

    def _on_resized(self, *_args) -> None:
        # the plot's frame moved: in a window resized, the texts are placed again when the
        # resizing pauses; in a chart of the same size (an axis grown to its tick labels,
        # the legend moved beside the plot) at once, or texts kept where they were among
        # the data would run over its edge
        size = (self.width(), self.height())
        resized, self._size_placed = size != self._size_placed, size
        if (resized or self.labels.busy or not self.isVisible() or self.labels.pending
                or self.labels.text_layout is None or self._rebuilding):
            self._on_range_changed()
            return
        self.relayout()
        self.session_view.count_outside()


def _release(state: dict) -> None:
    """Run when the canvas's widget is destroyed: drop the Python references to its chart
    items. Otherwise a canvas wrapper that outlives its widget (held by a failed test's
    traceback, say) keeps wrappers of deleted items alive, and PySide crashes later in an
    unrelated paint."""
    for part in state.get("_parts", ()):
        vars(part).clear()
    state.clear()
