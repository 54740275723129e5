"""The sweep editor refuses, in place and with the total, a sweep that would take the
session's sweeps past the points a session holds."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from workbench.document import Document, new_operation
from workbench.model.limits import MAX_SWEEP_TOTAL
from workbench.model.sweeps import Range, Sweep
from workbench.ui.bridge import Workspace
from workbench.ui.editors.operation_editor import OperationEditor


def _type(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)


def test_a_sweep_past_the_sessions_total_is_refused_in_the_editor(qtbot):
    document = Document()
    other = document.add_operation(new_operation("gemm", "other"))
    document.set_sweep(other, Sweep("m", Range(1, 4096, MAX_SWEEP_TOTAL - 10)))
    mine = document.add_operation(new_operation("gemm", "mine"))
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    editor.resize(560, 1100)
    editor.show()
    workspace.selection.select(mine)
    section = editor.sweep_section
    section.enable_box.setChecked(True)
    section.param_combo.setCurrentIndex(section.param_combo.findData("m"))
    section.mode_combo.setCurrentIndex(section.mode_combo.findData("log"))
    for edit, text in ((section.start_edit, "1"), (section.stop_edit, "4096")):
        _type(qtbot, edit, text)
        qtbot.keyClick(edit, Qt.Key.Key_Return)
    _type(qtbot, section.num_edit, "10")  # 99,990 + 10: exactly the total
    assert document.operation(mine).sweep.points == 10
    section.num_edit.selectAll()  # pasted: one edit, no shorter number applied on the way
    QApplication.clipboard().setText("11")  # 99,990 + 11 = 100,001
    qtbot.keyClick(section.num_edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert "100,001 points in total; at most 100,000" in section.error()
    assert section.hint.isVisible() and "100,001 points" in section.hint.text()
    assert document.operation(mine).sweep.points == 10
