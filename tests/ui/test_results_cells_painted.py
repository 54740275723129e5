"""The results table's cells look exactly as Qt's own delegate paints them.

The table paints its ordinary cells itself (:class:`ResultsDelegate`: one call a cell, each
text laid out once). Each test paints the same table twice, by Qt's delegate and by the
table's, and compares the pixels: texts, colours, greyed skipped rows, the highlighted
operation, a selected row, elided texts, sorted and filtered rows, and after the palette,
the font, the direction or the rows change under it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QStandardPaths, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QImage, QPalette
from PySide6.QtWidgets import QApplication, QStyledItemDelegate
from results_tables import SORTING_SESSION, workspace_from
from results_tables import make_table as make_results_table

from workbench.ui.panels.results_delegate import ResultsDelegate
from workbench.ui.panels.results_table import COLUMN_INDEX, ResultsTable


def make_table(qtbot, example: str | None = None, text: str | None = None) -> ResultsTable:
    return make_results_table(qtbot, workspace_from(example, text), (1400, 300))


def painted(table: ResultsTable) -> tuple[QImage, QImage]:
    """The table's cells as Qt's delegate paints them, and as the table's own does."""
    view = table.view
    own = view.itemDelegate()
    assert isinstance(own, ResultsDelegate)
    qt = QStyledItemDelegate(view)
    for _ in range(3):  # (until a change's layout, such as a scroll bar going, is done)
        QApplication.processEvents()
        view.setItemDelegate(qt)
        by_qt = view.viewport().grab().toImage()
        view.setItemDelegate(own)
        by_table = view.viewport().grab().toImage()
        if by_qt.size() == by_table.size():
            break
    qt.deleteLater()
    return by_qt, by_table


def assert_painted_as_qt(table: ResultsTable) -> None:
    by_qt, by_table = painted(table)
    assert not by_qt.isNull() and by_qt.size() == by_table.size()
    differ = sum(by_qt.pixel(x, y) != by_table.pixel(x, y)
                 for y in range(by_qt.height()) for x in range(by_qt.width())
                 ) if by_qt != by_table else 0
    assert differ == 0, f"{differ} pixels differ from Qt's delegate"


def colours_in(image: QImage) -> set[int]:
    return {image.pixel(x, y) for y in range(0, image.height(), 2)
            for x in range(0, image.width(), 2)}


@pytest.mark.parametrize("example", ["llama_ffn.yaml", "real_kernels_h100_h200.yaml",
                                     "teaching_machine.yaml"])
def test_an_example_s_cells_look_as_qt_paints_them(qtbot, example):
    table = make_table(qtbot, example)
    assert_painted_as_qt(table)


def test_greyed_highlighted_selected_and_elided_cells_look_as_qt_paints_them(qtbot):
    table = make_table(qtbot, text=SORTING_SESSION)
    workspace = table.workspace
    pairs = workspace.results.pairs()
    assert sum(1 for p in pairs if p.skipped) == 1  # (greyed: the check sees such a row)
    assert_painted_as_qt(table)
    ops = workspace.document.session.operations
    workspace.selection.select(ops[2].id)  # its rows highlighted
    qtbot.waitUntil(lambda: table.model._highlight == ops[2].id)
    assert_painted_as_qt(table)
    table.view.selectRow(1)  # a selected row, and the current cell
    table.view.setFocus()
    assert_painted_as_qt(table)
    header = table.view.horizontalHeader()
    header.resizeSection(COLUMN_INDEX["operation"], 36)  # names elided
    header.resizeSection(COLUMN_INDEX["attainable"], 40)  # numbers elided
    assert_painted_as_qt(table)


def test_sorted_filtered_and_edited_rows_look_as_qt_paints_them(qtbot):
    """The rows the table keeps mapped follow each sort, filter and edit."""
    table = make_table(qtbot, "llama_ffn.yaml")
    assert_painted_as_qt(table)  # (the rows mapped in session order first)
    table.view.sortByColumn(COLUMN_INDEX["intensity"], Qt.SortOrder.DescendingOrder)
    assert_painted_as_qt(table)
    op = table.workspace.document.session.operations[0]
    table.workspace.document.set_param(op.id, "m", 3)  # a sorted row moves
    QApplication.processEvents()
    assert_painted_as_qt(table)
    table.filter_edit.setText("H100")
    assert_painted_as_qt(table)
    table.filter_edit.clear()
    assert_painted_as_qt(table)


def test_a_new_palette_and_font_reach_the_cells(qtbot):
    table = make_table(qtbot, text=SORTING_SESSION)
    before_colours = colours_in(painted(table)[1])
    before = QApplication.palette()
    dark = QPalette(before)
    dark.setColor(QPalette.ColorRole.Base, QColor("#202020"))
    dark.setColor(QPalette.ColorRole.AlternateBase, QColor("#2a2a2a"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#f0e68c"))
    dark.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#7a7a7a"))
    try:
        QApplication.setPalette(dark)
        QApplication.processEvents()
        assert_painted_as_qt(table)
        assert colours_in(painted(table)[1]) != before_colours
    finally:
        QApplication.setPalette(before)
    QApplication.processEvents()
    assert_painted_as_qt(table)
    font = QFont(table.view.font())
    font.setPointSizeF(font.pointSizeF() * 1.4)
    table.view.setFont(font)
    QApplication.processEvents()
    assert_painted_as_qt(table)


def test_a_right_to_left_table_looks_as_qt_paints_it(qtbot):
    table = make_table(qtbot, text=SORTING_SESSION)
    table.view.setLayoutDirection(Qt.LayoutDirection.RightToLeft)
    QApplication.processEvents()
    assert_painted_as_qt(table)


def test_texts_in_other_scripts_and_a_font_installed_look_as_qt_paints_them(qtbot):
    """Names drawn partly from a fallback font (their line may be taller: laid out in full)
    beside texts in the view's own font ("µs", "×", "—"), before and after a font is
    installed and removed (what the view's font draws with may change)."""
    text = (SORTING_SESSION.replace("name: low", "name: 注意力 low")
            .replace("name: cube", "name: µ-cube × 2 — Ω"))
    table = make_table(qtbot, text=text)
    names = {table.model.look(row, COLUMN_INDEX["operation"])[0]
             for row in range(table.model.rowCount())}
    assert {"注意力 low", "µ-cube × 2 — Ω"} <= names
    assert_painted_as_qt(table)
    places = QStandardPaths.standardLocations(QStandardPaths.StandardLocation.FontsLocation)
    fonts = [path for place in [*places, "/usr/share/fonts", "/usr/local/share/fonts"]
             for path in sorted(Path(place).rglob("*.ttf"))]
    font_id = next((i for i in map(QFontDatabase.addApplicationFont, map(str, fonts))
                    if i >= 0), -1)
    assert font_id >= 0, "a font file to install (fontconfig's fonts)"
    try:
        QApplication.processEvents()
        assert_painted_as_qt(table)
    finally:
        assert QFontDatabase.removeApplicationFont(font_id)
    QApplication.processEvents()
    assert_painted_as_qt(table)
