"""A whole model beside a session's own operations takes colours none of them has, and no
operation is drawn black like the first machine's roofs (a model's norms were black, like
the H100's lines, and its kinds reused the colours of the operations beside it)."""

from __future__ import annotations

from conftest import add_model_through_dialog

from workbench.io.presets import get_preset

KINDS = ("gemm", "attention", "elementwise", "softmax", "norm", "reduction")


def test_a_models_kinds_take_colours_of_their_own(open_window, qtbot):
    win = open_window(size=(1366, 768))
    assert win.new_session()
    for preset in ("h100-sxm", "apple-m4-max"):
        win.document.add_machine(get_preset(preset), preset)
    own = [win.add_operation(kind) for kind in KINDS]
    model = add_model_through_dialog(qtbot, win)
    drawn = win.canvas.point_colors()  # as drawn: (op, machine) → colour
    mine = {drawn[key].upper() for key in drawn if key[0] in own}
    theirs = {drawn[key].upper() for key in drawn if key[0] in model.op_ids}
    assert len(mine) == len(KINDS)
    kinds = {win.document.operation(key[0]).operation.kind for key in drawn
             if key[0] in model.op_ids}
    assert len(theirs) == len(kinds) >= 3  # one per kind of the model's operations drawn
    assert not mine & theirs
    roofs = {win.canvas.theme.roof_color(0).upper(), "#000000"}
    assert not (mine | theirs) & roofs
