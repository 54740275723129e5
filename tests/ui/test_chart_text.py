"""Every text on the live chart sits clear of every other text and of the data drawn, inside
the plot: after edits, zooms and a resize to a laptop's window (1366 × 768).

The check reads what the canvas draws through its public readers (points, roofs, sweep
paths, links, the legend, the texts' boxes on screen) and does its own geometry; it does not
consult the layout's bookkeeping."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from conftest import open_canvas
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication

from workbench.document import Document
from workbench.io.sessions import load_session
from workbench.ui.bridge import Workspace
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.canvas import RooflineCanvas

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "workbench" / "examples"
EXAMPLES = sorted(EXAMPLE_DIR.glob("*.yaml"))


def open_at_laptop_size(qtbot, path: Path) -> tuple[RooflineCanvas, Workspace]:
    document = Document()
    document.replace_session(load_session(path))
    workspace = Workspace(document)
    canvas = RooflineCanvas(workspace)
    qtbot.addWidget(canvas)
    canvas.resize(1366, 768)
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    canvas.relayout()
    return canvas, workspace


def scene_point(canvas: RooflineCanvas, x: float, y: float) -> tuple[float, float]:
    """Scene pixel of data ``(x, y)`` (the view's own mapping)."""
    vb = canvas.plot_widget.getPlotItem().getViewBox()
    p = vb.mapViewToScene(QPointF(float(to_view(x)), float(to_view(y))))
    return p.x(), p.y()


def segment_meets_box(p, q, box) -> bool:
    """Does the segment ``p``–``q`` pass through the box ``(left, top, right, bottom)``?"""
    (x0, y0), (x1, y1) = p, q
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        return False
    t0, t1 = 0.0, 1.0
    dx, dy = x1 - x0, y1 - y0
    for pp, qq in ((-dx, x0 - box[0]), (dx, box[2] - x0), (-dy, y0 - box[1]),
                   (dy, box[3] - y0)):
        if pp == 0:
            if qq < 0:
                return False
            continue
        r = qq / pp
        if pp < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return False
    return True


def boxes_meet(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def data_lines(canvas: RooflineCanvas) -> list[list[tuple[float, float]]]:
    """Every drawn line as scene pixels: roofs, sweep paths, measured links, pair links."""
    lines = [list(zip(xs, ys, strict=True)) for *_, xs, ys in canvas.roof_items()]
    lines += [list(zip(xs, ys, strict=True)) for *_, xs, ys in canvas.sweep_items()]
    lines += [list(zip(*m["link"], strict=True)) for m in canvas.measured_items()]
    lines += [list(zip(*p["link"], strict=True)) for p in canvas.pair_items()]
    return [[scene_point(canvas, x, y) for x, y in line] for line in lines]


def markers(canvas: RooflineCanvas) -> list[tuple[float, float]]:
    out = [scene_point(canvas, x, y) for _op, _hw, x, y in canvas.point_items()]
    out += [scene_point(canvas, m["x"], m["y"]) for m in canvas.measured_items()]
    out += [scene_point(canvas, x, y) for *_, x, y in canvas.crossing_items()]
    return out


def problems(canvas: RooflineCanvas) -> list[str]:
    """Text over text, over a line, over a marker, over the legend, or outside the plot."""
    texts = canvas.text_items()
    plot = canvas.plot_widget.getPlotItem().getViewBox().sceneBoundingRect()
    half = canvas.theme.point_size / 2
    found = []
    lines = data_lines(canvas)
    dots = markers(canvas)
    legend = canvas.legend_item
    legend_box = None
    if legend.isVisible():
        r = legend.sceneBoundingRect()
        legend_box = (r.left(), r.top(), r.right(), r.bottom())
    for i, (_kind, text, box) in enumerate(texts):
        if not (plot.left() <= box[0] and box[2] <= plot.right() and plot.top() <= box[1]
                and box[3] <= plot.bottom()):
            found.append(f"{text!r} outside the plot")
        for _kind2, text2, box2 in texts[i + 1:]:
            if boxes_meet(box, box2):
                found.append(f"{text!r} over {text2!r}")
        if legend_box is not None and boxes_meet(box, legend_box):
            found.append(f"{text!r} over the legend")
        for line in lines:
            if any(segment_meets_box(p, q, box) for p, q in itertools.pairwise(line)):
                found.append(f"{text!r} over a line")
                break
        for x, y in dots:
            if boxes_meet(box, (x - half, y - half, x + half, y + half)):
                found.append(f"{text!r} over a marker")
                break
    return found


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_no_text_over_text_or_data_at_laptop_size(qtbot, path):
    canvas, _workspace = open_at_laptop_size(qtbot, path)
    assert canvas.text_items(), "no text placed at all"
    assert problems(canvas) == []


def test_no_text_over_text_or_data_after_edits_and_zooms(qtbot):
    canvas, workspace = open_at_laptop_size(qtbot, EXAMPLE_DIR / "llama_ffn.yaml")
    document = workspace.document
    gemv = next(e.id for e in document.session.operations
                if e.operation.name == "FFN up, decode GEMV")
    workspace.selection.select(gemv)
    for m in (2, 16, 64, 256, 1024):  # the GEMV's points walk up the roofs
        document.set_param(gemv, "m", m)
        QApplication.processEvents()
        assert problems(canvas) == [], f"m = {m}"
    (x0, x1), (y0, y1) = canvas.view_range()
    for factor in (0.5, 0.25):  # zoom in around the middle of the view (log scale)
        cx, cy = math.sqrt(x0 * x1), math.sqrt(y0 * y1)
        sx, sy = (x1 / x0) ** (factor / 2), (y1 / y0) ** (factor / 2)
        canvas.set_view_range((cx / sx, cx * sx), (cy / sy, cy * sy))
        QApplication.processEvents()
        canvas.relayout()
        assert problems(canvas) == [], f"zoom {factor}"
    canvas.resize(900, 600)
    QApplication.processEvents()
    canvas.relayout()
    assert problems(canvas) == [], "resized"
    canvas.fit_to_data()
    QApplication.processEvents()
    assert problems(canvas) == [], "fitted"
    labelled = [t for k, t, _ in canvas.text_items() if k == "point"]
    assert labelled, "no operation named after the resize"


def test_a_label_without_a_clean_place_is_not_drawn(qtbot):
    """Twenty operations at nearly one intensity on three machines: most names cannot be
    placed cleanly next to their points; those are left out (never drawn overlapping), and
    the operations stay in the tooltip."""
    from workbench.model.operations import Operation
    from workbench.model.session import OperationEntry

    session = load_session(EXAMPLE_DIR / "llama_ffn.yaml")
    session.operations = [OperationEntry(Operation("gemm", {"m": 64 + i, "n": 4096, "k": 4096,
                                                            "dtype": "fp16"},
                                                   f"a rather long kernel name number {i}"))
                          for i in range(20)]
    document = Document()
    document.replace_session(session)
    workspace = Workspace(document)
    canvas = RooflineCanvas(workspace)
    qtbot.addWidget(canvas)
    canvas.resize(1000, 700)
    canvas.show()
    qtbot.waitExposed(canvas)
    canvas.relayout()
    shown = [t for k, t, _ in canvas.text_items() if k == "point"]
    assert 0 < len(shown) < 20
    assert problems(canvas) == []


def test_the_check_sees_a_text_put_over_a_roof(qtbot):
    """The geometry above is not vacuous: a name moved onto a roof is reported."""
    canvas, _workspace = open_at_laptop_size(qtbot, EXAMPLE_DIR / "llama_ffn.yaml")
    assert problems(canvas) == []
    label = next(iter(canvas.labels.point_labels.values()))
    _hw, _kind, _name, xs, ys = canvas.roof_items()[0]
    x = math.sqrt(xs[0] * xs[1]) if xs[1] / xs[0] < 1e6 else canvas.view_range()[0][0] * 3
    y = x * ys[0] / xs[0]  # on the sloped roof
    label.setPos(float(to_view(x)), float(to_view(y)))
    assert any("over a line" in p for p in problems(canvas))


@pytest.mark.parametrize("example, peaks", [
    ("teaching_machine", ["100 TFLOP/s", "20 TFLOP/s"]),
    ("llama_ffn", ["989 TFLOP/s", "312 TFLOP/s", "197 TFLOP/s"]),
])
def test_compute_roofs_with_points_on_them_still_show_their_peak(qtbot, example, peaks):
    """Compute-bound operations sit on the flat roof, so a value label just over or under
    the line meets their markers; it moves clear of them rather than going unshown."""
    canvas, _workspace = open_at_laptop_size(qtbot, EXAMPLE_DIR / f"{example}.yaml")
    shown = canvas.roof_labels()
    for peak in peaks:
        assert any(text.endswith(peak) for text in shown), (peak, shown)
    assert problems(canvas) == []


def _gap_to_box(p, box) -> float:
    """Pixels from the point ``p`` to the box ``(left, top, right, bottom)`` (0 inside)."""
    dx = max(box[0] - p[0], 0.0, p[0] - box[2])
    dy = max(box[1] - p[1], 0.0, p[1] - box[3])
    return math.hypot(dx, dy)


def _gap_to_segment(p, q, box) -> float:
    """Pixels from the segment ``p``–``q`` to the box (sampled along the segment)."""
    if segment_meets_box(p, q, box):
        return 0.0
    steps = max(2, int(math.hypot(q[0] - p[0], q[1] - p[1]) / 2))
    return min(_gap_to_box((p[0] + (q[0] - p[0]) * t / steps, p[1] + (q[1] - p[1]) * t / steps),
                           box) for t in range(steps + 1))


# the chart's part of a main window of 1366 × 768 and of 1350 × 720
@pytest.mark.parametrize("size", [(1010, 525), (994, 547)])
def test_a_memory_roofs_value_is_not_said_beside_a_point(qtbot, size):
    """The TPU critical-batch example at a laptop's window: "hbm 819 GB/s" lay 10 px under
    its roof and 13 px from the per-example-weights point on it, a point with no name of
    its own beside it: it read as that point's name. A memory roof's value said beside its
    line is clearly nearer the line than any marker."""
    canvas = open_canvas(qtbot, EXAMPLE_DIR / "tpu_critical_batch.yaml", size)
    sloped = [[scene_point(canvas, x, y) for x, y in zip(xs, ys, strict=True)]
              for _hw, kind, _name, xs, ys in canvas.roof_items() if kind == "memory"]
    dots = markers(canvas)
    said = [(text, box) for kind, text, box in canvas.text_items()
            if kind == "roof" and text.endswith("B/s")]
    assert said
    for text, box in said:
        line = min(_gap_to_segment(p, q, box) for roof in sloped
                   for p, q in itertools.pairwise(roof))
        if line > 20:  # (said off its line, a leader joins them)
            continue
        nearest = min(_gap_to_box(dot, box) for dot in dots)
        assert nearest >= 1.5 * line + 3, (text, line, nearest)
