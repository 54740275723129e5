"""What the user sees, read from the widgets themselves.

The derivation as the view shows it after a run of partial updates is the text a fresh
render gives; the Results cells read as the user reads them (78 %, not 0.78 %); a click on
a point after an edit moved it selects that point's operation, at its new place only.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.ui.test_canvas import op_named, open_canvas, positions
from workbench.document import Document
from workbench.io.sessions import load_session, loads_session
from workbench.ui.bridge import Workspace
from workbench.ui.editors.derivation import DerivationView
from workbench.ui.editors.operation_editor import OperationEditor
from workbench.ui.panels.results_table import COLUMNS, ResultsTable

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"
COL = {c.key: i for i, c in enumerate(COLUMNS)}


# -- the derivation view ----------------------------------------------------------------------


def _fresh_text(qtbot, view: DerivationView) -> str:
    """What a new view shows for the sections ``view`` was last given."""
    fresh = DerivationView()
    qtbot.addWidget(fresh)
    fresh.resize(view.size())
    fresh.show()
    qtbot.waitExposed(fresh)
    fresh.show_sections(*view._source)
    return fresh.toPlainText()


@pytest.mark.parametrize(("example", "index", "param", "values"), [
    ("llama_ffn", 0, "m", [8200, 1, 65536, 3, 8192]),
    ("attention", 0, "kv_len", [1, 100_000, 4097, 2]),
    ("fusion", 0, "n", [1, 10**9, 12345]),
])
def test_partial_updates_show_what_a_fresh_render_shows(qtbot, example, index, param, values):
    document = Document(load_session(EXAMPLES / f"{example}.yaml"))
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    editor.resize(520, 900)
    editor.show()
    qtbot.waitExposed(editor)
    op_id = document.session.operations[index].id
    workspace.selection.select(op_id)
    QApplication.processEvents()
    view = editor.derivation
    partial = view.partial_renders
    for value in values:
        document.set_param(op_id, param, value)
        QApplication.processEvents()
        shown = view.toPlainText()
        assert f"{value}" in shown.replace(",", "").replace("\u00a0", "")
        assert shown == _fresh_text(qtbot, view)
    assert view.partial_renders > partial  # the updates took the partial path


# -- the Results table as displayed -----------------------------------------------------------

SESSION = """
schema_version: 2
title: derated
hardware:
  - name: Derated box
    compute: {bf16: 100 TFLOP/s, fp32: 50 TFLOP/s}
    memory: {hbm: 1 TB/s}
    efficiency: 0.78
  - name: Plain box
    compute: {bf16: 100 TFLOP/s, fp32: 50 TFLOP/s}
    memory: {hbm: 1 TB/s}
operations:
  - {name: compute bound, kind: custom, flops: 1 TFLOP, bytes: 1 GB, precision: bf16}
  - {name: memory bound, kind: custom, flops: 10 GFLOP, bytes: 1 GB, precision: bf16}
"""


def _table(qtbot) -> ResultsTable:
    workspace = Workspace(Document())
    workspace.document.replace_session(loads_session(SESSION))
    table = ResultsTable(workspace)
    qtbot.addWidget(table)
    table.resize(1400, 400)
    table.show()
    qtbot.waitExposed(table)
    return table


def _cells(table: ResultsTable) -> list[dict[str, str]]:
    proxy = table.view.model()
    return [{key: proxy.data(proxy.index(r, c), Qt.ItemDataRole.DisplayRole)
             for key, c in COL.items()} for r in range(proxy.rowCount())]


def test_results_cells_read_as_percentages_and_times(qtbot):
    rows = {(r["operation"], r["machine"]): r for r in _cells(_table(qtbot))}
    derated = rows[("compute bound", "Derated box")]
    assert derated["efficiency"] == "78 %"
    assert rows[("compute bound", "Plain box")]["efficiency"] == "—"
    # 1 TFLOP at 100 TFLOP/s: 10 ms; predicted at 78 %: 12.8 ms
    assert derated["t_math"] == "10 ms"
    assert derated["t_predicted"] == "12.8 ms"
    assert derated["fraction_of_peak"] == "100"
    assert derated["bound"] == "compute"
    # 10 GFLOP over 1 GB: I = 10, attainable 10 TFLOP/s, 10 % of the peak, memory bound
    memory = rows[("memory bound", "Plain box")]
    assert memory["intensity"] == "10.0"
    assert memory["attainable"] == "10 TFLOP/s"
    assert memory["fraction_of_peak"] == "10.0"
    assert memory["bound"] == "memory"
    assert memory["t_mem"] == "1 ms"


# -- clicking a point that an edit moved ------------------------------------------------------


def test_a_click_on_a_moved_point_selects_it_there_and_only_there(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLES / "llama_ffn.yaml")
    document = workspace.document
    gemv = op_named(workspace, "FFN up, decode GEMV")
    other = op_named(workspace, "FFN up, prefill (M=8192)")
    h100 = document.session.hardware[0].id
    old = positions(canvas)[(gemv, h100)]
    workspace.selection.select(other)

    document.set_param(gemv, "m", 64)  # 64 rows: intensity up about 64×
    QApplication.processEvents()
    new = positions(canvas)[(gemv, h100)]
    assert new[0] > old[0] * 30

    viewport = canvas.plot_widget.viewport()
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=canvas.pixel_of(*old))
    assert workspace.selection.current == other  # nothing is left at the old place
    qtbot.wait(400)  # not a double click
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=canvas.pixel_of(*new))
    assert workspace.selection.current == gemv


# -- what the chart cannot draw is said on the chart ------------------------------------------

NOT_DRAWN = """
schema_version: 2
title: not everything can be drawn
hardware:
  - name: Linked box
    compute: {bf16: 100 TFLOP/s}
    memory: {hbm: 1 TB/s}
    interconnect: {link: 100 GB/s}
  - name: Lone box
    compute: {bf16: 100 TFLOP/s}
    memory: {hbm: 1 TB/s}
operations:
  - {name: GEMM, kind: gemm, m: 1024, n: 1024, k: 1024, dtype: bf16}
  - {name: two chips, kind: sharded_matmul, b: 256, d: 4096, f: 4096, chips: 2, dtype: bf16}
"""


def test_pairs_that_cannot_be_drawn_are_counted_over_the_chart_with_their_reasons(qtbot):
    canvas, workspace = open_canvas(qtbot, loads_session(NOT_DRAWN))
    document = workspace.document
    # the sharded matmul has no interconnect on the lone box: one pair not drawn
    assert canvas.not_drawn_text() == "1 pair not drawn — hover for why"
    tip = canvas.not_drawn_hint.toolTip()
    assert "two chips on Lone box" in tip and "interconnect" in tip
    # an operation that cannot be counted: both of its pairs, with the reason
    gemm = op_named(workspace, "GEMM")
    document.set_param(gemm, "m", "four")
    QApplication.processEvents()
    assert canvas.not_drawn_text() == "3 pairs not drawn — hover for why"
    tip = canvas.not_drawn_hint.toolTip()
    assert tip.count("GEMM on ") == 2 and "cannot be counted" in tip
    assert not any(key[0] == gemm for key in positions(canvas))
    # the note sits inside the plot, and goes when everything is drawn again
    plot = canvas.plot_widget.geometry()
    assert plot.contains(canvas.not_drawn_hint.geometry().center())
    document.undo()
    document.remove_operations([op_named(workspace, "two chips")])
    QApplication.processEvents()
    assert canvas.not_drawn_text() == ""
