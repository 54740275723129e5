"""A placed text's leader covers the grid's cells along it. The cells of a leader are
remembered by the grid's frame and cell and the leader itself, because a text taken again
as it was reserves the same leader at every placing. Whatever grid a leader is reserved in,
it must cover what :meth:`Occupancy.add_polyline` of its line covers there, and removing
the text must leave every count as it was."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.placement import Occupancy, Placement, TextLayout

#: a long leader (its cells found a segment at a time) and a short one
LEADERS = [(12.0, 250.0, 330.5, 41.25), (200.0, 150.0, 214.0, 139.0)]
#: the same grid twice (the second reserves from what the first remembered), then grids of
#: another frame, another cell, and a frame the leaders and the line leave; whether the
#: leaders cross each
GRIDS = [((0.0, 0.0, 400.0, 300.0), 2.0, True), ((0.0, 0.0, 400.0, 300.0), 2.0, True),
         ((5.0, 7.0, 405.0, 307.0), 2.0, True), ((0.0, 0.0, 400.0, 300.0), 3.0, True),
         ((0.0, 0.0, 120.0, 90.0), 2.0, False)]


def _counts(occ: Occupancy) -> list[np.ndarray]:
    return [occ.grid.copy(), occ.soft.copy(), occ.lines.copy(), occ.texts.copy()]


@pytest.mark.parametrize("leader", LEADERS)
def test_a_leader_reserved_again_covers_what_its_line_covers(leader):
    rect = (leader[2], leader[3] - 12.0, leader[2] + 60.0, leader[3])
    for frame, cell, crossed in GRIDS:
        layout = TextLayout(Occupancy(frame, cell))
        layout.occupancy.add_polyline([0.0, 400.0], [300.0, 0.0], 2.5, line=True)
        before = _counts(layout.occupancy)
        placement = Placement("text", rect, leader, air=2.0)
        layout.placed["text"] = placement
        layout._reserve(placement, 1)

        expected = Occupancy(frame, cell)
        expected.add_polyline([0.0, 400.0], [300.0, 0.0], 2.5, line=True)
        expected.add_text((rect[0] - 2.0, rect[1] - 2.0, rect[2] + 2.0, rect[3] + 2.0), 1)
        expected.add_rect(rect, 1)
        expected.add_polyline((leader[0], leader[2]), (leader[1], leader[3]),
                              TextLayout.LEADER_HALF)
        for got, want in zip(_counts(layout.occupancy), _counts(expected), strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"{frame} {cell}")
        leader_cells = int(layout.occupancy.grid.sum() - before[0].sum())
        assert (leader_cells > 0) == crossed

        layout.remove("text")
        for got, want in zip(_counts(layout.occupancy), before, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=f"{frame} {cell}")
