"""Export Figure, Copy Figure and Export Results as CSV, driven through the main window."""

from __future__ import annotations

import contextlib
import csv
import re

import pymupdf
import pytest
from conftest import EXAMPLES
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QMessageBox

from workbench.io.sessions import load_session
from workbench.ui.chart.theme import get_theme
from workbench.ui.figures.export_dialog import CUSTOM, ExportDialog, FigureOptions, save_options
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


@contextlib.contextmanager
def _window_on(qtbot, path):
    """The main window on the session ``path``, shown; closed after, changes discarded."""
    create_app()
    win = MainWindow()
    win.settings.clear()
    win.open_path(path)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        win.ask_save_changes = lambda: QMessageBox.Discard
        dialog = getattr(win, "export_dialog", None)
        if dialog is not None:
            dialog.close()
        win.close()
        win.deleteLater()


@pytest.fixture
def window(qtbot):
    with _window_on(qtbot, LLAMA) as win:
        yield win


def _file_menu_texts(win) -> list[str]:
    menu = win.menuBar().actions()[0].menu()
    return [a.text().replace("&", "") for a in menu.actions()]


def test_file_menu_has_the_export_actions(window):
    texts = _file_menu_texts(window)
    assert "Export Figure…" in texts and "Copy Figure" in texts
    assert any("CSV" in t for t in texts)
    assert window.export_figure_action.shortcut().toString() == "Ctrl+E"
    assert window.copy_figure_action.shortcut().toString() == "Ctrl+Shift+C"


def test_export_figure_through_the_dialog_writes_the_chosen_size(window, tmp_path, qtbot):
    window.export_figure_action.trigger()
    dialog = window.export_dialog
    assert isinstance(dialog, ExportDialog) and dialog.isVisible()
    dialog.size_combo.setCurrentIndex(dialog.size_combo.findData(CUSTOM))
    assert dialog.width_spin.isEnabled()
    dialog.width_spin.setValue(640)
    dialog.height_spin.setValue(400)
    dialog.dpi_spin.setValue(120)
    dialog.theme_combo.setCurrentIndex(dialog.theme_combo.findData("dark"))
    target = tmp_path / "chart.png"
    dialog.path_edit.setText(str(target))
    assert "640 × 400 px at 120 dpi" in dialog.summary.text()
    dialog.accept_path(target)
    assert not dialog.isVisible()
    image = QImage(str(target))
    assert (image.width(), image.height()) == (640, 400)
    assert round(image.dotsPerMeterX() * 0.0254) == 120
    assert image.pixelColor(1, 1).name() == get_theme("dark").background.lower()
    assert "Exported" in window.statusBar().currentMessage()

    # the dialog remembers the choices
    window.export_figure_action.trigger()
    again = window.export_dialog.options()
    assert again == FigureOptions(size=CUSTOM, width=640, height=400, dpi=120.0, theme="dark")
    assert window.export_dialog.path_edit.text() == str(target)


def test_export_figure_as_an_html_page(window, tmp_path):
    """File ▸ Export Figure… with a .html name: the page of the chart as shown, its SVG at
    the chosen size, the session's operations in its table and key."""
    window.export_figure_action.trigger()
    dialog = window.export_dialog
    dialog.size_combo.setCurrentIndex(dialog.size_combo.findData(CUSTOM))
    dialog.width_spin.setValue(1200)
    dialog.height_spin.setValue(750)
    dialog.dpi_spin.setValue(120)
    target = tmp_path / "chart.html"
    dialog.path_edit.setText(str(target))
    assert dialog.summary.text().startswith("HTML: 1200 × 750 px at 120 dpi")
    assert "opens in any browser" in dialog.summary.text()
    dialog.accept_path(target)
    assert not dialog.isVisible()
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # 1200 px at 120 dpi is 10 in: the figure is laid out 960 logical pixels wide
    assert re.search(r'<svg [^>]*width="254mm"[^>]*viewBox="0 0 960 600"', page)
    for entry in window.document.session.operations:
        assert f"<td>{entry.operation.name}<td>" in page
    assert "Exported" in window.statusBar().currentMessage()


def test_presets_set_pixels_and_bad_names_disable_export(window, tmp_path):
    window.export_figure_action.trigger()
    dialog = window.export_dialog
    dialog.size_combo.setCurrentIndex(dialog.size_combo.findData("single"))
    assert dialog.dpi_spin.value() == 300
    assert (dialog.width_spin.value(), dialog.height_spin.value()) == (1050, 780)
    assert not dialog.width_spin.isEnabled()
    dialog.size_combo.setCurrentIndex(dialog.size_combo.findData("slide"))
    assert (dialog.width_spin.value(), dialog.height_spin.value()) == (1920, 1080)
    dialog.path_edit.setText(str(tmp_path / "chart.jpg"))
    assert "unknown figure format" in dialog.summary.text()
    dialog.accept()  # refused: nothing written, the dialog stays
    assert dialog.isVisible()
    assert list(tmp_path.iterdir()) == []
    for fmt in ("svg", "pdf"):
        dialog.accept_path(tmp_path / f"chart.{fmt}")
        assert (tmp_path / f"chart.{fmt}").stat().st_size > 1000
        window.export_figure_action.trigger()
        dialog = window.export_dialog
    assert (tmp_path / "chart.pdf").read_bytes().startswith(b"%PDF")


def test_unwritable_path_shows_a_message_not_a_traceback(window, tmp_path):
    target = tmp_path / "no" / "such" / "folder" / "chart.png"
    assert not window.export_figure(target, FigureOptions(size=CUSTOM, width=300, height=200,
                                                          dpi=96))
    box = window._error_box
    assert box.isVisible() and box.windowTitle() == "Cannot export figure"
    assert "chart.png" in box.text() and "Traceback" not in box.text()
    box.close()
    assert not target.exists()


def test_copy_figure_puts_an_image_of_the_chosen_size_on_the_clipboard(window):
    save_options(window.settings, FigureOptions(size=CUSTOM, width=500, height=320, dpi=96,
                                                theme="light", transparent=True))
    QGuiApplication.clipboard().clear()
    window.copy_figure_action.trigger()
    image = QGuiApplication.clipboard().image()
    assert not image.isNull()
    assert (image.width(), image.height()) == (500, 320)
    assert image.pixelColor(1, 1).alpha() == 0  # transparent, as chosen
    # something is drawn: dark ink (roofs, text) in the middle of the figure
    dark = sum(1 for x in range(0, 500, 4) for y in range(0, 320, 4)
               if image.pixelColor(x, y).alpha() > 200 and image.pixelColor(x, y).value() < 90)
    assert dark > 30


def test_export_follows_the_zoom_on_screen(window, tmp_path):
    """The figure shows what the canvas shows: zoom in on screen, the export zooms too."""
    options = FigureOptions(size=CUSTOM, width=400, height=300, dpi=96)
    whole, zoomed = tmp_path / "whole.svg", tmp_path / "zoomed.svg"
    assert window.export_figure(whole, options)
    window.canvas.set_view_range((1, 100), (1e12, 1e15))
    assert window.export_figure(zoomed, options)
    assert "0.1" in whole.read_text(encoding="utf-8")
    text = zoomed.read_text(encoding="utf-8")
    assert ">0.1<" not in text and ">10⁴<" not in text


def test_a_figure_draws_no_marker_out_of_its_view(qtbot, tmp_path):
    """Zoomed so that the plot's top runs just under the highest markers, the figure drew
    those markers whole above the plot (the window's plot clips them; a random walk's slide
    had them under its title). In a figure a marker whose middle is out of the view is not
    drawn; the window draws every marker again after the export."""
    import pyqtgraph as pg
    from figures.figcheck import check_figure, format_defects, read_figure

    path = next(p for p in EXAMPLES if p.name == "real_kernels_h100_h200.yaml")
    with _window_on(qtbot, path) as win:
        win.resize(1600, 1000)
        canvas = win.canvas
        canvas.fit_to_data()
        canvas.relayout()
        top = max(y for _op, _hw, _x, y in canvas.point_items())
        (x0, x1), (y0, _y1) = canvas.view_range()
        canvas.set_view_range((x0, x1), (y0, top / 1.03))  # (just under the highest)
        canvas.relayout()
        scatters = [item for item in canvas.plot_widget.scene().items()
                    if isinstance(item, pg.ScatterPlotItem) and item.getViewBox() is not None
                    and len(item.data)]

        def drawn_out_of_view() -> int:
            (a, b), (c, d) = canvas.view_box.viewRange()
            return sum(int(((~((s.data["x"] >= a) & (s.data["x"] <= b) & (s.data["y"] >= c)
                                & (s.data["y"] <= d))) & s.data["visible"]).sum())
                       for s in scatters)

        before = drawn_out_of_view()
        assert before > 0  # (drawn, and clipped by the plot)
        with canvas.export_mode():
            assert drawn_out_of_view() == 0
        assert drawn_out_of_view() == before
        pdf = tmp_path / "cut.pdf"
        assert win.export_figure(pdf, FigureOptions(size="slide", dpi=144.0))
        defects = check_figure(read_figure(pdf.read_bytes()))
        assert not defects, format_defects(defects, "a slide of the view cut at the top")


def test_export_results_as_csv_has_units_in_the_header(window, tmp_path):
    target = tmp_path / "results.csv"
    assert window.export_results_csv(target)
    with target.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    assert "intensity [FLOP/B]" in header
    assert any(h.endswith("[s]") for h in header)
    assert any("[FLOP/s]" in h for h in header)
    session = load_session(LLAMA)
    assert len(rows) - 1 == len(session.operations) * len(session.hardware)


def test_one_row_is_counted_as_one_row(qtbot, tmp_path):
    """One operation on one machine: the table counts "1 row" and its export says it
    wrote 1 row (not "1 rows")."""
    path = tmp_path / "one.yaml"
    path.write_text("schema_version: 2\ntitle: one\nhardware:\n  - preset: h100-sxm\n"
                    "operations:\n  - {name: g, kind: gemm, m: 64, n: 64, k: 64, dtype: bf16}\n",
                    encoding="utf-8")
    with _window_on(qtbot, path) as win:
        qtbot.waitUntil(lambda: win.results_table.count_label.text() == "1 row")
        assert win.export_results_csv(tmp_path / "one.csv")
        assert win.statusBar().currentMessage().startswith("Exported 1 row to ")


def test_export_results_to_an_unwritable_path_shows_a_message(window, tmp_path):
    assert not window.export_results_csv(tmp_path / "missing" / "results.csv")
    assert "results.csv" in window.last_error
    window._error_box.close()


def test_a_figure_does_not_depend_on_the_figures_exported_before(qtbot):
    """The export keeps its chart between figures (building it is a third of an export);
    nothing of one figure may show in the next: the same session and options give the same
    file whatever was exported in between (here the room the y axis keeps for its tick
    labels, which pyqtgraph would otherwise remember from the widest seen)."""
    from workbench.ui.figures.export import figure_bytes, resolve_size

    create_app()
    attention = load_session(next(p for p in EXAMPLES if p.name == "attention.yaml"))
    sweep = load_session(next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml"))
    slide = resolve_size("slide", None, None, None, "light")
    first = figure_bytes(attention, "svg", slide)
    assert figure_bytes(attention, "svg", slide) == first  # deterministic
    figure_bytes(sweep, "svg", resolve_size("single", None, None, None, "light"))
    assert figure_bytes(attention, "svg", slide) == first
    figure_bytes(sweep, "svg", resolve_size("slide", None, None, None, "presentation"),
                 theme="presentation")
    figure_bytes(sweep, "svg", resolve_size(None, 400, 300, 96, "dark"), theme="dark",
                 view_range=((1e-3, 1e6), (1e6, 1e18)))
    assert figure_bytes(attention, "svg", slide) == first


def test_a_figure_laid_out_again_draws_the_scene_it_built(qtbot, monkeypatch):
    """A figure whose tags found no place in the fitted view (the real kernels' slide) is
    laid out again in a roomier one, on the same chart: its scene is built once, not again
    for the second layout, and the file is the one a chart set to that view from the start
    gives."""
    from workbench.ui.chart import canvas as canvas_module
    from workbench.ui.figures.export import figure_bytes, last_figure_canvas, resolve_size
    from workbench.ui.figures.figure_canvas import FigureCanvas

    create_app()
    session = load_session(next(p for p in EXAMPLES if p.name == "real_kernels_h100_h200.yaml"))
    fig = resolve_size("slide", None, None, None, "presentation")
    built, laid_out = [], []
    build_scene, relayout = canvas_module.build_scene, FigureCanvas.relayout
    monkeypatch.setattr(canvas_module, "build_scene",
                        lambda *args: built.append(1) or build_scene(*args))
    monkeypatch.setattr(FigureCanvas, "relayout",
                        lambda self: laid_out.append(self.view_range()) or relayout(self))
    svg = figure_bytes(session, "svg", fig, theme="presentation")
    assert len(laid_out) == 2, "the fitted view and the roomier one: two layouts"
    assert laid_out[1] != laid_out[0]
    assert len(built) == 1
    roomier = last_figure_canvas().view_range()
    assert figure_bytes(session, "svg", fig, theme="presentation", view_range=roomier) == svg


# --------------------------------------------------------------------------------------
# every export of a view the same figure, each text once, no window left behind

TICK_RATE = re.compile(r"^\d+(\.\d+)? [kMGTPE]?FLOP/s$")  # a y tick label: "100 TFLOP/s"


def _spans(document: pymupdf.Document) -> list[tuple[str, tuple[float, ...]]]:
    """Every text span of the first page as a reader (a text search, a screen reader, a
    vector editor) finds it: its text and its box in points."""
    page = document[0]
    return [(span["text"].strip(), tuple(span["bbox"]))
            for block in page.get_text("dict")["blocks"] for line in block.get("lines", [])
            for span in line["spans"] if span["text"].strip()]


def test_exporting_the_same_view_twice_gives_the_same_figure(window, tmp_path):
    """A second export of the same view at double-column size kept all the y-axis numbers
    (it used to keep two of six "… FLOP/s" texts: the axes lost their tick labels)."""
    options = FigureOptions(size="double", dpi=300)
    texts, ticks = [], []
    for name in ("first.pdf", "second.pdf", "third.pdf"):
        assert window.export_figure(tmp_path / name, options)
        spans = _spans(pymupdf.open(tmp_path / name))
        texts.append([text for text, _box in spans])
        ticks.append(sorted(text for text in texts[-1] if TICK_RATE.match(text)))
    assert len(ticks[0]) >= 3, texts[0]
    assert ticks[1] == ticks[0] and ticks[2] == ticks[0]
    assert texts[1] == texts[0] and texts[2] == texts[0]
    assert sum("FLOP/s" in t for t in texts[1]) == sum("FLOP/s" in t for t in texts[0])
    # the same file for the same view: SVG byte for byte, PDF text for text, box for box
    slide = FigureOptions(size="slide", dpi=144)
    for fmt in ("svg", "pdf"):
        assert window.export_figure(tmp_path / f"a.{fmt}", slide)
        assert window.export_figure(tmp_path / f"b.{fmt}", slide)
        assert _spans(pymupdf.open(tmp_path / f"b.{fmt}")) == _spans(
            pymupdf.open(tmp_path / f"a.{fmt}"))
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()


@pytest.mark.parametrize("name", ["attention.yaml", "critical_batch_sweep.yaml", "fusion.yaml",
                                  "llama_ffn.yaml", "sharded_matmul.yaml",
                                  "teaching_machine.yaml"])
def test_no_text_is_drawn_twice_in_vector_figures(qtbot, name):
    """Each tick label is drawn once in a PDF and an SVG, and no text at all twice at one
    place (it was: invisible on paper, doubled in a vector editor, a text search or a
    screen reader)."""
    from figures.example_figures import example_figure

    from workbench.ui.figures.export import figure_bytes, resolve_size

    create_app()
    session = load_session(next(p for p in EXAMPLES if p.name == name))
    for size in ("slide", "double", "single"):
        fig = resolve_size(size, None, None, None, "light")
        for fmt in ("pdf", "svg"):
            # (the PDF as the figure checks read it: one export per run)
            data = (example_figure(name.removesuffix(".yaml"), size).pdf if fmt == "pdf"
                    else figure_bytes(session, fmt, fig))
            spans = _spans(pymupdf.open(stream=data, filetype=fmt))
            where = f"{name}, {size}, {fmt}"
            ticks = [text for text, _box in spans if TICK_RATE.match(text)]
            assert len(ticks) >= 2, where
            assert len(ticks) == len(set(ticks)), (where, ticks)
            placed = [(text, tuple(round(v) for v in box)) for text, box in spans]
            assert len(placed) == len(set(placed)), (where, sorted(placed))


def test_export_and_copy_leave_no_window_behind(window, tmp_path):
    """The figure is drawn on a canvas that is never on screen; after an export or a copy
    no such window is left shown (the application would wait for it before quitting)."""
    from PySide6.QtWidgets import QApplication

    from workbench.ui.figures.export import _figure_canvas_class

    def shown() -> set:
        return {w for w in QApplication.topLevelWidgets() if w.isVisible()}

    before = shown()
    assert window in before
    assert window.export_figure(tmp_path / "chart.pdf", FigureOptions(size="double", dpi=300))
    assert window.copy_figure() is not None
    assert window.export_figure(tmp_path / "chart.png", FigureOptions(size="slide"))
    assert shown() <= before
    assert not [w for w in shown() if isinstance(w, _figure_canvas_class())]


_APP_THAT_EXPORTS_AND_QUITS = """
import sys, time
sys.path.insert(0, {root!r})
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from workbench.ui.figures.export_dialog import FigureOptions
from workbench.ui.window.launch import start

window = start({example!r})

def drive():
    window.export_figure({figure!r}, FigureOptions(size="double", dpi=300))
    window.copy_figure()
    print("quitting", flush=True)
    window.quit_action.trigger()

QTimer.singleShot(200, drive)
sys.exit(QApplication.instance().exec())
"""


def test_quitting_after_an_export_and_a_copy_ends_the_process(tmp_path):
    """Start the app on an example, export a figure, copy one, File ▸ Quit: the process
    ends on its own (it used to stay alive, its figure canvas still shown)."""
    import os
    import subprocess
    import sys

    from conftest import HANG_GUARD_S, ROOT

    figure = tmp_path / "figure.pdf"
    script = _APP_THAT_EXPORTS_AND_QUITS.format(root=str(ROOT), example=str(LLAMA),
                                                figure=str(figure))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")  # isolated HOME from conftest
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path) as proc:
        line = proc.stdout.readline()
        try:
            _out, err = proc.communicate(timeout=HANG_GUARD_S)
            ended = True
        except subprocess.TimeoutExpired:  # still running: the defect
            proc.kill()
            _out, err = proc.communicate()
            ended = False
    assert line.strip() == "quitting", err[-2000:]
    assert ended, "still running after File ▸ Quit"
    assert proc.returncode == 0, err[-2000:]
    assert figure.read_bytes().startswith(b"%PDF")



def test_a_column_figure_grows_for_its_key_and_says_so(qtbot, tmp_path):
    """Single column, the Llama-3.1-8B example (26 operations keyed): the dialog says the
    figure may grow; the PDF written is 3.5 in wide and taller than 2.6 in, its key lists
    every row ("and 8 more operations" before), and the status bar gives the size written,
    not the preset's."""
    from figures.figcheck import read_figure

    with _window_on(qtbot, next(p for p in EXAMPLES if p.stem == "llama31_8b_inference")) \
            as win:
        win.export_figure_action.trigger()
        dialog = win.export_dialog
        dialog.size_combo.setCurrentIndex(dialog.size_combo.findData("single"))
        dialog.path_edit.setText(str(tmp_path / "llama.pdf"))
        assert "3.50 × 2.60 in; taller if its key needs the room" in dialog.summary.text()
        dialog.accept_path(tmp_path / "llama.pdf")
        fig = read_figure(tmp_path / "llama.pdf")
        width_in = (fig.page[2] - fig.page[0]) / 72.0
        height_in = (fig.page[3] - fig.page[1]) / 72.0
        assert width_in == pytest.approx(3.5, abs=0.01) and 2.7 < height_in <= 2.6 * 1.8
        texts = " ".join(t.text for t in fig.texts)
        assert "more operations" not in texts and "13 — " in texts
        # the status bar: the pixels written at 300 dpi
        message = win.statusBar().currentMessage()
        written = re.search(r"\((\d+) × (\d+) px\)", message)
        assert written and int(written[1]) == 1050, message
        assert int(written[2]) == pytest.approx(height_in * 300, abs=2), message


def test_the_export_dialog_shows_a_folder_and_a_file_name_whole(window, qtbot):
    """The path field was as narrow as the dialog's other rows: a path of a folder or two
    and a file name ("…/examples/llama_ffn.png") showed as "mples/llama_ffn.png"."""
    window.export_figure_action.trigger()
    dialog = window.export_dialog
    qtbot.waitUntil(dialog.isVisible)
    path = "/home/someone/papers/roofline/figures/llama_ffn.png"  # (48 characters)
    dialog.path_edit.setText(path)
    edit = dialog.path_edit
    room = edit.contentsRect().width() - 2 * edit.style().pixelMetric(
        edit.style().PixelMetric.PM_DefaultFrameWidth) - 4  # (the text's own margins)
    assert edit.fontMetrics().horizontalAdvance(path) <= room, (room, edit.width())
    assert dialog.frameGeometry().width() <= window.screen().availableGeometry().width()
    dialog.reject()


def test_an_html_page_is_the_same_whatever_was_made_before_it(qapp, tmp_path):
    """The page names its marks by the machines' and operations' ids, which come from one
    counter for the whole process: the same figure exported again (after the user opened
    another session, or in the app instead of on the command line) gave other ids, other
    bytes and another size. Its ids now count from one in the session's order."""
    from workbench.ui.figures.export import render_figure

    attention = next(p for p in EXAMPLES if p.name == "attention.yaml")
    first, again = tmp_path / "first.html", tmp_path / "again.html"
    render_figure(load_session(attention), first)
    for _ in range(3):  # (more sessions read meanwhile: the counter moves on)
        load_session(next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml"))
    render_figure(load_session(attention), again)
    assert first.read_bytes() == again.read_bytes()
    assert 'data-hw="1"' in first.read_text(encoding="utf-8")
