"""The text layout's grid counts what covers each cell so that a marker taken away leaves the
cell covered while another still lies there. A session holds up to 100,000 operations, so
tens of thousands of markers can lie on one spot (a profile's kernels of one shape): every
count must stay exact past what 16 bits hold (32,767), by every way covers are added, and
a copy must go on counting as its original would."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.occupancy import Occupancy

FRAME = (0.0, 0.0, 200.0, 100.0)
MANY = 40_000  # (more than 32,767: a 16-bit count would wrap to a negative number)


def _spot(occ: Occupancy) -> np.ndarray:
    """A marker's box around (51, 51): cells 25 and 26 of rows and columns."""
    return np.array([[49.0, 49.0, 53.0, 53.0]])


@pytest.mark.parametrize("grouped", [1, 100, MANY])
def test_markers_on_one_spot_counted_past_16_bits(grouped):
    occ = Occupancy(FRAME)
    for _ in range(MANY // grouped):
        occ.add_rects(np.repeat(_spot(occ), grouped, axis=0))
    assert int(occ.grid[25, 25]) == MANY
    # all but one taken away again (as markers that move): the spot is still covered
    occ.add_rects(np.repeat(_spot(occ), MANY - 1, axis=0), weight=-1)
    assert int(occ.grid[25, 25]) == 1
    assert not occ.clear_under(_spot(occ))[0]
    occ.add_rects(_spot(occ), weight=-1)
    assert occ.clear_under(_spot(occ))[0]
    assert not occ.grid.any()


def _cover(occ: Occupancy, way: str, times: int) -> None:
    """Cover the spot's cells ``times`` times over, one way."""
    box = (49.0, 49.0, 53.0, 53.0)
    if way == "rect":
        for _ in range(times):
            occ.add_rect(box)
    elif way == "text":
        for _ in range(times):
            occ.add_text(box)
    elif way == "cells":
        cells = occ.line_cells([0.0, 200.0], [51.0, 51.0], 1.0)
        for _ in range(times):
            occ.add_cells(cells, line=True)
    else:  # (many segments at once, each over the spot)
        occ.add_segments(np.tile([[0.0, 51.0, 200.0, 51.0]], (times, 1)), 1.0,
                         line=np.ones(times, dtype=bool))


@pytest.mark.parametrize("way", ["rect", "text", "cells", "segments"])
def test_every_way_of_covering_counts_past_16_bits_in_a_copy_too(way):
    occ = Occupancy(FRAME)
    _cover(occ, way, MANY // 2)
    copy = occ.copy()  # (the chart copies what is drawn for each placing)
    _cover(copy, way, MANY // 2)
    counted = copy.texts if way == "text" else copy.grid
    assert int(counted[25, 25]) == MANY
    if way in ("cells", "segments"):
        assert int(copy.lines[25, 25]) == MANY
        assert int(copy.grid[25, 90]) == MANY  # (the line's cells far from the box too)
    # the original went on counting on its own
    assert int((occ.texts if way == "text" else occ.grid)[25, 25]) == MANY // 2


def test_counts_given_are_widened_when_they_could_pass_16_bits():
    start = Occupancy(FRAME)
    start.add_rects(np.repeat(_spot(start), 30_000, axis=0))
    # an occupancy made from another's counts (as a placing taken again starts)
    again = Occupancy(start.frame, start.cell, (start.grid.copy(), start.soft.copy(),
                                                start.lines.copy(), start.texts.copy()))
    again.add_rects(np.repeat(_spot(again), 10_000, axis=0))
    assert int(again.grid[25, 25]) == MANY
