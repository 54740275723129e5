"""The window stays as a newcomer left it while they move around it at a laptop's 1366 × 768:
the room the Model tab's Throughput chart takes from the roofline chart is given back when
it is left (the roofline chart and the editor stayed squeezed for the rest of the run), and
nothing of one session is shown as if it were the next one's (the operation selected in the
last session selected its namesake by number in the next, a session without a model showed
the last session's model set-up in the Model tab)."""

from __future__ import annotations

from conftest import EXAMPLES, HANG_GUARD_S
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit

EXAMPLE = {p.name: p for p in EXAMPLES}
LAPTOP = (1366, 768)


def _throughput(panel) -> int:
    return panel.pages.indexOf(panel.chart.parentWidget())


def _show_throughput(qtbot, win):
    win.model_dock.raise_()
    panel = win.model_panel
    qtbot.waitUntil(panel.isVisible)
    panel.pages.setCurrentIndex(_throughput(panel))
    chart = panel.chart
    qtbot.waitUntil(lambda: chart.visibleRegion().boundingRect().height()
                    >= chart.minimumHeight(), timeout=HANG_GUARD_S * 1000)
    return panel


def test_leaving_the_throughput_chart_gives_the_roofline_chart_its_room_back(
        open_window, qtbot):
    win = open_window(EXAMPLE["llama31_8b_inference.yaml"], size=LAPTOP)
    qtbot.wait(50)
    canvas, editor = win.canvas.height(), win.editor_dock.height()
    panel = _show_throughput(qtbot, win)
    qtbot.waitUntil(lambda: win.canvas.height() < canvas, timeout=HANG_GUARD_S * 1000)  # it took room

    win.results_dock.raise_()  # back to the results table
    qtbot.waitUntil(lambda: abs(win.canvas.height() - canvas) <= 2, timeout=HANG_GUARD_S * 1000)
    assert abs(win.editor_dock.height() - editor) <= 2

    # the same from the Model tab's own Results page
    _show_throughput(qtbot, win)
    qtbot.waitUntil(lambda: win.canvas.height() < canvas, timeout=HANG_GUARD_S * 1000)
    panel.pages.setCurrentIndex(0)
    qtbot.waitUntil(lambda: abs(win.canvas.height() - canvas) <= 2, timeout=HANG_GUARD_S * 1000)


def test_a_row_the_user_sized_is_kept_when_the_chart_is_left(open_window, qtbot):
    win = open_window(EXAMPLE["llama31_8b_inference.yaml"], size=LAPTOP)
    qtbot.wait(50)
    _show_throughput(qtbot, win)
    qtbot.wait(50)
    grown = win.model_dock.height()
    # the user sizes the row (Qt's resizeDocks gives some other height than the one asked
    # for a tabbed row; any height but the one the chart gave it will do)
    win.resizeDocks([win.model_dock], [grown + 60], Qt.Orientation.Vertical)
    qtbot.waitUntil(lambda: abs(win.model_dock.height() - grown) > 5, timeout=HANG_GUARD_S * 1000)
    canvas = win.canvas.height()
    win.results_dock.raise_()
    qtbot.wait(100)
    assert abs(win.canvas.height() - canvas) <= 2


def test_an_opened_session_starts_on_its_own_first_operation(open_window, qtbot):
    win = open_window(EXAMPLE["llama_ffn.yaml"], size=LAPTOP)
    second = win.document.session.operations[1]
    win.workspace.selection.select(second.id)
    assert win.operations_panel.selected_ids() == [second.id]
    assert win.open_example(EXAMPLE["teaching_machine.yaml"])
    ops = win.document.session.operations
    assert win.workspace.selection.current == ops[0].id
    # the list and the editor show it
    assert win.operations_panel.selected_ids() == [ops[0].id]
    qtbot.waitUntil(lambda: win.editor.operation_id == ops[0].id, timeout=HANG_GUARD_S * 1000)


def test_a_session_without_a_model_shows_no_model_set_up(open_window, qtbot):
    win = open_window(EXAMPLE["llama31_8b_inference.yaml"], size=LAPTOP)
    win.model_dock.raise_()
    panel = win.model_panel
    qtbot.waitUntil(panel.isVisible)
    form = panel.editor.form
    assert any(w.isVisible() for w in form.findChildren(QAbstractSpinBox))
    assert win.open_example(EXAMPLE["sharded_matmul.yaml"])
    assert not win.document.session.models
    qtbot.wait(50)
    # no field of the last session's model is left on screen, enabled or not
    shown = [w for kind in (QAbstractSpinBox, QComboBox, QLineEdit)
             for w in form.findChildren(kind) if w.isVisible()]
    assert shown == [], [w.objectName() for w in shown]
    assert panel.editor.none.isVisible() and "Add Model" in panel.editor.none.text()


def test_the_model_tabs_fields_are_shown_whole(open_window, qtbot):
    """The form of the Model tab, first shown on a session with a model, is as wide as its
    fields: its column was made as narrow as a hidden form, and every field was cut."""
    win = open_window(EXAMPLE["llama31_8b_inference.yaml"], size=LAPTOP)
    win.model_dock.raise_()
    panel = win.model_panel
    qtbot.waitUntil(panel.isVisible)
    qtbot.wait(50)
    scroll = panel._left.viewport()
    fields = [w for kind in (QAbstractSpinBox, QComboBox) for w in
              panel.editor.form.findChildren(kind) if w.isVisible()]
    assert len(fields) > 5
    cut = [w.objectName() for w in fields
           if w.mapTo(scroll, w.rect().topRight()).x() > scroll.width()]
    assert cut == []
