"""How a cell of the results table is painted.

Every edit that moves a model's operations repaints the visible rows of the table: a hundred
cells or so, each with a new number. Qt's own delegate asks the model for seven roles of a
cell (a Python call each, or one through ``multiData``) and lays its text out three times
(to place it, to see whether it must be elided, to draw it). :class:`ResultsDelegate` paints
an ordinary cell (not selected, not current, not under the pointer, in a view laid out left
to right) as Qt's would: the same text, colour, background and place, the text laid out once.
The other cells it leaves to Qt's delegate. (A text's layout is not kept from one paint to
the next: a kept one refers to font engines Qt may drop meanwhile, and drawing one, after
the installed fonts had changed, crashed.)
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen, QStaticText, QTransform
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from workbench.ui.panels.results_model import COLUMNS, ResultsModel, ResultsProxy

__all__ = ["ResultsDelegate"]

_STATE = QStyle.StateFlag
#: states Qt's delegate paints in its own way (a highlight, a focus frame, a hover)
_QT_PAINTS = _STATE.State_Selected | _STATE.State_HasFocus | _STATE.State_MouseOver
_NUMERIC = tuple(column.numeric for column in COLUMNS)
_ELIDE = Qt.TextElideMode.ElideRight
_ALIGN = (Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
          Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class ResultsDelegate(QStyledItemDelegate):
    """Paints the cells of ``view`` (showing ``proxy`` of ``model``); see the module. What
    it keeps of the view's style, font and palette it forgets at :meth:`restyled`."""

    def __init__(self, view: QTableView, proxy: ResultsProxy, model: ResultsModel) -> None:
        super().__init__(view)
        self._view, self._proxy, self._model = view, proxy, model
        self._pens: dict[Any, QPen] = {}
        self._margin = 0
        self._mirrored = False  # (right to left: Qt's delegate mirrors each cell)
        self.restyled()
        # (the source row of each row shown, asked for once: the proxy's rows change only
        # when it sorts or filters, and it says so)
        self._rows: dict[int, int] = {}
        for signal in (proxy.layoutChanged, proxy.modelReset, proxy.rowsInserted,
                       proxy.rowsRemoved, proxy.rowsMoved):
            signal.connect(self._rows.clear)

    def restyled(self) -> None:
        """Forget the pens and margins: the view's style, font, palette or direction has
        changed."""
        view = self._view
        self._mirrored = view.layoutDirection() == Qt.LayoutDirection.RightToLeft
        self._pens.clear()
        # (as Qt's style: this much room each side of a cell's text)
        self._margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin,
                                                None, view) + 1

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        state = option.state
        if state & _QT_PAINTS or self._mirrored:
            super().paint(painter, option, index)
            return
        row = self._rows.get(index.row())
        if row is None:
            row = self._rows[index.row()] = self._proxy.mapToSource(index).row()
        col = index.column()
        text, foreground, background = self._model.look(row, col)
        rect = option.rect
        if background is not None:
            painter.fillRect(rect, background)
        if not text:
            return
        painter.setPen(self._pen(foreground, state, option))
        font = option.font
        painter.setFont(font)  # (Qt's draws the text in the cell's font)
        laid = QStaticText(text)
        laid.setTextFormat(Qt.TextFormat.PlainText)
        laid.prepare(QTransform(), font)
        size = laid.size()
        margin = self._margin
        width = rect.width() - 2 * margin
        if size.width() > width:  # (elided: rare, the columns fit their samples)
            painter.drawText(rect.adjusted(margin, 0, -margin, 0), _ALIGN[_NUMERIC[col]],
                             option.fontMetrics.elidedText(text, _ELIDE, width))
            return
        # (as Qt's: the line centred in the cell's height, at the left or the right)
        left = rect.x() + margin
        painter.drawStaticText(QPointF(left + width - size.width() if _NUMERIC[col] else left,
                                       rect.y() + rect.height() // 2 - int(size.height()) // 2),
                               laid)

    def _pen(self, color: QColor | None, state, option: QStyleOptionViewItem) -> QPen:
        """The pen of a cell's text: ``color``, or the palette's text colour for the
        view's ``state``."""
        if color is not None:
            key: Any = color.rgba()
        else:
            key = (QPalette.ColorGroup.Disabled if not state & _STATE.State_Enabled else
                   QPalette.ColorGroup.Inactive if not state & _STATE.State_Active else
                   QPalette.ColorGroup.Normal)
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = QPen(color if color is not None else
                                         option.palette.color(key, QPalette.ColorRole.Text))
        return pen
