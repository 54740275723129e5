"""The window gives the chart the room: on a laptop screen (1366 × 768) the chart takes at
least half the window by default, the Sweep Plot shares a tab with the results instead of
taking half the bottom row, and the dock layout still saves and restores."""

from __future__ import annotations

import itertools

from conftest import EXAMPLES, HANG_GUARD_S
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox

from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


def laptop_window(qtbot) -> MainWindow:
    create_app()
    settings = QSettings()  # the default layout, not one an earlier test saved
    settings.remove("window/state")
    settings.remove("window/geometry")
    window = MainWindow()
    qtbot.addWidget(window)
    window.open_path(LLAMA)
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    window.ask_save_changes = lambda: QMessageBox.Discard
    return window


def test_the_chart_takes_half_the_window_at_1366_by_768(qtbot):
    window = laptop_window(qtbot)
    canvas = window.canvas
    share = canvas.width() * canvas.height() / (window.width() * window.height())
    assert share >= 0.5, f"the chart has {share:.0%} of the window"
    # and the panels are all there, a click away
    for dock in (window.operations_dock, window.editor_dock, window.results_dock):
        assert dock.isVisibleTo(window)


def test_the_sweep_plot_shares_a_tab_with_the_results(qtbot):
    window = laptop_window(qtbot)
    assert window.sweep_dock in window.tabifiedDockWidgets(window.results_dock)
    # the results are in front by default: an empty sweep plot takes no room of its own
    assert not window.results_dock.visibleRegion().isEmpty()
    assert window.sweep_dock.visibleRegion().isEmpty()


def test_the_dock_layout_is_saved_and_restored(qtbot):
    window = laptop_window(qtbot)
    window.resize(760, 560)
    window.sweep_dock.hide()
    window.close()
    again = MainWindow()
    qtbot.addWidget(again)
    again.ask_save_changes = lambda: QMessageBox.Discard
    assert not again.sweep_dock.isVisibleTo(again)
    assert again.hardware_dock in again.tabifiedDockWidgets(again.editor_dock)


def test_the_first_window_fits_the_screen_it_opens_on(qtbot):
    """With no saved layout the window was 1500 × 950 whatever the screen: on a smaller one
    the bottom panels and the status bar were off it. It fits the screen's free area."""
    create_app()
    settings = QSettings()
    settings.remove("window/state")
    settings.remove("window/geometry")
    window = MainWindow()
    qtbot.addWidget(window)
    window.ask_save_changes = lambda: QMessageBox.Discard
    window.show()
    qtbot.waitExposed(window)
    QApplication.processEvents()
    available = window.screen().availableGeometry()
    assert available.width() < 1500  # the test screen is smaller than the old first size
    assert available.contains(window.frameGeometry()), (window.frameGeometry(), available)
    status = window.statusBar()
    bottom_right = status.mapToGlobal(status.rect().bottomRight())
    assert available.contains(bottom_right)


def test_the_first_window_geometry_for_a_laptop_screen():
    from PySide6.QtCore import QRect

    from workbench.ui.window.docks import first_window_geometry

    laptop = QRect(0, 0, 1366, 738)  # 1366 × 768 less a 30 px panel
    placed = first_window_geometry(laptop)
    assert placed.width() <= 1366 - 16 and placed.height() <= 738 - 48
    assert placed.adjusted(-8, -40, 8, 8).bottom() <= laptop.bottom()
    assert placed.width() >= 1300 and placed.height() >= 680  # the room is used
    large = first_window_geometry(QRect(0, 0, 2560, 1400))
    assert (large.width(), large.height()) == (1500, 950)
    assert large.center().x() in range(1270, 1290)  # centred on the big screen


CRITICAL = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


def _rows_shown(view) -> float:
    return view.viewport().height() / view.verticalHeader().defaultSectionSize()


def test_the_bottom_panels_have_a_usable_size_at_1366_by_768(qtbot):
    """The Sweep Plot was about 25 px tall (its y numbers on top of each other), Results
    showed two rows and Compare one pair with its across-machines table out of sight."""
    from PySide6.QtGui import QImage, QPainter

    window = laptop_window(qtbot)
    window.open_path(CRITICAL)  # a sweep, two machines
    canvas = window.canvas
    assert canvas.width() * canvas.height() >= 0.5 * window.width() * window.height()

    view = window.results_table.view
    assert window.results_table.model.rowCount() == 4
    assert _rows_shown(view) >= 4  # every row of this session

    window.sweep_dock.raise_()
    qtbot.waitUntil(lambda: not window.sweep_plot.is_empty(), timeout=HANG_GUARD_S * 1000)
    plot = window.sweep_plot.plot_widget
    qtbot.wait(50)
    box = plot.getPlotItem().getViewBox().sceneBoundingRect()
    assert box.height() >= 60, box
    axis = plot.getPlotItem().getAxis("left")
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    rects = sorted((rect for rect, _flags, text in texts if text), key=lambda r: r.top())
    assert len(rects) >= 2
    for upper, lower in itertools.pairwise(rects):
        assert upper.bottom() <= lower.top() + 0.5, "y numbers overlap"
    # the y axis's title is whole or not drawn (the numbers carry the unit)
    title = axis.label
    assert not title.isVisible() or title.boundingRect().width() <= axis.height()

    window.compare_dock.raise_()
    panel = window.compare_panel
    qtbot.waitUntil(lambda: panel.machines_table.isVisible(), timeout=HANG_GUARD_S * 1000)
    qtbot.wait(50)
    for table in (panel.pairs_table, panel.machines_table):
        assert table.isVisible()
        assert table.viewport().height() >= 2 * table.verticalHeader().defaultSectionSize()
    assert panel.machines_table.rowCount() == 2  # the selected operation on both machines
