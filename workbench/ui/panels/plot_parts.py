"""Parts of the bottom row's plots: an axis of parameter values or times, the page that
holds a plot's place until the plot is built, a plot widget that says when it is resized,
the pens, brushes and ranges a plot keeps from one refresh to the next, and points along a
plot's lines."""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QKeyEvent, QKeySequence, QPen
from PySide6.QtWidgets import QFrame, QGraphicsScene, QGraphicsView, QMenu, QWidget

from workbench.model.units import format_quantity
from workbench.ui.chart.axes import LogAxis, PlotWidget
from workbench.ui.chart.theme import make_brush, make_pen

__all__ = ["PlotPlace", "ResizedPlotWidget", "ValueAxis", "figure_key", "figure_menu",
           "kept_brush", "kept_pen", "points_along", "pop_up", "same_range"]


def same_range(shown, wanted) -> bool:
    """Whether the view range ``shown`` is ``wanted`` to far below a pixel (a millionth of
    the span): an edit that moves the curves that little leaves the axes as they are."""
    span = abs(wanted[1] - wanted[0]) or 1.0
    return (abs(shown[0] - wanted[0]) <= 1e-6 * span
            and abs(shown[1] - wanted[1]) <= 1e-6 * span)


def points_along(xs: np.ndarray, ys: np.ndarray, step: float) -> np.ndarray:
    """Points along the polyline through ``(xs, ys)``, its corners among them, at most
    ``step`` apart (rows ``x, y``)."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if len(x) < 2:
        return np.column_stack((x, y))
    counts = np.maximum(1, np.ceil(np.hypot(np.diff(x), np.diff(y)) / step).astype(int))
    starts = np.repeat(np.arange(len(x) - 1), counts)
    t = np.arange(len(starts)) - np.repeat(np.cumsum(counts) - counts, counts)
    t = t / np.repeat(counts, counts)
    return np.vstack((np.column_stack((x[starts] + (x[starts + 1] - x[starts]) * t,
                                       y[starts] + (y[starts + 1] - y[starts]) * t)),
                      [[x[-1], y[-1]]]))


@functools.lru_cache(maxsize=64)
def kept_pen(color: str, width: float) -> QPen:
    """:func:`make_pen`, one object for each look: a scatter keeps a picture of its symbol
    for each pen and brush object it is given (a new pen at each refresh drew the symbols
    again, and kept every picture)."""
    return make_pen(color, width)


@functools.lru_cache(maxsize=64)
def kept_brush(color: str) -> QBrush:
    """:func:`make_brush`, one object for each colour (see :func:`kept_pen`)."""
    return make_brush(color)


class ValueAxis(LogAxis):
    """A log axis for parameter values (plain numbers) or times (``"time"``); linear when
    ``log`` is false."""

    log = True

    def tickStrings(self, values, scale, spacing):
        if not self.log:
            return pg.AxisItem.tickStrings(self, values, scale, spacing)
        return super().tickStrings(values, scale, spacing)

    def format_value(self, value: float) -> str:
        if self.quantity == "time":
            return format_quantity(value, "time")
        return super().format_value(value)


class PlotPlace(QGraphicsView):
    """Holds the plot's page until the plot is built. A graphics view's size hint follows
    its own size (its scene rect; pyqtgraph sets it on every resize), so this one does the
    same: the docks are laid out exactly as with the plot itself."""

    def __init__(self) -> None:
        super().__init__()
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setScene(QGraphicsScene(self))
        self.setSceneRect(QRectF(0, 0, self.width(), self.height()))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.setSceneRect(QRectF(0, 0, self.width(), self.height()))


class ResizedPlotWidget(PlotWidget):
    """The plot's widget, saying when it has been resized (a hidden dock's plot is resized
    as it is shown, the panel around it not again), and offering to copy or export the plot
    on a right click (pyqtgraph's own menu is off: its log entries would break the log10
    coordinates)."""

    resized = Signal()
    #: the plot's context menu: Copy Plot, Export Plot…
    copy_requested = Signal()
    export_requested = Signal()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.resized.emit()

    def context_menu(self) -> QMenu:
        """The menu a right click opens (not shown)."""
        return figure_menu(self, "Plot", self.copy_requested.emit, self.export_requested.emit)

    def contextMenuEvent(self, event) -> None:
        pop_up(self.context_menu(), event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not figure_key(self, event, self.copy_requested.emit, self.context_menu):
            super().keyPressEvent(event)


def figure_menu(parent, noun: str, copy, export) -> QMenu:
    """The menu a right click on a plot opens: Copy ``noun`` (the figure Export writes, as
    an image) and Export ``noun``…, calling ``copy`` and ``export``."""
    menu = QMenu(parent)
    menu.addAction(f"&Copy {noun}", copy)
    menu.addAction(f"E&xport {noun}…", export)
    return menu


def figure_key(widget: QWidget, event: QKeyEvent, copy, menu) -> bool:
    """A key pressed on a focused plot: Ctrl+C copies it (``copy``), Shift+F10 opens its
    context menu (``menu()``) at its middle, as the Menu key does (Qt sends that one as a
    context menu event). Whether the key was one of these."""
    if event.matches(QKeySequence.StandardKey.Copy):
        copy()
    elif (event.key() == Qt.Key.Key_F10
          and event.modifiers() == Qt.KeyboardModifier.ShiftModifier):
        shown = menu()
        shown.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        shown.popup(widget.mapToGlobal(widget.rect().center()))
    else:
        return False
    event.accept()
    return True


def pop_up(menu: QMenu, event) -> None:
    """Show ``menu`` where the context menu ``event`` asks, gone once closed."""
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    menu.popup(event.globalPos())
    event.accept()
