"""The keyboard in the main window: Tab leaves every table, Ctrl+Z undoes the document's last
edit wherever the focus is, and typing a value that will be refused never applies a part of
it on the way."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from PySide6.QtCore import QEvent, QKeyCombination, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QTableView

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


@pytest.fixture
def window(open_window):
    win = open_window(LLAMA, (1366, 768))
    win.activateWindow()
    return win


def _inside(widget, container) -> bool:
    while widget is not None:
        if widget is container:
            return True
        widget = widget.parentWidget()
    return False


def _tab_out(qtbot, window, table: QTableView, presses: int = 40) -> bool:
    """Focus ``table`` on its first cell and press Tab up to ``presses`` times: whether the
    focus left it."""
    table.setFocus(Qt.FocusReason.TabFocusReason)
    if table.model() is not None and table.model().rowCount() > 0:
        table.setCurrentIndex(table.model().index(0, 0))
    assert window.focusWidget() is table
    for _ in range(presses):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        if not _inside(window.focusWidget(), table):
            return True
    return False


def test_tab_leaves_the_operations_table(qtbot, window):
    view = window.operations_panel.view
    assert _tab_out(qtbot, window, view)
    # and Shift+Tab comes back into it
    focused = window.focusWidget()
    qtbot.keyClick(focused, Qt.Key.Key_Backtab)
    assert window.focusWidget() is view


def test_tab_goes_round_the_whole_window(qtbot, window):
    """From the operations table, Tab visits the editor, the hardware, the results… and comes
    back: nothing on the way keeps the focus."""
    start = window.operations_panel.view
    start.setFocus(Qt.FocusReason.TabFocusReason)
    visited = set()
    for _ in range(200):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        if window.focusWidget() is start:
            break
        visited.add(window.focusWidget())
    assert window.focusWidget() is start
    assert window.editor.field("m") in visited
    assert window.results_table.view in visited


def test_tab_leaves_every_table_of_the_window(qtbot, window):
    """Results, Measurements, Compare, Model, Hardware: each table a user can focus gives the
    focus up to Tab."""
    assert window.measurements_panel is not None  # the panels built on first use
    assert window.compare_panel is not None
    for dock in (window.results_dock, window.measurements_dock, window.compare_dock,
                 window.model_dock, window.hardware_dock):
        dock.raise_()
    QApplication.processEvents()
    tables = [t for t in window.findChildren(QTableView)
              if t.focusPolicy() != Qt.FocusPolicy.NoFocus]
    names = {t.objectName() for t in tables}
    assert {"operationsView", "measurements_table", "modelResults"} <= names
    assert len(tables) >= 6
    trapped, tried = [], set()
    for table in tables:
        dock = next(d for d in (window.results_dock, window.measurements_dock,
                                window.compare_dock, window.model_dock, window.hardware_dock,
                                window.operations_dock, window.editor_dock)
                    if _inside(table, d))
        dock.raise_()
        QApplication.processEvents()
        if not table.isVisible():
            continue
        tried.add(table.objectName())
        if not _tab_out(qtbot, window, table):
            trapped.append(table.objectName())
    assert {"operationsView", "resultsView", "measurements_table", "modelResults",
            "machines_table", "pairs_table"} <= tried, tried
    assert trapped == [], ", ".join(trapped)


def _retype(qtbot, widget, text: str, finish: bool = True) -> None:
    """Select the field's text and type ``text`` over it as a user would (then Return)."""
    edit = widget.lineEdit() if hasattr(widget, "lineEdit") else widget
    widget.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, text)
    if finish:
        qtbot.keyClick(edit, Qt.Key.Key_Return)


def _m(window) -> int:
    op_id = window.editor.operation_id
    return window.document.operation(op_id).operation.params["m"]


def test_ctrl_z_in_a_focused_spin_box_undoes_the_documents_last_edit(qtbot, window):
    spin = window.editor.field("m")
    assert _m(window) == 8192 and spin.text() == "8192"
    _retype(qtbot, spin, "1024")
    assert _m(window) == 1024
    assert window.focusWidget() is spin  # the spin box keeps the focus
    qtbot.keyClick(spin, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert _m(window) == 8192
    assert spin.text() == "8192"
    QTest.keySequence(spin, QKeySequence(QKeySequence.StandardKey.Redo))  # the platform's
    assert _m(window) == 1024
    assert spin.text() == "1024"


def test_ctrl_z_in_the_name_field_undoes_the_rename(qtbot, window):
    name = window.editor.field("name")
    before = name.text()
    _retype(qtbot, name, "GEMM renamed")
    op_id = window.editor.operation_id
    assert window.document.operation(op_id).operation.name == "GEMM renamed"
    qtbot.keyClick(name, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.document.operation(op_id).operation.name == before
    assert name.text() == before


def test_typing_a_refused_value_leaves_the_value_as_it_was(qtbot, window):
    """Typing 1e30 into M = 8192 applied "1e3" on the way; refused at the end, M stayed
    1000. A refused value applies nothing: M is 8192, shown and on the chart."""
    spin = window.editor.field("m")
    undo_text = window.document.undo_text()
    points = sorted(window.canvas.point_items(), key=repr)
    _retype(qtbot, spin, "1e30", finish=False)
    assert "too large" in window.editor.hint_text()
    assert spin.text() == "1e30"  # shown and explained while typing
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert _m(window) == 8192
    assert spin.text() == "8192"
    assert "kept M = 8192" in window.editor.hint_text()
    assert sorted(window.canvas.point_items(), key=repr) == points
    # nothing to undo was left behind by the refused typing
    assert window.document.undo_text() == undo_text
    assert not window.isWindowModified()


def test_ordinary_typing_stays_live(qtbot, window):
    spin = window.editor.field("m")
    _retype(qtbot, spin, "4096", finish=False)
    assert _m(window) == 4096  # applied while typing, before Return
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert _m(window) == 4096
    qtbot.keyClick(spin, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert _m(window) == 8192  # one undo step for the typed number


def test_a_refused_value_keeps_the_last_value_typed_whole(qtbot, window):
    """Within one gesture, a value typed whole (not the start of the refused text) is kept."""
    spin = window.editor.field("m")
    _retype(qtbot, spin, "2048", finish=False)
    _retype(qtbot, spin, "-5", finish=False)
    assert "M" in window.editor.hint_text()
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert _m(window) == 2048
    assert spin.text() == "2048"


def test_ctrl_z_in_the_model_tabs_spin_box_undoes_the_models_edit(qtbot, gpu_window):
    """The Model tab's spin boxes too: Ctrl+Z undoes the document's last edit."""
    from PySide6.QtWidgets import QDialogButtonBox

    win = gpu_window
    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData("Llama-3.1-8B"))
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok),
                     Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    win.model_dock.raise_()
    spin = win.model_panel.editor.form.batch
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "8")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert win.document.session.models[0].setup.batch == 8
    qtbot.keyClick(spin, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert win.document.session.models[0].setup.batch == 1
    assert spin.value() == 1


class _X11LineEdit(QLineEdit):
    """A line edit that takes Ctrl+E for "end of line", as every line edit and spin box does
    under X11's key bindings (the offscreen platform's bindings leave it to the window)."""

    def event(self, event):
        if (event.type() == QEvent.Type.ShortcutOverride
                and event.keyCombination() == QKeyCombination(Qt.KeyboardModifier.ControlModifier,
                                                              Qt.Key.Key_E)):
            event.accept()
            return True
        return super().event(event)


def test_ctrl_e_exports_the_figure_from_a_field_that_would_take_it(qtbot, window, monkeypatch):
    """Under X11 the focused Name field took Ctrl+E (end of line) and File ▸ Export Figure…
    never opened: the window's command wins, in any of its fields."""
    opened = []
    monkeypatch.setattr(type(window), "on_export_figure", lambda self: opened.append(self))
    window.export_figure_action.triggered.disconnect()
    window.export_figure_action.triggered.connect(lambda: type(window).on_export_figure(window))
    field = _X11LineEdit("FFN up", window.editor)
    field.show()
    field.setFocus()
    qtbot.waitUntil(field.hasFocus)
    qtbot.keyClick(field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert opened == [window]
    # a field of another window keeps its key
    other = _X11LineEdit("elsewhere")
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    other.setFocus()
    qtbot.waitUntil(other.hasFocus)
    qtbot.keyClick(other, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert opened == [window]


def _tabbed_through(qtbot, first, container, presses: int = 60) -> list:
    """The widgets of ``container`` that Tab gives the focus to, from ``first`` on, until the
    focus leaves ``container`` or comes back to ``first``."""
    first.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(first.hasFocus)
    order = [first]
    for _ in range(presses):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        if focused is first or not _inside(focused, container):
            break
        order.append(focused)
    return order


def _out_of_order(fields, container) -> list[str]:
    """The fields reached just before one shown on a row above them: "A before B" for each
    such pair (a field beside the last, on its row, is in order)."""
    tops = [f.mapTo(container, f.rect().topLeft()).y() for f in fields]
    middles = [f.mapTo(container, f.rect().center()).y() for f in fields]
    return [f"{a.objectName()} (y={ya}) before {b.objectName()} (y={yb})"
            for a, b, ya, yb in zip(fields, fields[1:], tops, middles[1:], strict=False)
            if yb < ya]


def test_tab_walks_the_model_set_up_top_to_bottom(qtbot, gpu_window):
    """Add Model… and the Model tab: Tab from Tensor parallel went to Output tokens, three rows
    down, then back up to Expert parallel and Pipeline stages: it follows the form's rows."""
    from conftest import add_model_through_dialog

    win = gpu_window
    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    form = dialog.form
    fields = _tabbed_through(qtbot, form.phase, form)
    assert form.output_len in fields and form.view in fields
    assert _out_of_order(fields, form) == []
    dialog.reject()
    qtbot.waitUntil(lambda: not dialog.isVisible())
    add_model_through_dialog(qtbot, win)
    win.model_dock.raise_()
    win.activateWindow()
    form = win.model_panel.editor.form
    qtbot.waitUntil(form.phase.isVisible)
    fields = _tabbed_through(qtbot, form.phase, form)
    assert form.output_len in fields and form.view in fields
    assert _out_of_order(fields, form) == []


def test_tab_walks_the_machine_editor_top_to_bottom(qtbot, window):
    """Hardware: Tab from the machine's name went to the Add-a-ceiling row below the table,
    the fields under it and its sources, and only then up to the peaks and bandwidths."""
    panel = window.hardware_panel
    window.hardware_dock.raise_()
    qtbot.waitUntil(panel.name_edit.isVisible)
    fields = _tabbed_through(qtbot, panel.name_edit, panel, presses=120)
    peak = panel.value_edit("compute", "bf16")
    assert peak in fields and panel.add_kind_combo in fields
    assert fields.index(peak) < fields.index(panel.add_kind_combo)
    assert _out_of_order(fields, panel) == []


def test_ctrl_shift_z_redoes_as_ctrl_y_does(qtbot, window):
    """Ctrl+Shift+Z redoes on every platform: where the platform's Redo was Ctrl+Y alone, it
    did nothing."""
    doc = window.document
    op = doc.session.operations[0]
    doc.set_operation_field(op.id, "name", "renamed")
    window.operations_panel.view.setFocus()
    qtbot.waitUntil(window.operations_panel.view.hasFocus)
    focused = QApplication.focusWidget()
    qtbot.keyClick(focused, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert doc.session.operations[0].operation.name != "renamed"
    qtbot.keyClick(focused, Qt.Key.Key_Z,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert doc.session.operations[0].operation.name == "renamed"
    qtbot.keyClick(focused, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(focused, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert doc.session.operations[0].operation.name == "renamed"


def test_ctrl_q_quits_whatever_the_platform_s_key_bindings(qtbot, window):
    """Ctrl+Q closes the window (no changes to keep); where the platform has no Quit key
    (Windows' bindings) it did nothing."""
    window.operations_panel.view.setFocus()
    qtbot.waitUntil(window.operations_panel.view.hasFocus)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.isVisible())


def test_alt_up_in_the_machine_list_moves_the_machine_not_the_operation(qtbot, window):
    """The operations' Alt+Up holds across the window: in the machine list the same key
    moves the selected machine, and only it."""
    hardware = window.hardware_panel  # (built as the Hardware tab is first shown)
    machines = [e.id for e in window.document.session.hardware]
    operations = [e.id for e in window.document.session.operations]
    window.workspace.selection.select(operations[-1])
    hardware.select_machine(machines[-1])
    hardware.machine_list.setFocus()
    qtbot.waitUntil(hardware.machine_list.hasFocus)
    qtbot.keyClick(hardware.machine_list, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    assert [e.id for e in window.document.session.hardware] == (
        machines[:-2] + [machines[-1], machines[-2]])
    assert [e.id for e in window.document.session.operations] == operations
