"""The operation editor: a live form for the selected operation and its derivation.

The form is generated from the kind's :class:`~workbench.model.operations.Param` list (the
elementwise ``steps`` list has its own small editor). Every keystroke, arrow or wheel step
sets the parameter in the document at once, so the chart and the tables follow while
typing; ``editingFinished`` (Return, focus out) seals the gesture so a whole drag or a typed
number is one undo step. Values the model refuses (``check_param`` / ``kind_checks``) are
never applied: the field gets a red frame and the hint under the form says why.

Below the form, the derivation shows every FLOP term and byte term with its formula in
symbols, the same with values, and the value; the totals; the kind's notes; the roofline on
every machine of the session with its formulas; and the counting conventions.

Public API::

    editor = OperationEditor(workspace)      # follows workspace.selection and its signals
    editor.operation_id                      # the operation shown, or None (empty state)
    editor.field("m")                        # the input widget of a parameter (or of "name",
                                             # "memory_level"), None if not shown
    editor.errors()                          # {param: message} of values refused right now
    editor.hint_text()                       # the text of the hint under the form
    editor.derivation_text()                 # the derivation as plain text
    editor.copy_derivation()                 # ... put on the clipboard (the Copy button)
    editor.set_conventions_open(True)        # expand the Conventions section
    editor.sweep_section                     # the "Sweep" section under the form (see
                                             # workbench.ui.sweep_editor), None when empty
    editor.last_refresh_ms                   # time of the last derivation refresh
    build_derivation(document, results, op_id) -> [Section]   # the same content, no Qt
"""

from __future__ import annotations

import copy
import functools
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QSize, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetricsF,
    QGuiApplication,
    QPalette,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextOption,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QStackedLayout,
    QStyle,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change, Document, ResultCache
from workbench.io.errors import InputError
from workbench.io.schema import Place, check_param, kind_checks
from workbench.model.dtypes import DTYPE_BYTES, PRECISIONS
from workbench.model.operations import CONVENTIONS, KINDS, STEP_OPS, Counts, Kind, Param, Term
from workbench.model.units import format_number, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.sweep_editor import SweepSection
from workbench.ui.widgets import (
    BigSpinBox,
    QuantityEdit,
    escape_html,
    no_wheel_filter,
    set_invalid,
)

__all__ = ["OperationEditor", "DerivationView", "StepsEditor", "build_derivation"]

MAX_INT = 2**53
_QUIET_FIELDS = {"color", "visible", "label"}  # operation fields that change no number


# =========================================================================================
# derivation: plain data first, rendered to HTML (shown) or text (copied)


@dataclass
class TermRow:
    """One FLOP or byte term of the derivation, as shown."""
    name: str
    direction: str  # "flop", "read" or "write"
    size: str  # "16 777 216 × 2 B" for tensors, "" otherwise
    value: str
    formula: str  # "batch·M·K·2 B [bf16] = 1·4096·4096·2 B [bf16]"


@dataclass
class Section:
    """A titled part of the derivation: term rows, name-value pairs or bullets."""
    title: str
    kind: str  # "terms" | "pairs" | "bullets" | "toggle"
    rows: list[Any] = field(default_factory=list)
    badge: str = ""  # short tag after the title (e.g. "memory-bound")
    badge_kind: str = ""  # "memory" | "compute" | "overhead" | "skipped"


def _exact(value: Any) -> str:
    """A count in full with thin-space groups (137 438 953 472), or 3 figures if huge."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return format_number(number)
    if number.is_integer() and abs(number) < 1e18:
        return f"{int(number):,}".replace(",", "\u2009")
    return format_number(number, 4)


def _bytes_each(size: float | None) -> str:
    if size is None:
        return ""
    return f"{size:g} B"


def _term_row(term: Term, unit: str) -> TermRow:
    size = ""
    if term.elements is not None and term.element_bytes is not None:
        size = f"{_exact(term.elements)} × {_bytes_each(term.element_bytes)}"
    formula = term.formula
    if term.substituted and term.substituted != term.formula:
        formula = f"{term.formula} = {term.substituted}"
    return TermRow(term.name, term.kind, size, _q(term.value, unit), formula)


NBSP = "\u00a0"


@functools.lru_cache(maxsize=4096)  # peaks, bandwidths and ridges recur on every refresh
def _q(value: float, unit: str) -> str:
    """A quantity whose number and unit never part at a line break."""
    return format_quantity(float(value), unit).replace(" ", NBSP)


def _percent(value: float) -> str:
    return f"{value * 100:.3g} %"


def build_derivation(document: Document, results: ResultCache, op_id: int,
                     conventions_open: bool = False) -> list[Section]:
    """Everything the derivation view shows for one operation, as plain sections (no Qt):
    terms, totals, notes, the roofline on every machine, the conventions."""
    op = document.operation(op_id).operation
    try:
        counts: Counts = results.counts(op_id)
    except Exception as exc:  # noqa: BLE001 - shown to the user, not swallowed
        return [Section("Cannot count this operation", "bullets", [str(exc)])]
    sections: list[Section] = []
    flop_rows = [_term_row(t, "flops") for t in counts.flop_terms]
    byte_rows = [_term_row(t, "bytes") for t in counts.byte_terms]
    sections.append(Section(f"FLOPs ({len(flop_rows)} term{'s' * (len(flop_rows) != 1)})",
                            "terms", flop_rows))
    sections.append(Section(f"Bytes ({len(byte_rows)} term{'s' * (len(byte_rows) != 1)})",
                            "terms", byte_rows))
    flops, nbytes = float(counts.flops), float(counts.bytes)
    read, written = float(counts.bytes_read), float(counts.bytes_written)
    intensity = flops / nbytes if nbytes else math.inf
    totals = [
        ("FLOPs  F", f"{_q(flops, 'flops')}  ({_exact(flops)})"),
        ("bytes  B", f"{_q(nbytes, 'bytes')} = {_q(read, 'bytes')} read + "
                     f"{_q(written, 'bytes')} written  ({_exact(nbytes)})"),
        ("bytes read", _q(read, "bytes")),
        ("bytes written", _q(written, "bytes")),
        ("intensity  I", f"F / B = {_q(flops, 'flops')} / {_q(nbytes, 'bytes')} = "
                         f"{_q(intensity, 'intensity')}"),
        ("compute precision", counts.precision),
    ]
    sections.append(Section("Totals", "pairs", totals))
    notes = list(counts.notes)
    if op.memory_level:
        notes.append(f"Bytes are counted across “{op.memory_level}” instead of main memory.")
    if notes:
        sections.append(Section("Notes", "bullets", notes))
    for hw_entry in document.session.hardware:
        pair = results.pair(op_id, hw_entry.id)
        hw = hw_entry.hardware
        title = hw.label + ("" if hw_entry.visible else "  (hidden on the chart)")
        if pair.result is None:
            reason = pair.skipped.reason if pair.skipped else "not evaluated"
            sections.append(Section(title, "pairs", [("skipped", reason)], "skipped", "skipped"))
            continue
        r = pair.result
        ceiling = f"{r.precision_used} peak {_q(r.peak_flops, 'flop_rate')}"
        if r.precision_used != r.precision:
            ceiling += (f"  (no {r.precision} peak on this machine: its {r.precision_used} "
                        "peak is used)")
        where = ("interconnect" if r.level in hw.interconnect
                 else "main memory" if r.level == hw.main_memory else "memory level")
        rows = [
            ("ceiling", ceiling),
            ("bandwidth", f"{r.level} {_q(r.bandwidth, 'bandwidth')}  ({where})"),
            ("ridge", f"peak / bandwidth = {_q(r.peak_flops, 'flop_rate')} / "
                      f"{_q(r.bandwidth, 'bandwidth')} = {_q(r.ridge, 'intensity')}"),
            ("attainable", f"min(peak, I × bandwidth) = min({_q(r.peak_flops, 'flop_rate')}, "
                           f"{_q(r.intensity, 'intensity')} × "
                           f"{_q(r.bandwidth, 'bandwidth')}) = "
                           f"{_q(r.attainable_flops, 'flop_rate')}  "
                           f"({_percent(r.fraction_of_peak)} of peak)"),
            ("T_math", f"F / peak = {_q(r.flops, 'flops')} / {_q(r.peak_flops, 'flop_rate')} = "
                       f"{_q(r.t_math_s, 'time')}"),
            ("T_mem", f"B / bandwidth = {_q(r.bytes, 'bytes')} / "
                      f"{_q(r.bandwidth, 'bandwidth')} = {_q(r.t_mem_s, 'time')}"),
        ]
        if r.bound == "overhead":
            why = (f"max(T_math, T_mem) = {_q(r.t_lower_s, 'time')} < launch overhead "
                   f"{_q(r.launch_overhead_s or 0.0, 'time')}")
        elif r.bound == "compute":
            why = "T_math ≥ T_mem"
        else:
            why = "T_mem > T_math"
        rows.append(("bound", f"{r.bound} ({why})"))
        rows.append(("time bounds", f"max(T_math, T_mem) = {_q(r.t_lower_s, 'time')} ≤ T ≤ "
                                    f"T_math + T_mem = {_q(r.t_upper_s, 'time')}"))
        if r.efficiency:
            predicted = f"T_lower / {r.efficiency:g}"
            if r.launch_overhead_s:
                predicted = (f"max({predicted}, launch overhead "
                             f"{_q(r.launch_overhead_s, 'time')})")
            rows.append(("predicted", f"at {_percent(r.efficiency)} efficiency: "
                                      f"{predicted} = {_q(r.t_predicted_s, 'time')}"))
        elif r.launch_overhead_s:
            rows.append(("launch overhead", _q(r.launch_overhead_s, "time")))
        sections.append(Section(title, "pairs", rows, f"{r.bound}-bound", r.bound))
    if not document.session.hardware:
        sections.append(Section("Machines", "bullets",
                                 ["No machine in the session: add one to see the roofline."]))
    sections.append(Section(f"Conventions ({len(CONVENTIONS)})", "toggle",
                            list(CONVENTIONS) if conventions_open else []))
    return sections


def derivation_to_text(header: str, sections: list[Section]) -> str:
    """Plain text of the derivation (what Copy puts on the clipboard)."""
    lines = [header, ""]
    for section in sections:
        title = section.title + (f"  [{section.badge}]" if section.badge else "")
        lines.append(title)
        if section.kind == "terms":
            for row in section.rows:
                direction = "" if row.direction == "flop" else f"  {row.direction}"
                size = f"  {row.size}" if row.size else ""
                lines.append(f"  {row.name}{direction}{size}  =  {row.value}")
                lines.append(f"      {row.formula}")
        elif section.kind == "pairs":
            width = max((len(label) for label, _ in section.rows), default=0)
            for label, value in section.rows:
                lines.append(f"  {label.ljust(width)}  {value}")
        else:
            lines.extend(f"  • {text}" for text in section.rows)
        lines.append("")
    return "\n".join(lines).rstrip().replace(NBSP, " ") + "\n"


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


@dataclass(frozen=True)
class _Block:
    """One paragraph of the derivation: a block style and runs of (text, char style).

    ``style`` is ``(kind, tab stops)``; two renders with the same styles differ only in
    text, which :class:`DerivationView` then updates run by run instead of re-laying out.
    """

    style: tuple[Any, ...]
    runs: tuple[tuple[str, str], ...]


_KEEP_ANCHOR = QTextCursor.MoveMode.KeepAnchor

#: Posted to the editor to update its derivation after an edit. Its priority is below that of
#: Qt's repaint request (``Qt.LowEventPriority``), so the event loop paints what the edit
#: changed (the chart, the tables) before the text is laid out again.
_FLUSH_EVENT = QEvent.Type(QEvent.registerEventType())
_AFTER_REPAINT = int(Qt.EventPriority.LowEventPriority.value) - 1


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
        base = self.font()  # the application's, laid out without complex shaping (create_app)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSizeF(base.pointSizeF() * 0.92 if base.pointSizeF() > 0 else 9)
        # the system's fixed font does not follow the application font's strategy
        mono.setStyleStrategy(base.styleStrategy())

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
        advances = self._advances

        def advance(text: str, bold: bool) -> float:
            found = advances.get((text, bold))
            if found is None:
                if len(advances) > 20_000:
                    advances.clear()
                found = advances[(text, bold)] = metrics[bold].horizontalAdvance(text)
            return found

        header, subheader, sections, open_ = self._source
        blocks = layout_blocks(header, subheader, sections, open_, width, advance)
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
        cursor.beginEditBlock()
        formats = self._formats
        old_blocks = self._blocks
        for i in changed:
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

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if self._source is not None and abs(self._line_width() - self._width) >= 1:
            self._render()

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        if self._render_pending:
            self._render()

    def toPlainText(self) -> str:  # noqa: N802 (Qt API)
        """The text as shown, or as it will be when the view is shown."""
        if self._render_pending:
            self._render(hidden_too=True)
        return super().toPlainText()

    def changeEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange,
                            QEvent.Type.StyleChange):
            self._colors_key = None
            self._palette_key = None
            self._stale = True
            if self._source is not None:
                self._render()


# =========================================================================================
# form fields: one per parameter, all with the same small interface


def _tooltip(param: Param, extra: str = "") -> str:
    symbol = param.sym if param.numeric or param.symbol else ""
    text = f"<b>{escape_html(param.label)}</b>"
    if symbol:
        text += f" &nbsp;<i>symbol in formulas:</i> <code>{escape_html(symbol)}</code>"
    text += f"<br>{escape_html(param.doc)}"
    if param.inherit:
        text += f"<br><i>Default: same as “{escape_html(param.inherit)}”.</i>"
    if extra:
        text += f"<br><span style='color:gray'>{extra}</span>"
    return text


class _Field:
    """Base: ``widget`` goes into the form, ``input`` gets the red frame.

    ``load`` shows the document's value without emitting, and leaves text that already
    means that value alone (so "1e3" typed for 1000 stays, with its cursor).
    """

    widget: QWidget
    input: QWidget

    def __init__(self, editor: OperationEditor, param: Param) -> None:
        self.editor = editor
        self.param = param

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        raise NotImplementedError

    def _propose(self, value: Any, discrete: bool = False) -> None:
        self.editor._propose(self.param.name, value, discrete=discrete)

    def _finish(self) -> None:
        self.editor._finish(self.param.name)


def _inherit_label(kind: Kind, param: Param) -> str:
    try:
        return kind.param(param.inherit).label
    except KeyError:
        return param.inherit


class _IntField(_Field):
    def __init__(self, editor: OperationEditor, param: Param, kind: Kind) -> None:
        super().__init__(editor, param)
        self.spin = BigSpinBox(minimum=int(param.minimum), maximum=MAX_INT)
        self.spin.setObjectName(f"param_{param.name}")
        self.spin.setToolTip(_tooltip(param, "Up/Down ±1 · PageUp/PageDown ×2 / ÷2 · "
                                             "typed: 4096, 4_096, 1e6"))
        self.spin.valueChanged.connect(lambda value: self._propose(value))
        self.spin.textEdited.connect(lambda text: self._propose(text))
        self.spin.editingFinished.connect(self._finish)
        self.input = self.spin
        self.same: QCheckBox | None = None
        if param.inherit:
            box = QWidget()
            row = QHBoxLayout(box)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(8)
            row.addWidget(self.spin, 1)
            self.same = QCheckBox(f"same as {_inherit_label(kind, param)}")
            self.same.setObjectName(f"same_{param.name}")
            self.same.setToolTip(f"Follow “{_inherit_label(kind, param)}” (the parameter is "
                                 "left unset). Typing a value sets it explicitly.")
            self.same.toggled.connect(self._on_same)
            row.addWidget(self.same)
            self.widget = box
        else:
            self.widget = self.spin

    def _on_same(self, checked: bool) -> None:
        if checked:
            self._propose(None, discrete=True)
        else:
            self._propose(self.spin.value(), discrete=True)

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        value = resolved.get(self.param.name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = int(value)
            if self.spin.text_value() != value:  # "1e3" typed for 1000 is left alone
                self.spin.blockSignals(True)
                self.spin.setValue(value)
                self.spin.blockSignals(False)
        if self.same is not None:
            self.same.blockSignals(True)
            self.same.setChecked(raw is None)
            self.same.blockSignals(False)


class _QuantityField(_Field):
    def __init__(self, editor: OperationEditor, param: Param) -> None:
        super().__init__(editor, param)
        unit = param.unit or "count"
        self.edit = QuantityEdit(unit)
        self.edit.setObjectName(f"param_{param.name}")
        self.edit.setToolTip(_tooltip(param, "SI text is accepted: 3.85 TFLOP, 1e12, 80 GiB"))
        self.edit.textEdited.connect(lambda text: self._propose(text))
        self.edit.editingFinished.connect(self._finish)
        self.input = self.widget = self.edit

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        value = resolved.get(self.param.name)
        if value is None:
            return
        self.edit.setValue(float(value))


class _ComboField(_Field):
    """dtype, precision and choice parameters; ``None`` is the "same as"/automatic entry."""

    def __init__(self, editor: OperationEditor, param: Param, kind: Kind) -> None:
        super().__init__(editor, param)
        self.kind = kind
        self.combo = QComboBox()
        self.combo.setObjectName(f"param_{param.name}")
        self.combo.setToolTip(_tooltip(param))
        self.combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.combo.installEventFilter(no_wheel_filter())
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.has_none = param.default is None
        if self.has_none:
            self.combo.addItem("", None)
        if param.type == "dtype":
            for name, size in DTYPE_BYTES.items():
                self.combo.addItem(f"{name}  ({size:g} B)", name)
        elif param.type == "precision":
            for name in PRECISIONS:
                self.combo.addItem(name, name)
        else:
            for name in param.choices:
                self.combo.addItem(name, name)
        self.combo.currentIndexChanged.connect(self._on_index)
        self.input = self.widget = self.combo

    def _on_index(self, index: int) -> None:
        self._propose(self.combo.itemData(index), discrete=True)

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        self.combo.blockSignals(True)
        if self.has_none:
            if self.param.inherit:
                current = resolved.get(self.param.name)
                text = f"same as {_inherit_label(self.kind, self.param)} ({current})"
            else:
                text = f"automatic ({context.get('precision') or '?'})"
            if self.combo.itemText(0) != text:
                self.combo.setItemText(0, text)
        index = self.combo.findData(raw)
        if index < 0 and raw is not None:  # a value the list does not know: show it anyway
            self.combo.addItem(str(raw), raw)
            index = self.combo.count() - 1
        if index >= 0 and index != self.combo.currentIndex():
            self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)


class _BoolField(_Field):
    def __init__(self, editor: OperationEditor, param: Param) -> None:
        super().__init__(editor, param)
        self.check = QCheckBox()
        self.check.setObjectName(f"param_{param.name}")
        self.check.setToolTip(_tooltip(param))
        self.check.toggled.connect(lambda on: self._propose(bool(on), discrete=True))
        self.input = self.widget = self.check

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        self.check.blockSignals(True)
        self.check.setChecked(bool(resolved.get(self.param.name)))
        self.check.blockSignals(False)


class _TextField(_Field):
    def __init__(self, editor: OperationEditor, param: Param) -> None:
        super().__init__(editor, param)
        self.edit = QLineEdit()
        self.edit.setObjectName(f"param_{param.name}")
        self.edit.setToolTip(_tooltip(param))
        self.edit.textEdited.connect(lambda text: self._propose(text))
        self.edit.editingFinished.connect(self._finish)
        self.input = self.widget = self.edit

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        value = resolved.get(self.param.name)
        text = "" if value is None else str(value)
        if self.edit.text() != text:
            cursor = self.edit.cursorPosition()
            self.edit.setText(text)
            self.edit.setCursorPosition(min(cursor, len(text)))


class StepsEditor(QWidget):
    """The steps of an elementwise chain: op, extra inputs, FLOPs override, and buttons to
    add, remove and reorder. Each change proposes the whole list through ``propose``."""

    def __init__(self, propose: Callable[..., None], finish: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("steps_editor")
        self._propose = propose
        self._finish = finish
        self._steps: list[dict[str, Any]] = []
        self.rows: list[tuple[QComboBox, QLineEdit, QLineEdit]] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(6)
        self.grid.setVerticalSpacing(4)
        self.grid.setColumnStretch(2, 3)
        self.grid.setColumnStretch(3, 1)
        outer.addLayout(self.grid)
        bottom = QHBoxLayout()
        self.add_button = QToolButton()
        self.add_button.setObjectName("step_add")
        self.add_button.setText("+ Add step")
        self.add_button.setToolTip("Add a step at the end of the chain")
        self.add_button.clicked.connect(self.add_step)
        bottom.addWidget(self.add_button)
        bottom.addStretch(1)
        outer.addLayout(bottom)
        self._header()

    def _header(self) -> None:
        for column, (text, tip) in enumerate((
            ("#", "Order of the steps"),
            ("Op", "What the step computes; its default FLOPs per element are in its tooltip"),
            ("Extra inputs", "Tensors read besides the running value, comma-separated "
                             "(e.g. “r” for a residual)"),
            ("FLOP/elem", "FLOPs per element; empty: the op's default"),
        )):
            label = QLabel(text)
            label.setToolTip(tip)
            font = label.font()
            font.setPointSizeF(font.pointSizeF() * 0.9)
            label.setFont(font)
            label.setEnabled(False)  # draws in the disabled (dim) text colour
            self.grid.addWidget(label, 0, column)

    # -- data ------------------------------------------------------------------------------

    def steps(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._steps)

    def load(self, steps: list[dict[str, Any]] | None) -> None:
        steps = copy.deepcopy(list(steps or []))
        if len(steps) != len(self.rows):
            self._steps = steps
            self._rebuild()
            return
        self._steps = steps
        for i, step in enumerate(steps):
            self._load_row(i, step)

    def reset(self) -> None:
        """Show the last loaded steps again, replacing whatever was typed."""
        for i, step in enumerate(self._steps):
            self._load_row(i, step, force=True)

    def _load_row(self, i: int, step: dict[str, Any], force: bool = False) -> None:
        combo, inputs, flops = self.rows[i]
        combo.blockSignals(True)
        index = combo.findData(step.get("op"))
        if index >= 0:
            combo.setCurrentIndex(index)
        combo.blockSignals(False)
        text = ", ".join(step.get("inputs") or [])
        if force or _names(inputs.text()) != (step.get("inputs") or []):
            inputs.setText(text)
        default = STEP_OPS.get(step.get("op"), (1, ""))[0]
        flops.setPlaceholderText(f"{default:g}")
        value = step.get("flops")
        current = flops.text().strip()
        same = (value is None and not current) or (value is not None and current
                                                    and _float_or_none(current) == float(value))
        if force or not same:
            flops.setText("" if value is None else f"{float(value):g}")
        for widget in (inputs, flops):
            set_invalid(widget, False)

    def _rebuild(self) -> None:
        for i in reversed(range(self.grid.count())):
            item = self.grid.itemAt(i)
            widget = item.widget() if item else None
            if widget is not None and self.grid.getItemPosition(i)[0] > 0:
                self.grid.removeWidget(widget)
                widget.hide()
                for child in [widget, *widget.findChildren(QWidget)]:
                    child.setObjectName("")  # gone for findChild even before deletion
                widget.deleteLater()  # not now: a row's own button may be what was clicked
        self.rows = []
        for i, step in enumerate(self._steps):
            self._add_row(i)
            self._load_row(i, step)

    def _add_row(self, i: int) -> None:
        row = i + 1
        number = QLabel(str(row))
        number.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        number.setEnabled(False)
        self.grid.addWidget(number, row, 0)
        combo = QComboBox()
        combo.setObjectName(f"step_op_{i}")
        combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        combo.installEventFilter(no_wheel_filter())
        for name, (flops, what) in STEP_OPS.items():
            combo.addItem(name, name)
            combo.setItemData(combo.count() - 1, f"{what} — {flops:g} FLOP per element",
                              Qt.ItemDataRole.ToolTipRole)
        combo.setToolTip("Step operation (hover an entry for its FLOPs per element)")
        combo.currentIndexChanged.connect(lambda _=0, r=i: self._on_op(r))
        self.grid.addWidget(combo, row, 1)
        inputs = QLineEdit()
        inputs.setObjectName(f"step_inputs_{i}")
        inputs.setPlaceholderText("none")
        inputs.setToolTip("Extra input tensors of this step, comma-separated (e.g. “r” or "
                          "“b, c”). Unfused, each is read by this step; fused, each distinct "
                          "name is read once.")
        inputs.textEdited.connect(lambda _t, r=i: self._on_text(r))
        inputs.editingFinished.connect(self._finish)
        self.grid.addWidget(inputs, row, 2)
        flops = QLineEdit()
        flops.setObjectName(f"step_flops_{i}")
        flops.setToolTip("FLOPs per element of this step. Empty: the op's default "
                         "(shown in grey). A multiply-add is 2.")
        flops.textEdited.connect(lambda _t, r=i: self._on_text(r))
        flops.editingFinished.connect(self._finish)
        flops.setMaximumWidth(80)
        self.grid.addWidget(flops, row, 3)
        buttons = QWidget()
        box = QHBoxLayout(buttons)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        for text, tip, name, slot in (
            ("▲", "Move this step up", "up", lambda _=False, r=i: self.move_step(r, -1)),
            ("▼", "Move this step down", "down", lambda _=False, r=i: self.move_step(r, 1)),
            ("✕", "Remove this step", "remove", lambda _=False, r=i: self.remove_step(r)),
        ):
            button = QToolButton()
            button.setObjectName(f"step_{name}_{i}")
            button.setText(text)
            button.setToolTip(tip)
            button.setAutoRaise(True)
            button.clicked.connect(slot)
            box.addWidget(button)
        count = len(self._steps)
        buttons.findChild(QToolButton, f"step_up_{i}").setEnabled(i > 0)
        buttons.findChild(QToolButton, f"step_down_{i}").setEnabled(i < count - 1)
        buttons.findChild(QToolButton, f"step_remove_{i}").setEnabled(count > 1)
        self.grid.addWidget(buttons, row, 4)
        self.rows.append((combo, inputs, flops))

    # -- edits -----------------------------------------------------------------------------

    def _row_step(self, i: int) -> dict[str, Any]:
        combo, inputs, flops = self.rows[i]
        step: dict[str, Any] = {"op": combo.currentData()}
        names = _names(inputs.text())
        if names:
            step["inputs"] = names
        text = flops.text().strip()
        if text:
            step["flops"] = text
        return step

    def _on_op(self, i: int) -> None:
        combo, _inputs, flops = self.rows[i]
        op = combo.currentData()
        if op == "custom" and not flops.text().strip():
            flops.setText(f"{STEP_OPS['custom'][0]:g}")
        flops.setPlaceholderText(f"{STEP_OPS[op][0]:g}")
        steps = self.steps()
        steps[i] = self._row_step(i)
        self._propose(steps, True, (i, None))

    def _on_text(self, i: int) -> None:
        steps = self.steps()
        steps[i] = self._row_step(i)
        self._propose(steps, False, (i, None))

    def add_step(self) -> None:
        steps = self.steps() + [{"op": "relu"}]
        self._propose(steps, True, None)

    def remove_step(self, i: int) -> None:
        steps = self.steps()
        if len(steps) > 1:
            del steps[i]
            self._propose(steps, True, None)

    def move_step(self, i: int, delta: int) -> None:
        steps = self.steps()
        j = i + delta
        if 0 <= j < len(steps):
            steps[i], steps[j] = steps[j], steps[i]
            self._propose(steps, True, None)

    def mark(self, row: int | None, part: str | None, invalid: bool) -> None:
        for i, (_combo, inputs, flops) in enumerate(self.rows):
            set_invalid(inputs, invalid and i == row and part == "inputs")
            set_invalid(flops, invalid and i == row and part == "flops")


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.replace(";", ",").split(",") if name.strip()]


def _float_or_none(text: str) -> float | None:
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


class _StepsField(_Field):
    def __init__(self, editor: OperationEditor, param: Param) -> None:
        super().__init__(editor, param)
        self.steps = StepsEditor(self._on_steps, self._finish)
        self.steps.setToolTip("")
        group = QGroupBox(param.label)
        group.setObjectName(f"param_{param.name}")
        group.setToolTip(_tooltip(param))
        layout = QVBoxLayout(group)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.steps)
        self.widget = group
        self.input = self.steps

    def _on_steps(self, steps: list[dict[str, Any]], discrete: bool, where: Any) -> None:
        self.editor._propose(self.param.name, steps, discrete=discrete)

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        rows = len(self.steps.rows)
        self.steps.load(resolved.get(self.param.name))
        if rows and len(self.steps.rows) != rows:  # a step added or removed: refit the form
            QTimer.singleShot(0, self.editor, self.editor._fit_splitter)


# =========================================================================================
# the editor


class OperationEditor(QWidget):
    """Edits the operation selected in ``workspace.selection`` (see the module docstring)."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("operation_editor")
        self.workspace = workspace
        self.document = workspace.document
        self._op_id: int | None = None
        self._kind: str | None = None
        self._fields: dict[str, _Field] = {}
        self._errors: dict[str, str] = {}
        self._note = ""
        self._applying = False  # the document is changing because of this editor
        self._conventions_open = False
        self._dirty = True
        self._flush_posted = False  # a derivation update is queued (see _refresh_derivation)
        self._sections: list[Section] = []
        self._header = ("", "")
        self._levels_key: tuple[Any, ...] = ()
        self.last_refresh_ms = 0.0
        self.sweep_section: SweepSection | None = None

        self._stack = QStackedLayout(self)
        self._stack.addWidget(self._empty_page())

        page = QWidget()
        page_layout = QVBoxLayout(page)
        page_layout.setContentsMargins(0, 0, 0, 0)
        self._splitter = QSplitter(Qt.Orientation.Vertical)
        self._splitter.setChildrenCollapsible(False)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._splitter.addWidget(self._scroll)

        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.setSpacing(0)
        # the hint sits right under the form, outside its scroll area: always in view
        self._hint = QLabel("")
        self._hint.setObjectName("hint")
        self._hint.setWordWrap(True)
        self._hint.setTextFormat(Qt.TextFormat.PlainText)
        self._hint.setStyleSheet("QLabel#hint { color: #c62828; padding: 4px 10px; }")
        self._hint.setVisible(False)
        self._hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lower_layout.addWidget(self._hint)
        bar = QHBoxLayout()
        bar.setContentsMargins(10, 6, 6, 2)
        title = QLabel("Derivation")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        bar.addWidget(title)
        bar.addStretch(1)
        copy_button = QToolButton()
        copy_button.setObjectName("copy_derivation")
        copy_button.setText("Copy")
        copy_button.setToolTip("Copy the derivation as plain text")
        copy_button.setAutoRaise(True)
        copy_button.clicked.connect(self.copy_derivation)
        bar.addWidget(copy_button)
        lower_layout.addLayout(bar)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        lower_layout.addWidget(line)
        self.derivation = DerivationView()
        self.derivation.anchorClicked.connect(self._on_anchor)
        lower_layout.addWidget(self.derivation, 1)
        self._splitter.addWidget(lower)
        self._splitter.setStretchFactor(0, 0)
        self._splitter.setStretchFactor(1, 1)
        self._splitter_moved = False
        self._splitter.splitterMoved.connect(self._on_splitter_moved)
        page_layout.addWidget(self._splitter)
        self._stack.addWidget(page)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        self._show(workspace.selection.current)

    @staticmethod
    def _empty_page() -> QWidget:
        """The page shown when no operation is selected. Its text is plain: a stacked page is
        measured on every layout pass, shown or not, and a rich-text label lays out a text
        document each time."""
        page = QWidget()
        page.setObjectName("editor_empty")
        page.setEnabled(False)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.addStretch(1)
        title = QLabel("No operation selected")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        title.setFont(font)
        body = QLabel("Select an operation on the chart, in the operations list or in the "
                      "results table to edit its parameters here and see how its FLOPs and "
                      "bytes are counted.")
        body.setWordWrap(True)
        for label in (title, body):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        layout.addStretch(1)
        return page

    # -- public ----------------------------------------------------------------------------

    @property
    def operation_id(self) -> int | None:
        return self._op_id

    def field(self, name: str) -> QWidget | None:
        """The input widget of a parameter of the shown operation (``"name"`` and
        ``"memory_level"`` too), or ``None``."""
        if name == "name":
            return self._name_edit if self._op_id is not None else None
        if name == "memory_level":
            return self._level_combo if self._op_id is not None else None
        f = self._fields.get(name)
        return f.input if f is not None else None

    def hint_text(self) -> str:
        return self._hint.text() if self._op_id is not None else ""

    def errors(self) -> dict[str, str]:
        """Refused values now shown in the form: ``{param: message}``."""
        return dict(self._errors)

    def derivation_text(self) -> str:
        self._flush()
        if self._op_id is None:
            return ""
        return derivation_to_text(" — ".join(self._header), self._sections)

    def copy_derivation(self) -> None:
        QGuiApplication.clipboard().setText(self.derivation_text())

    def set_conventions_open(self, open_: bool) -> None:
        self._conventions_open = bool(open_)
        self._refresh_derivation(force=True)

    # -- selection and document changes ----------------------------------------------------

    def _on_selection(self, op_id: int | None) -> None:
        self._show(op_id)

    def _exists(self, op_id: int | None) -> bool:
        if op_id is None:
            return False
        try:
            self.document.operation(op_id)
        except KeyError:
            return False
        return True

    def _show(self, op_id: int | None, force: bool = False) -> None:
        if not self._exists(op_id):
            op_id = None
        kind = self.document.operation(op_id).operation.kind if op_id is not None else None
        if op_id == self._op_id and kind == self._kind and not force:
            return
        if self._op_id is not None:
            self.document.seal()
        self._op_id, self._kind = op_id, kind
        self._errors.clear()
        self._note = ""
        if op_id is None:
            self._fields = {}
            self.sweep_section = None
            self.derivation.clear_sections()
            self._stack.setCurrentIndex(0)
            return
        self._build_form()
        self._stack.setCurrentIndex(1)
        self._sync()
        self._fit_splitter()
        QTimer.singleShot(0, self, self._fit_splitter)  # again once the new rows are laid out
        self._refresh_derivation(force=True)

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what in ("state", "view", "title"):
            return
        if what == "session":  # a batch of edits, or another session
            current = self.workspace.selection.current
            if (self._op_id is not None and current == self._op_id and self._exists(current)
                    and self.document.operation(current).operation.kind == self._kind):
                self._sync()  # same operation: no rebuild, nothing typed is lost
                self._refresh_levels()
                if self.sweep_section is not None:
                    self.sweep_section.load()
                self._refresh_derivation()
            else:
                self._show(current, force=True)
            return
        if self._op_id is None:
            if what == "operations" and self._exists(self.workspace.selection.current):
                self._show(self.workspace.selection.current)  # undo of a delete
            return
        if what == "operations":
            if not self._exists(self._op_id):
                self._show(None)
            return
        if what == "operation":
            if self._op_id not in change.ids:
                return
            if change.fields and set(change.fields) <= _QUIET_FIELDS:
                return
            if change.fields == ("sweep",):  # no number of the operation itself changed
                if self.sweep_section is not None:
                    self.sweep_section.load()
                return
            self._sync()
            if self.sweep_section is not None:
                self.sweep_section.refresh()
            self._refresh_derivation()
            return
        if what in ("hardware", "machines"):
            self._refresh_levels()
            if self.sweep_section is not None:
                self.sweep_section.refresh()
            self._refresh_derivation()

    # -- form ------------------------------------------------------------------------------

    def _build_form(self) -> None:
        entry = self.document.operation(self._op_id)
        kind = KINDS[entry.operation.kind]
        container = QWidget()
        container.setObjectName("editor_form")
        outer = QVBoxLayout(container)
        outer.setContentsMargins(10, 8, 10, 8)
        outer.setSpacing(8)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setHorizontalSpacing(10)
        form.setVerticalSpacing(6)
        self._form = form

        self._name_edit = QLineEdit()
        self._name_edit.setObjectName("op_name")
        self._name_edit.setToolTip("Name of the operation (shown on the chart and in tables)")
        self._name_edit.textEdited.connect(self._on_name)
        self._name_edit.editingFinished.connect(lambda: self._finish("name"))
        form.addRow(self._bold_label("Name"), self._name_edit)

        kind_label = QLabel(f"{kind.label}")
        kind_label.setObjectName("op_kind")
        kind_label.setToolTip(f"<b>{escape_html(kind.label)}</b> ({kind.kind})<br>"
                              f"{escape_html(kind.doc)}")
        font = kind_label.font()
        font.setBold(True)
        kind_label.setFont(font)
        kind_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self._plain_label("Kind"), kind_label)

        self._level_combo = QComboBox()
        self._level_combo.setObjectName("op_memory_level")
        self._level_combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._level_combo.installEventFilter(no_wheel_filter())
        self._level_combo.setToolTip(
            "Memory level (or interconnect) whose traffic the bytes count, and whose "
            "bandwidth makes the sloped roof. Default: each machine's main memory.")
        self._level_combo.currentIndexChanged.connect(self._on_level)
        self._levels_key = ()
        self._refresh_levels()
        form.addRow(self._plain_label("Memory level"), self._level_combo)

        separator = QFrame()
        separator.setFrameShape(QFrame.Shape.HLine)
        separator.setFrameShadow(QFrame.Shadow.Sunken)
        form.addRow(separator)

        self._fields = {}
        for param in kind.params:
            f = self._make_field(param, kind)
            self._fields[param.name] = f
            if isinstance(f, _StepsField):  # a group box across both columns
                form.addRow(f.widget)
                continue
            label = self._param_label(param)
            label.setBuddy(f.input)
            label.setToolTip(f.input.toolTip())
            form.addRow(label, f.widget)
        outer.addLayout(form)

        self.sweep_section = SweepSection(self.workspace)
        self.sweep_section.set_operation(self._op_id)
        outer.addWidget(self.sweep_section)

        outer.addStretch(1)
        self._update_hint()
        self._scroll.setWidget(container)  # deletes the previous form

    def _fit_splitter(self) -> None:
        """Give the form the height it needs (at most 62 %), the derivation the rest; once
        the user drags the splitter, their choice is kept."""
        if self._splitter_moved:
            return
        total = sum(self._splitter.sizes()) or self.height()
        if total <= 0:
            return
        container = self._scroll.widget()
        if container is None:
            return
        container.layout().activate()  # rows added since the last layout pass count too
        wanted = container.sizeHint().height() + 2
        top = max(120, min(wanted, int(total * 0.62)))
        self._splitter.setSizes([top, max(total - top, 100)])

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        if self._op_id is not None:
            self._fit_splitter()

    @staticmethod
    def _bold_label(text: str) -> QLabel:
        label = QLabel(text)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        return label

    @staticmethod
    def _plain_label(text: str) -> QLabel:
        return QLabel(text)

    @staticmethod
    def _param_label(param: Param) -> QLabel:
        symbol = param.symbol
        label = param.label.lower()
        if symbol and label != symbol.lower() and not label.startswith(symbol.lower() + " "):
            widget = QLabel(f"{escape_html(param.label)} "
                            f"<span style='color:gray;'><i>{escape_html(symbol)}</i></span>")
            widget.setTextFormat(Qt.TextFormat.RichText)
        else:  # plain text: a rich-text label lays out a text document of its own
            widget = QLabel(param.label)
            widget.setTextFormat(Qt.TextFormat.PlainText)
        widget.setObjectName(f"label_{param.name}")
        return widget

    def _make_field(self, param: Param, kind: Kind) -> _Field:
        t = param.type
        if t == "int":
            return _IntField(self, param, kind)
        if t in ("float", "quantity"):
            return _QuantityField(self, param)
        if t in ("dtype", "precision", "choice"):
            return _ComboField(self, param, kind)
        if t == "bool":
            return _BoolField(self, param)
        if t == "str":
            return _TextField(self, param)
        if t == "steps":
            return _StepsField(self, param)
        raise AssertionError(t)

    def _refresh_levels(self) -> None:
        if self._op_id is None:
            return
        machines = [e.hardware for e in self.document.session.hardware]
        current = self.document.operation(self._op_id).operation.memory_level
        levels: dict[str, list[str]] = {}
        links: dict[str, list[str]] = {}
        for hw in machines:
            for name in hw.memory:
                levels.setdefault(name, []).append(hw.label)
            for name in hw.interconnect:
                links.setdefault(name, []).append(hw.label)
        kind = self.document.operation(self._op_id).operation.spec
        on_link = getattr(kind, "default_level", "") == "interconnect"
        if on_link:  # communication kinds count bytes over the first interconnect
            defaults = sorted({next(iter(hw.interconnect)) for hw in machines if hw.interconnect})
            what = "first interconnect"
        else:
            defaults = sorted({hw.main_memory for hw in machines})
            what = "main memory"
        key = (tuple((k, tuple(v)) for k, v in levels.items()),
               tuple((k, tuple(v)) for k, v in links.items()), tuple(defaults), what, current)
        if key == self._levels_key:
            return
        self._levels_key = key
        combo = self._level_combo
        combo.blockSignals(True)
        combo.clear()
        first = f"{what} (default: {', '.join(defaults)})" if defaults else f"{what} (default)"
        combo.addItem(first, None)
        combo.setItemData(0, f"Each machine's {what}", Qt.ItemDataRole.ToolTipRole)
        everyone = len(machines)
        for table, what in ((levels, ""), (links, "interconnect")):
            for name, owners in table.items():
                tags = [t for t in (what, "" if len(owners) == everyone
                                    else f"only {len(owners)} of {everyone} machines") if t]
                combo.addItem(name + (f"  ({', '.join(tags)})" if tags else ""), name)
                combo.setItemData(combo.count() - 1, "On: " + ", ".join(owners),
                                  Qt.ItemDataRole.ToolTipRole)
        if current is not None and combo.findData(current) < 0:
            combo.addItem(f"{current}  (on no machine of the session)", current)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        combo.blockSignals(False)

    def _context(self) -> dict[str, Any]:
        try:
            precision = self.workspace.results.counts(self._op_id).precision
        except Exception:  # noqa: BLE001 - only a label
            precision = None
        return {"precision": precision}

    def _sync(self) -> None:
        """Show the document's values (no echo, no rebuild, the field being typed in kept).

        A field showing refused text keeps it while the editor itself applies other edits;
        a change from outside (undo, redo, another panel) replaces it and clears the hint."""
        entry = self.document.operation(self._op_id)
        op = entry.operation
        kind = KINDS[op.kind]
        resolved = kind.resolve(op.params)
        context = self._context()
        external = not self._applying
        if "name" not in self._errors or external:
            if self._name_edit.text() != op.name:
                self._name_edit.setText(op.name)
            if self._errors.pop("name", None) is not None:
                set_invalid(self._name_edit, False)
        self._refresh_levels()
        for name, f in self._fields.items():
            if name in self._errors:
                if not external:
                    continue
                del self._errors[name]
                set_invalid(f.input, False)
                if isinstance(f, _StepsField):
                    f.steps.mark(None, None, False)
                    f.load(op.params.get(name), resolved, context)
                    f.steps.reset()
                    continue
            f.load(op.params.get(name), resolved, context)
        for param in kind.params:
            if param.only_if is not None:
                other, wanted = param.only_if
                visible = resolved.get(other) == wanted
                widget = self._fields[param.name].widget
                if self._form.isRowVisible(widget) != visible:
                    self._form.setRowVisible(widget, visible)
        self._update_hint()

    # -- edits -----------------------------------------------------------------------------

    def _on_name(self, text: str) -> None:
        if self._op_id is None:
            return
        if not text.strip():
            self._refuse("name", "Name: must not be empty", self._name_edit)
            return
        self._accept("name", self._name_edit)
        with self._apply():
            self.document.set_operation_field(self._op_id, "name", text)

    def _on_level(self, index: int) -> None:
        if self._op_id is None:
            return
        with self._apply():
            self.document.seal()
            self.document.set_operation_field(self._op_id, "memory_level",
                                              self._level_combo.itemData(index))
            self.document.seal()

    def _propose(self, name: str, value: Any, discrete: bool = False) -> None:
        """Apply ``value`` to parameter ``name`` if the model accepts it; else explain."""
        if self._op_id is None:
            return
        f = self._fields[name]
        op = self.document.operation(self._op_id).operation
        param = op.spec.param(name)
        if value is None:
            normalised = None
        else:
            try:
                normalised = check_param(param, value, Place(None))
            except InputError as exc:
                self._refuse(name, self._message(param, _describe(exc)), f.input, exc)
                return
        candidate = dict(op.params)
        if normalised is None:
            candidate.pop(name, None)
        else:
            candidate[name] = normalised
        before = {problem for problem in kind_checks(op.kind, op.params)}
        for other, problem in kind_checks(op.kind, candidate):
            if (other, problem) in before:
                continue
            other_param = op.spec.param(other)
            if other == name:
                message = self._message(param, problem)
            else:
                message = (f"{param.label} = {value}: not applied — "
                           f"{self._message(other_param, problem)}")
            self._refuse(name, message, f.input)
            return
        self._accept(name, f.input)
        if op.params.get(name) == normalised:
            return
        with self._apply():
            if discrete:  # a pick or a click is an undo step of its own
                self.document.seal()
            self.document.set_param(self._op_id, name, normalised)
            if discrete:
                self.document.seal()

    @contextmanager
    def _apply(self) -> Iterator[None]:
        self._applying = True
        try:
            yield
        finally:
            self._applying = False

    @staticmethod
    def _message(param: Param, problem: str) -> str:
        label = param.label
        if param.symbol and param.symbol.lower() != label.lower():
            label += f" ({param.symbol})"
        return f"{label}: {problem}"

    def _refuse(self, name: str, message: str, widget: QWidget,
                exc: InputError | None = None) -> None:
        self._errors[name] = message
        self._note = ""
        f = self._fields.get(name)
        if isinstance(f, _StepsField):
            row, part = _step_place(exc)
            f.steps.mark(row, part, True)
        else:
            set_invalid(widget, True)
        self._update_hint()

    def _accept(self, name: str, widget: QWidget) -> None:
        if name in self._errors or self._note:
            self._errors.pop(name, None)
            self._note = ""
            f = self._fields.get(name)
            if isinstance(f, _StepsField):
                f.steps.mark(None, None, False)
            self._update_hint()
        set_invalid(widget, False)

    def _finish(self, name: str) -> None:
        """End of a gesture (Return, focus out): one undo step; refused text is put back."""
        self.document.seal()
        if self._op_id is None or name not in self._errors:
            return
        message = self._errors.pop(name)
        op = self.document.operation(self._op_id).operation
        if name == "name":
            set_invalid(self._name_edit, False)
            self._name_edit.setText(op.name)
            self._note = f"{message} — kept “{op.name}”."
        else:
            f = self._fields[name]
            resolved = op.spec.resolve(op.params)
            set_invalid(f.input, False)
            if isinstance(f, _StepsField):
                f.steps.mark(None, None, False)
            f.load(op.params.get(name), resolved, self._context())
            if isinstance(f, _StepsField):
                f.steps.reset()
            shown = resolved.get(name)
            kept = "" if isinstance(shown, list) else f" — kept {f.param.label} = {shown}"
            self._note = f"{message}{kept}."
        self._update_hint()

    def _update_hint(self) -> None:
        lines = list(self._errors.values())
        if self._note:
            lines.append(self._note)
        text = "\n".join(lines)
        if self._hint.text() != text:
            self._hint.setText(text)
        self._hint.setVisible(bool(text))

    # -- derivation ------------------------------------------------------------------------

    def _refresh_derivation(self, force: bool = False) -> None:
        """Show the derivation again: at once when ``force`` (another operation, the
        conventions toggled), else once the edit's repaint is done. The chart and the tables
        an edit changed are painted first; a burst of edits (a key held down) re-lays out
        the text once. :meth:`derivation_text` is always up to date."""
        self._dirty = True
        if force:
            self._flush()
        elif self.isVisible() and not self._flush_posted:
            self._flush_posted = True
            QCoreApplication.postEvent(self, QEvent(_FLUSH_EVENT), _AFTER_REPAINT)

    def event(self, event: QEvent) -> bool:  # noqa: D102 (Qt API)
        if event.type() == _FLUSH_EVENT:
            self._flush_posted = False
            self._flush()
            return True
        return super().event(event)

    def _flush(self) -> None:
        if not self._dirty or self._op_id is None:
            return
        start = time.perf_counter()
        self._dirty = False
        entry = self.document.operation(self._op_id)
        kind = KINDS[entry.operation.kind]
        self._sections = build_derivation(self.document, self.workspace.results, self._op_id,
                                          self._conventions_open)
        self._header = (entry.operation.name, kind.label)
        self.derivation.show_sections(entry.operation.name, f"{kind.label} — {kind.doc}",
                                      self._sections, self._conventions_open)
        self.last_refresh_ms = (time.perf_counter() - start) * 1000

    def _on_splitter_moved(self, *_: Any) -> None:
        self._splitter_moved = True

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt API)
        return super().sizeHint().expandedTo(QSize(460, 640))

    def showEvent(self, event: Any) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        self._flush()

    def _on_anchor(self, url: QUrl) -> None:
        if url.toString() == "toggle:conventions":
            self.set_conventions_open(not self._conventions_open)


def _describe(exc: InputError) -> str:
    """The problem of ``exc``, with a steps key path said in words ("step 2, extra inputs")."""
    path = exc.path
    if not path or not isinstance(path[0], int):
        return str(exc)
    where = [f"step {path[0] + 1}"]
    if "inputs" in path[1:]:
        where.append("extra inputs")
    elif "flops" in path[1:]:
        where.append("FLOP/elem")
    elif "op" in path[1:]:
        where.append("op")
    return f"{', '.join(where)}: {exc.message}"


def _step_place(exc: InputError | None) -> tuple[int | None, str | None]:
    """(row, "inputs" | "flops") of a steps error from its key path."""
    if exc is None or not exc.path:
        return None, None
    path = exc.path
    row = path[0] if isinstance(path[0], int) else None
    part = next((p for p in path[1:] if p in ("inputs", "flops")), None)
    return row, part

