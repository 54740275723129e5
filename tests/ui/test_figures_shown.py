"""What a user sees of the unit an operation runs on, the defaults it took, measured figures
and warnings: the derivation, the hardware panel and the measurements panel, driven through
their real widgets."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from workbench.document import Document
from workbench.io.sessions import loads_session
from workbench.ui.bridge import Workspace
from workbench.ui.editors.operation_editor import OperationEditor
from workbench.ui.panels.hardware_panel import HardwarePanel
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

SESSION = """\
schema_version: 2
hardware:
  - name: Hopper-like
    compute: {fp32: 67 TFLOP/s, bf16: 989.4 TFLOP/s}
    vector_compute: {fp32: 67 TFLOP/s, bf16: 133.8 TFLOP/s}
    memory: {hbm: 3.35 TB/s, l2: 12 TB/s}
    measured: [memory.l2]
    launch_overhead: 8 us
  - name: No vector figures
    compute: {bf16: 100 TFLOP/s, int8: 400 TOP/s}
    memory: {sram: 1 TB/s}
operations:
  - name: gelu, unfused
    kind: elementwise
    n: 4096
    dtype: bf16
    steps: [{op: fma}, {op: gelu}, {op: add, inputs: [r]}]
  - {name: GEMM, kind: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16}
"""


def workspace_of(text: str = SESSION) -> Workspace:
    return Workspace(Document(loads_session(text, "figures.yaml")))


@pytest.fixture
def editor(qtbot):
    workspace = workspace_of()
    widget = OperationEditor(workspace)
    qtbot.addWidget(widget)
    widget.resize(520, 900)
    widget.show()
    return workspace, widget


def select(workspace: Workspace, name: str) -> None:
    entry = next(e for e in workspace.document.session.operations if e.operation.name == name)
    workspace.selection.select(entry.id)


def test_the_derivation_names_the_vector_unit_and_the_launches(editor):
    workspace, widget = editor
    select(workspace, "gelu, unfused")
    text = widget.derivation_text()
    assert "unit               vector units (CUDA cores, VPU, AVX)" in text
    assert "kernels            3 (one launch each)" in text
    assert "bf16 vector peak 134 TFLOP/s  (vector units)" in text
    assert "ridge        peak / bandwidth = 134 TFLOP/s / 3.35 TB/s = 39.9 FLOP/B" in text
    # a machine without vector figures says its matrix peak stands in
    assert "lists no vector peaks: its matrix peak stands in" in text
    # an unfused chain of tiny tensors: three launches of the rule-of-thumb overhead
    assert "overhead (max(T_math, T_mem) = " in text
    assert "< 3 × launch overhead 8 µs (rule of thumb))" in text
    # the defaults it took are listed
    assert "Defaults taken (2)" in text
    assert "fused = false" in text and "write_allocate = false" in text


def test_the_derivation_names_the_matrix_unit_for_a_gemm(editor):
    workspace, widget = editor
    select(workspace, "GEMM")
    text = widget.derivation_text()
    assert "bf16 peak 989 TFLOP/s  (matrix units)" in text
    assert "= 295 FLOP/B" in text
    assert "vector peak" not in text
    assert "batch = 1" in text  # the neutral default, named


@pytest.fixture
def panel(qtbot):
    workspace = workspace_of()
    widget = HardwarePanel(workspace)
    qtbot.addWidget(widget)
    widget.resize(400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    return workspace, widget


def show_machine(widget: HardwarePanel, workspace: Workspace, index: int) -> None:
    hw_id = workspace.document.session.hardware[index].id
    widget.machine_list.setCurrentItem(widget.item_for(hw_id))
    assert widget.current_machine == hw_id


def row_labels(widget: HardwarePanel) -> list[str]:
    table = widget.ceilings_table
    return [table.item(r, 0).text() for r in range(table.rowCount()) if table.item(r, 0)]


def test_the_panel_shows_vector_peaks_measured_levels_and_the_rule_of_thumb(qtbot, panel):
    workspace, widget = panel
    show_machine(widget, workspace, 0)
    labels = row_labels(widget)
    assert "Compute, vector units — dense peak (FLOP/s)" in labels
    assert "l2 · measured" in labels and "hbm" in labels
    assert widget.value_edit("vector_compute", "bf16").text() == "133.8 TFLOP/s"
    assert widget.overhead_label.text() == "Launch overhead (rule of thumb)"
    # edit a vector peak as a user would
    edit = widget.value_edit("vector_compute", "bf16")
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClicks(edit, "120 TFLOP/s\r")
    hw = workspace.document.session.hardware[0].hardware
    assert hw.vector_compute["bf16"] == 120e12
    assert hw.compute["bf16"] == 989.4e12  # the matrix peak is another figure
    workspace.document.undo()
    assert workspace.document.session.hardware[0].hardware.vector_compute["bf16"] == 133.8e12


def test_a_vector_precision_is_added_from_the_form(qtbot, panel):
    workspace, widget = panel
    show_machine(widget, workspace, 1)
    assert "Compute, vector units — dense peak (FLOP/s)" not in row_labels(widget)
    widget.add_kind_combo.setCurrentIndex(widget.add_kind_combo.findData("vector_compute"))
    widget.add_name_combo.setCurrentIndex(widget.add_name_combo.findText("bf16"))
    widget.add_value_edit.setFocus()
    qtbot.keyClicks(widget.add_value_edit, "25 TFLOP/s\r")
    hw = workspace.document.session.hardware[1].hardware
    assert hw.vector_compute == {"bf16": 25e12}
    assert widget.value_edit("vector_compute", "bf16").text() == "25 TFLOP/s"


def test_a_hand_made_machine_with_suspicious_figures_is_warned_about(panel):
    workspace, widget = panel
    show_machine(widget, workspace, 1)
    text = widget.provenance_label.text()
    assert "⚠" in text
    assert "looks like a sparse (2:4) figure" in text  # int8 400 TOP/s is 4× bf16 100
    assert "main-memory level &#x27;sram&#x27; looks like a cache" in text
    show_machine(widget, workspace, 0)
    assert "⚠" not in widget.provenance_label.text()


MEASURED = SESSION + """\
measurements:
  - {name: too fast, operation: GEMM, hardware: Hopper-like, time: 50 us}
  - {name: plausible, operation: GEMM, hardware: Hopper-like, time: 200 us}
"""


@pytest.fixture
def window(qtbot, tmp_path):
    create_app()
    win = MainWindow()
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()


def test_a_measured_point_above_its_roof_says_so(qtbot, window, tmp_path):
    path = tmp_path / "measured.yaml"
    path.write_text(MEASURED, encoding="utf-8")
    assert window.open_path(path)
    window.measurements_dock.show()
    window.measurements_dock.raise_()
    model = window.measurements_panel.model
    qtbot.waitUntil(lambda: model.rowCount() == 2)
    # 2·4096³ = 137.4 GFLOP: at most 989.4 TFLOP/s, so no faster than 139 µs
    verdicts = {model.text(r, "name"): model.text(r, "verdict") for r in range(2)}
    assert verdicts["too fast"].startswith("⚠ above its roof: check the counting or the peak")
    assert "above its roof" not in verdicts["plausible"]


def test_the_canvas_redraws_the_roof_when_an_operation_changes_unit(qtbot):
    from PySide6.QtWidgets import QApplication

    from workbench.ui.chart.canvas import RooflineCanvas

    text = SESSION.split("operations:")[0] + (
        "operations:\n  - {name: typed, kind: custom, flops: 1 TFLOP, bytes: 1 GB, "
        "precision: bf16}\n")
    workspace = workspace_of(text)
    canvas = RooflineCanvas(workspace)
    qtbot.addWidget(canvas)
    canvas.resize(760, 560)
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    hopper = workspace.document.session.hardware[0].id
    op = workspace.document.session.operations[0].id

    def flat_roofs() -> dict[str, float]:
        return {r[2]: r[4][0] for r in canvas.roof_items() if r[0] == hopper and r[1] == "compute"}

    assert flat_roofs() == pytest.approx({"bf16": 989.4e12})
    workspace.document.set_param(op, "unit", "vector")
    QApplication.processEvents()
    assert flat_roofs() == pytest.approx({"bf16 vector": 133.8e12})
    (_, _, _x, y), = [p for p in canvas.point_items() if p[1] == hopper]
    assert y == pytest.approx(min(133.8e12, 1000 * 3.35e12))  # on the roof it is judged by


def test_the_results_table_says_which_unit_gave_the_ceiling(qtbot):
    from PySide6.QtCore import Qt

    from workbench.ui.panels.results_table import COLUMN_INDEX, ResultsTable

    workspace = workspace_of()
    table = ResultsTable(workspace)
    qtbot.addWidget(table)
    table.resize(1400, 500)
    table.show()
    qtbot.waitExposed(table)
    model = table.model
    tips = {}
    for row in range(model.rowCount()):
        name = model.data(model.index(row, COLUMN_INDEX["operation"]))
        machine = model.data(model.index(row, COLUMN_INDEX["machine"]))
        tips[(name, machine)] = model.data(model.index(row, COLUMN_INDEX["ceiling"]),
                                           Qt.ItemDataRole.ToolTipRole)
    assert tips[("gelu, unfused", "Hopper-like")] == "bf16 peak of the vector units"
    assert tips[("GEMM", "Hopper-like")].startswith("bf16 peak of the matrix units")
    assert "lists no vector peaks" in tips[("gelu, unfused", "No vector figures")]
    cells = {model.data(model.index(r, COLUMN_INDEX["ceiling"])) for r in range(model.rowCount())}
    assert "134 TFLOP/s" in cells
