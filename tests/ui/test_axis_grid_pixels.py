"""The axes' grid on screen: painted within a clip that holds the whole pixmap (Qt's fast way
for translucent lines drawn without antialiasing), it gives the very pixels pyqtgraph's own
painting gives, at every size, offset and scale, and for every example."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from conftest import EXAMPLES, open_canvas
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter, QPixmap
from PySide6.QtWidgets import QApplication

from workbench.ui.chart.axes import LogAxis


def _axes(canvas) -> list[LogAxis]:
    return [item for item in canvas.plot_widget.scene().items()
            if isinstance(item, LogAxis) and item.isVisible()]


def _painted(axis: LogAxis, paint, dx: float, dy: float, scale: float) -> QImage:
    """``axis`` painted by ``paint`` on a white pixmap, moved by ``(dx, dy)`` and scaled."""
    axis.picture = None  # (pyqtgraph's kept picture: drawn again for each)
    rect = axis.boundingRect()
    pixmap = QPixmap(int(rect.width() * scale) + 4, int(rect.height() * scale) + 4)
    pixmap.fill(Qt.GlobalColor.white)
    painter = QPainter(pixmap)
    painter.translate(-rect.left() * scale + dx + 1, -rect.top() * scale + dy + 1)
    painter.scale(scale, scale)
    paint(axis, painter, None, None)
    painter.end()
    axis.picture = None
    return pixmap.toImage()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_grid_on_a_pixmap_has_pyqtgraphs_own_pixels(qtbot, path):
    canvas = open_canvas(qtbot, path, (760, 560))
    for width, height in ((760, 560), (430, 330)):
        canvas.resize(width, height)
        QApplication.processEvents()
        axes = _axes(canvas)
        assert {a.orientation for a in axes} == {"left", "bottom"}
        for axis in axes:
            assert axis.grid  # (the grid is drawn: the comparison is of its lines)
            for dx, dy, scale in ((0, 0, 1), (0.25, 0.5, 1), (0.5, 0.5, 1), (0.75, 0.1, 1),
                                  (0.3, 0.3, 1.5), (0, 0, 0.7)):
                ours = _painted(axis, LogAxis.paint, dx, dy, scale)
                theirs = _painted(axis, pg.AxisItem.paint, dx, dy, scale)
                assert ours == theirs, (path.stem, width, axis.orientation, dx, dy, scale)


def test_the_canvas_on_screen_looks_as_pyqtgraph_paints_it(qtbot, monkeypatch):
    """The whole chart as the user sees it (the axes from their cached pixmaps) is the same
    image with the axes painted as pyqtgraph paints them."""
    canvas = open_canvas(qtbot, EXAMPLES[0], (760, 560))
    ours = canvas.grab().toImage()
    monkeypatch.setattr(LogAxis, "paint", pg.AxisItem.paint)
    for axis in _axes(canvas):  # (their cached pixmaps drawn again)
        axis.picture = None
        axis.update()
    theirs = canvas.grab().toImage()
    assert ours.size() == theirs.size()
    assert ours == theirs


def test_the_grid_is_painted_within_a_clip_on_a_pixmap_and_as_pyqtgraph_does_elsewhere(
        qtbot, monkeypatch):
    """On a pixmap the axis paints within a clip larger than the pixmap (nothing left out);
    on another device (an export's) it sets none of its own."""
    canvas = open_canvas(qtbot, EXAMPLES[0], (760, 560))
    axis = _axes(canvas)[0]
    seen: list[tuple[bool, QRectF | None]] = []

    def record(self, p, opt, widget):
        seen.append((p.hasClipping(), p.clipBoundingRect() if p.hasClipping() else None))

    monkeypatch.setattr(pg.AxisItem, "paint", record)
    pixmap = QPixmap(200, 100)
    painter = QPainter(pixmap)
    painter.translate(-30.5, 12)
    axis.paint(painter, None, None)
    painter.end()
    image = QImage(200, 100, QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(image)
    axis.paint(painter, None, None)
    painter.end()
    (on_pixmap, clip), (on_image, _none) = seen
    assert on_pixmap and clip.contains(QRectF(30.5, -12, 200, 100))
    assert not on_image
