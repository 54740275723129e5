"""Typing that ends refused is taken back whole: :meth:`Document.abandon_param_edit` drops the
open step of that parameter's edit, leaving nothing to undo or redo."""

from __future__ import annotations

from workbench.document import Document, new_operation


def test_an_abandoned_edit_leaves_no_step_behind():
    """The open step goes, nothing to redo; a sealed step or another parameter's is left
    alone."""
    document = Document()
    a = document.add_operation(new_operation("gemm", "a"))
    b = document.add_operation(new_operation("gemm", "b"))
    document.seal()
    document.mark_clean()
    m = document.operation(a).operation.params.get("m")
    steps = document.undo_text()
    document.set_param(a, "m", 1)
    document.set_param(a, "m", 1000)
    assert not document.abandon_param_edit(a, "n")  # not that parameter's step
    assert not document.abandon_param_edit(b, "m")
    assert document.abandon_param_edit(a, "m")
    assert document.operation(a).operation.params.get("m") == m
    assert document.undo_text() == steps and not document.can_redo()
    assert not document.modified
    document.set_param(a, "m", 64)
    document.seal()
    assert not document.abandon_param_edit(a, "m")  # a finished edit stays
    assert document.operation(a).operation.params["m"] == 64
