"""Sweeps, measured points and compared pairs on the live chart, and the sweep plot.

Expected numbers are worked out here from the roofline formulas (a bf16 GEMM's intensity,
the ridge, the fraction T_lower / t), never read from the code under test.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import HANG_GUARD_S
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.ui.test_canvas import op_named, open_canvas, positions
from workbench.document import Document
from workbench.io.sessions import load_session
from workbench.model.measured import Measurement
from workbench.model.sweeps import Sweep, log
from workbench.ui.bridge import Workspace
from workbench.ui.panels.sweep_plot import SweepPlot
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "workbench" / "examples"

# the two machines of critical_batch_sweep.yaml (their presets' datasheet figures)
TPU_PEAK, TPU_BW = 197e12, 819e9
H100_PEAK, H100_BW = 989.4e12, 3.35e12
D = 8192  # n = k of the swept GEMM


def bf16_intensity(m: float, n: int = D, k: int = D) -> float:
    """2·m·n·k FLOPs over 2·(m·k + k·n + m·n) bytes."""
    return 2 * m * n * k / (2 * (m * k + k * n + m * n))


def critical_m(peak: float, bw: float, n: int = D, k: int = D) -> float:
    """Solve m·n·k / (m·k + k·n + m·n) = peak / bw for m."""
    ridge = peak / bw
    return ridge * k * n / (n * k - ridge * (k + n))


def four_figures(value: float) -> str:
    return f"{value:.4g}"


def sweep_session(keep_int8: bool = False):
    """critical_batch_sweep.yaml with no sweeps (the tests add them)."""
    session = load_session(EXAMPLE_DIR / "critical_batch_sweep.yaml")
    if not keep_int8:
        session.operations = session.operations[:1]
    for entry in session.operations:
        entry.sweep = None
    return session


def machine_ids(workspace):
    tpu, h100 = (e.id for e in workspace.document.session.hardware)
    return tpu, h100


# --------------------------------------------------------------------------------------
# sweeps on the chart


def test_set_sweep_draws_the_path_with_end_labels_and_exact_crossings(qtbot):
    canvas, workspace = open_canvas(qtbot, sweep_session())
    document = workspace.document
    op = document.session.operations[0].id
    tpu, h100 = machine_ids(workspace)
    assert canvas.sweep_items() == [] and canvas.crossing_items() == []

    document.set_sweep(op, Sweep("m", log(1, 4096, 13)))

    paths = {(o, hw): (xs, ys) for o, hw, xs, ys in canvas.sweep_items()}
    assert set(paths) == {(op, tpu), (op, h100)}
    for hw, peak, bw in ((tpu, TPU_PEAK, TPU_BW), (h100, H100_PEAK, H100_BW)):
        xs, ys = paths[(op, hw)]
        m_star = critical_m(peak, bw)
        # every power of two from 1 to 4096, plus the crossing, in order of m
        ms = sorted([2.0**i for i in range(13)] + [m_star])
        assert xs == pytest.approx([bf16_intensity(m) for m in ms], rel=1e-9)
        assert ys == pytest.approx([min(peak, bf16_intensity(m) * bw) for m in ms], rel=1e-9)

    crossings = {(o, hw): (text, x, y) for o, hw, text, x, y in canvas.crossing_items()}
    assert set(crossings) == {(op, tpu), (op, h100)}
    for hw, peak, bw, shown, machine in ((tpu, TPU_PEAK, TPU_BW, "255.5", "TPU v5e"),
                                         (h100, H100_PEAK, H100_BW, "318.3", "H100 SXM5 80GB")):
        text, x, y = crossings[(op, hw)]
        assert four_figures(critical_m(peak, bw)) == shown  # the seed's numbers
        assert text == f"{machine}: m* = {shown}"  # two machines: whose crossing it is
        assert (x, y) == pytest.approx((peak / bw, peak), rel=1e-9)  # on the ridge corner

    # an end outside the view has no label (there is no place for it); fitted, both have
    # (on a chart with room for the crossings' labels, which name their machines)
    canvas.resize(1000, 700)
    canvas.fit_to_data()
    labels = sorted((hw, text) for o, hw, text, _x, _y in canvas.sweep_labels() if o == op)
    assert (tpu, "m = 1") in labels and (tpu, "m = 4096") in labels
    ends = {text: (x, y) for o, hw, text, x, y in canvas.sweep_labels() if hw == tpu}
    assert ends["m = 1"] == pytest.approx((bf16_intensity(1), bf16_intensity(1) * TPU_BW))
    assert ends["m = 4096"] == pytest.approx((bf16_intensity(4096), TPU_PEAK))

    document.undo()
    assert canvas.sweep_items() == [] and canvas.crossing_items() == []
    assert canvas.sweep_labels() == []
    document.redo()
    assert len(canvas.sweep_items()) == 2


def test_editing_a_swept_operation_moves_its_path_without_a_full_rebuild(qtbot, monkeypatch):
    canvas, workspace = open_canvas(qtbot, sweep_session())
    document = workspace.document
    op = document.session.operations[0].id
    tpu, _ = machine_ids(workspace)
    document.set_sweep(op, Sweep("m", [1, 64, 4096]))
    monkeypatch.setattr(canvas, "rebuild", lambda *a, **k: pytest.fail("full rebuild"))

    document.set_param(op, "n", 4096)

    m_star = critical_m(TPU_PEAK, TPU_BW, n=4096, k=D)
    (text,) = [t for o, hw, t, _x, _y in canvas.crossing_items() if hw == tpu]
    assert text == f"TPU v5e: m* = {four_figures(m_star)}"
    (xs,) = [xs for o, hw, xs, _ys in canvas.sweep_items() if hw == tpu]
    expected = sorted([1, 64, 4096, m_star])
    assert xs == pytest.approx([bf16_intensity(m, n=4096) for m in expected], rel=1e-9)
    # the operation's own point moved too (m = 128)
    assert positions(canvas)[(op, tpu)][0] == pytest.approx(bf16_intensity(128, n=4096))

    # a sweep that stays memory-bound has no crossing
    document.set_sweep(op, Sweep("m", [1, 2, 4]))
    assert [c for c in canvas.crossing_items() if c[1] == tpu] == []
    assert len(canvas.sweep_items()) == 2


def int8_intensity(m: float, n: int = D, k: int = D) -> float:
    """bf16 activations and output, int8 weights: 2·m·n·k FLOPs over 2·m·k + k·n + 2·m·n
    bytes."""
    return 2 * m * n * k / (2 * m * k + k * n + 2 * m * n)


def test_every_path_drawn_is_its_own_after_edits_and_removals(qtbot):
    """An edit redraws every sweep path, leaving the lines of the operations it did not
    touch as they were: each line still shows its own operation's path after an edit of
    the other, after that one is removed (its lines go to the other's paths) and after
    the removal is undone."""
    canvas, workspace = open_canvas(qtbot, sweep_session(keep_int8=True))
    document = workspace.document
    bf16, int8 = (e.id for e in document.session.operations)
    tpu, h100 = machine_ids(workspace)
    for op in (bf16, int8):
        document.set_sweep(op, Sweep("m", [1, 64, 4096]))

    def check(n_bf16: int, ops: set) -> None:
        drawn = {(o, hw): xs for o, hw, xs, _ys in canvas.sweep_items()}
        assert set(drawn) == {(o, hw) for o in ops for hw in (tpu, h100)}
        for (o, hw), xs in drawn.items():
            peak, bw = (TPU_PEAK, TPU_BW) if hw == tpu else (H100_PEAK, H100_BW)
            if o == bf16:
                ms = sorted([1, 64, 4096, critical_m(peak, bw, n=n_bf16)])
                want = [bf16_intensity(m, n=n_bf16) for m in ms]
            else:
                ridge = peak / bw  # int8 weights: m·(2n·k − 2r·k − 2r·n) = r·k·n
                ms = sorted([1, 64, 4096, ridge * D * D / (2 * D * D - 2 * ridge * 2 * D)])
                want = [int8_intensity(m) for m in ms]
            assert xs == pytest.approx(want, rel=1e-9), (o, hw)

    check(D, {bf16, int8})
    document.set_param(bf16, "n", 4096)
    check(4096, {bf16, int8})
    document.remove_operations([bf16])
    check(4096, {int8})
    document.undo()
    check(4096, {bf16, int8})
    document.set_param(bf16, "n", 2048)
    check(2048, {bf16, int8})


def test_hovering_a_crossing_explains_it(qtbot):
    canvas, workspace = open_canvas(qtbot, sweep_session())
    document = workspace.document
    op = document.session.operations[0].id
    document.set_sweep(op, Sweep("m", log(1, 4096, 13)))
    canvas.set_view_range((0.5, 5000), (1e11, 1e16))
    QApplication.processEvents()
    m_star = critical_m(TPU_PEAK, TPU_BW)
    qtbot.wait(40)
    qtbot.mouseMove(canvas.plot_widget.viewport(),
                    canvas.pixel_of(TPU_PEAK / TPU_BW, TPU_PEAK))
    qtbot.waitUntil(lambda: canvas.hover_text() != "", timeout=HANG_GUARD_S * 1000)
    tip = canvas.hover_text()
    assert tip.startswith("bf16 matmul, D = F = 8192 on Google Cloud TPU v5e")
    assert f"m = {m_star:.6g} (exact)" in tip
    assert f"Compute-bound from m = {math.ceil(m_star)}" in tip  # 256


def test_sweep_view_flag_hides_paths_and_follows_undo(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "critical_batch_sweep.yaml")
    document = workspace.document
    assert len(canvas.sweep_items()) == 4  # two swept operations on two machines
    # bf16 and int8-weight crossings: the int8 one is exactly half (the seed's 127.8, 159.1)
    # (each names its machine: two on the chart)
    texts = sorted(c.label.split(": ")[-1] for p in canvas.scene_model.sweeps
                   for c in p.crossings)
    half = [four_figures(critical_m(p, b) / 2) for p, b in ((TPU_PEAK, TPU_BW),
                                                            (H100_PEAK, H100_BW))]
    assert texts == sorted([f"m* = {v}" for v in ("255.5", "318.3", *half)])
    document.set_view("sweeps", False)
    assert canvas.sweep_items() == [] and canvas.crossing_items() == []
    document.undo()
    assert len(canvas.sweep_items()) == 4


# --------------------------------------------------------------------------------------
# measured points


FFN = (8192, 28672, 8192)


def gemm_counts(m, n, k):
    return 2 * m * n * k, 2 * (m * k + k * n + m * n)


def test_measured_points_are_linked_to_their_predictions(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "predicted_vs_measured.yaml")
    canvas.resize(1366, 768)  # room for every label (a label without a clean place is not drawn)
    QApplication.processEvents()
    canvas.relayout()
    (h100,) = (e.id for e in workspace.document.session.hardware)
    items = {m["name"]: m for m in canvas.measured_items()}
    assert set(items) == {"FFN up, cuBLAS", "attention QK, first try", "decode GEMV, warm cache",
                          "softmax_warp_forward"}
    drawn = positions(canvas)

    # verdicts against T_predicted (calibrated, kernels timed alone): 0.96 ×, 1.86 ×, 0.88 ×
    cases = (("FFN up, cuBLAS", "FFN up, training", FFN, 4.862e-3, "as predicted"),
             ("attention QK, first try", "attention QK, 4K", (4096, 4096, 128), 35.47e-6,
              "below prediction"),
             ("decode GEMV, warm cache", "decode GEMV", (1, 28672, 8192), 147.6e-6,
              "as predicted"))
    for name, op_name, shape, t, verdict in cases:
        flops, nbytes = gemm_counts(*shape)
        item = items[name]
        assert (item["x"], item["y"]) == pytest.approx((flops / nbytes, flops / t), rel=1e-9)
        # the link starts at the operation's own point (its prediction) and ends at the mark
        op_point = drawn[(op_named(workspace, op_name), h100)]
        (x0, x1), (y0, y1) = item["link"]
        assert (x0, y0) == pytest.approx(op_point, rel=1e-9)
        assert (x1, y1) == pytest.approx((item["x"], item["y"]), rel=1e-9)
        t_lower = max(flops / H100_PEAK, nbytes / H100_BW)
        pct = 100 * t_lower / t
        assert item["label"] == f"{pct:.0f} % · {verdict}"
        assert item["hw_id"] == h100

    # the standalone kernel is linked to a prediction from its own counts (fp32 on HBM)
    flops, nbytes, t = 20.97152e6, 33.55722e6, 11.84e-6
    soft = items["softmax_warp_forward"]
    assert soft["op_id"] is None
    (x0, _x1), (y0, _y1) = soft["link"]
    assert (x0, y0) == pytest.approx((flops / nbytes, flops / nbytes * H100_BW), rel=1e-9)
    assert soft["label"] == (f"softmax_warp_forward: {100 * nbytes / H100_BW / t:.1f} % · "
                             "as predicted")

    legend = canvas.legend_texts()  # plain text, as drawn
    assert "measured, as predicted (0.8–1.2 × predicted)" in legend
    assert "measured, below prediction (1.2–2 × predicted)" in legend


def test_hovering_a_measured_point_gives_fraction_and_verdict(qtbot):
    canvas, _workspace = open_canvas(qtbot, EXAMPLE_DIR / "predicted_vs_measured.yaml")
    item = next(m for m in canvas.measured_items() if m["name"] == "attention QK, first try")
    qtbot.wait(40)
    qtbot.mouseMove(canvas.plot_widget.viewport(), canvas.pixel_of(item["x"], item["y"]))
    qtbot.waitUntil(lambda: canvas.hover_text() != "", timeout=HANG_GUARD_S * 1000)
    tip = canvas.hover_text()
    _flops, nbytes = gemm_counts(4096, 4096, 128)
    pct = 100 * (nbytes / H100_BW) / 35.47e-6
    assert tip.startswith("Measured: attention QK, first try")
    assert f"Fraction of the predicted ceiling: {pct:.3g} %" in tip
    assert "Verdict: 1.2–2 × predicted: slower than predicted, room to improve" in tip


def test_measurement_edits_and_the_view_flag_redraw_the_marks(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "predicted_vs_measured.yaml")
    document = workspace.document
    measurements = document.session.measurements
    document.set_measurements(measurements[:1])
    assert [m["name"] for m in canvas.measured_items()] == ["FFN up, cuBLAS"]
    assert not any(t.startswith("measured, below prediction") for t in canvas.legend_texts())
    # a run at the roof itself: 0.77 × its calibrated prediction (T_math / 0.77 + 6.83 µs)
    # → re-measure
    flops, _ = gemm_counts(*FFN)
    document.set_measurements([Measurement("FFN, fast", operation="FFN up, training",
                                           hardware="h100-sxm", time_s=flops / H100_PEAK)])
    (item,) = canvas.measured_items()
    assert item["verdict"] == "re-measure" and item["label"] == "100 % · re-measure"
    document.undo()
    document.undo()
    assert len(canvas.measured_items()) == 4
    document.set_view("measured", False)
    assert canvas.measured_items() == []
    document.undo()
    assert len(canvas.measured_items()) == 4


def test_editing_an_operation_moves_its_measured_link(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "predicted_vs_measured.yaml")
    document = workspace.document
    op = op_named(workspace, "attention QK, 4K")
    document.set_param(op, "k", 256)
    flops, nbytes = gemm_counts(4096, 4096, 256)
    item = next(m for m in canvas.measured_items() if m["name"] == "attention QK, first try")
    (x0, _), (y0, _) = item["link"]
    intensity = flops / nbytes
    assert (x0, y0) == pytest.approx((intensity, min(H100_PEAK, intensity * H100_BW)))
    assert item["y"] == pytest.approx(flops / 35.47e-6)


# --------------------------------------------------------------------------------------
# compared pairs


def unfused_time(n: int) -> float:
    return 3 * 3.83e-6 + 28 * n / (0.87 * H100_BW)


def fused_time(n: int) -> float:
    return 3.83e-6 + 12 * n / (0.87 * H100_BW)


def test_pair_link_shows_bytes_saved_and_speedup_and_toggles(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "fusion.yaml")
    document = workspace.document
    (h100,) = (e.id for e in document.session.hardware)
    (pair,) = canvas.pair_items()
    assert (pair["first"], pair["second"], pair["hw_id"]) == (
        "gelu chain, unfused", "gelu chain, fused", h100)
    # 16M fp32 elements: 28 bytes each unfused in three kernels, 12 fused in one; both
    # memory-bound on the H100; calibrated, each kernel timed alone (3.83 µs launch,
    # streaming at 0.87 of 3.35 TB/s)
    n = 16777216
    saved = (28 - 12) * n
    speedup = unfused_time(n) / fused_time(n)
    assert pair["label"] == f"−{saved / 1e6:.0f} MB, {speedup:.3g}× faster" \
        == "−268 MB, 2.37× faster"
    drawn = positions(canvas)
    (xs, ys) = pair["link"]
    first = drawn[(op_named(workspace, "gelu chain, unfused"), h100)]
    second = drawn[(op_named(workspace, "gelu chain, fused"), h100)]
    assert (xs[0], ys[0]) == pytest.approx(first, rel=1e-6)
    assert (xs[-1], ys[-1]) == pytest.approx(second, rel=1e-6)

    document.set_view("pairs", False)
    assert canvas.pair_items() == []
    document.undo()
    assert len(canvas.pair_items()) == 1

    document.set_comparisons([])
    assert canvas.pair_items() == []
    document.undo()
    assert len(canvas.pair_items()) == 1


def test_a_pair_on_a_plot_of_no_height_keeps_its_arc(qtbot, monkeypatch):
    """A figure's plot has no height for a moment while its legend is laid out (the texts
    are placed then too): the pair's arc is not turned into view units through a scale of
    zero (NaN points, a numpy warning), it stays as drawn until the next placing."""
    import warnings

    canvas, _workspace = open_canvas(qtbot, EXAMPLE_DIR / "fusion.yaml")
    (before,) = canvas.pair_items()
    ax, bx, _ay, by = canvas.view_to_scene()
    monkeypatch.setattr(canvas, "view_to_scene", lambda: (ax, bx, -0.0, by))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        canvas.overlays.bend_links()
    (after,) = canvas.pair_items()
    assert after["link"] == before["link"]
    assert all(math.isfinite(v) for part in after["link"] for v in part)
    assert len(canvas.overlays.pair_apexes) == 1


def test_pair_label_follows_an_edit_of_either_side(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "fusion.yaml")
    document = workspace.document
    document.set_param(op_named(workspace, "gelu chain, fused"), "n", 8388608)
    (pair,) = canvas.pair_items()
    # fused now moves 12 bytes × 8M: saved 28 × 16M − 12 × 8M
    saved = 28 * 16777216 - 12 * 8388608
    speedup = unfused_time(16777216) / fused_time(8388608)
    assert pair["label"] == f"−{saved / 1e6:.0f} MB, {speedup:.3g}× faster" \
        == "−369 MB, 4.5× faster"


def test_naive_vs_flash_pairs_on_two_machines(qtbot):
    canvas, workspace = open_canvas(qtbot, EXAMPLE_DIR / "attention.yaml")
    canvas.resize(1366, 768)  # room for every label (a label without a clean place is not drawn)
    QApplication.processEvents()
    canvas.relayout()
    pairs = [p for p in canvas.pair_items() if p["first"] == "Prefill, naive"]
    assert len(pairs) == 2  # H100 and H200
    # the figures differ between the machines: said once, a line for each machine, named
    labels = [p["label"] for p in pairs if p["label"]]
    assert len(labels) == 1
    lines = labels[0].splitlines()
    assert [line.split(": ")[0] for line in lines] == ["H100 SXM5 80GB", "H200 SXM 141GB"]
    assert all(line.split(": ")[1].startswith("−") and line.endswith("× faster")
               for line in lines)
    # the same figures on both machines (MHA → GQA, derated: the bytes ratio on both):
    # once, for both, naming neither
    workspace.document.set_prediction(model="derated")
    canvas.relayout()
    (gqa,) = {p["label"] for p in canvas.pair_items() if p["first"].startswith("Decode, MHA")
              and p["label"]}
    assert gqa.startswith("−") and gqa.endswith("× faster") and ":" not in gqa


# --------------------------------------------------------------------------------------
# the main window: View menu toggles and the sweep plot dock


@pytest.fixture
def window(qtbot):
    create_app()
    win = MainWindow()
    win.open_path(EXAMPLE_DIR / "critical_batch_sweep.yaml")
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()
    win.deleteLater()


def test_view_menu_toggles_for_sweeps_measured_and_pairs(window):
    for key in ("sweeps", "measured", "pairs"):
        action = window.view_actions[key]
        assert action.isChecked()
        action.trigger()
        assert getattr(window.document.session.view, key) is False
        window.document.undo()
        assert getattr(window.document.session.view, key) is True
        assert action.isChecked()
    window.view_actions["sweeps"].trigger()
    assert window.canvas.sweep_items() == []
    window.document.undo()
    assert len(window.canvas.sweep_items()) == 4
    assert window.sweep_dock.toggleViewAction() in window.menuBar().actions()[2].menu().actions()


def test_sweep_plot_dock_follows_the_selection(window):
    plot = window.sweep_plot
    window.sweep_dock.show()
    window.sweep_dock.raise_()
    op = window.document.session.operations[0].id
    window.workspace.selection.select(op)
    assert not plot.is_empty()
    assert len(plot.curves()) == 2
    window.document.set_sweep(op, None)
    assert plot.is_empty() and "no sweep" in plot.empty_text()
    window.document.undo()
    assert not plot.is_empty()


def open_plot(qtbot, session):
    document = Document()
    document.replace_session(session)
    workspace = Workspace(document)
    plot = SweepPlot(workspace)
    qtbot.addWidget(plot)
    plot.resize(700, 400)
    plot.show()
    qtbot.waitExposed(plot)
    return plot, workspace


def test_sweep_plot_curves_and_crossing_markers(qtbot):
    plot, workspace = open_plot(qtbot, sweep_session())
    document = workspace.document
    op = document.session.operations[0].id
    tpu, h100 = machine_ids(workspace)
    workspace.selection.select(op)
    assert plot.is_empty()
    assert "no sweep" in plot.empty_text()

    document.set_sweep(op, Sweep("m", log(1, 4096, 13)))
    assert not plot.is_empty()
    curves = {hw: (xs, ys) for hw, _name, xs, ys in plot.curves()}
    assert set(curves) == {tpu, h100}
    for hw, peak, bw in ((tpu, TPU_PEAK, TPU_BW), (h100, H100_PEAK, H100_BW)):
        xs, ys = curves[hw]
        assert xs[0] == pytest.approx(1.0) and xs[-1] == pytest.approx(4096.0)
        assert ys == pytest.approx([min(peak, bf16_intensity(m) * bw) for m in xs], rel=1e-9)
        # the corner of the curve is at the exact crossing
        assert any(math.isclose(x, critical_m(peak, bw), rel_tol=1e-9) for x in xs)
    samples = {hw: (ms, ys) for hw, ms, ys in plot.samples()}
    assert samples[tpu][0] == pytest.approx([2.0**i for i in range(13)])

    markers = sorted(plot.crossing_markers(), key=lambda m: m[1])
    assert [hw for hw, _v, _t in markers] == [tpu, h100]
    for (_hw, value, text), (peak, bw) in zip(markers, ((TPU_PEAK, TPU_BW),
                                                        (H100_PEAK, H100_BW)), strict=True):
        assert value == pytest.approx(critical_m(peak, bw), rel=1e-9)
        assert text == f"m* = {four_figures(critical_m(peak, bw))}"

    plot.set_mode("time")
    samples = {hw: (ms, ts) for hw, ms, ts in plot.samples()}
    ms, ts = samples[tpu]
    for m, t in zip(ms, ts, strict=True):
        flops, nbytes = gemm_counts(m, D, D)
        assert t == pytest.approx(max(flops / TPU_PEAK, nbytes / TPU_BW), rel=1e-9)

    # an edit of the operation moves the crossing markers
    document.set_param(op, "k", 4096)
    values = sorted(v for _hw, v, _t in plot.crossing_markers())
    assert values[0] == pytest.approx(critical_m(TPU_PEAK, TPU_BW, n=D, k=4096), rel=1e-9)
