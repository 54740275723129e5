"""The mouse over the chart: what is under it, its tooltip, the status read-out, clicks.

:class:`Hover` owns the hovered mark (an operation's point, an overlay's mark, or with
neither near a roof line) and its tooltip text; it picks the nearest mark among the points
(:mod:`workbench.ui.chart.points`) and the overlays (:mod:`workbench.ui.chart.overlay_items`),
else the nearest roof (:mod:`workbench.ui.chart.roofs`). A part of
:class:`~workbench.ui.chart.canvas.RooflineCanvas`.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6 import QtGui
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, QTimer
from PySide6.QtWidgets import QApplication, QGraphicsView, QMenu, QToolTip

from workbench.ui.chart.axes import to_data
from workbench.ui.widgets import escape_html

#: Hover and click pick the nearest point within this many pixels.
PICK_RADIUS = 10.0
#: With no point that near, hover names the roof line within this many pixels.
ROOF_RADIUS = 4.0
#: While the read-out speaks, whether the pointer is still over the plot is looked at this
#: often, milliseconds (a pointer that left without the plot being told: see
#: :meth:`Hover.watch`)
WATCH_MS = 250


def plain_tip(text: str) -> str:
    """``text`` as a tooltip shows it as written: Qt reads a tip whose first line holds
    something like a tag (an operation named ``x<b>y</b>``) as markup, drawing the name as
    markup and running its lines together; such a tip is given as escaped text whose line
    breaks are kept."""
    if not QtGui.Qt.mightBeRichText(text):
        return text
    return f"<p style='white-space:pre'>{escape_html(text)}</p>"


class HoverTip(QObject):
    """A plot's tooltip, shown as the pointer moves onto a mark and kept while it rests there.

    Qt asks for a tooltip about a second after the pointer stops; a plot's scene answers
    with its items' own tooltips, none here, and so hid the tip being read: a point's nine
    lines went away after a second. While a tip is shown that request is answered here."""

    def __init__(self, plot: QGraphicsView) -> None:
        super().__init__(plot)
        self._plot = plot
        self._text = ""
        self._where = QPoint()
        self._rect = QRect()
        plot.viewport().installEventFilter(self)

    @property
    def text(self) -> str:
        return self._text

    def show(self, pixel: QPoint, text: str, rect: QRect | None = None) -> None:
        """Show ``text`` beside ``pixel`` (the plot's coordinates); it hides once the pointer
        leaves ``rect`` (the plot's coordinates) where given."""
        self._text = text
        self._where = self._plot.mapToGlobal(pixel) + QPoint(14, 14)
        self._rect = rect if rect is not None else QRect()
        QToolTip.showText(self._where, plain_tip(text), self._plot, self._rect)

    def retext(self, text: str) -> None:
        """A tip shown says ``text`` instead, where it is (the mark it speaks of changed)."""
        if self._text:
            self._text = text
            QToolTip.showText(self._where, plain_tip(text), self._plot, self._rect)

    def hide(self) -> None:
        if self._text:
            self._text = ""
            QToolTip.hideText()

    def eventFilter(self, watched, event) -> bool:
        if event.type() != QEvent.Type.ToolTip or not self._text:
            return False
        # the tip shown is kept (shown again where something else hid it): the scene's
        # answer would hide it
        QToolTip.showText(self._where, plain_tip(self._text), self._plot, self._rect)
        return True


class WindowMoves(QObject):
    """Calls ``moved`` once the window it watches has moved or been resized (its layout
    settled): no pointer event tells a plot that it went from under a still pointer."""

    def __init__(self, plot: QGraphicsView, moved) -> None:
        super().__init__(plot)  # (gone with the plot, and its watch with it)
        self._moved = moved
        plot.window().installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.Type.Move, QEvent.Type.Resize):
            QTimer.singleShot(0, self, self._moved)
        return False


class Hover:
    """The mark under the mouse and what is said of it (see the module)."""

    def __init__(self, canvas) -> None:
        self._canvas = canvas
        self._key: tuple | None = None
        self._text = ""
        #: the status bar reads out the place under the pointer
        self._reading = False
        self._tip: HoverTip | None = None  # (made with the first tip: the plot exists then)
        self._window_moves: WindowMoves | None = None  # (made with the first read-out)
        self._watch: QTimer | None = None  # (made with the first read-out)

    def _shown_tip(self) -> HoverTip:
        if self._tip is None:
            self._tip = HoverTip(self._canvas.plot_widget)
        return self._tip

    @property
    def text(self) -> str:
        """Tooltip text of the mark under the mouse ("" when none)."""
        return self._text

    def forget(self) -> None:
        """Nothing hovered (the marks were drawn anew): a tip shown is of what was."""
        self._key = None
        self._text = ""
        if self._tip is not None:
            self._tip.hide()

    def forget_overlay(self) -> None:
        """Nothing hovered if an overlay's mark was (the overlays were drawn anew)."""
        if self._key is not None and self._key[0] == "overlay":
            self.forget()

    def refresh(self, op_ids) -> None:
        """After an edit moved these operations' points: a hovered one's tooltip says the
        new figures."""
        if self._key is not None and self._key[0] in op_ids:
            self._text = self._canvas.points.marks[self._key].tooltip
            if self._tip is not None:
                self._tip.retext(self._text)

    def nearest(self, scene_pos) -> tuple | None:
        """The key of the nearest point within :data:`PICK_RADIUS`: ``(op_id, hw_id)`` for an
        operation's point, ``("overlay", i)`` for a sweep sample, a crossing, a measured
        point or a compared pair's label (operation points win ties)."""
        canvas = self._canvas
        points = canvas.points
        best, best_d2 = None, PICK_RADIUS**2
        if len(points.xy):
            pts = points.pixels(canvas.view_to_scene())
            d2 = (pts[:, 0] - scene_pos.x()) ** 2 + (pts[:, 1] - scene_pos.y()) ** 2
            i = int(np.argmin(d2))
            if d2[i] <= best_d2:
                best, best_d2 = points.keys[i], d2[i]
        j = canvas.overlays.nearest(scene_pos, best_d2)
        if j is not None:
            best = ("overlay", j)
        return best

    def tooltip_of(self, key: tuple) -> str:
        """The tooltip of a mark (a key of :meth:`nearest`, ``("roof", i)`` or ``("ridge",
        i)``)."""
        if key[0] == "overlay":
            return self._canvas.overlays.tooltip(key[1])
        if key[0] == "roof":
            return self._canvas.roofs.roof_tip(key[1])
        if key[0] == "ridge":
            return self._canvas.roofs.ridge_tip(key[1])
        return self._canvas.points.tooltip(key)

    def left(self) -> None:
        """The pointer is off the plot: nothing hovered, no tooltip, and the status bar's
        read-out says nothing (it spoke of the place the pointer last was)."""
        if self._key is not None:
            self._key = None
            self._text = ""
            self._shown_tip().hide()
        if self._reading:
            self._reading = False
            self._canvas.cursor_text.emit("")
        if self._watch is not None:
            self._watch.stop()

    def watch(self) -> None:
        """While something is read out or hovered, look every :data:`WATCH_MS` whether the
        pointer is still over the plot, and say nothing once it is not: the plot is told
        that the pointer left by a Leave event, which a window system may not send (a
        pointer moved fast onto a popup, or onto another panel while a button is held); the
        read-out stayed, naming a place the pointer had left."""
        if self._watch is None:
            self._watch = QTimer(self._canvas)
            self._watch.setInterval(WATCH_MS)
            self._watch.timeout.connect(self._still_over)
        if not self._watch.isActive():
            self._watch.start()

    def _still_over(self) -> None:
        if self._pointer_on_plot() is None:
            self.left()  # (which stops the watch)

    def _pointer_on_plot(self) -> QPoint | None:
        """Where the pointer is (global coordinates) when it is over the plot, else None."""
        plot = self._canvas.plot_widget
        where = QtGui.QCursor.pos()
        under = QApplication.widgetAt(where)
        return where if under is not None and (under is plot or plot.isAncestorOf(under)) else None

    def recheck(self) -> None:
        """The plot moved or was resized under a still pointer (its window resized or moved,
        a panel beside it shown): the read-out and the hovered mark are of the place under
        the pointer now, and say nothing when the pointer is off the plot now."""
        if not self._reading and self._key is None:
            return
        where = self._pointer_on_plot()
        if where is None:
            self.left()
            return
        plot = self._canvas.plot_widget
        self.on_mouse_moved(plot.mapToScene(plot.viewport().mapFromGlobal(where)))

    def on_mouse_moved(self, scene_pos) -> None:
        canvas = self._canvas
        vb = canvas.view_box
        if not vb.sceneBoundingRect().contains(scene_pos):
            self.left()
            return
        self._reading = True
        if self._window_moves is None:
            self._window_moves = WindowMoves(canvas.plot_widget, self.recheck)
        self.watch()
        view = vb.mapSceneToView(scene_pos)
        x, y = float(to_data(view.x())), float(to_data(view.y()))
        key = self.nearest(scene_pos)
        if key is None:
            # a roof line says what it is (its value may have found no place on the plot),
            # as does its value's text (which may name no machine)
            roof = canvas.roofs.nearest_roof(scene_pos, ROOF_RADIUS)
            if roof is None:
                roof = canvas.roofs.roof_of_text(scene_pos)
            key = ("roof", roof) if roof is not None else None
            if key is None:  # (a ridge's text, which may name no machine)
                ridge = canvas.roofs.ridge_of_text(scene_pos)
                key = ("ridge", ridge) if ridge is not None else None
        scene = canvas.scene_model
        if scene is not None and math.isfinite(x) and math.isfinite(y):
            point = (canvas.points.marks.get(key)
                     if key is not None and key[0] not in ("overlay", "roof") else None)
            if point is not None:  # a point speaks of its own machine
                canvas.cursor_text.emit(scene.cursor_text(point.x, point.y).split(" — ")[0]
                                        + f" — {point.label}: {point.bound}-bound on "
                                        f"{point.machine}")
            else:
                # within 2 pixels of the roof counts as on it
                tolerance = 10.0 ** (2 * abs(vb.viewPixelSize()[1])) - 1
                canvas.cursor_text.emit(scene.cursor_text(x, y, tolerance))
        if key == self._key:
            return
        self._key = key
        if key is None:
            self._text = ""
            self._shown_tip().hide()
            return
        self._text = self.tooltip_of(key)
        pixel = canvas.plot_widget.mapFromScene(scene_pos)
        if key[0] in ("roof", "ridge"):  # (kept along the line or over the text: hidden
            # once the pointer leaves it)
            self._shown_tip().show(pixel, self._text)
            return
        r = int(PICK_RADIUS)
        # the tip hides as soon as the mouse leaves the picking circle's square
        self._shown_tip().show(pixel, self._text,
                               QRect(pixel.x() - r, pixel.y() - r, 2 * r, 2 * r))

    def on_mouse_clicked(self, event) -> None:
        canvas = self._canvas
        if event.button() == Qt.MouseButton.LeftButton:
            key = self.nearest(event.scenePos())
            if key is not None:
                op_id = canvas.overlays.operation_of(key[1]) if key[0] == "overlay" else key[0]
                if op_id is not None:
                    canvas.workspace.selection.select(op_id)
                event.accept()
            elif event.double():
                canvas.fit_to_data()
                event.accept()
        elif event.button() == Qt.MouseButton.RightButton:
            menu = QMenu(canvas)
            menu.addAction("&Fit to Data", canvas.fit_to_data)
            event.accept()
            menu.popup(event.screenPos().toPoint())
