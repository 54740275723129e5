"""The legend can be dragged anywhere over the plot, never over the axes, their numbers or
their titles (it could be left over the x axis's title)."""

from __future__ import annotations

from conftest import EXAMPLES
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication


def _drag(viewport, start, end, steps: int = 12) -> None:
    """Press at ``start``, move to ``end`` with the button held, release (viewport pixels)."""
    def send(kind, at, buttons):
        point = QPointF(at)
        event = QMouseEvent(kind, point, viewport.mapToGlobal(point), Qt.MouseButton.LeftButton
                            if kind != QEvent.Type.MouseMove else Qt.MouseButton.NoButton,
                            buttons, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(viewport, event)

    send(QEvent.Type.MouseButtonPress, start, Qt.MouseButton.LeftButton)
    for i in range(1, steps + 1):
        send(QEvent.Type.MouseMove, start + (end - start) * (i / steps), Qt.MouseButton.LeftButton)
        QApplication.processEvents()
    send(QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)
    QApplication.processEvents()


def test_the_legend_dragged_towards_the_x_axis_title_stays_over_the_plot(open_window, qtbot):
    win = open_window(next(p for p in EXAMPLES if p.name == "llama_ffn.yaml"), size=(1366, 768))
    canvas = win.canvas
    legend = canvas.legend_item
    assert legend.isVisible()
    view = canvas.plot_widget
    title = canvas.plot_item.getAxis("bottom").label.sceneBoundingRect()
    start = view.mapFromScene(legend.sceneBoundingRect().center())
    _drag(view.viewport(), start, view.mapFromScene(title.center()))
    assert canvas.legend_user_placed  # it was dragged …
    box = legend.sceneBoundingRect()
    area = canvas.view_box.sceneBoundingRect()
    assert not box.intersects(title)  # … not over the title
    assert area.adjusted(-1, -1, 1, 1).contains(box)  # but as far as the plot's edge
    assert box.bottom() > area.bottom() - 2
