"""A name another operation or machine has is refused in the Name field, with the reason:
measured points and compared pairs name their operation and machine, and a session with two
of one name would be saved but not opened again."""

from __future__ import annotations

from conftest import HANG_GUARD_S
from PySide6.QtCore import Qt

from workbench.document import Document, new_operation
from workbench.io.presets import get_preset
from workbench.io.sessions import dumps_session, loads_session
from workbench.model.measured import Measurement
from workbench.ui.bridge import Workspace
from workbench.ui.editors.operation_editor import OperationEditor
from workbench.ui.panels.hardware_panel import HardwarePanel

from .test_hardware_panel import type_into


def test_operation_renamed_to_a_name_in_use_is_refused_in_the_name_field(qtbot):
    document = Document()
    document.add_operation(new_operation("gemm", "x"))
    y = document.add_operation(new_operation("gemm", "y"))
    document.set_measurements([Measurement(name="run", operation="x", time_s=1e-3)])
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    editor.show()
    workspace.selection.select(y)
    name = editor.field("name")
    name.setFocus()
    name.selectAll()
    qtbot.keyClicks(name, "x")
    assert "another operation is named 'x'" in editor.hint_text()
    assert name.property("invalid") is True
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert [e.operation.name for e in document.session.operations] == ["x", "y"]
    loads_session(dumps_session(document.session))  # still opens
    type_into(qtbot, name, "x2")
    assert editor.hint_text() == ""
    assert document.operation(y).operation.name == "x2"


def test_machine_renamed_to_a_name_in_use_is_refused_in_the_name_field(qtbot):
    document = Document()
    document.add_operation(new_operation("gemm", "x"))
    h100 = document.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
    a100 = document.add_machine(get_preset("a100-80gb"), preset="a100-80gb")
    taken = document.machine(h100).hardware.name
    document.set_measurements([Measurement(name="run", operation="x", hardware=taken,
                                           time_s=1e-3)])
    panel = HardwarePanel(Workspace(document))
    qtbot.addWidget(panel)
    panel.show()
    panel.machine_list.setCurrentItem(panel.item_for(a100))
    type_into(qtbot, panel.name_edit, taken)
    assert f"another machine is named {taken!r}" in panel.name_edit.problem
    assert f"another machine is named {taken!r}" in panel.hint_label.text()
    assert document.machine(a100).hardware.name == get_preset("a100-80gb").name
    assert loads_session(dumps_session(document.session)).measurements[0].hardware == taken


def test_a_name_in_use_typed_in_the_operations_table_is_refused_with_the_reason(qtbot):
    from PySide6.QtWidgets import QLineEdit

    from workbench.ui.panels.operations_panel import COL_NAME, OperationsPanel

    document = Document()
    document.add_operation(new_operation("gemm", "x"))
    y = document.add_operation(new_operation("gemm", "y"))
    panel = OperationsPanel(Workspace(document))
    qtbot.addWidget(panel)
    panel.resize(520, 400)
    panel.show()
    index = panel.view.model().index(1, COL_NAME)
    panel.view.setCurrentIndex(index)
    panel.view.edit(index)
    editor = panel.view.findChild(QLineEdit)
    editor.selectAll()
    qtbot.keyClicks(editor, "x")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits through a queued call
    qtbot.waitUntil(panel.notice.isVisible, timeout=HANG_GUARD_S * 1000)
    assert "another operation is named 'x'" in panel.notice.text()
    assert document.operation(y).operation.name == "y"


def test_copies_of_names_as_long_as_a_file_holds_are_named_within_it(qtbot, open_window,
                                                                      tmp_path):
    """An operation named with 300 characters, a machine with 120 and a model with 200 (the
    most a session file holds), each duplicated twice: the copies are named within the
    limit ("… (copy)", "… (copy) 2"), and the session saves and opens again."""
    from PySide6.QtWidgets import QMessageBox

    from workbench.io.model_configs import read_model_config
    from workbench.model.llm.architecture import Setup
    from workbench.model.llm.session import ModelEntry

    win = open_window()
    win.ask_save_changes = lambda: QMessageBox.Discard
    document = win.document
    op_name, machine_name, model_name = "o" * 300, "m" * 120, "l" * 200
    op_id = document.add_operation(new_operation("gemm", op_name))
    hw_id = document.add_machine(get_preset("h100-sxm").copy(name=machine_name))
    model = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1, kv_len=2048), name=model_name)
    win.add_model(model)
    operations = win.operations_panel
    for _ in range(2):
        operations.view.selectRow(operations.model.row_of(op_id))
        operations.duplicate_action.trigger()
        operations.view.selectRow(operations.model.header_row(model.id))
        operations.duplicate_action.trigger()
        win.hardware_panel.select_machine(hw_id)
        win.hardware_panel.duplicate_action.trigger()
    session = document.session
    copies = ([e.operation.name for e in session.operations if e.id != op_id
               and session.model_of(e.id) is None],
              [e.hardware.name for e in session.hardware if e.id != hw_id],
              [m.label for m in session.models if m is not model])
    # (an operation's copy is placed after it: the second copy first)
    assert copies == ([op_name[:291] + " (copy) 2", op_name[:293] + " (copy)"],
                      [machine_name[:113] + " (copy)", machine_name[:111] + " (copy) 2"],
                      [model_name[:193] + " (copy)", model_name[:191] + " (copy) 2"])
    path = tmp_path / "s.yaml"
    assert win.save_to(path)
    assert win.open_path(path)
    again = win.document.session
    assert ([e.operation.name for e in again.operations if again.model_of(e.id) is None],
            [e.hardware.name for e in again.hardware],
            [m.label for m in again.models]) == (
        [op_name, *copies[0]], [machine_name, *copies[1]], [model_name, *copies[2]])
