"""The throughput chart's log axes end a little beyond the data, not on whole decades, and
tick 1, 2 and 5 times each power of ten, labelling the 2s and 5s where fewer than two
decades lie within. Before, TPOTs from 4.3 to 48 ms were drawn on an axis from 1 to 100 ms
labelled "1", "10", "100": two fifths of the plot were empty. Numbers checked by hand below.
Its title says that the curves are decode's, whatever the model's phase."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from workbench.ui.figures.figure_size import resolve_size
from workbench.ui.panels.throughput_chart import (
    Curve,
    axis_ends,
    axis_ticks,
    tick_text,
)
from workbench.ui.window.exporting import throughput_chart_figure

SVG = "{http://www.w3.org/2000/svg}"


def test_an_axis_ends_a_twentieth_of_the_data_span_beyond_it():
    # log10(48 / 4.3) = 1.0478 decades; a twentieth of it, 0.0524, is a factor of 1.128
    a, b = axis_ends(4.3, 48.0)
    assert a == pytest.approx(4.3 / 1.1281, rel=1e-3)  # 3.81
    assert b == pytest.approx(48.0 * 1.1281, rel=1e-3)  # 54.1
    # within: 5, 10, 20, 50 (one decade, 10: every tick labelled)
    assert axis_ticks(a, b) == [(5.0, True), (10.0, True), (20.0, True), (50.0, True)]


def test_an_axis_over_more_than_two_decades_labels_its_decades_alone():
    assert axis_ticks(50.0, 20000.0) == [
        (50.0, False), (100.0, True), (200.0, False), (500.0, False), (1000.0, True),
        (2000.0, False), (5000.0, False), (10000.0, True), (20000.0, False)]


def test_data_too_close_for_two_ticks_ends_on_the_ticks_around_it():
    # 4.3 … 4.4 padded by a fiftieth of a decade (× 1.047): 4.11 … 4.61, no tick within;
    # the nearest beyond are 2 and 5
    assert axis_ends(4.3, 4.4) == (2.0, 5.0)
    assert axis_ends(1.0, 1.0) == (0.5, 2.0)  # (0.955 … 1.047: only 1 within)


def test_tick_numbers_read_as_counts():
    assert [tick_text(v) for v in (0.02, 0.5, 2.0, 50.0, 1000.0, 20000.0)] == [
        "0.02", "0.5", "2", "50", "1,000", "20,000"]


@pytest.mark.parametrize("size", ["single", "double"])
def test_the_figure_labels_the_ticks_within_the_data(qapp, size):
    # TPOT 4.3 … 48 ms, 55 … 13,000 tokens/s: x ticked at 5, 10, 20, 50 (all labelled),
    # y at 100, 1,000, 10,000 (with unlabelled 2s and 5s)
    curves = [Curve("fast", [(0.0043, 220.0, 1), (0.012, 10800.0, 64), (0.048, 13000.0, 512)]),
              Curve("slow", [(0.019, 55.0, 1), (0.025, 830.0, 20)])]
    svg, _fig = throughput_chart_figure(curves, "", "svg", resolve_size(size, dpi=300.0))
    texts = {" ".join("".join(t.itertext()).split())
             for t in ET.fromstring(svg).iter(f"{SVG}text")}
    assert {"5", "10", "20", "50", "100", "1,000", "10,000"} <= texts, texts
    assert not texts & {"1", "2", "100,000", "200", "500"}, texts
    assert {"fast (batch 1–512)", "slow (batch 1–20)"} <= texts, texts


def test_the_title_says_the_curves_are_decodes_whatever_the_models_phase():
    from workbench.model.llm.architecture import Setup
    from workbench.ui.panels.throughput_chart import chart_title

    prefill = Setup(phase="prefill", batch=1, prompt_len=2048, kv_len=2048, output_len=0)
    assert chart_title("8B prefill", prefill) == "8B prefill: decode at KV length 2,048, bf16"
    served = Setup(phase="prefill", batch=1, prompt_len=2048, kv_len=2048, output_len=256,
                   tp=8, weights="fp8")
    assert chart_title("405B", served) == "405B: prompt 2,048 + 256 output tokens, fp8, tp 8"


def test_a_short_chart_keeps_every_marker_whole_within_its_frame(qapp):
    """On the Model tab the chart is a few hundred pixels wide and a hundred and some tall:
    a twentieth of the data's span beyond it was five pixels there, and the lowest marker
    (a machine's batch 1) sat on the frame, half of it cut off. The axes end far enough
    beyond the data for a whole marker."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter

    from workbench.ui.panels.throughput_chart import paint_chart

    curves = [Curve("fast", [(0.0043, 220.0, 1), (0.012, 10800.0, 64), (0.048, 13000.0, 512)]),
              Curve("slow", [(0.019, 55.0, 1), (0.025, 830.0, 20)])]
    image = QImage(560, 170, QImage.Format.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        drawn = paint_chart(painter, QRectF(0, 0, 560, 170), curves, pt=9.0)
    finally:
        painter.end()
    assert len(drawn) == 5  # (every point within the plot)
    def dark_grey(x: int, y: int) -> bool:  # (the frame's ink, antialiased; not a curve)
        colour = image.pixelColor(x, y)
        return colour.hsvSaturation() < 40 and colour.value() < 170

    def inked(y: int, x0: int, x1: int) -> int:
        return sum(dark_grey(x, y) for x in range(x0, x1))

    xs = [p.x() for p, _c, _pt in drawn]
    x0, x1 = int(min(xs)), int(max(xs))
    # the frame's bottom and top: the rows the frame's line runs all along
    rows = [y for y in range(image.height()) if inked(y, x0, x1) > 0.9 * (x1 - x0)]
    top, bottom = min(rows), max(rows)
    size = 9.0 * 0.6 * image.logicalDpiY() / 72  # (a marker's size: see paint_chart)
    for p, _curve, _point in drawn:
        assert top + size / 2 < p.y() < bottom - size / 2, (p, top, bottom, size)


@pytest.mark.parametrize(("size", "rows"), [("double", 2), ("single", 3)])
def test_the_legend_takes_as_many_columns_as_the_page_is_wide(qapp, tmp_path, size, rows):
    """Under the chart, one machine a row left most of a wide page's rows empty (three rows
    on a page two paper columns wide, the plot the shorter for them): the rows take as many
    columns as the width holds, top to bottom first; a paper column keeps one."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from figures.figcheck import check_readability, read_figure

    names = ["NVIDIA H100 SXM5 80GB", "AMD Instinct MI300X 192GB", "NVIDIA GeForce RTX 4090"]
    curves = [Curve(name, [(0.004 * (k + 1), 200.0 * (k + 1), 1), (0.04, 9000.0, 64)])
              for k, name in enumerate(names)]
    pdf, _fig = throughput_chart_figure(curves, "", "pdf", resolve_size(size, dpi=300.0))
    page = read_figure(pdf)
    said = {t.text.strip(): t.bbox() for t in page.texts if "(batch 1–64)" in t.text}
    assert len(said) == 3, [t.text for t in page.texts]
    tops = sorted({round(box[1]) for box in said.values()})
    assert len(tops) == rows, said
    if rows == 2:  # (the first column's two, then the third beside the first)
        first, second, third = (said[f"{n} (batch 1–64)"] for n in names)
        assert first[0] == pytest.approx(second[0], abs=0.5) and third[0] > first[2]
        assert third[1] == pytest.approx(first[1], abs=0.5)
    assert check_readability(page) == []
