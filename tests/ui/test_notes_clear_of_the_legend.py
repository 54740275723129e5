"""The notes over the plot ("3 points outside the view — Ctrl+0 shows all") keep clear of
the legend: in the lower right corner, else the next corner the legend leaves free (the
note covered a row of the legend)."""

from __future__ import annotations

from conftest import EXAMPLES
from PySide6.QtCore import QPoint

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


def _in_canvas(canvas, scene_rect):
    plot = canvas.plot_widget
    return plot.mapFromScene(scene_rect).boundingRect().translated(plot.mapTo(canvas, QPoint()))


def test_the_outside_note_keeps_clear_of_the_legend(open_window, qtbot):
    win = open_window(LLAMA, size=(1366, 768))
    canvas = win.canvas
    legend = canvas.legend_item
    qtbot.waitUntil(lambda: not canvas.labels.scheduled)
    for corner in ("bottom-right", "bottom-left", "top-right"):
        legend.attach_corner(canvas.view_box, corner, 12)  # where the legend may lie
        (x0, x1), (y0, y1) = canvas.view_range()
        # zoomed in on the middle: points are left outside
        canvas.set_view_range((x0 * 8, x1 / 8), (y0 * 4, y1 / 4))
        qtbot.waitUntil(lambda: canvas.outside_hint.isVisible())
        canvas.session_view.place_hints()
        note = canvas.outside_hint.geometry()
        assert not note.intersects(_in_canvas(canvas, legend.sceneBoundingRect())), corner
        assert _in_canvas(canvas, canvas.view_box.sceneBoundingRect()).contains(note), corner
        canvas.fit_to_data()
