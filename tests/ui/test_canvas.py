"""The live roofline canvas: what is drawn, where, and how it follows edits.

Positions are read back from the drawn items (in data units) and compared with numbers
computed independently: from the model's own evaluation or by hand.
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import HANG_GUARD_S, SHADING, largest_difference, paint_regions, rest_pointer
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QToolTip

from tests.conftest import EXAMPLES
from workbench.document import Document, new_operation
from workbench.io.presets import get_preset
from workbench.io.sessions import load_session
from workbench.model.analysis import evaluate_session
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.ui.bridge import Workspace
from workbench.ui.chart.canvas import LogAxis, RooflineCanvas

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "workbench" / "examples"


def open_canvas(qtbot, session: Session | Path | str) -> tuple[RooflineCanvas, Workspace]:
    if not isinstance(session, Session):
        session = load_session(session)
    document = Document()
    document.replace_session(session)
    workspace = Workspace(document)
    canvas = RooflineCanvas(workspace)
    qtbot.addWidget(canvas)
    canvas.resize(760, 560)  # inside the offscreen platform's 800×800 screen
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    return canvas, workspace


def op_named(workspace: Workspace, name: str) -> int:
    return next(e.id for e in workspace.document.session.operations
                if e.operation.name == name)


def positions(canvas: RooflineCanvas) -> dict[tuple[int, int], tuple[float, float]]:
    return {(op, hw): (x, y) for op, hw, x, y in canvas.point_items()}


def approx_pos(x: float, y: float):
    return pytest.approx((x, y), rel=1e-9)


def gemm_intensity(m: int, n: int, k: int, size: float = 2.0) -> float:
    """2·M·N·K FLOPs over (M·K + K·N + M·N)·size bytes."""
    return 2 * m * n * k / ((m * k + k * n + m * n) * size)


@pytest.fixture
def llama(qtbot):
    return open_canvas(qtbot, EXAMPLE_DIR / "llama_ffn.yaml")


# --------------------------------------------------------------------------------------
# what is drawn


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_points_sit_at_intensity_and_attainable(qtbot, path):
    canvas, workspace = open_canvas(qtbot, path)
    expected = {(p.operation.id, p.hardware.id): (p.result.intensity, p.result.attainable_flops)
                for p in evaluate_session(workspace.document.session, visible_only=True)
                if p.result is not None}
    drawn = positions(canvas)
    assert set(drawn) == set(expected)
    for key, (x, y) in expected.items():
        assert drawn[key] == approx_pos(x, y)
    # and the view shows all of them
    (x0, x1), (y0, y1) = canvas.view_range()
    assert all(x0 < x < x1 and y0 < y < y1 for x, y in drawn.values())


def test_llama_roofs_and_ridges(llama):
    canvas, workspace = llama
    session = workspace.document.session
    roofs = canvas.roof_items()
    for entry in session.hardware:
        hw = entry.hardware
        mine = [r for r in roofs if r[0] == entry.id]
        # every memory level is drawn (the A100 preset has an L2 level too); main memory:
        (memory,) = [r for r in mine if r[1] == "memory" and r[2] == hw.main_memory]
        (compute,) = [r for r in mine if r[1] == "compute"]
        _, _, name, xs, ys = memory
        assert name == hw.main_memory
        assert ys[0] / xs[0] == pytest.approx(hw.bandwidth())  # y = bandwidth · x
        peak = hw.peak("bf16")
        assert ys[1] == pytest.approx(peak)  # clipped at the compute roof …
        assert compute[4] == pytest.approx([peak, peak])  # … which is flat at the peak
        # from the ridge on (the A100's L2 is not drawn: no operation is measured across it)
        assert compute[3][0] == pytest.approx(peak / hw.bandwidth())
    # H100 989.4/3.35 = 295, A100 312/2.039 = 153, TPU v5e 197/0.819 = 241: one ridge label
    # per machine, naming it (three machines on the chart), or where that has no clean place,
    # its value alone by its diamond; a label with neither is not drawn (the tooltip has the
    # value)
    expected = ["A100 SXM4 80GB: ridge 153 FLOP/B", "H100 SXM5 80GB: ridge 295 FLOP/B",
                "TPU v5e: ridge 241 FLOP/B"]
    assert sorted(r.label for r in canvas.scene_model.ridges) == expected
    shown = canvas.ridge_labels()
    assert shown
    for label in expected:  # (each said at most once, in full or short)
        assert sum(t in (label, label.split(": ")[1]) for t in shown) <= 1
    assert set(shown) <= set(expected) | {label.split(": ")[1] for label in expected}
    assert not [r for r in roofs if r[1] == "interconnect"]


def test_teaching_machine_ridge_label(qtbot):
    canvas, _ = open_canvas(qtbot, EXAMPLE_DIR / "teaching_machine.yaml")
    # two machines: each ridge label says whose it is, or (no room for that) its value alone
    # by its diamond, on its machine's line
    expected = {"Teaching machine: ridge 100 FLOP/B", "Exercise machine: ridge 25 FLOP/B"}
    assert {r.label for r in canvas.scene_model.ridges} == expected
    assert set(canvas.ridge_labels()) <= expected | {"ridge 100 FLOP/B", "ridge 25 FLOP/B"}


def test_labels_one_per_operation(llama):
    canvas, workspace = llama
    labels = canvas.label_items()
    names = [e.operation.name for e in workspace.document.session.operations]
    texts = [text for _, text, _, _ in labels]
    # one text per operation; on this small canvas three of the four names find a clean
    # place, the fourth is told by a tag and a row of the legend's key
    assert len(texts) == len(set(texts)) == 4
    assert len(set(texts) & set(names)) >= 3
    for tag in set(texts) - set(names):
        assert tag.isdigit()
        assert [row for row in canvas.legend_texts() if row.startswith(f"{tag} — ")]
    drawn = positions(canvas)
    for op_id, _text, x, y in labels:  # anchored at the op's highest point
        top = max(pos for key, pos in drawn.items() if key[0] == op_id)
        assert (x, y) == approx_pos(*top)


def test_legend_lists_machines_and_operations(llama):
    """Operations named on the chart need no legend row: machines only; with the labels
    off the legend lists the operations as well."""
    canvas, workspace = llama
    session = workspace.document.session
    machines = [e.hardware.label for e in session.hardware]
    # (on this small canvas one name has no clean place: a tag by its point and a row of
    # the key name it)
    tagged = {text: op_id for op_id, text, _x, _y in canvas.label_items() if text.isdigit()}
    assert canvas.legend_texts() == machines + [
        f"{tag} — {workspace.document.operation(op_id).operation.name}"
        for tag, op_id in sorted(tagged.items())]
    workspace.document.set_view("labels", False)
    assert canvas.legend_texts() == machines + [e.operation.name for e in session.operations]


def test_axis_tick_labels_read_as_engineering_values(qtbot):  # qtbot: a QApplication
    rate = LogAxis("left", "rate")
    rate.range = [11.0, 16.0]
    assert rate.tickStrings([12.0, 14.0, 15.0, 14.30103], 1, 1) == [
        "1 TFLOP/s", "100 TFLOP/s", "1 PFLOP/s", ""]
    intensity = LogAxis("bottom", "intensity")
    intensity.range = [-1.0, 5.0]
    assert intensity.tickStrings([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 1, 1) == [
        "0.1", "1", "10", "100", "1000", "10⁴", "10⁵"]
    intensity.range = [1.0, 1.9]  # less than a decade: minor ticks get labels too
    assert intensity.tickStrings([1.0, math.log10(20), math.log10(50)], 1, 1) == [
        "10", "20", "50"]


def test_an_axis_of_a_decade_labels_the_minor_ticks_that_have_room(qtbot):
    """A column-wide figure of 24 … 428 FLOP/byte (1.25 decades: every 2 … 9 tick may be
    labelled) ran "50 60 70 80 90" into one another and "90" into "100". On a short axis the
    labels kept are those clear of the decade's and of each other's; on a long one, all."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QFontMetricsF

    axis = LogAxis("bottom", "intensity")
    axis.range = [math.log10(24), math.log10(428)]
    minor = [math.log10(v) for v in (30, 40, 50, 60, 70, 80, 90, 200, 300, 400)]
    axis.setGeometry(QRectF(0, 0, 3000, 30))
    assert all(axis.tickStrings(minor, 1, 1))  # (room for every one)
    axis.setGeometry(QRectF(0, 0, 300, 30))
    shown = [(v, t) for v, t in zip(minor, axis.tickStrings(minor, 1, 1), strict=True) if t]
    assert "90" not in [t for _v, t in shown]  # (beside "100", labelled a level above)
    assert [t for _v, t in shown][:1] == ["30"] and len(shown) >= 3
    metrics = QFontMetricsF(axis.style.get("tickFont") or axis.font())
    span, length = axis.range[1] - axis.range[0], 300.0
    placed = sorted([(v, t) for v, t in shown] + [(2.0, "100")])
    for (a, ta), (b, tb) in itertools.pairwise(placed):
        gap = (b - a) / span * length
        assert gap >= (metrics.horizontalAdvance(ta) + metrics.horizontalAdvance(tb)) / 2, (
            ta, tb)


def test_an_axis_of_few_decades_keeps_its_decades_a_level_above_the_rest(qtbot):
    """Over less than about two decades pyqtgraph gives one level of every 1 … 9 times a
    decade: a decade's grid line was as faint as 3 × its, its tick as short (the sharded
    example's sweep plot: "100 TFLOP/s" and 90 alike). The decades are a level of their own
    above the rest, each tick once."""
    rate = LogAxis("left", "rate")
    rate.setLogMode(True)  # (as the chart's and the sweep plot's are)
    lo, hi = math.log10(17e12), math.log10(330e12)  # 1.29 decades: 10¹⁴ within
    levels = rate.tickValues(lo, hi, 400)
    assert levels[0][1] == [14.0], levels
    rest = [v for _spacing, values in levels[1:] for v in values]
    assert 14.0 not in rest
    # (2, 3 … 9 × 10¹³ from 17 TFLOP/s, then 2 and 3 × 10¹⁴)
    assert sorted(round(10 ** v / 1e12) for v in rest) == [20, 30, 40, 50, 60, 70, 80, 90,
                                                           200, 300]
    wide = rate.tickValues(11.0, 16.0, 400)  # (five decades: pyqtgraph's own levels)
    assert wide[0][0] >= 1.0 and 14.0 in wide[0][1]


# --------------------------------------------------------------------------------------
# following edits


def roomy(canvas):
    """The canvas at a laptop's window size: room for every label of the example."""
    canvas.resize(1366, 768)
    QApplication.processEvents()
    canvas.relayout()


def test_edit_moves_only_that_operation_and_undo_moves_it_back(llama):
    canvas, workspace = llama
    roomy(canvas)
    document = workspace.document
    gemv = op_named(workspace, "FFN up, decode GEMV")
    before = positions(canvas)
    items_before = [id(item) for item in canvas.plot_widget.getPlotItem().getViewBox()
                    .addedItems]

    document.set_param(gemv, "m", 16)
    QApplication.processEvents()
    after = positions(canvas)

    intensity = gemm_intensity(16, 28672, 8192)  # ≈ 16 FLOP/byte: memory-bound everywhere
    for entry in document.session.hardware:
        hw = entry.hardware
        assert after[(gemv, entry.id)] == approx_pos(intensity, intensity * hw.bandwidth())
    moved = {key for key in before if before[key] != after[key]}
    assert moved == {(gemv, e.id) for e in document.session.hardware}
    # no items were created or destroyed for the edit
    assert [id(item) for item in canvas.plot_widget.getPlotItem().getViewBox()
            .addedItems] == items_before
    # the label followed its point: it names the highest of them, and its text sits next to
    # that point on screen
    label = next(lab for lab in canvas.label_items() if lab[0] == gemv)
    top = max(p for k, p in after.items() if k[0] == gemv)
    assert (label[2], label[3]) == approx_pos(*top)
    ((left, top_px, right, bottom),) = [box for kind, text, box in canvas.text_items()
                                        if kind == "point" and text == label[1]]
    pixel = canvas.plot_widget.mapToScene(canvas.pixel_of(*top))
    gap_x = max(left - pixel.x(), pixel.x() - right, 0.0)
    gap_y = max(top_px - pixel.y(), pixel.y() - bottom, 0.0)
    assert math.hypot(gap_x, gap_y) < 40

    document.undo()
    QApplication.processEvents()
    assert positions(canvas) == before


def test_edit_that_changes_precision_redraws_roofs(llama):
    canvas, workspace = llama
    gemv = op_named(workspace, "FFN up, decode GEMV")
    h100 = workspace.document.session.hardware[0].id
    assert {r[2] for r in canvas.roof_items() if r[0] == h100 and r[1] == "compute"} == {"bf16"}
    workspace.document.set_param(gemv, "dtype", "fp32")
    QApplication.processEvents()
    peaks = {r[2]: r[4][0] for r in canvas.roof_items() if r[0] == h100 and r[1] == "compute"}
    assert peaks == pytest.approx({"bf16": 989.4e12, "fp32": 67e12})
    x, y = positions(canvas)[(gemv, h100)]
    assert x == pytest.approx(gemm_intensity(1, 28672, 8192, 4.0))  # fp32: 4 bytes each
    assert y == pytest.approx(x * 3.35e12)


def test_hide_operation_removes_its_points_and_label(llama):
    canvas, workspace = llama
    gemv = op_named(workspace, "FFN up, decode GEMV")
    count = len(canvas.point_items())
    workspace.document.set_operation_field(gemv, "visible", False)
    QApplication.processEvents()
    drawn = positions(canvas)
    assert len(drawn) == count - 3
    assert not [key for key in drawn if key[0] == gemv]
    assert gemv not in [lab[0] for lab in canvas.label_items()]
    workspace.document.undo()
    assert len(canvas.point_items()) == count


def test_a_canvas_filled_while_hidden_places_its_labels_once_at_the_size_shown(qtbot):
    """A window is built and filled before it is shown: the labels are placed when it is
    first painted, for the size it is shown at, not at the size it had while hidden."""
    document = Document()
    workspace = Workspace(document)
    canvas = RooflineCanvas(workspace)
    qtbot.addWidget(canvas)
    widths = []
    place = canvas.layout_annotations

    def counting_place():
        widths.append(canvas.view_box.width())
        place()

    canvas.layout_annotations = counting_place
    document.replace_session(load_session(EXAMPLE_DIR / "llama_ffn.yaml"))
    assert widths == []
    canvas.resize(760, 560)
    canvas.show()
    qtbot.waitExposed(canvas)
    QApplication.processEvents()
    assert widths == [canvas.view_box.width()]
    assert not canvas.labels.scheduled
    # placed (those with a clean place at this size: three of the four)
    assert 3 <= len(canvas.label_items()) <= len(document.session.operations)


def test_legend_draws_each_row_with_its_sample_colour(llama):
    """The legend is painted by one item: each operation's row shows a disc in the colour of
    its points, to the left of the row's text, inside the legend's frame."""
    canvas, workspace = llama
    workspace.document.set_view("labels", False)  # the operations are in the legend then
    canvas.relayout()
    image = canvas.plot_widget.grab().toImage()
    legend = canvas.legend_item
    frame = canvas.plot_widget.mapFromScene(legend.sceneBoundingRect()).boundingRect()
    ratio = image.devicePixelRatio()
    entries = canvas.scene_model.legend
    assert [e.text for e in entries] == canvas.legend_texts()
    operations = [(row, e) for row, e in enumerate(entries) if e.kind == "operation"]
    assert len(operations) == len(workspace.document.session.operations)
    for row, entry in operations:
        x = frame.left() + legend.MARGIN + legend.SAMPLE / 2
        y = (frame.top() + legend.MARGIN
             + (row + 0.5) * (frame.height() - 2 * legend.MARGIN) / len(entries))
        pixel = image.pixelColor(int(x * ratio), int(y * ratio))
        wanted = QColor(canvas.theme.point_color(entry.color))
        # the disc's middle: its colour, give or take antialiasing at a pixel's edge
        assert max(abs(pixel.red() - wanted.red()), abs(pixel.green() - wanted.green()),
                   abs(pixel.blue() - wanted.blue())) <= 16, (entry.text, pixel.name())


def test_legend_can_be_dragged_and_stays_inside_on_resize(llama):
    from PySide6.QtCore import QEvent, QPointF
    from PySide6.QtGui import QMouseEvent

    canvas, _ = llama
    legend = canvas.legend_item
    view = canvas.plot_widget.viewport()
    start = canvas.plot_widget.mapFromScene(legend.sceneBoundingRect().center())
    before = legend.sceneBoundingRect().topLeft()

    def send(kind, pos, button, buttons):
        event = QMouseEvent(kind, QPointF(pos), QPointF(view.mapToGlobal(pos)), button, buttons,
                            Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(view, event)

    left, none = Qt.MouseButton.LeftButton, Qt.MouseButton.NoButton
    send(QEvent.Type.MouseButtonPress, start, left, left)
    for step in range(1, 11):
        send(QEvent.Type.MouseMove, start + QPoint(6 * step, 4 * step), none, left)
    send(QEvent.Type.MouseButtonRelease, start + QPoint(60, 40), left, none)
    after = legend.sceneBoundingRect().topLeft()
    assert (after.x() - before.x(), after.y() - before.y()) == pytest.approx((60, 40), abs=1.5)
    canvas.resize(640, 460)  # it keeps its relative place, inside the plot
    QApplication.processEvents()
    plot_area = canvas.plot_widget.getPlotItem().getViewBox().sceneBoundingRect()
    assert plot_area.contains(legend.sceneBoundingRect())


def test_rename_updates_label_and_legend(llama):
    canvas, workspace = llama
    roomy(canvas)
    gemv = op_named(workspace, "FFN up, decode GEMV")
    workspace.document.set_operation_field(gemv, "name", "GEMV, batch 1")
    QApplication.processEvents()
    assert "GEMV, batch 1" in [lab[1] for lab in canvas.label_items()]
    workspace.document.set_view("labels", False)
    assert "GEMV, batch 1" in canvas.legend_texts()
    assert "FFN up, decode GEMV" not in canvas.legend_texts()


def test_adding_a_preset_machine_draws_its_roofs_and_points(llama):
    canvas, workspace = llama
    hw_id = workspace.document.add_machine(get_preset("h200"), preset="h200")
    QApplication.processEvents()
    mine = [r for r in canvas.roof_items() if r[0] == hw_id]
    # main memory only: no operation is measured across the H200's (measured) L2
    (memory,) = [r for r in mine if r[1] == "memory"]
    assert memory[2] == "hbm"
    assert memory[4][0] / memory[3][0] == pytest.approx(4.8e12)
    assert [r[4][0] for r in mine if r[1] == "compute"] == pytest.approx([989.4e12])
    assert len([key for key in positions(canvas) if key[1] == hw_id]) == 4
    # 989.4 / 4.8
    assert "H200 SXM 141GB: ridge 206 FLOP/B" in [r.label for r in canvas.scene_model.ridges]


def test_removing_a_machine_removes_its_roofs(llama):
    canvas, workspace = llama
    tpu = workspace.document.session.hardware[2].id
    workspace.document.remove_machine(tpu)
    QApplication.processEvents()
    assert not [r for r in canvas.roof_items() if r[0] == tpu]
    assert not [key for key in positions(canvas) if key[1] == tpu]
    assert "ridge 241 FLOP/B" not in canvas.ridge_labels()


# --------------------------------------------------------------------------------------
# mouse


def test_click_on_a_point_selects_its_operation(qtbot, llama):
    canvas, workspace = llama
    target = op_named(workspace, "Attention QKᵀ, 4K context")
    tpu = workspace.document.session.hardware[2].id
    x, y = positions(canvas)[(target, tpu)]
    assert workspace.selection.current != target
    qtbot.mouseClick(canvas.plot_widget.viewport(), Qt.MouseButton.LeftButton,
                     pos=canvas.pixel_of(x, y))
    assert workspace.selection.current == target
    rings = sorted(canvas.selected_points())
    expected = sorted(p for k, p in positions(canvas).items() if k[0] == target)
    assert len(rings) == len(expected) == 3
    for ring, point in zip(rings, expected, strict=True):
        assert ring == approx_pos(*point)


def test_click_on_empty_space_keeps_selection(qtbot, llama):
    canvas, workspace = llama
    first = workspace.document.session.operations[0].id
    workspace.selection.select(first)
    qtbot.mouseClick(canvas.plot_widget.viewport(), Qt.MouseButton.LeftButton,
                     pos=canvas.pixel_of(0.2, 1e15))
    assert workspace.selection.current == first


def test_a_hovered_points_tooltip_says_an_edit_where_it_is(qtbot, llama):
    """An edit of the hovered operation that leaves its point where it is (a rename): the
    tip shown says the new text and stays while the pointer rests; it neither keeps the old
    text nor goes away until the pointer moves off and back."""
    canvas, workspace = llama
    gemv = op_named(workspace, "FFN up, decode GEMV")
    h100 = workspace.document.session.hardware[0].id
    x, y = positions(canvas)[(gemv, h100)]
    viewport = canvas.plot_widget.viewport()
    qtbot.mouseMove(viewport, QPoint(2, 2))
    qtbot.wait(40)
    qtbot.mouseMove(viewport, canvas.pixel_of(x, y))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and "decode GEMV" in QToolTip.text(),
                    timeout=HANG_GUARD_S * 1000)
    workspace.document.set_operation_field(gemv, "name", "GEMV, renamed")
    qtbot.waitUntil(lambda: canvas.hover_text().startswith("GEMV, renamed"),
                    timeout=HANG_GUARD_S * 1000)
    assert QToolTip.isVisible() and QToolTip.text() == canvas.hover_text()
    rest_pointer(viewport, canvas.pixel_of(x, y))
    qtbot.wait(500)  # (a tip told to hide goes after 300 ms)
    assert QToolTip.isVisible() and QToolTip.text().startswith("GEMV, renamed")
    QToolTip.hideText()


def test_hover_shows_tooltip_and_cursor_text(qtbot, llama):
    canvas, workspace = llama
    gemv = op_named(workspace, "FFN up, decode GEMV")
    h100 = workspace.document.session.hardware[0].id
    x, y = positions(canvas)[(gemv, h100)]
    # start from elsewhere: a move to where the pointer already is (left there by another
    # test) sends no event
    qtbot.mouseMove(canvas.plot_widget.viewport(), QPoint(2, 2))
    qtbot.wait(40)
    with qtbot.waitSignal(canvas.cursor_text, timeout=HANG_GUARD_S * 1000) as signal:
        qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(x, y))
    tip = canvas.hover_text()
    assert tip.splitlines()[:2] == ["FFN up, decode GEMV", "on NVIDIA H100 SXM5 80GB"]
    assert "Bound: memory" in tip
    # on the roof, not above it, though the cursor is rounded to a pixel
    assert "memory-bound on NVIDIA H100 SXM5 80GB" in signal.args[0]
    # the pointer rests: Qt asks for a tooltip (a second on), and the scene, whose items
    # have none, hid the tip being read; it stays
    qtbot.waitUntil(QToolTip.isVisible, timeout=HANG_GUARD_S * 1000)
    rest_pointer(canvas.plot_widget.viewport(), canvas.pixel_of(x, y))
    qtbot.wait(500)  # (a tip told to hide goes after 300 ms)
    assert QToolTip.isVisible() and QToolTip.text() == tip

    # under the H100's roof at I = 10 (its roof there is 33.5 TFLOP/s; the A100's 20.4,
    # the TPU v5e's 8.19: above that one) …
    with qtbot.waitSignal(canvas.cursor_text, timeout=HANG_GUARD_S * 1000) as signal:
        qtbot.wait(40)  # pyqtgraph drops mouse moves closer than a frame apart
        qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(10.0, 1e13))
    # (off the point: its tip hides, out of the way)
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=HANG_GUARD_S * 1000)
    text = signal.args[0]
    assert text.startswith("I = ") and "FLOP/B, " in text and "TFLOP/s — " in text
    assert text.endswith("— memory-bound on NVIDIA H100 SXM5 80GB, NVIDIA A100 SXM4 80GB; "
                         "above the roof of Google Cloud TPU v5e (per chip)"), text
    assert canvas.hover_text() == ""
    # … right of its ridge (295; the A100's is 153, the TPU's 240) …
    with qtbot.waitSignal(canvas.cursor_text, timeout=HANG_GUARD_S * 1000) as signal:
        qtbot.wait(40)
        qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(2000.0, 1e13))
    assert signal.args[0].endswith("— compute-bound on NVIDIA H100 SXM5 80GB, NVIDIA A100 "
                                   "SXM4 80GB, Google Cloud TPU v5e (per chip)")
    # … and above it
    with qtbot.waitSignal(canvas.cursor_text, timeout=HANG_GUARD_S * 1000) as signal:
        qtbot.wait(40)
        qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(1.0, 1e15))
    assert signal.args[0].endswith("— above the roof of NVIDIA H100 SXM5 80GB, NVIDIA A100 "
                                   "SXM4 80GB, Google Cloud TPU v5e (per chip)")


def test_fit_to_data_after_zoom(llama):
    canvas, _ = llama
    canvas.set_view_range((10, 20), (1e13, 2e13))
    (x0, x1), _ = canvas.view_range()
    assert x1 < 100
    canvas.fit_to_data()
    (x0, x1), (y0, y1) = canvas.view_range()
    assert all(x0 < x < x1 and y0 < y < y1 for _, _, x, y in canvas.point_items())


# --------------------------------------------------------------------------------------
# view settings


def test_view_toggles_change_what_is_drawn(llama):
    canvas, workspace = llama
    document = workspace.document

    assert canvas.legend_texts()
    document.set_view("legend", False)
    assert canvas.legend_texts() == []

    assert len(canvas.label_items()) == 4
    document.set_view("labels", False)
    assert canvas.label_items() == []

    assert canvas.region_items() == []
    document.set_view("regions", True)
    assert sorted(canvas.region_items()) == [("compute", "compute-bound"),
                                             ("memory", "memory-bound")]

    assert not [r for r in canvas.roof_items() if r[1].startswith("derated")]
    document.set_view("derated", True)
    derated = {(r[0], r[1]): r[4][-1] for r in canvas.roof_items() if r[1].startswith("derated")}
    h100, a100, tpu = (e.id for e in document.session.hardware)
    assert derated[(h100, "derated compute")] == pytest.approx(0.78 * 989.4e12)
    assert derated[(a100, "derated compute")] == pytest.approx(0.78 * 312e12)
    assert derated[(tpu, "derated compute")] == pytest.approx(0.9 * 197e12)
    assert derated[(tpu, "derated memory")] == pytest.approx(0.9 * 197e12)  # meets at the top


def test_theme_switch_changes_background(llama):
    canvas, workspace = llama
    assert canvas.background_color() == "#ffffff"
    workspace.document.set_view("theme", "dark")
    assert canvas.background_color() == "#16181d"
    workspace.document.set_view("theme", "presentation")
    assert canvas.background_color() == "#ffffff"
    assert canvas.theme.point_size > 11


def test_too_many_labels_are_skipped_and_said_so(qtbot):
    session = Session(title="many")
    session.hardware.append(HardwareEntry(get_preset("teaching-machine")))
    for i in range(201):
        op = new_operation("custom", f"op {i}")
        op.params.update(flops=1e12 * (i + 1), bytes=1e11)
        session.operations.append(OperationEntry(op))
    canvas, _ = open_canvas(qtbot, session)
    assert canvas.label_items() == []
    assert any("labels off" in text for text in canvas.legend_texts())
    assert len(canvas.point_items()) == 201


def test_empty_session(qtbot):
    canvas, workspace = open_canvas(qtbot, Session())
    assert canvas.point_items() == [] and canvas.roof_items() == []
    workspace.document.add_machine(get_preset("teaching-machine"), preset="teaching-machine")
    assert [r[1] for r in canvas.roof_items()] == ["memory", "compute"]
    assert canvas.ridge_labels() == ["ridge 100 FLOP/B"]


def test_export_mode_paints_vectors(llama, tmp_path):
    """Inside export_mode nothing is painted from a pixmap cache (axes, labels, symbols)."""
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    canvas, workspace = llama
    workspace.selection.select(workspace.document.session.operations[0].id)

    def render(path: Path) -> str:
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(760, 560))
        generator.setViewBox(QRectF(0, 0, 760, 560))
        painter = QPainter(generator)
        canvas.plot_widget.scene().render(painter, QRectF(0, 0, 760, 560),
                                          canvas.plot_widget.sceneRect())
        painter.end()
        return path.read_text()

    assert "<image" in render(tmp_path / "screen.svg")  # on screen: cached pixmaps
    canvas.relayout()
    assert len(canvas.selected_points()) == 3
    with canvas.export_mode():
        assert canvas.selected_points() == []  # a figure shows no selection …
        svg = render(tmp_path / "figure.svg")
    assert "<image" not in svg
    shown = canvas.ridge_labels() + canvas.roof_labels()
    assert shown and all(text in svg for text in shown) and "1 PFLOP/s" in svg  # text stays text
    assert len(canvas.selected_points()) == 3  # … and the rings are back afterwards


def test_workspace_outlives_the_canvas(qtbot):
    """Edits after the canvas is gone (disposed, or its widget deleted) reach nothing."""
    from PySide6.QtCore import QCoreApplication, QEvent

    session = load_session(EXAMPLE_DIR / "llama_ffn.yaml")
    document = Document()
    document.replace_session(session)
    workspace = Workspace(document)
    first = RooflineCanvas(workspace)
    first.dispose()
    assert first.point_items() == [] and first.roof_items() == []
    second = RooflineCanvas(workspace)
    second.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    op = session.operations[0].id
    document.set_param(op, "m", 128)  # would raise in a dead canvas's handler
    document.set_view("regions", True)
    assert first.point_items() == []
    # a fresh canvas on the same workspace draws the edited point
    third = RooflineCanvas(workspace)
    qtbot.addWidget(third)
    x, _y = next((x, y) for o, _h, x, y in third.point_items() if o == op)
    assert x == pytest.approx(2 * 128 * 28672 * 8192 / (2 * (128 * 8192 + 8192 * 28672
                                                               + 128 * 28672)))


def _settled(qtbot) -> None:
    qtbot.wait(120)  # the label layout runs on a short timer after an edit
    QApplication.processEvents()




def test_an_edit_repaints_a_small_area_and_leaves_no_trace(qtbot, llama):
    """An edit repaints the moved points' neighbourhoods, not the chart; and what is then on
    screen (the window's backing store) is what a full repaint draws: no remnant of a point,
    ring or label at its old place (the edges of a smoothed line may be shaded a few levels
    otherwise: see SHADING)."""
    canvas, workspace = llama
    document = workspace.document
    gemv = op_named(workspace, "FFN up, decode GEMV")
    workspace.selection.select(gemv)
    _settled(qtbot)
    viewport = canvas.plot_widget.viewport()
    painted = paint_regions(viewport)
    screen = QApplication.primaryScreen()
    for m in (2, 4, 3, 1):  # a few rows of the GEMV: its points move but stay in view
        painted.clear()
        document.set_param(gemv, "m", m)
        QApplication.processEvents()
        assert painted, "the edit was not painted"
        assert (sum(r.width() * r.height() for r in painted[0])
                < 0.25 * viewport.width() * viewport.height())
        _settled(qtbot)
        shown = screen.grabWindow(canvas.winId()).toImage()
        full = canvas.grab().toImage()
        assert largest_difference(shown.convertToFormat(full.format()), full) <= SHADING, (
            f"m={m}: stale pixels on screen")


def test_chart_shows_two_axes_whose_titles_keep_their_units(qtbot):
    """Only the left and bottom axes are drawn; their titles name the quantity and unit and
    carry no automatic SI prefix (the tick labels have their own)."""
    canvas, _workspace = open_canvas(qtbot, EXAMPLE_DIR / "llama_ffn.yaml")
    plot = canvas.plot_widget.getPlotItem()
    shown = {name for name in ("left", "bottom", "top", "right")
             if plot.getAxis(name).isVisible()}
    assert shown == {"left", "bottom"}
    bottom, left = plot.getAxis("bottom"), plot.getAxis("left")
    titles = (bottom.label.toPlainText(), left.label.toPlainText())
    canvas.set_view_range((1e-3, 1e7), (1e6, 1e18))  # a range pyqtgraph would prefix
    QApplication.processEvents()
    assert (bottom.label.toPlainText(), left.label.toPlainText()) == titles
    assert "FLOP/byte" in titles[0] and "FLOP/s" in titles[1]


def test_point_labels_stay_inside_the_plot(qtbot):
    """The prefill point of the Llama example sits near the plot's right edge: its name is
    moved back inside rather than cut by the plot's edge, and so is every other label."""
    canvas, _workspace = open_canvas(qtbot, EXAMPLE_DIR / "llama_ffn.yaml")
    canvas.resize(760, 650)  # a size at which the nearest places for it all run outside
    QApplication.processEvents()
    canvas.relayout()
    qtbot.wait(50)  # and any re-layout the canvas schedules
    view = canvas.view_box.sceneBoundingRect().adjusted(-1, -1, 1, 1)
    labels = canvas.labels.point_labels
    assert len(labels) >= 4
    for label in labels.values():
        text = label.textItem
        inner = text.mapRectToScene(text.boundingRect()).adjusted(4, 4, -4, -4)  # its margin
        assert view.contains(inner), (text.toPlainText(), inner, view)


def test_all_memory_roofs_view_draws_the_cache_levels_too(llama):
    canvas, workspace = llama
    hw_id = workspace.document.add_machine(get_preset("h200"), preset="h200")
    QApplication.processEvents()
    workspace.document.set_view("all_levels", True)
    QApplication.processEvents()
    levels = {r[2]: r for r in canvas.roof_items() if r[0] == hw_id and r[1] == "memory"}
    assert set(levels) == {"hbm", "l2", "l1"}
    assert levels["l2"][4][0] / levels["l2"][3][0] == pytest.approx(9.8e12)
    assert levels["l1"][4][0] / levels["l1"][3][0] == pytest.approx(32.9e12)
    workspace.document.undo()
    QApplication.processEvents()
    assert [r[2] for r in canvas.roof_items() if r[0] == hw_id and r[1] == "memory"] == ["hbm"]


def test_all_memory_roofs_leave_a_models_names_their_place(qtbot):
    """View ▸ All Memory Roofs on a whole model: the caches' thin lines run just above the
    memory-bound points, where their names sat. No text goes on those lines, but a name may
    sit beyond them on a leader: turning the view on kept only two of five names."""
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "llama31_8b_inference.yaml")
    canvas.resize(1366, 768)  # (smaller, the key takes room from the names: tags)
    QApplication.processEvents()
    canvas.relayout()

    def names():  # (not the tags: "3", "A2, B2")
        return [item for item in canvas.label_items()
                if not re.fullmatch(r"[A-Z0-9,\s]+", item[1])]

    before = len(names())
    workspace.document.set_view("all_levels", True)
    QApplication.processEvents()
    canvas.relayout()
    roofs = {r[2] for r in canvas.roof_items() if r[1] == "memory"}
    assert {"l2", "infinity_cache"} <= roofs  # the caches are drawn
    after = canvas.label_items()
    assert before >= 4 and len(names()) >= before - 1, (before, after)
    # and none of them sits on a line: no roof, cache levels included, runs through a name
    boxes = [box for kind, _text, box in canvas.text_items() if kind == "point"]
    assert len(boxes) == len(after)
    for _hw, _kind, name, xs, ys in canvas.roof_items():
        for t in np.linspace(0.0, 1.0, 400):
            # along the roof in log space, as drawn
            x = xs[0] ** (1 - t) * xs[1] ** t
            y = ys[0] ** (1 - t) * ys[1] ** t
            p = canvas.pixel_of(x, y)
            px, py = p.x(), p.y()
            assert not any(b[0] + 1 < px < b[2] - 1 and b[1] + 1 < py < b[3] - 1
                           for b in boxes), (name, x, y)
