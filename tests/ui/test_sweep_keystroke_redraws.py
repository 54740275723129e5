"""A keystroke in a swept operation redraws what it moved and leaves the rest: the ridge
crossings' rings, which sit on the ridges' corners whatever the other dimensions, are not
set again when a dimension changes; an edit that moves the corners (another element type),
its undo and redo move the rings with them."""

from __future__ import annotations

import numpy as np
from conftest import keystroke_done, open_sweep_example
from PySide6.QtGui import QPen

from workbench.model.roofline import sweep as roofline_sweep
from workbench.model.sweeps import sweep_crossings
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.items import Spots


def _rings(win) -> list[tuple[float, float]]:
    """The crossing rings drawn (view units), sorted."""
    xs, ys = win.canvas.overlays.crossing_marks.getData()
    return sorted(zip(np.asarray(xs).tolist(), np.asarray(ys).tolist(), strict=True))


def _crossings_now(win) -> list[tuple[float, float]]:
    """Where the session's crossings lie now, worked out from the model: each swept
    operation's crossings on each machine, evaluated at the crossing (view units)."""
    session = win.document.session
    out = []
    for entry in session.operations:
        for hw_entry in session.hardware:
            op, hw = entry.operation, hw_entry.hardware
            for crossing in sweep_crossings(op, hw, entry.sweep):
                at = roofline_sweep(op, hw, **{crossing.param: np.asarray([crossing.value])})
                out.append((float(to_view(float(np.ravel(at["intensity"])[0]))),
                            float(to_view(float(np.ravel(at["attainable_flops"])[0])))))
    return sorted(out)


def test_a_dimension_typed_in_leaves_the_crossing_rings_as_they_are(open_window, qtbot):
    win = open_sweep_example(open_window, qtbot)
    doc = win.document
    target = doc.session.operations[0]
    rings = win.canvas.overlays.crossing_marks
    sets: list[object] = []
    rings.sigPlotChanged.connect(sets.append)
    before = _rings(win)
    assert len(before) == 4 and before == _crossings_now(win)
    paths = [np.concatenate(c.getData()) for c in win.canvas.overlays.sweep_curves]

    for n in (8000, 8001, 8002):  # keystrokes: the paths move, the rings stay
        doc.set_param(target.id, "n", n)
        keystroke_done()
    moved = [np.concatenate(c.getData()) for c in win.canvas.overlays.sweep_curves]
    assert not all(np.array_equal(a, b) for a, b in zip(paths, moved, strict=True))
    assert _rings(win) == before == _crossings_now(win)
    assert sets == []

    # another element type: that operation's ridge corners, and its rings, move
    doc.set_param(target.id, "dtype", "int8")
    keystroke_done()
    assert len(sets) == 1
    int8 = _rings(win)
    assert int8 != before and int8 == _crossings_now(win)

    doc.undo()
    keystroke_done()
    assert _rings(win) == before == _crossings_now(win)
    doc.redo()
    keystroke_done()
    assert _rings(win) == int8 == _crossings_now(win)
    assert len(sets) == 3


def test_spots_given_what_they_show_are_not_set_again(qtbot):
    spots = Spots()
    sets: list[object] = []
    spots.sigPlotChanged.connect(sets.append)
    pen = QPen()
    data = {"x": np.array([1.0, 2.0]), "y": np.array([3.0, 4.0]), "symbol": "o",
            "size": 7.0, "pen": [pen, QPen(pen)]}
    spots.show_data(**data)
    spots.show_data(**{**data, "x": np.array([1.0, 2.0]), "pen": [QPen(pen), QPen(pen)]})
    assert len(sets) == 1
    data["x"][0] = 5.0  # (the caller's array changed after: what is shown did not)
    spots.show_data(x=np.array([1.0, 2.0]), y=data["y"], symbol="o", size=7.0,
                    pen=[pen, pen])
    assert len(sets) == 1
    for changed in ({"x": np.array([1.0, 2.5])}, {"size": 8.0}, {"symbol": "s"},
                    {"pen": [pen, QPen(QPen(pen).color().darker())]}):
        spots.show_data(**{**data, "x": np.array([1.0, 2.0]), **changed})
        assert np.array_equal(spots.getData()[0], changed.get("x", [1.0, 2.0]))
    assert len(sets) == 5
    # set some other way in between: the same data shown again is set again
    spots.setData(x=np.zeros(1), y=np.zeros(1))
    spots.show_data(**{**data, "x": np.array([1.0, 2.0])})
    assert len(sets) == 7
    assert np.array_equal(spots.getData()[0], [1.0, 2.0])


def test_the_sweep_plots_curves_are_each_machines_own_after_every_keystroke(open_window,
                                                                             qtbot):
    """The sweep plot evaluates every machine's curve at once: each curve is still its own
    machine's figures, through its own crossings and not the other machine's, and follows
    each keystroke, its undo and its redo."""
    win = open_sweep_example(open_window, qtbot)
    doc = win.document
    target = doc.session.operations[0]
    plot = win.sweep_plot
    names = {e.id: e.hardware for e in doc.session.hardware}

    def check() -> list[list[float]]:
        op = doc.operation(target.id).operation
        shown = []
        for hw_id, _name, xs, ys in plot.curves():
            hw = names[hw_id]
            want = roofline_sweep(op, hw, m=np.asarray(xs))["attainable_flops"]
            np.testing.assert_allclose(ys, np.broadcast_to(want, len(xs)), rtol=1e-12)
            for other_id, other in names.items():
                for crossing in sweep_crossings(op, other, target.sweep):
                    near = np.isclose(xs, crossing.value, rtol=1e-12, atol=0)
                    assert near.any() == (other_id == hw_id)
            shown.append(ys)
        assert len(shown) == 2
        return shown

    first = check()
    for n in (8000, 2048):
        doc.set_param(target.id, "n", n)
        keystroke_done()
        assert check() != first
    doc.undo()
    keystroke_done()
    assert check() == first
    doc.redo()
    keystroke_done()
    check()


def test_stacked_crossing_texts_are_laid_out_again_only_when_their_words_change(
        open_window, qtbot):
    """Both swept operations cross each machine's ridge at its corner: one text there says
    both crossings. A keystroke that leaves its words as they were does not lay it out
    again; one that changes them shows the new words, and undo the old."""
    win = open_sweep_example(open_window, qtbot)
    doc = win.document
    target = doc.session.operations[0]
    overlays = win.canvas.overlays

    def stacked() -> dict:
        labels = {}
        for _mark, label in overlays.crossing_texts:
            labels[id(label)] = label
        marks = {id(label): [m.label for m, lab in overlays.crossing_texts if lab is label]
                 for label in labels.values()}
        return {key: (labels[key], words) for key, words in marks.items() if len(words) > 1}

    shown = stacked()
    assert len(shown) == 2  # a corner on each machine
    layouts: list[object] = []
    for label, _words in shown.values():
        label.textItem.document().contentsChanged.connect(lambda: layouts.append(1))

    def words_now() -> list[tuple[str, list[str]]]:
        out = []
        for label, words in stacked().values():
            out.append((label.toPlainText(), words))
            # the text says each crossing of the corner, one a line
            assert label.toPlainText().splitlines() == words
        return sorted(out)

    before = words_now()
    for n in (8192, 8193):  # m* moves by less than its last digit shown: the same words
        doc.set_param(target.id, "n", n)
        keystroke_done()
    assert words_now() == before
    assert layouts == []

    doc.set_param(target.id, "n", 2048)  # a crossing said anew
    keystroke_done()
    changed = words_now()
    assert changed != before and layouts
    doc.undo()
    keystroke_done()
    assert words_now() == before
