"""The notes over the plot ("3 points outside the view — Ctrl+0 shows all") keep clear of
the legend: in the lower right corner, else the next corner the legend leaves free (the
note covered a row of the legend)."""

from __future__ import annotations

from conftest import EXAMPLES, add_model_through_dialog
from PySide6.QtCore import QPoint, QRectF

from workbench.ui.chart.axes import to_view

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


def test_the_outside_note_hides_no_text_nor_marker(open_window, qtbot):
    """A new H100 session, a GEMM, an attention and Llama-3.1-8B decoding at batch 64 on
    two chips: the all-reduces fall below the view and the legend takes the lower right
    corner; the note went to the lower left, over the residual adds' marker and their tag
    ("A: 7, 13"). It lies where it covers none of the chart's texts and markers."""
    from workbench.io.presets import get_preset

    win = open_window(size=(1366, 768))
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    win.add_operation("gemm")
    win.add_operation("attention")
    model = add_model_through_dialog(qtbot, win)
    win.model_panel.show_model(model.id)
    form = win.model_panel.editor.form
    form.batch.setValue(64)
    form.tp.setValue(2)
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    assert canvas.outside_hint.isVisible()
    canvas.legend_item.attach_corner(canvas.view_box, "bottom-right", 12)  # where it lay
    canvas.session_view.place_hints()
    note = canvas.outside_hint.geometry()
    assert _in_canvas(canvas, canvas.view_box.sceneBoundingRect()).contains(note)
    covered = [text for _kind, text, (left, top, right, bottom) in canvas.text_items()
               if note.intersects(_in_canvas(canvas, QRectF(left, top, right - left,
                                                             bottom - top)))]
    assert covered == []
    ax, bx, ay, by = canvas.view_to_scene()
    half = canvas.theme.point_size / 2
    (x0, x1), (y0, y1) = canvas.view_range()
    for op_id, _hw, x, y in canvas.point_items():
        if x0 <= x <= x1 and y0 <= y <= y1:
            sx, sy = float(to_view(x)) * ax + bx, float(to_view(y)) * ay + by
            marker = _in_canvas(canvas, QRectF(sx - half, sy - half, 2 * half, 2 * half))
            assert not note.intersects(marker), win.document.operation(op_id).operation.name


def test_the_notes_map_what_they_must_not_hide_as_the_view_maps_it(open_window, qtbot):
    """The notes weigh each corner against every drawn text and marker at once (a profile's
    thousands of markers, at every placing); each box in canvas pixels is the one Qt's
    ``mapFromScene`` gives, and a corner hides the boxes ``QRect.intersects`` says it
    meets."""
    from PySide6.QtCore import QRect

    from workbench.ui.chart.session_view import _hidden

    win = open_window(LLAMA, size=(1366, 768))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled)
    (x0, x1), (y0, y1) = canvas.view_range()
    canvas.set_view_range((x0 * 3, x1 / 3), (y0 * 2, y1 / 2))  # panned off the integers
    qtbot.waitUntil(lambda: not canvas.labels.scheduled)
    view = canvas.session_view
    boxes = view._drawn_boxes()
    assert len(boxes) > 10
    to_canvas = canvas.plot_widget.mapTo(canvas, QPoint())
    got = view._in_canvas(boxes, to_canvas)
    qt = [_in_canvas(canvas, QRectF(left, top, right - left, bottom - top))
          for left, top, right, bottom in boxes.tolist()]
    assert got.tolist() == [[r.left(), r.top(), r.right(), r.bottom()] for r in qt]
    for probe in (QRect(300, 200, 180, 40), QRect(got[0, 2], got[0, 3], 5, 5),
                  QRect(got[0, 2] + 1, got[0, 3] + 1, 5, 5)):
        assert _hidden(got, [probe]) == sum(probe.intersects(r) for r in qt)
