"""What the canvas shows of the session it draws, and of nothing else.

:class:`SessionView` is a part of :class:`~workbench.ui.chart.canvas.RooflineCanvas`; it owns the
session drawn and the notes over the plot. Another session (New, Open, an example) starts
with nothing of the last one's (the legend's dragged place, its being collapsed, rows
painted outside the plot), and while drawn points lie outside the view (an edit moved them
there, or a zoom) a note over the plot counts them; a click on it, like Ctrl+0, fits the
view to them. Another note counts what the scene could not draw, the reasons in its tip.

An operation, a whole model or a machine the user adds is brought into view: where its
points land outside the view, the view grows to take them in, keeping all it showed (a
zoom is not undone; an edit that moves points, an undo that restores them and a session
opened are not additions: the note counts what they leave outside). The view is no part
of the document: this is no edit and nothing to undo.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QFrame, QLabel, QPushButton

from workbench.document.changes import Change, What
from workbench.ui.chart.axes import to_view

#: Reasons listed in the tip of the "not drawn" note; the Results table lists every one.
MAX_NOTES_IN_TIP = 20
#: The room a view grown to take in added points leaves beyond them, as a share of the grown
#: view's span (their markers and names stay clear of the edge).
ADDED_MARGIN = 0.06


class SessionView:
    """Session switching and the notes over the plot (see the module)."""

    def __init__(self, canvas) -> None:
        self._canvas = canvas
        self.outside_hint = QPushButton(canvas)
        self.outside_hint.setObjectName("outside_hint")
        self.outside_hint.setCursor(Qt.CursorShape.PointingHandCursor)
        self.outside_hint.setToolTip("Fit to Data (Ctrl+0)")
        self.outside_hint.clicked.connect(canvas.fit_to_data)
        self.outside_hint.hide()
        self._outside = 0
        #: what could not be drawn (a pair a machine cannot run, an operation that cannot be
        #: counted, a value off the log scale), said over the plot, the reasons as its tip
        self.not_drawn_hint = QLabel(canvas)
        self.not_drawn_hint.setObjectName("not_drawn_hint")
        self.not_drawn_hint.setFrameShape(QFrame.Shape.StyledPanel)
        self.not_drawn_hint.setAutoFillBackground(True)
        self.not_drawn_hint.setMargin(3)
        self.not_drawn_hint.hide()
        #: the session drawn: another one starts with nothing of this one's
        self._session_shown = canvas.workspace.document.session
        #: the operations, models and machines of the session drawn seen so far (one
        #: never seen is an addition)
        self._known: tuple[set[int], set[int], set[int]] = (set(), set(), set())
        self._know_all()

    def other_session(self) -> bool:
        """Whether the document's session is another than the one drawn."""
        return self._canvas.workspace.document.session is not self._session_shown

    def forget_session(self) -> None:
        """Another session: where the user dragged the legend, or that it was collapsed,
        belonged to the last one; the whole chart is painted afresh (a legend that was
        outside the plot left its rows on screen where the new chart has none)."""
        canvas = self._canvas
        self._session_shown = canvas.workspace.document.session
        self._known = (set(), set(), set())
        self._know_all()
        canvas.legend.forget_session()
        canvas.plot_widget.viewport().update()

    def _know_all(self) -> None:
        session = self._canvas.workspace.document.session
        ops, models, machines = self._known
        ops.update(e.id for e in session.operations)
        models.update(m.id for m in session.models)
        machines.update(e.id for e in session.hardware)

    def _added(self, change: Change) -> tuple[set[int], set[int]]:
        """The operations and machines ``change`` added: every entry it names is in the
        session now (a whole model laid out afresh names the operations it replaced) and
        none was seen before (an undo that restores them is no addition), an operation of a
        whole model only with its model (a model's new layout is an edit)."""
        session = self._canvas.workspace.document.session
        ops, models, machines = self._known
        ids = set(change.ids)
        if change.what == What.OPERATIONS:
            present = {e.id for e in session.operations}
            if not ids or not ids <= present or ids & ops:
                return set(), set()
            new_models = {m.id for m in session.models} - models
            return {i for i in ids if (m := session.model_of(i)) is None
                    or m.id in new_models}, set()
        if change.what == What.MACHINES:
            present = {e.id for e in session.hardware}
            if not ids or not ids <= present or ids & machines:
                return set(), set()
            return set(), ids
        return set(), set()

    def show_added(self, change: Change) -> None:
        """After the chart was rebuilt for ``change``: where it added operations or machines
        whose points lie outside the view, grow the view to take them in (see the module)."""
        added_ops, added_machines = self._added(change)
        self._know_all()
        if not (added_ops or added_machines):
            return
        canvas = self._canvas
        new = [(x, y) for op, hw, x, y in canvas.point_items()
               if op in added_ops or hw in added_machines]
        if not new:
            return
        xy = to_view(np.asarray(new, dtype=float))
        (x0, x1), (y0, y1) = canvas.view_box.viewRange()
        ranges = []
        for lo, hi, values in ((x0, x1, xy[:, 0]), (y0, y1, xy[:, 1])):
            vmin, vmax = float(values.min()), float(values.max())
            new_lo, new_hi = min(lo, vmin), max(hi, vmax)
            pad = ADDED_MARGIN * (new_hi - new_lo)
            ranges.append((new_lo - pad if vmin < lo + pad else lo,
                           new_hi + pad if vmax > hi - pad else hi))
        if ranges == [(x0, x1), (y0, y1)]:
            return
        canvas.view_box.setRange(xRange=ranges[0], yRange=ranges[1], padding=0.0)
        # the texts placed for the view as it was, now: not a moment after, as after a zoom
        # (until then they would hang beside other points, their leaders pointing nowhere)
        canvas.relayout()

    def count_outside(self) -> None:
        """Show how many drawn points lie outside the view (hidden when none)."""
        outside = self._canvas.points.outside(self._canvas.view_box.viewRange())
        hint = self.outside_hint
        if outside != self._outside:
            self._outside = outside
            if outside:
                noun = "point" if outside == 1 else "points"
                hint.setText(f"{outside} {noun} outside the view — Ctrl+0 shows all")
                hint.adjustSize()
                hint.show()
                hint.raise_()
            else:
                hint.hide()
        if outside:
            self.place_hints()

    def show_not_drawn(self, notes: tuple[str, ...]) -> None:
        """Count what the scene could not draw over the plot, each reason in the tip (hidden
        when everything is drawn)."""
        hint = self.not_drawn_hint
        if not notes:
            hint.hide()
            return
        noun = "pair" if len(notes) == 1 else "pairs"
        hint.setText(f"{len(notes)} {noun} not drawn — hover for why")
        shown = list(notes[:MAX_NOTES_IN_TIP])
        if len(notes) > len(shown):
            shown.append(f"… and {len(notes) - len(shown)} more (the Results table lists each)")
        hint.setToolTip("\n".join(shown))
        hint.adjustSize()
        hint.show()
        hint.raise_()
        self.place_hints()

    def not_drawn_text(self) -> str:
        """The note over the plot about what could not be drawn ("" when none)."""
        hint = self.not_drawn_hint
        return hint.text() if hint.isVisibleTo(self._canvas) else ""

    def place_hints(self) -> None:
        """The notes over the plot, in its lower right corner (under the flat roofs, where a
        roofline chart is emptiest), clear of the axes and the title: the points outside the
        view lowest, what could not be drawn above it. Where the legend lies there, in the
        next corner it leaves free (lower left, upper right, upper left); of those, the
        first that hides none of the chart's texts and markers, else the one hiding fewest
        (a note is opaque: a marker or a tag under it is lost to the reader)."""
        canvas = self._canvas
        hints = [h for h in (self.outside_hint, self.not_drawn_hint) if not h.isHidden()]
        if not hints:
            return
        to_canvas = canvas.plot_widget.mapTo(canvas, QPoint(0, 0))
        area = self._rect_in_canvas(canvas.view_box.sceneBoundingRect(), to_canvas)
        area = area.intersected(canvas.rect()).adjusted(8, 8, -8, -8)
        legend = canvas.legend_item
        avoid = (self._rect_in_canvas(legend.sceneBoundingRect(), to_canvas)
                 if legend.isVisible() else None)
        drawn = self._in_canvas(self._drawn_boxes(), to_canvas)
        places = best = None
        for right, low in ((True, True), (False, True), (True, False), (False, False)):
            places = self._stacked(hints, area, right, low)
            if avoid is not None and any(r.intersects(avoid) for r in places):
                continue
            hidden = _hidden(drawn, places)
            if best is None or hidden < best[0]:
                best = (hidden, places)
            if not hidden:
                break
        if best is not None:
            places = best[1]
        for hint, rect in zip(hints, places, strict=True):
            hint.move(max(0, rect.left()), max(0, rect.top()))

    def _drawn_boxes(self) -> np.ndarray:
        """The boxes of the chart's texts and of its operations' markers in view, in the
        plot's scene pixels (rows ``left, top, right, bottom``): what a note must not
        hide."""
        canvas = self._canvas
        texts = np.array([box for _kind, _text, box in canvas.shown_texts()],
                         dtype=float).reshape(-1, 4)
        (x0, x1), (y0, y1) = canvas.view_box.viewRange()
        xy = canvas.points.xy
        if not len(xy):
            return texts
        inside = (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)
        half = canvas.theme.point_size / 2
        pixels = canvas.points.pixels(canvas.view_to_scene())[inside]
        return np.vstack((texts, np.hstack((pixels - half, pixels + half))))

    def _rect_in_canvas(self, scene_rect: QRectF, to_canvas: QPoint) -> QRect:
        """The canvas pixels a scene rectangle covers, as the view maps it."""
        plot = self._canvas.plot_widget
        return plot.mapFromScene(scene_rect).boundingRect().translated(to_canvas)

    def _in_canvas(self, boxes: np.ndarray, to_canvas: QPoint) -> np.ndarray:
        """Scene rectangles (rows ``left, top, right, bottom``) as the pixels they cover in
        the canvas (rows of inclusive ``left, top, right, bottom``), as the view maps one
        (``QGraphicsView.mapFromScene``: each corner rounded to a pixel, then their bounding
        rectangle), all at once."""
        t = self._canvas.plot_widget.viewportTransform()
        if t.type().value > QTransform.TransformationType.TxScale.value or not len(boxes):
            out = np.zeros((len(boxes), 4), dtype=np.int64)
            for i, (left, top, right, bottom) in enumerate(boxes.tolist()):
                r = self._rect_in_canvas(QRectF(left, top, right - left, bottom - top),
                                         to_canvas)
                out[i] = r.left(), r.top(), r.right(), r.bottom()
            return out
        # (no rotation: each side maps on its own; rounded as QPointF.toPoint rounds)
        xs = _rounded(boxes[:, 0::2] * t.m11() + t.dx())
        ys = _rounded(boxes[:, 1::2] * t.m22() + t.dy())
        return np.column_stack((xs.min(axis=1) + to_canvas.x(), ys.min(axis=1) + to_canvas.y(),
                                xs.max(axis=1) + to_canvas.x(), ys.max(axis=1) + to_canvas.y()))

    @staticmethod
    def _stacked(hints, area, right: bool, low: bool) -> list:
        """The notes' boxes stacked in one corner of ``area``: the first in the corner."""
        out = []
        edge = area.bottom() if low else area.top()
        for hint in hints:
            x = area.right() - hint.width() if right else area.left()
            y = edge - hint.height() if low else edge
            out.append(QRect(x, y, hint.width(), hint.height()))
            edge = y - 4 if low else y + hint.height() + 4
        return out


def _hidden(drawn: np.ndarray, places: list[QRect]) -> int:
    """How many of the pixel boxes ``drawn`` (rows of inclusive ``left, top, right,
    bottom``) meet any of ``places`` (as ``QRect.intersects`` says: a pixel in both)."""
    if not len(drawn):
        return 0
    meets = np.zeros(len(drawn), dtype=bool)
    for r in places:
        if r.isEmpty():
            continue
        meets |= ((drawn[:, 0] <= r.right()) & (r.left() <= drawn[:, 2])
                  & (drawn[:, 1] <= r.bottom()) & (r.top() <= drawn[:, 3]))
    return int(np.count_nonzero(meets))


def _rounded(v: np.ndarray) -> np.ndarray:
    """``v`` rounded to whole pixels as Qt's ``qRound`` rounds (halves away from zero)."""
    return np.where(v >= 0, np.floor(v + 0.5), np.ceil(v - 0.5)).astype(np.int64)
