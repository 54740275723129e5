"""Each row and read-out speaks of its own machine: with a TPU v5e first and an H100 second,
"int8 weights" is compute-bound on the TPU (ridge 240, intensity 241) and memory-bound on
the H100 (ridge 295). The Operations table's Bound column said "compute" (the first machine
only) and the status bar said "compute-bound on the TPU" over the H100's point."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, HANG_GUARD_S, add_model_through_dialog
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from workbench.ui.panels.operations_model import COL_BOUND
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

CRITICAL = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")
INT8 = "int8 weights, bf16 activations"


@pytest.fixture
def window(open_window):
    return open_window(CRITICAL, (1366, 768))


def _ids(window):
    session = window.document.session
    op = next(e.id for e in session.operations if e.operation.name == INT8)
    machines = {e.hardware.label: e.id for e in session.hardware}
    return op, machines


def test_the_operations_bound_column_speaks_of_every_machine(window):
    _op, _machines = _ids(window)
    model = window.operations_panel.view.model()
    row = next(r for r in range(model.rowCount())
               if model.index(r, 2).data() == INT8)
    cell = model.index(row, COL_BOUND)
    assert cell.data() == "mixed"  # not the first machine's "compute"
    view = window.operations_panel.view
    assert view.fontMetrics().horizontalAdvance("mixed") + 8 <= view.columnWidth(COL_BOUND)
    tip = cell.data(Qt.ItemDataRole.ToolTipRole)
    assert "compute-bound on Google Cloud TPU v5e" in tip
    assert "memory-bound on NVIDIA H100 SXM5 80GB" in tip
    # where the machines agree, one word
    bf16 = next(r for r in range(model.rowCount()) if model.index(r, 2).data() != INT8)
    assert model.index(bf16, COL_BOUND).data() == "memory"
    # and the results rows agree with it, each for its machine
    results = window.results_table.view.model()
    bound_col = next(c for c in range(results.columnCount())
                     if results.headerData(c, Qt.Orientation.Horizontal) == "Bound")
    bounds = {(results.index(r, 0).data(), results.index(r, 1).data()):
              results.index(r, bound_col).data() for r in range(results.rowCount())}
    assert bounds[(INT8, "NVIDIA H100 SXM5 80GB")] == "memory"
    assert bounds[(INT8, "Google Cloud TPU v5e (per chip)")] == "compute"


def test_the_status_bar_speaks_of_the_hovered_points_machine(qtbot, window):
    op, machines = _ids(window)
    canvas = window.canvas
    where = {(o, h): (x, y) for o, h, x, y in canvas.point_items()}
    h100 = next(i for name, i in machines.items() if "H100" in name)
    x, y = where[(op, h100)]
    qtbot.wait(100)  # the chart's view settles on its first layout
    with qtbot.waitSignal(canvas.cursor_text, timeout=HANG_GUARD_S * 1000):
        qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(x, y))
    text = window.cursor_label.text()
    assert text.endswith(f"{INT8}: memory-bound on NVIDIA H100 SXM5 80GB"), text
    tpu = next(i for name, i in machines.items() if "TPU" in name)
    bf16 = next(e.id for e in window.document.session.operations if e.id != op)
    x, y = where[(bf16, tpu)]
    with qtbot.waitSignal(canvas.cursor_text, timeout=HANG_GUARD_S * 1000):
        qtbot.wait(40)  # pyqtgraph drops mouse moves closer than a frame apart
        qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(x, y))
    assert window.cursor_label.text().endswith(
        "bf16 matmul, D = F = 8192: memory-bound on Google Cloud TPU v5e (per chip)")


def test_a_new_machine_runs_bf16_work_at_a_bf16_peak(qtbot):
    """A machine defined from the Hardware panel had no bf16 peak: a bf16 GEMM on it ran at
    its fp32 peak (20 TFLOP/s). It has one, and the derivation names it."""
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.show()
    qtbot.waitExposed(win)
    win.hardware_panel.new_machine_action.trigger()
    (machine,) = win.document.session.hardware
    assert "bf16" in machine.hardware.compute
    win.add_operation("gemm")
    text = win.editor.derivation_text()
    assert "ceiling      bf16 peak 100 TFLOP/s" in text
    results = win.results_table.view.model()
    columns = {results.headerData(c, Qt.Orientation.Horizontal): c
               for c in range(results.columnCount())}
    assert results.index(0, columns["Precision"]).data() == "bf16"
    assert results.index(0, columns["Ceiling"]).data() == "100 TFLOP/s"




def _empty_window(qtbot):
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    return win


def test_a_model_skipped_on_a_machine_says_why_in_its_cells(qtbot):
    """Tensor parallelism 2 on a machine without an interconnect: the all-reduce cannot run
    there. The Model tab's cells and the Results rows say "skipped" and why, not a bare
    dash with the reason only in the derivation."""
    from workbench.ui.panels.model_panel import ROW_SHARE, ROW_T_LOWER

    win = _empty_window(qtbot)
    win.hardware_panel.new_machine_action.trigger()  # no interconnect
    add_model_through_dialog(qtbot, win, tp=2)
    win.model_dock.raise_()
    table = win.model_panel.table
    qtbot.waitUntil(lambda: table.columnCount() == 1)
    assert table.item(ROW_T_LOWER, 0).text() == "skipped"
    share = " ".join(table.item(ROW_SHARE, 0).text().split())
    assert share.startswith("skipped:") and "no interconnect for the All-reduce" in share
    assert "no interconnect" in table.item(ROW_T_LOWER, 0).toolTip()
    results = win.results_table.view.model()
    bound = next(c for c in range(results.columnCount())
                 if results.headerData(c, Qt.Orientation.Horizontal) == "Bound")
    rows = [r for r in range(results.rowCount()) if "all-reduce" in results.index(r, 0).data()]
    assert rows
    for r in rows:
        assert results.index(r, bound).data() == "skipped"
        assert "no interconnect" in results.index(r, bound).data(Qt.ItemDataRole.ToolTipRole)


def test_a_model_in_a_session_without_machines_says_a_machine_is_needed(qtbot):
    win = _empty_window(qtbot)
    add_model_through_dialog(qtbot, win)
    win.model_dock.raise_()
    qtbot.waitUntil(lambda: "No machine" in win.model_panel.summary.text())
    assert win.model_panel.summary.isVisible()
    assert "Hardware panel" in win.model_panel.summary.text()
    assert win.results_table.count_label.text().startswith("No machine")
    win.hardware_panel.new_machine_action.trigger()  # and it goes once there is one
    win.model_dock.raise_()
    qtbot.waitUntil(lambda: "No machine" not in win.model_panel.summary.text())
    assert "rows" in win.results_table.count_label.text()
