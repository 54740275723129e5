"""A sweep's end values ("m = 4096") and its ridge crossings ("m* = 318.3") are drawn on
the live chart as in figures: where the roofs' texts crowd them, farther off with a leader
(on a laptop's screen they were never drawn)."""

from __future__ import annotations

from conftest import EXAMPLES

CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


def test_the_critical_batch_sweeps_say_their_ends_and_crossings(open_window, qtbot):
    win = open_window(CRITICAL_BATCH, size=(1366, 768))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    machines = {hw.id: hw.hardware.label for hw in win.document.session.hardware}
    assert len(machines) == 2
    shown = {(hw, text) for _op, hw, text, _x, _y in canvas.sweep_labels()}
    # the batch m runs from 1 to 4096 on both machines: each machine's path says both ends
    for hw in machines:
        assert {(hw, "m = 1"), (hw, "m = 4096")} <= shown, (machines[hw], shown)
    texts = "\n".join(text for kind, text, _box in canvas.text_items() if kind == "crossing")
    # a bf16 matmul m × 8192 × 8192 has I = 2·m·D·F / (2·(m·D + D·F + m·F))
    # = 8192·m / (2·m + 8192); the H100's ridge is 989.4 TFLOP/s / 3.35 TB/s = 295.3 FLOP/B,
    # reached at m* = 295.3·8192 / (8192 − 2·295.3) = 318.3; with int8 weights
    # I = 16384·m / (4·m + 8192): m* = 295.3·8192 / (16384 − 4·295.3) = 159.1. The TPU v5e's
    # ridge, 197 / 0.819 = 240.5 FLOP/B: m* = 255.5 and 127.8
    for crossing in ("H100 SXM5 80GB: m* = 318.3", "H100 SXM5 80GB: m* = 159.1",
                     "TPU v5e: m* = 255.5", "TPU v5e: m* = 127.8"):
        assert crossing in texts, texts
