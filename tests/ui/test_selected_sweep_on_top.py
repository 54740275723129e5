"""The selected operation's sweep is drawn over the others'. In the critical-batch example
the int8-weights sweep runs along the same memory roof as the bf16 one, a sample on each
of the bf16 one's from m = 2 on: the bf16 path was hidden under it even while selected
(its "m = 4096" pointed at an end marker no one could see). Selecting an operation draws
its paths and samples last; the chart looks as the user chose."""

from __future__ import annotations

import numpy as np
from conftest import EXAMPLES
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from workbench.ui.chart.axes import to_view

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


def _shared_sample(canvas):
    """A sample where the two operations' sweeps lie on one spot: its view coordinates,
    and the colour of each operation's path there."""
    paths = canvas.overlays.sweep_paths_drawn
    colours = {p.op_id: p.color for p, _curve in paths}
    assert len(colours) == 2
    spots: dict = {}
    for path, _curve in paths:
        for x, y in zip(path.xs, path.ys, strict=True):
            spots.setdefault((path.hw_id, round(float(x), 9), round(float(y), -6)), set()).add(
                path.op_id)
    shared = [k for k, ops in spots.items() if len(ops) == 2]
    assert shared  # (the int8 sweep's samples lie on the bf16 one's)
    _hw, x, y = max(shared, key=lambda k: k[2])  # (the highest: clear of the operations' names)
    return float(to_view(x)), float(to_view(y)), colours


def _colour_at(canvas, x: float, y: float) -> QColor:
    canvas.relayout()
    view = canvas.plot_widget
    at = view.mapFromScene(canvas.view_box.mapViewToScene(QPointF(x, y)))
    return view.grab().toImage().pixelColor(at)


def _nearest(colour: QColor, colours: dict) -> int:
    rgb = np.array(colour.getRgb()[:3], dtype=float)
    return min(colours, key=lambda op: np.abs(np.array(QColor(colours[op]).getRgb()[:3]) - rgb
                                              ).sum())


def test_the_selected_operations_sweep_is_drawn_over_the_others(open_window, qtbot):
    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    canvas = win.canvas
    x, y, colours = _shared_sample(canvas)
    for op_id in (*colours, *reversed(colours)):
        win.workspace.selection.select(op_id)
        qtbot.wait(10)
        assert _nearest(_colour_at(canvas, x, y), colours) == op_id
