"""A ridge's leader never runs on along one of its own roofs: drawn left from the diamond at
the compute roof's height, it reads as that roof going on past the ridge (to the left, where
the machine's roof is the sloped memory line); drawn up along the memory roof's slope, as the
memory roof going on above the peak.

The case: the teaching example at 1024 × 700. The teaching machine's ridge (100 TFLOP/s over
1 TB/s = 100 FLOP/byte) sits where the plot's top is 10 px above the compute roof: the only
free row for "Teaching machine: ridge 100 FLOP/B" was left of the diamond, and it was led
there by a horizontal leader along the 100 TFLOP/s line, a roof from 0.1 to 100 FLOP/byte."""

from __future__ import annotations

import math

import numpy as np
from figures.figcheck import canvas_attribution, check_attribution

from workbench.io.presets import examples_dir
from workbench.model.chart.leader_places import ALONG_DEGREES, leaders_off
from workbench.ui.chart.axes import to_view


def _row(x0, y0, angle_deg, length=60.0):
    """A candidate row whose leader leaves (x0, y0) at ``angle_deg`` (screen: y down)."""
    a = math.radians(angle_deg)
    x1, y1 = x0 + length * math.cos(a), y0 - length * math.sin(a)
    return [x1 - 10.0, y1 - 5.0, x0, y0, x1, y1]


def test_leaders_along_a_direction_are_left_out():
    rows = np.array([_row(0, 0, 180.0), _row(0, 0, 180.0 - ALONG_DEGREES / 2),
                     _row(0, 0, 180.0 + 2 * ALONG_DEGREES), _row(0, 0, 90.0),
                     _row(0, 0, 40.0), [5.0, 5.0, np.nan, np.nan, np.nan, np.nan]])
    # left (screen: -x) and up along a 45° slope (screen: +x, -y)
    kept = leaders_off(rows, [(-1.0, 0.0), (1.0, -1.0)])
    # 180° and 176° run on left; 40° is 5° off the slope; 196°, straight up and the place
    # without a leader stay
    assert len(kept) == 3
    assert np.isnan(kept[-1, 2])
    angles = sorted(round(math.degrees(math.atan2(-(r[5] - r[3]), r[4] - r[2])) % 360)
                    for r in kept[:2])
    assert angles == [90, round(180.0 + 2 * ALONG_DEGREES)]


def test_nothing_to_leave_out_keeps_every_place():
    rows = np.array([_row(0, 0, 90.0), _row(0, 0, 270.0)])
    assert leaders_off(rows, [(-1.0, 0.0)]) is rows
    assert leaders_off(rows, [(0.0, 0.0)]) is rows  # (no direction: nothing along it)


def _runs_on(canvas) -> list[str]:
    """The ridge texts placed with a leader within ALONG_DEGREES of running on along one of
    their own roofs past the diamond."""
    ax, bx, ay, by = canvas.view_to_scene()
    layout = canvas.labels.text_layout
    out = []
    for i, (ridge, label) in enumerate(canvas.roofs.ridges):
        placement = layout.placed.get(("ridge", i))
        if not label.isVisible() or placement is None or placement.leader is None:
            continue
        x0, y0, x1, y1 = placement.leader
        sx, sy = to_view(ridge.x) * ax + bx, to_view(ridge.y) * ay + by
        # on past the ridge: the compute roof to the left, the memory roof up its slope
        for x, y in ((ridge.x / 10, ridge.y), (ridge.x * 10, ridge.y * 10)):
            ux, uy = to_view(x) * ax + bx - sx, to_view(y) * ay + by - sy
            cos = ((x1 - x0) * ux + (y1 - y0) * uy) / (math.hypot(x1 - x0, y1 - y0)
                                                      * math.hypot(ux, uy))
            if cos >= math.cos(math.radians(ALONG_DEGREES)):
                out.append(label.toPlainText())
    return out


def test_the_teaching_ridge_is_not_led_along_its_roof(open_window, qtbot):
    win = open_window(examples_dir() / "teaching_machine.yaml", size=(1024, 700))
    canvas = win.canvas
    qtbot.waitUntil(lambda: not canvas.labels.scheduled and not canvas.labels.pending)
    ridges = {ridge.label: i for i, (ridge, _label) in enumerate(canvas.roofs.ridges)}
    assert "Teaching machine: ridge 100 FLOP/B" in ridges  # (100 TFLOP/s / 1 TB/s)
    assert _runs_on(canvas) == []
    assert check_attribution(*canvas_attribution(canvas)) == []


def test_no_example_leads_a_ridge_along_its_roof(open_window, qtbot):
    """Every example at a laptop's and a large screen's window: the two that led a ridge up
    its memory roof's slope at 1920 × 1080 (the attention and Llama 3.1 8B examples) and
    the teaching one at 1024 × 700 among them."""
    for size in ((1024, 700), (1920, 1080)):
        for path in sorted(examples_dir().glob("*.yaml")):
            win = open_window(path, size=size)
            canvas = win.canvas
            qtbot.waitUntil(lambda canvas=canvas: not canvas.labels.scheduled
                            and not canvas.labels.pending)
            assert _runs_on(canvas) == [], (path.name, size)
            win.document.mark_clean()
            win.close()
