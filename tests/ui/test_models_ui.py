"""A whole model through the app: Edit ▸ Add Model…, the operations group, the model editor,
the Model tab's results, and saving and reopening the session."""

from __future__ import annotations

import sys

import pytest
from conftest import double_click
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from workbench.ui.panels.model_panel import ROW_CAPACITY, ROW_FITS, ROW_PREDICTED, ROW_TOKENS
from workbench.ui.panels.operations_panel import COL_NAME


@pytest.fixture
def window(gpu_window):
    return gpu_window


def _add_llama_through_the_menu(qtbot, win):
    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData("Llama-3.1-8B"))
    dialog.form.phase.setCurrentText("decode")
    dialog.form.batch.setValue(1)
    dialog.form.kv_len.setValue(4096)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    return win.document.session.models[0]


def _model_points(win, model):
    ids = set(model.op_ids)
    return {(op, hw): (x, y) for op, hw, x, y in win.canvas.point_items() if op in ids}


def test_add_model_change_batch_see_everything_move_save_and_reopen(qtbot, window, tmp_path):
    win = window
    model = _add_llama_through_the_menu(qtbot, win)
    assert model.arch.name == "Llama-3.1-8B" and model.setup.kv_len == 4096

    # one collapsible group in the operations panel
    panel = win.operations_panel
    assert panel.model.rowCount() == 1
    header = panel.model.index(0, COL_NAME)
    assert "Llama-3.1-8B" in header.data() and "batch 1" in header.data()
    rect = panel.view.visualRect(header)

    double_click(qtbot, panel.view.viewport(), rect.center())
    assert panel.model.rowCount() == 1 + len(model.op_ids)
    assert "QKV projection" in panel.model.index(3, COL_NAME).data()
    double_click(qtbot, panel.view.viewport(), rect.center())
    assert panel.model.rowCount() == 1

    # every operation of the model is a point on both machines (gather: 0 FLOPs, not drawn)
    before = _model_points(win, model)
    drawn_ops = {op for op, _ in before}
    assert len(drawn_ops) >= len(model.op_ids) - 1 and len(before) == 2 * len(drawn_ops)
    flops_before = {i: float(win.workspace.results.counts(i).flops) for i in model.op_ids}
    bytes_before = {i: float(win.workspace.results.counts(i).bytes) for i in model.op_ids}

    # the Model tab shows the time per machine
    table = win.model_panel.table
    assert win.model_dock.isVisible()
    assert table.columnCount() == 2  # one column per machine
    tpot_before = table.item(ROW_PREDICTED, 0).text()
    tokens_before = table.item(ROW_TOKENS, 0).text()
    assert "TPOT" in table.verticalHeaderItem(ROW_PREDICTED).text()
    assert "does not fit" not in table.item(ROW_FITS, 0).text()

    # edit batch in the model editor: everything moves at once
    spin = win.model_panel.editor.form.batch
    spin.selectAll()
    qtbot.keyClicks(spin, "32")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert model.setup.batch == 32
    after = _model_points(win, model)
    assert set(after) == set(before)
    for i in model.op_ids:  # every operation's counts grew with the batch
        assert float(win.workspace.results.counts(i).bytes) > bytes_before[i]
        if flops_before[i]:
            assert float(win.workspace.results.counts(i).flops) > flops_before[i]
    moved = [key for key in before if before[key] != pytest.approx(after[key], rel=1e-6)]
    # the GEMMs' intensity grows with the batch (weights shared by more tokens); decode
    # attention's does not (each sequence reads its own cache), nor elementwise steps'
    gemm_points = [key for key in before if win.document.operation(key[0]).operation.kind == "gemm"]
    assert gemm_points and set(gemm_points) <= set(moved)
    assert table.item(ROW_PREDICTED, 0).text() != tpot_before
    assert table.item(ROW_TOKENS, 0).text() != tokens_before
    assert "batch 32" in panel.model.index(0, COL_NAME).data()
    assert "batch = 32" in win.model_panel.derivation.toPlainText()
    # one undo step for the typed number
    win.document.undo()
    assert model.setup.batch == 1
    win.document.redo()
    assert model.setup.batch == 32

    # save and reopen: the model comes back with its parameters and the same points
    path = tmp_path / "model.yaml"
    assert win.save_to(path)
    text = path.read_text()
    assert "models:" in text and "batch: 32" in text and "QKV projection" not in text
    assert win.open_path(path)
    (again,) = win.document.session.models
    assert again.setup == model.setup and again.config == "Llama-3.1-8B"
    assert len(again.op_ids) == len(model.op_ids)
    reopened = [v for xy in sorted(_model_points(win, again).values()) for v in xy]
    assert reopened == pytest.approx([v for xy in sorted(after.values()) for v in xy], rel=1e-9)
    assert win.model_panel.table.columnCount() == 2
    assert "batch 32" in panel.model.index(0, COL_NAME).data()


def test_a_typed_number_the_model_refuses_is_not_half_applied(qtbot, window):
    """Pipeline stages typed as 100 on a model of 32 layers: refused, and the 10 that the
    typing applied on the way is taken back with it (the model stays at 1 stage, the field
    says so); a number accepted, 24, is one undo step, though each key made the model's
    operations anew."""
    win = window
    model = _add_llama_through_the_menu(qtbot, win)
    win.workspace.selection.select(model.op_ids[0])  # (the model chosen in the panel)
    editor = win.model_panel.editor
    spin = editor.form.pp
    added = win.document.undo_text()

    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "100")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    model = win.document.session.models[0]
    assert model.setup.pp == 1
    assert spin.value() == 1
    assert "100 stages for 32 layers" in editor.problem.text()
    assert "kept pp = 1" in editor.problem.text()
    assert win.document.undo_text() == added  # nothing else to undo

    spin.selectAll()
    qtbot.keyClicks(spin, "24")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert win.document.session.models[0].setup.pp == 24 and editor.problem.text() == ""
    win.document.undo()
    assert win.document.session.models[0].setup.pp == 1 and spin.value() == 1
    assert win.document.undo_text() == added


def test_a_tensor_parallel_degree_that_does_not_split_the_heads_is_refused(qtbot, window):
    """Llama-3.1-8B has 32 query heads and 8 KV heads: 3 chips cannot share them, in the
    Model tab nor in Edit ▸ Add Model…; 16 can (each KV head on two chips)."""
    win = window
    model = _add_llama_through_the_menu(qtbot, win)
    win.workspace.selection.select(model.op_ids[0])
    editor = win.model_panel.editor
    spin = editor.form.tp
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "3")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert win.document.session.models[0].setup.tp == 1 and spin.value() == 1
    assert "3 does not divide Llama-3.1-8B's 32 attention heads" in editor.problem.text()
    spin.selectAll()
    qtbot.keyClicks(spin, "16")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert win.document.session.models[0].setup.tp == 16 and editor.problem.text() == ""

    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData("Llama-3.1-8B"))
    dialog.form.tp.setValue(3)
    qtbot.mouseClick(dialog.buttons.button(QDialogButtonBox.StandardButton.Ok),
                     Qt.MouseButton.LeftButton)
    assert dialog.isVisible()
    assert "3 does not divide Llama-3.1-8B's 32 attention heads" in dialog.summary.text()
    assert len(win.document.session.models) == 1
    dialog.reject()


def test_a_config_whose_activation_cannot_be_counted_is_refused_in_the_dialog(qtbot, window,
                                                                              tmp_path):
    import json

    from workbench.io.model_configs import shipped_configs
    from workbench.ui.editors.model_editor import AddModelDialog

    config = json.loads(shipped_configs()["Llama-3.1-8B"].read_text(encoding="utf-8"))
    config["hidden_act"] = "swiglu_foo"
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    dialog = AddModelDialog(window)
    qtbot.addWidget(dialog)
    assert not dialog.choose_file(str(path))
    assert dialog.summary.text().startswith(f"{path}:")
    assert "hidden_act: unknown activation 'swiglu_foo'" in dialog.summary.text()
    assert dialog.config.findData(str(path)) == -1  # (not offered to add)


def test_layer_view_and_every_operation_view(qtbot, window):
    win = window
    model = _add_llama_through_the_menu(qtbot, win)
    aggregated = len(model.op_ids)
    win.model_panel.editor.form.view.setCurrentIndex(
        win.model_panel.editor.form.view.findData("all"))
    assert len(model.op_ids) > 30 * aggregated / 2
    assert len(win.document.session.operations) == len(model.op_ids)
    win.document.undo()
    assert len(model.op_ids) == aggregated


@pytest.mark.parametrize("view", ["layers", "all"])
def test_the_model_row_shows_the_whole_model_intensity(qtbot, window, view):
    """The model's row in the operations panel: Σ FLOPs / Σ bytes over its operations,
    counted here one operation at a time, in both views, before and after a batch edit."""
    from workbench.model.units import format_number
    from workbench.ui.panels.operations_panel import COL_INTENSITY

    win = window
    model = _add_llama_through_the_menu(qtbot, win)
    win.model_panel.editor.form.view.setCurrentIndex(
        win.model_panel.editor.form.view.findData(view))
    panel = win.operations_panel
    for batch in (1, 48):
        win.document.set_model(model.id, batch=batch)
        flops = nbytes = 0.0
        for op_id in model.op_ids:
            counts = win.document.operation(op_id).operation.counts()
            flops += float(counts.flops)
            nbytes += float(counts.bytes)
        cell = panel.model.index(0, COL_INTENSITY)
        assert cell.data() == format_number(flops / nbytes)
        tip = cell.data(Qt.ItemDataRole.ToolTipRole)
        assert tip.startswith("Whole model: Σ FLOPs / Σ bytes")
        assert tip.endswith(f"= {format_number(flops / nbytes)} FLOP/B")


def test_delete_model_from_the_operations_panel_and_undo(qtbot, window):
    win = window
    _add_llama_through_the_menu(qtbot, win)
    panel = win.operations_panel
    panel.view.setFocus()
    panel.select([win.document.session.models[0].op_ids[0]], None)
    panel.view.selectRow(0)
    panel.delete_selected()
    assert win.document.session.models == [] and win.document.session.operations == []
    win.document.undo()
    assert len(win.document.session.models) == 1
    assert panel.model.rowCount() == 1


def test_does_not_fit_is_shown_plainly(qtbot, window):
    win = window
    _add_llama_through_the_menu(qtbot, win)
    form = win.model_panel.editor.form
    form.kv_len.setValue(1_000_000)  # a million cached positions: 131 GB of KV cache
    form.batch.setValue(4)
    table = win.model_panel.table
    assert [table.item(ROW_FITS, c).text() for c in range(table.columnCount())] == [
        "does not fit"] * 2


def test_a_machine_the_model_cannot_run_on_still_says_its_memory(qtbot, open_window):
    """Llama-3.1-8B at tensor parallelism 2 on an Apple M4 Pro (no interconnect for the
    all-reduce): the Model tab failed to fill in (its capacity was looked up as nothing);
    now the machine's column says why it is skipped, and its capacity and the fit."""
    from tests.conftest import add_model_through_dialog
    from workbench.io.presets import get_preset

    errors = []
    hook = sys.excepthook
    sys.excepthook = lambda *exc: errors.append(exc)
    try:
        win = open_window()
        win.document.add_machine(get_preset("apple-m4-pro"), "apple-m4-pro")
        add_model_through_dialog(qtbot, win, tp=2)
        QApplication.processEvents()
    finally:
        sys.excepthook = hook
    assert not errors
    table = win.model_panel.table
    assert table.item(ROW_PREDICTED, 0).text() == "skipped"
    assert "of 25.8 GB (24.0 GiB)" in table.item(ROW_CAPACITY, 0).text()
    assert table.item(ROW_FITS, 0).text() == "fits"
