"""A point outside the view is named nowhere on the chart: a new user's six kinds of
operation, added one by one to an H100 and M4 Max session, drew the tags "1" and "2" of
the elementwise chain and the reduction (both left of the view) with their leaders running
to the edge of the plot, where no marker is; the note over the chart counts those points."""

from __future__ import annotations

import numpy as np
import pytest
from ui.test_attribution import SCREENS, _settled, _six_kinds, _window

from workbench.ui.chart.axes import to_view


def _cut_view(win, left: float, bottom: float) -> None:
    """Zoom in from the chart's view: the ``left`` and ``bottom`` fractions of its decades
    cut off; its texts placed as after the user stops."""
    canvas = win.canvas
    (x0, x1), (y0, y1) = canvas.view_box.viewRange()  # (decades)
    canvas.set_view_range((10 ** (x0 + left * (x1 - x0)), 10 ** x1),
                          (10 ** (y0 + bottom * (y1 - y0)), 10 ** y1))
    _settled(win)


def _named_out_of_view(win) -> list[str]:
    """The texts on the chart that name operations none of whose markers is in view."""
    canvas = win.canvas
    frame = canvas.view_box.sceneBoundingRect()
    ax, bx, ay, by = canvas.view_to_scene()
    seen: dict[int, bool] = {}
    for (op_id, _hw), mark in canvas.points.marks.items():
        x, y = to_view(mark.x) * ax + bx, to_view(mark.y) * ay + by
        inside = bool(np.isfinite(x) and np.isfinite(y) and frame.contains(x, y))
        seen[op_id] = seen.get(op_id, False) or inside
    out = []
    for key in canvas.labels.text_layout.placed:
        entry = canvas.labels.entry(key)
        if key[0] != "point" or entry is None or not entry[0].isVisible():
            continue
        crowd = canvas.key.crowd_of(key[1])
        if not any(seen.get(op, False) for op in crowd):
            out.append(entry[0].textItem.toPlainText())
    return out


@pytest.mark.parametrize("size", SCREENS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_points_out_of_view_carry_no_name_or_tag(qtbot, size):
    with _window(qtbot, size) as win:
        _six_kinds(win)
        _settled(win)
        ops = win.document.session.operations
        canvas = win.canvas
        # each operation added is brought into view; zoomed in on the ridges, some leave it
        _cut_view(win, 0.55, 0.3)
        assert canvas.points.outside(canvas.view_box.viewRange()) > 0
        assert _named_out_of_view(win) == []
        # Ctrl+0: every point in view, each named again (by its name or its tag)
        win.fit_action.trigger()
        _settled(win)
        assert _named_out_of_view(win) == []
        told = {key[1] for key in canvas.labels.text_layout.placed if key[0] == "point"
                and canvas.labels.entry(key)[0].isVisible()}
        shown = {op for t in told for op in canvas.key.crowd_of(t)}
        assert {e.id for e in ops} <= shown


def test_the_key_lists_no_tag_for_a_point_out_of_view(qtbot):
    """Zoomed in on the ridges, the key listed "1 — Attention" … "5 — Reduction" for five
    operations none of whose markers was in view, and no tag of theirs was on the chart."""
    with _window(qtbot, SCREENS[0]) as win:
        _six_kinds(win)
        canvas = win.canvas
        canvas.fit_to_data()
        _settled(win)
        # the ridges' corner: the GEMM's M4 Max marker stays in view, most others leave it
        _cut_view(win, 0.55, 0.3)
        assert canvas.points.outside(canvas.view_box.viewRange()) >= 4
        labels = canvas.labels
        listed = {op for row in canvas.key.rows for op in row.ids}
        assert all(labels.in_view((op,)) for op in listed), [
            r.text for r in canvas.key.rows if not all(labels.in_view((o,)) for o in r.ids)]
        assert _named_out_of_view(win) == []


def test_a_name_leads_to_its_marker_in_view(qtbot):
    """Zoomed in on the ridges, "GEMM" was said by the top edge of the plot with a leader
    running out of it to the H100's GEMM point above the view, while its M4 Max point was
    in view: a name is said by one of its markers that the reader sees."""
    with _window(qtbot, SCREENS[0]) as win:
        _six_kinds(win)
        canvas = win.canvas
        canvas.fit_to_data()
        _settled(win)
        (x0, x1), (y0, y1) = canvas.view_box.viewRange()
        canvas.set_view_range((10 ** (x0 + 0.55 * (x1 - x0)), 10 ** x1),
                              (10 ** (y0 + 0.3 * (y1 - y0)), 10 ** (y1 - 0.2 * (y1 - y0))))
        _settled(win)
        gemm = win.document.session.operations[0].id
        assert canvas.labels.in_view((gemm,))
        frame = canvas.view_box.sceneBoundingRect().adjusted(-2, -2, 2, 2)
        out = []
        for key, placement in canvas.labels.text_layout.placed.items():
            entry = canvas.labels.entry(key)
            if (key[0] == "point" and entry is not None and entry[0].isVisible()
                    and placement.leader is not None):
                lx0, ly0, lx1, ly1 = placement.leader
                if not (frame.contains(lx0, ly0) and frame.contains(lx1, ly1)):
                    out.append(entry[0].textItem.toPlainText())
        assert out == []


def _said_of_marks_out_of_view(canvas) -> list[str]:
    """The sweeps' end values, crossings', measured points' and ridges' texts drawn on the
    chart whose mark lies outside the view."""
    frame = canvas.view_box.sceneBoundingRect()
    ax, bx, ay, by = canvas.view_to_scene()

    def out(x: float, y: float) -> bool:
        sx, sy = float(to_view(x)) * ax + bx, float(to_view(y)) * ay + by
        return not frame.contains(sx, sy)

    overlays = canvas.overlays
    said = [(path.xs[end], path.ys[end], label) for path, end, label in overlays.sweep_texts]
    said += [(mark.x, mark.y, label) for mark, label in overlays.crossing_texts]
    said += [(mark.x, mark.y, label) for mark, _link, label in overlays.measured_texts]
    said += [(ridge.x, ridge.y, label) for ridge, label in canvas.roofs.ridges]
    return [label.textItem.toPlainText() for x, y, label in said
            if label.isVisible() and out(x, y)]


@pytest.mark.parametrize("name", ["critical_batch_sweep", "predicted_vs_measured"])
def test_a_sweeps_end_or_a_measured_point_out_of_view_carries_no_text(qtbot, name):
    """Zoomed in past a sweep's end, its value ("m = 1") was still drawn at the edge of the
    plot, its leader running off it to nothing drawn (a random walk of edits left a
    "k = 4096" by itself in a corner); the same for a measured point's verdict. Texts of
    marks out of view are not drawn; back in view, they are."""
    from tests.conftest import EXAMPLES

    path = next(p for p in EXAMPLES if p.stem == name)
    with _window(qtbot, SCREENS[0], path) as win:
        canvas = win.canvas
        _settled(win)
        assert _said_of_marks_out_of_view(canvas) == []
        overlays = canvas.overlays
        before = sum(label.isVisible() for *_x, label in overlays.sweep_texts) + sum(
            label.isVisible() for *_x, label in overlays.measured_texts)
        assert before > 0
        # zoomed in a little: the lowest marks leave the view (the sweeps' "m = 1", the
        # decode GEMV's measured point), just past the plot's edge
        canvas.fit_to_data()
        _settled(win)
        _cut_view(win, 0.1, 0.3)
        assert _said_of_marks_out_of_view(canvas) == []
        win.fit_action.trigger()
        _settled(win)
        assert _said_of_marks_out_of_view(canvas) == []
        after = sum(label.isVisible() for *_x, label in overlays.sweep_texts) + sum(
            label.isVisible() for *_x, label in overlays.measured_texts)
        assert after == before


#: a session a random walk of edits left (its title, two lines over a small chart, and its
#: names as the walk made them)
_EDGE_SESSION = '''schema_version: 2
title: TPU v5e — critical batch size for bf16 and int8 matmuls
hardware:
- name: NVIDIA H100 SXM5 80GB
  based_on: h100-sxm
  compute: {fp64: 67 TFLOP/s, fp32: 67 TFLOP/s, tf32: 494.7 TFLOP/s, bf16: 989.4 TFLOP/s,
    fp16: 989.4 TFLOP/s, fp8: 1.979 PFLOP/s, int8: 1.979 PFLOP/s}
  vector_compute: {fp64: 34 TFLOP/s, fp32: 67 TFLOP/s, bf16: 133.8 TFLOP/s, fp16: 133.8 TFLOP/s}
  memory: {hbm: 837.5 GB/s}
  main_memory: hbm
  launch_overhead: 8 µs
- {preset: gh200, name: NVIDIA GH200 Grace Hopper Superchip (96GB HBM3) 2}
- {preset: h100-sxm, name: NVIDIA H100 SXM5 80GB 2, visible: false}
- {preset: gh200, name: NVIDIA GH200 Grace Hopper Superchip (96GB HBM3) 2}
prediction: {model: derated, launches: graph}
operations:
- {name: 'bf16 matmul, B=64', kind: gemm, m: 64, n: 1000000, k: 1, dtype: bf16}
- {name: 'bf16 matmul, B=512 (copy)', kind: gemm, m: 1000000, n: 1, k: 4096, dtype: bf16, color: '#CC79A7'}
- {name: 'bf16 matmul, B=512 (copy) (copy)', kind: gemm, m: 65536, n: 8191, k: 4096, dtype: bf16,
  color: '#E69F00'}
- {name: 'int8 weights, bf16 acts, B=128 (copy)', kind: gemm, m: 100, n: 1000000000, k: 100, dtype: bf16,
  b_dtype: int8}
- {name: 'int8 weights, bf16 acts, B=128 (copy) (copy) 2', kind: gemm, m: 100, n: 1000000000, k: 100,
  dtype: bf16, b_dtype: int8, color: '#F0E442'}
- {name: 'int8 weights, bf16 acts, B=128 (copy) (copy) 2 (copy)', kind: gemm, m: 100, n: 1000000000, k: 100,
  dtype: bf16, b_dtype: int8, color: '#CC6677'}
- {name: 'int8 weights, bf16 acts, B=128 (copy) (copy)', kind: gemm, m: 100, n: 1000000000, k: 100,
  dtype: bf16, b_dtype: int8, color: '#009E73'}
- {name: 'bf16 matmul, B=64 (copy)', kind: gemm, m: 1000000000, n: 8191, k: 16, dtype: bf16, color: '#56B4E9'}
view: {regions: true}
'''


def test_a_tags_leader_runs_to_its_marker_in_view_not_one_at_the_edge(qtbot, tmp_path):
    """A tag "1, 2" names two operations whose markers sit in view on one machine and, on
    another, just below the plot's bottom edge (half drawn there). Its leader ran to the
    half-drawn one, out of the plot, past the marker in view: a reader could not pair it.
    A leader now runs to a marker in the plot."""
    from figures.figcheck import canvas_attribution, check_attribution, format_defects

    path = tmp_path / "edge.yaml"
    path.write_text(_EDGE_SESSION, encoding="utf-8")
    with _window(qtbot, (1600, 1000), path) as win:
        _settled(win)
        win.resize(800, 600)  # (the docks keep their sizes: a small chart)
        canvas = win.canvas
        canvas.set_view_range((0.25332360443375457, 5601245.24836744),
                              (877801854981.1588, 6763485365529836.0))
        _settled(win)
        defects = check_attribution(*canvas_attribution(canvas))
        assert not defects, format_defects(defects, "zoomed to the plot's edge")


def test_a_ridge_out_of_view_carries_no_text(qtbot):
    """The TPU critical-batch example with an H100 added, zoomed in under the TPU v5e's
    ridge (241 FLOP/B at 197 TFLOP/s, just above the view): "TPU v5e: ridge 241 FLOP/B
    (bf16)" was drawn in the plot, its leader running off its top. A ridge out of view is
    not said; in view again, it is."""
    from tests.conftest import EXAMPLES
    from workbench.io.presets import get_preset

    path = next(p for p in EXAMPLES if p.stem == "tpu_critical_batch")
    with _window(qtbot, (1600, 1000), path) as win:
        win.document.add_machine(get_preset("h100-sxm"), preset="h100-sxm")
        canvas = win.canvas
        _settled(win)
        ridges = sum(label.isVisible() for _ridge, label in canvas.roofs.ridges)
        assert ridges >= 2
        canvas.set_view_range((38.7, 258.2), (3.15e13, 1.89e14))
        _settled(win)
        assert _said_of_marks_out_of_view(canvas) == []
        win.fit_action.trigger()
        _settled(win)
        assert sum(label.isVisible() for _ridge, label in canvas.roofs.ridges) == ridges
