"""Each group of tabbed docks shows one row of tabs, at its docks, on a first start and
when a saved layout is restored (a second "Results | Sweep Plot" row was drawn over the
status bar, and a returning user saw an "Editor | Hardware" row over the editor)."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QTabBar

from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow


def _tab_rows(win) -> list[tuple[str, ...]]:
    """The rows of tabs shown in the window, each as its tabs' titles."""
    return [tuple(bar.tabText(i) for i in range(bar.count()))
            for bar in win.findChildren(QTabBar) if bar.parent() is win and bar.isVisible()]


def _window(qtbot):
    create_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.ask_save_changes = lambda: QMessageBox.StandardButton.Discard
    win.resize(1366, 768)
    win.show()
    qtbot.waitExposed(win)
    return win


def test_each_dock_group_shows_one_row_of_tabs(qtbot):
    for start in ("first", "with the layout it saved"):
        win = _window(qtbot)
        rows = _tab_rows(win)
        assert sorted(rows) == sorted({
            ("Editor", "Hardware"),
            ("Results", "Sweep Plot", "Measurements", "Compare", "Model")}), (start, rows)
        # the bottom row lies under its docks, above the status bar
        bottom = next(bar for bar in win.findChildren(QTabBar)
                      if bar.parent() is win and bar.isVisible() and bar.count() == 5)
        assert bottom.geometry().bottom() < win.statusBar().geometry().top(), start
        win.close()  # (saves the layout the second window restores)
