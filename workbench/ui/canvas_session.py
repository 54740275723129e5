"""What the canvas shows of the session it draws, and of nothing else.

:class:`SessionViewMixin` is a part of :class:`~workbench.ui.canvas.RooflineCanvas`: another
session (New, Open, an example) starts with nothing of the last one's (the legend's dragged
place, its being collapsed, rows painted outside the plot), and while drawn points lie
outside the view (an edit moved them there, or a zoom) a note over the plot counts them; a
click on it, like Ctrl+0, fits the view to them. :meth:`point_colors` reports each point's
colour as drawn.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QFrame, QLabel, QPushButton

#: Reasons listed in the tip of the "not drawn" note; the Results table lists every one.
MAX_NOTES_IN_TIP = 20


class SessionViewMixin:
    """Session switching and the points-outside note of the canvas (see the module)."""

    def _init_session_view(self) -> None:
        self.outside_hint = QPushButton(self)
        self.outside_hint.setObjectName("outside_hint")
        self.outside_hint.setCursor(Qt.CursorShape.PointingHandCursor)
        self.outside_hint.setToolTip("Fit to Data (Ctrl+0)")
        self.outside_hint.clicked.connect(self.fit_to_data)
        self.outside_hint.hide()
        self._outside = 0
        #: what could not be drawn (a pair a machine cannot run, an operation that cannot be
        #: counted, a value off the log scale), said over the plot, the reasons as its tip
        self.not_drawn_hint = QLabel(self)
        self.not_drawn_hint.setObjectName("not_drawn_hint")
        self.not_drawn_hint.setFrameShape(QFrame.Shape.StyledPanel)
        self.not_drawn_hint.setAutoFillBackground(True)
        self.not_drawn_hint.setMargin(3)
        self.not_drawn_hint.hide()
        #: the session drawn: another one starts with nothing of this one's
        self._session_shown = self.workspace.document.session

    def point_colors(self) -> dict[tuple[int, int], str]:
        """``{(op_id, hw_id): "#rrggbb"}``: the colour of every drawn point, as drawn: its
        fill, or the ring of a hollow (overhead-bound) marker."""
        out = {}
        drawn = [(self._scatter_for[hw_id], keys) for hw_id, keys in self._scatter_keys.items()
                 if hw_id in self._scatter_for]
        live = [[key] for key in self._live_keys]
        for scatter, spots in [*drawn, (self._live, live)]:
            for keys, spot in zip(spots, scatter.points(), strict=True):
                color = spot.brush().color()
                name = (color if color.alpha() else spot.pen().color()).name()
                out.update((key, name) for key in keys)
        return out

    def _forget_session(self) -> None:
        """Another session: where the user dragged the legend, or that it was collapsed,
        belonged to the last one; the whole chart is painted afresh (a legend that was
        outside the plot left its rows on screen where the new chart has none)."""
        self._session_shown = self.workspace.document.session
        self.legend_user_placed = False
        if self._legend.collapsed:
            self._legend.set_collapsed(False)
        self._legend_key = ()
        self.plot_widget.viewport().update()

    def _count_outside(self) -> None:
        """Show how many drawn points lie outside the view (hidden when none)."""
        xy = self._hover_xy
        outside = 0
        if len(xy):
            (x0, x1), (y0, y1) = self._vb.viewRange()
            outside = int(np.count_nonzero((xy[:, 0] < x0) | (xy[:, 0] > x1)
                                           | (xy[:, 1] < y0) | (xy[:, 1] > y1)))
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
            self._place_outside_hint()

    def _show_not_drawn(self, notes: tuple[str, ...]) -> None:
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
        self._place_outside_hint()

    def not_drawn_text(self) -> str:
        """The note over the plot about what could not be drawn ("" when none)."""
        return self.not_drawn_hint.text() if self.not_drawn_hint.isVisibleTo(self) else ""

    def _place_outside_hint(self) -> None:
        """The notes over the plot, in its lower right corner (under the flat roofs, where a
        roofline chart is emptiest), clear of the axes and the title: the points outside the
        view lowest, what could not be drawn above it."""
        plot = self.plot_widget
        area = plot.mapFromScene(self._vb.sceneBoundingRect()).boundingRect().translated(
            plot.mapTo(self, QPoint(0, 0)))
        bottom = min(area.bottom(), self.height()) - 8
        for hint in (self.outside_hint, self.not_drawn_hint):
            if hint.isHidden():
                continue
            x = max(0, min(area.right(), self.width()) - hint.width() - 8)
            y = max(0, bottom - hint.height())
            hint.move(x, y)
            bottom = y - 4
