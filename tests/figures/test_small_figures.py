"""Small figures and small windows read well: axis titles take a shorter wording before they
shrink and never go below a readable size; a figure smaller than its theme's design size
has its type scaled down (the plot keeps its room), one at or above it is left as it was."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication

from tests.conftest import EXAMPLES
from workbench.document import Document
from workbench.io.sessions import load_session
from workbench.model.chart.scene import X_TITLE, Y_TITLE, short_axis_title
from workbench.ui.bridge import Workspace
from workbench.ui.chart.canvas import RooflineCanvas
from workbench.ui.chart.theme import get_theme, make_font
from workbench.ui.figures.export import resolve_size
from workbench.ui.figures.figure_size import DESIGN_EMS, MIN_TICK_PT, SIZE_PRESETS, THEME_FIGURE_SCALE


def test_short_axis_titles_keep_their_units():
    assert short_axis_title(X_TITLE) == "Intensity [FLOP/B]"
    assert short_axis_title(Y_TITLE) == "Attainable [FLOP/s]"
    # an integer scene's rate keeps its OP/s
    assert short_axis_title("Attainable performance [OP/s]") == "Attainable [OP/s]"
    assert short_axis_title("Arithmetic intensity [OP/byte]") == "Intensity [OP/B]"
    # a title with no shorter wording is left as it is
    assert short_axis_title("Time [s]") == "Time [s]"


@pytest.mark.parametrize("theme", ["light", "dark", "presentation"])
@pytest.mark.parametrize("size", [None, "slide", "single", "double"])
def test_figures_at_their_design_size_keep_their_type_smaller_ones_fit_it(size, theme):
    """Tick labels on the page: the preset's and theme's size where the figure is at least
    DESIGN_EMS tick labels wide and high, else scaled so that it is (never under 7 pt)."""
    fig = resolve_size(size, theme=theme)
    tick_pt = get_theme(theme).tick_size * fig.boost  # points on the page
    w_pt, h_pt = fig.inches[0] * 72.0, fig.inches[1] * 72.0
    preset = SIZE_PRESETS[size].type_scale if size else 1.0
    nominal = get_theme(theme).tick_size * THEME_FIGURE_SCALE.get(theme, 1.0) * preset
    assert tick_pt >= MIN_TICK_PT - 1e-9
    assert tick_pt <= nominal + 1e-9  # never larger than the theme asks
    if w_pt / nominal >= DESIGN_EMS[0] and h_pt / nominal >= DESIGN_EMS[1]:
        assert tick_pt == pytest.approx(nominal)
    else:  # it fits the design size in the tighter direction, or sits at the floor
        fits = min(w_pt / DESIGN_EMS[0], h_pt / DESIGN_EMS[1])
        assert tick_pt == pytest.approx(max(fits, MIN_TICK_PT))


def test_presentation_on_a_paper_column_is_scaled_down_slides_are_not():
    # the slide and the default figure keep the presentation theme's large type
    assert resolve_size("slide", theme="presentation").boost == pytest.approx(1.2)
    assert resolve_size(None, theme="presentation").boost == pytest.approx(1.2)
    # a paper column: tick labels near 8 pt, not the 12.6 pt a slide's scale would give
    single = resolve_size("single", theme="presentation")
    assert 7.0 <= get_theme("presentation").tick_size * single.boost <= 8.5
    # the light theme's paper column was already small enough: unchanged
    assert resolve_size("single", theme="light").boost == pytest.approx(0.75)


def open_canvas(qtbot, path, width: int, height: int) -> RooflineCanvas:
    document = Document()
    document.replace_session(load_session(path))
    canvas = RooflineCanvas(Workspace(document))
    qtbot.addWidget(canvas)
    canvas.resize(width, height)
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    canvas.relayout()
    QApplication.processEvents()
    return canvas


def shown_title(canvas, side: str) -> tuple[str, float]:
    """The axis title's words and size as the axis shows them."""
    axis = canvas.plot_widget.getPlotItem().getAxis(side)
    text = axis.label.toPlainText()
    return text, axis.label.boundingRect().width()


def test_a_small_window_shows_the_short_axis_title_at_a_readable_size(qtbot):
    path = next(p for p in EXAMPLES if p.stem == "critical_batch_sweep")
    canvas = open_canvas(qtbot, path, 760, 560)
    theme = canvas.theme
    assert shown_title(canvas, "left")[0].strip() == Y_TITLE
    assert shown_title(canvas, "bottom")[0].strip() == X_TITLE
    assert canvas.axis_titles()["left"] == (Y_TITLE, pytest.approx(theme.axis_title_size))

    for w, h in ((520, 300), (420, 240)):  # small windows: plots shorter than the y title
        canvas.resize(w, h)
        QApplication.processEvents()
        canvas.relayout()
        QApplication.processEvents()
        text, _width = shown_title(canvas, "left")
        assert text.strip() == "Attainable [FLOP/s]", (w, h)
        _words, size = canvas.axis_titles()["left"]
        assert size >= 0.8 * theme.tick_size and size >= 7.0, (w, h, size)
        # centred on the plot and within the window (not cut)
        y_axis = canvas.plot_widget.getPlotItem().getAxis("left")
        label = y_axis.label.mapRectToScene(y_axis.label.boundingRect())
        frame = y_axis.mapRectToScene(y_axis.boundingRect())
        assert label.center().y() == pytest.approx(frame.center().y(), abs=3.0)
        assert label.top() >= 0 and label.bottom() <= h, (w, h, label)

    canvas.resize(760, 560)  # room again: the full wording at the theme's size comes back
    QApplication.processEvents()
    canvas.relayout()
    QApplication.processEvents()
    assert shown_title(canvas, "left")[0].strip() == Y_TITLE
    assert canvas.axis_titles()["left"][1] == pytest.approx(theme.axis_title_size)
    full = QFontMetricsF(make_font(theme, theme.axis_title_size)).horizontalAdvance(Y_TITLE)
    assert shown_title(canvas, "left")[1] >= full  # not shrunk


def test_a_legend_below_a_wide_figure_sets_its_rows_side_by_side(tmp_path):
    """Read from the PDF: the Llama-3.1-8B legend below a double-column presentation figure
    puts its notes beside the machines where there is room, not under a column of them, so
    the plot keeps its height (the machines side by side on one row, the note on the next,
    take two rows). Where the machines' rows are as wide as the legend (each says its
    roofs' values and its ridges, which found no place by their diamonds), the note takes
    the next line."""
    from tests.figures.figcheck import read_figure
    from workbench.ui.figures.export import render_figure

    example = next(p for p in EXAMPLES if p.stem == "llama31_8b_inference")
    path = tmp_path / "llama.pdf"
    render_figure(load_session(example), path, size="double", theme="presentation")
    fig = read_figure(path)

    def line(text):  # (a machine's row may say its compute roofs after its name)
        (found,) = [t for t in fig.texts if t.text.strip() == text
                    or t.text.startswith(f"{text}:")]
        return found

    machine = line("NVIDIA H100 SXM5 80GB")
    last_machine = line("NVIDIA GeForce RTX 4090")
    note = line("hollow marker: overhead-bound")
    below_plot = fig.plot[3]
    assert machine.origin[1] > below_plot and note.origin[1] > below_plot
    # the machines side by side on one row, the note on the next; or, in a column, the note
    # starting right of the machines' column, on one of their rows
    rows = 1 + round((last_machine.origin[1] - machine.origin[1]) / machine.size / 1.2)
    if rows == 1:
        assert note.origin[1] - machine.origin[1] < 2 * machine.size
    else:
        # (the machines' column: the lines starting where the first machine's does)
        column = [t for t in fig.texts if abs(t.origin[0] - machine.origin[0]) < 1
                  and machine.origin[1] - 1 <= t.origin[1] <= last_machine.origin[1] + 1]
        right = max(t.origin[0] + t.extent[1] for t in column)
        edge = max(t.origin[0] + t.extent[1] for t in fig.texts if t.origin[1] > below_plot)
        width = note.extent[1] - note.extent[0]
        if edge - right > width + 2 * note.size:  # (room beside the machines' column)
            assert note.origin[0] > machine.origin[0] + 100
            assert machine.origin[1] - 1 <= note.origin[1] <= last_machine.origin[1] + 1
        else:  # (the line after the last machine's, no farther)
            assert 0 < note.origin[1] - last_machine.origin[1] <= 1.6 * machine.size


#: A new H100 session as a user builds it: a GEMM swept over M, an attention, Llama-3.1-8B
#: decoding at batch 64 on two chips, and an A100 (no title: the plot takes the page's top).
_CROWDED = """\
schema_version: 2
hardware: [{preset: h100-sxm}, {preset: a100-40gb}]
operations:
- {name: GEMM, kind: gemm, m: 4096, n: 4096, k: 4096, dtype: bf16,
   sweep: {param: m, values: [1, 16, 256, 4096, 65536]}}
- {name: Attention, kind: attention, implementation: flash, batch: 1, heads: 32, head_dim: 128,
   query_len: 4096, kv_len: 4096, causal: false, dtype: bf16}
models:
- {config: Llama-3.1-8B, phase: decode, batch: 64, prompt_len: 2048, kv_len: 2048, tp: 2}
"""


def test_a_slide_at_600_dpi_keeps_the_y_title_on_the_page(tmp_path):
    """The 16:9 slide (1920 × 1080 px) at 600 dpi is a 3.2 × 1.8 in page: the key below
    leaves the plot a few lines high, and even "Attainable [FLOP/s]" at the least readable
    size was longer than the plot: centred on it, it ran off the top of the page. The title
    keeps its unit and the whole of it is on the page."""
    from tests.figures.figcheck import check_figure, read_figure
    from workbench.ui.figures.export import render_figure

    source = tmp_path / "crowded.yaml"
    source.write_text(_CROWDED, encoding="utf-8")
    path = tmp_path / "slide.pdf"
    render_figure(load_session(source), path, size="slide", dpi=600)
    fig = read_figure(path)
    assert [str(d) for d in check_figure(fig) if d.kind == "off_page"] == []
    plot_left = fig.plot[0]
    titles = [t for t in fig.texts if "FLOP/s" in t.text and t.bbox()[2] < plot_left
              and not t.text.strip()[0].isdigit()]
    assert titles, [t.text for t in fig.texts]
