"""On screen, a ridge's text with no room by its diamond in full ("EPYC 9654 Genoa: ridge 32
FLOP/B") is said without its machine's name ("ridge 32 FLOP/B") where that finds a place by
the diamond, which is drawn in the machine's colour on its line; hovering the text names the
machine. Where the full text finds room again (a zoom), it is said in full.

The case: a new session, an AMD EPYC 9654 and an H100 SXM5, View ▸ All Memory Roofs, at
1366 × 768. The EPYC's ridge lies between the H100's three memory lines and its own, with
the H100's ridge line beside it, and was said nowhere (not on the chart, not in the key, which
names operations only on screen). Its value is the preset's bf16 peak over its DDR5
bandwidth: 14.75 TFLOP/s / 460.8 GB/s = 32.0 FLOP/byte (12 channels of DDR5-4800 × 8 B)."""

from __future__ import annotations

import math

from figures.figcheck import canvas_attribution, check_attribution
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QToolTip

from workbench.io.presets import get_preset
from workbench.ui.chart.axes import to_view


def _epyc_and_h100(open_window, qtbot):
    win = open_window(size=(1366, 768))
    doc = win.document
    doc.add_machine(get_preset("epyc-9654"), preset="epyc-9654")
    doc.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    win.view_actions["all_levels"].trigger()
    assert doc.session.view.all_levels
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    return win, canvas


def _epyc_ridge(canvas):
    """The EPYC's ridge, its text, where that is placed (or None) and its diamond's pixel."""
    ax, bx, ay, by = canvas.view_to_scene()
    for i, (ridge, label) in enumerate(canvas.roofs.ridges):
        if ridge.label.startswith("EPYC 9654"):
            pixel = (to_view(ridge.x) * ax + bx, to_view(ridge.y) * ay + by)
            return ridge, label, canvas.labels.text_layout.placed.get(("ridge", i)), pixel
    raise AssertionError("no EPYC ridge")


def _gap(rect, x: float, y: float) -> float:
    dx = max(rect[0] - x, x - rect[2], 0.0)
    dy = max(rect[1] - y, y - rect[3], 0.0)
    return math.hypot(dx, dy)


def test_a_ridge_with_no_room_in_full_is_said_short_by_its_diamond(open_window, qtbot):
    _win, canvas = _epyc_and_h100(open_window, qtbot)
    ridge, label, placement, (sx, sy) = _epyc_ridge(canvas)
    assert math.isclose(ridge.x, 14.75e12 / 460.8e9, rel_tol=1e-9)
    assert ridge.label == "EPYC 9654 Genoa: ridge 32 FLOP/B"
    assert label.isVisible() and placement is not None
    assert label.toPlainText() == "ridge 32 FLOP/B"
    # by its own diamond: nearer it than any other ridge's diamond, or led to it
    mine = _gap(placement.rect, sx, sy)
    ax, bx, ay, by = canvas.view_to_scene()
    for other, _text in canvas.roofs.ridges:
        if other is not ridge:
            ox, oy = to_view(other.x) * ax + bx, to_view(other.y) * ay + by
            assert _gap(placement.rect, ox, oy) > mine
    assert check_attribution(*canvas_attribution(canvas)) == []


def test_hovering_a_short_ridge_names_its_machine(open_window, qtbot):
    _win, canvas = _epyc_and_h100(open_window, qtbot)
    _ridge, label, placement, _pixel = _epyc_ridge(canvas)
    assert label.toPlainText() == "ridge 32 FLOP/B" and placement is not None
    viewport = canvas.plot_widget.viewport()
    qtbot.mouseMove(viewport, QPoint(2, 2))
    qtbot.wait(40)  # (pyqtgraph drops moves closer than a frame apart)
    qtbot.mouseMove(viewport, canvas.plot_widget.mapFromScene(label.sceneBoundingRect().center()))
    said = "AMD EPYC 9654 Genoa (1 socket) — ridge 32 FLOP/B"
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == said)
    assert canvas.hover_text() == said


def test_with_room_again_the_ridge_is_said_in_full(open_window, qtbot):
    _win, canvas = _epyc_and_h100(open_window, qtbot)
    ridge, label, _placement, _pixel = _epyc_ridge(canvas)
    assert label.toPlainText() == "ridge 32 FLOP/B"
    # a zoom on the EPYC's ridge (a decade each way): room for its whole text
    x, y = to_view(ridge.x), to_view(ridge.y)
    canvas.view_box.setRange(xRange=(x - 1.0, x + 1.0), yRange=(y - 1.0, y + 0.6), padding=0)
    canvas.relayout()
    _ridge, label, placement, _pixel = _epyc_ridge(canvas)
    assert label.isVisible() and placement is not None
    assert label.toPlainText() == "EPYC 9654 Genoa: ridge 32 FLOP/B"
    # and back (Ctrl+0): short again
    canvas.fit_to_data()
    canvas.relayout()
    QApplication.processEvents()
    assert _epyc_ridge(canvas)[1].toPlainText() == "ridge 32 FLOP/B"


def _drawn_leaders(canvas) -> set:
    """The leader lines drawn on the chart, as their ends in scene pixels (rounded)."""
    from workbench.ui.chart.items import Segment

    ax, bx, ay, by = canvas.view_to_scene()
    out = set()
    for item in canvas.plot_widget.scene().items():
        if isinstance(item, Segment) and item.isVisible() and item.zValue() == 18:
            xs, ys = item.getData()
            if xs is not None and len(xs) == 2:
                out.add(tuple(round(v) for v in (xs[0] * ax + bx, ys[0] * ay + by,
                                                  xs[1] * ax + bx, ys[1] * ay + by)))
    return out


def test_a_short_ridge_said_away_from_its_diamond_is_led_to_it(open_window, qtbot):
    """The TPU example at 1024 × 700: the H100's int8 ridge and the TPU's bf16 ridge are
    said short, away from their diamonds, each joined to its diamond by a leader line; the
    lines were placed but not drawn, the texts left floating by nothing."""
    from workbench.io.presets import examples_dir

    win = open_window(examples_dir() / "tpu_critical_batch.yaml", size=(1024, 700))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    placed = canvas.labels.text_layout.placed
    short = [(ridge, placed.get(("ridge", i))) for i, (ridge, label)
             in enumerate(canvas.roofs.ridges)
             if label.isVisible() and label.toPlainText() != ridge.label]
    led = [p for _ridge, p in short if p is not None and p.leader is not None]
    assert led, [label.toPlainText() for _r, label in canvas.roofs.ridges]
    drawn = _drawn_leaders(canvas)
    for placement in (p for p in placed.values() if p.leader is not None):
        assert tuple(round(v) for v in placement.leader) in drawn, (placement.key, drawn)
