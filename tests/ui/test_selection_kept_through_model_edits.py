"""Changing a model's tensor parallelism makes its operations anew (an all-reduce after the
attention and after the FFN): the part the user was editing stays selected, in the editor
and the operations list, instead of the session's first operation."""

from __future__ import annotations

from conftest import EXAMPLES

LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")
PART = "8B prefill: gate/up projection ×32"


def _selected_name(win) -> str:
    return win.document.operation(win.workspace.selection.current).operation.name


def test_the_selected_part_stays_selected_when_tp_changes(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    model = win.document.session.models[0]
    part = next(i for i in model.op_ids if win.document.operation(i).operation.name == PART)
    win.workspace.selection.select(part)
    win.model_panel.show_model(model.id)
    form = win.model_panel.editor.form
    before = len(model.op_ids)
    form.tp.setValue(2)  # as typed in the Model tab
    model = win.document.session.models[0]
    # a new layout: the two all-reduces of each layer and the lm_head's logits all-gather
    assert len(model.op_ids) == before + 3
    assert part not in model.op_ids
    assert _selected_name(win) == PART
    assert win.editor.field("name").text() == PART
    win.undo_action.trigger()
    assert win.document.session.models[0].setup.tp == 1
    assert _selected_name(win) == PART
    assert win.editor.field("name").text() == PART
