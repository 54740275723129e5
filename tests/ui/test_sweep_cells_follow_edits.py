"""The cells the text layout keeps off for the sweep paths follow every edit: the paths an
edit leaves alone keep the cells found for them, and after a keystroke, an undo and a pan
the grid's lines are the roofs' and each path's cells worked out afresh."""

from __future__ import annotations

import numpy as np
from conftest import keystroke_done, open_sweep_example
from PySide6.QtWidgets import QApplication

from workbench.ui.chart.drawn_cells import CELL
from workbench.ui.chart.labels import AIR

PATH_HALF = 0.8 + AIR  # half a sweep path's width, grown by the air texts keep from it


def _paths(win) -> list[np.ndarray]:
    return [np.concatenate(curve.getData()) for curve in win.canvas.overlays.sweep_curves
            if curve.isVisible()]


def _lines_found_afresh(win):
    """The grid's lines as the layout has them, and as the roofs and each path shown now
    cover them, each path's cells worked out on their own."""
    canvas = win.canvas
    ax, bx, ay, by = canvas.view_to_scene()

    def px(xs, ys):
        return np.asarray(xs, float) * ax + bx, np.asarray(ys, float) * ay + by

    occ = canvas.labels.occupancy()
    fresh = canvas.roofs.occupancy(px, occ.frame, CELL, AIR)
    for curve in canvas.overlays.sweep_curves:
        if curve.isVisible():
            fresh.add_polyline(*px(*curve.getData()), PATH_HALF, line=True)
    return occ.lines.copy(), fresh.lines


def test_the_sweep_paths_cells_are_those_of_the_paths_shown(open_window, qtbot):
    win = open_sweep_example(open_window, qtbot)
    doc = win.document
    target = doc.session.operations[0]
    start = _paths(win)
    assert len(start) == 4  # two swept operations on two machines
    first, fresh = _lines_found_afresh(win)
    assert np.array_equal(first, fresh)

    doc.set_param(target.id, "n", 2048)  # a keystroke: one operation's two paths move
    keystroke_done()
    moved = _paths(win)
    assert [np.array_equal(a, b) for a, b in zip(start, moved, strict=True)].count(False) == 2
    edited, fresh = _lines_found_afresh(win)
    assert not np.array_equal(edited, first)
    assert np.array_equal(edited, fresh)

    doc.set_param(target.id, "n", 512)  # and another
    keystroke_done()
    edited, fresh = _lines_found_afresh(win)
    assert np.array_equal(edited, fresh)

    doc.undo()  # back to the start (the edits are one step)
    keystroke_done()
    assert all(np.array_equal(a, b) for a, b in zip(_paths(win), start, strict=True))
    undone, fresh = _lines_found_afresh(win)
    assert np.array_equal(undone, first)
    assert np.array_equal(undone, fresh)

    # a pan: every path moves on screen
    box = win.canvas.view_box
    (x0, x1), (y0, y1) = box.viewRange()
    box.setRange(xRange=(x0 + 0.1, x1 + 0.1), yRange=(y0 - 0.05, y1 - 0.05), padding=0)
    QApplication.processEvents()
    panned, fresh = _lines_found_afresh(win)
    assert not np.array_equal(panned, first)
    assert np.array_equal(panned, fresh)
