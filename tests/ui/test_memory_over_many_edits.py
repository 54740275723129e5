"""Thousands of live edits (a soak, a long working session) leave the window's memory as a
few edits do: what the chart and the derivation keep between edits is what they show, not
one more entry for every value ever typed."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from tests.conftest import open_editor
from workbench.document import Document
from workbench.io.sessions import load_session
from workbench.ui.bridge import Workspace
from workbench.ui.chart.canvas import RooflineCanvas

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"


def _symbols_kept(canvas: RooflineCanvas) -> int:
    """The symbol images the chart's scatter items keep in their atlases (pyqtgraph draws
    each look of a spot once and keeps it)."""
    import pyqtgraph as pg

    return sum(len(item.fragmentAtlas) for item in canvas.plot_widget.scene().items()
               if isinstance(item, pg.ScatterPlotItem))


def test_the_chart_keeps_one_symbol_per_look_however_many_edits(qtbot):
    """The selected operation's ring and the sweeps' crossing marks are drawn again on every
    edit; their symbols are drawn once."""
    document = Document(load_session(EXAMPLES / "critical_batch_sweep.yaml"))
    workspace = Workspace(document)
    canvas = RooflineCanvas(workspace)
    qtbot.addWidget(canvas)
    canvas.resize(760, 560)
    canvas.show()
    qtbot.waitExposed(canvas)
    entry = next(e for e in document.session.operations if "m" in e.operation.params)
    workspace.selection.select(entry.id)
    QApplication.processEvents()
    first = entry.operation.params["m"]
    document.set_param(entry.id, "m", first + 1)
    QApplication.processEvents()
    kept = _symbols_kept(canvas)
    assert kept > 0
    for step in range(2, 62):
        document.set_param(entry.id, "m", first + step)
        QApplication.processEvents()
    assert _symbols_kept(canvas) <= kept + 2


def test_the_derivation_keeps_the_widths_of_the_texts_it_shows_not_of_every_value_typed(qtbot):
    """Thousands of edits (a soak, a long session) leave the derivation's memory as one
    edit does: the widths it keeps are those of the texts of its last render."""
    document, _workspace, editor, op_id = open_editor(
        qtbot, load_session(EXAMPLES / "llama_ffn.yaml"))
    QApplication.processEvents()
    view = editor.derivation
    shown = view.measured_texts
    assert shown > 20
    for m in range(1000, 1080):
        document.set_param(op_id, "m", m)
        QApplication.processEvents()
    assert "2·batch·M·N·K = 2·1·1079·28672·8192" in view.toPlainText()
    assert view.measured_texts <= shown + 5
