"""A figure's ridge whose text finds no place by its diamond is said in the key, after its
machine's name and its roofs' values ("Teaching machine (round numbers): fp32/fp16 100
TFLOP/s, ridge 100 FLOP/B"), where its row costs no text that ranks before it its place; a
paper column grows by the row where it must. On screen the key names operations only.

The case: the teaching example at single-column size, whose title is "the ridge at 100
FLOP/byte". Its two ridges (100 TFLOP/s over 1 TB/s = 100 FLOP/byte; 20 TFLOP/s over 800
GB/s = 25 FLOP/byte) lie where the compute roofs' texts, the GEMMs' points and the plot's
top leave no room, and the figure said neither of them anywhere."""

from __future__ import annotations

import unicodedata

from figures.example_figures import example_figure
from figures.figcheck import legend_box

from workbench.io.presets import examples_dir
from workbench.io.sessions import load_session
from workbench.model.analysis import evaluate_session
from workbench.model.chart.scene import build_scene


def _flat(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("\u2060", "")


def test_the_teaching_figure_says_both_ridges_in_its_key(qapp):
    session = load_session(examples_dir() / "teaching_machine.yaml")
    scene = build_scene(session, evaluate_session(session))
    assert sorted(r.x for r in scene.ridges) == [25.0, 100.0]  # (the datasheets' ratios)
    fig = example_figure("teaching_machine", "single").figure()
    key = legend_box(fig)
    assert key is not None
    in_key = [t for t in fig.texts if key[1] <= t.origin[1] <= key[3]]
    said = _flat(" ".join(t.text for t in in_key))
    # each after its own machine's row: the teaching machine's, then the exercise machine's
    teaching = said.index("Teaching machine (round numbers):")
    exercise = said.index("Exercise machine (20 TFLOP/s, 800 GB/s):")
    assert teaching < said.index("ridge 100 FLOP/B") < exercise < said.index("ridge 25 FLOP/B")
    # said once, not also by the diamonds
    everything = _flat(" ".join(t.text for t in fig.texts))
    assert everything.count("ridge 100 FLOP/B") == 1 and everything.count("ridge 25 FLOP/B") == 1


def test_the_window_keeps_ridges_by_their_diamonds(open_window, qtbot):
    """On screen the key lists operations only: a ridge with no room is left to its
    diamond's tooltip (and said short where that finds room), never in the legend."""
    win = open_window(examples_dir() / "teaching_machine.yaml", size=(1024, 700))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    assert canvas.key.ridges_in_key() == frozenset()
    rows = [e.text for e in canvas.scene_model.legend] if canvas.scene_model else []
    assert not any("ridge" in row for row in rows), rows


def test_a_ridge_said_in_the_key_counts_as_said(qapp):
    """A paper column grown for its key's rows is kept only where every text the shorter
    page said is still said (``figure_svg_sized``): a ridge said by its diamond on the
    shorter page and in the key on the taller one was counted as a text lost, and the page
    went back to its old height, its compute roofs' values unsaid again."""
    from workbench.ui.figures.export import figure_svg_sized, last_figure_canvas, resolve_size

    session = load_session(examples_dir() / "teaching_machine.yaml")
    figure_svg_sized(session, resolve_size("single"))
    canvas = last_figure_canvas()
    assert canvas is not None
    keyed = canvas.key.ridges_in_key()
    ridges = [i for i, (ridge, _label) in enumerate(canvas.roofs.ridges) if ridge.hw_id in keyed]
    assert len(ridges) == 2  # (both machines' ridges said in the key: the test above)
    placed = canvas.labels.text_layout.placed
    assert all(("ridge", i) not in placed for i in ridges)  # (none by its diamond)
    assert {("ridge", i) for i in ridges} <= canvas.key.said()


def test_a_column_grown_for_its_key_keeps_the_charts_height(qapp):
    """A paper column whose compute values and ridges find no place by their lines grows
    by their rows in the key, and by no more: the chart keeps the height it has on the
    page that does not grow. The room the rows take was measured from a legend left laid
    out as the refused trial of the rows had made it (smaller type, flowed): the teaching
    column grew 6 px more than its rows, its chart taller by as much."""
    from dataclasses import replace

    from workbench.ui.figures.export import figure_svg_sized, last_figure_canvas, resolve_size

    session = load_session(examples_dir() / "teaching_machine.yaml")
    single = resolve_size("single")
    _svg, kept = figure_svg_sized(session, replace(single, most_height=0, most_key_height=0))
    assert kept.height == single.height
    plot_kept = last_figure_canvas().view_box.sceneBoundingRect().height()
    _svg, grown = figure_svg_sized(session, single)
    assert grown.height > single.height  # (grown for its key's rows: the tests above)
    plot_grown = last_figure_canvas().view_box.sceneBoundingRect().height()
    assert abs(plot_grown - plot_kept) <= 1.0, (plot_kept, plot_grown)
