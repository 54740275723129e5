"""A sweep's ridge crossing is a number a reader compares with the tables: beyond four
digits it was printed in exponent notation ("d* = 2.627e4" in the sharded-matmul example,
whose 4-chip ring turns compute-bound near D = 26267) where the rest of the product writes
whole numbers whole. On screen, in the figure's texts and in the tooltip it reads as the
tables write it."""

from __future__ import annotations

import re

from conftest import EXAMPLES

from workbench.model.sweeps import sweep_crossings

SHARDED = next(p for p in EXAMPLES if p.name == "sharded_matmul.yaml")
CRITICAL_BATCH = next(p for p in EXAMPLES if p.name == "critical_batch_sweep.yaml")


def _exact_crossings(win) -> dict[tuple[int, int], list[float]]:
    session = win.document.session
    return {(op.id, hw.id): [c.value for c in sweep_crossings(op.operation, hw.hardware,
                                                                 op.sweep)]
            for op in session.operations if op.sweep is not None
            for hw in session.hardware}


def test_a_crossing_beyond_ten_thousand_reads_as_a_whole_number(open_window, qtbot):
    win = open_window(SHARDED, size=(1920, 1080))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    exact = _exact_crossings(win)
    marked = canvas.crossing_items()
    assert len(marked) == 2
    big = 0
    for op, hw, label, _x, _y in marked:
        match = re.fullmatch(r"d\* = (\d+(?:\.\d+)?)", label)
        assert match, label  # digits only: no exponent, no unit
        (value,) = exact[(op, hw)]
        shown = float(match.group(1))
        if value >= 1e4:  # whole numbers whole, as the tables write counts
            big += 1
            assert "." not in match.group(1) and abs(shown - value) <= 0.5, (label, value)
        else:  # four significant figures
            assert abs(shown - value) <= 0.5, (label, value)
    assert big == 1  # the 4-chip ring: D ≈ 26267
    shown_texts = [text for kind, text, _box in canvas.text_items() if kind == "crossing"]
    assert shown_texts and not any("e" in t.split("=")[-1] for t in shown_texts), shown_texts
    # its tooltip says the same number to six figures, also without an exponent
    tips = [c.tooltip.split("\n")[1] for path in canvas.scene_model.sweeps
            for c in path.crossings]
    assert len(tips) == 2 and all(re.fullmatch(r"Crosses the ridge at d = [\d.]+ \(exact\)", t)
                                  for t in tips), tips


def test_small_crossings_and_sweep_ends_read_as_before(open_window, qtbot):
    win = open_window(CRITICAL_BATCH, size=(1920, 1080))
    canvas = win.canvas
    exact = _exact_crossings(win)
    labels = {(op, hw): label for op, hw, label, _x, _y in canvas.crossing_items()}
    for key, (value,) in exact.items():
        match = re.fullmatch(r"(?:[^:]+: )?m\* = (\d+\.\d)", labels[key])
        assert match and abs(float(match.group(1)) - value) <= 0.05, (labels[key], value)
    ends = {text for _op, _hw, text, _x, _y in canvas.sweep_labels()}
    assert {"m = 1", "m = 4096"} <= ends
