"""The live roofline chart: a thin pyqtgraph view of :mod:`workbench.model.scene`.

Log-log the robust way: every item lives in **log10 coordinates** (:func:`to_view` is the
only place a logarithm is taken, :func:`to_data` the only inverse) and only the two
:class:`LogAxis` items are in log mode, for their tick labels. ``PlotItem.setLogMode`` is never
called (it would transform curves but not scatter or text items).

Updates are incremental: an edit of one operation's parameters moves that operation's spots
in place (one :class:`~pyqtgraph.ScatterPlotItem` per machine holds every point of that
machine) and its label; roofs are rebuilt only when machines, the view or the set of
precisions / memory levels in use change. Items are pooled and reused, never created and
destroyed per edit.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pyqtgraph as pg
import shiboken6
from pyqtgraph.graphicsItems.ScatterPlotItem import drawSymbol
from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QMenu,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.model.analysis import Pair
from workbench.model.hardware import roof_name
from workbench.model.overlays import (
    VERDICT_COLORS,
    CrossingMark,
    MeasuredMark,
    PairLink,
    SweepPath,
    measured_marks,
    pair_links,
    sweep_paths,
)
from workbench.model.scene import (
    PointMark,
    Region,
    Ridge,
    Roof,
    Scene,
    build_scene,
    machine_entries,
    measured_legend,
    operation_points,
)
from workbench.model.units import format_quantity
from workbench.ui.theme import (
    Theme,
    get_theme,
    make_brush,
    make_font,
    make_pen,
    qcolor,
)
from workbench.ui.widgets import escape_html

__all__ = ["RooflineCanvas", "LogAxis", "to_view", "to_data"]

#: Operation fields that only restyle or re-show points; they take the full path.
_STYLE_FIELDS = {"visible", "color", "label", "memory_level"}
#: Hover and click pick the nearest point within this many pixels.
PICK_RADIUS = 10.0
#: Fit-to-data leaves this fraction of each span around the decade-rounded data range.
FIT_PADDING = 0.015
_LABEL_FILL_ALPHA = 0.72
#: Colours of the verdict scale drawn at a measured point's prediction.
_VERDICT_BAND_COLORS = VERDICT_COLORS


def to_view(value):
    """Data units → view (log10) coordinates. The one place the canvas takes a logarithm."""
    if isinstance(value, (float, int)):  # one number: no numpy call (thousands per rebuild)
        if value > 0:
            return math.log10(value)
        return -math.inf if value == 0 else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(value)


def to_data(value):
    """View (log10) coordinates → data units."""
    return np.power(10.0, value)


_ANTIALIASING = QPainter.RenderHint.Antialiasing
_NO_PEN = Qt.PenStyle.NoPen
_CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache
_NO_CACHE = QGraphicsItem.CacheMode.NoCache

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class LogAxis(pg.AxisItem):
    """An axis in log mode whose tick labels read as engineering values:
    ``0.1, 1, 10, 100, 1000, 10⁴`` FLOP/byte or ``1 TFLOP/s, 100 TFLOP/s`` (SI prefixes).

    Whole decades are labelled; the 2…9 minor ticks only when less than ~1.3 decades show.
    """

    def __init__(self, orientation: str, quantity: str, **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        # the tick labels carry their own prefixes: pyqtgraph's automatic SI prefix would
        # only re-parse the axis title's HTML on every range change
        self.autoSIPrefix = False
        self.quantity = quantity  # "intensity" or "rate"
        # The axis draws the decade grid across the whole plot: caching it as a pixmap
        # halves the cost of a frame. Exports switch the cache off (vector output).
        self.setCacheMode(_CACHE)

    def setExportMode(self, export, opts=None):  # noqa: N802 (pyqtgraph API)
        super().setExportMode(export, opts)
        self.setCacheMode(_NO_CACHE if export else _CACHE)

    _label_html: str | None = None

    def _updateLabel(self) -> None:  # noqa: N802 (pyqtgraph API)
        """As pyqtgraph's, without parsing the title's HTML again when it is unchanged (every
        pen, colour and font the theme sets would)."""
        html = self.labelString()
        if html != self._label_html:
            self._label_html = html
            self.label.setHtml(html)
        self._adjustSize()
        self.picture = None
        self.update()

    _kept_rect: tuple | None = None  # (what it depends on, the rectangle)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        """As pyqtgraph's (the axis, and with the grid on the view it draws the grid over),
        kept until either's geometry or the axis style changes: Qt asks for it several times
        on every repaint, and pyqtgraph maps both rectangles anew each time."""
        view = self.linkedView()
        if view is not None and view.parentItem() is not self.parentItem():
            return super().boundingRect()  # the geometries alone would not place the view
        key = (self.geometry(), None if view is None else view.geometry(), self.grid,
               self.style["tickLength"], self.style["hideOverlappingLabels"])
        kept = self._kept_rect
        if kept is None or kept[0] != key:
            kept = self._kept_rect = (key, super().boundingRect())
        return QRectF(kept[1])

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph API)
        span = abs(self.range[1] - self.range[0]) if self.range else 10.0
        out = []
        for v in values:
            whole = abs(v - round(v)) < 1e-6
            if not whole and span > 1.3:
                out.append("")
                continue
            out.append(self.format_value(float(to_data(v))))
        return out

    def format_value(self, value: float) -> str:
        if self.quantity == "rate":
            return format_quantity(value, "flop_rate")
        if 1e-3 <= value < 1e4:
            text = f"{value:.3g}"
            return text if "e" not in text else f"{value:.0f}"
        exponent = round(math.log10(value))
        if abs(value / 10.0**exponent - 1) < 1e-6:
            return "10" + str(exponent).translate(_SUPERSCRIPT)
        return f"{value:.2g}"


class _Label(pg.TextItem):
    """A TextItem with an extra offset in pixels (its local units) from its anchor point,
    whose text is cached as a pixmap on screen (not in exports).

    Its own ``paint`` only fills the background rectangle: the transform check pyqtgraph does
    in every label's ``paint`` is done once per paint for all labels by the canvas
    (:meth:`RooflineCanvas._update_label_transforms`), which keeps a repaint with hundreds of
    labels cheap."""

    _offset = QPointF(0.0, 0.0)
    _fill = QBrush()

    @property
    def fill(self) -> QBrush:
        """The background brush; without one the label itself paints nothing (Qt then skips
        it on a repaint and paints only its text)."""
        return self._fill

    @fill.setter
    def fill(self, brush: QBrush) -> None:
        self._fill = brush
        # the label paints nothing itself: its background is a rectangle item behind the text,
        # drawn by Qt without a call into Python on every repaint
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        back = self._back
        if brush.style() == Qt.BrushStyle.NoBrush:
            if back is not None:
                back.setVisible(False)
            return
        if back is None:
            back = self._back = QGraphicsRectItem(self)
            back.setPen(QPen(Qt.PenStyle.NoPen))
            back.setZValue(-1)  # behind the text item
        back.setBrush(brush)
        back.setRect(self.boundingRect())
        back.setVisible(True)

    _back: QGraphicsRectItem | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.textItem.setCacheMode(_CACHE)
        # labels never count in the view's auto-range (added with ignoreBounds): a move need
        # not tell the view its bounds changed
        self._GraphicsObject__inform_view_on_changes = False

    def changeParent(self) -> None:  # noqa: N802 (pyqtgraph API)
        """No connection to the view's range signals per label (pyqtgraph makes one for each
        item, and calls every label on every zoom step): the canvas re-derives the transform
        of all labels once per paint when the view's has changed
        (:meth:`RooflineCanvas._update_label_transforms`); a new label takes its own here."""
        self.forgetViewBox()
        self.forgetViewWidget()
        if self.parentItem() is not None:
            self.updateTransform(force=True)

    _rect: QRectF | None = None

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        # asked for every label on every repaint: kept until the text or its place changes
        # (every such change goes through updateTextPos)
        if self._rect is None:
            self._rect = self.textItem.mapRectToParent(self.textItem.boundingRect())
        return self._rect

    def paint(self, p, *args):
        pass  # the background is the _back item, the text the text item

    def setExportMode(self, export, opts=None):  # noqa: N802 (pyqtgraph API)
        super().setExportMode(export, opts)
        self.textItem.setCacheMode(_NO_CACHE if export else _CACHE)

    def set_offset(self, dx: float, dy: float, anchor: tuple[float, float] | None = None) -> None:
        """Move the text ``(dx, dy)`` pixels from its anchor point, and optionally anchor it
        elsewhere (one re-positioning for both)."""
        self._offset = QPointF(dx, dy)
        if anchor is not None:
            self.anchor = pg.Point(anchor)
        self.updateTextPos()

    def updateTextPos(self) -> None:  # noqa: N802 (pyqtgraph API)
        r = self.textItem.boundingRect()
        tl = self.textItem.mapToParent(r.topLeft())
        br = self.textItem.mapToParent(r.bottomRight())
        offset = (br - tl) * self.anchor
        self.prepareGeometryChange()
        self._rect = None
        self.textItem.setPos(-offset + self._offset)
        if self._back is not None:
            self._back.setRect(self.boundingRect())

    def size(self) -> tuple[float, float]:
        r = self.textItem.boundingRect()
        return r.width(), r.height()


#: While a point moves (an edit, a drag), its label stays at its place unless another place
#: scores better by more than this (pixels² of overlap): labels do not flicker between two
#: near-equal places.
_KEEP_PLACE_SLACK = 40.0

#: Anchors of the twelve point-label candidates, in preference order: right above, right
#: below, left above, left below, centred above, centred below; then the same farther out.
_CANDIDATE_ANCHORS = ((0, 1), (0, 0), (1, 1), (1, 0), (0.5, 1), (0.5, 0)) * 2


@functools.lru_cache(maxsize=8)
def _candidate_offsets(point_size: float) -> tuple[tuple[float, float], ...]:
    """Pixel offsets from the point of the twelve candidates (see _CANDIDATE_ANCHORS)."""
    out: list[tuple[float, float]] = []
    for g in (point_size / 2 + 1, point_size * 1.6):
        out += [(g, -g * 0.4), (g, g * 0.4), (-g, -g * 0.4), (-g, g * 0.4), (0, -g - 2),
                (0, g + 2)]
    return tuple(out)


@functools.lru_cache(maxsize=8)
def _candidate_arrays(point_size: float) -> tuple[np.ndarray, np.ndarray]:
    """``(anchors, offsets)`` of the twelve candidates, each row repeated as (x, y, x, y) for
    the rectangle arithmetic (shared: read only)."""
    anchors = np.array(_CANDIDATE_ANCHORS, dtype=float)
    offsets = np.array(_candidate_offsets(point_size), dtype=float)
    return np.hstack((anchors, anchors)), np.hstack((offsets, offsets))


class _PlacedRects:
    """Rectangles ``(left, top, right, bottom)`` of the point labels placed, by operation,
    also kept as one array: placing a label compares it with all the others at once, and an
    edit moves one of them."""

    _EMPTY = (math.inf, math.inf, -math.inf, -math.inf)  # overlaps nothing

    def __init__(self) -> None:
        self._rows: dict[int, int] = {}
        self._array = np.empty((16, 4))

    def __setitem__(self, key: int, rect: tuple[float, float, float, float]) -> None:
        row = self._rows.get(key)
        if row is None:
            row = self._rows[key] = len(self._rows)
            if row == len(self._array):
                self._array = np.vstack((self._array, np.empty_like(self._array)))
        self._array[row] = rect

    def __len__(self) -> int:
        return len(self._rows)

    def values(self) -> list[tuple[float, float, float, float]]:
        return [tuple(float(v) for v in self._array[row]) for row in self._rows.values()]

    def array_without(self, key: int) -> np.ndarray:
        """Every rectangle but ``key``'s, as an array (a copy)."""
        out = self._array[: len(self._rows)].copy()
        row = self._rows.get(key)
        if row is not None:
            out[row] = self._EMPTY
        return out


class _Pool:
    """Reusable items of one kind: ``take()`` returns a shown item, ``finish()`` hides the
    ones not taken since ``reset()``. Items are created only when the pool runs dry."""

    def __init__(self, factory, add) -> None:
        self._factory = factory
        self._add = add
        self.items: list = []
        self.used = 0

    def reset(self) -> None:
        self.used = 0

    def take(self):
        if self.used == len(self.items):
            item = self._factory()
            self._add(item)
            self.items.append(item)
        item = self.items[self.used]
        self.used += 1
        item.setVisible(True)
        return item

    def finish(self) -> None:
        for item in self.items[self.used:]:
            if item.isVisible():
                item.setVisible(False)

    @property
    def shown(self) -> list:
        return self.items[: self.used]


class _Curve(pg.PlotCurveItem):
    """A curve (roof, region edge, sweep path, link) whose on-screen repaint skips
    pyqtgraph's general paint (fill, shadow pen, OpenGL and export checks in Python on every
    call): a plain stroked line is drawn straight from the cached path."""

    def paint(self, p, opt, widget) -> None:
        opts = self.opts
        if (self._exportOpts is not False or opts["fillLevel"] is not None
                or opts["shadowPen"] is not None or opts["compositionMode"] is not None
                or type(widget) is not QWidget):
            super().paint(p, opt, widget)
            return
        pen, antialias = opts["pen"], opts["antialias"]
        plan, mode = self._plan, opts["segmentedLineMode"]
        if plan[0] is not pen or plan[1] != antialias or plan[2] != mode:
            plan = self._plan = (pen, antialias, mode, pen.style() == _NO_PEN,
                                 self._shouldUseDrawLineSegments(pen))
        x = self.xData
        if x is None or len(x) == 0 or plan[3]:
            return
        p.setRenderHint(_ANTIALIASING, antialias)
        p.setPen(pen)
        if plan[4]:
            p.drawLines(*self._getLineSegments())
        else:
            p.drawPath(self.getPath())

    #: (pen, antialias, segmented line mode, the pen draws nothing, drawn as separate
    #: segments), kept while the pen and the options are the same (asking a pen and
    #: pyqtgraph on every paint cost more than drawing a short path)
    _plan: tuple = (None, None, None, False, False)


class _Legend(pg.GraphicsWidgetAnchor, pg.GraphicsWidget):
    """The chart's legend: one item that draws its framed rows, a sample and a text each.

    pyqtgraph's legend is a layout of a sample item and a rich-text label per row; building
    and sizing those was a fifth of the cost of drawing a session. The legend stays at its
    offset from the plot's top-left corner when the plot is resized, and can be dragged
    elsewhere, as pyqtgraph's."""

    MARGIN = 9.0  # frame to rows
    SAMPLE = 20.0  # width (and least height) of a row's sample
    GAP = 9.0  # sample to text
    ROW = 19.0  # least row height; rows are as high as the font's line when that is more

    def __init__(self, offset: tuple[float, float]) -> None:
        pg.GraphicsWidget.__init__(self)
        pg.GraphicsWidgetAnchor.__init__(self)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        self._offset = offset
        self.rows: list[tuple[str, tuple | None]] = []
        self._pen = QPen(Qt.PenStyle.NoPen)
        self._brush = QBrush()
        self._text_pen = QPen(QColor("black"))
        self._font = QFont()
        self._row_height = self.ROW
        self._text_width = 0.0

    def setParentItem(self, parent) -> None:  # noqa: N802 (Qt API)
        super().setParentItem(parent)
        self.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=self._offset)

    def set_style(self, brush: QBrush, pen: QPen, text_color: QColor, font: QFont) -> None:
        self._brush, self._pen, self._text_pen, self._font = brush, pen, QPen(text_color), font
        self._resize()

    def set_rows(self, rows: list[tuple[str, tuple | None]]) -> None:
        """``(text, sample)`` per row; a sample is ``(line_pen, symbol, size, pen, brush)``
        (``line_pen`` or ``symbol`` may be ``None``), or ``None`` for a text-only row."""
        self.rows = rows
        self._resize()

    def _resize(self) -> None:
        metrics = QFontMetricsF(self._font)
        self._row_height = max(self.ROW, math.ceil(metrics.height()) + 4)
        self._text_width = max((metrics.horizontalAdvance(text) for text, _ in self.rows),
                               default=0.0)
        width = 2 * self.MARGIN + self.SAMPLE + self.GAP + math.ceil(self._text_width) + 2
        height = 2 * self.MARGIN + self._row_height * len(self.rows)
        self.setGeometry(0, 0, width, height)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return QRectF(0, 0, self.width(), self.height())

    def paint(self, p, *args) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(self._pen)
        p.setBrush(self._brush)
        p.drawRect(self.boundingRect())
        p.setFont(self._font)
        h = self._row_height
        x_text = self.MARGIN + self.SAMPLE + self.GAP
        for i, (text, sample) in enumerate(self.rows):
            top = self.MARGIN + i * h
            if sample is not None:
                line_pen, symbol, size, pen, brush = sample
                middle = top + h / 2
                if line_pen is not None:
                    p.setPen(line_pen)
                    p.drawLine(QPointF(self.MARGIN, middle),
                               QPointF(self.MARGIN + self.SAMPLE, middle))
                if symbol is not None:
                    p.save()
                    p.translate(self.MARGIN + self.SAMPLE / 2, middle)
                    drawSymbol(p, symbol, size, pen, brush)
                    p.restore()
            p.setPen(self._text_pen)
            p.drawText(QRectF(x_text, top, self._text_width + 2, h),
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text)

    def hoverEvent(self, ev) -> None:  # noqa: N802 (pyqtgraph API)
        ev.acceptDrags(Qt.MouseButton.LeftButton)

    def mouseDragEvent(self, ev) -> None:  # noqa: N802 (pyqtgraph API)
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.autoAnchor(self.pos() + ev.pos() - ev.lastPos())


class _Spots(pg.ScatterPlotItem):
    """A pixel-mode scatter item whose bounding rectangle is kept until its data or the
    view's transform changes (pyqtgraph recomputes it, with the pixel padding, on each of the
    several calls a repaint makes). With ``span_view`` it covers the visible view as well as
    the spots: a spot moved anywhere within it repaints only its old and new neighbourhoods
    (:meth:`RooflineCanvas._move_spots`)."""

    _rect: QRectF | None = None

    def __init__(self, *args, span_view: bool = False, **kwargs) -> None:
        kwargs.setdefault("pxMode", True)
        kwargs.setdefault("antialias", True)
        super().__init__(*args, **kwargs)
        #: the bounding rectangle covers the view: for items whose spots an edit moves in
        #: place (the others' rectangle is their spots', so repaints elsewhere skip them)
        self.span_view = span_view
        # Qt then tells paint() which part of the item is being repainted
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)

    def prepareGeometryChange(self) -> None:  # noqa: N802 (Qt API)
        self._rect = None
        super().prepareGeometryChange()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        if len(self.data) == 0:
            return QRectF()  # nothing to paint: not part of any repaint
        if self._rect is None or self.bounds == [None, None]:
            rect = super().boundingRect()
            view = self.viewRect() if self.span_view else None
            if view is not None and view.isValid():
                rect = rect.united(view)
            self._rect = rect
        return self._rect

    def setExportMode(self, *args, **kwargs):  # noqa: N802 (pyqtgraph API)
        self._rect = None
        return super().setExportMode(*args, **kwargs)

    _screen: tuple | None = None

    def _screen_spots(self, t, data, dpr: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(bounds, table, finite)`` of every spot under the painter transform ``t``, kept
        until the transform or the spots change (a repaint calls :meth:`paint` once per
        exposed area; an edit moves a few spots of one item and leaves the others as they
        were). ``bounds`` holds each spot's device edges as rows ``right, -left, bottom,
        -top`` (nan for a spot off any finite place: it compares False), ``table`` its
        pixmap fragment (device x, y, atlas rectangle, scale, angle, opacity), ``finite``
        the indices of the spots with a place."""
        source = data["sourceRect"]
        key = (t.m11(), t.m12(), t.m21(), t.m22(), t.dx(), t.dy(), dpr,
               data["x"].tobytes(), data["y"].tobytes(), source.tobytes())
        cached = self._screen
        if cached is not None and cached[0] == key:
            return cached[1]
        x, y = data["x"], data["y"]
        n = len(x)
        table = np.empty((n, 10))
        sx, sy = table[:, 0], table[:, 1]
        np.add(t.m11() * x + t.m21() * y, t.dx(), out=sx)
        np.add(t.m12() * x + t.m22() * y, t.dy(), out=sy)
        bad = ~(np.isfinite(sx) & np.isfinite(sy))
        sx[bad] = np.nan
        sy[bad] = np.nan
        np.clip(sx, -2 ** 30, 2 ** 30, out=sx)
        np.clip(sy, -2 ** 30, 2 ** 30, out=sy)
        table[:, 2:6] = np.frombuffer(source.copy(), dtype=int).reshape((-1, 4))
        table[:, 6:10] = (1 / dpr, 1 / dpr, 0.0, 1.0)
        half_w, half_h = table[:, 4] / (2 * dpr), table[:, 5] / (2 * dpr)
        bounds = np.stack((sx + half_w, half_w - sx, sy + half_h, half_h - sy))
        value = (bounds, table, np.flatnonzero(~bad))
        self._screen = (key, value)
        return value

    def move_spot(self, i: int, x: float, y: float) -> None:
        """Put spot ``i`` at view coordinates ``(x, y)``, keeping the device positions of the
        others (the caller schedules the repaint)."""
        data = self.data
        data["x"][i] = x
        data["y"][i] = y
        cached = self._screen
        if cached is None:
            return
        key, (bounds, table, finite) = cached
        m11, m12, m21, m22, dx, dy = key[:6]
        px, py = m11 * x + m21 * y + dx, m12 * x + m22 * y + dy
        if math.isfinite(px) and math.isfinite(py):
            px, py = min(max(px, -2 ** 30), 2 ** 30), min(max(py, -2 ** 30), 2 ** 30)
            if i not in finite:
                finite = np.union1d(finite, [i])
        else:
            px = py = math.nan
            finite = finite[finite != i]
        dpr = key[6]
        half_w, half_h = table[i, 4] / (2 * dpr), table[i, 5] / (2 * dpr)
        table[i, 0], table[i, 1] = px, py
        bounds[:, i] = (px + half_w, half_w - px, py + half_h, half_h - py)
        self._screen = (key[:7] + (data["x"].tobytes(), data["y"].tobytes(), key[9]),
                        (bounds, table, finite))

    def paint(self, p, option, widget) -> None:
        """On screen, draw only the spots that touch the area being repainted (pyqtgraph's
        own paint maps and draws every spot in the view on each repaint, however small)."""
        data = self.data
        if len(data) == 0:
            return
        atlas = self.fragmentAtlas
        t = p.transform()
        dpr = atlas.devicePixelRatio()
        if (self._exportOpts is not False or not self.opts["pxMode"] or not self.opts["useCache"]
                or self.opts.get("compositionMode") is not None or widget is None
                or widget.devicePixelRatioF() != dpr or not t.isAffine()):
            super().paint(p, option, widget)
            return
        bounds, table, finite = self._screen_spots(t, data, dpr)
        # the area being repainted (Qt's exposed rectangle: after an edit, the bounding box
        # of what moved), within the painter's clip, in device pixels
        area = t.mapRect(option.exposedRect) if option is not None else QRectF()
        if p.hasClipping():
            clip = t.mapRect(p.clipBoundingRect())
            area = area.intersected(clip) if area.isValid() else clip
        if area.isValid():
            # a spot touches the area when right >= area.left, left <= area.right, ...
            limits = np.array((area.left(), -area.right(), area.top(), -area.bottom()))
            chosen = np.flatnonzero((bounds >= limits[:, None]).all(axis=0))
        else:
            chosen = finite
        if not len(chosen):
            return
        n = len(chosen)
        buffer, fragments = self._fragment_buffer(n)
        buffer[:n] = table[chosen]
        p.resetTransform()
        p.drawPixmapFragments(fragments, n, atlas.pixmap)

    _buffer: tuple[np.ndarray, Any] | None = None

    def _fragment_buffer(self, n: int) -> tuple[np.ndarray, Any]:
        """Room for ``n`` pixmap fragments: a float array of (n, 10) rows and the Qt view of
        its memory that ``drawPixmapFragments`` reads, both kept (finding an array's address
        costs more than drawing a few spots)."""
        kept = self._buffer
        if kept is None or len(kept[0]) < n:
            array = np.empty((max(n, 2 * len(kept[0]) if kept else 16), 10))
            kept = self._buffer = (
                array, shiboken6.wrapInstance(array.ctypes.data, QPainter.PixmapFragment))
        return kept


class RooflineCanvas(QWidget):
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
        plot.setContentsMargins(6, 6, 28, 6)  # room for the last x tick label
        vb.disableAutoRange()
        self._x_axis.setLogMode(True)
        self._y_axis.setLogMode(True)

        def add(item):
            vb.addItem(item, ignoreBounds=True)

        self._region_pool = _Pool(lambda: self._z(_Curve(antialias=True), -20), add)
        self._roof_pool = _Pool(lambda: self._z(_Curve(antialias=True), -1), add)
        self._text_pools = {
            kind: _Pool(lambda z=z: self._z(_Label(), z), add)
            for kind, z in (("region", -15), ("roof", 3), ("ridge", 4), ("point", 20),
                            ("pair", 17), ("sweep", 19), ("crossing", 21), ("measured", 22))
        }
        self._scatter_pool = _Pool(
            lambda: self._z(_Spots(span_view=True), 10), add)
        self._ridge_lines = self._z(_Curve(connect="pairs", antialias=True), -5)
        self._ridge_marks = self._z(_Spots(), 2)
        self._ring = self._z(_Spots(span_view=True), 11)
        self._ring_keys: list[tuple[int, int]] = []
        self._ring_style: tuple = ()
        for item in (self._ridge_lines, self._ridge_marks, self._ring):
            add(item)
        # sweep paths, measured points and compared pairs (workbench.model.overlays)
        self._sweep_pool = _Pool(lambda: self._z(_Curve(antialias=True), 6), add)
        self._link_pool = _Pool(lambda: self._z(_Curve(antialias=True), 8), add)
        self._band_pool = _Pool(
            lambda: self._z(_Curve(connect="pairs", antialias=False), 5), add)
        self._arrow_pool = _Pool(lambda: self._z(pg.ArrowItem(headLen=11, tipAngle=32), 9), add)
        self._sweep_dots = self._z(_Spots(), 7)
        self._predicted_marks = self._z(_Spots(), 9)
        self._crossing_marks = self._z(_Spots(), 13)
        self._measured_marks = self._z(_Spots(), 15)
        for item in (self._sweep_dots, self._predicted_marks, self._crossing_marks,
                     self._measured_marks):
            add(item)
        self._legend = _Legend(offset=(12, 12))
        self._legend.setParentItem(vb)
        self._legend_key: tuple = ()

        # drawn state
        self._roofs: list[tuple[Roof, pg.PlotCurveItem]] = []
        self._roof_labels: list[tuple[Roof, _Label]] = []
        self._ridge_items: list[tuple[Ridge, _Label]] = []
        self._region_items: list[tuple[Region, pg.PlotCurveItem, _Label]] = []
        self._points: dict[tuple[int, int], PointMark] = {}
        self._op_points: dict[int, list[tuple[int, int]]] = {}
        self._scatter_for: dict[int, pg.ScatterPlotItem] = {}
        self._spot_index: dict[tuple[int, int], int] = {}
        self._labels: dict[int, _Label] = {}
        self._label_rects = _PlacedRects()
        self._label_choice: dict[int, int] = {}  # op id -> the candidate its label is at
        self._fixed_rects: list[tuple[float, float, float, float]] = []
        self._fixed_array: tuple[list | None, np.ndarray] = (None, np.zeros((0, 4)))
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
        self._sweep_labels: list[tuple[SweepPath, int, _Label]] = []
        self._crossing_labels: list[tuple[CrossingMark, _Label]] = []
        self._measured_drawn: list[tuple[MeasuredMark, pg.PlotCurveItem, _Label]] = []
        self._pair_drawn: list[tuple[PairLink, pg.PlotCurveItem, pg.ArrowItem, _Label]] = []
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
            if isinstance(item, _Label) and item.isVisible():
                item.updateTransform()

    @staticmethod
    def _z(item, z: float):
        item.setZValue(z)
        return item

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
                  if item.cacheMode() != _NO_CACHE]
        ring_shown = self._ring.isVisible()
        self._ring.setVisible(False)
        for item in items:
            item.setExportMode(True, {})
        for item, _mode in cached:
            item.setCacheMode(_NO_CACHE)
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
        for hw_id, scatter in self._scatter_for.items():
            data = scatter.data
            xs, ys = to_data(data["x"]), to_data(data["y"])
            for op_id, x, y in zip(data["data"], xs, ys, strict=True):
                out.append((int(op_id), hw_id, float(x), float(y)))
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
        """``(op_id, text, x, y)`` of every point label shown, anchored at data ``(x, y)``."""
        self._flush_layout()
        out = []
        for op_id, item in self._labels.items():
            if item.isVisible():
                pos = item.pos()
                out.append((op_id, item.toPlainText(), float(to_data(pos.x())),
                            float(to_data(pos.y()))))
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
        if what == "state":
            return
        if what == "title":
            self._apply_title()
            return
        if what == "operation" and change.ids:
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
            for op_id in change.ids:
                if not self._update_operation(op_id):
                    self.rebuild()
                    return
            self._refresh_overlays_for(change.ids)
            return
        if what == "measurements":
            self._refresh_measured()
            self._redraw_overlays()
            return
        if what == "comparisons":
            self._refresh_links()
            self._redraw_overlays()
            return
        if what == "session":
            self.rebuild(fit=True)
            return
        if what == "view" and set(change.fields) & {"x_range", "y_range"}:
            self.rebuild(fit=True)
            return
        self.rebuild()

    def _on_selection(self, _op_id) -> None:
        self._sync_ring()

    def _pairs(self) -> list[Pair]:
        """Every (visible operation, visible machine) pair; operations whose parameters
        cannot be counted are left out."""
        session = self.workspace.document.session
        results = self.workspace.results
        machines = machine_entries(session)
        pairs = []
        for op in session.operations:
            if not op.visible:
                continue
            for hw in machines:
                try:
                    pairs.append(results.pair(op.id, hw.id))
                except (KeyError, ValueError, TypeError, ZeroDivisionError, ArithmeticError):
                    break
        return pairs

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

    def _flush_layout(self) -> None:
        """Place the labels now if a rebuild while hidden left them to the next paint."""
        if self._layout_pending:
            self._layout_annotations()

    def _update_operation(self, op_id: int) -> bool:
        """Move one operation's points and label after a parameter edit. Returns False when
        a full rebuild is needed (roofs in use or the set of points changed)."""
        scene = self._scene
        if scene is None:
            return False
        document = self.workspace.document
        try:
            entry = document.operation(op_id)
        except KeyError:
            return False
        if not entry.visible:
            return True
        old_keys = self._op_points.get(op_id, [])
        try:
            pairs = [self.workspace.results.pair(op_id, m.hw_id) for m in scene.machines]
        except (KeyError, ValueError, TypeError, ZeroDivisionError, ArithmeticError):
            return not old_keys  # invalid now: drop its points (rebuild) unless none drawn
        usage = frozenset((p.hardware.id, roof_name(p.result.precision_used, p.result.unit),
                           p.result.level) for p in pairs if p.result is not None)
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
        markers = {m.hw_id: m.marker for m in scene.machines}
        points = operation_points(entry, pairs, color, markers,
                                  labels_allowed=scene.labels_allowed,
                                  show_labels=document.session.view.labels)
        if [(p.op_id, p.hw_id) for p in points] != old_keys:
            return False
        moves: dict[pg.ScatterPlotItem, list[tuple[int, float, float]]] = {}
        for point in points:
            key = (op_id, point.hw_id)
            old = self._points[key]
            self._points[key] = point
            scatter = self._scatter_for[point.hw_id]
            i = self._spot_index[key]
            lx, ly = float(to_view(point.x)), float(to_view(point.y))
            if old.overhead != point.overhead:
                data = scatter.data
                data["brush"][i], data["pen"][i] = self._spot_style(point)
                data["sourceRect"][i] = 0
                scatter.updateSpots()
            moves.setdefault(scatter, []).append((i, lx, ly))
            self._hover_xy[self._hover_row[key]] = (lx, ly)
        for scatter, moved in moves.items():
            self._move_spots(scatter, moved, self.theme.point_size)
        label = self._labels.get(op_id)
        if label is not None:
            top = next((p for p in points if p.show_label), None)
            if top is None:
                label.setVisible(False)
            else:
                label.setPos(float(to_view(top.x)), float(to_view(top.y)))
                self._place_point_label(op_id, label, top)
        if self.workspace.selection.current == op_id:
            self._sync_ring()
        if self._hover_key is not None and self._hover_key[0] == op_id:
            self._hover_text = self._points[self._hover_key].tooltip
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
        name = entry.operation.name
        label = self._labels.get(op_id)
        if label is not None:
            label.setText(name)
            self._place_point_label(op_id, label, self._points[self._label_key(op_id)])
        scene = self._scene
        legend = tuple(replace(e, text=name) if e.kind == "operation" and e.id == op_id else e
                       for e in scene.legend)
        if legend != scene.legend:
            self._scene = replace(scene, legend=legend)
            self._sync_legend(self._scene)

    # ------------------------------------------------------------------------------------
    # syncing items to the scene

    def _brush(self, color: str) -> QBrush:
        brush = self._brushes.get(color)
        if brush is None:
            brush = self._brushes[color] = make_brush(color)
        return brush

    def _pen(self, color: str, width: float, line: str = "solid") -> QPen:
        key = (color, width, line)
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = make_pen(color, width, line)
        return pen

    def _spot_style(self, point: PointMark) -> tuple[QBrush, QPen]:
        theme = self.theme
        color = theme.point_color(point.color)
        if point.overhead:  # hollow: overhead-bound (see-through: a point beneath stays visible)
            return self._brush("#00000000"), self._pen(color, 2.2)
        return self._brush(color), self._pen(theme.point_outline, 0.9)

    def _apply_theme(self, theme: Theme) -> None:
        self._theme = theme
        self._brushes.clear()
        self._pens.clear()
        self.plot_widget.setBackground(qcolor(theme.background))
        tick_font = make_font(theme, theme.tick_size)
        for axis in (self._x_axis, self._y_axis):
            axis.setPen(self._pen(theme.foreground, 1.0))
            axis.setTextPen(self._pen(theme.foreground, 1.0))
            axis.setTickFont(tick_font)
            axis.setStyle(tickTextOffset=6, tickLength=-6)
        self._plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        self._legend.set_style(make_brush(theme.legend_background),
                               make_pen(theme.legend_border, 1.0), qcolor(theme.text),
                               make_font(theme, theme.legend_size))
        self._legend_key = ()
        fonts = {
            "point": make_font(theme, theme.label_size),
            "roof": make_font(theme, theme.annotation_size),
            "ridge": make_font(theme, theme.annotation_size, bold=True),
            "region": make_font(theme, theme.annotation_size + 1, bold=True),
            "sweep": make_font(theme, theme.annotation_size),
            "crossing": make_font(theme, theme.annotation_size, bold=True),
            "measured": make_font(theme, theme.annotation_size),
            "pair": make_font(theme, theme.annotation_size, bold=True),
        }
        fill = qcolor(theme.background, _LABEL_FILL_ALPHA)
        for kind, pool in self._text_pools.items():
            for item in pool.items:
                self._style_label(item, kind, fonts[kind], fill)
        self._fonts = fonts
        self._label_fill = fill

    def _style_label(self, item: _Label, kind: str, font, fill) -> None:
        theme = self.theme
        item.setFont(font)
        if kind == "point":
            item.setColor(qcolor(theme.text))
            item.fill = QBrush(fill)
        elif kind == "region":
            item.setColor(qcolor(theme.region_text))
        elif kind == "ridge":
            item.setColor(qcolor(theme.text))
            item.fill = QBrush(fill)
        else:  # roof labels take their roof's colour when placed
            item.fill = QBrush(fill)

    def _take_label(self, kind: str) -> _Label:
        pool = self._text_pools[kind]
        fresh = pool.used == len(pool.items)
        item = pool.take()
        if fresh:
            self._style_label(item, kind, self._fonts[kind], self._label_fill)
        return item

    def _apply_title(self) -> None:
        theme = self.theme
        title = self.workspace.document.session.title
        if title:
            self._plot.setTitle(title, color=theme.foreground, size=f"{theme.title_size}pt")
        else:
            self._plot.setTitle(None)
        scene = self._scene
        style = {"color": theme.foreground, "font-size": f"{theme.axis_title_size}pt"}
        if scene is not None:
            self._plot.setLabel("bottom", scene.x_title, **style)
            self._plot.setLabel("left", scene.y_title, **style)

    def _set_limits(self, scene: Scene) -> None:
        lo, hi = to_view(np.asarray(scene.extent))
        ylo, yhi = to_view(np.asarray(scene.y_range))
        self._vb.setLimits(xMin=float(lo), xMax=float(hi), yMin=float(ylo) - 6,
                           yMax=float(yhi) + 6, minXRange=0.05, minYRange=0.05,
                           maxXRange=float(hi - lo), maxYRange=float(yhi - ylo) + 12)

    def _sync_regions(self, scene: Scene) -> None:
        theme = self.theme
        pool = self._region_pool
        texts = self._text_pools["region"]
        pool.reset()
        texts.reset()
        self._region_items = []
        for region in scene.regions:
            curve = pool.take()
            color = theme.region_memory if region.kind == "memory" else theme.region_compute
            curve.setData(x=to_view(np.asarray(region.xs)), y=to_view(np.asarray(region.ys)),
                          pen=None, fillLevel=float(to_view(region.floor)),
                          brush=make_brush(color))
            label = self._take_label("region")
            label.setText(region.label)
            self._region_items.append((region, curve, label))
        pool.finish()
        texts.finish()

    def _sync_roofs(self, scene: Scene) -> None:
        theme = self.theme
        pool = self._roof_pool
        texts = self._text_pools["roof"]
        pool.reset()
        texts.reset()
        self._roofs = []
        self._roof_labels = []
        for roof in scene.roofs:
            curve = pool.take()
            color = theme.roof_color(roof.style_index)
            width = theme.roof_width if roof.emphasis == "main" else theme.minor_roof_width
            if roof.emphasis != "main" and not roof.derated and roof.kind != "interconnect":
                color = _fade(color, 0.7)
            curve.setData(x=to_view(np.asarray(roof.xs)), y=to_view(np.asarray(roof.ys)),
                          pen=self._pen(color, width, roof.line))
            curve.setZValue(-3 if roof.derated else (-1 if roof.emphasis == "main" else -2))
            self._roofs.append((roof, curve))
            if roof.label:
                label = self._take_label("roof")
                label.setText(roof.label)
                label.setColor(qcolor(color))
                self._roof_labels.append((roof, label))
        pool.finish()
        texts.finish()

    def _sync_ridges(self, scene: Scene) -> None:
        theme = self.theme
        texts = self._text_pools["ridge"]
        texts.reset()
        self._ridge_items = []
        floor = float(to_view(scene.y_range[0])) - 8
        xs, ys = [], []
        brushes = []
        for ridge in scene.ridges:
            lx, ly = float(to_view(ridge.x)), float(to_view(ridge.y))
            xs += [lx, lx]
            ys += [floor, ly]
            brushes.append(self._brush(theme.roof_color(ridge.style_index)))
            label = self._take_label("ridge")
            label.setText(ridge.label)
            label.setPos(lx, ly)
            self._ridge_items.append((ridge, label))
        texts.finish()
        self._ridge_lines.setData(x=np.asarray(xs, float), y=np.asarray(ys, float),
                                  pen=self._pen(theme.muted, 1.0, "dotted"))
        marks_x = np.asarray(xs[0::2], float)
        marks_y = np.asarray(ys[1::2], float)
        self._ridge_marks.setData(x=marks_x, y=marks_y, symbol="d", size=theme.ridge_size,
                                  brush=brushes, pen=self._pen(theme.background, 1.2))

    def _sync_points(self, scene: Scene) -> None:
        theme = self.theme
        by_hw: dict[int, list[PointMark]] = {m.hw_id: [] for m in scene.machines}
        for point in scene.points:
            by_hw.setdefault(point.hw_id, []).append(point)
        self._points = {}
        self._op_points = {}
        self._scatter_for = {}
        self._spot_index = {}
        pool = self._scatter_pool
        pool.reset()
        styles_of: dict[tuple[str, bool], tuple[QBrush, QPen]] = {}  # (colour, hollow) → style
        for machine in scene.machines:
            points = by_hw.get(machine.hw_id, [])
            scatter = pool.take()
            self._scatter_for[machine.hw_id] = scatter
            styles = []
            for p in points:
                style = styles_of.get((p.color, p.overhead))
                if style is None:
                    style = styles_of[(p.color, p.overhead)] = self._spot_style(p)
                styles.append(style)
            scatter.setData(
                x=to_view(np.asarray([p.x for p in points], float)),
                y=to_view(np.asarray([p.y for p in points], float)),
                data=[p.op_id for p in points],
                symbol=machine.marker,
                size=theme.point_size,
                brush=[s[0] for s in styles],
                pen=[s[1] for s in styles],
            )
            for i, p in enumerate(points):
                key = (p.op_id, p.hw_id)
                self._spot_index[key] = i
        for point in scene.points:
            key = (point.op_id, point.hw_id)
            self._points[key] = point
            self._op_points.setdefault(point.op_id, []).append(key)
        for scatter in pool.items[pool.used:]:
            scatter.setData(x=np.zeros(0), y=np.zeros(0))
        pool.finish()

        self._hover_keys = list(self._points)
        self._hover_row = {key: i for i, key in enumerate(self._hover_keys)}
        self._hover_xy = to_view(np.array(
            [(p.x, p.y) for p in self._points.values()], float).reshape(-1, 2))
        self._hover_key = None
        self._hover_text = ""

        self._usage = {}
        for point in scene.points:
            r = point.result
            self._usage.setdefault(point.op_id, set()).add(
                (point.hw_id, roof_name(r.precision_used, r.unit), r.level))
        self._usage = {k: frozenset(v) for k, v in self._usage.items()}
        self._usage_count = Counter()
        for usage in self._usage.values():
            self._usage_count.update(usage)

        labels = self._text_pools["point"]
        labels.reset()
        self._labels = {}
        for point in scene.points:
            if point.show_label:
                item = self._take_label("point")
                item.setText(point.label)
                item.setPos(float(to_view(point.x)), float(to_view(point.y)))
                self._labels[point.op_id] = item
        labels.finish()

    def _move_spots(self, scatter: _Spots, moved: Sequence[tuple[int, float, float]],
                    size_px: float) -> None:
        """Move spots of a pixel-mode scatter item in place (``(index, x, y)`` in view
        coordinates) and invalidate only the few pixels around their old and new places: an
        edit then repaints a spot's neighbourhood, not the whole chart. When a spot leaves
        the item's bounding rectangle the item's geometry changes (a full update)."""
        data = scatter.data
        bounds = scatter.boundingRect()
        pw, ph = self._vb.viewPixelSize()
        half_w, half_h = (size_px / 2 + 3) * pw, (size_px / 2 + 3) * ph
        dirty = []
        inside = pw > 0 and ph > 0 and math.isfinite(pw) and math.isfinite(ph)
        for i, lx, ly in moved:
            for x, y in ((float(data["x"][i]), float(data["y"][i])), (lx, ly)):
                if math.isfinite(x) and math.isfinite(y):
                    dirty.append(QRectF(x - half_w, y - half_h, 2 * half_w, 2 * half_h))
            scatter.move_spot(i, lx, ly)
            if not (math.isfinite(lx) and math.isfinite(ly) and bounds.contains(dirty[-1])):
                inside = False
        if not inside:
            scatter.prepareGeometryChange()
            scatter.bounds = [None, None]
            scatter.update()
            return
        for rect in dirty:
            scatter.update(rect)

    def _sync_ring(self) -> None:
        op_id = self.workspace.selection.current
        keys = self._op_points.get(op_id, []) if op_id is not None else []
        theme = self.theme
        xs = np.asarray([to_view(self._points[k].x) for k in keys], float)
        ys = np.asarray([to_view(self._points[k].y) for k in keys], float)
        ring = self._ring.data
        if (self._ring_keys == keys and len(ring) == len(keys) and len(keys)
                and self._ring_style == (theme, self._ring)):
            self._move_spots(self._ring, [(i, float(x), float(y))
                                          for i, (x, y) in enumerate(zip(xs, ys, strict=True))],
                             theme.point_size + theme.ring_extra)
            return
        self._ring_keys = list(keys)
        self._ring_style = (theme, self._ring)
        self._ring.setData(x=xs, y=ys, symbol="o", size=theme.point_size + theme.ring_extra,
                           brush=None, pen=self._pen(theme.selection, 2.0))

    def _sync_legend(self, scene: Scene, force: bool = False) -> None:
        theme = self.theme
        key = (scene.legend, theme.name)
        if key == self._legend_key and not force:
            return
        self._legend_key = key
        self._legend.set_rows([(entry.text, self._legend_sample(entry))
                               for entry in scene.legend])

    def _legend_sample(self, entry) -> tuple | None:
        """How a legend row's sample is drawn: ``(line_pen, symbol, size, pen, brush)``."""
        theme = self.theme
        size = theme.point_size * 0.9
        if entry.kind == "machine":
            color = theme.roof_color(entry.style_index or 0)
            return (self._pen(color, theme.roof_width), entry.marker, size,
                    self._pen(theme.background, 1.0), self._brush(color))
        if entry.kind == "operation":
            color = theme.point_color(entry.color or "#000000")
            return (None, "o", size, self._pen(theme.point_outline, 0.9), self._brush(color))
        if entry.kind == "measured":
            return (None, "x", size * 1.15, self._pen(theme.point_outline, 0.6),
                    self._brush(entry.color or theme.text))
        if entry.marker:
            return (None, entry.marker, size, self._pen(theme.text, 2.0),
                    self._brush(theme.background))
        return None

    # ------------------------------------------------------------------------------------
    # annotation layout (pixel space)

    def _on_range_changed(self, *_args) -> None:
        self._layout_timer.start()

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

    def _layout_annotations(self) -> None:
        """Place ridge, roof, region and point labels so that they overlap each other, the
        points and the frame as little as cheaply possible (greedy, in pixels, first free
        candidate wins): ridge labels first, then flat-roof, sloped-roof, region and point
        labels (highest points first)."""
        self._layout_pending = False
        self._layout_timer.stop()  # placed for the current view: a queued placing is moot
        if self._scene is None:
            return
        (x0, x1), (y0, y1) = self._vb.viewRange()
        ax, bx, ay, by = self._view_to_scene()
        self._obstacles = self._point_pixels()
        self._obstacle_r = self.theme.point_size / 2 + 2.5
        placed: list[tuple[float, float, float, float]] = []
        gap = 5.0

        def scene_xy(lx, ly):
            return lx * ax + bx, ly * ay + by

        margin_x = (x1 - x0) * 0.012

        def place_flat(roof: Roof, label: _Label, optional: bool) -> None:
            lxs = to_view(np.asarray(roof.xs))
            ly = float(to_view(roof.ys[0]))
            lo, hi = max(x0, float(lxs[0])), min(x1, float(lxs[1]))
            if not (y0 < ly < y1) or hi <= lo:
                label.setVisible(False)
                return
            label.setVisible(True)
            label.fill = QBrush(self._label_fill)
            label.rotateAxis = None
            label.setAngle(0)
            above, below = (1, -2.0), (0, 2.0)  # (anchor y, pixel offset y)
            sides = (below, above) if roof.derated else (above, below)  # derated: under
            # centred candidates keep the whole label over the roof's visible part
            w = label.size()[0]
            lo_px, hi_px = lo * ax + bx, hi * ax + bx
            room = hi_px - lo_px - w
            centres = [((lo_px + w / 2 + room * f) - bx) / ax
                       for f in (0.3, 0.5, 0.7, 0.15, 0.45, 0.6, 0.85)] if room > 0 else []
            candidates = []
            for anchor_y, dy in sides:
                candidates += [((hi - margin_x, ly), (1, anchor_y), (0, dy)),
                               ((lo + margin_x, ly), (0, anchor_y), (0, dy))]
                candidates += [((cx, ly), (0.5, anchor_y), (0, dy)) for cx in centres]
            if not self._place(label, candidates, placed, optional=optional):
                label.setVisible(False)

        # ridge labels first (next to their corner), then each machine's top compute roof
        for ridge, label in self._ridge_items:
            lx, ly = float(to_view(ridge.x)), float(to_view(ridge.y))
            label.setPos(lx, ly)
            xy = scene_xy(lx, ly)
            self._place(label, [((lx, ly), (0, 0), (gap, gap)), ((lx, ly), (1, 1), (-gap, -gap)),
                                ((lx, ly), (1, 0), (-gap, gap)), ((lx, ly), (0, 1), (gap, -gap))],
                        placed, own=xy)

        flat = [(r, lab) for r, lab in self._roof_labels if not r.sloped]
        sloped = [(r, lab) for r, lab in self._roof_labels if r.sloped]
        for roof, label in flat:
            if roof.emphasis == "main" and not roof.derated:
                place_flat(roof, label, optional=False)

        for roof, label in flat:  # other precisions, then derated roofs if there is room
            if roof.emphasis != "main" and not roof.derated:
                place_flat(roof, label, optional=False)
        derated = [(r, lab) for r, lab in flat if r.derated]

        for roof, label in sloped:
            lxs = to_view(np.asarray(roof.xs))
            lys = to_view(np.asarray(roof.ys))
            slope = float((lys[1] - lys[0]) / (lxs[1] - lxs[0]))
            c = float(lys[0] - slope * lxs[0])
            lo = max(x0, float(lxs[0]), (y0 - c) / slope)
            hi = min(x1, float(lxs[1]), (y1 - c) / slope)
            if hi <= lo:
                label.setVisible(False)
                continue
            label.setVisible(True)
            label.fill = QBrush(Qt.BrushStyle.NoBrush)  # a fill would hide neighbouring roofs
            label.rotateAxis = pg.Point(1, 1)
            label.setAngle(0)
            label.setAnchor((0, 1))
            label.set_offset(0, -1)
            w, h = label.size()
            ux, uy = ax, ay * slope
            norm = math.hypot(ux, uy) or 1.0
            ux, uy = ux / norm, uy / norm
            nx, ny = uy, -ux  # the side the text sits on ("above" the line)
            length_view = (w / norm)  # text length in view x units
            best = None
            for f in (0.04, 0.2, 0.36, 0.52, 0.68):
                lx = lo + f * (hi - lo)
                if lx + length_view > hi and f > 0.04:
                    break
                sx, sy = scene_xy(lx, c + slope * lx)
                boxes = _strip_boxes(sx, sy, ux, uy, nx, ny, w, h)
                score = float(self._scores(boxes, placed, None).sum())
                if best is None or score < best[0]:
                    best = (score, lx, boxes)
                if score == 0:
                    break
            _, lx, boxes = best
            label.setPos(lx, c + slope * lx)
            label.updateTransform(force=True)
            placed.extend(boxes)

        for roof, label in derated:
            place_flat(roof, label, optional=True)

        for region, _curve, label in self._region_items:
            edge = float(to_view(region.xs[1] if region.kind == "memory" else region.xs[0]))
            if region.kind == "memory":
                lx, anchor = x0 + (x1 - x0) * 0.012, (0, 1)
                visible = edge > lx
            else:
                lx, anchor = x1 - (x1 - x0) * 0.012, (1, 1)
                visible = edge < lx
            visible = bool(visible)
            label.setVisible(visible)
            if visible:
                ly = y0 + (y1 - y0) * 0.015
                label.setPos(lx, ly)
                self._place(label, [((lx, ly), anchor, (0, 0))], placed)

        self._fixed_rects = placed
        self._label_rects = _PlacedRects()
        self._label_choice = {}  # a full layout chooses every place afresh
        order = sorted(self._labels.items(),
                       key=lambda kv: -self._points[self._label_key(kv[0])].y)
        for op_id, label in order:
            self._place_point_label(op_id, label, self._points[self._label_key(op_id)])
        # sweep, crossing, measured and pair labels go around the point labels
        self._fixed_base = list(placed)
        self._layout_overlays(placed + list(self._label_rects.values()))

    def _scores(self, rects, others, own: tuple[float, float] | None,
                view: QRectF | None = None) -> np.ndarray:
        """Badness of each candidate rectangle ``(left, top, right, bottom)`` in scene pixels:
        area shared with ``others`` (rectangles already placed) + weighted area over points
        + area outside the plot (``view``, the plot's scene rectangle, when the caller has
        it). Vectorised over candidates, placed rectangles and points. Rounded to 1e-6 px²,
        so that equally good candidates tie exactly."""
        r = np.asarray(rects, dtype=float).reshape(-1, 4)
        o = np.asarray(others, dtype=float).reshape(-1, 4)
        if self._legend.isVisible():  # the legend is drawn over labels: keep them clear of it
            box = self._legend.sceneBoundingRect()
            o = np.vstack([o, [(box.left(), box.top(), box.right(), box.bottom())]])
        score = self._point_overlaps(r, own)
        if len(o):
            w = np.minimum(r[:, None, 2], o[None, :, 2]) - np.maximum(r[:, None, 0], o[None, :, 0])
            h = np.minimum(r[:, None, 3], o[None, :, 3]) - np.maximum(r[:, None, 1], o[None, :, 1])
            score += (np.maximum(w, 0.0) * np.maximum(h, 0.0)).sum(axis=1)
        if view is None:
            view = self._vb.sceneBoundingRect()
        iw = np.maximum(np.minimum(r[:, 2], view.right()) - np.maximum(r[:, 0], view.left()), 0.0)
        ih = np.maximum(np.minimum(r[:, 3], view.bottom()) - np.maximum(r[:, 1], view.top()), 0.0)
        score += ((r[:, 2] - r[:, 0]) * (r[:, 3] - r[:, 1]) - iw * ih) * 2.0
        # a sum's last bits depend on the order of its terms: rounded, candidates that are
        # equally good tie exactly, and the first in preference order wins
        return np.round(score, 6)

    def _point_overlaps(self, r: np.ndarray, own: tuple[float, float] | None) -> np.ndarray:
        """How much of the points (squares of half-side ``_obstacle_r``) each rectangle covers,
        weighted so that covering a point costs more than touching another label. ``own``
        (the labelled point) may be touched but costs a little when covered."""
        pts = getattr(self, "_obstacles", None)
        if pts is None or not len(pts):
            return np.zeros(len(r))
        rad = self._obstacle_r
        w = np.minimum(pts[None, :, 0] + rad, r[:, None, 2]) - np.maximum(pts[None, :, 0] - rad,
                                                                         r[:, None, 0])
        h = np.minimum(pts[None, :, 1] + rad, r[:, None, 3]) - np.maximum(pts[None, :, 1] - rad,
                                                                         r[:, None, 1])
        area = (np.maximum(w, 0.0) * np.maximum(h, 0.0)).sum(axis=1)
        if own is not None:
            ow = np.maximum(np.minimum(own[0] + rad, r[:, 2]) - np.maximum(own[0] - rad, r[:, 0]),
                            0.0)
            oh = np.maximum(np.minimum(own[1] + rad, r[:, 3]) - np.maximum(own[1] - rad, r[:, 1]),
                            0.0)
            covered = ow * oh
            area = area - covered + np.where(covered > 0, 50.0, 0.0)
        return 6.0 * area

    def _place(self, label: _Label, candidates, placed: list, own=None,
               optional: bool = False) -> bool:
        """Put ``label`` at the first ``(view position, anchor, pixel offset)`` candidate that
        overlaps nothing placed, no point and not the frame, else at the least-overlapping
        one; record its rectangle in ``placed``. An ``optional`` label that cannot be placed
        freely is not placed (returns False)."""
        ax, bx, ay, by = self._view_to_scene()
        rects = [self._rect_for(label, (pos[0] * ax + bx, pos[1] * ay + by), anchor, offset)
                 for pos, anchor, offset in candidates]
        scores = self._scores(rects, placed, own)
        best = int(np.argmin(scores))  # the first of the best: candidates are in preference order
        if optional and scores[best] > 0:
            return False
        pos, anchor, offset = candidates[best]
        label.setPos(*pos)
        label.setAnchor(anchor)
        label.set_offset(*offset)
        placed.append(rects[best])
        return True

    def _label_key(self, op_id: int) -> tuple[int, int]:
        return next(k for k in self._op_points[op_id] if self._points[k].show_label)

    def _place_point_label(self, op_id: int, label: _Label, point: PointMark) -> None:
        """Put an operation's label at the best of twelve places around its point (right,
        left, above, below, at two distances), scored by :meth:`_scores` against the other
        labels, the fixed labels and the points."""
        ax, bx, ay, by = self._view_to_scene()
        x, y = float(to_view(point.x)) * ax + bx, float(to_view(point.y)) * ay + by
        anchors, offsets = _candidate_arrays(self.theme.point_size)
        w, h = label.size()
        m = 1.5  # QGraphicsTextItem's margin is 4 px: this keeps ~2.5 px of air around text
        # (left, top, right, bottom) of each candidate, as _rect_for computes them
        rects = (np.array((x + m, y + m, x + w - m, y + h - m)) + offsets
                 - anchors * np.array((w, h, w, h)))
        # a candidate running over the plot's edge is moved back inside (the plot clips its
        # labels: a cut name is unreadable); the scores then judge it where it would be
        view = self._vb.sceneBoundingRect()
        dx = (np.minimum(view.right() - rects[:, 2], 0.0)
              + np.maximum(view.left() - rects[:, 0], 0.0))
        dy = (np.minimum(view.bottom() - rects[:, 3], 0.0)
              + np.maximum(view.top() - rects[:, 1], 0.0))
        rects = rects + np.column_stack((dx, dy, dx, dy))
        fixed = self._fixed_rects
        if self._fixed_array[0] is not fixed or len(self._fixed_array[1]) != len(fixed):
            self._fixed_array = (fixed, np.asarray(fixed, dtype=float).reshape(-1, 4))
        others = np.vstack((self._label_rects.array_without(op_id), self._fixed_array[1]))
        scores = self._scores(rects, others, (x, y), view)
        best = int(np.argmin(scores))
        kept = self._label_choice.get(op_id)
        if kept is not None and scores[kept] <= scores[best] + _KEEP_PLACE_SLACK:
            best = kept  # as good as the best, near enough: the label stays where it is
        self._label_choice[op_id] = best
        ox, oy = _candidate_offsets(self.theme.point_size)[best]
        label.set_offset(ox + float(dx[best]), oy + float(dy[best]),
                         anchor=_CANDIDATE_ANCHORS[best])
        self._label_rects[op_id] = tuple(float(v) for v in rects[best])

    @staticmethod
    def _rect_for(label: _Label, xy: tuple[float, float], anchor, offset
                  ) -> tuple[float, float, float, float]:
        w, h = label.size()
        m = 1.5  # QGraphicsTextItem's margin is 4 px: this keeps ~2.5 px of air around text
        left = xy[0] + offset[0] - anchor[0] * w + m
        top = xy[1] + offset[1] - anchor[1] * h + m
        return left, top, left + w - 2 * m, top + h - 2 * m

    # ------------------------------------------------------------------------------------
    # sweep paths, measured points and compared pairs

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
        for path, _end, label in self._sweep_labels:
            if label.isVisible():
                pos = label.pos()
                out.append((path.op_id, path.hw_id, label.toPlainText(),
                            float(to_data(pos.x())), float(to_data(pos.y()))))
        return out

    def crossing_items(self) -> list[tuple[int, int, str, float, float]]:
        """``(op_id, hw_id, label, x, y)`` of every ridge crossing marked: the label shown
        (``"m* = 255.5"``) and the drawn mark's position in data units."""
        if not self._crossing_marks.isVisible():
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
        if not self._measured_marks.isVisible():
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

    def _sync_overlays(self, scene: Scene) -> None:
        self._sweeps = {}
        for path in scene.sweeps:
            self._sweeps.setdefault(path.op_id, []).append(path)
        self._measured = list(scene.measured)
        self._links = list(scene.links)
        self._draw_overlays()

    def _store_overlays(self) -> None:
        """Keep :attr:`scene_model` in step with the overlays redrawn since the last rebuild."""
        if self._scene is not None:
            self._scene = replace(
                self._scene, sweeps=tuple(p for paths in self._sweeps.values() for p in paths),
                measured=tuple(self._measured), links=tuple(self._links))

    def _refresh_sweep(self, op_id: int) -> None:
        """Recompute one operation's sweep paths (after its sweep or its parameters changed)."""
        scene = self._scene
        if scene is None:
            return
        session = self.workspace.document.session
        try:
            entry = self.workspace.document.operation(op_id)
        except KeyError:
            entry = None
        paths: list[SweepPath] = []
        if entry is not None and entry.visible and entry.sweep is not None and session.view.sweeps:
            paths, _notes = sweep_paths(session, entry, scene.machines, session.color_of(entry))
        if paths:
            self._sweeps[op_id] = paths
        else:
            self._sweeps.pop(op_id, None)
        self._store_overlays()

    def _refresh_measured(self) -> None:
        """Re-judge the measurements and update their legend entries."""
        scene = self._scene
        if scene is None:
            return
        session = self.workspace.document.session
        self._measured = []
        if session.view.measured and session.measurements:
            self._measured, _notes = measured_marks(session, [m.hw_id for m in scene.machines])
        legend = tuple(e for e in scene.legend if e.kind != "measured")
        legend += tuple(measured_legend(self._measured))
        self._scene = replace(scene, legend=legend)
        self._store_overlays()
        self._sync_legend(self._scene)
        self._legend.setVisible(session.view.legend and bool(legend))

    def _refresh_links(self) -> None:
        """Recompute the compared pairs' links from the cached results."""
        scene = self._scene
        if scene is None:
            return
        session = self.workspace.document.session
        self._links = []
        if session.view.pairs and session.comparisons:
            names = {n for c in session.comparisons for n in (c.first, c.second)}
            pairs = []
            for entry in session.operations:
                if not entry.visible or entry.operation.name not in names:
                    continue
                for machine in scene.machines:
                    try:
                        pairs.append(self.workspace.results.pair(entry.id, machine.hw_id))
                    except (KeyError, ValueError, TypeError, ZeroDivisionError, ArithmeticError):
                        break
            self._links = pair_links(session, pairs, scene.machines)
        self._store_overlays()

    def _refresh_overlays_for(self, op_ids: Sequence[int]) -> None:
        """After an edit of these operations: redraw their sweep paths, the measured points
        attached to them and the pairs they are part of (nothing else)."""
        if self._scene is None:
            return
        document = self.workspace.document
        session = document.session
        changed = False
        names = set()
        for op_id in op_ids:
            try:
                entry = document.operation(op_id)
            except KeyError:
                continue
            names.add(entry.operation.name)
            if op_id in self._sweeps or (entry.sweep is not None and session.view.sweeps):
                self._refresh_sweep(op_id)
                changed = True
        if session.view.measured and any(m.operation in names for m in session.measurements):
            self._refresh_measured()
            changed = True
        if session.view.pairs and any(c.first in names or c.second in names
                                      for c in session.comparisons):
            self._refresh_links()
            changed = True
        if changed:
            self._redraw_overlays()

    def _redraw_overlays(self) -> None:
        """Redraw the overlays and place their labels around what is already placed."""
        self._draw_overlays()
        self._layout_overlays(list(getattr(self, "_base_rects", [])))

    def _band_pen(self, color: str, width: float) -> QPen:
        key = (color, width, "band")
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = make_pen(color, width)
            pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        return pen

    def _draw_overlays(self) -> None:
        """Sync the overlay items to ``_sweeps``, ``_measured`` and ``_links`` (pooled items;
        nothing is created when the pools are large enough)."""
        if (not self._overlays_shown and not self._sweeps and not self._measured
                and not self._links):
            return  # nothing drawn before, nothing to draw now
        theme = self.theme
        tips: list = []
        ops: list[int | None] = []
        xy: list[np.ndarray] = []
        samples: list[bool] = []  # per row of xy: a plain sweep sample (else a mark, a label)
        for kind in ("sweep", "crossing", "measured", "pair"):
            self._text_pools[kind].reset()
        for pool in (self._sweep_pool, self._link_pool, self._band_pool, self._arrow_pool):
            pool.reset()

        # sweep paths: a line through samples and crossings, a dot per sample, end labels
        self._sweep_drawn, self._sweep_labels, self._crossing_labels = [], [], []
        dot_x, dot_y, dot_symbols, dot_brushes = [], [], [], []
        cross_x, cross_y, cross_pens = [], [], []
        corners: dict[tuple, list[tuple[CrossingMark, str]]] = {}
        for paths in self._sweeps.values():
            for path in paths:
                color = theme.point_color(path.color)
                curve = self._sweep_pool.take()
                curve.setData(x=to_view(np.asarray(path.path_xs)),
                              y=to_view(np.asarray(path.path_ys)), pen=self._pen(color, 1.6))
                self._sweep_drawn.append((path, curve))
                lx, ly = to_view(np.asarray(path.xs)), to_view(np.asarray(path.ys))
                if path.dots:
                    n = len(lx)
                    dot_x.append(lx)
                    dot_y.append(ly)
                    dot_symbols += [path.marker] * n
                    dot_brushes += [self._brush(color)] * n
                    tips += [functools.partial(path.sample_tooltip, i) for i in range(n)]
                    ops += [path.op_id] * n
                    xy.append(np.column_stack((lx, ly)))
                    samples += [True] * n
                for end, text in ((0, path.start_label), (len(lx) - 1, path.end_label)):
                    if text:
                        label = self._take_label("sweep")
                        label.setText(text)
                        label.setColor(qcolor(color))
                        label.setPos(float(lx[end]), float(ly[end]))
                        self._sweep_labels.append((path, end, label))
                for mark in path.crossings:
                    cx, cy = float(to_view(mark.x)), float(to_view(mark.y))
                    cross_x.append(cx)
                    cross_y.append(cy)
                    cross_pens.append(self._pen(color, 2.2))
                    corner = (mark.hw_id, round(cx, 6), round(cy, 6))
                    corners.setdefault(corner, []).append((mark, color))
                    tips.append(functools.partial(str, mark.tooltip))
                    ops.append(mark.op_id)
                    xy.append(np.array([[cx, cy]]))
                    samples.append(False)
        # one label per ridge corner: the crossings of several operations stack in it
        labels_at: dict[tuple, _Label] = {}
        for corner, marks in corners.items():
            label = labels_at[corner] = self._take_label("crossing")
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
        self._sweep_dots.setData(
            x=np.concatenate(dot_x) if dot_x else np.zeros(0),
            y=np.concatenate(dot_y) if dot_y else np.zeros(0),
            symbol=dot_symbols, size=theme.point_size * 0.55, brush=dot_brushes,
            pen=self._pen(theme.background, 0.6))
        self._crossing_marks.setData(x=np.asarray(cross_x, float), y=np.asarray(cross_y, float),
                                     symbol="o", size=theme.point_size + 5, brush=None,
                                     pen=cross_pens)

        # measured points: a link from the prediction, the verdict scale at the prediction
        self._measured_drawn = []
        bands: dict[str, tuple[list[float], list[float]]] = {}
        m_x, m_y, m_brushes, p_x, p_y = [], [], [], [], []
        for mark in self._measured:
            x0, y0 = float(to_view(mark.px)), float(to_view(mark.py))
            x1, y1 = float(to_view(mark.x)), float(to_view(mark.y))
            link = self._link_pool.take()
            link.setData(x=np.asarray([x0, x1]), y=np.asarray([y0, y1]),
                         pen=self._pen(mark.color, 1.5, "dashed"))
            link.setZValue(8)
            label = self._take_label("measured")
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
            m_brushes.append(self._brush(mark.color))
            tips.append(functools.partial(str, mark.tooltip))
            ops.append(mark.op_id)
            xy.append(np.array([[x1, y1]]))
            samples.append(False)
            if mark.standalone:
                p_x.append(x0)
                p_y.append(y0)
        self._measured_marks.setData(x=np.asarray(m_x, float), y=np.asarray(m_y, float),
                                     symbol="x", size=theme.point_size * 1.3, brush=m_brushes,
                                     pen=self._pen(theme.point_outline, 0.7))
        self._predicted_marks.setData(x=np.asarray(p_x, float), y=np.asarray(p_y, float),
                                      symbol="o", size=theme.point_size * 0.9,
                                      brush=self._brush(theme.background),
                                      pen=self._pen(theme.muted, 1.6))
        for key, (xs, ys) in bands.items():
            curve = self._band_pool.take()
            color = _VERDICT_BAND_COLORS.get(key, "#808080")
            curve.setData(x=np.asarray(xs), y=np.asarray(ys), connect="pairs",
                          pen=self._band_pen(color + "80", 4.0))

        # compared pairs: first → second, labelled with the bytes saved and the speed-up (the
        # link is an arc, bent in pixels when the labels are placed: a straight link between
        # two memory-bound points would lie on the roof)
        self._pair_drawn = []
        self._pair_rows: list[int] = []
        for link in self._links:
            color = theme.roof_color(link.style_index)
            x0, y0 = float(to_view(link.x0)), float(to_view(link.y0))
            x1, y1 = float(to_view(link.x1)), float(to_view(link.y1))
            curve = self._link_pool.take()
            curve.setData(x=np.asarray([x0, x1]), y=np.asarray([y0, y1]),
                          pen=self._pen(color, 1.8))
            curve.setZValue(8.5)
            arrow = self._arrow_pool.take()
            arrow.setStyle(pen=self._pen(color, 1.0), brush=self._brush(color))
            arrow.setPos(x1, y1)
            label = self._take_label("pair")
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
            self._text_pools[kind].finish()
        for pool in (self._sweep_pool, self._link_pool, self._band_pool, self._arrow_pool):
            pool.finish()
        self._overlay_tips = tips
        self._overlay_ops = ops
        self._overlay_xy = np.concatenate(xy) if xy else np.zeros((0, 2))
        self._overlay_sample = np.asarray(samples, dtype=bool)
        if self._hover_key is not None and self._hover_key[0] == "overlay":
            self._hover_key = None
            self._hover_text = ""
        self._overlays_shown = bool(self._sweeps or self._measured or self._links)

    def _layout_overlays(self, placed: list) -> None:
        """Place the crossing, measured-point, compared-pair and sweep-end labels (in that
        order) around what is already ``placed``, and turn the pair arrows along their
        links (arrow heads are in pixels, so their angle follows the zoom)."""
        self._base_rects = list(placed)
        start = len(placed)
        try:
            self._place_overlay_labels(placed)
        finally:
            # point labels moved by a later edit keep clear of the overlay labels
            self._fixed_rects = list(getattr(self, "_fixed_base", [])) + placed[start:]

    def _place_overlay_labels(self, placed: list) -> None:
        if not (self._crossing_labels or self._measured_drawn or self._pair_drawn
                or self._sweep_labels):
            return
        ax, bx, ay, by = self._view_to_scene()
        g = self.theme.point_size / 2 + 2

        def around(lx: float, ly: float, sides, rings=(1.0, 2.2)) -> list:
            out = []
            for k in rings:
                d = g * k
                offsets = {"above-left": ((1, 1), (-d, -d * 0.5)),
                           "above-right": ((0, 1), (d, -d * 0.5)),
                           "below-left": ((1, 0), (-d, d * 0.5)),
                           "below-right": ((0, 0), (d, d * 0.5)),
                           "above": ((0.5, 1), (0, -d - 2)), "below": ((0.5, 0), (0, d + 2)),
                           "right": ((0, 0.5), (d + 2, 0)), "left": ((1, 0.5), (-d - 2, 0))}
                out += [((lx, ly), *offsets[side]) for side in sides]
            return out

        def own(lx: float, ly: float) -> tuple[float, float]:
            return lx * ax + bx, ly * ay + by

        everywhere = ("above-left", "above", "above-right", "right", "below-right", "below",
                      "below-left", "left")
        done: set[int] = set()
        for mark, label in self._crossing_labels:  # left of a ridge corner is above the roof
            if id(label) in done:
                continue
            done.add(id(label))
            lx, ly = float(to_view(mark.x)), float(to_view(mark.y))
            self._place(label, around(lx, ly, ("left", "above-left", "above", *everywhere[2:])),
                        placed, own=own(lx, ly))
        for mark, _link, label in self._measured_drawn:
            lx, ly = float(to_view(mark.x)), float(to_view(mark.y))
            self._place(label, around(lx, ly, ("right", "left", "below-right", "below-left",
                                               "above-right", "above-left", "below", "above"),
                                      rings=(1.0, 2.2, 3.6)),
                        placed, own=own(lx, ly))
        for (link, curve, arrow, label), row in zip(self._pair_drawn, self._pair_rows,
                                                    strict=True):
            x0, y0 = float(to_view(link.x0)), float(to_view(link.y0))
            x1, y1 = float(to_view(link.x1)), float(to_view(link.y1))
            p0 = np.array([x0 * ax + bx, y0 * ay + by])
            p1 = np.array([x1 * ax + bx, y1 * ay + by])
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
            t = np.linspace(0.0, 1.0, 33)[:, None]
            arc = (1 - t) ** 2 * p0 + 2 * (1 - t) * t * control + t**2 * p1
            curve.setData(x=(arc[:, 0] - bx) / ax, y=(arc[:, 1] - by) / ay)
            view_apex = ((apex[0] - bx) / ax, (apex[1] - by) / ay)
            self._overlay_xy[row] = view_apex
            self._place(label, around(*view_apex, ("above", "above-left", "above-right",
                                                    "below", "left", "right"),
                                      rings=(1.0, 2.2, 3.6, 5.0, 7.0, 9.5)),
                        placed, own=(float(apex[0]), float(apex[1])))
            tangent = p1 - control
            t_len = float(math.hypot(*tangent))
            if length < 2 * g or t_len == 0:
                arrow.setVisible(False)
                continue
            ux, uy = tangent / t_len
            back = self.theme.point_size / 2 + 1.5  # the tip touches the second point
            sx, sy = p1[0] - ux * back, p1[1] - uy * back
            arrow.setVisible(True)
            arrow.setStyle(angle=math.degrees(math.atan2(-uy, -ux)))
            arrow.setPos((sx - bx) / ax, (sy - by) / ay)
        first_machine = self._scene.machines[0].hw_id if self._scene and self._scene.machines \
            else None
        labelled: set[tuple[int, str]] = set()  # a second "m = 4096" on a machine: if room
        for path, end, label in self._sweep_labels:
            lx, ly = float(to_view(path.xs[end])), float(to_view(path.ys[end]))
            sides = (("left", "above-left", "below-right", "below", "above", "right") if end == 0
                     else ("below-right", "right", "below", "above-right", "below-left"))
            key = (path.hw_id, label.toPlainText())
            optional = path.hw_id != first_machine or key in labelled
            labelled.add(key)
            if not self._place(label, around(lx, ly, sides), placed, own=own(lx, ly),
                               optional=optional):
                label.setVisible(False)

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
        return self._points[key].tooltip

    def _on_mouse_moved(self, scene_pos) -> None:
        if not self._vb.sceneBoundingRect().contains(scene_pos):
            if self._hover_key is not None:
                self._hover_key = None
                self._hover_text = ""
                QToolTip.hideText()
            return
        view = self._vb.mapSceneToView(scene_pos)
        x, y = float(to_data(view.x())), float(to_data(view.y()))
        if self._scene is not None and math.isfinite(x) and math.isfinite(y):
            # within 2 pixels of the roof counts as on it
            tolerance = 10.0 ** (2 * abs(self._vb.viewPixelSize()[1])) - 1
            self.cursor_text.emit(self._scene.cursor_text(x, y, tolerance))
        key = self._nearest(scene_pos)
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


def _strip_boxes(sx: float, sy: float, ux: float, uy: float, nx: float, ny: float, w: float,
                 h: float) -> list[tuple[float, float, float, float]]:
    """Squares covering a text of ``w``×``h`` pixels that starts at ``(sx, sy)`` and runs
    along the unit vector ``(ux, uy)``, on the side of the normal ``(nx, ny)``: a cheap
    footprint of a rotated label for overlap tests."""
    m = 3.0
    w, h = max(w - 2 * m, 1.0), max(h - 2 * m, 1.0)
    count = max(1, math.ceil(w / h))
    half = h / 2
    boxes = []
    for k in range(count):
        t = w * (k + 0.5) / count
        cx = sx + ux * (t + m) + nx * (half + m)
        cy = sy + uy * (t + m) + ny * (half + m)
        boxes.append((cx - half, cy - half, cx + half, cy + half))
    return boxes


def _release(state: dict) -> None:
    """Run when the canvas's widget is destroyed: drop the Python references to its chart
    items. Otherwise a canvas wrapper that outlives its widget (held by a failed test's
    traceback, say) keeps wrappers of deleted items alive, and PySide crashes later in an
    unrelated paint."""
    state.clear()


def _fade(color: str, amount: float) -> str:
    """``color`` mixed towards mid-grey by ``1 - amount`` (lighter lines for minor roofs)."""
    c = qcolor(color)
    grey = 150
    r = int(c.red() * amount + grey * (1 - amount))
    g = int(c.green() * amount + grey * (1 - amount))
    b = int(c.blue() * amount + grey * (1 - amount))
    return f"#{r:02X}{g:02X}{b:02X}"

