"""View ▸ All Memory Roofs names every memory roof it draws, and keeps the main memories'
names: a CPU's L1, L2 and L3 lines close together were left unnamed, and the GPUs' HBM
lines lost theirs. A value with no room along its line is said beside it with a leader."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.io.presets import DEFAULT_EXAMPLE, examples_dir, get_preset
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.text_requests import ROOF_REACH

EXAMPLES_DIR = examples_dir()

#: a one-socket server CPU with its caches (bandwidths in B/s)
LEVELS = {"ddr5": 460.8e9, "l3": 1.6e12, "l2": 4.8e12, "l1": 9.6e12}


def test_every_memory_roof_is_named_with_all_memory_roofs(open_window, qtbot):
    win = open_window(size=(1366, 768))
    assert win.new_session()
    for preset in ("h100-sxm", "a100-80gb"):
        win.document.add_machine(get_preset(preset), preset)
    win.document.add_machine(get_preset("epyc-9654").copy(memory=LEVELS), None)
    win.add_operation("gemm")
    canvas = win.canvas
    canvas.relayout()
    main = set(canvas.roof_labels())
    assert {"hbm 3.35 TB/s", "hbm 2.04 TB/s", "ddr5 461 GB/s"} <= main

    win.view_actions["all_levels"].trigger()
    canvas.relayout()
    drawn = [(hw, name) for hw, kind, name, _xs, _ys in canvas.roof_items() if kind == "memory"]
    assert len(drawn) == 3 + 3 + 4  # hbm, l2 and l1 of each GPU, the CPU's four
    named = canvas.roof_labels()
    # each line's name and bandwidth, as the machine gives it (9.8 and 5.4 TB/s: the GPUs'
    # L2s in their presets; 32.9 and 19.1 TB/s their L1s)
    for text in ("hbm 3.35 TB/s", "l2 9.8 TB/s", "l1 32.9 TB/s", "hbm 2.04 TB/s",
                 "l2 5.4 TB/s", "l1 19.1 TB/s",
                 "ddr5 461 GB/s", "l3 1.6 TB/s", "l2 4.8 TB/s", "l1 9.6 TB/s"):
        assert text in named, (text, named)


def _gap_to(segment, x: float, y: float) -> float:
    """Pixels from ``(x, y)`` to the segment ``(x0, y0, x1, y1)``."""
    x0, y0, x1, y1 = segment
    t = np.linspace(0.0, 1.0, 4001)
    return float(np.hypot(x0 + (x1 - x0) * t - x, y0 + (y1 - y0) * t - y).min())


def _box_gap(rect, segment) -> float:
    """Pixels between the box ``rect`` and the segment ``(x0, y0, x1, y1)``."""
    x0, y0, x1, y1 = segment
    t = np.linspace(0.0, 1.0, 4001)
    x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
    dx = np.maximum(np.maximum(rect[0] - x, x - rect[2]), 0.0)
    dy = np.maximum(np.maximum(rect[1] - y, y - rect[3]), 0.0)
    return float(np.hypot(dx, dy).min())


@pytest.mark.parametrize("size", [(1366, 768), (1024, 700)])
def test_each_memory_roof_of_the_example_is_named_by_its_own_line(open_window, size):
    """The example the app opens on, with View ▸ All Memory Roofs: the A100's L1 line (19.1
    TB/s), between the H100's L1 and L2 lines, was left unnamed at 1024 × 700, every way
    to its value from the middle of its line closed by the other values' leaders."""
    win = open_window(EXAMPLES_DIR / DEFAULT_EXAMPLE, size=size)
    canvas = win.canvas
    win.view_actions["all_levels"].trigger()
    canvas.relayout()
    ax, bx, ay, by = canvas.view_to_scene()
    placed = canvas.labels.text_layout.placed
    texts = {text: rect for kind, text, rect in canvas.text_items() if kind == "roof"}
    sloped = [(i, roof) for i, (roof, _label) in enumerate(canvas.roofs.roof_texts)
              if roof.kind == "memory"]
    assert len(sloped) == 3 + 3 + 1  # hbm, l2 and l1 of the H100 and the A100; the TPU's hbm

    def line_of(roof):
        xs = to_view(np.asarray(roof.xs, float)) * ax + bx
        ys = to_view(np.asarray(roof.ys, float)) * ay + by
        return xs[0], ys[0], xs[1], ys[1]

    for i, roof in sloped:
        assert roof.label in texts, (roof.label, sorted(texts))
        line = line_of(roof)
        leader = placed[("roof", i)].leader
        if leader is None:  # beside its line
            assert _box_gap(texts[roof.label], line) <= ROOF_REACH + 1.0, roof.label
            continue
        # its leader runs from its own line (the nearest to where it starts) to the text
        assert _gap_to(line, leader[0], leader[1]) <= 4.0, roof.label
        others = [_gap_to(line_of(other), leader[0], leader[1])
                  for other, _label in canvas.roofs.roof_texts if other is not roof]
        assert min(others) > 2 * _gap_to(line, leader[0], leader[1]), roof.label
        assert _box_gap(texts[roof.label], leader[2:] * 2) <= 4.0, roof.label



def test_a_roof_line_under_the_pointer_says_its_machine_and_value(open_window, qtbot):
    """The example the app opens on, with View ▸ All Memory Roofs, at 1366 × 768: the
    H100's and the A100's bf16 roofs found no room for their values, and the window's key
    lists operations only, so those lines were named nowhere. A roof line under the pointer
    says its machine and its value, in the plot's words; a place off every line says none."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QToolTip

    win = open_window(EXAMPLES_DIR / DEFAULT_EXAMPLE, size=(1366, 768))
    canvas = win.canvas
    win.view_actions["all_levels"].trigger()
    canvas.relayout()
    h100 = next(e.id for e in win.document.session.hardware
                if e.hardware.label == "NVIDIA H100 SXM5 80GB")

    def pixel(x: float, y: float) -> np.ndarray:
        p = canvas.pixel_of(x, y)
        return np.asarray((p.x(), p.y()), float)

    def segment(xs, ys) -> tuple:
        return (*pixel(xs[0], ys[0]), *pixel(xs[1], ys[1]))

    roofs = {(hw, kind, name): segment(xs, ys)
             for hw, kind, name, xs, ys in canvas.roof_items()}
    bf16 = roofs[(h100, "compute", "bf16")]
    marks = np.asarray([pixel(x, y) for _op, _hw, x, y in canvas.point_items()])

    def gap_to_marks(p) -> float:
        return float(np.hypot(*(marks - p).T).min())

    def gap_to_roofs(p, but=None) -> float:
        return min(_gap_to(line, *p) for line in roofs.values() if line != but)

    # the place on that roof, in view, farthest from every point and every other line
    (x0, x1), (y0, y1) = canvas.view_range()
    start, peak = next((xs[0], ys[0]) for hw, kind, name, xs, ys in canvas.roof_items()
                       if (hw, kind, name) == (h100, "compute", "bf16"))
    on_roof = max((pixel(x, peak) for x in np.geomspace(max(x0, start), x1, 60)[2:-2]),
                  key=lambda p: min(gap_to_marks(p), gap_to_roofs(p, but=bf16)))
    assert min(gap_to_marks(on_roof), gap_to_roofs(on_roof, but=bf16)) > 8
    viewport = canvas.plot_widget.viewport()
    qtbot.mouseMove(viewport, QPoint(2, 2))
    qtbot.wait(40)  # (pyqtgraph drops moves closer than a frame apart)
    qtbot.mouseMove(viewport, QPoint(round(on_roof[0]), round(on_roof[1]) + 2))
    said = "NVIDIA H100 SXM5 80GB — bf16 989 TFLOP/s"
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == said)
    assert canvas.hover_text() == said

    # a place in view far from every line and every point: no roof named
    off = max((pixel(x, y) for x in np.geomspace(x0, x1, 30)[1:-1]
               for y in np.geomspace(y0, y1, 20)[1:-1]),
              key=lambda p: min(gap_to_roofs(p), gap_to_marks(p)))
    assert min(gap_to_roofs(off), gap_to_marks(off)) > 20
    qtbot.wait(40)
    qtbot.mouseMove(viewport, QPoint(round(off[0]), round(off[1])))
    qtbot.waitUntil(lambda: not QToolTip.isVisible())
    assert canvas.hover_text() == ""
