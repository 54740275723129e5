"""Hardware ▸ Measure This Machine… and Edit ▸ Measure on This Machine, driven as a user would
(the measurement made tiny through its environment variable)."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, HANG_GUARD_S
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from workbench.io.user_presets import USER_PRESETS_VARIABLE, save_machine
from workbench.measure import measure_machine
from workbench.measure.runner import PROFILE_VARIABLE
from workbench.model.measured_session import judge_session
from workbench.ui.dialogs.measure_dialog import MeasureDialog
from workbench.ui.dialogs.preset_dialog import ID_ROLE, SUMMARY_ROLE, PresetDialog
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(PROFILE_VARIABLE, "tiny")
    monkeypatch.setenv(USER_PRESETS_VARIABLE, str(tmp_path / "presets"))
    create_app()
    win = MainWindow()
    win.open_path(LLAMA)
    win.show()
    qtbot.waitExposed(win)
    errors: list[str] = []
    win.show_error = lambda title, message: errors.append(message)
    win.errors = errors
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()
    win.deleteLater()


def _menu_action(win, menu_title: str, text: str):
    for menu_action in win.menuBar().actions():
        if menu_action.text().replace("&", "") == menu_title:
            for action in menu_action.menu().actions():
                if action.text().replace("&", "") == text:
                    return action
    raise AssertionError(f"no {menu_title} ▸ {text}")


def test_measure_from_the_menu_cancel_then_measure_again(qtbot, window, tmp_path):
    machines_before = len(window.document.session.hardware)
    _menu_action(window, "Hardware", "Measure This Machine…").trigger()
    dialog = window.findChild(MeasureDialog)
    assert dialog is not None and dialog.isVisible()

    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    assert dialog.running and dialog.cancel_button.isEnabled()
    assert not dialog.start_button.isEnabled()
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=HANG_GUARD_S * 1000)
    assert dialog.stage_label.text() == "Cancelled; nothing was saved."
    assert len(window.document.session.hardware) == machines_before
    assert not (tmp_path / "presets").exists() or not list((tmp_path / "presets").iterdir())

    estimates = []
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    # the window keeps handling events while it measures: the estimate updates live
    qtbot.waitUntil(lambda: estimates.append(dialog.estimate_label.text()) or not dialog.running,
                    timeout=HANG_GUARD_S * 1000)
    assert any("s left" in text for text in estimates)
    assert dialog.stage_label.text() == "Done.", dialog.result_label.text()
    assert dialog.progress_bar.value() == 1000

    session = window.document.session
    assert len(session.hardware) == machines_before + 1
    entry = session.hardware[-1]
    hw = entry.hardware
    assert "measured" in hw.name and hw.kind == "cpu" and hw.measured
    roofs = [(kind, name) for hw_id, kind, name, _, _ in window.canvas.roof_items()
             if hw_id == entry.id]
    assert ("memory", hw.main_memory) in [(k, n) for k, n in roofs]
    assert any(kind == "compute" for kind, _ in roofs)
    assert f"{hw.compute['fp64'] / 1e9:.3g} GFLOP/s" in dialog.result_label.text()

    saved = list((tmp_path / "presets").glob("measured-*.yaml"))
    assert len(saved) == 1
    presets = PresetDialog(window.workspace, window)  # listed with the presets, marked
    rows = [presets.preset_list.item(r) for r in range(presets.preset_list.count())]
    item = next(i for i in rows if i.data(ID_ROLE) == saved[0].stem)
    assert "measured · " in item.data(SUMMARY_ROLE)
    assert not any("measured · " in i.data(SUMMARY_ROLE) for i in rows if i is not item)
    presets.deleteLater()


def test_measured_and_datasheet_machines_side_by_side_with_the_gap(qtbot, window):
    _menu_action(window, "Hardware", "Measure This Machine…").trigger()
    dialog = window.findChild(MeasureDialog)
    dialog.datasheet_combo.setCurrentIndex(dialog.datasheet_combo.findData("xeon-8480"))
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=HANG_GUARD_S * 1000)
    session = window.document.session
    datasheet = next(e for e in session.hardware if e.preset == "xeon-8480")
    measured = session.hardware[-1]
    gap = measured.hardware.bandwidth() / datasheet.hardware.bandwidth()
    assert f"{measured.hardware.main_memory} {gap:.2f}×" in measured.hardware.name
    assert measured.hardware.name.endswith("datasheet")
    drawn = {hw_id for hw_id, *_ in window.canvas.roof_items()}
    assert {datasheet.id, measured.id} <= drawn


def test_measure_an_operation_on_this_machine(qtbot, window, tmp_path):
    measured = measure_machine("tiny")
    save_machine(measured.hardware, measured.provenance)  # measured earlier, not in session
    window.add_kind_actions["reduction"].trigger()
    op_id = window.workspace.selection.current
    window.document.set_param(op_id, "n", 1 << 16)
    name = window.document.operation(op_id).operation.name
    before = len(window.document.session.measurements)

    _menu_action(window, "Edit", "Measure on This Machine").trigger()
    timer = window.operation_timer
    qtbot.waitUntil(lambda: len(window.document.session.measurements) == before + 1,
                    timeout=HANG_GUARD_S * 1000)
    timer.wait()
    assert window.errors == []
    m = window.document.session.measurements[-1]
    assert m.operation == name and m.time_s > 0 and "numpy" in m.source
    local = window.document.session.hardware[-1].hardware
    assert m.hardware == local.name and local.measured
    points = [p for p in judge_session(window.document.session) if p.measurement is m]
    assert len(points) == 1 and points[0].judgement is not None
    judged = points[0].judgement
    assert judged.measured_time_s == m.time_s
    assert judged.fraction == pytest.approx(judged.predicted_time_s / m.time_s)


def test_an_operation_numpy_cannot_run_is_refused_with_the_reason(qtbot, window):
    window.add_kind_actions["attention"].trigger()
    before = len(window.document.session.measurements)
    _menu_action(window, "Edit", "Measure on This Machine").trigger()
    assert len(window.document.session.measurements) == before
    assert window.errors and "cannot run an operation of kind attention" in window.errors[-1]


def test_the_measure_dialog_is_as_tall_as_what_it_shows(qtbot, window):
    """Before a run the dialog showed a blank area as tall as its set-up under the progress
    bar (the room for a result not there yet), and the GPU hint, two lines once the search
    ends, was squeezed into the one line "Looking for GPUs…" had. Now the dialog is as tall as
    its set-up with every text whole, and grows to show a run's result whole."""
    _menu_action(window, "Hardware", "Measure This Machine…").trigger()
    dialog = window.findChild(MeasureDialog)
    qtbot.waitUntil(lambda: dialog.gpus is not None, timeout=HANG_GUARD_S * 1000)
    qtbot.wait(20)
    for label in (dialog.intro, dialog.gpu_hint):
        if label.isVisible():
            assert label.height() >= label.heightForWidth(label.width()), label.text()
    blank = dialog.start_button.geometry().top() - dialog.estimate_label.geometry().bottom()
    assert blank <= 3 * dialog.layout().spacing() + dialog.start_button.height(), blank

    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=HANG_GUARD_S * 1000)
    assert dialog.stage_label.text() == "Done.", dialog.result_label.text()
    qtbot.waitUntil(dialog.result_scroll.isVisible)
    shown = dialog.result_scroll.viewport()
    text = dialog.result_label
    assert text.text() and text.height() <= shown.height() + 1, (text.height(), shown.height())


def test_a_measured_machine_the_session_has_no_room_for_is_saved_but_not_added(
        qtbot, window, monkeypatch):
    """With room for one machine more, a measurement beside its datasheet machine (two
    machines) adds neither and says why; the measured machine is still kept with the
    user's presets."""
    from workbench.model import limits

    session = window.document.session
    machines = [e.hardware.name for e in session.hardware]
    monkeypatch.setattr(limits, "MAX_MACHINES", len(machines) + 1)
    _menu_action(window, "Hardware", "Measure This Machine…").trigger()
    dialog = window.findChild(MeasureDialog)
    dialog.datasheet_combo.setCurrentIndex(dialog.datasheet_combo.findData("xeon-8480"))
    qtbot.mouseClick(dialog.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=HANG_GUARD_S * 1000)
    assert dialog.stage_label.text() == "Done; not added to the session."
    shown = dialog.result_label.text()
    assert "Saved with your presets as measured-" in shown
    assert (f"Not added to the session: the session would hold {len(machines) + 2} machines "
            f"(adding 2); at most {len(machines) + 1}.") in shown
    assert [e.hardware.name for e in session.hardware] == machines


def test_timing_an_operation_when_the_session_has_no_room_for_this_machine(
        qtbot, window, monkeypatch):
    """Measure on This Machine adds this computer's measured machine to the session first:
    with no room for it, nothing is timed or added, and the message says why."""
    from workbench.model import limits

    measured = measure_machine("tiny")
    save_machine(measured.hardware, measured.provenance)
    window.add_kind_actions["reduction"].trigger()
    session = window.document.session
    machines = [e.hardware.name for e in session.hardware]
    points = len(session.measurements)
    monkeypatch.setattr(limits, "MAX_MACHINES", len(machines))
    _menu_action(window, "Edit", "Measure on This Machine").trigger()
    assert not window.operation_timer.running
    assert window.errors and window.errors[-1].startswith(
        "This machine's measured roofs were not added to the session: the session would hold "
        f"{len(machines) + 1} machines (adding 1); at most {len(machines)}")
    assert [e.hardware.name for e in session.hardware] == machines
    assert len(session.measurements) == points
