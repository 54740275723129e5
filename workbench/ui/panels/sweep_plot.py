"""The sweep plot: the selected operation's attainable FLOP/s (or its time) against the swept
parameter, one curve per visible machine, with the exact ridge crossings marked.

This is the "critical batch" picture: attainable FLOP/s rises with the batch while the
operation is memory-bound and levels off at the machine's peak past the crossing. The curve
is drawn through a dense grid of the (real-valued) parameter plus the exact crossings, so its
corner sits at the crossing; the swept values themselves are the dots. Both axes are
logarithmic (the parameter axis is linear when a swept value is zero or negative) and every
item lives in log10 coordinates, like the roofline canvas.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.document.changes import What
from workbench.model.chart.readouts import crossing_label, crossing_text, sample_text, value_text
from workbench.model.chart.scene import machine_entries
from workbench.model.chart.sweep_cache import cache_sweeps, cached_sweep
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.roofline import sweep_machines as roofline_sweep_machines
from workbench.model.session import MARKERS
from workbench.model.sweeps import Crossing, SweepError, SweepResult
from workbench.ui.chart.axes import to_data, to_view
from workbench.ui.chart.hover import HoverTip
from workbench.ui.chart.theme import get_theme, make_brush, make_pen, qcolor
from workbench.ui.panels.plot_parts import (
    PlotPlace,
    ResizedPlotWidget,
    ValueAxis,
    kept_brush,
    kept_pen,
    points_along,
    same_range,
)
from workbench.ui.widgets import escape_html

__all__ = ["SweepPlot", "MODES", "DENSE_POINTS"]

#: What the y axis shows: attainable FLOP/s, or the roofline's best-case time T_lower.
MODES = {"flops": "Attainable [FLOP/s]", "time": "T_lower [s]"}
#: Points of the curve between the least and the greatest swept value, besides the samples
#: and crossings: in the critical-batch example it strays from the exact one by < 0.001 px.
DENSE_POINTS = 128
#: no maximum width (Qt's QWIDGETSIZE_MAX)
_UNLIMITED = (1 << 24) - 1

EMPTY_TEXT = ("The selected operation has no sweep.\n\nGive it one in the editor (Sweep) to "
              "plot its attainable FLOP/s against the swept parameter on every machine.")


#: a crossing's value's anchor at its line: its bottom left (the value right of the line) or
#: its bottom right (left of it)
_RIGHT, _LEFT = (0, 1), (1, 1)


@functools.lru_cache(maxsize=16)
def _dense_grid(lo: float, hi: float, log_x: bool) -> np.ndarray:
    """The parameter values each curve is drawn through (besides the samples and the
    crossings), made once for each span (read only: a keystroke keeps the span)."""
    if log_x and hi > lo:
        grid = np.geomspace(lo, hi, DENSE_POINTS)
    elif hi > lo:
        grid = np.linspace(lo, hi, DENSE_POINTS)
    else:
        grid = np.asarray([lo])
    grid.flags.writeable = False
    return grid


class SweepPlot(QWidget):
    """Attainable FLOP/s (or time) against the selected operation's swept parameter.

    Read-only helpers for tests: :meth:`curves`, :meth:`samples`, :meth:`crossing_markers`,
    :meth:`is_empty`, :meth:`empty_text`, :attr:`mode` and :meth:`set_mode`.
    """

    #: Export… was pressed: the window asks where to write the plot as a figure; or Copy Plot
    export_requested = Signal()
    copy_requested = Signal()

    def __init__(self, workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweepPlot")
        self.workspace = workspace
        self._mode = "flops"
        self._shown, self._dirty = True, False
        self._op_id: int | None = None

        self.title = QLabel("")
        self.title.setObjectName("sweepTitle")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self._title_text = ""
        self.title.setTextInteractionFlags(Qt.TextSelectableByMouse)
        # (a long one, with the values left out of a short plot, on two lines: on one it
        # made the panel wider than the window, its mode and Export… out of it)
        self.title.setWordWrap(True)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("sweepMode")
        self.mode_box.addItem("Attainable FLOP/s", "flops")
        self.mode_box.addItem("Time (lower bound)", "time")
        self.mode_box.setToolTip("Plot attainable FLOP/s or the best-case time max(T_math, "
                                 "T_mem) against the swept parameter")
        self.mode_box.currentIndexChanged.connect(
            lambda _i: self.set_mode(self.mode_box.currentData()))
        self.export_button = QPushButton("E&xport…")
        self.export_button.setObjectName("exportSweepPlot")
        self.export_button.setToolTip("Save this plot as PDF, SVG or PNG, at the size, DPI "
                                      "and theme last chosen in File ▸ Export Figure")
        self.export_button.clicked.connect(self.export_requested)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 4, 6, 0)
        bar.addWidget(self.title, 1)
        bar.addWidget(self.mode_box)
        bar.addWidget(self.export_button)

        # The plot itself is built when an operation with a sweep is first shown (most have
        # none, and a second PlotWidget is a noticeable part of the start-up time).
        self._plot_widget: pg.PlotWidget | None = None
        self._legend_key: tuple = ()
        self._lines: list[pg.PlotCurveItem] = []
        self._dots: list[pg.ScatterPlotItem] = []
        self._markers: list[pg.InfiniteLine] = []
        self._marker_looks: list[tuple | None] = []  # per marker: (colour, text) as set
        self._marker_heights: list[float | None] = []  # per marker: its label's, as set
        self._drawn: list[tuple[int, str]] = []  # (hw_id, machine) per shown curve
        #: per shown curve, its sweep and the index in it of each of its dots
        self._sampled: list[tuple[SweepResult, np.ndarray]] = []
        #: (hw_id, machine, crossing) per crossing marker
        self._crossings: list[tuple[int, str, Crossing]] = []
        self._marker_half = 0.0  # (half a curve marker's size, pixels: set with the theme)

        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setObjectName("sweepEmpty")
        self.empty.setAlignment(Qt.AlignCenter)
        self.empty.setWordWrap(True)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(PlotPlace())  # until the plot is built
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        self.refresh()

    #: the least width and height the legend leaves the plot's view, pixels
    LEAST_PLOT = (160, 100)
    #: the widest a plot with its legend below it is made, times its height (a plot flatter
    #: than this keeps its legend beside it, where it has more height)
    FLATTEST = 3.0
    #: how near the pointer is to a sample's marker for its numbers, pixels
    HOVER_PX = 8.0

    def _hover(self, pos: QPointF) -> None:
        """What is under the pointer, as a tooltip; hidden once it leaves."""
        text = self.sample_text_at(pos)
        if not text:
            self._tip.hide()
        elif text != self._tip.text:
            self._tip.show(self.plot_widget.mapFromScene(pos), text)

    def sample_text_at(self, pos: QPointF) -> str:
        """The numbers of the sample whose marker is nearest the scene point ``pos``, within
        :attr:`HOVER_PX` ("" where none is): as the chart's sweep path says them (the swept
        value, its intensity, attainable FLOP/s, bound and T_lower)."""
        to_scene = self._scene_map()
        if self.is_empty() or not self._sampled or to_scene is None:
            return ""
        best = None
        for (_hw_id, machine), dots, (result, kept) in zip(self._drawn, self._dots,
                                                          self._sampled, strict=False):
            x, y = to_scene(dots.data["x"], dots.data["y"])
            if not len(x):
                continue
            gaps = np.hypot(x - pos.x(), y - pos.y())
            j = int(np.argmin(gaps))
            if gaps[j] <= self.HOVER_PX and (best is None or gaps[j] < best[0]):
                best = (gaps[j], result, int(kept[j]), machine)
        if best is None:
            return self._crossing_text_at(pos, to_scene)
        _gap, result, i, machine = best
        return sample_text(result.operation, machine, result.param,
                           value_text(result.values[i], result.is_int),
                           result["intensity"][i], result["attainable_flops"][i],
                           result.bounds[i], result["t_lower_s"][i])

    def _crossing_text_at(self, pos: QPointF, to_scene) -> str:
        """What the crossing whose line passes within HOVER_PX / 2 of ``pos`` says, or ""."""
        n = len(self._crossings)
        if not n or not self._plot.getViewBox().sceneBoundingRect().contains(pos):
            return ""
        xs = to_scene([line.value() for line in self._markers[:n]], np.zeros(n))[0]
        k = int(np.argmin(np.abs(xs - pos.x())))
        if abs(xs[k] - pos.x()) > self.HOVER_PX / 2:
            return ""
        _hw_id, machine, crossing = self._crossings[k]
        return crossing_text(crossing.operation, machine, crossing)

    def _ensure_plot(self) -> pg.PlotWidget:
        """The plot widget, built on first use."""
        if self._plot_widget is not None:
            return self._plot_widget
        self._x_axis = ValueAxis("bottom", "count")
        self._y_axis = ValueAxis("left", "rate")
        widget = ResizedPlotWidget(axisItems={"bottom": self._x_axis, "left": self._y_axis})
        widget.resized.connect(self._fit_legend)  # (then the title, with the legend's rows)
        widget.resized.connect(self._fit_bottom_label)
        widget.setObjectName("sweepPlotWidget")
        widget.export_requested.connect(self.export_requested)
        widget.copy_requested.connect(self.copy_requested)
        plot = self._plot = widget.getPlotItem()
        plot.setMenuEnabled(False)  # its log entries would break the log10 coordinates
        plot.hideButtons()
        plot.setContentsMargins(4, 4, 24, 4)
        self._y_axis.setLogMode(True)
        self._x_axis.setLogMode(True)
        # right of the plot: inside it, in the short bottom row, it hid a third of the curves
        self._legend = pg.LegendItem(offset=None, verSpacing=-4)
        # as tall as its rows, at the top: stretched to the plot's height, each name stayed
        # at the top of its row and its sample sank to the row's middle, below it
        self._legend.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        plot.layout.addItem(self._legend, 2, 4)
        plot.layout.setAlignment(self._legend, Qt.AlignmentFlag.AlignTop)
        self._legend_at = "beside"  # (or "below", or "none": no room for it)
        self._legend_key = ()
        self._axis_titles: tuple[str, ...] = ()
        self._axes_set = False
        placeholder = self.stack.widget(1)
        self.stack.insertWidget(1, widget)
        self.stack.removeWidget(placeholder)
        placeholder.deleteLater()
        self._plot_widget = widget
        self._left_label_shown = True
        self._bottom_label_shown = True
        self._bottom_label_room = 0.0  # (what the x axis's title adds to it: seen hidden)
        self._y_axis.geometryChanged.connect(self._fit_left_label)
        # (where each crossing's value goes depends on the plot's pixels)
        view = plot.getViewBox()
        view.sigResized.connect(self._place_labels)
        view.sigRangeChanged.connect(self._place_labels)
        widget.scene().sigMouseMoved.connect(self._hover)
        self._tip = HoverTip(widget)
        return widget

    # -- public ------------------------------------------------------------------------------

    @property
    def plot_widget(self) -> pg.PlotWidget:
        return self._ensure_plot()

    @property
    def mode(self) -> str:
        return self._mode

    def set_mode(self, mode: str) -> None:
        """``"flops"`` (attainable FLOP/s) or ``"time"`` (T_lower)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == self._mode:
            return
        self._mode = mode
        index = self.mode_box.findData(mode)
        if index != self.mode_box.currentIndex():
            self.mode_box.blockSignals(True)
            self.mode_box.setCurrentIndex(index)
            self.mode_box.blockSignals(False)
        self.refresh()

    def set_shown(self, shown: bool) -> None:
        """Whether the plot can be seen (a dock's ``visibilityChanged``): a hidden plot
        catches up when it is shown again."""
        self._shown = shown
        if shown and self._dirty:
            self.refresh()

    def is_empty(self) -> bool:
        return self.stack.currentWidget() is self.empty

    def bare(self) -> None:
        """Show the plot alone, without its title line, mode and Export… (a figure's)."""
        for widget in (self.title, self.mode_box, self.export_button):
            widget.hide()

    def title_html(self) -> str:
        """The title line as HTML (its figure's title)."""
        text = self.title.text()
        return text if self.title.textFormat() == Qt.TextFormat.RichText else escape_html(text)

    def empty_text(self) -> str:
        return self.empty.text() if self.is_empty() else ""

    def curves(self) -> list[tuple[int, str, list[float], list[float]]]:
        """``(hw_id, machine, xs, ys)`` of every curve shown, in data units (parameter values;
        FLOP/s or seconds)."""
        out = []
        for (hw_id, name), line in zip(self._drawn, self._lines, strict=False):
            xs, ys = line.getData()
            out.append((hw_id, name, [float(v) for v in self._x_data(xs)],
                        [float(v) for v in to_data(ys)]))
        return out

    def samples(self) -> list[tuple[int, list[float], list[float]]]:
        """``(hw_id, values, ys)`` of the dots at the swept values."""
        out = []
        for (hw_id, _name), dots in zip(self._drawn, self._dots, strict=False):
            data = dots.data
            out.append((hw_id, [float(v) for v in self._x_data(data["x"])],
                        [float(v) for v in to_data(data["y"])]))
        return out

    def crossing_markers(self) -> list[tuple[int, float, str]]:
        """``(hw_id, value, label)`` of every vertical crossing marker shown: ``value`` is where
        the marker is drawn (in parameter units), ``label`` its text."""
        out = []
        for (hw_id, _machine, _crossing), line in zip(self._crossings, self._markers,
                                                      strict=False):
            out.append((hw_id, float(self._x_data(np.asarray([line.value()]))[0]),
                        line.label.toPlainText() if line.label is not None else ""))
        return out

    # -- updates -----------------------------------------------------------------------------

    def _on_selection(self, _op_id) -> None:
        self.refresh()

    def _on_change(self, change: Change) -> None:
        if change.what in (What.STATE, What.TITLE, What.MEASUREMENTS, What.COMPARISONS):
            return
        if change.what == What.VIEW and not set(change.fields) & {"theme"}:
            return
        if change.what == What.OPERATION and self._op_id not in change.ids:
            return  # another operation
        self.refresh()

    def refresh(self) -> None:
        """Redraw for the selected operation (cheap when it has no sweep)."""
        if not self._shown:
            self._dirty = True
            return
        self._dirty = False
        document = self.workspace.document
        session = document.session
        op_id = self.workspace.selection.current
        self._op_id = op_id
        try:
            entry = document.operation(op_id) if op_id is not None else None
        except KeyError:
            entry = None
        if entry is None or entry.sweep is None:
            self._show_empty(EMPTY_TEXT if entry is None or entry.sweep is None else "")
            return
        op, sweep = entry.operation, entry.sweep
        self._ensure_plot()
        theme = get_theme(session.view.theme)
        self._apply_theme(theme)
        self._marker_half = theme.point_size * 0.75 / 2
        machines = machine_entries(session)
        curves = []
        problem = ""
        keys = cache_sweeps(op, [hw_entry.hardware for hw_entry in machines], sweep)
        for index, (hw_entry, key) in enumerate(zip(machines, keys, strict=True)):
            hw = hw_entry.hardware
            try:
                result, found = cached_sweep(op, hw, sweep, key)
            except SweepError as exc:
                problem = str(exc)
                break
            except COUNTING_ERRORS:
                continue
            curves.append((index, hw_entry, result, found))
        if problem or not curves:
            self._show_empty(f"Cannot plot the sweep of {op.name}: {problem}" if problem else
                             f"The sweep of {op.name} cannot be evaluated on any visible "
                             "machine.")
            return
        values = curves[0][2].values
        log_x = bool(np.all(values > 0))
        # (an axis redraws its ticks and numbers whenever its log mode, title or range is
        # set, even to what it already shows: each is set only when it changes)
        if log_x != self._x_axis.log or not self._axes_set:
            self._x_axis.log = log_x
            self._x_axis.setLogMode(log_x)
        self._y_axis.quantity = "rate" if self._mode == "flops" else "time"
        key = "attainable_flops" if self._mode == "flops" else "t_lower_s"
        self._title_text = f"{op.name}: {sweep.describe()}"
        titles = (f"{sweep.param} (swept)", MODES[self._mode], theme.foreground)
        if titles != self._axis_titles:
            self._axis_titles = titles
            self._plot.setLabel("bottom", titles[0], color=theme.foreground)
            self._plot.setLabel("left", titles[1], color=theme.foreground)
            self._left_label_shown = self._bottom_label_shown = True  # (setting shows them)
            self._fit_left_label()
            self._fit_bottom_label()
        self._axes_set = True

        lo, hi = float(values.min()), float(values.max())
        grid = _dense_grid(lo, hi, log_x)
        self._drawn, self._sampled, self._crossings = [], [], []
        self._tip.hide()  # (of a sample as it was)
        ys_all: list[np.ndarray] = []
        legend_entries = []
        # each curve runs through the grid, the samples and its own crossings: all machines
        # are evaluated at once, at every curve's values (the FLOPs and bytes counted once),
        # and each curve takes its own
        denses = [np.unique(np.concatenate([grid, values, [c.value for c in found]]))
                  for _index, _hw, _result, found in curves]
        every = np.unique(np.concatenate(denses))
        evaluated = roofline_sweep_machines(op, [hw_entry.hardware for _i, hw_entry, *_r
                                                 in curves], **{sweep.param: every})
        for n, ((index, hw_entry, result, found), dense, at) in enumerate(
                zip(curves, denses, evaluated, strict=True)):
            color = theme.roof_color(index)
            dense_y = np.broadcast_to(np.asarray(at[key], float),
                                      every.shape)[np.searchsorted(every, dense)]
            sample_y = np.asarray(result[key], float)
            keep = np.isfinite(dense_y) & (dense_y > 0)
            line = self._take(self._lines, n, lambda: pg.PlotCurveItem(antialias=True))
            line.setData(x=self._x_view(dense[keep]), y=to_view(dense_y[keep]),
                         pen=make_pen(color, theme.roof_width))
            marker = hw_entry.marker or MARKERS[index % len(MARKERS)]
            ok = np.isfinite(sample_y) & (sample_y > 0)
            dots = self._take(self._dots, n,
                              lambda: pg.ScatterPlotItem(pxMode=True, antialias=True))
            dots.setData(x=self._x_view(result.values[ok]), y=to_view(sample_y[ok]),
                         symbol=marker, size=2 * self._marker_half,
                         brush=kept_brush(color), pen=kept_pen(theme.background, 0.8))
            self._drawn.append((hw_entry.id, hw_entry.hardware.label))
            self._sampled.append((result, np.flatnonzero(ok)))
            legend_entries.append((hw_entry.hardware.label, color, marker))
            ys_all.append(dense_y[keep])
            self._crossings += [(hw_entry.id, hw_entry.hardware.label, c) for c in found]
        for extra in self._lines[len(curves):] + self._dots[len(curves):]:
            extra.setVisible(False)
        self._sync_markers(theme, {hw_id: theme.roof_color(i) for (hw_id, _), (i, *_rest)
                                   in zip(self._drawn, curves, strict=True)})
        self._sync_legend(theme, legend_entries)

        ys = np.concatenate(ys_all) if ys_all else np.asarray([1.0])
        ylo, yhi = float(np.min(ys)), float(np.max(ys))
        y0, y1 = math.log10(ylo), math.log10(yhi)
        pad = max(0.15 * (y1 - y0), 0.2)
        xv = self._x_view(np.asarray([lo, hi]))
        xpad = max(0.03 * float(xv[1] - xv[0]), 0.05 if log_x else 0.5)
        vb = self._plot.getViewBox()
        x_range = (float(xv[0]) - xpad, float(xv[1]) + xpad)
        y_range = (y0 - pad, y1 + pad)
        if not (same_range(vb.viewRange()[0], x_range)
                and same_range(vb.viewRange()[1], y_range)):
            vb.setRange(xRange=x_range, yRange=y_range, padding=0)  # (placed on its signal)
        else:
            self._place_labels()
        self.stack.setCurrentWidget(self.plot_widget)
        self.export_button.setEnabled(True)

    # -- helpers -----------------------------------------------------------------------------

    def _x_view(self, values):
        return to_view(np.asarray(values, float)) if self._x_axis.log else np.asarray(values,
                                                                                      float)

    def _x_data(self, values):
        return to_data(np.asarray(values, float)) if self._x_axis.log else np.asarray(values,
                                                                                      float)

    def _take(self, pool: list, n: int, factory):
        if n == len(pool):
            item = factory()
            self._plot.addItem(item)
            pool.append(item)
        item = pool[n]
        item.setVisible(True)
        return item

    def _sync_markers(self, theme, colors: dict[int, str]) -> None:
        for n, (hw_id, _machine, crossing) in enumerate(self._crossings):
            value, text = crossing.value, crossing_label(crossing.param, crossing.value)
            color = colors.get(hw_id, theme.foreground)
            if n == len(self._markers):
                # labels low down, right of the line: under the plateau past the crossing
                line = pg.InfiniteLine(angle=90, movable=False, label="",
                                       labelOpts={"position": 0.05, "anchors": [(0, 1), (0, 1)]})
                self._plot.addItem(line)
                self._markers.append(line)
                self._marker_looks.append(None)
                self._marker_heights.append(None)
            line = self._markers[n]
            if not line.isVisible():  # (its label laid out again: see _place_labels)
                self._marker_heights[n] = None
            line.setVisible(True)
            # (a keystroke moves the marker, which leaves its label where it is on the line:
            # not laid out for it; its colour and mostly its text stay, each set as it changes)
            look = self._marker_looks[n]
            if look is None or look[0] != color:
                line.setPen(make_pen(color, 1.3, "dashed"))
                line.label.setColor(qcolor(color))
            with QSignalBlocker(line):
                line.setValue(float(self._x_view(np.asarray([value]))[0]))
            if look is None or look[1] != text:
                line.label.setFormat(text)
                line.label.setText(text)  # (a hidden label's text is not set by its format)
            line.label.fill = make_brush(theme.background + "D8")  # readable across lines
            self._marker_looks[n] = (color, text)
        for line in self._markers[len(self._crossings):]:
            line.setVisible(False)

    #: pixels kept between a crossing's value and another crossing's line, another value, a
    #: curve or a marker
    LABEL_AIR = 4.0
    #: pixels between the heights a crossing's value is tried at, from the plot's foot up
    LABEL_STEP = 3.0

    def _place_labels(self, *_args) -> None:
        """Put each crossing's value beside its line, low down (under the plateau past the
        crossing), right of the line or else left of it: at the lowest height where it lies within
        the plot and :attr:`LABEL_AIR` pixels clear of the other crossings' lines (it is read with
        the nearest line), of the values placed before it, of the curves and of their markers. Set
        heights right of the lines drew one value across the next line 25 pixels on, two values
        over each other and, plotted as time, values over the curves. A value with no such place
        (lines a few pixels apart) is said after the title line instead, in its line's colour."""
        shown = [(row, line) for row, line in enumerate(self._markers) if line.isVisible()]
        if not shown:
            self._say_left_out([])
            return
        area = self._plot.getViewBox().sceneBoundingRect()
        to_scene = self._scene_map()
        if area.height() <= 0 or to_scene is None:
            self._say_left_out([])
            return
        air = self.LABEL_AIR
        points, centres = self._drawn_pixels(to_scene)
        reach = air + 1.5  # (a line's half-width, with the air)
        grow = air + self._marker_half
        xs = to_scene([line.value() for _row, line in shown], np.zeros(len(shown)))[0].tolist()
        placed: list[tuple[float, float, float, float]] = []
        left_out: list = []
        for i, ((row, line), x) in enumerate(zip(shown, xs, strict=True)):
            label = line.label
            # (its text's own size in pixels: a hidden label's box in the scene is not kept)
            rect = label.textItem.boundingRect()
            w, h = rect.width(), rect.height()
            others = np.array([ox for k, ox in enumerate(xs) if k != i])
            # every place, lowest first, right of the line before left of it
            bottoms = np.arange(area.bottom(), area.top() + h - 1e-9, -self.LABEL_STEP)
            boxes = np.empty((len(bottoms), 2, 4))  # (rows: right of the line, then left)
            boxes[..., 0], boxes[..., 2] = (x, x - w), (x + w, (x - w) + w)
            boxes[..., 1], boxes[..., 3] = (bottoms - h)[:, None], bottoms[:, None]
            boxes = boxes.reshape(-1, 4)
            ok = (boxes[:, 0] >= area.left()) & (boxes[:, 2] <= area.right())
            if len(others):
                ok &= ~((others[None, :] > boxes[:, 0:1] - air)
                        & (others[None, :] < boxes[:, 2:3] + air)).any(axis=1)
            for kept in placed:
                ok &= ~((boxes[:, 0] < kept[2] + air) & (kept[0] < boxes[:, 2] + air)
                        & (boxes[:, 1] < kept[3] + air) & (kept[1] < boxes[:, 3] + air))
            for near, d in ((points, reach), (centres, grow)):
                # (those across from the line's two columns of places alone)
                near = near[(near[:, 0] > x - w - d) & (near[:, 0] < x + w + d)]
                if ok.any() and len(near):
                    at = np.flatnonzero(ok)
                    b = boxes[at]
                    inside = ((near[None, :, 0] > b[:, None, 0] - d)
                              & (near[None, :, 0] < b[:, None, 2] + d)
                              & (near[None, :, 1] > b[:, None, 1] - d)
                              & (near[None, :, 1] < b[:, None, 3] + d))
                    ok[at[inside.any(axis=1)]] = False
            free = np.flatnonzero(ok)
            if not len(free):
                left_out.append(line)
                continue
            index = int(free[0])
            left, top, right, bottom = (float(v) for v in boxes[index])
            placed.append((left, top, right, bottom))
            side = _RIGHT if index % 2 == 0 else _LEFT
            at = (area.bottom() - bottom) / area.height()
            if not label.isVisible() or tuple(label.anchors[0]) != side:
                # (laid out again: a hidden label does not follow its line; on its new side)
                label.anchors, self._marker_heights[row] = [side, side], None
                label.setVisible(True)
            if self._marker_heights[row] != at:  # (each setting lays the label out again)
                self._marker_heights[row] = at
                label.setPosition(at)
        for line in left_out:
            line.label.setVisible(False)
        self._say_left_out(left_out)

    def _scene_map(self):
        """``to_scene(xs, ys)``: view units to scene pixels as drawn now (None: no size yet)."""
        view = self._plot.getViewBox()
        origin = view.mapViewToScene(QPointF(0.0, 0.0))
        unit = view.mapViewToScene(QPointF(1.0, 1.0))
        sx, sy = unit.x() - origin.x(), origin.y() - unit.y()
        if sx <= 0 or sy <= 0:
            return None
        x0, y0 = origin.x(), origin.y()

        def to_scene(xs, ys) -> tuple[np.ndarray, np.ndarray]:
            return x0 + np.asarray(xs, float) * sx, y0 - np.asarray(ys, float) * sy

        return to_scene

    def _drawn_pixels(self, to_scene) -> tuple[np.ndarray, np.ndarray]:
        """What the crossings' values keep off, in the scene's pixels (``to_scene(xs, ys)``
        from view units): points along the curves, two pixels apart, and the markers'
        centres (rows ``x, y``)."""
        along, centres = [np.zeros((0, 2))], [np.zeros((0, 2))]
        for items, out in ((self._lines, along), (self._dots, centres)):
            for item in items:
                xs, ys = item.getData() if item.isVisible() else (None, None)
                if xs is not None and len(xs):
                    x, y = to_scene(xs, ys)
                    out.append(points_along(x, y, 2.0) if out is along else np.column_stack((x, y)))
        return np.concatenate(along), np.concatenate(centres)

    def _say_left_out(self, lines: list) -> None:
        """The title line, with the values of the crossings ``lines`` (left out beside
        their lines: no place there is clear) after it, each in its line's colour."""
        if not lines:
            text, form = self._title_text, Qt.TextFormat.PlainText
        else:
            said = ", ".join(
                f'<span style="color:{line.label.color.name()}">'
                f"{escape_html(line.label.toPlainText())}</span>"
                for line in lines)
            text = (f"{escape_html(self._title_text)} · {said} "
                    "(no room beside the lines)")
            form = Qt.TextFormat.RichText
        if form != self.title.textFormat():
            self.title.setTextFormat(form)
        if text != self.title.text():  # (each keystroke: set only when it changes)
            self.title.setText(text)

    def _sync_legend(self, theme, entries: list[tuple[str, str, str]]) -> None:
        key = (tuple(entries), theme.name)
        if key == self._legend_key:
            return
        self._legend_key = key
        self._legend.clear()
        self._legend.setBrush(make_brush(theme.legend_background))
        self._legend.setPen(make_pen(theme.legend_border, 1.0))
        self._legend.setLabelTextColor(qcolor(theme.text))
        for name, color, marker in entries:
            sample = pg.PlotDataItem(x=[0.0], y=[0.0], pen=make_pen(color, theme.roof_width),
                                     symbol=marker, symbolBrush=make_brush(color),
                                     symbolPen=make_pen(theme.background, 0.8))
            self._legend.addItem(sample, escape_html(name))
        self._fit_legend()

    def _fit_legend(self) -> None:
        """Put the legend beside the plot (below it where the plot is narrow, or where below
        leaves the plot more room without making it flatter than :attr:`FLATTEST`; nowhere
        where neither leaves the plot :attr:`LEAST_PLOT`) in as few columns as keep it no taller
        than the room the plot has (below it, in as many as fit its width): a row for each
        of four machines made it taller than the plot, which then grew past the bottom row,
        its x axis's title cut off."""
        if self._plot_widget is None:
            return
        legend = self._legend
        count = len(legend.items)
        if not count:
            return
        item, widget = self._plot, self._plot_widget
        label = legend.items[0][1]
        rows = legend.layout
        left, top, right, bottom = rows.getContentsMargins()
        wide = left + right + max(s.boundingRect().width() + rows.horizontalSpacing()
                                  + t.preferredWidth() for s, t in legend.items)
        row = label.preferredHeight() + rows.verticalSpacing()
        fixed = top + bottom - rows.verticalSpacing()
        # (the room: the plot's widget less what is not the plot's view: axes, margins, and
        # not the legend below it)
        spare = widget.viewport().height() - (
            item.geometry().height() - item.getViewBox().geometry().height())
        if self._legend_at == "below":
            spare += legend.geometry().height()
        if not self._bottom_label_shown:  # (room kept for the x axis's title first)
            spare -= self._bottom_label_room
        beside = next((c for c in range(1, count + 1)
                       if fixed + row * math.ceil(count / c) <= spare), count)
        under = max(1, min(count, int(widget.width() // wide)))
        # beside the plot, or below it where beside it the plot would be narrower than tall
        # (a figure a paper column wide, a narrow floating panel), or nowhere where neither
        # leaves the plot its least room (the machines' markers are the chart's, and
        # hovering a sample names its machine)
        narrow = widget.width() - wide * beside
        low = spare - top - bottom - row * math.ceil(count / under)
        # (below it too where that leaves the plot more room and flattens it no more than
        # FLATTEST: on a figure's page as wide as a paper's two columns or a slide, the
        # legend beside it took a third of the width and left most of that third empty)
        roomier = (widget.width() * low > narrow * spare
                   and widget.width() <= self.FLATTEST * low)
        at = ("below" if low >= self.LEAST_PLOT[1] and (narrow < spare or roomier
                                                        or narrow < self.LEAST_PLOT[0])
              else "beside" if narrow >= self.LEAST_PLOT[0] else "none")
        if at != self._legend_at:
            if self._legend_at != "none":
                item.layout.removeItem(legend)
            self._legend_at = at
            if at != "none":
                item.layout.addItem(legend, *((4, 0, 1, 3) if at == "below" else (2, 4)))
                item.layout.setAlignment(legend, Qt.AlignmentFlag.AlignHCenter
                                         if at == "below" else Qt.AlignmentFlag.AlignTop)
            legend.setVisible(at != "none")
            self.title.setToolTip("" if at != "none" else
                                  "No room for the legend: the markers and colours are the "
                                  "chart's; hover a sample for its machine")
        columns = under if at == "below" else beside
        # (below the plot, as wide as its columns and centred: stretched to the plot's width,
        # its names stood apart, each at the start of its half of the page)
        widest = math.ceil(wide * columns) if at == "below" else _UNLIMITED
        if columns != legend.columnCount or widest != legend.maximumWidth():
            legend.setColumnCount(columns)
            legend.setMaximumWidth(widest)
            # (the plot grew to hold the taller legend: it takes the widget's size again)
            item.setGeometry(self._plot_widget.range)

    def _fit_bottom_label(self) -> None:
        """The x axis's title only where the plot has room for it (the title line above the
        plot names the swept parameter too): in the bottom row at its least height the plot
        was taller than its widget and the title was cut off. The title is shown again
        where its whole box fits; the widget is kept as tall as the plot without it, so its
        numbers are never cut."""
        if self._plot_widget is None:
            return
        axis, item, widget = self._x_axis, self._plot, self._plot_widget
        label = axis.label
        item.layout.activate()  # (the legend's columns, just set, counted)
        room = widget.viewport().height()
        if self._bottom_label_shown:
            box = widget.mapFromScene(label.sceneBoundingRect()).boundingRect()
            ink = box.bottom() - label.document().documentMargin()  # (the text's, in its box)
            if item.effectiveSizeHint(Qt.SizeHint.MinimumSize).height() <= room and ink <= room:
                return
            before = axis.minimumHeight()
            axis.showLabel(False)
            self._bottom_label_shown = False
            self._bottom_label_room = before - axis.minimumHeight()
            item.layout.activate()
        least = item.effectiveSizeHint(Qt.SizeHint.MinimumSize).height()
        if room >= least + self._bottom_label_room:
            axis.showLabel(True)
            self._bottom_label_shown = True
        item.setGeometry(widget.range)  # (the plot takes the widget's size again)
        least = math.ceil(least)
        if least != widget.minimumHeight():
            # (set once this resize is over: the widget is resized again for it, and a
            # resize within its own resize event leaves its plot at the old size)
            QTimer.singleShot(0, widget, lambda: widget.setMinimumHeight(least))

    def _fit_left_label(self) -> None:
        """The y axis's title only where the axis is tall enough to show it whole (in the
        short bottom row the mode box above the plot and the unit on each number say it);
        called when the axis changes size and when the title changes."""
        if self._plot_widget is None:
            return
        axis = self._plot.getAxis("left")
        tall = axis.label.boundingRect().width() <= axis.height()
        if tall != self._left_label_shown:
            self._left_label_shown = tall
            axis.showLabel(tall)

    def _apply_theme(self, theme) -> None:
        if getattr(self, "_theme_name", None) == theme.name:
            return
        self._theme_name = theme.name
        self.plot_widget.setBackground(qcolor(theme.background))
        for axis in (self._x_axis, self._y_axis):
            axis.setPen(make_pen(theme.foreground, 1.0))
            axis.setTextPen(make_pen(theme.foreground, 1.0))
        self._plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
        self._legend_key = ()

    def _show_empty(self, text: str) -> None:
        self.empty.setText(text or EMPTY_TEXT)
        self.title.setText("")
        self._drawn, self._sampled, self._crossings = [], [], []
        if self._plot_widget is not None:
            self._tip.hide()
        for item in self._lines + self._dots + self._markers:
            item.setVisible(False)
        self.stack.setCurrentWidget(self.empty)
        self.export_button.setEnabled(False)
