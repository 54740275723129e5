"""The derivation of one operation: every FLOP and byte term, the totals, the roofline.

Every FLOP term and byte term is shown with its formula in symbols, the same with values,
and the value; the totals; the kind's notes; the roofline on every machine of the session
with its formulas; and the counting conventions.

Public API::

    build_derivation(document, results, op_id) -> [Section]   # the content, no Qt
    derivation_to_text(header, sections) -> str                # the same as plain text
                                            # (both from workbench.document.derivation)
    layout_blocks(...) -> [paragraph]                          # the paragraphs shown
    DerivationView()                                           # the read-only text view
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import QFrame, QStyle, QTextBrowser, QWidget

from workbench.document.derivation import (
    Section,
    TermRow,
    build_derivation,
    derivation_to_text,
)
from workbench.records import record

__all__ = ["TermRow", "Section", "build_derivation", "derivation_to_text", "layout_blocks",
           "DerivationView"]

class _Colors:
    def __init__(self, palette: QPalette) -> None:
        text = palette.color(QPalette.ColorRole.Text)
        base = palette.color(QPalette.ColorRole.Base)
        dark = base.lightnessF() < 0.5
        self.key = (text.name(), base.name())
        self.text = text
        self.dim = _mix(text, base, 0.45)
        self.rule = _mix(text, base, 0.8)
        self.read = QColor("#6cb4ee" if dark else "#1f5f9e")
        self.write = QColor("#f0a35e" if dark else "#a6480f")
        self.bound = {"memory": self.read, "compute": QColor("#4fc28d" if dark else "#1b7a4c"),
                      "overhead": QColor("#d98ad9" if dark else "#8a3c8a"), "skipped": self.dim}


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t,
                           a.blueF() * (1 - t) + b.blueF() * t)


@record(frozen=True)
class _Block:
    """One paragraph of the derivation: a block style and runs of (text, char style).

    ``style`` is ``(kind, tab stops)``; two renders with the same styles differ only in
    text, which :class:`DerivationView` then updates run by run instead of re-laying out.
    """

    style: tuple[Any, ...]
    runs: tuple[tuple[str, str], ...]


_KEEP_ANCHOR = QTextCursor.MoveMode.KeepAnchor
#: changed paragraphs with at most this many unchanged ones between them are changed in one
#: edit block: the end of a block lays out again every paragraph from its first change to
#: its last, and each block's end costs about as much as laying out three (a whole model's
#: edit changes two dozen paragraphs of fifty: 1 % of its instructions less than in one
#: block, 3 % more than in a block for each paragraph)
_RUN_GAP = 3



def _u16(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (Qt's text positions)."""
    if not text or max(text) < "\U00010000":  # no surrogate pairs: one unit a character
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def layout_blocks(header: str, subheader: str, sections: list[Section], conventions_open: bool,
                  width: float, advance: Callable[[str, bool], float]) -> list[_Block]:
    """Paragraphs for the view. ``advance(text, bold)`` measures text in the view's font;
    ``width`` is the usable line width in pixels (tab stops are placed from it)."""
    blocks = [_Block(("title",), ((header, "title"),)),
              _Block(("subtitle",), ((subheader, "dim"),))]
    gap = advance("MM", False)
    for section in sections:
        if section.kind == "toggle":
            arrow = "▾" if conventions_open else "▸"
            blocks.append(_Block(("heading",), ((f"{arrow} {section.title}", "link"),)))
            blocks.extend(_Block(("bullet",), (("•  ", "dim"), (text, "plain")))
                          for text in section.rows)
            continue
        heading: tuple[tuple[str, str], ...] = ((section.title, "heading"),)
        if section.badge:
            heading += (("   ", "heading"), (section.badge, f"badge:{section.badge_kind}"))
        blocks.append(_Block(("heading",), heading))
        if section.kind == "terms":
            blocks.extend(_term_blocks(section.rows, width, gap, advance))
        elif section.kind == "pairs":
            labels = max((advance(label, False) for label, _ in section.rows), default=0.0)
            at = round(min(labels + gap, width * 0.45))
            for label, value in section.rows:
                blocks.append(_Block(("pair", at), ((label, "dim"), ("\t", "plain"),
                                                    (value, "plain"))))
        else:
            blocks.extend(_Block(("bullet",), (("•  ", "dim"), (text, "plain")))
                          for text in section.rows)
    return blocks


def _term_blocks(rows: list[TermRow], width: float, gap: float,
                 advance: Callable[[str, bool], float]) -> list[_Block]:
    """Two paragraphs per term: "name  direction · · · size · · · value" (size and value on
    right tab stops) and the formula under it. Where the line is too narrow for the size
    column, the size opens the formula line instead."""
    value_at = round(width)
    left = max((advance(r.name, True) + (advance("  " + r.direction, False)
                                          if r.direction != "flop" else 0.0)
                for r in rows), default=0.0)
    values = max((advance(r.value, True) for r in rows), default=0.0)
    sizes = max((advance(r.size, False) for r in rows), default=0.0)
    inline = not sizes or left + gap + sizes + gap + values <= width
    size_at = round(value_at - values - gap)
    blocks = []
    for row in rows:
        runs: tuple[tuple[str, str], ...] = ((row.name, "bold"),)
        if row.direction != "flop":
            runs += (("  ", "plain"), (row.direction, row.direction))
        if inline and sizes:
            runs += (("\t", "plain"), (row.size, "dim"))
        runs += (("\t", "plain"), (row.value, "value"))
        style = ("term", size_at, value_at) if inline and sizes else ("term", value_at)
        blocks.append(_Block(style, runs))
        formula: tuple[tuple[str, str], ...] = ((row.formula, "mono"),)
        if row.size and not inline:
            formula = ((row.size + "  ", "dim"),) + formula
        blocks.append(_Block(("formula",), formula))
    return blocks


class DerivationView(QTextBrowser):
    """Read-only, selectable text of one operation's derivation.

    Built with the text-cursor API (no HTML parsing, no tables: tab stops align columns).
    When a new render has the same paragraph styles as the shown one (a value edited, a
    machine changed), only the runs whose text changed are replaced, so a spin-box drag
    costs a fraction of a millisecond of layout.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("derivation")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setUndoRedoEnabled(False)
        self.document().setDocumentMargin(10)
        self._blocks: list[_Block] = []
        self._stale = True  # the shown paragraphs must be rebuilt, not updated
        self._source: tuple[str, str, list[Section], bool] | None = None
        self._formats: dict[str, QTextCharFormat] = {}
        self._block_formats: dict[tuple[Any, ...], QTextBlockFormat] = {}
        self._colors_key: tuple[str, str] | None = None
        self._palette_key: int | None = None
        self._metrics: dict[bool, QFontMetricsF] = {}
        self._width = 0.0
        self._rendering = False
        self._render_pending = False  # a render waits for the view to be shown
        self._advances: dict[tuple[str, bool], float] = {}
        self._advances_key: tuple = ()
        self.full_renders = 0  # for tests and measurements
        self.partial_renders = 0

    # -- public ----------------------------------------------------------------------------

    def show_sections(self, header: str, subheader: str, sections: list[Section],
                      conventions_open: bool) -> None:
        self._source = (header, subheader, sections, conventions_open)
        self._render()

    @property
    def measured_texts(self) -> int:
        """How many text widths are kept (those of the last render): for tests and
        measurements."""
        return len(self._advances)

    def clear_sections(self) -> None:
        self._source = None
        self._render_pending = False
        self._blocks, self._stale = [], True
        self.document().clear()

    # -- rendering -------------------------------------------------------------------------

    def _line_width(self) -> float:
        """Usable line width, the same whether or not the scroll bar is shown (so showing it
        never moves the tab stops)."""
        margin = self.document().documentMargin()
        bar = self.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, self)
        return max(240.0, self.width() - 2 * self.frameWidth() - bar - 2 * margin - 2)

    def _ensure_formats(self) -> None:
        palette = self.palette()
        if palette.cacheKey() == self._palette_key and self._formats:
            return  # the same palette object: the same colours
        self._palette_key = palette.cacheKey()
        colors = _Colors(palette)
        if colors.key == self._colors_key and self._formats:
            return
        self._colors_key = colors.key
        base = self.font()  # the application's
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSizeF(base.pointSizeF() * 0.92 if base.pointSizeF() > 0 else 9)

        def fmt(color: QColor | None = None, bold: bool = False, scale: float = 1.0,
                font: QFont | None = None) -> QTextCharFormat:
            f = QTextCharFormat()
            f.setFont(font or base)
            if scale != 1.0 and base.pointSizeF() > 0:
                f.setFontPointSize(base.pointSizeF() * scale)
            if bold:
                f.setFontWeight(QFont.Weight.DemiBold)
            f.setForeground(color or colors.text)
            return f

        self._formats = {
            "plain": fmt(),
            "bold": fmt(bold=True),
            "value": fmt(bold=True),
            "dim": fmt(colors.dim),
            "mono": fmt(colors.dim, font=mono),
            "read": fmt(colors.read),
            "write": fmt(colors.write),
            "title": fmt(bold=True, scale=1.25),
            "heading": fmt(bold=True, scale=1.05),
        }
        for name, color in colors.bound.items():
            self._formats[f"badge:{name}"] = fmt(color, bold=True, scale=1.05)
        link = fmt(bold=True, scale=1.05)
        link.setAnchor(True)
        link.setAnchorHref("toggle:conventions")
        link.setToolTip("Show or hide the counting conventions")
        self._formats["link"] = link
        self._block_formats.clear()
        plain, bold = self._formats["plain"].font(), self._formats["bold"].font()
        self._metrics = {False: QFontMetricsF(plain), True: QFontMetricsF(bold)}
        key = (plain.key(), bold.key())
        if self._advances_key != key:  # text widths, measured once per font
            self._advances, self._advances_key = {}, key

    def _block_format(self, style: tuple[Any, ...]) -> QTextBlockFormat:
        cached = self._block_formats.get(style)
        if cached is not None:
            return cached
        f = QTextBlockFormat()
        kind = style[0]
        right, left = QTextOption.TabType.RightTab, QTextOption.TabType.LeftTab
        if kind == "title":
            f.setBottomMargin(1)
        elif kind == "subtitle":
            f.setBottomMargin(2)
        elif kind == "heading":
            f.setTopMargin(12)
            f.setBottomMargin(3)
        elif kind == "term":
            f.setTopMargin(2)
            f.setTabPositions([QTextOption.Tab(at, right) for at in style[1:]])
        elif kind == "formula":
            f.setLeftMargin(16)
            f.setBottomMargin(3)
        elif kind == "pair":
            at = style[1]
            f.setLeftMargin(at)
            f.setTextIndent(-at)
            f.setTabPositions([QTextOption.Tab(at, left)])
            f.setBottomMargin(1)
        elif kind == "bullet":
            f.setLeftMargin(14)
            f.setTextIndent(-10)
            f.setBottomMargin(2)
        self._block_formats[style] = f
        return f

    def _render(self, hidden_too: bool = False) -> None:
        if self._source is None or self._rendering:
            return
        if not (hidden_too or self.isVisible()):
            # laid out when shown, at the width it is shown at: a window being built would
            # lay it out for a width it does not keep, and a closed dock not at all
            self._render_pending = True
            return
        self._render_pending = False
        self._rendering = True
        try:
            self._render_now()
        finally:
            self._rendering = False

    def _render_now(self) -> None:
        self._ensure_formats()
        width = self._line_width()
        self._width = width
        metrics = self._metrics
        # the widths of this render's texts, those of the last render looked up first: an
        # edit changes a few numbers and the rest are measured once; a text no longer shown
        # is forgotten (kept for good, every value ever typed would stay in memory)
        before = self._advances
        advances: dict[tuple[str, bool], float] = {}

        def advance(text: str, bold: bool) -> float:
            key = (text, bold)
            found = advances.get(key)
            if found is None:
                found = before.get(key)
                if found is None:
                    found = metrics[bold].horizontalAdvance(text)
                advances[key] = found
            return found

        header, subheader, sections, open_ = self._source
        blocks = layout_blocks(header, subheader, sections, open_, width, advance)
        self._advances = advances
        changed = self._changed_blocks(blocks)
        if changed is None:
            self._rebuild(blocks)
        else:
            self._update(blocks, changed)
        self._blocks = blocks

    def _changed_blocks(self, blocks: list[_Block]) -> list[int] | None:
        """Indices of the paragraphs whose text differs from the shown ones, or ``None`` when
        the paragraph styles differ (a rebuild)."""
        old_blocks = self._blocks
        if self._stale or len(blocks) != len(old_blocks):
            return None
        changed = []
        for i, (new, old) in enumerate(zip(blocks, old_blocks, strict=True)):
            if new.style != old.style:
                if new.style[0] != old.style[0]:
                    return None
                # the same kind of paragraph with other tab stops (a wider value moved a
                # column): its format is set again in place
            elif new.runs == old.runs:
                continue
            if len(new.runs) != len(old.runs):
                return None
            changed.append(i)
        return changed

    def _rebuild(self, blocks: list[_Block]) -> None:
        self.full_renders += 1
        self._stale = False
        bar = self.verticalScrollBar()
        position = bar.value()
        document = self.document()
        document.clear()
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        for i, block in enumerate(blocks):
            block_format = self._block_format(block.style)
            if i == 0:
                cursor.setBlockFormat(block_format)
            else:
                cursor.insertBlock(block_format, self._formats["plain"])
            for text, style in block.runs:
                if text:
                    cursor.insertText(text, self._formats[style])
        cursor.endEditBlock()
        # the view's own cursor went along with the inserted text to its end (and showing the
        # view would scroll there): back to the start, no selection, then the reading place
        start = self.textCursor()
        start.setPosition(0)
        self.setTextCursor(start)
        bar.setValue(min(position, bar.maximum()))

    def _update(self, blocks: list[_Block], changed: list[int]) -> None:
        if not changed:
            return
        self.partial_renders += 1
        document = self.document()
        cursor = QTextCursor(document)
        formats = self._formats
        old_blocks = self._blocks
        for n, i in enumerate(changed):
            if not n or i - changed[n - 1] > _RUN_GAP + 1:  # (a new run: see _RUN_GAP)
                if n:
                    cursor.endEditBlock()
                cursor.beginEditBlock()
            new, old = blocks[i], old_blocks[i]
            block = document.findBlockByNumber(i)
            position = block.position()
            if new.style != old.style:
                cursor.setPosition(position)
                cursor.setBlockFormat(self._block_format(new.style))
            for (text, style), (old_text, old_style) in zip(new.runs, old.runs, strict=True):
                length = _u16(old_text)
                if text != old_text or style != old_style:
                    cursor.setPosition(position)
                    cursor.setPosition(position + length, _KEEP_ANCHOR)
                    cursor.insertText(text, formats[style])
                    length = _u16(text)
                position += length
        cursor.endEditBlock()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self._source is not None and abs(self._line_width() - self._width) >= 1:
            self._render()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._render_pending:
            self._render()

    def toPlainText(self) -> str:
        """The text as shown, or as it will be when the view is shown."""
        if self._render_pending:
            self._render(hidden_too=True)
        return super().toPlainText()

    def changeEvent(self, event: Any) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange,
                            QEvent.Type.StyleChange):
            self._colors_key = None
            self._palette_key = None
            self._stale = True
            if self._source is not None:
                self._render()
