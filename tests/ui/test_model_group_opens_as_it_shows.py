"""A model's group in the operations list opens as its arrow says: a click on the "▸" of
its header row, or → on the row, expands it (only a double-click or Space did, and a new user
clicking the arrow, or pressing → as in any tree, saw nothing happen); ← closes it."""

from __future__ import annotations

from conftest import EXAMPLES
from PySide6.QtCore import QPoint, Qt

from workbench.ui.panels.operations_panel import COL_NAME

LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def _header(win, index: int):
    panel = win.operations_panel
    model = win.document.session.models[index]
    row = panel.model.header_row(model.id)
    return panel, model, panel.model.index(row, COL_NAME)


def test_a_click_on_the_arrow_opens_and_closes_the_group(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    panel, model, index = _header(win, 1)
    assert model.id not in panel.model.expanded
    assert panel.model.data(index, Qt.ItemDataRole.DisplayRole).startswith("▸")
    view = panel.view
    rect = view.visualRect(index)
    arrow = QPoint(rect.left() + 4 + view.fontMetrics().horizontalAdvance("▸") // 2,
                   rect.center().y())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
    assert model.id in panel.model.expanded
    assert panel.model.rowCount() > 2  # its operations are listed
    _panel, _model, index = _header(win, 1)
    rect = view.visualRect(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(rect.left() + 4 + view.fontMetrics().horizontalAdvance("▸") // 2,
                                rect.center().y()))
    assert model.id not in panel.model.expanded
    # a click on the name itself only selects the row
    _panel, _model, index = _header(win, 1)
    rect = view.visualRect(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(rect.center().x(), rect.center().y()))
    assert model.id not in panel.model.expanded


def test_right_and_left_open_and_close_the_group(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    panel, model, index = _header(win, 0)
    view = panel.view
    view.setFocus()
    view.setCurrentIndex(index)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    assert model.id in panel.model.expanded
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert model.id not in panel.model.expanded
