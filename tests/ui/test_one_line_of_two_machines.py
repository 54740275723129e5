"""Two machines of one peak draw one line (the H100 and the H200 SXM: 989.4 TFLOP/s bf16 in
their presets): in the window, one text names it beside the line, with no machine's name
before it; the line under the pointer names both machines. Before, each machine's text had
the other's line as near as its own, so neither was placed, and the tip named one machine."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QToolTip

from workbench.io.presets import examples_dir

BOTH = "NVIDIA H100 SXM5 80GB and NVIDIA H200 SXM 141GB — bf16 989 TFLOP/s"


def test_the_shared_flat_roof_is_named_once_and_for_both(open_window, qtbot):
    win = open_window(examples_dir() / "attention.yaml", size=(1366, 768))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled)
    canvas.relayout()
    compute = [(i, label) for i, (roof, label) in enumerate(canvas.roofs.roof_texts)
               if roof.kind == "compute"]
    assert [label.toPlainText() for _i, label in compute] == ["bf16 989 TFLOP/s"]
    assert "bf16 989 TFLOP/s" in canvas.roof_labels()  # (placed: shown by its line)
    assert {r.hw_id for r in canvas.roofs.says(compute[0][0])} == {
        e.id for e in win.document.session.hardware}

    # the flat roof under the pointer, right of every point
    (_x0, x1), _ = canvas.view_range()
    peak = next(ys[0] for _hw, kind, _name, _xs, ys in canvas.roof_items() if kind == "compute")
    right = max(x for _op, _hw, x, _y in canvas.point_items())
    x = float(np.sqrt(right * x1))  # (halfway, on the log axis, to the view's right edge)
    p = canvas.pixel_of(x, peak)
    viewport = canvas.plot_widget.viewport()
    qtbot.mouseMove(viewport, QPoint(2, 2))
    qtbot.wait(40)  # (pyqtgraph drops moves closer than a frame apart)
    qtbot.mouseMove(viewport, QPoint(round(p.x()), round(p.y()) + 1))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == BOTH)
    assert canvas.hover_text() == BOTH
