"""The chart's lines (:class:`~workbench.ui.chart.items.Segment`: roofs, ridge lines, texts'
leaders): plain Qt items whose box holds the whole line with room for its pen, in pixels,
at any zoom (Qt repaints an item by its box: a line outside it would leave stale pixels
after an edit, a box far larger repaints what did not change); a leader is drawn crisp on
screen and smoothed in a figure, as the curves it replaces were."""

from __future__ import annotations

import numpy as np
from conftest import SHADING, largest_difference
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QGraphicsScene

from workbench.io.presets import examples_dir
from workbench.ui.chart.items import Segment, painted_for_figure


def _ends_held(lines, room: float, most: float = 12.0) -> list[str]:
    """The lines (items) shown whose box (in the scene) does not hold both ends of their
    line with ``room`` pixels to spare, or holds them with more than ``most`` (a box far
    larger than its line repaints what did not change)."""
    bad = []
    for line in lines:
        if not line.isVisible():
            continue
        xs, ys = line.getData()
        box = line.sceneBoundingRect()
        ends = [line.mapToScene(QPointF(float(x), float(y))) for x, y in zip(xs, ys, strict=True)]
        for end in ends:
            if not box.adjusted(room, room, -room, -room).contains(end):
                bad.append(f"{end} outside {box}")
        spare = min(min(e.x() for e in ends) - box.left(), box.right() - max(e.x() for e in ends),
                    min(e.y() for e in ends) - box.top(), box.bottom() - max(e.y() for e in ends))
        if spare > most:
            bad.append(f"{spare:.0f} px to spare in {box}")
    return bad


def test_a_lines_box_holds_it_as_the_view_changes(open_window, qtbot):
    """Every roof, ridge line and leader: its box holds its line with room for its pen,
    in pixels, whatever the view's scale: as first drawn, zoomed out, and in a smaller
    window (a box made for the view's scale when the line was set was hundreds of pixels
    too large once the example was fitted)."""
    win = open_window(examples_dir() / "teaching_machine.yaml", size=(1024, 700))
    canvas = win.canvas

    def lines():
        qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
        return [line for _roof, line in canvas.roofs.roofs] + [
            line for _ridge, line in canvas.roofs.ridge_lines] + canvas.labels.leader_curves

    first = lines()
    assert len(canvas.labels.leader_curves) >= 2  # (the teaching example's far texts)
    assert _ends_held(first, 2.0) == []
    # zoomed out by half a decade each way: the boxes are worked out again with the view
    (x0, x1), (y0, y1) = canvas.view_box.viewRange()
    canvas.view_box.setRange(xRange=(x0 - 0.5, x1 + 0.5), yRange=(y0 - 0.5, y1 + 0.5),
                             padding=0)
    canvas.flush_layout()
    assert canvas.labels.leader_curves
    assert _ends_held(lines(), 2.0) == []
    win.resize(800, 600)
    assert _ends_held(lines(), 2.0) == []


def _drawn(leader: Segment, scene: QGraphicsScene) -> np.ndarray:
    """The alpha of each pixel of ``scene`` (40 × 40) painted with ``leader`` in it."""
    image = QImage(40, 40, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    scene.render(painter, QRectF(0, 0, 40, 40), QRectF(0, 0, 40, 40))
    painter.end()
    bits = image.constBits()
    return np.frombuffer(bits, dtype=np.uint8).reshape(40, 40, 4)[:, :, 3].copy()


def test_a_leader_is_crisp_on_screen_and_smoothed_in_a_figure(qapp):
    scene = QGraphicsScene(0, 0, 40, 40)
    leader = Segment(18, smooth=False)
    scene.addItem(leader)
    pen = QPen(QColor("black"), 0.8)
    pen.setCosmetic(True)
    leader.setData(x=np.array([3.0, 36.0]), y=np.array([5.0, 31.0]), pen=pen)
    crisp = _drawn(leader, scene)
    # (a line of 33 px across, every pixel of it inked alike: no edge blended; a pen under
    # a pixel wide inks as much less)
    assert (crisp > 0).sum() >= 33
    assert len(np.unique(crisp[crisp > 0])) == 1
    with painted_for_figure(scene):
        smooth = _drawn(leader, scene)
    assert len(np.unique(smooth[smooth > 0])) >= 5  # (blended where it crosses a pixel)
    assert np.array_equal(_drawn(leader, scene), crisp)  # (on screen again afterwards)
    xs, ys = leader.getData()
    assert list(xs) == [3.0, 36.0] and list(ys) == [5.0, 31.0]


def _plot_pixels(win, image) -> QImage:
    """The chart's plot area of a picture of the whole window."""
    view = win.canvas.plot_widget
    at = view.mapTo(win, view.rect().topLeft())
    return image.copy(at.x(), at.y(), view.width(), view.height()).convertToFormat(
        QImage.Format.Format_RGB32)


def test_edits_and_pans_leave_no_line_behind(open_window, qtbot, qapp):
    """What the window shows after edits that move leaders (Qt repaints only the boxes of
    what changed) is what a repaint of all of it shows: no line left where it was, none
    cut short (the edges across the parts repainted shaded alike, within SHADING)."""
    win = open_window(examples_dir() / "teaching_machine.yaml", size=(1024, 700))
    canvas = win.canvas
    gemm = next(e for e in win.document.session.operations
                if e.operation.name == "GEMM N=128 fp16")

    def settled() -> tuple[QImage, QImage]:
        qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
        for _ in range(3):
            qapp.processEvents()
        shown = qapp.primaryScreen().grabWindow(win.winId()).toImage()
        return _plot_pixels(win, shown), _plot_pixels(win, win.grab().toImage())

    seen = {tuple(canvas.leader_lines())}
    for n in (96, 160, 48, 300):
        win.document.set_param(gemm.id, "n", n)
        shown, whole = settled()
        seen.add(tuple(canvas.leader_lines()))
        assert largest_difference(shown, whole) <= SHADING, n
    assert len(seen) >= 3  # (the leaders did move)
    (x0, x1), (y0, y1) = canvas.view_box.viewRange()
    canvas.view_box.setRange(xRange=(x0 + 0.3, x1 + 0.3), yRange=(y0, y1), padding=0)
    shown, whole = settled()
    assert largest_difference(shown, whole) <= SHADING
