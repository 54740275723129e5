"""A roof's value is said beside its own line as the line is drawn now: after a zoom, a pan
and an edit of the operations (which leaves the roofs where they are)."""

from __future__ import annotations

import numpy as np
from conftest import EXAMPLES

from workbench.ui.chart.axes import to_view
from workbench.ui.chart.text_requests import ROOF_REACH

LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def _gap(rect, xs, ys) -> float:
    """Pixels between a box and the segment from ``(xs[0], ys[0])`` to ``(xs[1], ys[1])``."""
    t = np.linspace(0.0, 1.0, 4001)
    x, y = xs[0] + (xs[1] - xs[0]) * t, ys[0] + (ys[1] - ys[0]) * t
    dx = np.maximum(np.maximum(rect[0] - x, x - rect[2]), 0.0)
    dy = np.maximum(np.maximum(rect[1] - y, y - rect[3]), 0.0)
    return float(np.hypot(dx, dy).min())


def _roof_values_by_their_lines(canvas) -> int:
    """How many roof values are said beside their lines (each one said with no leader is)."""
    ax, bx, ay, by = canvas.view_to_scene()
    placed = canvas.labels.text_layout.placed
    told = 0
    for i, (roof, _label) in enumerate(canvas.roofs.roof_texts):
        placement = placed.get(("roof", i))
        if placement is None or placement.leader is not None:
            continue
        xs = to_view(np.asarray(roof.xs, float)) * ax + bx
        ys = to_view(np.asarray(roof.ys, float)) * ay + by
        assert _gap(placement.rect, xs, ys) <= ROOF_REACH + 1.0, (roof.label, placement.rect)
        told += 1
    return told


def test_roof_values_stay_by_their_lines_through_zoom_pan_and_edit(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 740))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    assert _roof_values_by_their_lines(canvas)
    (x0, x1), (y0, y1) = canvas.view_box.viewRange()
    for xr, yr in (((x0 + 0.4, x1 - 0.3), (y0 + 0.3, y1 - 0.2)),  # a zoom in
                   ((x0 + 0.7, x1), (y0 + 0.5, y1 + 0.2))):  # a pan
        canvas.view_box.setRange(xRange=xr, yRange=yr, padding=0)
        canvas.relayout()
        assert _roof_values_by_their_lines(canvas)
    model = win.document.session.models[0]
    win.model_panel.show_model(model.id)
    win.model_panel.editor.form.batch.setValue(16)
    assert model.setup.batch == 16
    assert _roof_values_by_their_lines(canvas)
