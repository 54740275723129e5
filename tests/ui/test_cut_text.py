"""Text in tables and forms is shown whole: the Measurements headers ("redicted T_lowe"),
the Model tab's "Share of time" cells and the Add Model dialog's Chart field were cut."""

from __future__ import annotations

from conftest import add_model_through_dialog
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QStyle, QStyleOptionComboBox

from workbench.ui.panels.model_panel import ROW_SHARE


def _text_room(header, section: int) -> int:
    """Width a header section needs for its title: the text, the style's margins and the
    room of a sort indicator, as the style computes it for the header."""
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    title = header.model().headerData(section, Qt.Orientation.Horizontal)
    text = QFontMetrics(header.font()).horizontalAdvance(str(title)) + 2 * margin
    return max(text, header.sectionSizeHint(section))


def test_the_measurements_headers_show_their_titles_whole(qtbot, gpu_window):
    win = gpu_window
    win.resize(1366, 768)
    win.measurements_dock.raise_()
    qtbot.waitUntil(lambda: win.built_panel("measurements") is not None)
    view = win.measurements_panel.view
    header = view.horizontalHeader()
    cut = [header.model().headerData(c, Qt.Orientation.Horizontal)
           for c in range(header.count() - 1)  # the last one stretches to the edge
           if header.sectionSize(c) < _text_room(header, c)]
    assert cut == []




def test_the_add_model_dialogs_chart_field_shows_its_text_whole(qtbot, gpu_window):
    win = gpu_window
    win.add_model_action.trigger()
    dialog = win._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    combo = dialog.form.view
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                         QStyle.SubControl.SC_ComboBoxEditField, combo)
    for i in range(combo.count()):
        assert QFontMetrics(combo.font()).horizontalAdvance(combo.itemText(i)) <= field.width()
    dialog.reject()


def test_the_model_tabs_share_of_time_cells_show_every_kind(qtbot, gpu_window):
    win = gpu_window
    add_model_through_dialog(qtbot, win)
    win.model_dock.raise_()
    table = win.model_panel.table
    qtbot.waitUntil(lambda: table.columnCount() == 2)
    metrics = table.fontMetrics()
    for col in range(table.columnCount()):
        text = table.item(ROW_SHARE, col).text()
        lines = text.split("\n")
        assert len(lines) >= 4 and "All-reduce" not in text  # tp = 1: no collective
        assert "GEMM / GEMV" in lines[0]
        for line in lines:  # each kind whole within its column
            assert metrics.horizontalAdvance(line) + 6 <= table.columnWidth(col), line
        assert table.rowHeight(ROW_SHARE) >= len(lines) * metrics.lineSpacing()
