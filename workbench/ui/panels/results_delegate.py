"""How a cell of the results table is painted.

Every edit that moves a model's operations repaints the visible rows of the table: a hundred
cells or so, each with a new number. Qt's own delegate asks the model for seven roles of a
cell (a Python call each, or one through ``multiData``) and lays its text out three times
(to place it, to see whether it must be elided, to draw it). :class:`ResultsDelegate` paints
an ordinary cell (not selected, not current, not under the pointer, in a view laid out left
to right) as Qt's would: the same text, colour, background and place. A text in the view's
font alone is measured and drawn on its line (whose height and ascent are the font's, kept
until the font, the style or the installed fonts change); one with a character from a
fallback font, whose line may be taller, is laid out once. The other cells it leaves to
Qt's delegate. (A text's layout is not kept from one paint to the next: a kept one refers
to font engines Qt may drop meanwhile, and drawing one, after the installed fonts had
changed, crashed.)
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QModelIndex, QPersistentModelIndex, QPointF, Qt
from PySide6.QtGui import (
    QColor,
    QFontMetricsF,
    QGuiApplication,
    QPainter,
    QPalette,
    QPen,
    QRawFont,
    QStaticText,
    QTransform,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from workbench.ui.panels.results_model import COLUMNS, ResultsModel, ResultsProxy

__all__ = ["ResultsDelegate"]

_STATE = QStyle.StateFlag
#: states Qt's delegate paints in its own way (a highlight, a focus frame, a hover); as a
#: number, as the others (an operation on the flags themselves costs a microsecond)
_QT_PAINTS = (_STATE.State_Selected | _STATE.State_HasFocus | _STATE.State_MouseOver).value
_ENABLED, _ACTIVE = _STATE.State_Enabled.value, _STATE.State_Active.value
_GROUP = QPalette.ColorGroup
#: the palette's colour groups by the keys of their pens (below every colour's ``rgba``)
_GROUPS = {-1: _GROUP.Disabled, -2: _GROUP.Inactive, -3: _GROUP.Normal}
_NUMERIC = tuple(column.numeric for column in COLUMNS)
_ELIDE = Qt.TextElideMode.ElideRight
_ALIGN = (Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
          Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


class ResultsDelegate(QStyledItemDelegate):
    """Paints the cells of ``view`` (showing ``proxy`` of ``model``); see the module. What
    it keeps of the view's style, font and palette it forgets at :meth:`restyled` (and when
    the installed fonts change)."""

    def __init__(self, view: QTableView, proxy: ResultsProxy, model: ResultsModel) -> None:
        super().__init__(view)
        self._view, self._proxy, self._model = view, proxy, model
        self._pens: dict[int, QPen] = {}
        self._margin = 0
        self._mirrored = False  # (right to left: Qt's delegate mirrors each cell)
        self.restyled()
        # (a font installed or removed may change what the view's font draws with)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.fontDatabaseChanged.connect(self._fonts_changed)
        # (the source row of each row shown, asked for once: the proxy's rows change only
        # when it sorts or filters, and it says so)
        self._rows: dict[int, int] = {}
        for signal in (proxy.layoutChanged, proxy.modelReset, proxy.rowsInserted,
                       proxy.rowsRemoved, proxy.rowsMoved):
            signal.connect(self._rows.clear)

    def restyled(self) -> None:
        """Forget the pens, the margins and the font's line: the view's style, font,
        palette or direction, or the installed fonts, have changed."""
        view = self._view
        font = view.font()
        self._mirrored = view.layoutDirection() == Qt.LayoutDirection.RightToLeft
        self._pens.clear()
        # (a line of the view's font, laid out as Qt lays out a cell's: its height rounded
        # up, its baseline its ascent below its top)
        self._metrics = metrics = QFontMetricsF(font)
        line = QStaticText("0")
        line.prepare(QTransform(), font)
        self._half_line = int(line.size().height()) // 2
        self._ascent = metrics.ascent()
        self._raw = QRawFont.fromFont(font)  # (the font itself, no fallback)
        self._known: dict[str, bool] = {}  # (see _in_font)
        # (as Qt's style: this much room each side of a cell's text)
        self._margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin,
                                                None, view) + 1

    def _fonts_changed(self) -> None:
        if not QCoreApplication.closingDown():  # (the fonts go as the application closes)
            self.restyled()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        state = option.state.value
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
        margin = self._margin
        width = rect.width() - 2 * margin
        if text.isascii() or self._in_font(text):  # (a line of the font: as Qt's)
            metrics = self._metrics
            advance = metrics.horizontalAdvance(text)
            top = rect.y() + rect.height() // 2 - self._half_line
            laid = None
        else:  # (a fallback font's glyphs may make the line taller: laid out as Qt's)
            laid = QStaticText(text)
            laid.setTextFormat(Qt.TextFormat.PlainText)
            laid.prepare(QTransform(), font)
            size = laid.size()
            advance = size.width()
            top = rect.y() + rect.height() // 2 - int(size.height()) // 2
        if advance > width:  # (elided: rare, the columns fit their samples)
            painter.drawText(rect.adjusted(margin, 0, -margin, 0), _ALIGN[_NUMERIC[col]],
                             option.fontMetrics.elidedText(text, _ELIDE, width))
            return
        # (as Qt's: the line centred in the cell's height, at the left or the right)
        left = rect.x() + margin
        if _NUMERIC[col]:
            left += width - advance
        if laid is None:
            painter.drawText(QPointF(left, top + self._ascent), text)
        else:
            painter.drawStaticText(QPointF(left, top), laid)

    def _in_font(self, text: str) -> bool:
        """Whether each of the characters of ``text`` is in the view's font (not drawn
        from a fallback font). (Each character looked up once: a table's texts use a few,
        such as "µ", "×" and "—".)"""
        known = self._known
        for ch in text:
            found = known.get(ch)
            if found is None:
                found = known[ch] = self._raw.supportsCharacter(ord(ch))
            if not found:
                return False
        return True

    def _pen(self, color: QColor | None, state: int, option: QStyleOptionViewItem) -> QPen:
        """The pen of a cell's text: ``color``, or the palette's text colour for the
        view's ``state`` (its flags' value)."""
        if color is not None:
            key = color.rgba()
        else:
            key = -1 if not state & _ENABLED else -2 if not state & _ACTIVE else -3
        pen = self._pens.get(key)
        if pen is None:
            pen = self._pens[key] = QPen(
                color if color is not None
                else option.palette.color(_GROUPS[key], QPalette.ColorRole.Text))
        return pen
