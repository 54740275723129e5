"""The plots of the short bottom row can be read at a laptop's 1366 × 768: the sweep plot's
legend covers none of its curves (it hid a third of them) and the Model tab's Throughput
chart is shown at its full height (it was 40 pixels high); each crossing value of the sweep
plot lies beside its own line, clear of the other lines, the other values and the curves, or
is said after the title line where it has no such place; each machine's legend sample lies
level with its name."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import EXAMPLES, HANG_GUARD_S, open_sweep_example, rest_pointer

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")
LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def test_the_sweep_plots_legend_covers_none_of_its_curves(open_window, qtbot):
    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    assert len(plot.curves()) == 2
    item = plot.plot_widget.getPlotItem()
    legend = _legend(plot)
    area = item.getViewBox().sceneBoundingRect()
    box = legend.sceneBoundingRect()
    # beside the plot (their edges may share a pixel's pen)
    assert box.width() > 0 and box.left() >= area.right() - 1, (box, area)
    # and it lies within the widget, to be read
    view = plot.plot_widget.viewport().rect()
    assert plot.plot_widget.mapFromScene(box).boundingRect().right() <= view.right() + 1


def test_the_throughput_chart_is_shown_whole(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    win.model_dock.raise_()
    panel = win.model_panel
    panel.show_model(win.document.session.models[0].id)
    qtbot.waitUntil(panel.isVisible)
    panel.pages.setCurrentIndex(panel.pages.indexOf(panel.chart.parentWidget()))
    chart = panel.chart
    qtbot.waitUntil(lambda: chart.visibleRegion().boundingRect().height()
                    >= chart.minimumHeight(), timeout=HANG_GUARD_S * 1000)
    # the chart keeps the rest of the window: the roofline chart is still the larger
    assert win.canvas.height() > chart.height()


def _legend(plot):
    """The sweep plot's legend, as shown."""
    return next(i for i in plot.plot_widget.getPlotItem().scene().items()
                if type(i).__name__ == "LegendItem" and i.isVisible())


def _crossing_lines(plot):
    """The sweep plot's shown crossing markers (vertical lines) and their x in the scene."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPointF

    item = plot.plot_widget.getPlotItem()
    box = item.getViewBox()
    lines = [i for i in item.items if isinstance(i, pg.InfiniteLine) and i.isVisible()]
    return box, [(line, box.mapViewToScene(QPointF(line.value(), 0.0)).x()) for line in lines]


def _drawn_points(plot):
    """Points of the sweep plot's curves, a pixel apart along them, and the centres of
    their markers, in the scene."""
    import itertools

    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtCore import QPointF

    item = plot.plot_widget.getPlotItem()
    box = item.getViewBox()
    along, centres = [], []
    for curve in item.items:
        if not curve.isVisible():
            continue
        if isinstance(curve, pg.PlotCurveItem):
            xs, ys = curve.getData()
            pts = np.array([box.mapViewToScene(QPointF(float(x), float(y))).toTuple()
                            for x, y in zip(xs, ys, strict=True)])
            for a, b in itertools.pairwise(pts):
                steps = int(np.hypot(*(b - a))) + 2
                along += list(a + (b - a) * np.linspace(0, 1, steps)[:, None])
        elif isinstance(curve, pg.ScatterPlotItem):
            xs, ys = curve.getData()
            centres += [box.mapViewToScene(QPointF(float(x), float(y))).toTuple()
                        for x, y in zip(xs, ys, strict=True)]
    return np.array(along), np.array(centres)


MORE_MACHINES = ("mi300x", "rtx-4090", "h200")


@pytest.mark.parametrize("mode", ["flops", "time"])
@pytest.mark.parametrize("size,more", [((1366, 768), False), ((1024, 700), False),
                                       ((1366, 768), True)])
def test_each_crossing_value_in_the_sweep_plot_lies_beside_its_own_line_clear_of_the_rest(
        open_window, qtbot, size, more, mode):
    """The sweep plot marks where each machine's sweep crosses its ridge with a dashed line
    and its value ("m* = 255.5"). The values stood at set heights right of their lines: in
    the critical-batch example the TPU's value was drawn across the H100's line 25 pixels
    on, as near that line as its own; with five machines two values were drawn over each
    other ("m* = 217.55.5"); plotted as time, over the curves. Each value lies beside its
    own line, nearer it than any other line, within the plot, clear of the other values,
    of the curves and of their markers; where a value has no such place (lines a few pixels
    apart, a short plot), it is said after the title line instead."""
    from workbench.io.user_presets import find_preset

    win = open_window(CRITICAL_BATCH, size=size)
    win.sweep_dock.raise_()
    doc = win.document
    for preset in MORE_MACHINES if more else ():
        doc.add_machine(find_preset(preset), preset=preset)
    plot = win.sweep_plot
    plot.set_mode(mode)
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    qtbot.wait(50)  # (laid out at the dock's size)
    box, lines = _crossing_lines(plot)
    assert len(lines) == (5 if more else 2)
    along, centres = _drawn_points(plot)
    area = box.sceneBoundingRect()
    texts = []
    for line, x in lines:
        label = line.label
        text = label.sceneBoundingRect()
        name = label.toPlainText()
        assert name.startswith("m* = ")
        if not label.isVisible():
            assert name in plot.title.text(), (name, plot.title.text())
            continue
        assert name not in plot.title.text()
        assert text.width() > 0
        own = max(text.left() - x, x - text.right(), 0.0)
        assert own <= 8, (name, own)
        for other, ox in lines:
            if other is not line:
                assert not text.left() < ox < text.right(), (name, ox, text)
                assert max(text.left() - ox, ox - text.right(), 0.0) > own
        assert area.left() - 1 <= text.left() and text.right() <= area.right() + 1
        assert area.top() - 1 <= text.top() and text.bottom() <= area.bottom() + 1
        inner = text.adjusted(1, 1, -1, -1)
        hit = ((along[:, 0] > inner.left()) & (along[:, 0] < inner.right())
               & (along[:, 1] > inner.top()) & (along[:, 1] < inner.bottom()))
        assert not hit.any(), (name, "over a curve", along[hit][:3], text, area)
        grown = text.adjusted(-2, -2, 2, 2)
        over = ((centres[:, 0] > grown.left()) & (centres[:, 0] < grown.right())
                & (centres[:, 1] > grown.top()) & (centres[:, 1] < grown.bottom()))
        assert not over.any(), (name, "over a marker", centres[over][:3])
        for seen, other in texts:
            assert not text.intersects(other), (name, seen)
        texts.append((name, text))
    # (plotted as FLOP/s, both of the example's values have room beside their lines; two of
    # five machines' values, lines a few pixels apart. At 1024 × 700 the bottom row first
    # shows at its least height: with two machines the plot is 40 pixels high, its curves
    # across the whole of it, and the values are said after the title line)
    assert len(texts) >= (0 if size[0] < 1200 and not more else 2)


def test_a_crossing_value_near_the_plots_right_end_is_read_left_of_its_line(open_window, qtbot):
    """A sweep that ends just past its crossing draws the crossing's line at the plot's
    right end: its value, right of the line, would run out of the plot; it is read left of
    the line instead."""
    from workbench.model.sweeps import Sweep

    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    doc = win.document
    target = doc.session.operations[0]
    win.workspace.selection.select(target.id)
    # (the TPU's ridge at m = 255.5 lies within; the H100's, at 318.3, beyond the sweep)
    doc.set_sweep(target.id, Sweep("m", [1, 4, 16, 64, 128, 256, 262]))
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: len(plot.crossing_markers()) == 1 and plot.plot_widget.isVisible())
    qtbot.wait(50)
    box, lines = _crossing_lines(plot)
    (line, x), = lines
    text = line.label.sceneBoundingRect()
    area = box.sceneBoundingRect()
    assert line.label.toPlainText() == "m* = 255.5"
    assert x + text.width() > area.right()  # (no room right of the line)
    assert text.right() <= x + 1 and x - text.right() <= 8
    assert area.left() - 1 <= text.left()


@pytest.mark.parametrize("example", ["critical_batch_sweep.yaml", "sharded_matmul.yaml"])
def test_each_machine_in_the_sweep_plots_legend_is_drawn_beside_its_name(
        open_window, qtbot, example):
    """The sweep plot's legend, right of the plot, was stretched to the plot's height: each
    name stayed at the top of its stretched row and its line-and-marker sample sank to the
    row's middle, 25 pixels below the name it stands for (a legend of one machine). Each
    sample lies level with its name, and the box is as tall as its rows."""
    win = open_window(next(p for p in EXAMPLES if p.name == example), size=(1366, 768))
    win.sweep_dock.raise_()
    swept = next(e for e in win.document.session.operations if e.sweep is not None)
    win.workspace.selection.select(swept.id)
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    qtbot.wait(50)
    legend = _legend(plot)
    samples = sorted((i for i in legend.childItems() if type(i).__name__ == "ItemSample"),
                     key=lambda i: i.sceneBoundingRect().top())
    names = sorted((i for i in legend.childItems() if type(i).__name__ == "LabelItem"),
                   key=lambda i: i.sceneBoundingRect().top())
    assert len(samples) == len(names) == len(plot.curves()) >= 1
    for sample, name in zip(samples, names, strict=True):
        text = name.item.sceneBoundingRect()  # (the name's text, not its cell)
        middle = sample.sceneBoundingRect().center().y()
        assert abs(middle - text.center().y()) <= 3, (name.text, middle, text)
    box = legend.sceneBoundingRect()
    rows = names[-1].item.sceneBoundingRect().bottom() - names[0].item.sceneBoundingRect().top()
    assert box.height() <= rows + 24, (box, rows)


def test_a_crossing_value_left_out_is_drawn_again_once_it_has_room(open_window, qtbot):
    """Five machines' crossings a few pixels apart leave some values no room beside their
    lines: they are said after the title line, as they are after each edit. With the three
    machines added taken away again, every value is drawn beside its line again and the
    title line is as it was."""
    from workbench.io.user_presets import find_preset
    from workbench.model.chart.overlay_data import value_text

    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    doc = win.document
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    title = plot.title.text()
    for preset in MORE_MACHINES:
        doc.add_machine(find_preset(preset), preset=preset)
    qtbot.waitUntil(lambda: len(_crossing_lines(plot)[1]) == 5)
    hidden = [line.label.toPlainText() for line, _x in _crossing_lines(plot)[1]
              if not line.label.isVisible()]
    assert hidden and all(name in plot.title.text() for name in hidden)
    # an edit moves every crossing: the values said after the title line are the new ones
    doc.set_param(doc.session.operations[0].id, "n", 1024)
    qtbot.wait(20)
    left_out = [(line, x) for line, x in _crossing_lines(plot)[1] if not line.label.isVisible()]
    assert left_out
    for line, _x in left_out:
        now = f"m* = {value_text(10 ** line.value())}"
        assert line.label.toPlainText() == now and now in plot.title.text(), now
    assert not any(name in plot.title.text() for name in hidden)
    plot.set_mode("time")  # (the view's range changed while they are left out)
    plot.set_mode("flops")
    for _ in range(1 + len(MORE_MACHINES)):  # (the edit, the machines)
        doc.undo()
    qtbot.waitUntil(lambda: len(_crossing_lines(plot)[1]) == 2)
    qtbot.wait(20)
    assert all(line.label.isVisible() for line, _x in _crossing_lines(plot)[1])
    assert plot.title.text() == title
    # ... each beside its own line as it is now (a hidden label does not follow its line)
    for line, x in _crossing_lines(plot)[1]:
        text = line.label.sceneBoundingRect()
        assert max(text.left() - x, x - text.right(), 0.0) <= 8, (line.label.toPlainText(), x)


def test_values_left_out_of_a_short_sweep_plot_return_when_it_is_made_taller(
        open_window, qtbot):
    """Made too short for it (the bottom row dragged down), a crossing's value is left out
    beside its line and said after the title line; made taller again, it is drawn beside
    its line again."""
    from PySide6.QtCore import Qt

    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    plot.set_mode("time")
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    title = plot.title.text()

    def shown():
        return [line.label.isVisible() for line, _x in _crossing_lines(plot)[1]]

    win.resizeDocks([win.sweep_dock], [20], Qt.Orientation.Vertical)  # (as short as it goes)
    qtbot.waitUntil(lambda: not all(shown()))
    hidden = [line.label.toPlainText() for line, _x in _crossing_lines(plot)[1]
              if not line.label.isVisible()]
    assert all(name in plot.title.text() for name in hidden)
    win.resizeDocks([win.sweep_dock], [330], Qt.Orientation.Vertical)
    qtbot.waitUntil(lambda: all(shown()) and len(shown()) == 2)
    assert plot.title.text() == title


@pytest.mark.parametrize("size", [(1366, 768), (1024, 700)])
@pytest.mark.parametrize("more", [1, 2, 3])
def test_a_sweep_plot_of_many_machines_keeps_its_axis_title_in_view(
        open_window, qtbot, size, more):
    """With four machines or more, the legend beside the sweep plot (a row for each) was
    taller than the plot: the plot grew past the bottom row and its x axis's title was cut
    off. The legend takes as many columns as it needs to be no taller than the plot; every
    name and the axis title are in view, where there is room for the title; else the plot
    is left whole without it. Where the columns the legend needs would leave the plot
    narrower than its least width (four or five machines in the bottom row: the plot was a few
    pixels wide beside a legend wider than the panel, its last name cut off), the legend is
    left out and the plot keeps the room (the machines' markers and colours are the
    chart's, and hovering a sample names its machine)."""
    from PySide6.QtCore import Qt

    from workbench.io.user_presets import find_preset
    from workbench.ui.panels.sweep_plot import SweepPlot

    win = open_window(CRITICAL_BATCH, size=size)
    win.sweep_dock.raise_()
    # (the bottom row as a laptop's window first shows it; the test screen is smaller)
    win.resizeDocks([win.sweep_dock], [160], Qt.Orientation.Vertical)
    for preset in MORE_MACHINES[:more]:
        win.document.add_machine(find_preset(preset), preset=preset)
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: len(plot.curves()) == 2 + more and plot.plot_widget.isVisible())
    qtbot.wait(50)
    widget = plot.plot_widget
    item = widget.getPlotItem()
    view = widget.viewport().rect()
    # the whole panel within the window: its mode and Export… in view
    right = plot.mapTo(win, plot.export_button.geometry().topRight()).x()
    assert right <= win.width(), (right, win.width())
    # the plot within its widget, and the title shown whole where it has room
    assert item.geometry().height() <= view.height() + 0.5, (item.geometry(), view)
    label = item.getAxis("bottom").label
    if label.isVisible():
        title = widget.mapFromScene(label.sceneBoundingRect()).boundingRect()
        margin = round(label.document().documentMargin())  # (the text itself, in its box)
        assert view.contains(title.adjusted(margin, margin, -margin, -margin)), (title, view)
    area = item.getViewBox().sceneBoundingRect()
    assert area.width() >= SweepPlot.LEAST_PLOT[0], area
    legends = [i for i in item.scene().items()
               if type(i).__name__ == "LegendItem" and i.isVisible()]
    if not legends:  # (left out: beside the plot, it would leave less than its least width)
        assert more >= 2 and item.getViewBox().geometry().width() > view.width() / 2
        return
    names = [i for i in legends[0].childItems() if type(i).__name__ == "LabelItem"]
    assert len(names) == 2 + more
    for name in names:
        box = widget.mapFromScene(name.item.sceneBoundingRect()).boundingRect()
        assert view.contains(box), (name.text, box, view)
    assert legends[0].sceneBoundingRect().left() >= area.right() - 1  # (beside the plot)


def test_the_sweep_plots_title_line_names_the_sweep_with_crossings_or_none(open_window, qtbot):
    """The title line says the operation and its sweep whether the sweep crosses a ridge
    or not, and follows the selection."""
    from workbench.model.sweeps import Sweep

    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    doc = win.document
    first, second = doc.session.operations[:2]
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    assert plot.title.text() == f"{first.operation.name}: m = 1 … 4096 (13 values, log)"
    doc.set_sweep(first.id, Sweep("m", [1, 2, 4, 8]))  # (below every ridge: no crossing)
    qtbot.waitUntil(lambda: not plot.crossing_markers())
    assert plot.title.text() == f"{first.operation.name}: m ∈ {{1, 2, 4, 8}}"
    win.workspace.selection.select(second.id)
    qtbot.waitUntil(lambda: plot.title.text().startswith(second.operation.name))
    assert plot.title.text() == f"{second.operation.name}: m = 1 … 4096 (13 values, log)"


def _shown_numbers(axis):
    """The numbers a vertical axis draws: ``(text, centre in the scene)``, from its own tick
    values and strings as it draws them now."""
    from PySide6.QtCore import QPointF

    lo, hi = axis.range
    size = axis.geometry().height()
    out = []
    for spacing, values in axis.tickValues(lo, hi, size):
        for value, text in zip(values, axis.tickStrings(values, axis.scale, spacing),
                               strict=True):
            if text:
                y = axis.linkedView().mapViewToScene(QPointF(0.0, value)).y()
                out.append((text, y))
    return out


@pytest.mark.parametrize("mode", ["flops", "time"])
@pytest.mark.parametrize("size", [(1366, 768), (1024, 700)])
def test_the_sweep_plot_at_the_bottom_rows_least_height_is_cut_nowhere(
        open_window, qtbot, size, mode):
    """Dragged down as far as it goes, the bottom row left the sweep plot taller than its
    widget (its x axis's title cut off) and its four decades in forty pixels, each number
    over the next. Now the plot is no taller than its widget, its numbers a line apart, and
    the x axis's title (the title line names the swept parameter too) comes back once the
    row is tall enough for it."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QFontMetricsF

    win = open_window(CRITICAL_BATCH, size=size)
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    plot.set_mode(mode)
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    widget = plot.plot_widget
    item = widget.getPlotItem()
    x_axis, y_axis = item.getAxis("bottom"), item.getAxis("left")

    def whole():
        return item.geometry().height() <= widget.viewport().height() + 0.5

    win.resizeDocks([win.sweep_dock], [10], Qt.Orientation.Vertical)
    qtbot.waitUntil(whole)
    qtbot.wait(50)
    assert whole(), (item.geometry(), widget.viewport().rect())
    view = widget.viewport().rect()
    numbers = widget.mapFromScene(x_axis.sceneBoundingRect()).boundingRect()
    assert numbers.bottom() <= view.bottom() + 1, (numbers, view)
    if x_axis.label.isVisible():  # (a title shown is shown whole)
        title = widget.mapFromScene(x_axis.label.sceneBoundingRect()).boundingRect()
        assert view.contains(title), (title, view)
    numbers = _shown_numbers(y_axis)
    assert len(numbers) >= 2, numbers  # (still a scale to read)
    line = QFontMetricsF(y_axis.font()).height()
    ys = sorted(y for _text, y in numbers)
    assert min(b - a for a, b in itertools.pairwise(ys)) >= line, (numbers, line)

    win.resizeDocks([win.sweep_dock], [330], Qt.Orientation.Vertical)
    qtbot.waitUntil(lambda: x_axis.label.isVisible() and widget.viewport().height() > 200)
    title = widget.mapFromScene(x_axis.label.sceneBoundingRect()).boundingRect()
    # (its box less the text's own margin: the text itself in view)
    margin = round(x_axis.label.document().documentMargin())
    assert widget.viewport().rect().contains(title.adjusted(margin, margin, -margin, -margin))
    assert whole()


def test_hovering_a_sample_of_the_sweep_plot_says_its_numbers(open_window, qtbot):
    """The sweep plot's samples had no read-out: a reader could not tell what m = 256 gives
    on the H100 without going back to the chart. Hovering a sample's marker says the swept
    value and what the roofline says there, as hovering a point of the chart does; moving
    off it hides the read-out.

    By hand, m = 256 of the example's bf16 matmul (D = F = 8192): 2 · 256 · 8192² =
    34.36 GFLOP over 2 · (256 · 8192 · 2 + 8192²) B = 142.6 MB is 240.9 FLOP/B; on the
    H100 (3.35 TB/s, 989.4 TFLOP/s) that is min(989.4, 240.9 × 3.35) = 807 TFLOP/s, memory-
    bound; T_lower = max(34.36 G / 989.4 T, 142.6 M / 3.35 T) = max(34.7, 42.6) µs."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip

    from workbench.ui.chart.axes import to_view

    plot = open_sweep_example(open_window, qtbot).sweep_plot
    widget = plot.plot_widget
    box = widget.getPlotItem().getViewBox()
    curves = [(name, hw_id) for hw_id, name, _xs, _ys in plot.curves()]
    index = next(i for i, (name, _id) in enumerate(curves) if "H100" in name)
    _hw, values, ys = plot.samples()[index]
    j = values.index(256.0)
    view_x = float(to_view(np.asarray([values[j]]))[0])  # (a log axis)
    at = box.mapViewToScene(QPointF(view_x, float(to_view(np.asarray([ys[j]]))[0])))
    pixel = widget.mapFromScene(at)
    # (from elsewhere first: a move to where the pointer already is, left there by another
    # test, sends no event; and pyqtgraph drops moves closer than a frame apart)
    QTest.mouseMove(widget.viewport(), QPoint(2, 2))
    qtbot.wait(40)
    QTest.mouseMove(widget.viewport(), pixel)
    qtbot.waitUntil(lambda: QToolTip.isVisible() and "m = 256" in QToolTip.text())
    text = QToolTip.text()
    assert text.splitlines() == [  # (as the chart's sweep path says a sample)
        "bf16 matmul, D = F = 8192 on NVIDIA H100 SXM5 80GB", "m = 256",
        "Intensity: 241 FLOP/B", "Attainable: 807 TFLOP/s", "Bound: memory",
        "T_lower: 42.6 µs"]
    # the pointer rests: Qt's request for a tooltip, a moment on, leaves the read-out shown
    rest_pointer(widget.viewport(), pixel)
    qtbot.wait(500)  # (a tip told to hide goes after 300 ms)
    assert QToolTip.isVisible() and QToolTip.text() == text
    # off the samples (the plot's top left corner): no read-out
    corner = widget.mapFromScene(box.sceneBoundingRect().topLeft() + QPointF(3, 3))
    qtbot.wait(40)
    QTest.mouseMove(widget.viewport(), corner)
    qtbot.waitUntil(lambda: not QToolTip.isVisible())


def test_hovering_a_point_of_the_throughput_chart_says_its_numbers(open_window, qtbot):
    """The Model tab's throughput chart had no read-out: which batch a point is, and its
    TPOT and tokens/s, could only be guessed from the log axes. Resting the pointer on a
    point says them; elsewhere nothing is said."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QToolTip

    win = open_window(LLAMA_8B, size=(1366, 768))
    win.model_dock.raise_()
    panel = win.model_panel
    panel.show_model(win.document.session.models[1].id)  # (decode)
    qtbot.waitUntil(panel.isVisible)
    panel.pages.setCurrentIndex(panel.pages.indexOf(panel.chart.parentWidget()))
    chart = panel.chart
    qtbot.waitUntil(lambda: len(chart.drawn) > 3, timeout=HANG_GUARD_S * 1000)
    where, curve, (tpot, rate, batch) = chart.drawn[2]

    rest_pointer(chart, where.toPoint())
    qtbot.waitUntil(QToolTip.isVisible)
    lines = QToolTip.text().splitlines()
    assert lines[0] == curve.label
    assert lines[1] == f"batch {batch:,}"
    assert float(lines[2].removeprefix("TPOT ").removesuffix(" ms")) == pytest.approx(
        tpot * 1e3, rel=5e-3)
    assert lines[3] == f"{rate:,.0f} output tokens/s per chip"
    # tokens/s per chip is the batch's tokens over one TPOT (one chip here)
    assert rate == pytest.approx(batch / tpot, rel=1e-9)
    rest_pointer(chart, QPoint(2, 2))  # (the chart's corner: no point)
    qtbot.waitUntil(lambda: not QToolTip.isVisible())


def test_hovering_a_crossing_line_of_the_sweep_plot_explains_it(open_window, qtbot):
    """A crossing's dashed line in the sweep plot says, when hovered, what the chart's
    crossing says: the exact value, from which whole value the operation is compute-bound,
    the ridge and the peak.

    By hand, on the TPU v5e (197 TFLOP/s, 819 GB/s: ridge 240.5 FLOP/B) the example's matmul
    (D = F = 8192) has I(m) = 8192 m / (2 m + 8192), equal to the ridge at
    m = 240.5 · 8192 / (8192 − 2 · 240.5) = 255.5: compute-bound from m = 256."""
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip

    plot = open_sweep_example(open_window, qtbot).sweep_plot
    widget = plot.plot_widget
    box, lines = _crossing_lines(plot)
    x = next(x for line, x in lines if line.label.toPlainText() == "m* = 255.5")
    area = box.sceneBoundingRect()
    pixel = widget.mapFromScene(QPointF(x + 1, area.bottom() - 4))  # (below the curves)
    QTest.mouseMove(widget.viewport(), QPoint(2, 2))
    qtbot.wait(40)
    QTest.mouseMove(widget.viewport(), pixel)
    qtbot.waitUntil(lambda: QToolTip.isVisible() and "Crosses" in QToolTip.text())
    lines_said = QToolTip.text().splitlines()
    assert lines_said[0] == "bf16 matmul, D = F = 8192 on Google Cloud TPU v5e (per chip)"
    assert lines_said[1].startswith("Crosses the ridge at m = 255.5")
    assert lines_said[2] == "Compute-bound from m = 256"
    assert lines_said[3].startswith("Ridge 241 FLOP/B (hbm), peak 197 TFLOP/s")
    rest_pointer(widget.viewport(), pixel)  # (kept while the pointer rests)
    qtbot.wait(500)
    assert QToolTip.isVisible() and "Crosses the ridge at m = 255.5" in QToolTip.text()


def test_the_model_tabs_first_fields_are_shown_in_the_short_bottom_row(open_window, qtbot):
    """On a 768-pixel screen (a window 700 pixels tall, its frame and a task bar aside) the
    Model tab showed the model's description first (four lines) and only Phase below it:
    Batch, the field a user changes first, was cut off until the panel was scrolled. The
    fields come first; the description follows them."""
    win = open_window(LLAMA_8B, size=(1024, 700))
    win.model_dock.raise_()
    editor = win.model_panel.editor
    qtbot.waitUntil(lambda: editor.form.isVisible() and bool(editor.title.text()))
    qtbot.wait(50)
    for field in (editor.form.phase, editor.form.batch):
        shown = field.visibleRegion().boundingRect()
        assert (shown.width(), shown.height()) == (field.width(), field.height()), (
            field.objectName(), shown, field.size())
