"""The sweep plot as a figure: its Export… button writes the plot the user sees (FLOP/s or
time, every machine's curve, the ridge crossings and their values, the title line) as PDF,
SVG or PNG at the size and DPI of the last figure choices, vector where the format is, its
text readable and nothing over anything, and leaves the plot on screen as it was.

The crossing values are checked by hand (critical-batch example: bf16 matmul, D = F = 8192,
m swept): the matmul's intensity is m·D·F / (m·(D + F) + D·F) FLOP/byte, which meets a
machine's ridge R at m* = 8192·R / (8192 − 2R). The TPU v5e (197 TFLOP/s, 819 GB/s:
R = 240.5) gives m* = 255.5; the H100 SXM (989.4 TFLOP/s, 3.35 TB/s: R = 295.3), 318.3."""

from __future__ import annotations

import itertools
import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import EXAMPLES, open_sweep_example, right_click_menu
from figures.figcheck import check_figure, check_readability, format_defects, read_figure
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog

from workbench.ui.figures.export_dialog import FigureOptions, save_options
from workbench.ui.figures.figure_size import resolve_size

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: bytes) -> list[str]:
    return [" ".join("".join(t.itertext()).split()) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def _export_by_button(win, qtbot, monkeypatch, path: Path) -> None:
    """Export… pressed, ``path`` chosen in the file dialog."""
    asked = []

    def choose(*args, **_kwargs):
        asked.append(args)
        return str(path), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", choose)
    button = win.sweep_plot.export_button
    assert button.isVisible() and button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and asked[0][1] == "Export Sweep Plot"


@pytest.mark.parametrize(("size", "dpi"), [("single", 300.0), ("double", 300.0),
                                           ("slide", 144.0)])
def test_the_sweep_plot_exports_as_the_user_sees_it(open_window, qtbot, monkeypatch, tmp_path,
                                                    size, dpi):
    win = open_sweep_example(open_window, qtbot)
    save_options(win.settings, FigureOptions(size=size, dpi=dpi))
    plot = win.sweep_plot
    shown = (plot.curves(), plot.crossing_markers(), plot.title.text(), plot.size(),
             plot.plot_widget.size())
    fig = resolve_size(size, dpi=dpi)

    svg_path = tmp_path / "sweep.svg"
    _export_by_button(win, qtbot, monkeypatch, svg_path)
    svg = svg_path.read_bytes()
    texts = _texts(svg)
    for expected in ("bf16 matmul, D = F = 8192: m = 1 … 4096 (13 values, log)",
                     "Attainable [FLOP/s]", "m (swept)", "Google Cloud TPU v5e (per chip)",
                     "NVIDIA H100 SXM5 80GB", "1 PFLOP/s", "1000"):
        assert expected in texts, (expected, texts)
    # each crossing's value, beside its line or said after the title
    said = " ".join(texts)
    assert "m* = 255.5" in said and "m* = 318.3" in said, texts
    # vector: the markers drawn as shapes, not as pictures
    assert b"<image" not in svg
    root = ET.fromstring(svg)
    assert abs(float(root.get("width").removesuffix("mm")) - fig.inches[0] * 25.4) < 0.01

    png_path = tmp_path / "sweep.png"
    _export_by_button(win, qtbot, monkeypatch, png_path)
    image = QImage(str(png_path))
    assert (image.width(), image.height()) == (fig.width, fig.height)
    assert round(image.dotsPerMeterX() * 0.0254) == round(dpi)

    pdf_path = tmp_path / "sweep.pdf"
    _export_by_button(win, qtbot, monkeypatch, pdf_path)
    page = read_figure(pdf_path)
    # (the title's "…" is the range it sweeps, "m = 1 … 4096", not a text cut short)
    defects = [d for d in check_figure(page) + check_readability(page)
               if not (d.kind == "truncation" and "1 … 4096" in d.texts[0])]
    assert defects == [], format_defects(defects, pdf_path.name)
    assert win.statusBar().currentMessage().startswith(f"Exported {pdf_path}")

    # the plot on screen is as it was
    assert (plot.curves(), plot.crossing_markers(), plot.title.text(), plot.size(),
            plot.plot_widget.size()) == shown
    assert plot.title.isVisible() and plot.mode_box.isVisible()


@pytest.mark.parametrize("size", ["double", "slide"])
def test_a_wide_figure_puts_the_legend_under_a_plot_as_wide_as_the_page(
        open_window, qtbot, tmp_path, size):
    """On a page two paper columns wide, or a slide, the legend stood beside the plot: a
    third of the page held two names at its top and nothing under them, the plot squeezed
    into the rest. Below the plot, in a row as wide as its names and centred, it leaves the
    plot the page's width (a page flatter than that keeps it beside: the bottom row's plot
    does, see test_bottom_row_plots_readable)."""
    win = open_sweep_example(open_window, qtbot)
    path = tmp_path / f"{size}.pdf"
    assert win.export_sweep_plot(path, FigureOptions(size=size, dpi=150.0))
    page = read_figure(path)
    x0, _y0, x1, _y1 = page.page
    names = [t for t in page.texts if t.text in ("Google Cloud TPU v5e (per chip)",
                                                 "NVIDIA H100 SXM5 80GB")]
    title = next(t for t in page.texts if t.text.strip() == "m (swept)")
    assert len(names) == 2, [t.text for t in page.texts]
    # one row, under the x axis's title
    assert abs(names[0].bbox()[1] - names[1].bbox()[1]) < 1.0, [n.bbox() for n in names]
    assert min(n.bbox()[1] for n in names) > title.bbox()[3], (names[0].bbox(), title.bbox())
    # the plot as wide as the page but for its y axis (beside the legend: two thirds of it)
    plot_x0, _, plot_x1, _ = page.plot
    assert plot_x1 - plot_x0 > 0.8 * (x1 - x0), (page.plot, page.page)
    # the row centred under the plot
    left = min(n.bbox()[0] for n in names)
    right = max(n.bbox()[2] for n in names)
    middle = (plot_x0 + plot_x1) / 2
    assert abs((left + right) / 2 - middle) < 0.1 * (plot_x1 - plot_x0), (left, right, middle)
    defects = [d for d in check_figure(page) + check_readability(page)
               if not (d.kind == "truncation" and "1 … 4096" in d.texts[0])]
    assert defects == [], format_defects(defects, path.name)


def test_the_sweep_plot_exports_its_time_mode_too(open_window, qtbot, tmp_path):
    win = open_sweep_example(open_window, qtbot)
    win.sweep_plot.set_mode("time")
    path = tmp_path / "sweep.svg"
    assert win.export_sweep_plot(path, FigureOptions(size="double", dpi=300.0))
    texts = _texts(path.read_bytes())
    assert "T_lower [s]" in texts, texts
    assert any(re.fullmatch(r"\d+ [mµn]?s", t) for t in texts), texts  # (times on its axis)


def test_export_is_offered_only_for_a_plot(open_window, qtbot):
    win = open_sweep_example(open_window, qtbot)
    plot = win.sweep_plot
    assert plot.export_button.isEnabled()
    win.workspace.selection.select(None)
    qtbot.waitUntil(plot.is_empty)
    assert not plot.export_button.isEnabled()
    win.workspace.selection.select(win.document.session.operations[0].id)
    qtbot.waitUntil(lambda: not plot.is_empty())
    assert plot.export_button.isEnabled()


def test_a_sweep_plot_that_cannot_be_written_says_why_and_writes_nothing(
        open_window, qtbot, tmp_path):
    win = open_sweep_example(open_window, qtbot)
    errors = []
    win.show_error = lambda title, message: errors.append((title, message))
    missing = tmp_path / "no such folder" / "sweep.pdf"
    assert not win.export_sweep_plot(missing)
    assert errors and errors[-1][0] == "Cannot export sweep plot"
    assert str(missing) in errors[-1][1]
    assert not missing.parent.exists()

    wrong = tmp_path / "sweep.bmp"
    assert not win.export_sweep_plot(wrong)
    assert "sweep.bmp" in errors[-1][1] and ".png" in errors[-1][1]
    assert not wrong.exists()
    # (what the message offers is what the sweep plot is written as: .html is not)
    assert errors[-1][1].endswith("use .png, .svg or .pdf"), errors[-1][1]
    page = tmp_path / "sweep.html"
    assert not win.export_sweep_plot(page)
    assert "sweep.html: this figure is not written as .html; use .png, .svg or .pdf" \
        in errors[-1][1]
    assert not page.exists()
    assert not win.sweep_plot.is_empty()  # (the plot on screen still shown)


def test_a_name_typed_without_extension_takes_the_file_type_chosen(open_window, qtbot,
                                                                     monkeypatch, tmp_path):
    """"plot" typed with PDF chosen in the Export… dialog is plot.pdf (not a refusal of a
    file with no extension); a plot.svg already there is replaced only when the user says so,
    as the dialog asked about "plot" only."""
    win = open_sweep_example(open_window, qtbot)
    errors = []
    win.show_error = lambda title, message: errors.append((title, message))
    chosen = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *args, **kwargs: (str(tmp_path / "plot"), chosen[-1]))
    chosen.append("PDF (*.pdf)")
    qtbot.mouseClick(win.sweep_plot.export_button, Qt.MouseButton.LeftButton)
    assert errors == []
    assert (tmp_path / "plot.pdf").read_bytes().startswith(b"%PDF")
    assert not (tmp_path / "plot").exists()

    (tmp_path / "plot.svg").write_text("someone else's figure", encoding="utf-8")
    chosen.append("SVG (*.svg)")
    asked = []
    win.confirm_replace = lambda path: asked.append(path) or False
    qtbot.mouseClick(win.sweep_plot.export_button, Qt.MouseButton.LeftButton)
    assert asked == [tmp_path / "plot.svg"] and errors == []
    assert (tmp_path / "plot.svg").read_text(encoding="utf-8") == "someone else's figure"
    win.confirm_replace = lambda path: asked.append(path) or True
    qtbot.mouseClick(win.sweep_plot.export_button, Qt.MouseButton.LeftButton)
    assert b"<svg" in (tmp_path / "plot.svg").read_bytes() and errors == []


def test_a_narrow_sweep_plot_keeps_air_between_its_x_numbers(open_window, qtbot, tmp_path):
    """A sweep plot a paper column wide (its legend beside it) ran "10" and "100" into one:
    its x axis labelled every decade however close. Now every decade's number has the
    widest number's width and some air to itself, else every second one is labelled."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QFontMetricsF

    from workbench.ui.panels.sweep_plot import SweepPlot

    win = open_sweep_example(open_window, qtbot)
    plot = SweepPlot(win.workspace)  # (as narrow as a paper column, its legend beside it)
    qtbot.addWidget(plot)
    plot.bare()  # (the title line alone is wider than a column)
    plot.resize(450, 240)
    plot.show()
    qtbot.waitExposed(plot)
    axis = plot.plot_widget.getPlotItem().getAxis("bottom")
    qtbot.waitUntil(lambda: axis.geometry().width() > 0)
    lo, hi = axis.range
    metrics = QFontMetricsF(axis.style.get("tickFont") or axis.font())
    shown = []
    for spacing, values in axis.tickValues(lo, hi, axis.geometry().width()):
        for value, text in zip(values, axis.tickStrings(values, axis.scale, spacing),
                               strict=True):
            if text:
                x = axis.linkedView().mapViewToScene(QPointF(value, 0.0)).x()
                shown.append((x, metrics.horizontalAdvance(text), text))
    shown.sort()
    assert len(shown) >= 2, shown
    for (x0, w0, _t0), (x1, w1, _t1) in itertools.pairwise(shown):
        assert x1 - x0 - (w0 + w1) / 2 >= 0.5 * metrics.height(), shown


def test_the_png_is_a_png_of_the_figures_pixels(open_window, qtbot, tmp_path):
    """(The file as written: its header's size, not only what Qt reads back.)"""
    win = open_sweep_example(open_window, qtbot)
    path = tmp_path / "sweep.png"
    assert win.export_sweep_plot(path, FigureOptions(size="single", dpi=600.0))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    fig = resolve_size("single", dpi=600.0)
    assert (width, height) == (fig.width, fig.height) == (2100, 1560)


def test_the_example_without_a_sweep_has_nothing_to_export(open_window, qtbot):
    win = open_window(next(p for p in EXAMPLES if p.name == "llama_ffn.yaml"))
    errors = []
    win.show_error = lambda title, message: errors.append(message)
    win.sweep_dock.raise_()
    qtbot.waitUntil(lambda: win.sweep_plot.isVisible())
    assert not win.sweep_plot.export_button.isEnabled()
    assert not win.export_sweep_plot("unused.pdf")
    assert errors == ["The selected operation has no sweep to plot."]


def test_a_transparent_figure_choice_leaves_the_plots_page_clear(open_window, qtbot, tmp_path):
    win = open_sweep_example(open_window, qtbot)
    clear, filled = tmp_path / "clear.png", tmp_path / "filled.png"
    assert win.export_sweep_plot(clear, FigureOptions(size="double", dpi=96.0,
                                                      transparent=True))
    assert win.export_sweep_plot(filled, FigureOptions(size="double", dpi=96.0))
    corner = (QImage(str(clear)).pixelColor(2, 2), QImage(str(filled)).pixelColor(2, 2))
    assert corner[0].alpha() == 0
    assert corner[1].alpha() == 255 and corner[1].name() == "#ffffff"  # (the light theme's page)


def test_the_sweep_plots_figure_takes_the_figure_choices_theme(open_window, qtbot, tmp_path):
    """As the chart's figures do: a dark figure of a session shown in the light theme, the
    plot on screen left light."""
    win = open_sweep_example(open_window, qtbot)
    path = tmp_path / "dark.png"
    assert win.export_sweep_plot(path, FigureOptions(size="double", dpi=96.0, theme="dark"))
    assert QImage(str(path)).pixelColor(2, 2).name() == "#16181d"  # (the dark theme's page)
    assert win.document.session.view.theme == "light"
    live = win.sweep_plot.plot_widget.grab().toImage().pixelColor(2, 2)
    assert live.name() == "#ffffff"


def test_a_page_too_small_for_the_plot_says_so(open_window, qtbot, tmp_path):
    win = open_sweep_example(open_window, qtbot)
    errors = []
    win.show_error = lambda title, message: errors.append(message)
    path = tmp_path / "tiny.png"
    assert not win.export_sweep_plot(path, FigureOptions(size="custom", width=160, height=120,
                                                         dpi=96.0))
    assert errors == ["a plot of 160 × 120 pixels at 96 dpi is too small for its axes and "
                      "legend: choose a larger size or a lower dpi"]
    assert not path.exists()


def test_a_column_wide_plot_of_five_machines_grows_taller_for_its_legend(
        open_window, qtbot, tmp_path):
    """Five machines' legend has no room on a single column's 3.5 × 2.6 in page, and a
    figure's reader must be able to tell its curves apart: the page grows taller, as the
    chart's figures do for their key, and names every machine."""
    from workbench.io.user_presets import find_preset

    win = open_sweep_example(open_window, qtbot)
    for preset in ("mi300x", "rtx-4090", "h200"):
        win.document.add_machine(find_preset(preset), preset=preset)
    qtbot.waitUntil(lambda: len(win.sweep_plot.curves()) == 5)
    path = tmp_path / "five.svg"
    assert win.export_sweep_plot(path, FigureOptions(size="single", dpi=300.0))
    fig = resolve_size("single", dpi=300.0)
    root = ET.fromstring(path.read_bytes())
    height_mm = float(root.get("height").removesuffix("mm"))
    assert height_mm > fig.inches[1] * 25.4 + 1, height_mm
    texts = _texts(path.read_bytes())
    for hw in win.document.session.hardware:
        assert hw.hardware.label in texts, (hw.hardware.label, texts)
    message = win.statusBar().currentMessage()
    assert message.startswith(f"Exported {path} (1050 × ") and "(1050 × 780 px)" not in message


def test_a_right_click_on_the_sweep_plot_copies_or_exports_it(open_window, qtbot, monkeypatch,
                                                              tmp_path):
    """The plot's own menu (pyqtgraph's is off): Copy Plot puts the figure Export… would
    write on the clipboard; Export Plot… asks where to write it."""
    from PySide6.QtGui import QGuiApplication

    win = open_sweep_example(open_window, qtbot)
    save_options(win.settings, FigureOptions(size="double", dpi=150.0))
    menu = right_click_menu(qtbot, win.sweep_plot.plot_widget.viewport())
    texts = [a.text() for a in menu.actions()]
    assert texts == ["&Copy Plot", "E&xport Plot…"]
    QGuiApplication.clipboard().clear()
    menu.actions()[0].trigger()  # (as a click does: the menu closes itself)
    image = QGuiApplication.clipboard().image()
    fig = resolve_size("double", dpi=150.0)
    assert (image.width(), image.height()) == (fig.width, fig.height)
    assert win.statusBar().currentMessage() == (
        f"Copied the sweep plot ({fig.width} × {fig.height} px)")
    # the same figure as Export… writes
    path = tmp_path / "sweep.png"
    _export_by_button(win, qtbot, monkeypatch, path)
    written = QImage(str(path)).convertToFormat(image.format())
    assert written == image
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *args, **_kwargs: asked.append(args) or ("", ""))
    win.sweep_plot.plot_widget.context_menu().actions()[1].trigger()
    assert len(asked) == 1 and asked[0][1] == "Export Sweep Plot"
    # from the keyboard: Ctrl+C on the focused plot copies the same picture
    QGuiApplication.clipboard().clear()
    plot = win.sweep_plot.plot_widget
    qtbot.keyClick(plot, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().image().convertToFormat(image.format()) == image
