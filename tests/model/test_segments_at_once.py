"""The chart adds its straight lines to the text layout's grid all at once
(:meth:`~workbench.model.chart.occupancy.Occupancy.add_segments`): the measured points'
links (lines of data) and the verdict scales' bands (guide lines, which only mark cells).
All at once must cover exactly the cells, with the same counts, that one
:meth:`~workbench.model.chart.occupancy.Occupancy.add_polyline` for each line covers."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.occupancy import Occupancy


def _frame(rng) -> tuple[float, float, float, float]:
    left, top = rng.uniform(0, 60, 2)
    return (float(left), float(top), float(left + rng.uniform(250, 900)),
            float(top + rng.uniform(200, 700)))


@pytest.mark.parametrize("seed", range(40))
def test_links_at_once_count_as_one_by_one(seed):
    rng = np.random.default_rng(seed)
    frame = _frame(rng)
    n = int(rng.integers(8, 60))
    start = rng.uniform((frame[0] - 80, frame[1] - 80), (frame[2] + 80, frame[3] + 80), (n, 2))
    # short links beside their points, long ones, some leaving the plot, level and upright
    end = start + rng.normal(0, rng.choice([4.0, 40.0, 500.0]), (n, 2))
    end[::5, 1] = start[::5, 1]
    end[1::7, 0] = start[1::7, 0]
    segments = np.column_stack((start, end))
    half = float(rng.choice([2.4, 3.5, rng.uniform(0.2, 6.0)]))
    one_by_one, at_once = Occupancy(frame), Occupancy(frame)
    for x0, y0, x1, y1 in segments:
        one_by_one.add_polyline((x0, x1), (y0, y1), half, line=True)
    at_once.add_segments(segments, half, line=np.ones(n, dtype=bool))
    assert one_by_one.grid.any()
    # (links that cross count twice where they cross, as one by one)
    assert np.array_equal(one_by_one.grid, at_once.grid)
    assert np.array_equal(one_by_one.lines, at_once.lines)
    assert not at_once.soft.any()


@pytest.mark.parametrize("seed", range(20))
def test_bands_at_once_mark_the_cells_each_band_marks(seed):
    rng = np.random.default_rng(seed)
    frame = _frame(rng)
    n = int(rng.integers(8, 80))
    # a scale's bands end to end on one upright line, and loose ones, one of no place
    x = np.repeat(rng.uniform(frame[0] - 20, frame[2] + 20, (n + 1) // 2), 2)[:n]
    low = rng.uniform(frame[1] - 50, frame[3] + 100, n)
    segments = np.column_stack((x, low, x, low - rng.uniform(0, 300, n)))
    segments[::3] = rng.uniform(-60, 960, (len(segments[::3]), 4))
    segments[n // 2] = np.nan
    one_by_one, at_once = Occupancy(frame), Occupancy(frame)
    for x0, y0, x1, y1 in segments:
        one_by_one.add_polyline((x0, x1), (y0, y1), 3.5, soft=True)
    at_once.add_segments(segments, 3.5, np.ones(n, dtype=bool))
    assert one_by_one.soft.any()
    assert np.array_equal(one_by_one.soft, at_once.soft)
    assert not at_once.grid.any() and not at_once.lines.any()


@pytest.mark.parametrize("seed", range(16))
def test_many_segments_of_every_kind_at_once_count_as_one_by_one(seed):
    """Hundreds of segments (clipped to the plot all at once): lines of data, guide lines
    and others, each with its own air; level, upright, of no length, ending on the plot's
    edge, leaving it, and not drawn (not finite)."""
    rng = np.random.default_rng(100 + seed)
    frame = _frame(rng)
    n = int(rng.integers(150, 400))
    start = rng.uniform((frame[0] - 90, frame[1] - 90), (frame[2] + 90, frame[3] + 90), (n, 2))
    end = start + rng.normal(0, rng.choice([3.0, 60.0, 700.0]), (n, 2))
    shape = rng.integers(0, 6, n)
    end[shape == 0, 1] = start[shape == 0, 1]
    end[shape == 1, 0] = start[shape == 1, 0]
    end[shape == 2] = start[shape == 2]
    start[shape == 3, 1] = frame[1] - rng.choice([0.0, 1.0, 2.4], int((shape == 3).sum()))
    segments = np.column_stack((start, end))
    segments[rng.integers(0, n, 3), 0] = [np.nan, np.inf, -np.inf]
    halves = rng.choice([1.0, 2.0, 2.4, 3.5], n)
    soft, line = rng.random(n) < 0.3, rng.random(n) < 0.6
    one_by_one, at_once = Occupancy(frame), Occupancy(frame)
    for (x0, y0, x1, y1), half, s, li in zip(segments, halves, soft, line, strict=True):
        one_by_one.add_polyline((x0, x1), (y0, y1), float(half), soft=bool(s), line=bool(li))
    at_once.add_segments(segments, halves, soft, line)
    assert one_by_one.grid.any() and one_by_one.soft.any() and one_by_one.lines.any()
    assert np.array_equal(one_by_one.grid, at_once.grid)
    assert np.array_equal(one_by_one.lines, at_once.lines)
    assert np.array_equal(one_by_one.soft, at_once.soft)


@pytest.mark.parametrize("seed", range(24))
def test_each_segments_cells_found_at_once_are_its_own_cells(seed):
    # a figure's links, found anew at each of its key's passes, are looked up all at once:
    # each segment's cells must be those of the segment alone, in the same order (a line's
    # cells are kept for the next placing and added as they are)
    rng = np.random.default_rng(100 + seed)
    frame = _frame(rng)
    occ = Occupancy(frame, float(rng.choice([1.5, 2.0, 3.0])))
    n = int(rng.integers(1, 50))
    start = rng.uniform((frame[0] - 80, frame[1] - 80), (frame[2] + 80, frame[3] + 80), (n, 2))
    end = start + rng.normal(0, rng.choice([4.0, 40.0, 500.0]), (n, 2))
    end[::5, 1] = start[::5, 1]
    end[1::7, 0] = start[1::7, 0]
    end[2::11] = start[2::11]  # (some of no length)
    halves = rng.uniform(0.4, 6.0, n)
    found = occ.segments_line_cells(np.column_stack((start, end)), halves)
    assert len(found) == n
    some = 0
    for (x0, y0), (x1, y1), half, cells in zip(start, end, halves, found, strict=True):
        alone = occ.line_cells((x0, x1), (y0, y1), half)
        if alone is None or not len(alone):
            assert cells is None or not len(cells)
            continue
        some += 1
        assert cells is not None and np.array_equal(cells, alone)
    assert some
