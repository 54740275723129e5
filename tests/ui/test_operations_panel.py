"""The operations panel, driven through its real widgets and actions."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import HANG_GUARD_S, double_click
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QColor, QKeySequence
from PySide6.QtWidgets import QColorDialog, QLineEdit

from workbench.document import Document
from workbench.io.sessions import load_session, loads_session
from workbench.model.operations import KINDS, Operation
from workbench.model.units import format_number
from workbench.ui.bridge import Workspace
from workbench.ui.panels.operations_panel import (
    COL_BOUND,
    COL_COLOR,
    COL_INTENSITY,
    COL_KIND,
    COL_NAME,
    COL_VISIBLE,
    COLUMNS,
    OperationsPanel,
)
from workbench.ui.panels.results_table import BOUND_COLORS

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"


def make_workspace(example: str = "llama_ffn.yaml") -> Workspace:
    workspace = Workspace(Document())
    workspace.document.replace_session(load_session(EXAMPLES / example))
    return workspace


@pytest.fixture
def workspace() -> Workspace:
    return make_workspace()


@pytest.fixture
def panel(qtbot, workspace) -> OperationsPanel:
    widget = OperationsPanel(workspace)
    qtbot.addWidget(widget)
    widget.resize(520, 400)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def ids(workspace: Workspace) -> list[int]:
    return [e.id for e in workspace.document.session.operations]


def cell(panel: OperationsPanel, row: int, col: int, role=Qt.ItemDataRole.DisplayRole):
    model = panel.view.model()
    return model.data(model.index(row, col), role)


def rows_shown(panel: OperationsPanel) -> list[int]:
    return [panel.view.model().data(panel.view.model().index(r, 0), Qt.ItemDataRole.UserRole + 1)
            for r in range(panel.view.model().rowCount())]


def test_rows_follow_the_session(panel, workspace):
    assert panel.view.model().rowCount() == 4
    assert rows_shown(panel) == ids(workspace)
    names = [cell(panel, r, COL_NAME) for r in range(4)]
    assert names == [e.operation.name for e in workspace.document.session.operations]
    assert {cell(panel, r, COL_KIND) for r in range(4)} == {KINDS["gemm"].label}
    assert cell(panel, 0, COL_BOUND) == "compute"
    assert cell(panel, 2, COL_BOUND) == "memory"
    assert cell(panel, 0, COL_VISIBLE, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Checked
    assert cell(panel, 0, COL_COLOR, Qt.ItemDataRole.DecorationRole) is not None


def test_add_every_kind_through_the_add_menu(panel, workspace):
    document = workspace.document
    menu_actions = [a for a in panel.add_button.menu().actions() if not a.isSeparator()]
    assert [a.text().replace("&", "") for a in menu_actions] == [k.label for k in KINDS.values()]
    assert len(menu_actions) == len(KINDS) >= 7
    panel.select([ids(workspace)[0]], ids(workspace)[0])
    for action in menu_actions:
        kind = action.data()
        before = ids(workspace)
        previous_row = panel.view.currentIndex().row()
        action.trigger()
        new_id = workspace.selection.current
        assert new_id not in before
        assert document.operation(new_id).operation.kind == kind
        row = panel.model.row_of(new_id)
        assert row == previous_row + 1  # after the selected operation
        assert cell(panel, row, COL_KIND) == KINDS[kind].label
        assert panel.selected_ids() == [new_id]
        assert panel.view.currentIndex().row() == row
        assert rows_shown(panel) == ids(workspace)
    assert panel.view.model().rowCount() == 4 + len(KINDS)


def test_added_names_are_unique(panel, workspace):
    panel.add_actions["gemm"].trigger()
    panel.add_actions["gemm"].trigger()
    names = [e.operation.name for e in workspace.document.session.operations]
    assert "GEMM" in names and "GEMM 2" in names


def test_duplicate(panel, workspace):
    source = ids(workspace)[1]
    workspace.selection.select(source)
    panel.duplicate_action.trigger()
    new_id = workspace.selection.current
    assert new_id != source
    assert ids(workspace)[2] == new_id
    entry = workspace.document.operation(new_id)
    assert entry.operation.name.endswith("(copy)")
    assert entry.operation.params == workspace.document.operation(source).operation.params
    assert panel.selected_ids() == [new_id]
    assert cell(panel, 2, COL_NAME) == entry.operation.name


def test_delete_and_undo_restores_the_row_in_place(panel, workspace):
    document = workspace.document
    before = ids(workspace)
    victim = before[1]
    workspace.selection.select(victim)
    assert panel.delete_action.isEnabled()
    panel.delete_action.trigger()
    assert victim not in ids(workspace)
    assert panel.view.model().rowCount() == 3
    assert rows_shown(panel) == ids(workspace)
    # the row that took its place is selected
    assert workspace.selection.current == before[2]
    assert panel.selected_ids() == [before[2]]
    document.undo()
    assert ids(workspace) == before
    assert rows_shown(panel) == before
    assert panel.model.row_of(victim) == 1


def test_delete_several(panel, workspace):
    before = ids(workspace)
    panel.select([before[0], before[2]], before[2])
    panel.delete_action.trigger()
    assert ids(workspace) == [before[1], before[3]]
    assert rows_shown(panel) == ids(workspace)
    workspace.document.undo()
    assert ids(workspace) == before


def test_delete_everything_clears_the_selection(panel, workspace):
    panel.select(ids(workspace), ids(workspace)[0])
    panel.delete_action.trigger()
    assert panel.view.model().rowCount() == 0
    assert workspace.selection.current is None
    assert not panel.delete_action.isEnabled()
    assert not panel.duplicate_action.isEnabled()


def test_rename_through_the_model(panel, workspace):
    op_id = ids(workspace)[0]
    model = panel.view.model()
    assert model.setData(model.index(0, COL_NAME), "Prefill GEMM", Qt.ItemDataRole.EditRole)
    assert workspace.document.operation(op_id).operation.name == "Prefill GEMM"
    assert cell(panel, 0, COL_NAME) == "Prefill GEMM"
    # blank names are refused
    assert not model.setData(model.index(0, COL_NAME), "   ", Qt.ItemDataRole.EditRole)
    assert workspace.document.operation(op_id).operation.name == "Prefill GEMM"


def test_rename_by_typing(qtbot, panel, workspace):
    op_id = ids(workspace)[2]
    index = panel.view.model().index(2, COL_NAME)
    panel.view.setCurrentIndex(index)
    panel.view.edit(index)
    editor = panel.view.findChild(QLineEdit)
    assert editor is not None
    editor.selectAll()
    qtbot.keyClicks(editor, "decode, typed")
    # Delete while editing edits the text; it must not delete the operation
    qtbot.keyClick(editor, Qt.Key.Key_End)
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    qtbot.keyClick(editor, Qt.Key.Key_Home)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the delegate commits through a queued call
    qtbot.waitUntil(lambda: workspace.document.operation(op_id).operation.name != "FFN up, "
                    "decode GEMV", timeout=HANG_GUARD_S * 1000)
    assert op_id in ids(workspace)
    assert workspace.document.operation(op_id).operation.name == "ecode, type"


def test_visibility_checkbox(panel, workspace):
    op_id = ids(workspace)[1]
    model = panel.view.model()
    index = model.index(1, COL_VISIBLE)
    assert model.flags(index) & Qt.ItemFlag.ItemIsUserCheckable
    name = workspace.document.operation(op_id).operation.name
    model.setData(index, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert workspace.document.operation(op_id).visible is False
    assert cell(panel, 1, COL_VISIBLE, Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.Unchecked
    assert workspace.document.undo_text() == f"Hide {name}"  # (Edit says which it undoes)
    model.setData(index, Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    assert workspace.document.operation(op_id).visible is True
    assert workspace.document.undo_text() == f"Show {name}"
    workspace.document.undo()
    assert workspace.document.operation(op_id).visible is False
    workspace.document.undo()
    assert workspace.document.operation(op_id).visible is True
    assert not workspace.document.can_undo()


def test_visibility_checkbox_by_mouse(qtbot, panel, workspace):
    op_id = ids(workspace)[0]
    rect = panel.view.visualRect(panel.view.model().index(0, COL_VISIBLE))
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert workspace.document.operation(op_id).visible is False


def test_move_up_and_down(panel, workspace):
    before = ids(workspace)
    workspace.selection.select(before[2])
    panel.move_up_action.trigger()
    assert ids(workspace) == [before[0], before[2], before[1], before[3]]
    assert rows_shown(panel) == ids(workspace)
    assert panel.selected_ids() == [before[2]]
    panel.move_up_action.trigger()
    assert ids(workspace)[0] == before[2]
    assert not panel.move_up_action.isEnabled()
    assert panel.move_down_action.isEnabled()
    for _ in range(3):
        panel.move_down_action.trigger()
    assert ids(workspace)[-1] == before[2]
    assert not panel.move_down_action.isEnabled()
    assert workspace.selection.current == before[2]


def test_action_shortcuts():
    workspace = make_workspace()
    panel = OperationsPanel(workspace)
    try:
        assert panel.duplicate_action.shortcut() == QKeySequence("Ctrl+D")
        assert panel.delete_action.shortcut() == QKeySequence(QKeySequence.StandardKey.Delete)
        assert (panel.delete_action.shortcutContext()
                == Qt.ShortcutContext.WidgetWithChildrenShortcut)
        assert panel.move_up_action.shortcut() == QKeySequence("Alt+Up")
        assert panel.move_down_action.shortcut() == QKeySequence("Alt+Down")
        assert set(panel.add_actions) == set(KINDS)
    finally:
        panel.deleteLater()


def test_selecting_a_row_selects_the_operation(qtbot, panel, workspace):
    op_id = ids(workspace)[3]
    rect = panel.view.visualRect(panel.view.model().index(3, COL_KIND))
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert workspace.selection.current == op_id
    panel.view.selectionModel().setCurrentIndex(
        panel.view.model().index(1, COL_NAME),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
    assert workspace.selection.current == ids(workspace)[1]


def test_selection_from_elsewhere_selects_the_row_without_echo(qtbot, panel, workspace):
    emitted = []
    workspace.selection.changed.connect(emitted.append)
    op_id = ids(workspace)[2]
    workspace.selection.select(op_id)
    assert emitted == [op_id]  # the panel did not echo a selection back
    assert panel.selected_ids() == [op_id]
    assert panel.view.currentIndex().row() == 2
    workspace.selection.select(None)
    assert panel.selected_ids() == []


def test_selection_scrolls_into_view(qtbot, workspace):
    document = workspace.document
    with document.batch():
        for i in range(200):
            document.add_operation(Operation("gemm", {"m": i + 1}, f"op {i}"))
    panel = OperationsPanel(workspace)
    qtbot.addWidget(panel)
    panel.resize(500, 300)
    panel.show()
    qtbot.waitExposed(panel)
    last = ids(workspace)[-1]
    workspace.selection.select(last)
    rect = panel.view.visualRect(panel.view.model().index(panel.model.row_of(last), 0))
    assert panel.view.viewport().rect().contains(rect.center())


def test_intensity_of_a_known_gemm(panel, workspace):
    op_id = workspace.document.add_operation(
        Operation("gemm", {"m": 1024, "n": 1024, "k": 1024, "dtype": "fp16"}, "1024³ fp16"))
    row = panel.model.row_of(op_id)
    flops = 2 * 1024**3
    nbytes = (1024 * 1024 * 3) * 2
    assert flops / nbytes == pytest.approx(341.33, abs=0.01)
    assert cell(panel, row, COL_INTENSITY) == format_number(flops / nbytes) == "341"
    tip = cell(panel, row, COL_INTENSITY, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("FLOPs / bytes = ") and "341" in tip
    alignment = Qt.AlignmentFlag(cell(panel, row, COL_INTENSITY,
                                      Qt.ItemDataRole.TextAlignmentRole))
    assert alignment & Qt.AlignmentFlag.AlignRight


def test_bound_follows_the_first_visible_machine(panel, workspace):
    document = workspace.document
    machines = document.session.hardware
    tip = cell(panel, 1, COL_BOUND, Qt.ItemDataRole.ToolTipRole)
    assert machines[0].hardware.label in tip
    assert isinstance(cell(panel, 1, COL_BOUND, Qt.ItemDataRole.ForegroundRole), QColor)
    document.set_machine_visible(machines[0].id, False)
    tip = cell(panel, 1, COL_BOUND, Qt.ItemDataRole.ToolTipRole)
    assert machines[1].hardware.label in tip
    for machine in machines:
        document.set_machine_visible(machine.id, False)
    assert cell(panel, 1, COL_BOUND) is None
    assert cell(panel, 1, COL_INTENSITY) == "120"  # intensity needs no machine


def test_an_edit_repaints_one_row_not_the_model(qtbot, panel, workspace):
    model = panel.view.model()
    resets, changed = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.dataChanged.connect(lambda a, b, roles=(): changed.append((a.row(), b.row())))
    op_id = ids(workspace)[0]
    workspace.document.set_param(op_id, "m", 1)
    assert resets == []
    assert changed == [(0, 0)]
    assert cell(panel, 0, COL_BOUND) == "memory"


def test_an_edit_repaints_only_the_cells_whose_text_changed(qtbot, panel, workspace):
    """Intensity and bound texts are kept per operation until a change: a parameter edit
    announces the intensity or bound cell only when its text changes, and shows the new
    text; a machine edit or a rename announces as before."""
    model = panel.model
    document = workspace.document
    op_id = ids(workspace)[0]
    cells = []
    model.dataChanged.connect(lambda a, b, roles=(): cells.append(
        (a.row(), a.column(), b.row(), b.column())))
    before = cell(panel, 0, COL_INTENSITY)
    document.set_param(op_id, "m", 1)
    assert cells == [(0, COL_INTENSITY, 0, COL_BOUND)]  # intensity and bound both changed
    counts = workspace.results.counts(op_id)
    assert cell(panel, 0, COL_INTENSITY) == format_number(counts.flops / counts.bytes)
    assert cell(panel, 0, COL_INTENSITY) != before
    assert cell(panel, 0, COL_BOUND) == "memory"
    assert cell(panel, 0, COL_BOUND, Qt.ItemDataRole.ForegroundRole) == QColor(
        BOUND_COLORS["memory"])
    cells.clear()
    document.set_param(op_id, "m", 2)  # a new intensity, still memory-bound
    assert cells == [(0, COL_INTENSITY, 0, COL_INTENSITY)]
    counts = workspace.results.counts(op_id)
    assert cell(panel, 0, COL_INTENSITY) == format_number(counts.flops / counts.bytes)
    cells.clear()
    document.set_operation_field(op_id, "label", "a label")  # nothing shown changes
    assert cells == []
    document.set_operation_field(op_id, "name", "renamed")
    assert cells == [(0, 0, 0, len(COLUMNS) - 1)]
    cells.clear()
    document.undo()
    document.undo()
    document.undo()  # back to m = 1
    counts = workspace.results.counts(op_id)
    assert cell(panel, 0, COL_INTENSITY) == format_number(counts.flops / counts.bytes)
    # a machine edit changes the bound: the cached texts are dropped
    machine = document.session.hardware[0]
    slower = machine.hardware.copy()
    slower.memory = {k: v / 1e6 for k, v in slower.memory.items()}
    document.set_machine(machine.id, slower)
    pair = workspace.results.pair(op_id, machine.id).result
    bounds = [workspace.results.pair(op_id, h.id).result.bound
              for h in document.session.hardware]  # one per machine where they differ
    assert bounds[0] == pair.bound and len(set(bounds)) > 1
    assert cell(panel, 0, COL_BOUND) == "mixed"


def test_structural_change_keeps_the_selection(panel, workspace):
    keep = ids(workspace)[3]
    workspace.selection.select(keep)
    workspace.document.move_operation(ids(workspace)[0], 2)
    assert panel.selected_ids() == [keep]
    assert workspace.selection.current == keep


def test_new_session_resets(panel, workspace):
    workspace.document.replace_session(load_session(EXAMPLES / "fusion.yaml"))
    assert rows_shown(panel) == ids(workspace)


def test_double_click_colour_opens_a_colour_dialog(qtbot, panel, workspace, monkeypatch):
    asked = []

    def fake_get_color(initial, parent=None, title=""):
        asked.append((QColor(initial).name(), title))
        return QColor("#123456")

    monkeypatch.setattr(QColorDialog, "getColor", staticmethod(fake_get_color))
    op_id = ids(workspace)[1]
    rect = panel.view.visualRect(panel.view.model().index(1, COL_COLOR))
    double_click(qtbot, panel.view.viewport(), rect.center())
    assert len(asked) == 1
    assert workspace.document.operation(op_id).color == "#123456"
    workspace.document.undo()
    assert workspace.document.operation(op_id).color is None


def test_invalid_parameters_show_a_dash(panel, workspace):
    op_id = workspace.document.add_operation(
        loads_session("schema_version: 1\noperations:\n  - {kind: gemm, m: 8}\n")
        .operations[0].operation)
    workspace.document.set_param(op_id, "dtype", "nonsense")
    row = panel.model.row_of(op_id)
    assert cell(panel, row, COL_INTENSITY) == "—"
    assert "Cannot count" in cell(panel, row, COL_INTENSITY, Qt.ItemDataRole.ToolTipRole)
    assert cell(panel, row, COL_BOUND) == "—"


def test_one_edit_with_a_thousand_operations_touches_only_its_rows(qtbot):
    """1000 operations × 3 machines: one parameter edit is dataChanged on that operation's
    rows only (no reset, no other row re-evaluated); its time is measured by
    ``benchmarks/run.py`` (edit_to_paint_ms.1000)."""
    from workbench.ui.panels.results_table import ResultsTable

    workspace = make_workspace()  # 3 machines
    document = workspace.document
    with document.batch():
        for i in range(1000 - len(document.session.operations)):
            document.add_operation(Operation("gemm", {"m": 1 + i, "n": 4096, "k": 4096},
                                             f"GEMM {i}"))
    panel = OperationsPanel(workspace)
    table = ResultsTable(workspace)
    for w in (panel, table):
        qtbot.addWidget(w)
        w.resize(900, 500)
        w.show()
        qtbot.waitExposed(w)
    table.view.sortByColumn(5, Qt.SortOrder.AscendingOrder)  # sorted: the harder case
    assert table.proxy.rowCount() == 3000
    op_id = document.session.operations[500].id
    resets = []
    panel.model.modelReset.connect(lambda: resets.append("panel"))
    table.model.modelReset.connect(lambda: resets.append("table"))
    touched: dict[str, set[int]] = {"panel": set(), "table": set()}
    panel.model.dataChanged.connect(
        lambda a, b, *_: touched["panel"].update(range(a.row(), b.row() + 1)))
    table.model.dataChanged.connect(
        lambda a, b, *_: touched["table"].update(range(a.row(), b.row() + 1)))
    for value in range(2, 12):
        document.set_param(op_id, "m", value * 64)
    assert resets == []
    assert touched["panel"] == {panel.model.row_of(op_id)}
    assert touched["table"] == set(table.model.rows_of(op_id))
    assert len(touched["table"]) == 3
    shown = {table.model.cell(r, 0, Qt.ItemDataRole.DisplayRole) for r in touched["table"]}
    assert shown == {document.operation(op_id).operation.name}


def test_delete_key_deletes_but_not_while_editing_a_name(qtbot, panel, workspace):
    with qtbot.waitActive(panel):
        panel.activateWindow()
    before = ids(workspace)
    workspace.selection.select(before[0])
    panel.view.setFocus()
    qtbot.waitUntil(panel.view.hasFocus)
    qtbot.keyClick(panel.view, Qt.Key.Key_Delete)
    assert ids(workspace) == before[1:]
    index = panel.view.model().index(0, COL_NAME)
    panel.view.edit(index)
    editor = panel.view.findChild(QLineEdit)
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Home)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    assert ids(workspace) == before[1:]
    assert editor.text() == workspace.document.operation(before[1]).operation.name[1:]


def test_focusing_the_table_does_not_change_the_selection(qtbot, panel, workspace):
    with qtbot.waitActive(panel):
        panel.activateWindow()
    chosen = ids(workspace)[2]
    workspace.selection.select(chosen)
    panel.view.setFocus()
    qtbot.waitUntil(panel.view.hasFocus)
    assert workspace.selection.current == chosen
    qtbot.keyClick(panel.view, Qt.Key.Key_Down)  # keyboard navigation selects
    assert workspace.selection.current == ids(workspace)[3]
    assert panel.selected_ids() == [ids(workspace)[3]]


def test_focus_without_a_selection_selects_nothing(qtbot, panel, workspace):
    with qtbot.waitActive(panel):
        panel.activateWindow()
    assert workspace.selection.current is None
    panel.view.setFocus()
    qtbot.waitUntil(panel.view.hasFocus)
    assert workspace.selection.current is None
