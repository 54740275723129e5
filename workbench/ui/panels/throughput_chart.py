"""Throughput against latency: output tokens per second per chip against the time per output
token (TPOT), one curve per machine over a batch sweep (1 … the largest batch that fits), on
log-log axes. Drawn with one painter for the screen and for the figure's SVG (from which
the window's export draws PNG and PDF, as for every figure).

Every curve is named in a legend beside or below the plot (never over the data; below it in
as many columns as the width holds), each machine with its own colour and marker shape; the
axes end a little beyond the data, ticked at 1, 2 and 5 times each power of ten, their
decades labelled (and the 2s and 5s too where fewer than two decades lie within).
"""

from __future__ import annotations

import math
from dataclasses import field

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetricsF,
    QKeyEvent,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import QMenu, QSizePolicy, QToolTip, QWidget

from workbench.records import record
from workbench.ui.chart.hover import plain_tip
from workbench.ui.panels.plot_parts import figure_key, figure_menu, pop_up

__all__ = ["Curve", "ThroughputChart", "paint_chart", "chart_background", "tick_pt",
           "curves_for", "chart_title", "point_text"]

#: Okabe-Ito colours (distinct for colour-blind readers) and marker shapes, per machine.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
MARKERS = ("circle", "square", "triangle", "diamond")
X_TITLE = "Time per output token, TPOT [ms]"
Y_TITLE = "Output tokens/s per chip"


@record
class Curve:
    """One machine's sweep: (TPOT in seconds, tokens/s per chip, batch) per point."""
    label: str
    points: list[tuple[float, float, int]] = field(default_factory=list)
    note: str = ""  # why there is no curve (nothing fits, no capacity)


def curves_for(arch, setup, machines) -> list[Curve]:
    """The batch sweep of ``arch`` with ``setup`` on each machine, as curves."""
    from workbench.model.llm.results import batch_sweep

    out = []
    for hw in machines:
        points = batch_sweep(arch, setup, hw)
        note = "" if points else ("no capacity set" if not hw.capacity else
                                  "does not fit at batch 1")
        out.append(Curve(hw.label, [(p.tpot_s, p.tokens_per_s_per_chip, p.batch)
                                    for p in points], note))
    return out


def chart_title(label: str, setup) -> str:
    """``Llama-3.1-8B: prompt 2048 + 256 output tokens, bf16, tp 8`` (what the curves
    assume). Without output tokens, one decode step at the KV length: "decode" said, the
    curves being decode's whatever the phase of the model (its title read "8B prefill: KV
    length 2,048" over output tokens/s)."""
    parts = [f"prompt {setup.prompt_len:,} + {setup.output_len:,} output tokens"
             if setup.output_len else f"decode at KV length {setup.kv_len:,}", setup.weights]
    for name in ("tp", "ep", "pp"):
        if getattr(setup, name) > 1:
            parts.append(f"{name} {getattr(setup, name)}")
    return f"{label}: " + ", ".join(parts)


#: an axis ends, and is ticked, at these times a power of ten
_STEPS = (1.0, 2.0, 5.0)


def axis_ends(lo: float, hi: float, pad: float = 0.05) -> tuple[float, float]:
    """A log axis's ends for values from ``lo`` to ``hi``: ``pad`` of their span (a
    fiftieth of a decade at least) beyond each, so that no marker sits on the frame; where
    fewer than two ticks (1, 2 or 5 × 10ᵏ) would lie between those, the nearest ticks
    beyond them. Whole decades left most of a plot empty: values from 4.3 to 48 ms were
    drawn from 1 to 100 ms."""
    l0, l1 = math.log10(lo), math.log10(hi)
    beyond = max(pad * (l1 - l0), 0.02)
    a, b = 10.0 ** (l0 - beyond), 10.0 ** (l1 + beyond)
    if len(axis_ticks(a, b)) >= 2:
        return a, b

    def nice(value: float, up: bool) -> float:
        e = math.floor(math.log10(value))
        steps = [s * 10.0 ** k for k in (e - 1, e, e + 1) for s in _STEPS]
        return (min(v for v in steps if v >= value) if up
                else max(v for v in steps if v <= value))

    a, b = nice(a, False), nice(b, True)
    return a, (b if b > a else nice(a * 1.001, True))


def axis_ticks(a: float, b: float) -> list[tuple[float, bool]]:
    """Every 1, 2 and 5 × 10ᵏ from ``a`` to ``b``, each with whether it is labelled where
    there is room: the decades, or every tick where fewer than two decades lie within."""
    ticks = [s * 10.0 ** e
             for e in range(math.floor(math.log10(a)), math.ceil(math.log10(b)) + 1)
             for s in _STEPS]
    ticks = [v for v in ticks if a * (1 - 1e-9) <= v <= b * (1 + 1e-9)]
    decades = [v for v in ticks if _is_decade(v)]
    return [(v, len(decades) < 2 or _is_decade(v)) for v in ticks]


def _is_decade(value: float) -> bool:
    return abs(math.log10(value) - round(math.log10(value))) < 1e-9


def tick_text(value: float) -> str:
    """2, 50, 1,000, 20,000 … ; 0.5, 0.02 below one."""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _labelled(places: list[float], ticks: list[tuple[float, bool]], needed: float
              ) -> list[bool]:
    """Which of the ``ticks`` (:func:`axis_ticks`, at ``places``: pixels along an axis, in
    order) are labelled: those that may be, each at least ``needed`` from the last one
    labelled."""
    out, last = [], -math.inf
    for at, (_value, may) in zip(places, ticks, strict=True):
        out.append(may and abs(at - last) >= needed)
        if out[-1]:
            last = at
    return out


def chart_background(dark: bool = False) -> str:
    """The colour the chart is drawn on."""
    return "#1E1E1E" if dark else "#FFFFFF"


def paint_chart(painter: QPainter, rect: QRectF, curves: list[Curve], title: str = "",
                pt: float = 9.0, dark: bool = False, fill: bool = True
                ) -> list[tuple[QPointF, Curve, tuple]]:
    """Draw the chart into ``rect`` (device units; ``pt`` is the tick-label size in those
    units' points as the painter's device counts them), on its background unless not
    ``fill``. Returns where each point was drawn within the plot: ``(position, its curve,
    (TPOT s, tokens/s per chip, batch))``."""
    drawn: list[tuple[QPointF, Curve, tuple]] = []
    ink = QColor("#E8E8E8" if dark else "#202020")
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    if fill:
        painter.fillRect(rect, QColor(chart_background(dark)))
    font = QFont("DejaVu Sans")
    font.setPointSizeF(pt)
    title_font = QFont(font)
    title_font.setPointSizeF(pt * 1.1)
    fm = QFontMetricsF(font, painter.device())
    tfm = QFontMetricsF(title_font, painter.device())
    line = fm.height()
    pad = line * 0.6
    unit = painter.device().logicalDpiY() / 72  # device units per point
    shown = [c for c in curves if c.points]

    # the legend below the plot: one row per machine (a curve, or why there is none), in
    # as many columns as the width holds (a slide's or two paper columns' width had one
    # name a row, most of each row empty)
    rows = [(i, c) for i, c in enumerate(curves)]
    texts = [_legend_text(c) for c in curves]
    legend_w = line * 3 + max((fm.horizontalAdvance(t) for t in texts), default=0) + pad
    columns = max(1, min(len(rows), int((rect.width() - pad) // (legend_w + pad))))
    per_column = math.ceil(len(rows) / columns) if rows else 0
    legend_h = per_column * line * 1.25 + pad if rows else 0.0
    top = rect.top() + pad + (tfm.height() + pad if title else 0.0)
    # the legend below the plot, or beside it when the figure is short and wide: where
    # below it the plot (less its x axis) would be under eight lines tall
    axis_h = line * 2 + pad * 2
    beside = (rect.height() - top - axis_h - legend_h < 8 * line
              and rect.width() - legend_w > 1.5 * legend_w)
    if beside:
        columns, per_column = 1, len(rows)
    bottom_space = axis_h + (0.0 if beside else legend_h)

    xs = [p[0] * 1e3 for c in shown for p in c.points]
    ys = [p[1] for c in shown for p in c.points]
    size = pt * 0.6 * unit  # (a marker's)
    # the axes' ends a twentieth of the data's span beyond it, or more where a marker at
    # the end would not lie whole within the plot (a short plot on screen)
    x_pad = y_pad = 0.05
    for _ in range(2):
        xa, xb = axis_ends(min(xs), max(xs), x_pad) if xs else (1.0, 100.0)
        ya, yb = axis_ends(min(ys), max(ys), y_pad) if ys else (1.0, 1000.0)
        x_ticks, y_ticks = axis_ticks(xa, xb), axis_ticks(ya, yb)
        left = rect.left() + pad + line + pad + max(
            fm.horizontalAdvance(tick_text(v)) for v, _ in y_ticks) + pad
        last_x = tick_text(x_ticks[-1][0])
        right = rect.right() - pad - fm.horizontalAdvance(last_x) / 2
        if beside:
            right -= legend_w
        plot = QRectF(QPointF(left, top), QPointF(right, rect.bottom() - bottom_space))
        if plot.width() < 10 or plot.height() < 10:
            painter.restore()
            return drawn
        # (a marker's half and a pixel, as a share of the plot: the share of the data's
        # span it takes beyond it, the axis being that span and twice the pad)
        fx, fy = ((size / 2 + unit) / length for length in (plot.width(), plot.height()))
        wanted = (min(0.45, fx / max(0.1, 1 - 2 * fx)), min(0.45, fy / max(0.1, 1 - 2 * fy)))
        if wanted[0] <= x_pad and wanted[1] <= y_pad:
            break
        x_pad, y_pad = max(x_pad, wanted[0]), max(y_pad, wanted[1])

    lx0, lx1, ly0, ly1 = (math.log10(v) for v in (xa, xb, ya, yb))

    def to_px(x_ms: float, y: float) -> QPointF:
        fx = (math.log10(x_ms) - lx0) / (lx1 - lx0)
        fy = (math.log10(y) - ly0) / (ly1 - ly0)
        return QPointF(plot.left() + fx * plot.width(), plot.bottom() - fy * plot.height())

    if title:
        painter.setFont(title_font)
        painter.setPen(ink)
        painter.drawText(QRectF(rect.left() + pad, rect.top() + pad, rect.width() - 2 * pad,
                                tfm.height()),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         tfm.elidedText(title, Qt.TextElideMode.ElideNone, 1e9))
    # frame, ticks, tick labels
    painter.setFont(font)
    painter.setPen(QPen(ink, 0.8 * unit))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRect(plot)
    tick = line * 0.3
    # (a label where it may have one and keeps its room from the last; a shorter tick
    # where none)
    xs_px = [to_px(v, ya).x() for v, _ in x_ticks]
    widest = max(fm.horizontalAdvance(tick_text(v)) for v, _ in x_ticks)
    x_shown = _labelled(xs_px, x_ticks, widest + line)
    for x, (value, _may), shown in zip(xs_px, x_ticks, x_shown, strict=True):
        painter.drawLine(QPointF(x, plot.bottom()),
                         QPointF(x, plot.bottom() - (tick if shown else tick * 0.6)))
        if shown:
            text = tick_text(value)
            w = fm.horizontalAdvance(text)
            painter.drawText(QRectF(x - w / 2 - 1, plot.bottom() + tick, w + 2, line),
                             int(Qt.AlignmentFlag.AlignCenter), text)
    ys_px = [to_px(xa, v).y() for v, _ in y_ticks]
    y_shown = _labelled(ys_px, y_ticks, line * 1.2)
    for y, (value, _may), shown in zip(ys_px, y_ticks, y_shown, strict=True):
        painter.drawLine(QPointF(plot.left(), y),
                         QPointF(plot.left() + (tick if shown else tick * 0.6), y))
        if shown:
            text = tick_text(value)
            w = fm.horizontalAdvance(text)
            painter.drawText(QRectF(plot.left() - tick - w - 2, y - line / 2, w + 2, line),
                             int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
                             text)
    # axis titles
    painter.drawText(QRectF(plot.left(), plot.bottom() + tick + line, plot.width(), line),
                     int(Qt.AlignmentFlag.AlignCenter), X_TITLE)
    painter.save()
    painter.translate(rect.left() + pad + line / 2, plot.center().y())
    painter.rotate(-90)
    y_title = next((t for t in (Y_TITLE, "tokens/s/chip", "tok/s/chip")
                    if fm.horizontalAdvance(t) <= plot.height()), "")
    painter.drawText(QRectF(-plot.height() / 2, -line / 2, plot.height(), line),
                     int(Qt.AlignmentFlag.AlignCenter), y_title)
    painter.restore()

    # the curves, clipped to the plot
    painter.save()
    painter.setClipRect(plot)
    for i, c in enumerate(curves):
        if not c.points:
            continue
        colour = QColor(COLOURS[i % len(COLOURS)])
        painter.setPen(QPen(colour, 1.5 * unit))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        pts = [to_px(t * 1e3, y) for t, y, _ in c.points]
        path = QPainterPath(pts[0])
        for p in pts[1:]:
            path.lineTo(p)
        painter.drawPath(path)
        for p, point in zip(pts, c.points, strict=True):
            _marker(painter, p, MARKERS[i % len(MARKERS)], size, colour)
            if plot.contains(p):
                drawn.append((p, c, point))
    painter.restore()

    # legend
    painter.setFont(font)
    if beside:
        y0, x0 = plot.top(), plot.right() + fm.horizontalAdvance(last_x) / 2 + pad
    else:
        y0, x0 = plot.bottom() + tick + 2 * line + pad, rect.left() + pad
    for i, c in rows:  # (top to bottom, then the next column)
        x = x0 + (i // per_column) * (legend_w + pad)
        y = y0 + (i % per_column) * line * 1.25
        colour = QColor(COLOURS[i % len(COLOURS)])
        mid = QPointF(x + line * 1.2, y + line / 2)
        if c.points:
            painter.setPen(QPen(colour, 1.5 * unit))
            painter.drawLine(QPointF(x, mid.y()), QPointF(x + line * 2.4, mid.y()))
            _marker(painter, mid, MARKERS[i % len(MARKERS)], size, colour)
        text = _legend_text(c)
        painter.setPen(ink)
        painter.drawText(QRectF(x + line * 3, y, fm.horizontalAdvance(text) + 2, line),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), text)
    painter.restore()
    return drawn


def point_text(curve: Curve, point: tuple) -> str:
    """What a point of the chart says when hovered: its machine, batch, TPOT and tokens/s."""
    tpot, rate, batch = point
    return (f"{curve.label}\nbatch {batch:,}\nTPOT {tpot * 1e3:.3g} ms\n"
            f"{rate:,.0f} output tokens/s per chip")


def _legend_text(c: Curve) -> str:
    if c.points:
        return f"{c.label} (batch {c.points[0][2]:,}–{c.points[-1][2]:,})"
    return f"{c.label}: {c.note or 'no points'}"


def _marker(painter: QPainter, p: QPointF, shape: str, size: float, colour: QColor) -> None:
    painter.setBrush(colour)
    painter.setPen(QPen(colour, 0.5))
    r = size / 2
    if shape == "square":
        painter.drawRect(QRectF(p.x() - r, p.y() - r, size, size))
    elif shape == "triangle":
        painter.drawPolygon(QPolygonF([QPointF(p.x(), p.y() - r * 1.15),
                                       QPointF(p.x() - r * 1.1, p.y() + r * 0.8),
                                       QPointF(p.x() + r * 1.1, p.y() + r * 0.8)]))
    elif shape == "diamond":
        painter.drawPolygon(QPolygonF([QPointF(p.x(), p.y() - r * 1.3),
                                       QPointF(p.x() + r * 1.3, p.y()),
                                       QPointF(p.x(), p.y() + r * 1.3),
                                       QPointF(p.x() - r * 1.3, p.y())]))
    else:
        painter.drawEllipse(p, r, r)
    painter.setBrush(Qt.BrushStyle.NoBrush)


class ThroughputChart(QWidget):
    """The chart on screen, offering to copy or export itself on a right click."""

    #: the chart's context menu: Copy Chart, Export Chart…
    copy_requested = Signal()
    export_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("throughputChart")
        self.curves: list[Curve] = []
        self.title = ""
        self.setMinimumSize(240, 160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        # reached by Tab and a click: Ctrl+C copies it, the Menu key or Shift+F10 opens its
        # menu (else Copy Chart would be reached by the mouse alone)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Throughput chart")
        self.setAccessibleDescription("Right click, the Menu key or Shift+F10: Copy Chart "
                                      "and Export Chart…; Ctrl+C copies it")
        #: where the last paint drew each point (see :func:`paint_chart`)
        self.drawn: list[tuple[QPointF, Curve, tuple]] = []

    def set_curves(self, curves: list[Curve], title: str = "") -> None:
        self.curves, self.title = curves, title
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(480, 320)

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        try:
            self.drawn = paint_chart(painter, QRectF(self.rect()), self.curves, self.title,
                                     pt=self.font().pointSizeF())
            if self.hasFocus():  # (where the keys go: a thin frame in the focus colour)
                painter.setPen(QPen(self.palette().highlight().color(), 1.0,
                                    Qt.PenStyle.DotLine))
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        finally:
            painter.end()

    def context_menu(self) -> QMenu:
        """The menu a right click opens (not shown)."""
        return figure_menu(self, "Chart", self.copy_requested.emit, self.export_requested.emit)

    def contextMenuEvent(self, event) -> None:
        pop_up(self.context_menu(), event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not figure_key(self, event, self.copy_requested.emit, self.context_menu):
            super().keyPressEvent(event)

    def focusInEvent(self, event) -> None:
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event) -> None:
        super().focusOutEvent(event)
        self.update()

    #: how near the pointer is to a point for its numbers, pixels
    HOVER_PX = 8.0

    def text_at(self, pos: QPointF) -> str:
        """The numbers of the point nearest ``pos`` (the widget's pixels) within
        :attr:`HOVER_PX`, or ""."""
        near = [(math.hypot(p.x() - pos.x(), p.y() - pos.y()), curve, point)
                for p, curve, point in self.drawn]
        near = [n for n in near if n[0] <= self.HOVER_PX]
        if not near:
            return ""
        _gap, curve, point = min(near, key=lambda n: n[0])
        return point_text(curve, point)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            text = self.text_at(QPointF(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), plain_tip(text), self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


def tick_pt(width_in: float) -> float:
    """Tick labels of 9 pt, smaller on a narrow figure (never under 7 pt)."""
    return max(7.0, min(9.0, width_in * 72 / 30))
