"""The chart's axes and plot widget, and the one place the chart takes a logarithm.

Log-log the robust way: every chart item lives in **log10 coordinates** (:func:`to_view` is
the only place a logarithm is taken, :func:`to_data` the only inverse) and only the two
:class:`LogAxis` items are in log mode, for their tick labels.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView

from workbench.model.units import format_quantity

__all__ = ["LogAxis", "PlotWidget", "to_view", "to_data"]

_CACHE = QGraphicsItem.CacheMode.DeviceCoordinateCache
_NO_CACHE = QGraphicsItem.CacheMode.NoCache

def to_view(value):
    """Data units → view (log10) coordinates. The one place the canvas takes a logarithm."""
    if isinstance(value, (float, int)):  # one number: no numpy call (thousands per rebuild)
        if value > 0:
            return math.log10(value)
        return -math.inf if value == 0 else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(value)


def to_data(value):
    """View (log10) coordinates → data units."""
    return np.power(10.0, value)

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")

class LogAxis(pg.AxisItem):
    """An axis in log mode whose tick labels read as engineering values:
    ``0.1, 1, 10, 100, 1000, 10⁴`` FLOP/byte or ``1 TFLOP/s, 100 TFLOP/s`` (SI prefixes).

    Whole decades are labelled; the 2…9 minor ticks only when less than ~1.3 decades show.
    """

    def __init__(self, orientation: str, quantity: str, **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        # the tick labels carry their own prefixes: pyqtgraph's automatic SI prefix would
        # only re-parse the axis title's HTML on every range change
        self.autoSIPrefix = False
        self.quantity = quantity  # "intensity" or "rate"
        # The axis draws the decade grid across the whole plot: caching it as a pixmap
        # halves the cost of a frame. Exports switch the cache off (vector output).
        self.setCacheMode(_CACHE)

    def setExportMode(self, export, opts=None):
        super().setExportMode(export, opts)
        self.setCacheMode(_NO_CACHE if export else _CACHE)

    def paint(self, p, opt, widget) -> None:
        """As pyqtgraph paints it; on a pixmap (the screen's cache), within a clip that holds
        the whole pixmap. The grid's lines are translucent and drawn without antialiasing:
        with no clip set, Qt's raster engine blends such a line one pixel at a time through
        its general path (3 ms for one axis's 40 lines, a fifth of the window's first
        paint); with a clip rectangle it writes the same pixels directly (0.1 ms). A clip
        larger than the pixmap leaves out nothing."""
        device = p.device()
        inverse, invertible = p.worldTransform().inverted()
        if not isinstance(device, QPixmap) or not invertible:
            super().paint(p, opt, widget)
            return
        p.save()
        try:
            p.setClipRect(inverse.mapRect(QRectF(device.rect())).adjusted(-1, -1, 1, 1))
            super().paint(p, opt, widget)
        finally:
            p.restore()

    _kept_rect: tuple | None = None  # (what it depends on, the rectangle)

    def boundingRect(self) -> QRectF:
        """As pyqtgraph's (the axis, and with the grid on the view it draws the grid over),
        kept until either's geometry or the axis style changes: Qt asks for it several times
        on every repaint, and pyqtgraph maps both rectangles anew each time."""
        view = self.linkedView()
        if view is not None and view.parentItem() is not self.parentItem():
            return super().boundingRect()  # the geometries alone would not place the view
        key = (self.geometry(), None if view is None else view.geometry(), self.grid,
               self.style["tickLength"], self.style["hideOverlappingLabels"])
        kept = self._kept_rect
        if kept is None or kept[0] != key:
            kept = self._kept_rect = (key, super().boundingRect())
        return QRectF(kept[1])

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        """pyqtgraph's levels, each tick once: its minor level (1…9 per decade) repeats the
        decades of the levels above, which drew each decade's tick and label twice (two
        texts on top of each other in a vector file); the decades always a level above the
        rest (their grid lines darker, their ticks longer)."""
        levels = super().logTickValues(minVal, maxVal, size, stdTicks)
        if not any(spacing is not None and spacing >= 1.0 for spacing, _values in levels):
            # (less than about two decades in view: pyqtgraph gives one level of every
            # 1 … 9 times a decade, each grid line as dark as a decade's; the decades are
            # a level of their own, above the rest, as on a wider axis)
            decades = [float(d) for d in range(math.ceil(minVal), math.floor(maxVal) + 1)]
            if decades:
                levels = [(1.0, decades), *levels]
        seen: set[float] = set()
        out = []
        for spacing, values in levels:
            kept = [v for v in values if round(float(v), 9) not in seen]
            seen.update(round(float(v), 9) for v in kept)
            out.append((spacing, kept))
        return out

    def tickStrings(self, values, scale, spacing):
        span = abs(self.range[1] - self.range[0]) if self.range else 10.0
        step = self._decade_step(span, values)
        twos_and_fives = self._twos_and_fives(span)
        # (under 1.3 decades every 2 … 9 tick may be labelled: those that have room)
        roomy = self._with_room(values, span) if span <= 1.3 else None
        out = []
        for i, v in enumerate(values):
            whole = abs(v - round(v)) < 1e-6
            if not whole and span > 1.3 and not (twos_and_fives and _two_or_five(v)):
                out.append("")
                continue
            if roomy is not None and i not in roomy:
                out.append("")  # (its label would run into a neighbour's: "5060708090")
                continue
            if whole and step > 1 and round(v) % step:
                out.append("")  # decades too close for every label: every step-th one
                continue
            out.append(self.format_value(float(to_data(v))))
        return out

    def _label_room(self) -> tuple[float, Callable[[float], float], float]:
        """The axis's length in pixels; the room the label of a tick (a view value) takes
        along it: its width along the plot, its height up it; and the air kept between two
        labels."""
        from PySide6.QtGui import QFontMetricsF

        # (pyqtgraph draws the numbers in the tick font, else in the axis's own)
        metrics = QFontMetricsF(self.style.get("tickFont") or self.font())
        if self.orientation in ("top", "bottom"):
            return (self.geometry().width(),
                    lambda v: metrics.horizontalAdvance(self.format_value(float(to_data(v)))),
                    0.6 * metrics.height())
        return self.geometry().height(), lambda _v: metrics.height(), 0.15 * metrics.height()

    def _decade_step(self, span: float, values=()) -> int:
        """Label every decade, or every second, third … one, the fewest skipped that leave a
        label's height (and some air) between labels up an axis, or the widest label's
        width (and some air) along one: a small figure in large type, or a short plot (the
        bottom row's sweep plot, whose four decades stood in 40 pixels, each label over the
        next), or a narrow one (a sweep plot a paper column wide: "10" and "100" ran into
        one). ``values``: the ticks to label, in view units."""
        length, size, air = self._label_room()
        if span <= 0 or length <= 0:
            return 1
        sizes = [size(v) for v in values if abs(v - round(v)) < 1e-6]
        if not sizes:  # (no decade among them: their step is not asked for)
            return 1
        return max(1, math.ceil((max(sizes) + air) / (length / span) - 1e-9))

    def _with_room(self, values, span: float) -> set[int]:
        """Which of the ticks ``values`` (view units) are labelled where less than 1.3
        decades show: each whose label keeps clear of the labels kept before it (half of
        each one's width along the axis, or its height up one, and some air), the decades
        first, then 2 and 5 times a decade, then the rest, each group from low to high (a
        column-wide figure of 24 … 428 FLOP/byte ran "50 60 70 80 90" into "100")."""
        if not self.range or span <= 0:
            return set(range(len(values)))
        lo = min(self.range)
        length, size, air = self._label_room()
        if length <= 0:
            return set(range(len(values)))

        def rank(v: float) -> int:
            return 0 if abs(v - round(v)) < 1e-6 else 1 if _two_or_five(v) else 2

        # (pyqtgraph asks for the decades' labels and the others' apart: every decade in
        # view is labelled, whichever are asked for now)
        kept = [((d - lo) / span * length, size(d))
                for d in range(math.ceil(lo - 1e-6), math.floor(max(self.range) + 1e-6) + 1)]
        chosen = {i for i, v in enumerate(values) if rank(v) == 0}
        for i in sorted(range(len(values)), key=lambda i: (rank(values[i]), values[i])):
            if i in chosen:
                continue
            at, room = (values[i] - lo) / span * length, size(values[i])
            if all(abs(at - a) >= (room + r) / 2 + air for a, r in kept):
                kept.append((at, room))
                chosen.add(i)
        return chosen

    def _twos_and_fives(self, span: float) -> bool:
        """Whether the ticks at 2 and 5 times a decade are labelled too: where fewer than
        two whole decades' labels fit in view (a sweep of d = 1024 … 65536 read "10⁴"
        alone: 1000 lay too near the axis's end for its label) and every label then has
        room (a label's height up an axis; along one, half of each of two neighbours'
        widths and some air)."""
        if span <= 1.3 or not self.range:
            return False
        lo, hi = sorted(self.range)
        length, size, air = self._label_room()

        def shown(v: float, room: float) -> bool:  # (its label within the axis's ends)
            at = (v - lo) / span * length
            return room / 2 <= at <= length - room / 2

        if sum(shown(d, size(d)) for d in range(math.ceil(lo), math.floor(hi) + 1)) >= 2:
            return False
        ticks = [(v, room) for d in range(math.floor(lo), math.ceil(hi) + 1)
                 for v in (d, d + math.log10(2), d + math.log10(5))
                 if shown(v, room := size(v))]
        return len(ticks) >= 2 and all((b - a) * length / span >= (wa + wb) / 2 + air
                                       for (a, wa), (b, wb) in itertools.pairwise(ticks))

    def format_value(self, value: float) -> str:
        if self.quantity == "rate":
            return format_quantity(value, "flop_rate")
        if 1e-3 <= value < 1e4:
            text = f"{value:.3g}"
            return text if "e" not in text else f"{value:.0f}"
        exponent = round(math.log10(value))
        if abs(value / 10.0**exponent - 1) < 1e-6:
            return "10" + str(exponent).translate(_SUPERSCRIPT)
        exponent = math.floor(math.log10(value))
        mantissa = value / 10.0**exponent
        if abs(mantissa - round(mantissa)) < 1e-6:  # (2 × 10⁴, not 2e+04)
            return f"{round(mantissa)}×10" + str(exponent).translate(_SUPERSCRIPT)
        return f"{value:.2g}"


class PlotWidget(pg.PlotWidget):
    """pyqtgraph's plot widget, its background filled where a repaint exposes it. pyqtgraph
    keeps a picture of the whole background (``CacheBackground``), which Qt draws, clipped
    to the parts repainted, at every repaint: the plain colour filled costs less (0.2–0.6
    ms of a model's edit or a sweep's keystroke; as many instructions, less memory read)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheNone)


def _two_or_five(v: float) -> bool:
    """Whether the view value ``v`` (a log10) is 2 or 5 times a decade."""
    mantissa = 10.0 ** (v - math.floor(v))
    return abs(mantissa - 2) < 1e-6 or abs(mantissa - 5) < 1e-6
