"""The main window as a newcomer meets it: every operation keeps its colour on the chart
(reorder, hide, a model's set-up, undo, save and reopen), nothing of one session stays on
screen in the next (the legend's place and rows, the status bar), an example is named in
the title, and points an edit moves off the chart are counted with a way back."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ANTIALIASED_ENDS, EXAMPLES, painted_canvas, stale_pixels
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog

from workbench.ui.window.main_window import MainWindow

EXAMPLE = {p.name: p for p in EXAMPLES}


@pytest.fixture
def window(open_window):
    return open_window(EXAMPLE["llama_ffn.yaml"], (1300, 800))


def fills(win) -> dict[tuple[str, str], str]:
    """``{(operation name, machine name): colour}`` of every point on the chart."""
    doc = win.document
    return {(doc.operation(op_id).operation.name, doc.machine(hw_id).hardware.name): color
            for (op_id, hw_id), color in win.canvas.point_colors().items()}


def by_operation(points: dict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for (name, _machine), color in points.items():
        out.setdefault(name, set()).add(color)
    return out


def common(before: dict, after: dict) -> tuple[dict, dict]:
    keys = before.keys() & after.keys()
    return {k: before[k] for k in keys}, {k: after[k] for k in keys}


# -- colours belong to operations ------------------------------------------------------------


def test_alt_down_hide_undo_and_reopen_keep_each_operations_colour(qtbot, window, tmp_path):
    win = window
    doc = win.document
    first, second = doc.session.operations[0], doc.session.operations[1]
    names = (first.operation.name, second.operation.name)
    before = fills(win)
    colours = by_operation(before)
    assert colours[names[0]] != colours[names[1]]  # two colours that could be swapped

    panel = win.operations_panel
    panel.select([first.id], first.id)
    panel.move_down_action.trigger()  # Alt+Down
    assert [e.operation.name for e in doc.session.operations[:2]] == [names[1], names[0]]
    assert fills(win) == before

    doc.set_operation_field(second.id, "visible", False)  # hide one: the others keep theirs
    shown = fills(win)
    assert shown == {k: v for k, v in before.items() if k[0] != names[1]}

    win.undo_action.trigger()
    win.undo_action.trigger()
    assert [e.operation.name for e in doc.session.operations[:2]] == list(names)
    assert fills(win) == before

    win.redo_action.trigger()  # moved down again, then saved and opened
    path = tmp_path / "moved.yaml"
    assert win.save_to(path)
    assert win.open_path(path)
    assert [e.operation.name for e in win.document.session.operations[:2]] == [names[1], names[0]]
    assert fills(win) == before


def _add_llama(qtbot, win, phase="decode"):
    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData("Llama-3.1-8B"))
    dialog.form.phase.setCurrentText(phase)
    dialog.form.batch.setValue(1)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible())
    return win.document.session.models[0]


def _type(qtbot, spin, text):
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def _kinds(win) -> dict[str, set[str]]:
    """Colours on the chart by kind of operation."""
    doc = win.document
    out: dict[str, set[str]] = {}
    for (op_id, _hw), color in win.canvas.point_colors().items():
        out.setdefault(doc.operation(op_id).operation.kind, set()).add(color)
    return out


def test_tensor_parallelism_in_the_model_tab_recolours_nothing(qtbot, gpu_window, tmp_path):
    win = gpu_window
    model = _add_llama(qtbot, win)
    before = fills(win)
    kinds = _kinds(win)
    # one colour per kind of operation, no two kinds alike
    assert all(len(c) == 1 for c in kinds.values())
    assert len({c for cs in kinds.values() for c in cs}) == len(kinds) >= 4

    _type(qtbot, win.model_panel.editor.form.tp, "8")
    assert model.setup.tp == 8
    after = fills(win)
    assert any(win.document.operation(i).operation.kind == "all_reduce" for i in model.op_ids)
    old, new = common(before, after)
    assert len(old) == len(before) and new == old
    kinds = _kinds(win)
    assert "all_reduce" in kinds
    assert all(len(c) == 1 for c in kinds.values())
    assert len({c for cs in kinds.values() for c in cs}) == len(kinds)

    win.undo_action.trigger()
    assert model.setup.tp == 1
    assert fills(win) == before
    win.redo_action.trigger()
    assert win.save_to(tmp_path / "tp8.yaml")
    assert win.open_path(tmp_path / "tp8.yaml")
    assert fills(win) == after


def test_a_new_gemm_in_a_model_session_takes_a_colour_not_in_use(qtbot, gpu_window):
    win = gpu_window
    _add_llama(qtbot, win)
    in_use = set(win.canvas.point_colors().values())
    win.add_kind_actions["gemm"].trigger()
    new = win.workspace.selection.current
    mine = {c for (op_id, _hw), c in win.canvas.point_colors().items() if op_id == new}
    assert len(mine) == 1 and not mine & in_use


# -- nothing carries over between sessions ---------------------------------------------------


def _drag_legend(win, by: QPoint) -> None:
    canvas = win.canvas
    legend = canvas.legend_item
    view = canvas.plot_widget.viewport()
    start = canvas.plot_widget.mapFromScene(legend.sceneBoundingRect().center())

    def send(kind, pos, button, buttons):
        event = QMouseEvent(kind, QPointF(pos), QPointF(view.mapToGlobal(pos)), button, buttons,
                            Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(view, event)

    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseButtonPress, start, left, left)
    for step in range(1, 11):
        send(QEvent.Type.MouseMove, start + by * step / 10, none, left)
    send(QEvent.Type.MouseButtonRelease, start + by, left, none)


def _legend_place(win) -> tuple[float, float]:
    """The legend's top-left corner relative to the plot area's."""
    QApplication.processEvents()
    win.canvas.relayout()
    legend = win.canvas.legend_item.sceneBoundingRect()
    plot = win.canvas.plot_widget.getPlotItem().getViewBox().sceneBoundingRect()
    return legend.left() - plot.left(), legend.top() - plot.top()


@pytest.mark.parametrize("how", ["open", "example"])
def test_a_dragged_legend_stays_with_its_session(qtbot, window, how):
    win = window
    fresh = MainWindow()  # where the next session's legend goes in a window of its own
    fresh.resize(win.size())
    fresh.open_path(EXAMPLE["fusion.yaml"])
    fresh.show()
    qtbot.waitExposed(fresh)
    wanted = _legend_place(fresh)
    fresh.close()
    fresh.deleteLater()

    start = _legend_place(win)
    _drag_legend(win, QPoint(-250, 160))
    moved = _legend_place(win)
    assert moved != pytest.approx(start, abs=20)
    if how == "open":
        assert win.open_path(EXAMPLE["fusion.yaml"])
    else:
        assert win.open_example(EXAMPLE["fusion.yaml"])
    assert _legend_place(win) == pytest.approx(wanted, abs=1.5)


@pytest.mark.parametrize("then", ["new", "example"])
def test_the_last_sessions_legend_rows_are_not_left_on_screen(qtbot, window, then):
    win = window
    assert win.open_example(EXAMPLE["llama31_8b_inference.yaml"])
    painted_canvas(win)
    assert len(win.canvas.legend_texts()) > 10
    if then == "new":
        assert win.new_session()
    else:
        assert win.open_example(EXAMPLE["fusion.yaml"])
    assert stale_pixels(*painted_canvas(win)) == 0


def test_a_legend_moving_into_the_plot_leaves_no_rows_below_it(qtbot, window):
    win = window
    assert win.open_example(EXAMPLE["llama31_8b_inference.yaml"])
    painted_canvas(win)
    doc = win.document
    for model in list(doc.session.models):  # fewer rows each time: the legend moves inside
        doc.remove_model(model.id)
        # (a legend row left behind is hundreds of pixels; a partial repaint may shade a
        # few anti-aliased ends of the legend's sample lines otherwise than a full one)
        assert stale_pixels(*painted_canvas(win)) <= ANTIALIASED_ENDS
    assert len(win.canvas.legend_texts()) <= 4


def test_new_and_open_clear_the_status_bar(qtbot, window):
    win = window
    canvas = win.canvas
    machine = win.document.session.hardware[0].hardware.name
    # hover the chart: the read-out names the machine
    plot = canvas.plot_widget
    centre = plot.mapFromScene(plot.getPlotItem().getViewBox().sceneBoundingRect().center())
    qtbot.mouseMove(plot.viewport(), centre)
    qtbot.waitUntil(lambda: machine in win.cursor_label.text())
    win.statusBar().showMessage(f"Opened {machine}", 4000)
    assert win.new_session()
    assert win.cursor_label.text() == ""
    assert machine not in win.statusBar().currentMessage()
    qtbot.mouseMove(plot.viewport(), centre + QPoint(5, 5))
    qtbot.waitUntil(lambda: bool(win.cursor_label.text()))
    assert win.open_path(EXAMPLE["fusion.yaml"])
    assert win.cursor_label.text() == ""



def test_a_new_session_after_a_titled_one_fits_a_narrow_window(qtbot, window):
    """The Llama FFN example (titled), File ▸ New, an H100 and a GEMM, and the window made
    800 px wide: the plot kept the width of the last session's hidden title and ran past the
    window's right edge (the flat roof, its GEMM and the legend's rows cut off)."""
    from workbench.io.presets import get_preset

    win = window
    assert win.document.session.title
    assert win.new_session()
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    win.add_operation("gemm")
    win.resize(800, 520)
    canvas = win.canvas
    qtbot.waitUntil(lambda: canvas.width() < 500)
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    plot = canvas.plot_widget
    width = plot.viewport().width()
    for item in (canvas.plot_item, canvas.view_box):  # the chart, and the plot's frame in it
        right = plot.mapFromScene(item.sceneBoundingRect()).boundingRect().right()
        assert right <= width, (item, right, width)

# -- an example's name; Save keeps the installed example untouched ---------------------------


def test_an_example_is_named_in_the_title_and_save_asks_where(qtbot, window, tmp_path,
                                                              monkeypatch):
    win = window
    example = EXAMPLE["attention.yaml"]
    original = example.read_bytes()
    assert win.open_example(example)
    title = win.windowTitle()
    assert title.startswith("attention.yaml") and "Untitled" not in title
    assert "(example)" in title
    op = win.document.session.operations[0]
    win.document.set_operation_field(op.id, "name", "mine")
    assert win.isWindowModified() and win.windowTitle().startswith("attention.yaml")

    asked = []

    def fake_save(parent, caption, start, file_filter):
        asked.append(start)
        return str(tmp_path / "copy.yaml"), file_filter

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake_save))
    assert win.save_action.isEnabled()
    win.save_action.trigger()
    assert asked and Path(asked[0]).name == "attention.yaml"
    assert Path(asked[0]).parent != example.parent
    assert example.read_bytes() == original
    assert "name: mine" in (tmp_path / "copy.yaml").read_text()
    assert win.windowTitle().startswith("copy.yaml")
    assert win.new_session()
    assert win.windowTitle().startswith("Untitled")


def test_the_built_in_example_at_start_is_named_in_the_title(qtbot):
    from workbench.io.presets import DEFAULT_EXAMPLE
    from workbench.ui.window.launch import start

    win = start()
    qtbot.addWidget(win)
    assert win.windowTitle().startswith(f"{DEFAULT_EXAMPLE} (example)")
    assert "Untitled" not in win.windowTitle()


# -- points an edit moves off the chart ------------------------------------------------------


def test_points_moved_off_the_chart_are_counted_and_one_click_shows_them(qtbot, window):
    win = window
    canvas = win.canvas
    hint = canvas.outside_hint
    assert not hint.isVisible()
    op = win.document.session.operations[0]
    machines = len(win.document.session.hardware)
    for name in ("m", "n", "k"):
        win.document.set_param(op.id, name, 1_000_000)
    win.document.seal()
    assert hint.isVisible()
    assert hint.text().startswith(f"{machines} point")
    assert "outside the view" in hint.text() and "Ctrl+0" in hint.text()
    assert canvas.rect().contains(hint.geometry())
    qtbot.mouseClick(hint, Qt.MouseButton.LeftButton)
    assert not hint.isVisible()
    (x0, x1), (y0, y1) = canvas.view_range()
    assert all(x0 <= x <= x1 and y0 <= y <= y1 for _, _, x, y in canvas.point_items())
    win.undo_action.trigger()
    win.fit_action.trigger()
    assert not hint.isVisible()


def test_a_model_switched_to_prefill_shows_how_many_points_left_the_view(qtbot, gpu_window):
    win = gpu_window
    model = _add_llama(qtbot, win)
    win.fit_action.trigger()
    hint = win.canvas.outside_hint
    assert not hint.isVisible()
    # zoomed in on the decode points (all of them memory-bound, below 10 FLOP/byte)
    assert max(p[2] for p in win.canvas.point_items()) < 10
    win.canvas.set_view_range((0.05, 20), (1e9, 1e14))
    assert not hint.isVisible()
    form = win.model_panel.editor.form
    form.phase.setCurrentText("prefill")
    assert model.setup.phase == "prefill"
    (x0, x1), (y0, y1) = win.canvas.view_range()
    off = [p for p in win.canvas.point_items()
           if not (x0 <= p[2] <= x1 and y0 <= p[3] <= y1)]
    assert off
    assert hint.isVisible() and hint.text().startswith(f"{len(off)} point")
    win.fit_action.trigger()
    assert not hint.isVisible()
