"""A wide line with round ends (a roof) is drawn on screen as a line with flat ends and a dot
at each end, in device pixels (Qt strokes a round-ended line as an outline to fill, a tenth
of a millisecond and more each time any part of a roof across the plot is repainted); in a
figure it is the path it always was. The two must look the same: the pictures below are
compared pixel by pixel, a roof and its ridge corner among them."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QGraphicsScene

from workbench.ui.chart.items import Segment, painted_for_figure

#: levels (of 255) a smoothed edge may be shaded otherwise by the two ways of drawing it:
#: along the line, a few; at an end, where the dot and the line both shade a pixel of its
#: edge, more, at a few pixels (MOST_SHADED)
SHADING = 32
MOST_SHADED = 6


def _picture(scene: QGraphicsScene, size=(400, 300)) -> np.ndarray:
    image = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    scene.render(painter, QRectF(0, 0, *size), QRectF(0, 0, *size))
    painter.end()
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(size[1], -1)
    return rows[:, : size[0] * 4].reshape(size[1], size[0], 4)[:, :, :3].astype(int)


def _roof(scene: QGraphicsScene, x, y, width: float = 2.0, cap=Qt.PenCapStyle.RoundCap,
          style=Qt.PenStyle.SolidLine) -> Segment:
    pen = QPen(QColor(31, 31, 31))
    pen.setWidthF(width)
    pen.setCosmetic(True)
    pen.setCapStyle(cap)
    pen.setStyle(style)
    item = Segment(-1)
    scene.addItem(item)
    item.setData(np.array(x, dtype=float), np.array(y, dtype=float), pen)
    return item


@pytest.mark.parametrize("width", [2.0, 2.4, 3.2, 4.8])
def test_a_roof_on_screen_looks_as_in_a_figure(qapp, width):
    """A memory roof running out of the picture, meeting a compute roof at its ridge (the
    main roofs' widths, 2 and 3.2 pixels in the two themes, and others): the same pixels on
    screen and in a figure, within a few levels of shading at the edges, its round corner at
    the ridge filled on screen as in the figure (without the dots, a notch at the bend
    differs by far more)."""
    scene = QGraphicsScene()
    _roof(scene, [-300.0, 250.0], [420.0, 60.0], width)  # (starts far off the picture)
    _roof(scene, [250.0, 900.0], [60.0, 60.0], width)  # (ends far off it)
    screen = _picture(scene)
    with painted_for_figure(scene):
        figure = _picture(scene)
    assert (figure < 128).any()  # (something was drawn)
    difference = np.abs(screen - figure).max(axis=2)
    assert difference.max() <= SHADING, difference.max()
    assert (difference > 8).sum() <= MOST_SHADED, (difference > 8).sum()


def test_a_figure_draws_every_line_as_its_path(qapp):
    """In a figure every line is the path it was: a vector file holds one path per line, as
    a curve of two points writes it (the same files as before the screen's way of drawing)."""
    from PySide6.QtGui import QPainterPath

    scene = QGraphicsScene()
    roof = _roof(scene, [0.0, 200.0], [200.0, 20.0])
    drawn: list[str] = []
    image = QImage(220, 220, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    original = QPainter.drawPath

    def draw_path(self, path: QPainterPath) -> None:
        drawn.append("path")
        original(self, path)

    painter.drawPath = draw_path.__get__(painter)  # (this painter's calls, recorded)
    roof.setExportMode(True)
    roof.paint(painter, None)
    roof.setExportMode(False)
    roof.paint(painter, None)
    painter.end()
    assert drawn == ["path"]


@pytest.mark.parametrize("style", [Qt.PenStyle.DashLine, Qt.PenStyle.SolidLine])
def test_other_lines_are_drawn_as_before(qapp, style):
    """Only a wide opaque solid line with round ends is drawn otherwise on screen: a dotted
    ridge line, a narrow line, one with square ends and a translucent one are the same pixels
    on screen and in a figure."""
    scene = QGraphicsScene()
    _roof(scene, [20.0, 380.0], [280.0, 30.0], 1.2, style=style)
    _roof(scene, [20.0, 380.0], [30.0, 280.0], 2.0, cap=Qt.PenCapStyle.SquareCap, style=style)
    pale = _roof(scene, [20.0, 380.0], [150.0, 150.0], 2.0, style=style)
    pen = QPen(pale._pen)
    pen.setColor(QColor(31, 31, 31, 128))
    pale.setData(np.array([20.0, 380.0]), np.array([150.0, 150.0]), pen)
    screen = _picture(scene)
    with painted_for_figure(scene):
        figure = _picture(scene)
    assert (figure < 128).any()
    assert np.array_equal(screen, figure)
