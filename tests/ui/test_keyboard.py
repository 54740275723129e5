"""The keyboard in the main window: Tab leaves every table, Ctrl+Z undoes the document's last
edit wherever the focus is, and typing a value that will be refused never applies a part of
it on the way."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QTableView

from workbench.ui.app import create_app
from workbench.ui.main_window import MainWindow

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


@pytest.fixture
def window(qtbot):
    create_app()
    win = MainWindow()
    win.open_path(LLAMA)
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()
    win.deleteLater()


def _inside(widget, container) -> bool:
    while widget is not None:
        if widget is container:
            return True
        widget = widget.parentWidget()
    return False


def _tab_out(qtbot, window, table: QTableView, presses: int = 40) -> bool:
    """Focus ``table`` on its first cell and press Tab up to ``presses`` times: whether the
    focus left it."""
    table.setFocus(Qt.FocusReason.TabFocusReason)
    if table.model() is not None and table.model().rowCount() > 0:
        table.setCurrentIndex(table.model().index(0, 0))
    assert window.focusWidget() is table
    for _ in range(presses):
        qtbot.keyClick(window.focusWidget(), Qt.Key.Key_Tab)
        if not _inside(window.focusWidget(), table):
            return True
    return False


def test_tab_leaves_the_operations_table(qtbot, window):
    view = window.operations_panel.view
    assert _tab_out(qtbot, window, view)
    # and Shift+Tab comes back into it
    focused = window.focusWidget()
    qtbot.keyClick(focused, Qt.Key.Key_Backtab)
    assert window.focusWidget() is view


def test_tab_leaves_every_table_of_the_window(qtbot, window):
    """Results, Measurements, Compare, Model, Hardware: each table a user can focus gives the
    focus up to Tab."""
    assert window.measurements_panel is not None  # the panels built on first use
    assert window.compare_panel is not None
    for dock in (window.results_dock, window.measurements_dock, window.compare_dock,
                 window.model_dock, window.hardware_dock):
        dock.raise_()
    QApplication.processEvents()
    tables = [t for t in window.findChildren(QTableView)
              if t.focusPolicy() != Qt.FocusPolicy.NoFocus]
    names = {t.objectName() for t in tables}
    assert {"operationsView", "measurements_table", "modelResults"} <= names
    assert len(tables) >= 6
    trapped, tried = [], set()
    for table in tables:
        dock = next(d for d in (window.results_dock, window.measurements_dock,
                                window.compare_dock, window.model_dock, window.hardware_dock,
                                window.operations_dock, window.editor_dock)
                    if _inside(table, d))
        dock.raise_()
        QApplication.processEvents()
        if not table.isVisible():
            continue
        tried.add(table.objectName())
        if not _tab_out(qtbot, window, table):
            trapped.append(table.objectName())
    assert {"operationsView", "resultsView", "measurements_table", "modelResults",
            "machines_table", "pairs_table"} <= tried, tried
    assert trapped == [], ", ".join(trapped)
