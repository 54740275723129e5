"""What the user adds is shown: an operation or a machine whose points land outside the
view (zoomed in on part of the chart) grew only the "outside the view" note, and Ctrl+0
lost the zoom. The view now grows to take the new points in, keeping all it showed; edits
and undo move no view, and the view is no edit (nothing to undo)."""

from __future__ import annotations

import math

from workbench.io.presets import get_preset


def _inside(view, x, y) -> bool:
    (x0, x1), (y0, y1) = view
    return x0 < x < x1 and y0 < y < y1


def _contains(outer, inner) -> bool:
    (ox0, ox1), (oy0, oy1) = outer
    (ix0, ix1), (iy0, iy1) = inner
    tol = 1e-9
    return (ox0 <= ix0 * (1 + tol) and ix1 <= ox1 * (1 + tol)
            and oy0 <= iy0 * (1 + tol) and iy1 <= oy1 * (1 + tol))


def _zoomed_on_the_gemm(open_window, qtbot):
    """A new H100 session with its default GEMM (I = 1365 FLOP/B on the 989 TFLOP/s roof),
    zoomed in on a small region around it."""
    win = open_window(size=(1366, 768))
    assert win.new_session()
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    win.add_operation("gemm")
    ((_op, _hw, x, y),) = win.canvas.point_items()
    win.canvas.set_view_range((x / 3, x * 3), (y / 4, y * 2))
    qtbot.wait(1)
    return win, win.canvas.view_range()


def test_an_added_operation_outside_the_zoom_is_brought_into_view(open_window, qtbot):
    win, zoom = _zoomed_on_the_gemm(open_window, qtbot)
    canvas = win.canvas
    op = win.add_operation("elementwise")  # a few FLOPs per byte: far left and low
    (x, y), = [(x, y) for o, _hw, x, y in canvas.point_items() if o == op]
    assert not _inside(zoom, x, y)  # (outside the region zoomed in on)
    view = canvas.view_range()
    assert _inside(view, x, y), (view, x, y)
    assert _contains(view, zoom), (view, zoom)  # nothing the user looked at is lost
    assert not canvas.outside_hint.isVisible()
    # the view is no document edit: the last step to undo is the addition
    assert win.document.undo_text().startswith("Add ")
    view = canvas.view_range()
    # an edit that moves a point out of the view moves no view: the note counts it
    canvas.set_view_range(*zoom)
    zoom = canvas.view_range()
    gemm = next(o for o, _hw, _x, _y in canvas.point_items() if o != op)
    win.document.set_param(gemm, "m", 64)  # I ≈ 62 FLOP/B
    (x, y), = [(x, y) for o, _hw, x, y in canvas.point_items() if o == gemm]
    assert not _inside(zoom, x, y) and canvas.view_range() == zoom
    assert canvas.outside_hint.isVisibleTo(win)
    # undoing the edit and the addition, then redoing the addition, grows no view
    win.document.undo()
    win.document.undo()
    canvas.set_view_range(*zoom)
    zoom = canvas.view_range()
    win.document.redo()
    assert all(math.isclose(a, b, rel_tol=1e-9) for pair, pair0 in
               zip(canvas.view_range(), zoom, strict=True) for a, b in zip(pair, pair0, strict=True))


def test_an_added_machine_outside_the_zoom_is_brought_into_view(open_window, qtbot):
    win, zoom = _zoomed_on_the_gemm(open_window, qtbot)
    canvas = win.canvas
    hw = win.document.add_machine(get_preset("rtx-4090"), "rtx-4090")
    (x, y), = [(x, y) for _op, h, x, y in canvas.point_items() if h == hw]
    view = canvas.view_range()
    assert _inside(view, x, y) and _contains(view, zoom), (view, zoom, x, y)


def test_an_added_model_is_brought_into_view_and_its_new_layout_is_not(open_window, qtbot):
    from conftest import add_model_through_dialog

    win, zoom = _zoomed_on_the_gemm(open_window, qtbot)
    canvas = win.canvas
    gemm = {o for o, _hw, _x, _y in canvas.point_items()}
    model = add_model_through_dialog(qtbot, win)  # Edit ▸ Add Model…: Llama-3.1-8B
    view = canvas.view_range()
    theirs = [(x, y) for o, _hw, x, y in canvas.point_items() if o not in gemm]
    assert len(theirs) > 5 and not all(_inside(zoom, x, y) for x, y in theirs)
    assert all(_inside(view, x, y) for x, y in theirs) and _contains(view, zoom)
    # tensor parallelism lays its operations out afresh: an edit, the view stays
    canvas.set_view_range(*zoom)
    zoom = canvas.view_range()
    before = {o for o, _hw, _x, _y in canvas.point_items()}
    win.document.set_model(model.id, tp=2)
    assert {o for o, _hw, _x, _y in canvas.point_items()} != before  # (new operations)
    assert canvas.view_range() == zoom
