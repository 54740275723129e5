"""The plots of the short bottom row can be read at a laptop's 1366 × 768: the sweep plot's
legend covers none of its curves (it hid a third of them) and the Model tab's Throughput
chart is shown at its full height (it was 40 pixels high); each crossing value of the sweep
plot lies beside its own line, clear of the others."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, HANG_GUARD_S

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")
LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def test_the_sweep_plots_legend_covers_none_of_its_curves(open_window, qtbot):
    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    assert len(plot.curves()) == 2
    item = plot.plot_widget.getPlotItem()
    legend = next(i for i in item.scene().items()
                  if type(i).__name__ == "LegendItem" and i.isVisible())
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


def _crossing_lines(plot):
    """The sweep plot's shown crossing markers (vertical lines) and their x in the scene."""
    import pyqtgraph as pg
    from PySide6.QtCore import QPointF

    item = plot.plot_widget.getPlotItem()
    box = item.getViewBox()
    lines = [i for i in item.items if isinstance(i, pg.InfiniteLine) and i.isVisible()]
    return box, [(line, box.mapViewToScene(QPointF(line.value(), 0.0)).x()) for line in lines]


@pytest.mark.parametrize("size", [(1366, 768), (1024, 700)])
def test_each_crossing_value_in_the_sweep_plot_lies_beside_its_own_line_and_no_other(
        open_window, qtbot, size):
    """The sweep plot marks where each machine's sweep crosses its ridge with a dashed line
    and its value ("m* = 255.5"). The critical-batch example's two lines lie 25 pixels apart
    at a laptop's size: the first value, right of its line, was drawn across the second
    line. Each value lies beside its own line, nearer it than any other, and no other line
    crosses it; it is read whole, within the plot."""
    win = open_window(CRITICAL_BATCH, size=size)
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    qtbot.wait(50)  # (laid out at the dock's size)
    box, lines = _crossing_lines(plot)
    assert len(lines) == 2
    area = box.sceneBoundingRect()
    for line, x in lines:
        text = line.label.sceneBoundingRect()
        assert text.width() > 0 and line.label.toPlainText().startswith("m* = ")
        own = max(text.left() - x, x - text.right(), 0.0)
        assert own <= 8, (line.label.toPlainText(), own)
        for other, ox in lines:
            if other is line:
                continue
            assert not text.left() < ox < text.right(), (line.label.toPlainText(), ox, text)
            assert max(text.left() - ox, ox - text.right(), 0.0) > own
        assert area.left() - 1 <= text.left() and text.right() <= area.right() + 1


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
    item = plot.plot_widget.getPlotItem()
    legend = next(i for i in item.scene().items()
                  if type(i).__name__ == "LegendItem" and i.isVisible())
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
