"""The prediction choice in the app: View ▸ Prediction switches between the derated and the
calibrated prediction and picks how kernels are launched; the Results table shows the
calibrated prediction's parts and the Measurements panel measured / T_predicted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from workbench.model.units import format_quantity
from workbench.ui.panels.measurements_model import MEASURED_COLUMNS
from workbench.ui.panels.results_model import COLUMN_INDEX

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "workbench" / "examples" / "real_kernels_h100_h200.yaml"
H100 = yaml.safe_load((ROOT / "hardware_presets" / "h100-sxm.yaml").read_text(encoding="utf-8"))


def us(text: str) -> float:
    return float(text.split()[0]) * 1e-6


@pytest.fixture
def window(open_window):
    return open_window()


def cell(window, operation: str, machine_prefix: str, key: str) -> str:
    model = window.results_table.model
    for row in range(model.rowCount()):
        data = model.row_data(row)
        if (data.text_of(COLUMN_INDEX["operation"]) == operation
                and data.text_of(COLUMN_INDEX["machine"]).startswith(machine_prefix)):
            return model.data(model.index(row, COLUMN_INDEX[key]))
    raise AssertionError(f"no row {operation} on {machine_prefix}")


def test_menu_switches_the_prediction_and_results_show_its_parts(qtbot, window):
    assert window.open_path(EXAMPLE)
    calibrated = window.prediction_actions["calibrated"]
    assert calibrated.isChecked() and window.launches_actions["kernel"].isChecked()
    # g_4096 on the H100: 2·4096³ FLOPs, 3·4096²·2 B, kernels timed alone
    t_math, t_mem = 2 * 4096 ** 3 / 989.4e12, 3 * 4096 ** 2 * 2 / 3.35e12
    cal = H100["calibration"]
    work = max(t_math / cal["efficiency"]["gemm"], t_mem / cal["efficiency"]["streaming"])
    fixed = us(cal["launch_alone"]) + us(cal["startup"]["matrix"])
    qtbot.waitUntil(lambda: cell(window, "g_4096", "NVIDIA H100", "t_work")
                    == format_quantity(work, "time"))
    assert cell(window, "g_4096", "NVIDIA H100", "t_fixed") == format_quantity(fixed, "time")
    assert cell(window, "g_4096", "NVIDIA H100", "t_predicted") == format_quantity(
        fixed + work, "time")
    assert cell(window, "g_4096", "NVIDIA H100", "kernel_class") == "gemm 0.77 · streaming 0.87"

    window.launches_actions["graph"].trigger()  # replayed from a CUDA graph
    graph = us(cal["launch_graph"]) + us(cal["startup"]["matrix"])
    qtbot.waitUntil(lambda: cell(window, "g_4096", "NVIDIA H100", "t_fixed")
                    == format_quantity(graph, "time"))

    window.prediction_actions["derated"].trigger()
    qtbot.waitUntil(lambda: cell(window, "g_4096", "NVIDIA H100", "t_work") == "—")
    assert cell(window, "g_4096", "NVIDIA H100", "t_predicted") == format_quantity(
        max(t_math, t_mem) / 0.78, "time")
    assert not window.launches_actions["graph"].isEnabled()  # launches: calibrated only
    # each change is one undo step; the file is written with the choice
    window.document.undo()
    qtbot.waitUntil(lambda: window.prediction_actions["calibrated"].isChecked())
    assert window.launches_actions["graph"].isChecked()
    window.document.undo()
    qtbot.waitUntil(lambda: window.launches_actions["kernel"].isChecked())


def test_measurements_show_measured_over_predicted(qtbot, window):
    assert window.open_path(EXAMPLE)
    window.measurements_dock.raise_()
    panel = window.measurements_panel
    qtbot.waitUntil(lambda: panel.model.rowCount() == 70)
    column = [key for key, _t, _tip in MEASURED_COLUMNS].index("vs_predicted")
    shown = [panel.model.data(panel.model.index(r, column)) for r in range(70)]
    ratios = [float(text.split()[0]) for text in shown]
    assert all(0.8 <= r <= 1.2 for r in ratios), shown
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    first = data["measurements"][0]  # g_8192 on the H100: 1.38 ms against 1.45 ms predicted
    assert first["name"] == "g_8192 (h100-sxm)"
    assert shown[0] == "0.95 ×"


def test_a_calibrated_preset_is_not_an_edited_one_and_revert_keeps_the_choice(qtbot):
    from PySide6.QtCore import Qt

    from workbench.document import Document
    from workbench.io.sessions import load_session
    from workbench.ui.bridge import Workspace
    from workbench.ui.panels.hardware_panel import HardwarePanel

    document = Document()
    document.replace_session(load_session(EXAMPLE))
    panel = HardwarePanel(Workspace(document))
    qtbot.addWidget(panel)
    panel.resize(400, 900)
    panel.show()
    qtbot.waitExposed(panel)
    h100 = document.session.hardware[0].id
    panel.machine_list.setCurrentItem(panel.item_for(h100))
    assert not panel.revert_action.isEnabled()  # the session's choice is not an edit
    assert ", edited" not in panel.origin_label.text()
    edit = panel.value_edit("memory", "hbm")
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, "2 TB/s")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert panel.revert_action.isEnabled()
    panel.revert_action.trigger()
    hw = document.machine(h100).hardware
    assert hw.memory["hbm"] == 3.35e12
    assert (hw.prediction, hw.launches) == ("calibrated", "kernel")


def test_hardware_panel_says_where_the_calibrated_figures_come_from(qtbot):
    from workbench.document import Document
    from workbench.io.sessions import loads_session
    from workbench.ui.bridge import Workspace
    from workbench.ui.panels.hardware_panel import HardwarePanel

    document = Document()
    document.replace_session(loads_session(
        "schema_version: 2\nhardware:\n  - preset: h200\n  - preset: l4\n", "s.yaml"))
    panel = HardwarePanel(Workspace(document))
    qtbot.addWidget(panel)
    panel.show()
    h200, l4 = (e.id for e in document.session.hardware)
    panel.machine_list.setCurrentItem(panel.item_for(h200))
    text = panel.provenance_label.text()
    assert "Calibrated prediction figures: measured 2026-11-26, PyTorch 2.11.0+cu130" in text
    panel.machine_list.setCurrentItem(panel.item_for(l4))
    assert "Calibrated prediction figures: assumed (the H100 SXM's)" in \
        panel.provenance_label.text()


def test_undo_names_the_prediction_as_the_menu_does(qtbot, window):
    assert window.open_path(EXAMPLE)
    window.prediction_actions["derated"].trigger()
    assert window.undo_action.text() == "&Undo Prediction: Derated"
    window.prediction_actions["calibrated"].trigger()
    assert window.undo_action.text() == "&Undo Prediction: Calibrated"
    window.launches_actions["graph"].trigger()
    assert window.undo_action.text() == "&Undo Prediction: Kernels replayed from a CUDA graph"
