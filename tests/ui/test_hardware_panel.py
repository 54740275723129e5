"""The hardware panel and the preset dialog, driven through their real widgets."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from workbench.document import Document
from workbench.io.presets import get_preset
from workbench.io.sessions import load_session
from workbench.io.user_presets import USER_PRESETS_VARIABLE, save_machine
from workbench.ui.bridge import Workspace
from workbench.ui.dialogs.preset_dialog import PresetDialog
from workbench.ui.panels.hardware_panel import HardwarePanel

from ..conftest import ROOT


@pytest.fixture
def workspace():
    document = Document()
    document.replace_session(load_session(ROOT / "workbench" / "examples" / "llama_ffn.yaml"))
    return Workspace(document)


@pytest.fixture
def panel(qtbot, workspace):
    widget = HardwarePanel(workspace)
    qtbot.addWidget(widget)
    widget.resize(400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def machine_by_preset(document: Document, preset: str):
    return next(e for e in document.session.hardware if e.preset == preset)


def select(panel: HardwarePanel, preset: str) -> int:
    hw_id = machine_by_preset(panel.document, preset).id
    panel.machine_list.setCurrentItem(panel.item_for(hw_id))
    assert panel.current_machine == hw_id
    return hw_id


def type_into(qtbot, edit, text: str) -> None:
    """Replace the text as a user would, then press Return."""
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def op_id(document: Document, name: str) -> int:
    return next(e.id for e in document.session.operations if e.operation.name == name)


# ---------------------------------------------------------------------------------------------
# list and actions


def test_lists_the_session_machines_with_summary(panel, workspace):
    ids = [e.id for e in workspace.document.session.hardware]
    assert panel.machine_ids() == ids
    item = panel.item_for(machine_by_preset(workspace.document, "h100-sxm").id)
    assert item.text() == "NVIDIA H100 SXM5 80GB"
    summary = item.data(Qt.ItemDataRole.UserRole + 1)
    assert "hbm 3.35 TB/s" in summary
    assert "989" in summary and "ridge 295 FLOP/B" in summary
    assert not item.icon().isNull()


def test_add_preset_through_the_dialog(qtbot):
    workspace = Workspace(Document())
    panel = HardwarePanel(workspace)
    qtbot.addWidget(panel)
    assert panel.machine_ids() == []
    assert panel.editor_stack.currentIndex() == 0  # the "no machine" page

    panel.add_preset_action.trigger()
    dialog = panel.preset_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.keyClicks(dialog.filter_edit, "h200")
    assert dialog.visible_ids() == ["h200"]  # not the GH200
    assert dialog.selected_ids() == ["h200"]
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)

    assert not dialog.isVisible()
    entries = workspace.document.session.hardware
    assert [(e.preset, e.hardware.memory["hbm"]) for e in entries] == [("h200", 4.8e12)]
    assert panel.machine_ids() == [entries[0].id]
    assert panel.current_machine == entries[0].id
    assert panel.item_for(entries[0].id).text() == "NVIDIA H200 SXM 141GB"
    assert panel.name_edit.text() == "NVIDIA H200 SXM 141GB"
    assert workspace.document.undo_text() == "Add NVIDIA H200 SXM 141GB"


def test_dialog_adds_several_presets_and_double_click_adds_one(qtbot):
    workspace = Workspace(Document())
    dialog = PresetDialog(workspace)
    qtbot.addWidget(dialog)
    dialog.choose(["l4", "tpu-v5e"])
    assert dialog.add_button.text() == "Add 2 machines"
    dialog.accept()  # in list order (by name)
    assert [e.preset for e in workspace.document.session.hardware] == ["tpu-v5e", "l4"]

    dialog = PresetDialog(workspace)
    qtbot.addWidget(dialog)
    item = next(dialog.preset_list.item(r) for r in range(dialog.preset_list.count())
                if dialog.preset_list.item(r).data(Qt.ItemDataRole.UserRole) == "b200")
    dialog.preset_list.itemDoubleClicked.emit(item)
    assert [e.preset for e in workspace.document.session.hardware] == ["tpu-v5e", "l4", "b200"]


def test_dialog_adds_a_user_preset_removed_from_disk_while_it_was_open(
        qtbot, tmp_path, monkeypatch):
    """The machines listed are the ones added: a user preset file removed (or rewritten)
    after the dialog opened is added as it was shown, with the others chosen with it."""
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    mine = get_preset("h100-sxm").copy(name="My H100, measured", memory={"hbm": 2.9e12})
    mine.id = "my-h100"
    path = save_machine(mine)
    workspace = Workspace(Document())
    dialog = PresetDialog(workspace)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.choose(["l4", "my-h100"])
    path.unlink()
    qtbot.mouseClick(dialog.add_button, Qt.MouseButton.LeftButton)

    assert not dialog.isVisible()
    assert [(e.hardware.name, e.preset, e.hardware.memory)
            for e in workspace.document.session.hardware] == [
        ("My H100, measured", None, {"hbm": 2.9e12}),
        ("NVIDIA L4 24GB", "l4", get_preset("l4").memory)]


def test_dialog_is_driven_from_the_keyboard(qtbot):
    workspace = Workspace(Document())
    dialog = PresetDialog(workspace)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    qtbot.keyClicks(dialog.filter_edit, "nvidia h100")
    assert dialog.visible_ids() == ["h100-pcie", "h100-sxm"]
    assert dialog.selected_ids() == ["h100-pcie"]
    qtbot.keyClick(dialog.filter_edit, Qt.Key.Key_Down)
    assert dialog.selected_ids() == ["h100-sxm"]
    assert "NVIDIA H100 SXM5 80GB" in dialog.details_text()
    qtbot.keyClick(dialog.filter_edit, Qt.Key.Key_Return)
    assert [e.preset for e in workspace.document.session.hardware] == ["h100-sxm"]
    assert dialog.result() == dialog.DialogCode.Accepted


def test_dialog_filter_and_details(qtbot, workspace):
    dialog = PresetDialog(workspace)
    qtbot.addWidget(dialog)
    dialog.filter_edit.setText("tpu")
    assert dialog.visible_ids() and all(i.startswith("tpu-") for i in dialog.visible_ids())
    dialog.filter_edit.setText("100")  # model numbers inside words, and the B200's "1000 W"
    assert set(dialog.visible_ids()) == {"h100-sxm", "h100-pcie", "a100-40gb", "a100-80gb",
                                         "v100-sxm2-32gb", "v100-sxm2-16gb", "v100-pcie-32gb",
                                         "v100-pcie-16gb", "b200"}
    dialog.filter_edit.setText("vidia l4")  # nothing starts with "vidia": any part will do
    assert dialog.visible_ids() == ["l4", "l40s"]
    dialog.filter_edit.setText("nothing-like-this")
    assert dialog.visible_ids() == [] and not dialog.add_button.isEnabled()

    dialog.filter_edit.setText("")
    dialog.choose(["h100-sxm"])
    text = dialog.details_text()
    for expected in ("NVIDIA H100 SXM5 80GB", "989.4 TFLOP/s", "3.35 TB/s", "450 GB/s",
                     "bf16 295 FLOP/B", "8 µs", "85.52 GB", "sparse figures halved",
                     "https://www.nvidia.com/en-us/data-center/h100/", "1.979 POP/s"):
        assert expected in text, expected
    assert "https://www.nvidia.com/en-us/data-center/h100/" in dialog.details.toHtml()


def test_remove_then_undo_puts_it_back_in_place(qtbot, panel, workspace):
    document = workspace.document
    before = panel.machine_ids()
    a100 = select(panel, "a100-80gb")
    panel.remove_action.trigger()
    assert a100 not in [e.id for e in document.session.hardware]
    assert panel.machine_ids() == [i for i in before if i != a100]
    assert panel.current_machine != a100 and panel.current_machine is not None

    document.undo()
    assert [e.id for e in document.session.hardware] == before
    assert panel.machine_ids() == before
    assert panel.current_machine == a100

    panel.machine_list.setFocus()
    qtbot.keyClick(panel.machine_list, Qt.Key.Key_Delete)
    assert a100 not in [e.id for e in document.session.hardware]


def test_switching_machines_drops_text_typed_for_the_previous_one(qtbot, panel, workspace):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    panel.name_edit.setFocus()
    qtbot.keyClicks(panel.name_edit, " typed")
    tpu = select(panel, "tpu-v5e")
    assert panel.name_edit.text() == "Google Cloud TPU v5e (per chip)"
    panel.name_edit.editingFinished.emit()
    assert document.machine(tpu).hardware.name == "Google Cloud TPU v5e (per chip)"
    assert document.machine(h100).hardware.name == "NVIDIA H100 SXM5 80GB"
    assert not document.can_undo()


def test_toggle_visibility_from_the_checkbox(panel, workspace):
    document = workspace.document
    tpu = machine_by_preset(document, "tpu-v5e")
    item = panel.item_for(tpu.id)
    item.setCheckState(Qt.CheckState.Unchecked)  # what a click on the checkbox does
    assert tpu.visible is False
    assert document.undo_text() == f"Hide {tpu.hardware.label}"
    document.undo()
    assert tpu.visible is True
    assert panel.item_for(tpu.id).checkState() == Qt.CheckState.Checked


# ---------------------------------------------------------------------------------------------
# editing values


def test_edit_hbm_bandwidth_moves_memory_bound_results(qtbot, panel, workspace):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    gemv = op_id(document, "FFN up, decode GEMV")
    before = workspace.results.pair(gemv, h100).result
    assert before.bound == "memory"
    assert before.attainable_flops == pytest.approx(before.intensity * 3.35e12)

    edit = panel.value_edit("memory", "hbm")
    type_into(qtbot, edit, "4 TB/s")
    assert document.machine(h100).hardware.memory["hbm"] == 4e12
    assert document.modified
    after = workspace.results.pair(gemv, h100).result
    assert after.attainable_flops == pytest.approx(after.intensity * 4e12)
    assert after.attainable_flops > before.attainable_flops
    assert edit.text() == "4 TB/s" and not edit.problem
    assert document.undo_text() == "Edit hbm bandwidth"
    assert "hbm 4 TB/s" in panel.item_for(h100).data(Qt.ItemDataRole.UserRole + 1)

    document.undo()
    assert document.machine(h100).hardware.memory["hbm"] == 3.35e12
    assert edit.text() == "3.35 TB/s"  # the same widget, refreshed in place


@pytest.mark.parametrize(("text", "expected"), [
    ("4 tb/s", "case-sensitive"),
    ("-1 TB/s", "more than zero"),
    ("0 TB/s", "more than zero"),
    ("abc", "expected a number or a quantity in B/s"),
    ("4 TFLOP/s", "another kind of field"),
    ("", "needs a value"),
])
def test_invalid_bandwidth_is_refused_in_place(qtbot, panel, workspace, text, expected):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    edit = panel.value_edit("memory", "hbm")
    type_into(qtbot, edit, text)

    assert document.machine(h100).hardware.memory["hbm"] == 3.35e12
    assert not document.modified and not document.can_undo()
    assert edit.text() == text  # left in place to be corrected
    assert expected in edit.problem
    assert edit.property("invalid") is True
    assert panel.hint_label.isVisible()
    assert expected in panel.hint_label.text() and "hbm bandwidth" in panel.hint_label.text()

    # another field's edit does not wipe the refused text
    type_into(qtbot, panel.efficiency_edit, "0.7")
    assert document.machine(h100).hardware.efficiency == 0.7
    assert edit.text() == text and edit.problem

    # Escape puts the document's value back and clears the hint
    edit.setFocus()
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    assert edit.text() == "3.35 TB/s"
    assert not edit.problem and edit.property("invalid") is not True
    assert not panel.hint_label.isVisible()


def test_same_value_typed_differently_is_no_edit(qtbot, panel, workspace):
    select(panel, "h100-sxm")
    edit = panel.value_edit("memory", "hbm")
    type_into(qtbot, edit, "3350 GB/s")
    assert not workspace.document.can_undo()
    assert edit.text() == "3.35 TB/s"


def test_efficiency_overhead_and_capacity(qtbot, panel, workspace):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    hw = lambda: document.machine(h100).hardware  # noqa: E731

    type_into(qtbot, panel.efficiency_edit, "1.5")
    assert hw().efficiency == 0.78 and not document.modified
    assert "fraction in (0, 1]" in panel.efficiency_edit.problem
    assert "Efficiency" in panel.hint_label.text()
    type_into(qtbot, panel.efficiency_edit, "65%")
    assert hw().efficiency == pytest.approx(0.65) and not panel.efficiency_edit.problem
    type_into(qtbot, panel.efficiency_edit, "")
    assert hw().efficiency is None

    type_into(qtbot, panel.overhead_edit, "5 us")
    assert hw().launch_overhead == pytest.approx(5e-6)
    assert panel.overhead_edit.text() == "5 µs"
    type_into(qtbot, panel.overhead_edit, "-2 us")
    assert hw().launch_overhead == pytest.approx(5e-6) and panel.overhead_edit.problem
    type_into(qtbot, panel.overhead_edit, "")
    assert hw().launch_overhead is None

    type_into(qtbot, panel.capacity_edit, "96 GiB")
    assert hw().capacity == 96 * 2**30


def test_rename_and_empty_name_refused(qtbot, panel, workspace):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    type_into(qtbot, panel.name_edit, "   ")
    assert document.machine(h100).hardware.name == "NVIDIA H100 SXM5 80GB"
    assert "needs a name" in panel.name_edit.problem
    type_into(qtbot, panel.name_edit, "H100 (ours)")
    assert document.machine(h100).hardware.name == "H100 (ours)"
    assert panel.item_for(h100).text() == "H100 (ours)"
    assert "edited" in panel.origin_label.text()


def test_add_and_remove_ceilings(qtbot, panel, workspace):
    document = workspace.document
    tpu = select(panel, "tpu-v5e")
    hw = lambda: document.machine(tpu).hardware  # noqa: E731

    # a precision: the combo offers only the missing ones
    kind = panel.add_kind_combo
    kind.setCurrentIndex(kind.findData("compute"))
    names = [panel.add_name_combo.itemText(i) for i in range(panel.add_name_combo.count())]
    assert "fp8" in names and "bf16" not in names and "int8" not in names
    panel.add_name_combo.setCurrentText("fp8")
    type_into(qtbot, panel.add_value_edit, "400 TFLOP/s")
    assert hw().compute["fp8"] == 400e12
    assert panel.value_edit("compute", "fp8").text() == "400 TFLOP/s"
    names = [panel.add_name_combo.itemText(i) for i in range(panel.add_name_combo.count())]
    assert "fp8" not in names

    # a memory level, with a validated name
    kind.setCurrentIndex(kind.findData("memory"))
    panel.add_name_combo.setEditText("2x")
    type_into(qtbot, panel.add_value_edit, "10 TB/s")
    assert "must start with a letter" in panel.hint_label.text()
    assert set(hw().memory) == {"hbm"}
    panel.add_name_combo.setEditText("l2")
    qtbot.mouseClick(panel.add_button, Qt.MouseButton.LeftButton)
    assert hw().memory == {"hbm": 819e9, "l2": 10e12}
    assert hw().main_memory == "hbm"
    assert not panel.hint_label.isVisible()

    # a bad value for a new level is refused too
    panel.add_name_combo.setEditText("smem")
    type_into(qtbot, panel.add_value_edit, "fast")
    assert "smem" not in hw().memory and "New memory level" in panel.hint_label.text()

    # main memory radio
    panel.main_radios["l2"].click()
    assert hw().main_memory == "l2"
    assert document.undo_text() == "Edit main memory"

    # removing the main level falls back to the remaining one
    qtbot.mouseClick(panel.remove_buttons[("memory", "l2")], Qt.MouseButton.LeftButton)
    assert hw().memory == {"hbm": 819e9} and hw().main_memory == "hbm"
    assert not panel.remove_buttons[("memory", "hbm")].isEnabled()  # the last level stays
    qtbot.mouseClick(panel.remove_buttons[("compute", "fp8")], Qt.MouseButton.LeftButton)
    assert "fp8" not in hw().compute and ("compute", "fp8") not in panel.value_edits


def test_undo_refreshes_without_stealing_focus(qtbot, panel, workspace):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    type_into(qtbot, panel.value_edit("compute", "bf16"), "1 PFLOP/s")
    assert document.machine(h100).hardware.compute["bf16"] == 1e15
    panel.activateWindow()
    panel.efficiency_edit.setFocus()
    qtbot.waitUntil(panel.efficiency_edit.hasFocus)
    document.undo()
    assert panel.value_edit("compute", "bf16").text() == "989.4 TFLOP/s"
    assert QApplication.focusWidget() is panel.efficiency_edit
    document.redo()
    assert panel.value_edit("compute", "bf16").text() == "1 PFLOP/s"


def test_new_custom_machine(qtbot, panel, workspace):
    document = workspace.document
    panel.new_machine_action.trigger()
    entry = document.session.hardware[-1]
    assert entry.preset is None
    assert entry.hardware.name == "Custom machine"
    assert entry.hardware.compute == {"bf16": 100e12, "fp16": 100e12, "fp32": 20e12}
    assert entry.hardware.memory == {"hbm": 1e12} and entry.hardware.main_memory == "hbm"
    assert panel.current_machine == entry.id
    assert panel.name_edit.text() == "Custom machine"
    assert panel.value_edit("compute", "fp16").text() == "100 TFLOP/s"
    assert panel.value_edit("memory", "hbm").text() == "1 TB/s"
    assert "ridge 100 FLOP/B" in panel.item_for(entry.id).data(Qt.ItemDataRole.UserRole + 1)
    panel.new_machine_action.trigger()
    assert document.session.hardware[-1].hardware.name == "Custom machine 2"


def test_provenance_shows_sources_and_sparse_note(panel, workspace):
    select(panel, "h100-sxm")
    text = panel.provenance_label.text()
    assert 'href="https://www.nvidia.com/en-us/data-center/h100/"' in text
    assert "vendor sparse figures halved" in text
    assert "Preset h100-sxm" in panel.origin_label.text()
    assert "halved" in panel.notes_label.text()

    select(panel, "tpu-v5e")
    text = panel.provenance_label.text()
    assert "https://cloud.google.com/tpu/docs/v5e" in text
    assert "vendor sparse figures halved" not in text


def test_revert_to_preset(qtbot, panel, workspace):
    document = workspace.document
    h100 = select(panel, "h100-sxm")
    assert not panel.revert_action.isEnabled()
    type_into(qtbot, panel.value_edit("memory", "hbm"), "2 TB/s")
    assert panel.revert_action.isEnabled()
    panel.revert_action.trigger()
    assert document.machine(h100).hardware.memory["hbm"] == 3.35e12
    assert panel.value_edit("memory", "hbm").text() == "3.35 TB/s"
    assert not panel.revert_action.isEnabled()


def test_new_session_resets_the_panel(panel, workspace):
    document = workspace.document
    document.replace_session(load_session(ROOT / "workbench" / "examples" /
                                          "teaching_machine.yaml"))
    assert panel.machine_ids() == [e.id for e in document.session.hardware]
    assert panel.current_machine == document.session.hardware[0].id
    assert panel.name_edit.text() == document.session.hardware[0].hardware.name


def test_alt_up_and_down_reorder_the_machines_as_one_undo_step_each(qtbot, panel, workspace):
    # the machines' order is the legend's and the results': it is changed in the list as
    # the operations' is, Alt+Up and Alt+Down, each move undone alone
    document = workspace.document
    order = [e.id for e in document.session.hardware]
    assert len(order) >= 3
    last = order[-1]
    panel.select_machine(last)
    panel.machine_list.setFocus()
    qtbot.waitUntil(panel.machine_list.hasFocus)
    assert not panel.move_down_action.isEnabled()
    qtbot.keyClick(panel.machine_list, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(panel.machine_list, Qt.Key.Key_Up, Qt.KeyboardModifier.AltModifier)
    expected = order[:-3] + [last] + order[-3:-1]
    assert [e.id for e in document.session.hardware] == expected
    assert panel.machine_ids() == expected  # the list as the session
    assert panel.current_machine == last  # still selected
    assert document.undo_text() == f"Move {document.machine(last).hardware.label}"
    document.undo()
    assert [e.id for e in document.session.hardware] == order[:-2] + [last, order[-2]]
    document.undo()
    assert [e.id for e in document.session.hardware] == order
    assert panel.machine_ids() == order
