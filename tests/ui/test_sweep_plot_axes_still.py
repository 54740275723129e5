"""An edit that moves the sweep plot's curves by far less than a pixel leaves its axes as
they are (each such edit redrew every tick and number), and one that moves them fits the
axes to the new curves."""

from __future__ import annotations

from conftest import EXAMPLES, HANG_GUARD_S

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


def test_a_tiny_edit_keeps_the_sweep_plots_axes_and_a_large_one_moves_them(open_window,
                                                                          qtbot):
    win = open_window(CRITICAL_BATCH)
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    doc = win.document
    target = doc.session.operations[0]
    win.workspace.selection.select(target.id)
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible(),
                    timeout=HANG_GUARD_S * 1000)
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
