"""Tags and names follow every change that moves points: a Model tab edit, an operation's
edit, their undo and redo. What the chart shows right after the change is what it shows
after a zoom (a full placing): a crowd's shared tag ("A, B: 2, 5, 8") names the markers that
touch now, by them, and a marker that left its crowd carries its own tag."""

from __future__ import annotations

from conftest import EXAMPLES
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest

LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def _texts(canvas) -> list:
    """Every text on the plot, its wording and its box (whole pixels)."""
    return sorted((kind, text, tuple(round(v) for v in box))
                  for kind, text, box in canvas.text_items())


def _assert_as_after_a_zoom(win) -> None:
    canvas = win.canvas
    now = _texts(canvas)
    canvas.relayout()  # what a zoom, a pan or Ctrl+0 would place
    after = _texts(canvas)
    stale = [t for t in now if t not in after]
    assert not stale, f"texts left where the points were: {stale[:4]}; placed anew: " \
                      f"{[t for t in after if t not in now][:4]}"
    # every tagged operation's tag is said by a text on the chart (its own or its crowd's)
    said = "\n".join(text for kind, text, _ in after if kind == "point")
    for op_id, tag in canvas.key.tags.items():
        if op_id in canvas.key.joined or op_id in canvas.labels.point_labels:
            continue
        assert tag.lstrip("AB") in said, f"tag {tag} named by no text"


def test_crowd_tags_follow_phase_and_batch_edits_and_their_undo(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 740))
    model = win.document.session.models[0]
    win.model_panel.show_model(model.id)
    form = win.model_panel.editor.form
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    assert len(canvas.key.tags) > 2, "the example's crowded parts are told by tags"
    for phase in ("decode", "prefill"):  # prefill → decode → prefill
        form.phase.setCurrentText(phase)
        assert model.setup.phase == phase
        _assert_as_after_a_zoom(win)
    form.batch.setValue(16)  # moves lm_head, among others, out of its crowd
    assert model.setup.batch == 16
    _assert_as_after_a_zoom(win)
    win.undo_action.trigger()
    assert model.setup.batch == 1
    _assert_as_after_a_zoom(win)


def test_each_placing_asks_for_a_tag_around_where_its_points_are_now(open_window, qtbot):
    """A full placing keeps each text's request for the key's passes; after a Model tab
    edit moves the points, the placing asks for every tag around its crowd's markers where
    they are drawn now, not where they were."""
    win = open_window(LLAMA_8B, size=(1366, 740))
    model = win.document.session.models[0]
    win.model_panel.show_model(model.id)
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    points = canvas.points

    def centres_asked_and_drawn():
        pixels = points.pixels(canvas.view_to_scene())
        out = []
        for op_id in canvas.key.tags:
            entry = canvas.labels.entry(("point", op_id))
            if entry is None or entry[1].own is None:
                continue
            own = entry[1].own
            asked = {(round((r[0] + r[2]) / 2, 3), round((r[1] + r[3]) / 2, 3)) for r in own}
            drawn = {(round(float(x), 3), round(float(y), 3))
                     for member in canvas.key.crowd_of(op_id)
                     for x, y in pixels[points.rows_of(points.keys_of(member))]}
            out.append((op_id, drawn <= asked))
        return out

    before = centres_asked_and_drawn()
    assert before and all(ok for _op, ok in before)
    moved = points.pixels(canvas.view_to_scene()).copy()
    win.model_panel.editor.form.batch.setValue(16)
    assert model.setup.batch == 16
    assert not (points.pixels(canvas.view_to_scene()) == moved).all(), "the edit moved points"
    after = centres_asked_and_drawn()
    assert after and all(ok for _op, ok in after), [op for op, ok in after if not ok]


def test_tags_are_told_apart_by_where_their_points_are_after_an_edit(open_window, qtbot):
    """The key's steps (joining touching markers' tags, gathering strays) read where each
    tagged point is drawn: after a Model tab edit, and after its undo, where it is now,
    the view unchanged."""
    from workbench.ui.chart.axes import to_view

    win = open_window(LLAMA_8B, size=(1366, 740))
    model = win.document.session.models[0]
    win.model_panel.show_model(model.id)
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    key, points = canvas.key, canvas.points

    def where_drawn(ops):
        ax, bx, ay, by = canvas.view_to_scene()
        marks = [points.marks[points.label_key(op)] for op in ops]
        return [(to_view(p.x) * ax + bx, to_view(p.y) * ay + by) for p in marks]

    ops = list(key.tags)
    assert len(ops) > 2
    before = key._pixels(ops)
    assert before == where_drawn(ops)
    view = canvas.view_to_scene()
    win.model_panel.editor.form.batch.setValue(16)
    assert model.setup.batch == 16 and canvas.view_to_scene() == view
    ops = list(key.tags)
    assert key._pixels(ops) == where_drawn(ops)
    assert key._pixels(ops) != before[:len(ops)] or len(ops) != len(before)
    win.undo_action.trigger()
    assert model.setup.batch == 1
    ops = list(key.tags)
    assert key._pixels(ops) == where_drawn(ops)


LLAMA_FFN = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


def test_an_operations_edit_undone_and_redone_leaves_the_chart_as_after_a_zoom(open_window,
                                                                                qtbot):
    """An edit of one operation places again only the texts its moved points meet; a text
    moved off a place that the undo frees (the TPU's roof value, beside the GEMM's point
    before the edit) went back to it only at the next zoom. An undo or redo places the chart
    as a zoom would: the undo shows the chart as it was before the edit."""
    win = open_window(LLAMA_FFN, size=(1366, 768))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    before = _texts(canvas)
    spin = win.editor.field("n")
    spin.setFocus()
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "2048")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    op = win.document.operation(win.editor.operation_id).operation
    assert op.params["n"] == 2048
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    edited = _texts(canvas)
    assert edited != before  # (the edit moved texts: the test is not empty)
    qtbot.keyClick(spin, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert win.document.operation(win.editor.operation_id).operation.params["n"] == 28672
    assert _texts(canvas) == before
    _assert_as_after_a_zoom(win)
    QTest.keySequence(spin, QKeySequence(QKeySequence.StandardKey.Redo))
    assert win.document.operation(win.editor.operation_id).operation.params["n"] == 2048
    _assert_as_after_a_zoom(win)
