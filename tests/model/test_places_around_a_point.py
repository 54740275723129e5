"""A text's places around a marker, as :func:`point_candidates` promises them: the first
ring's eight beside the marker with no leader, then ring after ring farther out, each place
with a leader from the marker's edge to the nearest point of its box. Checked place by place
from that description, for any text size, marker size and rings (a crowd's radius, its
spread, differs at every edit)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.chart.candidates import NEAR_GAP, point_candidates

sizes = st.floats(1.0, 300.0)
radii = st.floats(0.0, 120.0)
extras = st.lists(st.floats(0.0, 150.0), min_size=0, max_size=6).map(sorted)


@settings(max_examples=200, deadline=None)
@given(x=st.floats(-500, 2000), y=st.floats(-500, 2000), w=sizes, h=st.floats(1.0, 60.0),
       radius=radii, more=extras, first=st.sampled_from(["right", "left"]),
       crowd=st.booleans())
def test_each_place_lies_on_its_ring_with_its_leader_to_the_nearest_point_of_its_box(
        x, y, w, h, radius, more, first, crowd):
    rings = ((0.0, 0.0) if crowd else (0.0,)) + tuple(more)
    places = point_candidates(x, y, w, h, radius, rings, first)
    # eight places beside the marker, then sixteen (eight near directions, eight far) a ring
    assert places.shape == (8 + 16 * (len(rings) - 1), 6)
    start = 0
    for k, extra in enumerate(rings):
        n = 8 if k == 0 else 16
        ring = places[start:start + n]
        start += n
        g = radius + NEAR_GAP + extra
        left, top = ring[:, 0], ring[:, 1]
        # the nearest point of each box to the marker's centre
        nx = np.clip(x, left, left + w)
        ny = np.clip(y, top, top + h)
        # the eight near directions: the box's nearest point g away across or down (or both)
        near_gap = np.maximum(np.abs(nx[:8] - x), np.abs(ny[:8] - y))
        assert np.allclose(near_gap, g, rtol=1e-9, atol=1e-6 * (1 + abs(x) + abs(y)))
        first_side = np.sign(nx[0] - x)
        assert first_side == (1.0 if first == "right" else -1.0)
        if k == 0:
            assert np.isnan(ring[:, 2:]).all()  # beside the marker: no leader
            continue
        # every place farther out has a leader, ending at the nearest point of its box
        assert not np.isnan(ring[:, 2:]).any()
        tol = 1e-6 * (1 + abs(x) + abs(y) + w + h + g)
        assert np.allclose(ring[:, 4], nx, atol=tol)
        assert np.allclose(ring[:, 5], ny, atol=tol)
        # and leaving the marker's edge, 1.5 px out, towards that point
        for (x0, y0, x1, y1) in ring[:, 2:6].tolist():
            d = math.hypot(x1 - x, y1 - y)
            if d > tol:
                assert math.isclose(math.hypot(x0 - x, y0 - y), radius + 1.5,
                                    rel_tol=1e-9, abs_tol=tol)
                # (the same direction: the cross product of the two is nought)
                assert abs((x0 - x) * (y1 - y) - (y0 - y) * (x1 - x)) <= tol * (d + radius + 2)
                assert (x0 - x) * (x1 - x) + (y0 - y) * (y1 - y) >= 0
