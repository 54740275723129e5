"""The status bar's read-out (intensity, FLOP/s and regime under the pointer) speaks only
while the pointer is over the plot: it is cleared when the pointer leaves the plot, for the
axes or for another panel (it stayed, naming a place the pointer had left)."""

from __future__ import annotations

from PySide6.QtCore import QPoint


def _over_the_plot(qtbot, win) -> None:
    plot = win.canvas.plot_widget
    centre = plot.mapFromScene(plot.getPlotItem().getViewBox().sceneBoundingRect().center())
    qtbot.mouseMove(plot.viewport(), QPoint(2, 2))
    qtbot.wait(40)  # (pyqtgraph drops moves closer than a frame apart)
    qtbot.mouseMove(plot.viewport(), centre)
    qtbot.waitUntil(lambda: win.cursor_label.text().startswith("I = "))


def test_the_readout_clears_when_the_pointer_leaves_for_another_panel(open_window, qtbot):
    win = open_window()
    _over_the_plot(qtbot, win)
    panel = win.operations_panel
    qtbot.mouseMove(panel, panel.rect().center())
    qtbot.waitUntil(lambda: win.cursor_label.text() == "")


def test_the_readout_clears_over_the_axes(open_window, qtbot):
    win = open_window()
    _over_the_plot(qtbot, win)
    plot = win.canvas.plot_widget
    area = plot.getPlotItem().getViewBox().sceneBoundingRect()
    qtbot.wait(40)
    # on the x axis's tick labels, under the plot
    qtbot.mouseMove(plot.viewport(), plot.mapFromScene(area.center().x(), area.bottom() + 12))
    qtbot.waitUntil(lambda: win.cursor_label.text() == "")
