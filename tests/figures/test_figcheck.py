"""The figure checker finds each kind of defect in small PDFs drawn with QPainter, and finds
nothing in a clean figure that has every element a chart has (frame, ticks, grid, roofs,
markers, a leader line, label backgrounds and a legend)."""

from __future__ import annotations

import itertools

import pytest
from figures.figcheck import (
    LARGE_LEGEND,
    OFF_PAGE,
    SMALL_PLOT,
    SMALL_TEXT,
    TEXT_OVER_DATA,
    TEXT_OVER_TEXT,
    TRUNCATION,
    check_pdf,
    check_readability,
    format_defects,
    legend_share,
    plot_room_shares,
    read_figure,
    tick_labels,
    title_band,
)
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QLineF, QMarginsF, QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QPen,
)

PAGE = (400.0, 300.0)  # points
PLOT = QRectF(60, 30, 320, 220)


@pytest.fixture
def pdf(qapp):
    """``pdf(draw)``: the bytes of a one-page PDF (1 unit = 1 pt) drawn by ``draw(painter)``
    on a plot with background, frame, ticks and a faint grid."""

    def make(draw, *, frame: bool = True) -> bytes:
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        writer = QPdfWriter(buffer)
        page = QPageSize(QSizeF(*PAGE), QPageSize.Unit.Point, "test", QPageSize.SizeMatchPolicy.ExactMatch)
        writer.setPageLayout(QPageLayout(page, QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0)))
        writer.setResolution(72)
        painter = QPainter(writer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setFont(font())
        if frame:
            painter.fillRect(PLOT, QColor("white"))
            faint = QColor(0, 0, 0, 20)
            painter.setPen(QPen(faint, 0.8))
            for i in range(1, 8):  # grid across the whole plot, under the labels
                x = PLOT.left() + i * PLOT.width() / 8
                painter.drawLine(QLineF(x, PLOT.top(), x, PLOT.bottom()))
                y = PLOT.top() + i * PLOT.height() / 8
                painter.drawLine(QLineF(PLOT.left(), y, PLOT.right(), y))
        draw(painter)
        if frame:
            painter.setPen(QPen(QColor("black"), 1.0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(PLOT)
            for i in range(9):  # ticks on the frame and their labels
                x = PLOT.left() + i * PLOT.width() / 8
                painter.drawLine(QLineF(x, PLOT.bottom(), x, PLOT.bottom() - 5))
                text(painter, str(i), x - 3, PLOT.bottom() + 14)
            text(painter, "Perf.", 4, 150)
        painter.end()
        buffer.close()
        return bytes(data)

    return make


def font(px: float = 12) -> QFont:
    f = QFont("DejaVu Sans")
    f.setPixelSize(round(px))
    return f


def text(painter: QPainter, s: str, x: float, baseline: float) -> QRectF:
    """Draw ``s`` with its baseline starting at (x, baseline); return its ink box."""
    painter.setPen(QPen(QColor("black")))
    painter.drawText(QPointF(x, baseline), s)
    return QFontMetricsF(painter.font()).tightBoundingRect(s).translated(x, baseline)


def line(painter: QPainter, *points: tuple[float, float], width: float = 1.5,
         colour: str = "#1f1f1f") -> None:
    painter.setPen(QPen(QColor(colour), width))
    for a, b in itertools.pairwise(points):
        painter.drawLine(QLineF(*a, *b))


def marker(painter: QPainter, x: float, y: float, r: float = 4.0) -> None:
    painter.setPen(QPen(QColor("#1a1a1a"), 0.8))
    painter.setBrush(QBrush(QColor("#0072b2")))
    painter.drawEllipse(QPointF(x, y), r, r)
    painter.setBrush(Qt.BrushStyle.NoBrush)


def plate(painter: QPainter, box: QRectF, pad: float = 2.0) -> None:
    painter.fillRect(box.adjusted(-pad, -pad, pad, pad), QColor(255, 255, 255, 184))


def width(s: str) -> float:
    return QFontMetricsF(font()).horizontalAdvance(s)


def summary(defects) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((d.kind, d.texts) for d in defects)


# ---------------------------------------------------------------------------------------------


def clean(painter: QPainter) -> None:
    # a roof: slope then flat, drawn as one polyline across the plot
    line(painter, (60, 240), (250, 80), (380, 80), width=2.0)
    # its value label above the flat part, on a background that covers no data
    box = QRectF(260, 60, width("peak 100 TFLOP/s"), 14)
    plate(painter, box)
    text(painter, "peak 100 TFLOP/s", 260, 72)
    # a marker below the roof, its label to the right with a gap
    marker(painter, 150, 200)
    text(painter, "GEMM", 158, 204)
    # a marker whose label is farther out, joined by a leader line ending at the label's edge
    marker(painter, 200, 160)
    label_x, baseline = 230.0, 190.0
    ink = QFontMetricsF(font()).tightBoundingRect("softmax").translated(label_x, baseline)
    line(painter, (203, 163), (ink.left() - 0.5, ink.top() - 0.5), width=0.6, colour="#555555")
    plate(painter, QRectF(label_x, baseline - 11, width("softmax"), 14))
    text(painter, "softmax", label_x, baseline)
    # a legend with a background, a border, swatches beside their text
    legend = QRectF(70, 36, 110, 36)
    painter.fillRect(legend, QColor(255, 255, 255, 230))
    painter.setPen(QPen(QColor(200, 200, 200), 1.0))
    painter.drawRect(legend)
    line(painter, (76, 48), (92, 48), width=2.0)
    marker(painter, 84, 48, 3)
    text(painter, "Machine A", 98, 52)
    marker(painter, 84, 62, 3)
    text(painter, "GEMM", 98, 66)
    # the title above the plot
    text(painter, "A clean chart", 150, 20)


def test_a_clean_figure_has_no_defects(pdf):
    data = pdf(clean)
    fig = read_figure(data)
    # the checker saw the parts it must not count, so passing means something
    assert {"plate", "frame", "grid", "tick", "marker", "data"} <= {s.role for s in fig.shapes}
    assert len(fig.by_role("plate")) >= 3
    assert abs(fig.plot[0] - PLOT.left()) < 1.5 and abs(fig.plot[3] - PLOT.bottom()) < 1.5
    assert {t.text for t in fig.texts} >= {"peak 100 TFLOP/s", "GEMM", "softmax", "Machine A",
                                          "A clean chart", "Perf."}
    defects = check_pdf(data)
    assert defects == [], format_defects(defects)


def test_text_drawn_over_a_line(pdf):
    def draw(painter):
        clean(painter)
        line(painter, (255, 120), (375, 120), width=1.5, colour="#7a4e2d")  # through the label
        text(painter, "struck through", 262, 124)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TEXT_OVER_DATA, ("struck through",))], format_defects(defects)
    assert "#7a4e2d" in defects[0].detail
    x0, y0, x1, _y1 = defects[0].box
    assert 261 <= x0 < x1 <= 262 + width("struck through") + 1 and y0 == pytest.approx(120, abs=1)


def test_a_line_that_only_grazes_under_the_descenders_is_not_counted(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "clear of it", 262, 124)
        line(painter, (255, 128.5), (375, 128.5), width=1.0)  # below the baseline, no descender

    defects = check_pdf(pdf(draw))
    assert defects == [], format_defects(defects)


def test_two_overlapping_texts(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "ridge 295 FLOP/B", 262, 110)
        text(painter, "A100: 312 TF", 270, 116)  # six points lower, same column

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TEXT_OVER_TEXT, ("ridge 295 FLOP/B", "A100: 312 TF"))], \
        format_defects(defects)


def test_stacked_lines_with_normal_spacing_do_not_overlap(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "first line, gjpqy", 262, 110)
        text(painter, "Second LINE", 262, 110 + 14)  # 1.17 em leading, as a wrapped title

    defects = check_pdf(pdf(draw))
    assert defects == [], format_defects(defects)


def test_a_label_background_painted_over_another_text(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "hidden below", 262, 116)
        box = QRectF(270, 89, width("on top"), 14)
        plate(painter, box.adjusted(0, 0, 0, 8))
        text(painter, "on top", 270, 100)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TEXT_OVER_TEXT, ("hidden below", "on top"))], format_defects(defects)
    assert "painted over" in defects[0].detail


def test_a_label_background_painted_over_a_line(pdf):
    def draw(painter):
        clean(painter)
        line(painter, (255, 128), (375, 128), width=1.5, colour="#3e5c76")
        plate(painter, QRectF(262, 113, width("boxed"), 18))  # reaches below the text, over the line
        text(painter, "boxed", 262, 124)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TEXT_OVER_DATA, ("boxed",))], format_defects(defects)
    assert "background of 'boxed' is painted over 1 data line (#3e5c76)" in defects[0].detail


def test_text_over_a_marker(pdf):
    def draw(painter):
        clean(painter)
        marker(painter, 300, 140)
        text(painter, "on the dot", 296, 144)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TEXT_OVER_DATA, ("on the dot",))], format_defects(defects)
    assert "marker" in defects[0].detail


def test_text_half_off_the_page(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "Out of the page", PAGE[0] - width("Out of the page") / 2, 285)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(OFF_PAGE, ("Out of the page",))], format_defects(defects)
    assert "right edge" in defects[0].detail


def test_an_ellipsised_text(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "Critical batch — sweeping a bf16 mat…", 60, 290)
        text(painter, "Three dots...", 310, 290)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TRUNCATION, ("Critical batch — sweeping a bf16 mat…",)),
                                (TRUNCATION, ("Three dots...",))], format_defects(defects)


def test_a_label_running_across_the_plot_frame(pdf):
    def draw(painter):
        clean(painter)
        text(painter, "TFLOP/s", PLOT.right() - 30, 100)

    defects = check_pdf(pdf(draw))
    assert summary(defects) == [(TRUNCATION, ("TFLOP/s",))], format_defects(defects)
    assert "plot frame" in defects[0].detail


def test_rotated_text_along_its_roof_is_clean_and_across_a_roof_is_not(pdf):
    def draw(painter, offset):
        clean(painter)
        line(painter, (250, 245), (370, 161), width=2.0, colour="#7a4e2d")
        painter.save()
        painter.translate(270, 231 - offset)
        painter.rotate(-34.99)  # the slope of the line above
        text(painter, "hbm 2.04 TB/s", 0, 0)
        painter.restore()

    beside = check_pdf(pdf(lambda p: draw(p, 5)))
    assert beside == [], format_defects(beside)
    across = check_pdf(pdf(lambda p: draw(p, -3)))
    assert summary(across) == [(TEXT_OVER_DATA, ("hbm 2.04 TB/s",))], format_defects(across)


def test_a_text_clear_of_a_round_marker_but_inside_its_bounding_box_is_clean(pdf):
    def draw(painter, gap):
        clean(painter)
        marker(painter, 300, 140, r=10)
        # the text's top-left corner 1.5 pt inside the marker's bounding box, diagonally
        text(painter, "beside", 308.5 + gap, 140 + 10 - 1.5 + 0.76 * 12 + gap)

    clear = check_pdf(pdf(lambda p: draw(p, 0.0)))
    assert clear == [], format_defects(clear)
    into = check_pdf(pdf(lambda p: draw(p, -4.0)))
    assert summary(into) == [(TEXT_OVER_DATA, ("beside",))], format_defects(into)


def test_ink_is_measured_per_character(pdf):
    """A line just above lowercase letters is clear of them, the same line through a
    capital is not, and a line through the gap between two words crosses the label."""
    over = 124 - 0.68 * 12  # between the x-height (0.56 em) and the capitals (0.73 em)

    def draw(painter, label, x_line=None):
        clean(painter)
        text(painter, label, 262, 124)
        if x_line is None:
            line(painter, (255, over), (375, over), width=1.0)
        else:
            line(painter, (x_line, 100), (x_line, 140), width=1.0)

    low = check_pdf(pdf(lambda p: draw(p, "scan cores")))
    assert low == [], format_defects(low)
    capital = check_pdf(pdf(lambda p: draw(p, "Scan cores")))
    assert summary(capital) == [(TEXT_OVER_DATA, ("Scan cores",))], format_defects(capital)
    gap = 262 + width("scan") + width(" ") / 2
    between = check_pdf(pdf(lambda p: draw(p, "scan cores", gap)))
    assert summary(between) == [(TEXT_OVER_DATA, ("scan cores",))], format_defects(between)


def test_a_small_plot_beside_a_larger_legend(pdf):
    """The plot is found by the lines it holds, not by its size; a text that strays onto the
    legend box (outside the plot) collides with it."""
    small = QRectF(150, 20, 120, 80)  # 8 % of the page; the legend below is larger

    def draw(painter, title_y):
        painter.fillRect(small, QColor("white"))
        painter.setPen(QPen(QColor(0, 0, 0, 20), 0.8))
        for i in range(1, 6):
            x = small.left() + i * small.width() / 6
            painter.drawLine(QLineF(x, small.top(), x, small.bottom()))
        line(painter, (150, 95), (230, 40), (270, 40), width=1.5)
        painter.setPen(QPen(QColor("black"), 1.0))
        painter.drawRect(small)
        legend = QRectF(20, 150, 300, 120)
        painter.fillRect(legend, QColor(255, 255, 255, 230))
        painter.setPen(QPen(QColor(200, 200, 200), 1.0))
        painter.drawRect(legend)
        line(painter, (30, 180), (46, 180), width=2.0)
        text(painter, "Machine A", 52, 184)
        marker(painter, 38, 200, 3)
        text(painter, "GEMM", 52, 204)
        painter.save()
        painter.translate(130, title_y)
        painter.rotate(-90)
        text(painter, "Performance [FLOP/s]", 0, 0)
        painter.restore()

    clear = pdf(lambda p: draw(p, 140), frame=False)
    fig = read_figure(clear)
    assert fig.plot == pytest.approx((small.left(), small.top(), small.right(), small.bottom()), abs=1.0)
    assert check_pdf(clear) == [], format_defects(check_pdf(clear))
    onto = check_pdf(pdf(lambda p: draw(p, 190), frame=False))
    assert summary(onto) == [(TEXT_OVER_TEXT, ("Performance [FLOP/s]", "Machine A", "GEMM"))], \
        format_defects(onto)


# ---------------------------------------------------------------------------------------------
# readability


def test_readability_finds_small_text_and_an_axis_title_smaller_than_its_ticks(pdf):
    """Any text under 6 pt, and an axis title under 7 pt or under 0.8 × its tick labels."""

    def draw(painter: QPainter, title_pt: float, note_pt: float) -> None:
        painter.setFont(font(note_pt))
        text(painter, "ridge 295 FLOP/B", 200, 120)
        painter.setFont(font(title_pt))
        text(painter, "Arithmetic intensity [FLOP/byte]", 120, 292)
        painter.setFont(font())

    readable = read_figure(pdf(lambda p: draw(p, 11, 7)))
    # the nine tick labels under the plot (12 pt) are seen as such
    assert [t.text for t in tick_labels(readable, "bottom")] == [str(i) for i in range(9)]
    assert check_readability(readable) == [], format_defects(check_readability(readable))
    small = check_readability(read_figure(pdf(lambda p: draw(p, 8, 5))))
    assert summary(small) == [(SMALL_TEXT, ("Arithmetic intensity [FLOP/byte]",)),
                              (SMALL_TEXT, ("ridge 295 FLOP/B",))], format_defects(small)
    assert "0.8" in small[0].detail or "0.8" in small[1].detail


def test_readability_measures_the_plot_and_the_legend_below_it(pdf):
    """A plot squeezed into a corner by a legend below it: the plot's share of the page (less
    the legend's and the title's bands) and of its width, and the legend's share of the
    page's height."""
    chart = read_figure(pdf(clean))
    assert check_readability(chart) == []
    # its title ("A clean chart", baseline 20 pt, no descenders) is not the plot's to use
    assert title_band(chart) == pytest.approx(20 / PAGE[1], abs=0.005)
    assert plot_room_shares(chart)[0] == pytest.approx(
        PLOT.width() * PLOT.height() / (PAGE[0] * (PAGE[1] - 20)), abs=0.01)

    def draw(painter: QPainter, plot: QRectF, legend_height: float) -> None:
        painter.fillRect(plot, QColor("white"))
        painter.setPen(QPen(QColor(0, 0, 0, 20), 0.8))
        for i in range(1, 6):
            x = plot.left() + i * plot.width() / 6
            painter.drawLine(QLineF(x, plot.top(), x, plot.bottom()))
        painter.setPen(QPen(QColor("black"), 1.0))
        painter.drawRect(plot)
        legend = QRectF(20, 290 - legend_height, 300, legend_height)
        painter.fillRect(legend, QColor(255, 255, 255, 230))
        painter.setPen(QPen(QColor(200, 200, 200), 1.0))
        painter.drawRect(legend)
        text(painter, "Machine A", 52, legend.top() + 20)
        text(painter, "12 operations not listed", 52, legend.top() + 38)

    roomy = read_figure(pdf(lambda p: draw(p, QRectF(60, 10, 330, 180), 60), frame=False))
    assert legend_share(roomy) == pytest.approx(60 / PAGE[1], abs=0.01)
    assert check_readability(roomy) == [], format_defects(check_readability(roomy))
    # a legend band of 180 of the page's 300 pt: 60 %, over the 55 % a key may take
    squeezed = read_figure(pdf(lambda p: draw(p, QRectF(200, 10, 190, 50), 180), frame=False))
    assert plot_room_shares(squeezed) == pytest.approx(
        (190 * 50 / (PAGE[0] * PAGE[1]) / (1 - 180 / PAGE[1]), 190 / PAGE[0]), abs=0.01)
    defects = check_readability(squeezed)
    assert sorted(d.kind for d in defects) == [LARGE_LEGEND, SMALL_PLOT, SMALL_PLOT], \
        format_defects(defects)


# ---------------------------------------------------------------------------------------------
# attribution


def _marker(x: float, y: float, owner, half: float = 5.0):
    from figures.figcheck import Mark

    return Mark("marker", (x - half, y - half, x + half, y + half), frozenset([owner]))


def test_a_text_nearer_another_marker_than_its_own_is_misattributed():
    """"Softmax" right above the Norm point: 4 pt above Norm's marker, 8 pt from its own
    (beside, to the right): 4 < 1.25 × 8. Right above its own marker instead, 3 pt off and
    20 pt from Norm's (15 across, 13 up), it names Softmax."""
    from figures.figcheck import MISATTRIBUTED, NamingText, check_attribution

    marks = [_marker(100, 100, "softmax"), _marker(60, 110, "norm")]
    over_norm = NamingText("Softmax", (40.0, 91.0, 87.0, 101.0), frozenset(["softmax"]),
                           reach=20.0)  # 8 pt left of Softmax's box, 4 pt over Norm's
    found = check_attribution([over_norm], marks)
    assert [d.kind for d in found] == [MISATTRIBUTED]
    assert "4.0 from another mark" in found[0].detail and "8.0 from its own" in found[0].detail
    over_own = NamingText("Softmax", (80.0, 82.0, 120.0, 92.0), frozenset(["softmax"]),
                          reach=20.0)
    assert check_attribution([over_own], marks) == []


def test_a_far_text_needs_a_leader_that_reaches_its_own_marker():
    """A tag 30 pt from its marker with no leader stands alone; with a leader from its box
    to its marker's edge it is joined; a leader ending at another marker joins it to that."""
    from figures.figcheck import NamingText, check_attribution

    marks = [_marker(100, 100, "a"), _marker(200, 100, "b")]
    box = (135.0, 95.0, 145.0, 105.0)  # 30 pt right of a's edge (105)
    alone = NamingText("1", box, frozenset(["a"]), reach=16.0)
    assert "no leader line" in check_attribution([alone], marks)[0].detail
    joined = NamingText("1", box, frozenset(["a"]), leader=((135.0, 100.0), (106.0, 100.0)),
                        reach=16.0, slack=1.5)
    assert check_attribution([joined], marks) == []
    astray = NamingText("1", box, frozenset(["a"]), leader=((145.0, 100.0), (194.0, 100.0)),
                        reach=16.0, slack=1.5)
    assert "leader" in check_attribution([astray], marks)[0].detail


def test_a_roof_value_is_compared_with_lines_not_markers():
    """A value 5 pt over its own line and 25 pt under another is its line's; 5 pt under the
    other line it is the other's. A marker beside it does not count."""
    from figures.figcheck import Mark, NamingText, check_attribution

    own = Mark("line", (0.0, 100.0, 300.0, 100.0), frozenset(["hbm"]))
    other = Mark("line", (0.0, 60.0, 300.0, 60.0), frozenset(["l2"]))
    marker = _marker(150, 90, "op")
    good = NamingText("hbm 3.35 TB/s", (100.0, 85.0, 180.0, 95.0), frozenset(["hbm"]),
                      "line", reach=20.0)
    assert check_attribution([good], [own, other, marker]) == []
    bad = NamingText("hbm 3.35 TB/s", (100.0, 65.0, 180.0, 75.0), frozenset(["hbm"]), "line",
                     reach=30.0)
    assert check_attribution([bad], [own, other, marker])


def test_a_texts_leader_is_the_line_ending_nearest_it():
    """A tag below the end of another operation's gap bar (4 pt over its box) with its own
    leader ending at its left edge (1 pt off): the leader is its own, whichever line the
    page lists first; a line ending 10 pt off is none."""
    from figures.figcheck import leader_at

    box = (202.0, 109.0, 211.0, 115.0)
    bar = ((207.0, 105.0), (207.0, 99.0))  # ends 4 pt above the box
    own = ((201.0, 108.0), (147.0, 105.0))  # ends 1 pt left of the box's corner
    assert leader_at(box, [bar, own], 4.5) == own
    assert leader_at(box, [own, bar], 4.5) == own
    assert leader_at(box, [bar], 4.5) == bar
    assert leader_at(box, [((207.0, 99.0), (207.0, 80.0))], 4.5) is None


def test_a_leader_from_another_text_is_not_this_ones():
    """Two tags of one square (two operations at one spot), "A16" beside it and "A17" below
    with a leader to the square's corner, 3.6 pt from A16's box: the line starts on A17's
    box, so it is A17's leader and A16 has none (as read from a single-column PDF); with no
    other text on the page the same line would be taken for A16's."""
    from figures.figcheck import leader_at

    a16 = (76.3, 299.8, 89.5, 304.9)
    a17 = (60.0, 318.0, 73.0, 323.0)
    line = ((92.0, 307.5), (73.0, 318.5))  # from the square's corner to A17's top-right
    assert leader_at(a16, [line], 4.5, others=[a17]) is None
    assert leader_at(a17, [line], 4.5, others=[a16]) == ((73.0, 318.5), (92.0, 307.5))
    assert leader_at(a16, [line], 4.5) == ((92.0, 307.5), (73.0, 318.5))


def test_a_roof_values_leader_ending_on_a_marker_is_misattributed():
    """A roof's value led to its line where an operation's point sits on it reads as that
    point's name; led to its line 20 pt from the point, it is the line's."""
    from figures.figcheck import Mark, NamingText, check_attribution

    line = Mark("line", (0.0, 200.0, 200.0, 0.0), frozenset(["hbm"]))
    point = _marker(100, 100, "op")
    box = (150.0, 150.0, 210.0, 160.0)
    on_point = NamingText("hbm 3.35 TB/s", box, frozenset(["hbm"]), "line",
                          leader=((150.0, 152.0), (101.0, 99.0)), reach=20.0, slack=4.0)
    found = check_attribution([on_point], [line, point])
    assert len(found) == 1 and "ends on a marker" in found[0].detail
    beside = NamingText("hbm 3.35 TB/s", box, frozenset(["hbm"]), "line",
                        leader=((150.0, 152.0), (121.0, 79.0)), reach=20.0, slack=4.0)
    assert check_attribution([beside], [line, point]) == []


# reading an SVG export

#: a plot frame and two points, A's (blue) at (200, 150) and B's (orange) at (260, 150), as
#: Qt's SVG generator writes them (styles on groups, placed by a transform); ``{text}`` is
#: where the name "Alpha" goes
_SVG = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" width="400pt" height="300pt" viewBox="0 0 400 300">
<rect x="0" y="0" width="400" height="300" fill="#FFFFFF" stroke="none" />
<g fill="none" stroke="#202020" stroke-width="1">
<path d="M40,20 L380,20 L380,280 L40,280 Z" /></g>
<g fill="#0072b2" fill-opacity="1" stroke="#ffffff" stroke-width="1"
   transform="matrix(1,0,0,1,200,150)">
<path d="M0,-4 L4,0 L0,4 L-4,0 Z" /></g>
<g fill="#e69f00" fill-opacity="1" stroke="#ffffff" stroke-width="1"
   transform="matrix(1,0,0,1,260,150)">
<path d="M0,-4 L4,0 L0,4 L-4,0 Z" /></g>
{text}
</svg>"""


def _svg_naming(svg: str):
    """What :func:`~figures.figcheck.check_attribution` gets of the SVG: the name "Alpha"
    (A's) as the file has it, with any leader, and the markers, owned by their colour."""
    from figures.figcheck import ATTRIBUTION_REACH, Mark, NamingText, leader_at, read_svg

    fig = read_svg(svg.encode())
    owner = {"#0072b2": "a", "#e69f00": "b"}
    marks = [Mark("marker", m.bbox, frozenset([owner[_hex(m.fill)]]))
             for m in fig.by_role("marker")]
    assert len(marks) == 2, [s.describe() for s in fig.shapes]
    (alpha,) = [t for t in fig.texts if t.text == "Alpha"]
    lines = [s.polylines[0] for s in fig.shapes
             if s.role == "data" and not s.closed and len(s.polylines[0]) == 2]
    box = alpha.bbox()
    leader = leader_at(box, lines, 0.6 * alpha.size)
    return NamingText("Alpha", box, frozenset(["a"]), "marker", leader,
                      ATTRIBUTION_REACH * alpha.size + 0.6 * alpha.size, 2.5), marks


def _hex(colour) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in colour[:3])


def test_an_svg_label_beside_another_point_is_misattributed():
    """A's name set just above B's point in an SVG file (its group moved there by a
    transform) reads as B's: the SVG reader finds the text's box and both markers, and the
    check flags it; right above A's own point it passes."""
    from figures.figcheck import MISATTRIBUTED, check_attribution

    beside_b = ('<g fill="none" stroke="#1a1a1a" transform="matrix(1,0,0,1,244,128)">'
                '<text fill="#1a1a1a" stroke="none" x="0" y="10" font-size="10">Alpha</text></g>')
    text, marks = _svg_naming(_SVG.format(text=beside_b))
    assert text.leader is None
    found = check_attribution([text], marks)
    assert [d.kind for d in found] == [MISATTRIBUTED], found
    over_a = beside_b.replace("244,128", "184,128")
    text, marks = _svg_naming(_SVG.format(text=over_a))
    assert check_attribution([text], marks) == []


def test_an_svg_label_with_a_leader_to_its_point_passes():
    """A's name far up the plot, over B's side, joined to A's point by a leader line (a
    polyline, as Qt writes one): the reader finds the leader and the check passes; the same
    text without it stands alone and is flagged."""
    from figures.figcheck import MISATTRIBUTED, check_attribution

    far = ('<g fill="none" stroke="#1a1a1a" transform="matrix(1,0,0,1,270,60)">'
           '<text fill="#1a1a1a" stroke="none" x="0" y="10" font-size="10">Alpha</text></g>')
    leader = ('<g fill="none" stroke="#1a1a1a" stroke-width="0.8">'
              '<polyline fill="none" points="270,70 203,146 " /></g>')
    text, marks = _svg_naming(_SVG.format(text=far + leader))
    assert text.leader is not None
    assert check_attribution([text], marks) == []
    text, marks = _svg_naming(_SVG.format(text=far))
    assert text.leader is None
    assert [d.kind for d in check_attribution([text], marks)] == [MISATTRIBUTED]
