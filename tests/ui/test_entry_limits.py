"""The editor refuses at entry what a session file could not hold, with the reader's message
(one table of limits), so that a name typed in is never refused at the next open."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.conftest import open_editor
from workbench.io.sessions import load_session, save_session
from workbench.model.limits import TEXT_LIMITS

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"


def _editor(qtbot):
    document, _workspace, editor, op_id = open_editor(qtbot,
                                                      load_session(EXAMPLES / "llama_ffn.yaml"))
    return document, editor, op_id


def _paste(qtbot, edit, text: str) -> None:
    QApplication.clipboard().setText(text)
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def test_a_name_a_file_can_hold_is_applied_and_reopens(qtbot, tmp_path):
    document, editor, op_id = _editor(qtbot)
    name = "n" * TEXT_LIMITS["operation"]
    _paste(qtbot, editor.field("name"), name)
    assert document.operation(op_id).operation.name == name
    assert editor.hint_text() == ""
    save_session(document.session, tmp_path / "s.yaml")
    assert load_session(tmp_path / "s.yaml").operations[0].operation.name == name


def test_a_name_too_long_for_a_file_is_refused_in_the_editor(qtbot):
    document, editor, op_id = _editor(qtbot)
    before = document.operation(op_id).operation.name
    _paste(qtbot, editor.field("name"), "n" * (TEXT_LIMITS["operation"] + 1))
    assert "Name: is longer than 300 characters (301)" in editor.hint_text()
    assert document.operation(op_id).operation.name == before


def test_a_control_character_is_refused_in_the_editor(qtbot):
    document, editor, op_id = _editor(qtbot)
    before = document.operation(op_id).operation.name
    _paste(qtbot, editor.field("name"), "up\x1b[2J")
    assert "Name: holds the control character U+001B at position 3" in editor.hint_text()
    assert document.operation(op_id).operation.name == before


def test_the_machine_form_refuses_what_a_session_could_not_hold():
    from workbench.model.units import QuantityError
    from workbench.ui.editors.hardware_fields import parse_efficiency, parse_name, parse_positive

    with pytest.raises(QuantityError, match="out of range"):
        parse_positive("bandwidth")("1e-320")
    with pytest.raises(QuantityError, match="out of range"):
        parse_positive("flop_rate")("1e31")
    with pytest.raises(ValueError, match="out of range"):
        parse_efficiency("1e-29 %")
    with pytest.raises(ValueError, match="holds the control character U\\+001B"):
        parse_name("GPU\x1b[2J")
    with pytest.raises(ValueError, match="is longer than 120 characters"):
        parse_name("g" * 121)
    assert parse_efficiency("78 %") == pytest.approx(0.78)


def test_a_name_that_would_make_the_file_too_large_is_refused_in_the_editor(qtbot,
                                                                           monkeypatch):
    from workbench.model import limits

    document, editor, op_id = _editor(qtbot)
    old = document.operation(op_id).operation.name
    monkeypatch.setattr(limits, "MAX_SESSION_BYTES",
                        limits.session_totals(document.session).bytes + 50)
    _paste(qtbot, editor.field("name"), "n" * TEXT_LIMITS["operation"])
    assert document.operation(op_id).operation.name == old
    assert editor.hint_text().startswith("Name: the session file would take about")
    assert not document.modified


def test_notes_that_would_make_the_file_too_large_cannot_be_confirmed(qtbot, monkeypatch):
    from PySide6.QtWidgets import QDialogButtonBox

    from workbench.document import Document
    from workbench.model import limits
    from workbench.ui.dialogs.title_dialog import TitleDialog

    document = Document(load_session(EXAMPLES / "llama_ffn.yaml"))
    monkeypatch.setattr(limits, "MAX_SESSION_BYTES",
                        limits.session_totals(document.session).bytes + 1000)
    dialog = TitleDialog(document.session.title, document.session.notes,
                         budget=document.title_and_notes_problem)
    qtbot.addWidget(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.notes_edit.setPlainText("short notes")
    assert ok.isEnabled()
    dialog.notes_edit.setPlainText("long notes " * 200)
    assert not ok.isEnabled()
    assert dialog.problem.text().startswith("With them, the session file would take about")


def test_notes_written_in_lines_are_shown_in_those_lines(qtbot):
    """Edit ▸ Title and Notes… on an example: its notes are written in lines of up to 90
    characters; the box was narrower and wrapped each again, every other line a word or
    two. Each line is shown whole, on one line, where the screen has the room."""
    from workbench.ui.dialogs.title_dialog import TitleDialog

    notes = load_session(EXAMPLES / "llama_ffn.yaml").notes
    assert max(len(line) for line in notes.splitlines()) > 80
    dialog = TitleDialog("Llama FFN", notes)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.frameGeometry().width() <= dialog.screen().availableGeometry().width()
    document = dialog.notes_edit.document()
    block = document.begin()
    wrapped = []
    while block.isValid():
        if block.layout().lineCount() > 1:
            wrapped.append(block.text())
        block = block.next()
    assert wrapped == []
