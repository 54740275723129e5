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


def test_the_readout_clears_when_the_plot_is_never_told_the_pointer_left(open_window, qtbot):
    """A window system may send the plot no Leave event (a pointer moved fast onto a popup
    or another window): the read-out still clears once the pointer is elsewhere."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtGui import QCursor

    class NoLeave(QObject):
        def eventFilter(self, watched, event) -> bool:
            return event.type() == QEvent.Type.Leave

    win = open_window()
    _over_the_plot(qtbot, win)
    swallowed = NoLeave()
    plot = win.canvas.plot_widget
    for widget in (win.canvas, plot, plot.viewport()):
        widget.installEventFilter(swallowed)
    panel = win.operations_panel
    QCursor.setPos(panel.mapToGlobal(panel.rect().center()))
    qtbot.mouseMove(panel, panel.rect().center())
    qtbot.waitUntil(lambda: win.cursor_label.text() == "")
    assert win.canvas.hover.text == ""


def test_the_readout_clears_over_the_axes(open_window, qtbot):
    win = open_window()
    _over_the_plot(qtbot, win)
    plot = win.canvas.plot_widget
    area = plot.getPlotItem().getViewBox().sceneBoundingRect()
    qtbot.wait(40)
    # on the x axis's tick labels, under the plot
    qtbot.mouseMove(plot.viewport(), plot.mapFromScene(area.center().x(), area.bottom() + 12))
    qtbot.waitUntil(lambda: win.cursor_label.text() == "")


def test_the_readout_clears_when_the_window_shrinks_under_a_still_pointer(open_window, qtbot):
    from PySide6.QtGui import QCursor

    win = open_window(size=(1350, 720))
    _over_the_plot(qtbot, win)
    plot = win.canvas.plot_widget
    area = plot.getPlotItem().getViewBox().sceneBoundingRect()
    # the pointer rests low in the plot, then the window is made shorter by the window
    # manager: the results panel comes up under the pointer, which did not move
    low = plot.viewport().mapToGlobal(plot.mapFromScene(area.center().x(), area.bottom() - 8))
    qtbot.mouseMove(plot.viewport(), plot.viewport().mapFromGlobal(low))
    QCursor.setPos(low)
    qtbot.waitUntil(lambda: win.cursor_label.text().startswith("I = "))
    win.resize(1350, 560)

    def off_the_plot() -> bool:
        here = plot.viewport().mapFromGlobal(low)
        return not plot.getPlotItem().getViewBox().sceneBoundingRect().contains(
            plot.mapToScene(here)) or not plot.viewport().rect().contains(here)

    qtbot.waitUntil(off_the_plot)
    qtbot.wait(100)
    assert win.cursor_label.text() == ""


def test_the_readout_clears_when_the_window_moves_from_under_a_still_pointer(open_window,
                                                                              qtbot):
    from PySide6.QtGui import QCursor

    win = open_window(size=(1000, 600))
    _over_the_plot(qtbot, win)
    plot = win.canvas.plot_widget
    area = plot.getPlotItem().getViewBox().sceneBoundingRect()
    # the pointer rests near the plot's left edge; the window is moved right under it:
    # the panels on the window's left come under the pointer
    near_left = plot.mapFromScene(area.left() + 8, area.center().y())
    qtbot.mouseMove(plot.viewport(), near_left)
    QCursor.setPos(plot.viewport().mapToGlobal(near_left))
    qtbot.waitUntil(lambda: win.cursor_label.text().startswith("I = "))
    win.move(win.pos().x() + 300, win.pos().y())
    qtbot.waitUntil(lambda: not win.canvas.geometry().contains(
        win.mapFromGlobal(QCursor.pos())))
    qtbot.wait(100)
    assert win.cursor_label.text() == ""
