"""Exporting or copying a figure leaves the running application as it was: its menus, context
menus and combo lists draw their text at its size, and its fonts, palette, style and device
pixel ratio are those it had, after any export at any DPI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES
from PySide6.QtCore import QStandardPaths
from PySide6.QtGui import QFontDatabase, QFontInfo, QFontMetricsF, QGuiApplication, QImage
from PySide6.QtWidgets import QApplication, QComboBox, QMenu

from workbench.ui.figures.export_dialog import FigureOptions, save_options

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


@pytest.fixture(autouse=True)
def _fresh_font_engines():
    """Each test starts with as few font engines made as a freshly started application.

    Qt keeps the engines it makes (one per family, style and pixel size) for the whole
    process, and a leak shows only where a figure made one first: an earlier test's figures
    would hide it. Adding and removing an application font makes Qt drop those no text
    holds (the figures at the screen's 96 dpi, which made none wrongly, run last)."""
    places = QStandardPaths.standardLocations(QStandardPaths.StandardLocation.FontsLocation)
    fonts = (path for place in [*places, "/usr/share/fonts", "/usr/local/share/fonts"]
             for pattern in ("*.ttf", "*.otf") for path in sorted(Path(place).rglob(pattern)))
    font_id = -1
    for path in fonts:
        font_id = QFontDatabase.addApplicationFont(str(path))
        if font_id >= 0:
            break
    assert font_id >= 0, "a font file to add and remove (fontconfig's fonts)"
    assert QFontDatabase.removeApplicationFont(font_id)


def _ink_rows(widget, rect=None) -> int:
    """How many pixel rows of ``widget`` (within ``rect``), as drawn on screen, hold dark
    text."""
    image = widget.grab(rect).toImage() if rect is not None else widget.grab().toImage()
    image = image.convertToFormat(QImage.Format.Format_Grayscale8)
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1)
    rows = np.flatnonzero((pixels[:, :image.width()] < 110).any(axis=1))
    return int(rows.max() - rows.min() + 1) if rows.size else 0


def _menu_text_height(qtbot, win) -> tuple[int, int]:
    """The height of a capital "H" as a context menu draws it, and its font's pixel size."""
    menu = QMenu(win)
    menu.addAction("HHHH")
    menu.popup(win.mapToGlobal(win.rect().center()))
    qtbot.waitUntil(menu.isVisible)
    try:
        return _ink_rows(menu), QFontInfo(menu.font()).pixelSize()
    finally:
        menu.close()


def _combo_list_text_height(qtbot, win) -> tuple[int, int]:
    """The same for the list a combo box opens."""
    combo = QComboBox(win)
    combo.addItems(["", "HHHH"])  # (the first, current, is highlighted)
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    try:
        row = view.visualRect(combo.model().index(1, 0))
        return _ink_rows(view.viewport(), row), QFontInfo(view.font()).pixelSize()
    finally:
        combo.hidePopup()
        combo.deleteLater()


def _application_look(win) -> dict:
    """What the application's widgets are drawn with."""
    app = QApplication.instance()
    fonts = {name: app.font(name).toString() for name in ("QMenu", "QComboBox", "QLabel")}
    menu = win.menuBar().actions()[0].menu()
    return {
        "fonts": fonts,
        "font": app.font().toString(),
        "menu metrics": (QFontMetricsF(menu.font()).height(),
                         QFontMetricsF(menu.font()).horizontalAdvance("Export Figure…")),
        "palette": [app.palette().color(role).name() for role in (
            app.palette().ColorRole.Window, app.palette().ColorRole.WindowText,
            app.palette().ColorRole.Base, app.palette().ColorRole.Text,
            app.palette().ColorRole.Highlight)],
        "style": app.style().name(),
        "device pixel ratio": (win.devicePixelRatioF(), QGuiApplication.primaryScreen()
                               .devicePixelRatio()),
        "dpi": (win.logicalDpiY(), menu.logicalDpiY()),
    }


def _assert_text_full_size(qtbot, win) -> None:
    for what, (ink, pixel_size) in (("menu", _menu_text_height(qtbot, win)),
                                    ("combo list", _combo_list_text_height(qtbot, win))):
        # a capital is about 0.73 of the font's pixel size in every common sans face (12 px:
        # 9 px of ink); the leaked figure resolution drew it 96 / 300 of that (3 px)
        assert ink >= 0.6 * pixel_size, (
            f"the {what} draws its text {ink} px tall with a {pixel_size} px font")


# every format at every DPI, each size at least twice (the screen's 96 dpi last: see
# _fresh_font_engines)
EXPORTS = [
    ("png", "single", 300.0), ("svg", "double", 300.0), ("pdf", "double", 300.0),
    ("png", "double", 600.0), ("svg", "slide", 600.0), ("pdf", "single", 600.0),
    ("png", "slide", 96.0), ("svg", "single", 96.0), ("pdf", "double", 96.0),
]


@pytest.mark.parametrize(("fmt", "size", "dpi"), EXPORTS)
def test_menus_and_combo_lists_keep_their_text_size_after_an_export(
        open_window, qtbot, tmp_path, fmt, size, dpi):
    win = open_window(LLAMA)
    _assert_text_full_size(qtbot, win)
    before = _application_look(win)
    win.export_figure_action.trigger()  # Ctrl+E, as the user does
    dialog = win.export_dialog
    dialog.size_combo.setCurrentIndex(dialog.size_combo.findData(size))
    dialog.dpi_spin.setValue(dpi)
    target = tmp_path / f"figure.{fmt}"
    dialog.accept_path(target)
    assert target.stat().st_size > 1000
    _assert_text_full_size(qtbot, win)
    assert _application_look(win) == before


@pytest.mark.parametrize(("size", "dpi"), [("slide", 144.0), ("double", 600.0)])
def test_menus_and_combo_lists_keep_their_text_size_after_copy_figure(
        open_window, qtbot, size, dpi):
    win = open_window(LLAMA)
    before = _application_look(win)
    save_options(win.settings, FigureOptions(size=size, dpi=dpi))
    win.copy_figure_action.trigger()
    assert not QGuiApplication.clipboard().image().isNull()
    _assert_text_full_size(qtbot, win)
    assert _application_look(win) == before


@pytest.mark.parametrize(("fmt", "size", "dpi"), [("png", "single", 600.0),
                                                  ("pdf", "double", 300.0),
                                                  ("svg", "slide", 96.0)])
def test_menus_keep_their_text_size_after_a_sweep_plot_export(
        open_window, qtbot, tmp_path, fmt, size, dpi):
    """The sweep plot's Export… draws its figure as the chart's are drawn: at the screen's
    resolution, the figure's DPI written into the file only."""
    win = open_window(next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml"))
    win.sweep_dock.raise_()
    win.workspace.selection.select(win.document.session.operations[0].id)
    qtbot.waitUntil(lambda: not win.sweep_plot.is_empty())
    _assert_text_full_size(qtbot, win)
    before = _application_look(win)
    target = tmp_path / f"sweep.{fmt}"
    assert win.export_sweep_plot(target, FigureOptions(size=size, dpi=dpi))
    assert target.stat().st_size > 1000
    _assert_text_full_size(qtbot, win)
    assert _application_look(win) == before


def test_menus_keep_their_text_size_after_copy_plot(open_window, qtbot):
    win = open_window(next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml"))
    win.sweep_dock.raise_()
    win.workspace.selection.select(win.document.session.operations[0].id)
    qtbot.waitUntil(lambda: not win.sweep_plot.is_empty())
    before = _application_look(win)
    assert win.copy_sweep_plot(FigureOptions(size="double", dpi=600.0)) is not None
    assert not QGuiApplication.clipboard().image().isNull()
    _assert_text_full_size(qtbot, win)
    assert _application_look(win) == before


@pytest.mark.parametrize("fmt", ["png", "pdf"])
def test_menus_keep_their_text_size_after_a_throughput_chart_export(open_window, qtbot,
                                                                    tmp_path, fmt):
    win = open_window(next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml"))
    win.model_panel.pages.setCurrentIndex(2)
    before = _application_look(win)
    target = tmp_path / f"throughput.{fmt}"
    assert win.export_throughput_chart(target, FigureOptions(size="single", dpi=600.0))
    assert target.stat().st_size > 1000
    _assert_text_full_size(qtbot, win)
    assert _application_look(win) == before
