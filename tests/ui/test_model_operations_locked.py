"""A model's operations follow the model: the editor shows them read-only with a way to the
model's editor, the operations panel refuses to delete or rename one on its own, and a
duplicate is an ordinary operation that can be edited and is saved."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import double_click
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry
from workbench.ui.panels.operations_panel import COL_COLOR, COL_NAME, COL_VISIBLE


@pytest.fixture
def window(open_window):
    win = open_window(size=(1366, 768))
    win.ask_save_changes = lambda: QMessageBox.Discard  # (the tests replace the session)
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    return win


def _add_model(win, name="8B decode"):
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1, kv_len=2048), name=name)
    win.add_model(entry)
    return entry


def _gemm_of(win, model):
    return next(i for i in model.op_ids
                if win.document.operation(i).operation.kind == "gemm"
                and "QKV" in win.document.operation(i).operation.name)


def _expand(qtbot, panel, model):
    if model.id not in panel.model.expanded:
        panel.toggle_group(model.id)


def test_editor_shows_a_model_operation_read_only_with_a_way_to_the_model(qtbot, window):
    win = window
    model = _add_model(win)
    op_id = _gemm_of(win, model)
    win.model_dock.hide()
    win.workspace.selection.select(op_id)
    editor = win.editor
    assert editor.operation_id == op_id

    banner = editor.findChild(QLabel, "model_banner_text")
    assert banner is not None and banner.isVisible()
    assert "Part of model “8B decode”" in banner.text() and "Model tab" in banner.text()
    # the values are shown, and none can be edited
    m_field = editor.field("m")
    m_before = m_field.text()
    assert m_before == str(win.document.operation(op_id).operation.params["m"])
    for name in ("name", "memory_level", "m", "n", "k"):
        assert not editor.field(name).isEnabled(), name
    assert not editor.sweep_section.isEnabled()
    params_before = dict(win.document.operation(op_id).operation.params)
    qtbot.keyClicks(m_field, "7")
    assert win.document.operation(op_id).operation.params == params_before
    assert not win.document.can_undo() or "Add" in win.document.undo_text()
    # the derivation stays
    assert "FLOPs" in editor.derivation_text()

    # the button opens the model's editor in the Model tab
    button = editor.findChild(QPushButton, "edit_model")
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert win.model_dock.isVisible()
    assert win.model_panel.model_id == model.id
    # and editing the model there changes the operation shown in the editor
    win.model_panel.editor.form.batch.setValue(16)
    assert win.document.operation(op_id).operation.params != params_before
    assert editor.field("m").text() == "16" != m_before


def test_an_ordinary_operation_stays_editable(qtbot, window):
    win = window
    _add_model(win)
    from workbench.document import new_operation
    op_id = win.document.add_operation(new_operation("gemm", "mine"))
    win.workspace.selection.select(op_id)
    editor = win.editor
    assert editor.findChild(QLabel, "model_banner_text") is None
    assert editor.field("m").isEnabled() and editor.field("name").isEnabled()


def test_deleting_one_operation_of_a_model_is_refused_with_a_message(qtbot, window):
    win = window
    model = _add_model(win)
    panel = win.operations_panel
    _expand(qtbot, panel, model)
    op_id = _gemm_of(win, model)
    row = panel.model.row_of(op_id)
    assert row > 0
    panel.view.setFocus()
    panel.view.selectRow(row)
    count = len(win.document.session.operations)
    panel.delete_action.trigger()
    assert len(win.document.session.operations) == count
    assert win.document.session.models == [model] and op_id in model.op_ids
    assert panel.notice.isVisible()
    assert "part of model “8B decode”" in panel.notice.text()
    assert "header row" in panel.notice.text()
    # choosing another row clears the message
    panel.view.selectRow(row + 1)
    assert not panel.notice.isVisible()
    # the header row still deletes the whole model (undoable)
    panel.view.selectRow(panel.model.header_row(model.id))
    panel.delete_action.trigger()
    assert win.document.session.models == [] and win.document.session.operations == []
    assert not panel.notice.isVisible()
    win.document.undo()
    assert len(win.document.session.models) == 1


def test_a_model_operation_cannot_be_renamed_hidden_or_recoloured_alone(qtbot, window):
    win = window
    model = _add_model(win)
    panel = win.operations_panel
    _expand(qtbot, panel, model)
    op_id = _gemm_of(win, model)
    row = panel.model.row_of(op_id)
    index = panel.model.index(row, COL_NAME)
    assert not panel.model.flags(index) & Qt.ItemFlag.ItemIsEditable
    # its checkbox shows its state and says the header row decides (a model edit resets it)
    check = panel.model.index(row, COL_VISIBLE)
    assert not panel.model.flags(check) & Qt.ItemFlag.ItemIsUserCheckable
    assert "header row" in check.data(Qt.ItemDataRole.ToolTipRole)
    rect = panel.view.visualRect(check)
    qtbot.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert win.document.operation(op_id).visible
    # double-clicking its swatch opens no colour dialog; the colour stays the model's
    color = panel.model.index(row, COL_COLOR)
    assert "its model's colour" in color.data(Qt.ItemDataRole.ToolTipRole)
    opened = []
    panel.choose_color = opened.append
    rect = panel.view.visualRect(color)
    double_click(qtbot, panel.view.viewport(), rect.center())
    assert opened == []
    # an ordinary operation's swatch does open it
    from workbench.document import new_operation
    mine = win.document.add_operation(new_operation("gemm", "mine"))
    rect = panel.view.visualRect(panel.model.index(panel.model.row_of(mine), COL_COLOR))
    double_click(qtbot, panel.view.viewport(), rect.center())
    assert opened == [mine]
    # shown indented under its header, without repeating the model's name
    assert index.data().startswith("    QKV projection")
    assert "8B decode: QKV projection" in index.data(Qt.ItemDataRole.ToolTipRole)


def test_a_duplicate_of_a_model_operation_is_ordinary_editable_and_saved(qtbot, window, tmp_path):
    win = window
    model = _add_model(win)
    panel = win.operations_panel
    _expand(qtbot, panel, model)
    op_id = _gemm_of(win, model)
    panel.view.selectRow(panel.model.row_of(op_id))
    layout_before = list(model.op_ids)
    panel.duplicate_action.trigger()
    copy_id = win.workspace.selection.current
    assert copy_id not in model.op_ids and model.op_ids == layout_before
    ops = [e.id for e in win.document.session.operations]
    # after the model's block, not inside it: the model stays one group
    assert ops.index(copy_id) == max(ops.index(i) for i in model.op_ids) + 1
    copy_row = panel.model.row_of(copy_id)
    assert panel.model.model_at(copy_row) is None
    assert panel.model.index(copy_row, COL_NAME).data() == "8B decode: QKV projection ×32 (copy)"

    # the editor lets the user change it, and a model edit leaves it alone
    editor = win.editor
    assert editor.operation_id == copy_id
    assert editor.findChild(QLabel, "model_banner_text") is None
    field = editor.field("m")
    assert field.isEnabled()
    field.selectAll()
    qtbot.keyClicks(field, "12345")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert win.document.operation(copy_id).operation.params["m"] == 12345
    win.document.set_model(model.id, batch=8)
    assert win.document.operation(copy_id).operation.params["m"] == 12345
    assert model.op_ids == layout_before  # the model kept its operations (edited in place)

    path = tmp_path / "s.yaml"
    assert win.save_to(path)
    assert win.open_path(path)
    reopened = win.document.session.operation_named("8B decode: QKV projection ×32 (copy)")
    assert reopened is not None and reopened.operation.params["m"] == 12345


def test_duplicating_a_model_header_duplicates_the_model(qtbot, window):
    win = window
    model = _add_model(win)
    panel = win.operations_panel
    panel.view.selectRow(panel.model.header_row(model.id))
    panel.duplicate_action.trigger()
    first, second = win.document.session.models
    assert first is model and second.label == "8B decode (copy)"
    assert len(second.op_ids) == len(model.op_ids)
    assert not set(second.op_ids) & set(model.op_ids)
    assert panel.model.rowCount() == 2  # two collapsed groups
    assert win.model_panel.model_id == second.id
    win.document.undo()
    assert win.document.session.models == [model]


# -- the Model tab and the group at 1366 × 768 ------------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "workbench" / "examples" \
    / "llama31_8b_inference.yaml"


def _numbers(text):
    return re.findall(r"\d[\d,.]*", text)


def test_model_tab_reads_at_1366x768_and_every_number_has_its_formula(qtbot, window):
    win = window
    assert win.open_path(EXAMPLE)
    decode = next(m for m in win.document.session.models if m.setup.phase == "decode")
    win.show_model(decode.id)
    qtbot.waitUntil(lambda: win.model_panel.table.columnCount() == 3)
    panel = win.model_panel
    table = panel.table
    qtbot.waitUntil(lambda: table.viewport().width() > 0)

    # the results get the room: two machine columns in full beside the row labels, the form
    # keeps its fields whole
    hh = table.horizontalHeader()
    assert hh.sectionViewportPosition(1) + hh.sectionSize(1) <= table.viewport().width()
    fm = table.verticalHeader().fontMetrics()
    for row in range(table.rowCount()):
        label = table.verticalHeaderItem(row).text()
        assert fm.horizontalAdvance(label) <= table.verticalHeader().width(), label
    form = panel.editor.form
    assert form.quantize.width() >= form.quantize.sizeHint().width()
    assert form.batch.isVisible() and form.batch.width() >= form.batch.minimumSizeHint().width()

    # every figure's tooltip is its formula, and shows the value the cell shows
    for col in range(table.columnCount()):
        machine = table.horizontalHeaderItem(col)
        assert machine.toolTip() == win.document.session.hardware[col].hardware.label
        for row in range(table.rowCount()):
            item = table.item(row, col)
            tip = item.toolTip()
            assert "=" in tip or "≤" in tip or ">" in tip, (row, tip)
            for number in _numbers(item.text()):
                assert number in tip, (row, item.text(), tip)
    tpot = table.item(1, 0).toolTip()
    assert "TPOT = Σ over kernels of (T_fixed + T_work) × layers, calibrated" in tpot
    tokens = table.item(2, 0).toolTip()
    assert "tokens/s = batch (one new token per sequence) / TPOT" in tokens
    share = table.item(6, 0).toolTip()
    assert "share of TPOT per operation kind" in share and "%" in share
    # the line above the table, and the model's own figures
    summary = panel.summary
    for number in _numbers(summary.text().replace("<b>", "").replace("</b>", "")):
        assert number in summary.toolTip(), number
    assert "KV cache = batch · positions · bytes per token = 1 · 2,048 · 131,072 B" \
        in summary.toolTip()
    title = panel.editor.title
    assert f"= {decode.arch.params:,}" in title.toolTip()
    assert f"= {decode.arch.active_params:,}" in title.toolTip()
    # the derivation page has them too
    panel.pages.setCurrentIndex(1)
    assert "tokens/s" in panel.derivation.toPlainText()


def test_the_kv_cache_in_the_summary_is_what_one_chip_holds(qtbot, window):
    win = window
    # Mixtral on 8 chips with ep 8: attention runs on 8 copies, so a chip keeps the cache of
    # ⌈64/8⌉ = 8 sequences: 8 · 2048 · (2·32·8·128·2 = 131,072 B) = 2,147,483,648 B
    entry = ModelEntry("Mixtral-8x7B", read_model_config("Mixtral-8x7B"),
                       Setup(phase="decode", batch=64, kv_len=2048, ep=8), name="Mixtral")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    qtbot.waitUntil(lambda: panel.table.columnCount() == 1)
    tip = panel.summary.toolTip()
    assert "KV cache = ⌈batch/dp⌉ · positions · bytes per token = ⌈64/8⌉ · 2,048 · " \
           "131,072 B = 2.15 GB (per chip)" in tip
    assert "local layers" not in tip  # (Mixtral has none)
    assert "KV cache 2.15 GB" in panel.summary.text()


def test_model_group_header_shows_its_set_up_first(qtbot, window):
    win = window
    assert win.open_path(EXAMPLE)
    panel = win.operations_panel
    decode = next(m for m in win.document.session.models if m.setup.phase == "decode")
    header = panel.model.index(panel.model.header_row(decode.id), COL_NAME)
    assert header.data() == "▸ 8B decode (batch 1, kv 2048)"
    tip = header.data(Qt.ItemDataRole.ToolTipRole)
    assert "decode, batch 1, kv 2048, weights bf16" in tip and "tp 1" in tip
