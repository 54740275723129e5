"""The Model tab runs a whole request: typing Output tokens shows the request latency, the
output tokens per second per user and per chip, and every machine's largest batch."""

from __future__ import annotations

import pytest
from conftest import HANG_GUARD_S
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup
from workbench.model.llm.results import model_result
from workbench.model.llm.session import ModelEntry
from workbench.model.units import format_number, format_quantity
from workbench.ui.panels.model_panel import ROW_MAX_BATCH, ROW_OUT_CHIP, ROW_OUT_USER, ROW_REQUEST


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

    hw = get_preset("h100-sxm")
    setup = Setup(phase="decode", batch=8, prompt_len=2048, kv_len=2048)
    ttft = model_result(arch, setup.with_(phase="prefill"), hw).t_predicted_s
    low = ttft + 256 * model_result(arch, setup, hw).t_predicted_s
    high = ttft + 256 * model_result(arch, setup.with_(kv_len=2048 + 256), hw).t_predicted_s
    request = panel.requests[0]
    assert table.item(ROW_REQUEST, 0).text() == format_quantity(request.request_s, "time")
    assert low < request.request_s < high
    assert table.item(ROW_OUT_USER, 0).text() == format_number(256 / request.request_s)
    assert table.item(ROW_OUT_CHIP, 0).text() == format_number(8 * 256 / request.request_s)
    # the cache now holds prompt + output positions: fewer sequences fit (by hand: 229)
    assert table.item(ROW_MAX_BATCH, 0).text() == "229" and single > 229
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
                                                                        tmp_path, monkeypatch):
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
    assert panel.export_chart_to(str(path))
    data = path.read_bytes()
    assert check_pdf(data) == []
    figure = read_figure(data)
    assert check_readability(figure) == []
    texts = " ".join(t.text for t in figure.texts)
    for hw in machines:  # every curve named
        assert hw.label in texts
    # a read-only file is refused and left as it was; so is an unknown format
    warnings = []
    monkeypatch.setattr("workbench.ui.panels.model_panel.QMessageBox.warning",
                        lambda *args: warnings.append(args[-1]))
    path.chmod(0o444)
    assert not panel.export_chart_to(str(path))
    assert warnings and str(path) in warnings[0]
    assert path.read_bytes() == data
    assert not panel.export_chart_to(str(tmp_path / "chart.bmp"))


def test_throughput_chart_as_svg_and_png(qtbot, window, tmp_path):
    import subprocess

    from PySide6.QtGui import QImage

    win = window
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    svg, png = tmp_path / "t.svg", tmp_path / "t.png"
    assert panel.export_chart_to(str(svg)) and panel.export_chart_to(str(png))
    image = QImage(str(png))
    assert (image.width(), image.height()) == (1400, 900)  # 7 × 4.5 in at 200 dpi
    # an independent renderer draws the SVG, with the machine named in it
    out = tmp_path / "svg.png"
    subprocess.run(["rsvg-convert", str(svg), "-o", str(out)], check=True, timeout=HANG_GUARD_S)
    drawn = QImage(str(out))
    assert drawn.width() > 600 and drawn.height() > 400
    # its curve runs to the largest batch: (85,520,809,984 − 2 · 8,030,261,248 B) over
    # 2,048 · 131,072 B of KV cache + (4,096 + 128,256) · 2 B of activations per sequence
    largest = (81559 * 2**20 - 2 * 8_030_261_248) // (2048 * 131072 + (4096 + 128256) * 2)
    assert f"NVIDIA H100 SXM5 80GB (batch 1–{largest})" in svg.read_text(encoding="utf-8")
