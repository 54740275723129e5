"""The document's undo history is bounded: a long session of edits keeps the newest
:data:`UNDO_LIMIT` steps, and the saved state is known to be unreachable once its step is
gone."""

from __future__ import annotations

from workbench.document import Document, new_operation
from workbench.document.document import UNDO_LIMIT


def _document_with_two_gemms() -> tuple[Document, int, int]:
    document = Document()
    a = document.add_operation(new_operation("gemm", "a"))
    b = document.add_operation(new_operation("gemm", "b"))
    document.seal()
    document.mark_clean()
    return document, a, b


def test_undo_keeps_the_newest_steps_only():
    document, a, b = _document_with_two_gemms()
    extra = 7
    for i in range(UNDO_LIMIT + extra):  # alternating operations: no two edits merge
        document.set_param(a if i % 2 == 0 else b, "m", 10 + i)
        document.seal()
    steps = 0
    while document.can_undo():
        document.undo()
        steps += 1
    assert steps == UNDO_LIMIT
    # back to the state after the first `extra` edits, not to the start
    m = {e.id: e.operation.params["m"] for e in document.session.operations}
    assert m == {a: 10 + extra - 1, b: 10 + extra - 2}
    assert document.modified  # the saved state's step was dropped: it cannot come back


def test_a_short_history_still_returns_to_the_saved_state():
    document, a, _ = _document_with_two_gemms()
    for i in range(5):
        document.set_param(a, "m", 100 + i)
        document.seal()
    assert document.modified
    for _ in range(5):
        document.undo()
    assert not document.modified
