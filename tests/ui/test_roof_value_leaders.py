"""Where a leader to a roof's line ends (:func:`line_spot`): at a spot of the part in view
no point sits on, the middle first; nowhere when points sit all along it."""

from __future__ import annotations

import numpy as np

from workbench.ui.chart.naming import LINE_SPOTS, DrawnMarks, line_spot

SIZE = 11.0


def _marks_at(fractions, seen=(0.0, 0.0, 200.0, 0.0)) -> DrawnMarks:
    """Markers (SIZE across) on the segment ``seen`` at these fractions of it."""
    x0, y0, x1, y1 = seen
    xs = [x0 + (x1 - x0) * f for f in fractions]
    ys = [y0 + (y1 - y0) * f for f in fractions]
    half = SIZE / 2
    rects = np.array([(x - half, y - half, x + half, y + half) for x, y in zip(xs, ys, strict=True)])
    return DrawnMarks(rects, (np.zeros((0, 4)), np.zeros(0, dtype=np.int64)))


def test_the_middle_when_no_point_is_near_it():
    assert line_spot((0.0, 0.0, 200.0, 0.0), _marks_at([0.05, 0.95]), SIZE) == (100.0, 0.0)


def test_a_spot_between_the_points_when_they_sit_at_every_first_choice():
    """Points at each of the first eleven spots (every 8 % of the part in view), 48 px
    apart on a 600 px part: the leader ends between two of them, at least SIZE px from
    both (it ended on the middle one)."""
    first = LINE_SPOTS[:11]
    seen = (0.0, 0.0, 600.0, 0.0)
    spot = line_spot(seen, _marks_at(first, seen), SIZE)
    assert spot is not None
    x, _y = spot
    # at least SIZE from each marker's box (SIZE across, centred on its spot)
    assert min(abs(x - 600.0 * f) for f in first) >= SIZE + SIZE / 2


def test_none_when_points_sit_all_along_the_part_in_view():
    """A short part in view with points every few pixels: no leader to it (one ending on a
    point reads as that point's)."""
    drawn = _marks_at(np.linspace(0.0, 1.0, 41))
    assert line_spot((0.0, 0.0, 200.0, 0.0), drawn, SIZE) is None
