"""The Model tab runs a whole request: typing Output tokens shows the request latency, the
output tokens per second per user and per chip, and every machine's largest batch; the
serving settings typed into its form (memory utilisation, all-reduce, routing imbalance,
speculative decoding) change what the results table shows and are saved with the session."""

from __future__ import annotations

import pytest
from conftest import HANG_GUARD_S, right_click_menu
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup
from workbench.model.llm.results import model_result
from workbench.model.llm.session import ModelEntry
from workbench.model.units import format_number, format_quantity
from workbench.ui.figures.export_dialog import FigureOptions
from workbench.ui.panels.model_panel import (
    ROW_CAPACITY,
    ROW_MAX_BATCH,
    ROW_OUT_CHIP,
    ROW_OUT_USER,
    ROW_PREDICTED,
    ROW_REQUEST,
)


@pytest.fixture
def window(open_window):
    win = open_window(size=(1366, 768))
    win.ask_save_changes = lambda: QMessageBox.Discard  # (the tests replace the session)
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    return win


def test_output_tokens_typed_show_the_request(qtbot, window, tmp_path):
    win = window
    arch = read_model_config("Llama-3.1-8B")
    entry = ModelEntry("Llama-3.1-8B", arch, Setup(phase="decode", batch=8, prompt_len=2048,
                                                   kv_len=2048), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    table = panel.table
    qtbot.waitUntil(lambda: table.columnCount() == 1)
    assert table.item(ROW_REQUEST, 0).text() == "—"
    single = int(table.item(ROW_MAX_BATCH, 0).text().replace(",", ""))

    spin = panel.editor.form.output_len
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "256")
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: table.item(ROW_REQUEST, 0).text() != "—")

    hw = get_preset("h100-sxm")  # as a new session predicts: calibrated, auto launches
    hw.prediction, hw.launches = "calibrated", "auto"
    setup = Setup(phase="decode", batch=8, prompt_len=2048, kv_len=2048)
    ttft = model_result(arch, setup.with_(phase="prefill"), hw).t_predicted_s
    low = ttft + 256 * model_result(arch, setup, hw).t_predicted_s
    high = ttft + 256 * model_result(arch, setup.with_(kv_len=2048 + 256), hw).t_predicted_s
    request = panel.requests[0]
    assert table.item(ROW_REQUEST, 0).text() == format_quantity(request.request_s, "time")
    assert low < request.request_s < high
    assert table.item(ROW_OUT_USER, 0).text() == format_number(256 / request.request_s)
    assert table.item(ROW_OUT_CHIP, 0).text() == format_number(8 * 256 / request.request_s)
    # the cache now holds prompt + output positions: fewer sequences fit (by hand:
    # ⌊(0.9 · 85.52 GB − 1 GiB − 16.06 GB of weights − 537 MB of prefill chunk) / 302 MB⌋
    # = 196, worked out in tests/model/test_serving.py)
    assert table.item(ROW_MAX_BATCH, 0).text() == "196" and single > 196
    assert "request" in panel.derivation.toPlainText()
    # saved and read back
    path = tmp_path / "r.yaml"
    assert win.save_to(path)
    assert "output_len: 256" in path.read_text(encoding="utf-8")


def test_expert_and_pipeline_fields_refuse_what_the_model_cannot_take(qtbot, window):
    win = window
    arch = read_model_config("Llama-3.1-8B")
    entry = ModelEntry("Llama-3.1-8B", arch, Setup(phase="decode", batch=8), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    qtbot.waitUntil(lambda: panel.table.columnCount() == 1)
    form = panel.editor.form
    form.ep.setValue(4)  # a dense model has no experts to split
    assert "no routed experts" in panel.editor.problem.text()
    assert entry.setup.ep == 1
    form.ep.setValue(1)
    form.pp.setValue(2)  # two stages: the memory per chip halves, nearly
    qtbot.waitUntil(lambda: entry.setup.pp == 2)
    before = model_result(arch, Setup(phase="decode", batch=8), get_preset("h100-sxm"))
    after = panel.results[0]
    assert after.memory_needed_bytes < 0.6 * before.memory_needed_bytes
    assert table_text(panel, ROW_MAX_BATCH) == f"{after.max_batch:,}"


def table_text(panel, row):
    return panel.table.item(row, 0).text()


def test_throughput_page_draws_every_machine_and_exports_a_clean_figure(qtbot, window,
                                                                        tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from figures.figcheck import check_pdf, check_readability, read_figure

    from workbench.model.llm.results import batch_sweep

    win = window
    for preset in ("h200", "mi300x"):
        win.document.add_machine(get_preset(preset), preset)
    arch = read_model_config("Llama-3.1-405B")
    setup = Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048, output_len=256,
                  tp=8, weights="fp8")
    entry = ModelEntry("Llama-3.1-405B", arch, setup, name="405B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    qtbot.waitUntil(lambda: panel.table.columnCount() == 3)
    panel.pages.setCurrentIndex(2)
    chart = panel.chart
    qtbot.waitUntil(lambda: len(chart.curves) == 3)
    machines = [e.hardware for e in win.document.session.hardware]
    for curve, hw in zip(chart.curves, machines, strict=True):
        assert curve.label == hw.label
        expected = batch_sweep(arch, setup, hw)
        assert [p[2] for p in curve.points] == [p.batch for p in expected]
        assert curve.points[-1][2] == panel.results[machines.index(hw)].max_batch
    assert chart.isVisible() and chart.width() > 200
    assert chart.title == "405B: prompt 2,048 + 256 output tokens, fp8, tp 8"

    path = tmp_path / "throughput.pdf"
    assert win.export_throughput_chart(path, FigureOptions(size="double", dpi=300.0))
    data = path.read_bytes()
    assert check_pdf(data) == []
    figure = read_figure(data)
    assert check_readability(figure) == []
    texts = " ".join(t.text for t in figure.texts)
    for hw in machines:  # every curve named
        assert hw.label in texts
    # a read-only file is refused and left as it was; so is an unknown format
    warnings = []
    win.show_error = lambda _title, message: warnings.append(message)
    path.chmod(0o444)
    assert not win.export_throughput_chart(path, FigureOptions(size="double", dpi=300.0))
    assert warnings and str(path) in warnings[0]
    assert path.read_bytes() == data
    assert not win.export_throughput_chart(tmp_path / "chart.bmp")
    assert "chart.bmp" in warnings[-1]
    assert not (tmp_path / "chart.bmp").exists()


def test_throughput_chart_as_svg_and_png(qtbot, window, tmp_path):
    import subprocess

    from PySide6.QtGui import QImage

    win = window
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    svg, png = tmp_path / "t.svg", tmp_path / "t.png"
    options = FigureOptions(size="custom", width=1400, height=900, dpi=200.0)
    assert win.export_throughput_chart(svg, options)
    assert win.export_throughput_chart(png, options)
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1400, 900)  # 7 × 4.5 in at 200 dpi
    # an independent renderer draws the SVG, with the machine named in it
    out = tmp_path / "svg.png"
    subprocess.run(["rsvg-convert", str(svg), "-o", str(out)], check=True, timeout=HANG_GUARD_S)
    drawn = QImage(str(out))
    assert drawn.width() > 600 and drawn.height() > 400
    # its curve runs to the largest batch: (85,520,809,984 B × 0.9 − 1 GiB of runtime reserve
    # − 2 · 8,030,261,248 B of weights − 8,192 · (4,096 + 28,672) · 2 B of one prefill
    # chunk) over 2,048 · 131,072 B of KV cache per sequence = 220
    largest = int((81559 * 2**20 * 0.9 - 2**30 - 2 * 8_030_261_248 - 8192 * 32768 * 2)
                  // (2048 * 131072))
    assert largest == 220
    assert f"NVIDIA H100 SXM5 80GB (batch 1–{largest})" in svg.read_text(encoding="utf-8")


def _throughput_page(win):
    """The Model tab of Llama-3.1-8B decoding at batch 1, its Throughput page shown."""
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    panel.pages.setCurrentIndex(2)
    return panel


@pytest.mark.parametrize(("size", "dpi", "theme", "transparent"), [
    ("single", 300.0, "light", False), ("slide", 144.0, "dark", False),
    ("double", 600.0, "light", True)])
def test_the_throughput_chart_takes_the_figure_choices(qtbot, window, tmp_path, monkeypatch,
                                                       size, dpi, theme, transparent):
    """Export Chart… drew a 7 × 4.5 in page at 200 dpi whatever was chosen: a paper column
    got a chart to shrink, its 9-pt labels to 4.5 pt. It now draws at the size, DPI, theme
    and background last chosen in File ▸ Export Figure, as every figure does, its PNG and
    PDF from its SVG, and every text readable on the page."""
    import sys
    from pathlib import Path

    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QFileDialog

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from figures.figcheck import check_pdf, check_readability, read_figure

    from workbench.ui.figures.export_dialog import save_options
    from workbench.ui.figures.figure_size import resolve_size
    from workbench.ui.panels.throughput_chart import chart_background

    win = window
    panel = _throughput_page(win)
    save_options(win.settings, FigureOptions(size=size, dpi=dpi, theme=theme,
                                             transparent=transparent))
    path = tmp_path / "throughput.png"
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *args, **_kwargs: asked.append(args) or (str(path), ""))
    qtbot.mouseClick(panel.export_chart_button, Qt.MouseButton.LeftButton)
    assert len(asked) == 1 and asked[0][1] == "Export Throughput Chart"
    fig = resolve_size(size, dpi=dpi)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (fig.width, fig.height)
    assert round(image.dotsPerMeterX() * 0.0254) == round(dpi)
    corner = image.pixelColor(2, 2)
    if transparent:
        assert corner.alpha() == 0
    else:
        assert corner.name() == chart_background(theme == "dark").lower()
    pdf = tmp_path / "throughput.pdf"
    assert win.export_throughput_chart(pdf)
    figure = read_figure(pdf.read_bytes())
    assert abs(figure.page[2] - figure.page[0] - fig.inches[0] * 72) < 1, (figure.page, fig)
    assert check_pdf(pdf.read_bytes()) == []
    assert check_readability(figure) == []


def test_a_right_click_on_the_throughput_chart_copies_or_exports_it(qtbot, window, tmp_path,
                                                                    monkeypatch):
    """The chart could leave the app only through Export Chart… (the sweep plot and the
    main chart are copied too): a right click offers Copy Chart, the figure Export Chart…
    writes, as an image on the clipboard, and Export Chart…; with no model shown, Copy
    Chart says why and leaves the clipboard as it was."""
    from PySide6.QtGui import QGuiApplication, QImage
    from PySide6.QtWidgets import QFileDialog

    from workbench.ui.figures.export_dialog import save_options
    from workbench.ui.figures.figure_size import resolve_size

    win = window
    panel = _throughput_page(win)
    chart = panel.chart
    qtbot.waitUntil(lambda: chart.isVisible() and len(chart.curves) == 1)
    save_options(win.settings, FigureOptions(size="single", dpi=200.0, theme="dark"))
    menu = right_click_menu(qtbot, chart)
    assert [a.text() for a in menu.actions()] == ["&Copy Chart", "E&xport Chart…"]
    QGuiApplication.clipboard().clear()
    menu.actions()[0].trigger()  # (as a click does: the menu closes itself)
    image = QGuiApplication.clipboard().image()
    fig = resolve_size("single", dpi=200.0)
    assert (image.width(), image.height()) == (fig.width, fig.height)
    assert image.pixelColor(2, 2).lightness() < 60  # (dark, as chosen)
    assert win.statusBar().currentMessage() == (
        f"Copied the throughput chart ({fig.width} × {fig.height} px)")
    # the same picture as Export Chart… writes
    path = tmp_path / "throughput.png"
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *args, **_kwargs: asked.append(args) or (str(path), ""))
    chart.context_menu().actions()[1].trigger()
    assert len(asked) == 1 and asked[0][1] == "Export Throughput Chart"
    assert QImage(str(path)).convertToFormat(image.format()) == image
    # nothing to copy: said, the clipboard untouched
    errors = []
    win.show_error = lambda title, message: errors.append((title, message))
    monkeypatch.setattr(panel, "shown_chart", lambda: ([], ""))
    QGuiApplication.clipboard().setText("kept")
    assert win.copy_throughput_chart() is None
    assert errors == [("Cannot copy throughput chart", "No model is shown to chart.")]
    assert QGuiApplication.clipboard().text() == "kept"


def test_the_throughput_chart_is_copied_from_the_keyboard(qtbot, window):
    """Copy Chart could be reached by the mouse alone (the chart took no focus): Tab reaches
    the chart, which shows where the keys go; Ctrl+C copies it as Copy Chart does, Shift+F10
    opens its menu."""
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication, QMenu

    from workbench.ui.figures.export_dialog import save_options
    from workbench.ui.figures.figure_size import resolve_size

    win = window
    panel = _throughput_page(win)
    chart = panel.chart
    qtbot.waitUntil(lambda: chart.isVisible() and len(chart.curves) == 1)
    save_options(win.settings, FigureOptions(size="single", dpi=150.0, theme="light"))
    win.activateWindow()
    panel.export_chart_button.setFocus()
    qtbot.keyClick(panel.export_chart_button, Qt.Key.Key_Backtab)  # (the chart is before it)
    qtbot.waitUntil(chart.hasFocus)
    framed = chart.grab().toImage()
    highlight = chart.palette().highlight().color()
    assert any(framed.pixelColor(x, 0) == highlight for x in range(0, framed.width(), 2))
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(chart, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    image = QGuiApplication.clipboard().image()
    fig = resolve_size("single", dpi=150.0)
    assert (image.width(), image.height()) == (fig.width, fig.height)
    assert win.statusBar().currentMessage() == (
        f"Copied the throughput chart ({fig.width} × {fig.height} px)")

    def shown():
        return next((w for w in QApplication.topLevelWidgets()
                     if isinstance(w, QMenu) and w.isVisible()), None)

    qtbot.keyClick(chart, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: shown() is not None)
    menu = shown()
    assert [a.text() for a in menu.actions()] == ["&Copy Chart", "E&xport Chart…"]
    menu.close()


# ---------------------------------------------------------------------------------------------
# the serving settings: memory utilisation, all-reduce, routing imbalance, speculation


def _type(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def test_memory_utilisation_and_draft_tokens_typed_change_the_results(qtbot, window, tmp_path):
    win = window
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048,
                             output_len=256), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    table, form = panel.table, panel.editor.form
    qtbot.waitUntil(lambda: table.columnCount() == 1)
    # by hand (tests/model/test_serving.py): 196 sequences at 0.9 of the card
    assert table.item(ROW_MAX_BATCH, 0).text() == "196"
    assert table.item(ROW_CAPACITY, 0).text() == "75.9 GB of 85.5 GB (79.6 GiB)"
    # 0.95: 85,520,809,984 B × 0.95 − 1 GiB = 80.17 GB usable; (80.17 − 16.06 − 0.537) GB
    # over 302 MB per sequence = 210.5: 210
    _type(qtbot, form.memory_utilization, "0.95")
    qtbot.waitUntil(lambda: table.item(ROW_MAX_BATCH, 0).text() == "210")
    assert win.document.session.models[0].setup.memory_utilization == 0.95

    tpot = table.item(ROW_PREDICTED, 0).text()
    assert not form.acceptance.isEnabled()  # no draft tokens, nothing to accept
    _type(qtbot, form.draft_tokens, "4")
    qtbot.waitUntil(lambda: table.item(ROW_PREDICTED, 0).text() != tpot)
    assert form.acceptance.isEnabled()
    assert "speculative decoding" in panel.derivation.toPlainText()
    assert "(1 − 0.7^5)/(1 − 0.7) = 2.77" in panel.derivation.toPlainText()

    form.all_reduce.setCurrentText("ring")
    assert win.document.session.models[0].setup.all_reduce == "ring"
    _type(qtbot, form.imbalance, "1.3")
    assert win.document.session.models[0].setup.imbalance == pytest.approx(1.3)

    path = tmp_path / "s.yaml"
    assert win.save_to(path)
    text = path.read_text(encoding="utf-8")
    for line in ("memory_utilization: 0.95", "draft_tokens: 4", "all_reduce: ring",
                 "imbalance: 1.3"):
        assert line in text
    assert "kv_block" not in text  # a default is not written

    # each setting is one undo step
    win.document.undo()
    assert win.document.session.models[0].setup.imbalance == 1.0
    assert form.imbalance.value() == 1.0


def test_a_bad_utilisation_cannot_be_typed(qtbot, window):
    win = window
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    form = win.model_panel.editor.form
    assert (form.memory_utilization.minimum(), form.memory_utilization.maximum()) == (0.05, 1.0)
    _type(qtbot, form.memory_utilization, "1.5")  # the spin box keeps it in its range
    assert 0 < win.document.session.models[0].setup.memory_utilization <= 1.0
