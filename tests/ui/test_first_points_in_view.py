"""A new session's first operation is drawn in the view: File ▸ New, add the H100, add a
GEMM (4096³ in bf16: I = 2·4096³ / (3·4096²·2 B) = 1365 FLOP/B, on the H100's 989 TFLOP/s
roof): its point was outside the empty chart's view (up to I = 1148), the note saying so."""

from __future__ import annotations

from workbench.io.presets import get_preset


def test_a_new_sessions_first_gemm_is_in_view(open_window, qtbot):
    win = open_window(size=(1366, 768))
    assert win.new_session()
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    win.add_operation("gemm")
    canvas = win.canvas
    ((op, _hw, x, y),) = canvas.point_items()
    assert abs(x - 2 * 4096**3 / (3 * 4096**2 * 2)) < 1e-6 and abs(y - 989.4e12) < 1e9
    (x0, x1), (y0, y1) = canvas.view_range()
    assert x0 < x < x1 and y0 < y < y1
    assert not canvas.outside_hint.isVisible()
    # a point of the user's own making that leaves the view later is counted, not chased
    win.document.set_param(op, "m", 4096 * 64)
    assert canvas.view_range() == ((x0, x1), (y0, y1))
