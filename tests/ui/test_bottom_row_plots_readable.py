"""The plots of the short bottom row can be read at a laptop's 1366 × 768: the sweep plot's
legend covers none of its curves (it hid a third of them) and the Model tab's Throughput
chart is shown at its full height (it was 40 pixels high)."""

from __future__ import annotations

from conftest import EXAMPLES, HANG_GUARD_S

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")
LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")


def test_the_sweep_plots_legend_covers_none_of_its_curves(open_window, qtbot):
    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    win.sweep_dock.raise_()
    plot = win.sweep_plot
    qtbot.waitUntil(lambda: not plot.is_empty() and plot.plot_widget.isVisible())
    assert len(plot.curves()) == 2
    item = plot.plot_widget.getPlotItem()
    legend = next(i for i in item.scene().items()
                  if type(i).__name__ == "LegendItem" and i.isVisible())
    area = item.getViewBox().sceneBoundingRect()
    box = legend.sceneBoundingRect()
    # beside the plot (their edges may share a pixel's pen)
    assert box.width() > 0 and box.left() >= area.right() - 1, (box, area)
    # and it lies within the widget, to be read
    view = plot.plot_widget.viewport().rect()
    assert plot.plot_widget.mapFromScene(box).boundingRect().right() <= view.right() + 1


def test_the_throughput_chart_is_shown_whole(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    win.model_dock.raise_()
    panel = win.model_panel
    panel.show_model(win.document.session.models[0].id)
    qtbot.waitUntil(panel.isVisible)
    panel.pages.setCurrentIndex(panel.pages.indexOf(panel.chart.parentWidget()))
    chart = panel.chart
    qtbot.waitUntil(lambda: chart.visibleRegion().boundingRect().height()
                    >= chart.minimumHeight(), timeout=HANG_GUARD_S * 1000)
    # the chart keeps the rest of the window: the roofline chart is still the larger
    assert win.canvas.height() > chart.height()
