"""The chart's items: text labels, pooled items, scatter spots and the legend.

Public pyqtgraph and Qt API only: items are subclassed through the methods the libraries
document, and speed comes from fewer items, ``setData`` on what moved and Qt's item caches.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QTextDocument,
    QTransform,
)
from PySide6.QtWidgets import QGraphicsItem

__all__ = ["Label", "Pool", "Segment", "draw_segments", "Spots", "Legend", "CACHE", "NO_CACHE",
           "painted_for_figure"]

CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache
NO_CACHE = QGraphicsItem.CacheMode.NoCache


@contextmanager
def painted_for_figure(scene) -> Iterator[None]:
    """Within this block the items of ``scene`` paint for a figure: in pyqtgraph's export
    mode (markers drawn as shapes, not as pixmaps from its atlas) and with no pixmap caches
    (axes and texts stay vector in SVG and PDF). As before once the block ends."""
    items = scene.items()
    exported = [item for item in items if hasattr(item, "setExportMode")]
    cached = [(item, item.cacheMode()) for item in items if item.cacheMode() != NO_CACHE]
    for item in exported:
        item.setExportMode(True, {})
    for item, _mode in cached:
        item.setCacheMode(NO_CACHE)
    hidden = _markers_out_of_view(items)
    try:
        yield
    finally:
        for item in exported:
            item.setExportMode(False)
        for item, mode in cached:
            item.setCacheMode(mode)
        for item, was in hidden:
            item.setPointsVisible(was)


def _markers_out_of_view(items) -> list[tuple[pg.ScatterPlotItem, np.ndarray]]:
    """Hide the markers whose middle lies outside their plot's view (on screen the plot
    clips them; a figure's vector file drew them whole, over the title above the plot), and
    return each scatter hidden from with its markers' visibility before."""
    out = []
    for item in items:
        view = item.getViewBox() if isinstance(item, pg.ScatterPlotItem) else None
        data = item.data if view is not None else None
        if data is None or not len(data):
            continue
        (x0, x1), (y0, y1) = view.viewRange()
        inside = ((data["x"] >= x0) & (data["x"] <= x1) & (data["y"] >= y0)
                  & (data["y"] <= y1))
        if not inside.all():
            was = data["visible"].copy()
            item.setPointsVisible(was & inside)
            out.append((item, was))
    return out


class Label(pg.TextItem):
    """A TextItem with an extra offset in pixels (its local units) from its anchor point,
    whose text is cached as a pixmap on screen (not in exports). Labels have no background:
    the layout places them off the lines, so nothing needs hiding.

    The item paints nothing itself (its text is its child item): the transform check
    pyqtgraph does in every label's ``paint`` is done once per paint for all labels by the
    canvas, which keeps a repaint with hundreds of labels cheap."""

    _offset = QPointF(0.0, 0.0)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.textItem.setCacheMode(CACHE)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        # (no word of a move: pyqtgraph only tells the view box, which ranges over no label)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, False)

    def changeParent(self) -> None:
        """No connection to the view's range signals per label (pyqtgraph makes one for each
        item, and calls every label on every zoom step): the canvas re-derives the transform
        of all labels once per paint when the view's has changed
        (:meth:`RooflineCanvas._update_label_transforms`); a new label takes its own here."""
        self.forgetViewBox()
        self.forgetViewWidget()
        if self.parentItem() is not None:
            self.updateTransform(force=True)

    _rect: QRectF | None = None

    def boundingRect(self) -> QRectF:
        # asked for every label on every repaint: kept until the text or its place changes
        # (every such change goes through updateTextPos)
        if self._rect is None:
            self._rect = self.textItem.mapRectToParent(self.textItem.boundingRect())
        return self._rect

    def paint(self, p, *args):
        pass  # the background is the _back item, the text the text item

    def setExportMode(self, export, opts=None):
        super().setExportMode(export, opts)
        self.textItem.setCacheMode(NO_CACHE if export else CACHE)

    #: the document of the plain text said before the current one, laid out; whether the
    #: current document holds a plain text said by :meth:`setPlainText`
    _spare: QTextDocument | None = None
    _plain = False

    def setPlainText(self, text: str) -> None:
        """Say ``text``. The plain text said before stays laid out in a second document:
        saying it again swaps that in, not laid out anew (a whole model's crowd of tags is
        said whole, then in parts, at each of its edits: a hundred lines each way)."""
        item = self.textItem
        current = item.document()
        if text == current.toPlainText():
            return
        self._html = None
        spare = self._spare
        if spare is not None and not _alike(spare, current):  # (a new font or width)
            spare.deleteLater()
            spare = self._spare = None
        if not self._plain:  # (it held no text, or markup: said in it, as before)
            item.setPlainText(text)
            self._plain = True
            self.updateTextPos()
            return
        current.setParent(item)  # (kept: the text item deletes a document it owns)
        if spare is not None and spare.toPlainText() == text:
            item.setDocument(spare)
        else:
            item.setDocument(spare if spare is not None else current.clone(item))
            item.setPlainText(text)
        self._spare = current
        self.updateTextPos()

    #: the markup last said by :meth:`setHtml`, while the text item still shows it
    _html: str | None = None

    def setHtml(self, html: str) -> None:
        """Say ``html``, laid out anew only when it is not the markup said last (Qt's own
        markup of a text is never the markup it was given: compared with that, the stacked
        crossings' texts were laid out and drawn again at every redraw)."""
        if html == self._html:
            return
        self._plain = False
        self._html = html
        super().setHtml(html)

    def setFont(self, *args) -> None:
        """A new font, and the cached picture of the text drawn anew: a font change alone
        (a theme switch) left the cache blank, so a label whose colour stayed the same
        (a sweep's "m = 1") was no longer drawn."""
        super().setFont(*args)
        self.textItem.update()

    def set_offset(self, dx: float, dy: float, anchor: tuple[float, float] | None = None) -> None:
        """Move the text ``(dx, dy)`` pixels from its anchor point, and optionally anchor it
        elsewhere (one re-positioning for both; none where both are as they were: every
        change of the text re-positions it itself)."""
        offset = QPointF(dx, dy)
        point = self.anchor if anchor is None else pg.Point(anchor)
        if offset == self._offset and point == self.anchor:
            return
        self._offset = offset
        self.anchor = point
        self.updateTextPos()

    def updateTextPos(self) -> None:
        r = self.textItem.boundingRect()
        tl = self.textItem.mapToParent(r.topLeft())
        br = self.textItem.mapToParent(r.bottomRight())
        offset = (br - tl) * self.anchor
        self.prepareGeometryChange()
        self._rect = None
        self.textItem.setPos(-offset + self._offset)

    def size(self) -> tuple[float, float]:
        r = self.textItem.boundingRect()
        return r.width(), r.height()


#: While a point moves (an edit, a drag), its label stays at its place unless another place
#: scores better by more than this (pixels² of overlap): labels do not flicker between two

def _alike(a: QTextDocument, b: QTextDocument) -> bool:
    """Whether two documents lay a text out alike (their fonts, widths and margins)."""
    return (a.defaultFont() == b.defaultFont() and a.textWidth() == b.textWidth()
            and a.documentMargin() == b.documentMargin()
            and a.defaultTextOption().flags() == b.defaultTextOption().flags()
            and a.defaultTextOption().wrapMode() == b.defaultTextOption().wrapMode()
            and a.defaultTextOption().alignment() == b.defaultTextOption().alignment())


class Pool:
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

    def keep_spare(self, spare: int) -> None:
        """Make items (hidden) until ``spare`` more than those taken are at hand: an item
        added to a view repaints the whole view, which a full placing does anyway, and an
        edit that takes one more should not."""
        while len(self.items) < self.used + spare:
            item = self._factory()
            item.setVisible(False)
            self._add(item)
            self.items.append(item)

    @property
    def shown(self) -> list:
        return self.items[: self.used]


class Segment(QGraphicsItem):
    """One straight line in the view's coordinates (a roof, a ridge's line down to the
    floor, a text's leader), drawn with a cosmetic pen: smoothed, or (``smooth=False``: a
    leader, where a repaint of part of it must draw the same pixels as a repaint of all of
    it) crisp on screen, and smoothed in a figure (:func:`painted_for_figure`). Drawn as a
    path, as a pyqtgraph curve of two points draws itself (the same figure files), but a
    plain Qt item: a curve costs about ten times as much to make (its view tracking and
    signals), and a chart has a few dozen lines, spare leaders included."""

    #: the room around the line, in pixels, besides its pen's width (Qt repaints an item by
    #: its box: all of the line must lie inside it)
    PAD_PX = 3.0

    def __init__(self, z: float, smooth: bool = True) -> None:
        super().__init__()
        self.setZValue(z)
        self._smooth = smooth
        self._xy: tuple = (None, None)
        self._path = QPainterPath()
        self._pen = QPen(Qt.PenStyle.NoPen)
        self._rect = QRectF()
        self._antialias = smooth
        self._ends = (QPointF(), QPointF())

    def getData(self) -> tuple:
        """The line's ends, ``(xs, ys)`` in view coordinates (None, None before any)."""
        return self._xy

    def setData(self, x, y, pen: QPen) -> None:
        """Draw the line from ``(x[0], y[0])`` to ``(x[1], y[1])`` (view coordinates) with
        ``pen``."""
        self.prepareGeometryChange()
        self._xy = (x, y)
        x0, x1, y0, y1 = float(x[0]), float(x[1]), float(y[0]), float(y[1])
        path = QPainterPath()
        path.moveTo(x0, y0)
        path.lineTo(x1, y1)
        self._path = path
        self._ends = (QPointF(x0, y0), QPointF(x1, y1))
        self._flat = None
        if (pen.capStyle() == Qt.PenCapStyle.RoundCap and pen.style() == Qt.PenStyle.SolidLine
                and pen.widthF() >= self.WIDE and pen.isCosmetic() and pen.color().alpha() == 255):
            self._flat = QPen(pen)
            self._flat.setCapStyle(Qt.PenCapStyle.FlatCap)
        self._pen = pen
        self._rect = self._box()
        self.update()

    def _box(self) -> QRectF:
        """The line's box with room for its pen, at the view's scale now."""
        if self._xy[0] is None:
            return QRectF()
        t = self.sceneTransform()
        pad = self.PAD_PX + self._pen.widthF()
        px, py = pad / (abs(t.m11()) or 1.0), pad / (abs(t.m22()) or 1.0)
        return self._path.controlPointRect().adjusted(-px, -py, px, py)

    def follow_view(self) -> None:
        """Its box made anew for the view's scale (after a zoom or a resize): the room for
        its pen is in pixels, its line in the view's units."""
        box = self._box()
        if box != self._rect:
            self.prepareGeometryChange()
            self._rect = box

    def setExportMode(self, export: bool, opts=None) -> None:
        """Smoothed while a figure is painted (as pyqtgraph's items are in export mode)."""
        self._antialias = bool(export) or self._smooth
        self._export = bool(export)

    _export = False
    #: its pen with flat ends, where it is a wide opaque solid line with round ones (see
    #: paint); a narrower one Qt draws directly as it is
    _flat: QPen | None = None
    WIDE = 2.0

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, self._antialias)
        if self._export or self._flat is None:
            painter.setPen(self._pen)
            painter.drawPath(self._path)  # (a figure: a path, as a curve draws itself)
            return
        # on screen, a wide line with round ends is drawn as a line with flat ends between
        # its ends in device pixels and a dot at each end: Qt strokes a line with round ends
        # as an outline, filled through a rasterizer that costs a tenth of a millisecond and
        # more for a roof across the plot whatever part of it is repainted; a line with flat
        # ends it draws directly, the part repainted alone (the same pixels, but for a few
        # levels of shading: where the line is repainted in part, and where a dot and its
        # line both shade an edge pixel at the end; opaque lines only, where that adds up
        # to no more)
        t = painter.transform()
        a, b = t.map(self._ends[0]), t.map(self._ends[1])
        painter.resetTransform()
        painter.setPen(self._flat)
        painter.drawLine(QLineF(a, b))
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._pen.color())
        r = self._pen.widthF() / 2.0
        painter.drawEllipse(a, r, r)
        painter.drawEllipse(b, r, r)
        painter.setTransform(t)


def draw_segments(pool: Pool, lines, t, pen: QPen, fresh: bool) -> None:
    """Show an item of ``pool`` (of :class:`Segment`) for each of ``lines`` (``x0, y0, x1,
    y1`` in scene pixels; ``t``: the view's ``ax, bx, ay, by`` to them) with ``pen``, and
    hide the rest; an item whose line is as it was is not set again (unless ``fresh``: a
    new pen)."""
    pool.reset()
    ax, bx, ay, by = t
    for x0, y0, x1, y1 in lines:
        item = pool.take()
        xs = np.array([(x0 - bx) / ax, (x1 - bx) / ax])
        ys = np.array([(y0 - by) / ay, (y1 - by) / ay])
        old_x, old_y = item.getData()
        if (fresh or old_x is None or not np.array_equal(old_x, xs)
                or not np.array_equal(old_y, ys)):
            item.setData(x=xs, y=ys, pen=pen)
    pool.finish()


class Spots(pg.ScatterPlotItem):
    """A pixel-mode, antialiased scatter item."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("pxMode", True)
        kwargs.setdefault("antialias", True)
        super().__init__(*args, **kwargs)

    #: what the last bounding rectangle was worked out from, and that rectangle
    _rect_for: tuple = ()
    _rect: QRectF | None = None

    #: what :meth:`show_data` last set (``None`` once anything else set the data)
    _given: dict | None = None

    def setData(self, *args, **kwargs) -> None:
        self._given = None
        super().setData(*args, **kwargs)

    def show_data(self, **data) -> None:
        """``setData(**data)``, unless these are the points and looks it was last given
        here: an unchanged scatter set again is laid out and drawn again (the crossings of
        a swept operation sit on the ridges' corners whatever its other dimensions)."""
        if self._given is not None and _same_data(self._given, data):
            return
        self.setData(**data)
        self._given = {key: value.copy() if isinstance(value, np.ndarray)
                       else list(value) if isinstance(value, list) else value
                       for key, value in data.items()}

    def boundingRect(self) -> QRectF:
        # (asked for many times a repaint, each time working out the size of a view pixel:
        # the same while the data bounds, the widest spot and the view's scale are)
        dt = self.deviceTransform_()
        key = (self.dataBounds(0), self.dataBounds(1), self.pixelPadding(),
               None if dt is None else (dt.m11(), dt.m12(), dt.m21(), dt.m22()))
        if self._rect is None or key != self._rect_for:
            self._rect = super().boundingRect()
            self._rect_for = key
        return QRectF(self._rect)


def _same_data(given: dict, data: dict) -> bool:
    """Whether ``data`` (arrays, lists of pens or brushes, plain values) is what was
    ``given``, value for value."""
    if given.keys() != data.keys():
        return False
    for key, value in data.items():
        old = given[key]
        if isinstance(value, np.ndarray) or isinstance(old, np.ndarray):
            if not (isinstance(value, np.ndarray) and isinstance(old, np.ndarray)
                    and value.dtype == old.dtype and np.array_equal(value, old)):
                return False
        elif type(value) is not type(old) or value != old:
            return False
    return True


def curve(**kwargs) -> pg.PlotCurveItem:
    """A curve (roof, region edge, sweep path, link)."""
    return pg.PlotCurveItem(**kwargs)


def _symbol_path(symbol, size: float, x: float, y: float) -> QPainterPath:
    """A scatter symbol (a pyqtgraph name or a path) ``size`` pixels across, centred on
    ``(x, y)``, as a path in the painter's own coordinates: drawn without scaling the
    painter, so a figure file holds it like the legend's other shapes (a shape under a
    scaled transform is cut to the plot area when the figure is made portable, and a legend
    below the plot lost every marker but the first)."""
    path = Symbols[symbol] if isinstance(symbol, str) else symbol
    return QTransform(size, 0.0, 0.0, size, x, y).map(path)


def _broken_at_spaces(metrics: QFontMetricsF, text: str, width: float, advance) -> str:
    """``text`` with a line break at each plain space (not a no-break one) after which the
    next word no longer fits in ``width`` (``advance(metrics, text)``: its width)."""
    words = text.split(" ")
    lines = [words[0]]
    for word in words[1:]:
        joined = f"{lines[-1]} {word}"
        if advance(metrics, joined) <= width:
            lines[-1] = joined
        else:
            lines.append(word)
    return "\n".join(lines)


class Legend(pg.GraphicsWidgetAnchor, pg.GraphicsWidget):
    """The chart's legend: one item that draws its framed rows, a sample and a text each.

    pyqtgraph's legend is a layout of a sample item and a rich-text label per row; building
    and sizing those was a fifth of the cost of drawing a session. The canvas anchors it in a
    corner of the plot or outside it (:meth:`attach_corner`, :meth:`attach_outside`); it
    keeps that place when the plot is resized, can be dragged elsewhere, and a click
    collapses it to one row (and expands it again)."""

    #: the row a collapsed legend shows
    COLLAPSED = "Legend ▸"

    MARGIN = 9.0  # frame to rows
    SAMPLE = 20.0  # width (and least height) of a row's sample
    GAP = 9.0  # sample to text
    ROW = 19.0  # least row height; rows are as high as the font's line when that is more
    COLUMN_GAP = 18.0  # between columns

    def __init__(self, offset: tuple[float, float]) -> None:
        pg.GraphicsWidget.__init__(self)
        pg.GraphicsWidgetAnchor.__init__(self)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
        # (its rows drawn once into a pixmap until they change: an edit repaints the chart
        # around a legend that stays as it was; in a figure it is drawn as vectors, see
        # painted_for_figure)
        self.setCacheMode(CACHE)
        self._offset = offset
        self.rows: list[tuple[str, tuple | None]] = []
        self._pen = QPen(Qt.PenStyle.NoPen)
        self._brush = QBrush()
        self._text_pen = QPen(QColor("black"))
        self._font = self._base_font = QFont()
        self.zoom = 1.0
        self._row_height = self.ROW
        self._text_width = 0.0
        self.collapsed = False
        #: rows are laid out in this many columns, top to bottom then left to right
        self.columns = 1
        #: or, when set, side by side in lines of at most this width (a long key below a
        #: small figure), each of the rows in ``breaks`` starting a new line
        self.flow: float | None = None
        self.breaks: frozenset[int] = frozenset()
        self._places: list[tuple[float, float, float, int, int]] = []
        #: flowing, the rows from ``spare_from`` on may be left out (from the last) to keep
        #: the legend within ``max_height``; ``dropped`` says how many were, and one line
        #: counts them
        self.spare_from: int | None = None
        self.max_height: float | None = None
        self.dropped = 0
        #: the legend's height with every row (more than its height when rows were dropped)
        self.full_height = 0.0
        self._flowed: list[tuple[str, tuple | None]] = []
        #: how many times its rows were laid out (each may pass through another size)
        self.layouts = 0
        #: called with no argument when the user drags the legend
        self.on_dragged = None
        #: called with no argument: the scene rectangles a drag may not cover (the axes)
        self.keep_clear = None

    def setParentItem(self, parent) -> None:
        super().setParentItem(parent)
        self.anchor(itemPos=(0, 0), parentPos=(0, 0), offset=self._offset)

    def set_style(self, brush: QBrush, pen: QPen, text_color: QColor, font: QFont) -> None:
        self._brush, self._pen, self._text_pen = brush, pen, QPen(text_color)
        self._base_font = font
        self.set_zoom(self.zoom, force=True)

    def set_zoom(self, zoom: float, force: bool = False) -> None:
        """Draw the legend ``zoom`` times its size: type, samples and spacing (not a scaled
        item: a figure file keeps its shapes in page units, like the other texts')."""
        if float(zoom) == self.zoom and not force:
            return
        self.zoom = float(zoom)
        for name in ("MARGIN", "SAMPLE", "GAP", "ROW", "COLUMN_GAP"):
            setattr(self, name, getattr(Legend, name) * self.zoom)
        font = QFont(self._base_font)
        if self.zoom != 1.0:  # whole pixels: a figure file keeps whole sizes
            font.setPixelSize(max(1, math.floor(self.base_pixels() * self.zoom + 1e-6)))
        self._font = font
        self._resize()

    def base_pixels(self) -> float:
        """The legend's type size at zoom 1, in pixels."""
        font = self._base_font
        return font.pointSizeF() * 96.0 / 72.0 if font.pointSizeF() > 0 else font.pixelSize()

    def set_rows(self, rows: list[tuple[str, tuple | None]], breaks=(),
                 spare_from: int | None = None, counts=()) -> None:
        """``(text, sample)`` per row; a sample is ``(line_pen, symbol, size, pen, brush)``
        (``line_pen`` or ``symbol`` may be ``None``), or ``None`` for a text-only row.
        ``breaks``: the rows that start a new line when the rows flow (:meth:`set_flow`)."""
        self.rows = rows
        self.breaks = frozenset(breaks)
        self.spare_from = spare_from
        #: how many operations each row from ``spare_from`` on names
        self.counts = list(counts)
        self._resize()

    def set_max_height(self, height: float | None) -> None:
        """Flowing, leave rows out (see :attr:`spare_from`) to stay within ``height``."""
        self.max_height = height
        self._resize()

    def set_flow(self, width: float | None) -> None:
        """Lay the rows out side by side in lines at most ``width`` wide (``None``: in
        columns)."""
        if width is None and self.flow is None:
            return
        self.flow = width
        self._resize()

    def shown_rows(self) -> list[tuple[str, tuple | None]]:
        if self._places:
            return self._flowed
        return [(self.COLLAPSED, None)] if self.collapsed and self.rows else self.rows

    def set_collapsed(self, collapsed: bool) -> None:
        self.collapsed = collapsed
        self._resize()

    def set_columns(self, columns: int) -> None:
        self.columns = max(1, int(columns))
        self._resize()

    def width_in(self, columns: int) -> float:
        """The legend's width laid out in ``columns`` columns."""
        return 2 * self.MARGIN + columns * self._column_width() + (columns - 1) * self.COLUMN_GAP

    def _column_width(self) -> float:
        return self.SAMPLE + self.GAP + math.ceil(self._text_width) + 2

    def _per_column(self) -> int:
        rows = self.shown_rows()
        return max(1, math.ceil(len(rows) / max(1, min(self.columns, len(rows)))))

    def attach_corner(self, view, corner: str, margin: float) -> None:
        """Anchor the legend in ``corner`` (``top-left`` …) of ``view``, ``margin`` in."""
        if self.parentItem() is not view:
            pg.GraphicsWidget.setParentItem(self, view)
        fx = 1 if corner.endswith("right") else 0
        fy = 1 if corner.startswith("bottom") else 0
        self.anchor(itemPos=(fx, fy), parentPos=(fx, fy),
                    offset=(-margin if fx else margin, -margin if fy else margin))

    def attach_outside(self, plot, view, side: str) -> None:
        """Anchor the legend in ``plot`` right of (``side="right"``) or below ``view``."""
        if self.parentItem() is not plot:
            pg.GraphicsWidget.setParentItem(self, plot)
        top_left = view.mapRectToItem(plot, view.boundingRect()).topLeft()
        if side == "right":
            self.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-4, top_left.y()))
        else:  # below, from the plot's left edge when it would not fit from the axis
            width = self.width()
            x = top_left.x() if top_left.x() + width <= plot.width() - 4 else 6.0
            self.anchor(itemPos=(0, 1), parentPos=(0, 1), offset=(x, -4))

    def _advance(self, metrics: QFontMetricsF, text: str) -> float:
        """``metrics.horizontalAdvance(text)``, kept per text for the current font (a long
        key is measured again at every size the legend tries while texts are placed)."""
        width = self._widths.get(text)
        if width is None:
            if len(self._widths) > 4096:
                self._widths.clear()
            width = self._widths[text] = metrics.horizontalAdvance(text)
        return width

    _widths: ClassVar[dict] = {}  # (shared by every label: measured once)
    _widths_font = None

    def _resize(self) -> None:
        self.layouts += 1
        metrics = QFontMetricsF(self._font)
        font = (self._font.key(), self._font.pixelSize(), self._font.pointSizeF())
        if font != self._widths_font:
            self._widths, self._widths_font = {}, font
        self._row_height = max(self.ROW, math.ceil(metrics.height()) + 4 * self.zoom)
        self._places = []
        self.dropped = 0
        rows = self.shown_rows()
        self._text_width = max((self._advance(metrics, text) for text, _ in rows),
                               default=0.0)
        if self.flow is not None and rows and not self.collapsed:
            self._flow_rows(metrics, rows)
            self.full_height = self.height()
            spare = self.spare_from
            if (self.max_height is not None and spare is not None
                    and self.height() > self.max_height):
                for keep in range(len(rows) - 1, spare - 1, -1):
                    self.dropped = len(rows) - keep
                    left_out = self.counts[keep - spare:] if self.counts else rows[keep:]
                    more = sum(left_out) if self.counts else len(left_out)
                    self._flow_rows(metrics, rows[:keep] + [(f"and {more} more operations",
                                                             None)])
                    if self.height() <= self.max_height:
                        break
            self.update()
            return
        per = self._per_column()
        columns = max(1, math.ceil(len(rows) / per)) if rows else 1
        height = 2 * self.MARGIN + self._row_height * (per if rows else 0)
        self.setGeometry(0, 0, self.width_in(columns), height)
        self.full_height = height
        self.update()

    def _row_width(self, metrics: QFontMetricsF, text: str, sample) -> float:
        lead = self.SAMPLE + self.GAP if sample is not None else 0.0
        return lead + math.ceil(self._advance(metrics, text)) + 2

    #: flowing rows: less air than in columns (a key below a small figure is dense text)
    FLOW_GAP = 10.0
    FLOW_MARGIN = 4.0

    def _flow_rows(self, metrics: QFontMetricsF, rows) -> None:
        """Rows side by side, left to right, a new line when the next would pass the flow
        width (or starts one: :attr:`breaks`); a row wider than a whole line wraps onto as
        many lines as it needs (a long kernel name is never cut)."""
        z = self.zoom
        margin, gap = self.FLOW_MARGIN * z, self.FLOW_GAP * z
        self._row_height = h = math.ceil(metrics.height()) + z
        room = max(1.0, float(self.flow) - 2 * margin)
        self._places = []
        self._flowed = list(rows)
        x = y = widest = 0.0
        for i, (text, sample) in enumerate(rows):
            lead = self.SAMPLE + self.GAP if sample is not None else 0.0
            w = self._row_width(metrics, text, sample)
            lines, flags = 1, 0
            if w > room:  # wrapped: from the start of a line, as high as its lines
                text_w = max(1.0, room - lead)
                # (broken at its spaces, where it has them: not inside "fp32/fp32 vector"
                # joined by no-break spaces, which Qt's wrap would break after a slash)
                text = _broken_at_spaces(metrics, text, text_w + 1, self._advance)
                self._flowed[i] = (text, sample)
                words = max((self._advance(metrics, t) for t in text.split()), default=0)
                flags = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop) | int(
                    Qt.TextFlag.TextWordWrap if words <= text_w else Qt.TextFlag.TextWrapAnywhere)
                # (measured in the width it is drawn in: a row measured as two lines but
                # drawn in one left a blank line under it)
                lines = max(1, round(metrics.boundingRect(
                    QRectF(0, 0, text_w + 1, 1e6), flags, text).height() / metrics.height()))
                w = room
            if x > 0 and (i in self.breaks or x + w > room or lines > 1):
                x, y = 0.0, y + h
            self._places.append((margin + x, margin + y, w - lead, lines, flags))
            widest = max(widest, x + w)
            if lines > 1:
                x, y = 0.0, y + h * lines
            else:
                x += w + gap
        bottom = y + h if x > 0 else y
        self.setGeometry(0, 0, 2 * margin + widest, 2 * margin + bottom)

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.width(), self.height())

    def paint(self, p, *args) -> None:
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(self._pen)
        p.setBrush(self._brush)
        p.drawRect(self.boundingRect())
        p.setFont(self._font)
        h = self._row_height
        per = self._per_column()
        step = self._column_width() + self.COLUMN_GAP
        places = self._places
        for i, (text, sample) in enumerate(self.shown_rows()):
            lines = 1
            if places:
                left, top, text_w, lines, flags = places[i]
                x_text = left + (self.SAMPLE + self.GAP if sample is not None else 0.0)
            else:
                top = self.MARGIN + (i % per) * h
                left = self.MARGIN + (i // per) * step
                x_text = left + self.SAMPLE + self.GAP
            if sample is not None:
                line_pen, symbol, size, pen, brush = sample
                middle = top + h / 2
                if line_pen is not None:
                    p.setPen(line_pen)
                    p.drawLine(QPointF(left, middle), QPointF(left + self.SAMPLE, middle))
                if symbol is not None:
                    p.setPen(pen)
                    p.setBrush(brush)
                    p.drawPath(_symbol_path(symbol, size * self.zoom, left + self.SAMPLE / 2,
                                            middle))
            p.setPen(self._text_pen)
            if lines > 1:
                p.drawText(QRectF(x_text, top + (h - p.fontMetrics().height()) / 2,
                                  text_w + 1, h * lines), flags, text)
                continue
            p.drawText(QRectF(x_text, top, self._text_width + 2 + self.SAMPLE + self.GAP, h),
                       int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text)

    def hoverEvent(self, ev) -> None:
        ev.acceptDrags(Qt.MouseButton.LeftButton)

    def mouseDragEvent(self, ev) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            to = self._within_parent(self.pos() + ev.pos() - ev.lastPos())
            if self._covers_kept_clear(to):
                return  # (not over an axis, its numbers or its title)
            self.autoAnchor(to)
            if self.on_dragged is not None:
                self.on_dragged()

    def _within_parent(self, pos):
        """``pos`` moved as little as needs be for the legend to lie within its parent (the
        plot's area, or the chart beside it)."""
        parent = self.parentItem()
        if parent is None:
            return pos
        room = parent.boundingRect()
        x = min(max(pos.x(), room.left()), max(room.left(), room.right() - self.width()))
        y = min(max(pos.y(), room.top()), max(room.top(), room.bottom() - self.height()))
        return pg.Point(x, y)

    def _covers_kept_clear(self, pos) -> bool:
        """Whether the legend at ``pos`` would cover one of the scene rectangles
        :attr:`keep_clear` gives."""
        if self.keep_clear is None or self.parentItem() is None:
            return False
        box = self.parentItem().mapRectToScene(QRectF(pos.x(), pos.y(), self.width(),
                                                      self.height()))
        return any(box.intersects(rect) for rect in self.keep_clear())

    def mouseClickEvent(self, ev) -> None:
        if ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.set_collapsed(not self.collapsed)
