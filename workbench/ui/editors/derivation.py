"""The derivation of one operation: every FLOP and byte term, the totals, the roofline.

Every FLOP term and byte term is shown with its formula in symbols, the same with values,
and the value; the totals; the kind's notes; the roofline on every machine of the session
with its formulas; and the counting conventions.

Public API::

    build_derivation(document, results, op_id) -> [Section]   # the content, no Qt
    derivation_to_text(header, sections) -> str                # the same as plain text
    layout_blocks(...) -> [paragraph]                          # the paragraphs shown
    DerivationView()                                           # the read-only text view
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
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

from workbench.document import Document, ResultCache
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.operations import CONVENTIONS, Counts, Term
from workbench.model.rules import formula
from workbench.model.rules import intensity as intensity_of
from workbench.model.units import format_number, format_quantity

__all__ = ["TermRow", "Section", "build_derivation", "derivation_to_text", "layout_blocks",
           "DerivationView"]

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
    except COUNTING_ERRORS as exc:  # shown to the user
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
    intensity = intensity_of(flops, nbytes)
    totals = [
        ("FLOPs  F", f"{_q(flops, 'flops')}  ({_exact(flops)})"),
        ("bytes  B", f"{_q(nbytes, 'bytes')} = {_q(read, 'bytes')} read + "
                     f"{_q(written, 'bytes')} written  ({_exact(nbytes)})"),
        ("bytes read", _q(read, "bytes")),
        ("bytes written", _q(written, "bytes")),
        ("intensity  I", f"F / B = {_q(flops, 'flops')} / {_q(nbytes, 'bytes')} = "
                         f"{_q(intensity, 'intensity')}"),
        ("compute precision", counts.precision),
        ("unit", _UNIT_TEXT.get(counts.unit, counts.unit)),
    ]
    if counts.kernels > 1:
        totals.append(("kernels", f"{counts.kernels} (one launch each)"))
    sections.append(Section("Totals", "pairs", totals))
    notes = list(counts.notes)
    if op.memory_level:
        notes.append(f"Bytes are counted across “{op.memory_level}” instead of main memory.")
    if notes:
        sections.append(Section("Notes", "bullets", notes))
    defaults = op.defaults_taken()
    if defaults:
        sections.append(Section(f"Defaults taken ({len(defaults)})", "bullets", defaults))
    for hw_entry in document.session.hardware:
        pair = results.pair(op_id, hw_entry.id)
        hw = hw_entry.hardware
        title = hw.label + ("" if hw_entry.visible else "  (hidden on the chart)")
        if pair.result is None:
            reason = pair.skipped.reason if pair.skipped else "not evaluated"
            sections.append(Section(title, "pairs", [("skipped", reason)], "skipped", "skipped"))
            continue
        r = pair.result
        vector = "vector " if r.unit == "vector" else ""
        ceiling = (f"{r.precision_used} {vector}peak {_q(r.peak_flops, 'flop_rate')}  "
                   f"({r.unit} units)")
        if r.precision_used != r.precision:
            ceiling += (f"  (no {r.precision} {vector}peak on this machine: its "
                        f"{r.precision_used} peak is used, the next wider precision)")
        if counts.unit == "vector" and r.unit != "vector":
            ceiling += ("  (this machine lists no vector peaks: its matrix peak stands in, an "
                        "optimistic roof)")
        where = ("interconnect" if r.level in hw.interconnect
                 else "main memory" if r.level == hw.main_memory else "memory level")
        rows = [
            ("ceiling", ceiling),
            ("bandwidth", f"{r.level} {_q(r.bandwidth, 'bandwidth')}  ({where})"),
            ("ridge", f"{formula('ridge')} = {_q(r.peak_flops, 'flop_rate')} / "
                      f"{_q(r.bandwidth, 'bandwidth')} = {_q(r.ridge, 'intensity')}"),
            ("attainable", f"{formula('attainable')} = min({_q(r.peak_flops, 'flop_rate')}, "
                           f"{_q(r.intensity, 'intensity')} × "
                           f"{_q(r.bandwidth, 'bandwidth')}) = "
                           f"{_q(r.attainable_flops, 'flop_rate')}  "
                           f"({_percent(r.fraction_of_peak)} of peak)"),
            ("T_math", f"F / peak = {_q(r.flops, 'flops')} / {_q(r.peak_flops, 'flop_rate')} = "
                       f"{_q(r.t_math_s, 'time')}"),
            ("T_mem", f"B / bandwidth = {_q(r.bytes, 'bytes')} / "
                      f"{_q(r.bandwidth, 'bandwidth')} = {_q(r.t_mem_s, 'time')}"),
        ]
        launch = _launch_text(r, hw)
        if r.calibrated is not None:
            rows.extend(_calibrated_rows(r, hw))
            sections.append(Section(title, "pairs", rows, f"{r.bound}-bound", r.bound))
            continue
        roofline = r.t_lower_s - r.latency_s  # max(T_math, T_mem)
        if r.bound == "overhead":
            eff = f" / {r.efficiency:g}" if r.efficiency else ""
            why = (f"max(T_math, T_mem){eff} = {_q(roofline / (r.efficiency or 1.0), 'time')}"
                   f" < {launch}")
        elif r.bound == "compute":
            why = "T_math ≥ T_mem"
        else:
            why = "T_mem > T_math"
        rows.append(("bound", f"{r.bound} ({why})"))
        plus = ""
        if r.latency_s:  # a collective: its steps each pay the link's latency, a floor
            steps, values = counts.latency_formula
            alpha, source = hw.latency_of(r.level)
            rows.append(("link latency", f"steps·α = {steps}·α = {values}·"
                                         f"{_q(alpha, 'time')} ({source}) = "
                                         f"{_q(r.latency_s, 'time')}"))
            plus = " + latency"
        rows.append(("time bounds", f"max(T_math, T_mem){plus} = {_q(r.t_lower_s, 'time')} "
                                    f"≤ T ≤ T_math + T_mem{plus} = {_q(r.t_upper_s, 'time')}"))
        base = "max(T_math, T_mem)" if r.latency_s else "T_lower"  # (latency not derated)
        if r.efficiency:
            predicted = f"{base} / {r.efficiency:g}"
            if r.launch_overhead_s:
                predicted = f"max({predicted}, {launch})"
            rows.append(("predicted", f"at {_percent(r.efficiency)} efficiency: "
                                      f"{predicted}{plus} = {_q(r.t_predicted_s, 'time')}"))
        elif r.launch_overhead_s:
            rows.append(("predicted", f"max({base}, {launch}){plus} = "
                                      f"{_q(r.t_predicted_s, 'time')}"))
        sections.append(Section(title, "pairs", rows, f"{r.bound}-bound", r.bound))
    if not document.session.hardware:
        sections.append(Section("Machines", "bullets",
                                 ["No machine in the session: add one to see the roofline."]))
    sections.append(Section(f"Conventions ({len(CONVENTIONS)})", "toggle",
                            list(CONVENTIONS) if conventions_open else []))
    return sections


def _calibrated_rows(r: Any, hw: Any) -> list[tuple[str, str]]:
    """The calibrated prediction's lines: which efficiencies applied and why, the work and
    fixed parts, the predicted time (see :mod:`workbench.model.prediction`)."""
    from workbench.model.prediction import LAUNCHES, calibration_of

    c = r.calibrated
    cal = calibration_of(hw)
    origin = cal.source or "the machine's calibration"
    k = r.kernels
    fixed_bound = r.t_work_s < r.t_fixed_s
    if r.bound == "overhead":
        why = (f"T_work {_q(r.t_work_s, 'time')} < T_fixed {_q(r.t_fixed_s, 'time')}"
               if fixed_bound else
               f"T_fixed + T_work {_q(r.t_fixed_s + r.t_work_s, 'time')} < {k} × launch "
               f"floor {_q(c.floor, 'time')}")
    elif r.bound == "compute":
        why = "T_math ≥ T_mem"
    else:
        why = "T_mem > T_math"
    rows = [
        ("bound", f"{r.bound} ({why})"),
        ("time bounds", f"max(T_math, T_mem) = {_q(r.t_lower_s, 'time')} ≤ T ≤ "
                        f"T_math + T_mem = {_q(r.t_upper_s, 'time')}"),
        ("efficiency", f"{c.math_class} {c.e_math:g} on the compute roof, {c.memory_class} "
                       f"{c.e_mem:g} on the bandwidth roof: {c.reason} ({origin})"),
        ("T_work", f"{formula('t_work')} = max({_q(r.t_math_s, 'time')} / "
                   f"{c.e_math:g}, {_q(r.t_mem_s, 'time')} / {c.e_mem:g}) = "
                   f"{_q(r.t_work_s, 'time')}"),
        ("T_fixed", f"{formula('t_fixed')} = {k} × ({_q(c.launch, 'time')} + "
                    f"{_q(c.startup, 'time')}) = {_q(r.t_fixed_s, 'time')}  "
                    f"({LAUNCHES.get(c.launches, c.launches)})"),
    ]
    if c.floor > 0:
        rows.append(("predicted", f"max(T_fixed + T_work, kernels × launch floor) = "
                                  f"max({_q(r.t_fixed_s + r.t_work_s, 'time')}, {k} × "
                                  f"{_q(c.floor, 'time')}) = {_q(r.t_predicted_s, 'time')}"))
    else:
        rows.append(("predicted", f"T_fixed + T_work = {_q(r.t_fixed_s, 'time')} + "
                                  f"{_q(r.t_work_s, 'time')} = {_q(r.t_predicted_s, 'time')}"))
    return rows


_UNIT_TEXT = {"matrix": "matrix units (tensor cores, MXU, AMX)",
              "vector": "vector units (CUDA cores, VPU, AVX)"}


def _launch_text(r: Any, hw: Any) -> str:
    """``launch overhead 8 µs (rule of thumb)``, ``3 × launch overhead …`` for several
    kernels; the overhead is a rule of thumb unless the machine lists it as measured."""
    per = _q(r.launch_overhead_s or 0.0, "time")
    status = hw.figure_status("launch_overhead")
    count = f"{r.kernels} × " if r.kernels > 1 else ""
    return f"{count}launch overhead {per} ({status})"


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
