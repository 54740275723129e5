"""An edit that moves the sweep plot's curves by far less than a pixel leaves its axes as
they are (each such edit redrew every tick and number), and one that moves them fits the
axes to the new curves; its crossing markers follow every edit and theme."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from conftest import EXAMPLES, HANG_GUARD_S

from workbench.model.sweeps import crossings
from workbench.ui.chart.theme import get_theme, qcolor

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


def _swept(open_window, qtbot):
    """The critical-batch example with its sweep plot shown and its swept operation
    selected: ``(sweep plot, document, operation)``."""
    win = open_window(CRITICAL_BATCH)
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    doc = win.document
    target = doc.session.operations[0]
    win.workspace.selection.select(target.id)
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible(),
                    timeout=HANG_GUARD_S * 1000)
    return plot, doc, target


def test_a_tiny_edit_keeps_the_sweep_plots_axes_and_a_large_one_moves_them(open_window,
                                                                          qtbot):
    plot, doc, target = _swept(open_window, qtbot)
    box = plot.plot_widget.getPlotItem().getViewBox()
    n = target.operation.params["n"]
    doc.set_param(target.id, "n", n + 1)
    before = box.viewRange()
    changes: list[object] = []
    box.sigRangeChanged.connect(lambda *args: changes.append(args))
    doc.set_param(target.id, "n", n + 2)  # the curves move by a few millionths of a decade
    assert changes == []
    assert box.viewRange() == before

    doc.set_param(target.id, "n", max(1, n // 64))  # far fewer FLOPs per byte
    assert changes
    shown = box.viewRange()[1]
    assert shown != before[1]
    curves = [item for item in box.addedItems
              if type(item).__name__ == "PlotCurveItem" and item.isVisible()]
    assert len(curves) == 2
    for curve in curves:
        _x, y = curve.getData()
        assert shown[0] <= y.min() and y.max() <= shown[1], (shown, y.min(), y.max())


def test_crossing_markers_follow_edits_and_themes(open_window, qtbot):
    """The crossing markers keep their colour and text between keystrokes (each is set only
    when it changes): after edits that move the crossing and a change of theme, each marker
    is drawn where its crossing lies, in its machine's colour of the theme shown, and says
    the crossing's value."""
    plot, doc, target = _swept(open_window, qtbot)
    machines = [h.hardware for h in doc.session.hardware]

    def check(theme_name: str) -> None:
        theme = get_theme(theme_name)
        op = doc.operation(target.id).operation
        lines = [item for item in plot.plot_widget.getPlotItem().getViewBox().addedItems
                 if isinstance(item, pg.InfiniteLine) and item.isVisible()]
        assert len(lines) == len(machines)
        for i, (hw, line) in enumerate(zip(machines, lines, strict=True)):
            (crossing,) = crossings(op, hw, "m", 1, 4096)
            assert 10 ** line.value() == pytest.approx(crossing.value, rel=1e-12)
            assert line.pen.color().name() == qcolor(theme.roof_color(i)).name()
            assert line.label.color.name() == qcolor(theme.roof_color(i)).name()
            shown = line.label.toPlainText()
            assert shown.startswith("m* = ")
            assert float(shown.removeprefix("m* = ")) == pytest.approx(crossing.value,
                                                                       rel=5e-4)

    check(doc.session.view.theme)
    for n in (8000, 8001, 4096, 2048):  # the last two move the crossings' printed digits
        doc.set_param(target.id, "n", n)
    check(doc.session.view.theme)
    doc.set_view("theme", "dark")
    check("dark")
    doc.set_param(target.id, "n", 1024)
    check("dark")


def test_keystrokes_draw_the_sample_dots_from_the_same_symbols(open_window, qtbot):
    """Each sample dot's symbol is drawn once per colour and kept: keystrokes that move the
    dots add no symbol pictures (each refresh made new pens, and each new pen another
    picture in the dots' symbol atlas, redrawn whole at the next paint, up to a thousand)."""
    plot, doc, target = _swept(open_window, qtbot)
    dots = [item for item in plot.plot_widget.getPlotItem().getViewBox().addedItems
            if isinstance(item, pg.ScatterPlotItem) and item.isVisible()]
    assert len(dots) == len(doc.session.hardware)
    n = target.operation.params["n"]
    doc.set_param(target.id, "n", n + 1)
    drawn = [len(item.fragmentAtlas) for item in dots]
    for step in range(2, 12):
        doc.set_param(target.id, "n", n + step)
    assert [len(item.fragmentAtlas) for item in dots] == drawn
