"""A whole model's batch edit, its names told by the legend's key, repaints what changed: the
chart's points, texts and lines, not its axes and titles. What it leaves on screen is what a
full repaint draws: nothing around the plot, and the legend (kept as it was) pixel for
pixel."""

from __future__ import annotations

from conftest import (
    keystroke_done,
    open_model_window,
    paint_regions,
    painted_canvas,
    stale_pixels,
)
from PySide6.QtCore import QPoint, QRect

from workbench.model.llm.architecture import Setup


def test_a_batch_edit_that_keeps_the_key_repaints_what_changed_and_leaves_nothing(
        open_window, qtbot):
    win, model = open_model_window(open_window, ("h100-sxm", "a100-80gb", "tpu-v5e"),
                                   "Llama-3.1-405B", Setup("decode", 1, 2048, 2048))
    keystroke_done()
    canvas = win.canvas
    assert canvas.key.rows  # (names told by tags and the legend's key)
    painted_canvas(win)
    viewport = canvas.plot_widget.viewport()
    painted = paint_regions(viewport)
    layouts = canvas.legend.item.layouts
    for batch in (8, 9, 10, 64):
        win.document.set_model(model.id, batch=batch)
        keystroke_done()
    seen = list(painted)
    assert canvas.legend.item.layouts == layouts  # (the key kept, the legend as it was)
    # each edit repainted part of the chart: its axes' numbers and titles not again
    assert len(seen) >= 4
    whole = viewport.rect()
    for region in seen:
        assert region.boundingRect() != whole
        assert not region.contains(QRect(0, whole.height() - 20, 60, 20))  # (an axis corner)
    shown, full, area = painted_canvas(win)
    assert stale_pixels(shown, full, area) == 0
    # the legend (beside the plot at this size) as a full repaint draws it, pixel for pixel
    plot = canvas.plot_widget
    legend = plot.mapFromScene(canvas.legend.item.sceneBoundingRect()).boundingRect()
    legend = legend.translated(plot.mapTo(canvas, QPoint(0, 0)))
    assert legend.height() > 100  # (the key's rows)
    shown = shown.convertToFormat(full.format())
    assert shown.copy(legend) == full.copy(legend)
