"""A text's far places (:func:`~workbench.ui.chart.point_places.far_places`: every place in
the plot within reach of its mark, each with its leader) are made once for a mark, a text
size and a plot: a roof's value led to its line is asked for again at each edit of an
operation, its line unmoved. What is kept is what a fresh search makes, and cannot be
changed by a reader of it."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.leader_places import far_candidates, lead_from
from workbench.ui.chart.point_places import FAR_KEPT, far_places

FRAME = (40.0, 10.0, 640.0, 410.0)
CHART = (700.0, 460.0)


def test_the_same_mark_and_text_get_the_places_a_fresh_search_makes_once():
    first = far_places(300.0, 200.0, 60.0, 12.0, 5.0, FRAME, CHART)()
    again = far_places(300.0, 200.0, 60.0, 12.0, 5.0, FRAME, CHART)()
    assert again is first  # (kept, not made again)
    fresh = far_candidates(300.0, 200.0, 60.0, 12.0, 5.0, FRAME, first_reach(), step())
    assert np.array_equal(first, fresh)
    with pytest.raises(ValueError):
        first[0, 0] = 0.0  # (shared by every request for it: nobody may change it)


def test_another_mark_size_plot_or_crowd_gets_its_own_places():
    base = far_places(300.0, 200.0, 60.0, 12.0, 5.0, FRAME, CHART)()
    moved = far_places(301.0, 200.0, 60.0, 12.0, 5.0, FRAME, CHART)()
    wider = far_places(300.0, 200.0, 61.0, 12.0, 5.0, FRAME, CHART)()
    smaller = far_places(300.0, 200.0, 60.0, 12.0, 5.0, (40.0, 10.0, 600.0, 410.0), CHART)()
    for other in (moved, wider, smaller):
        assert other is not base and not np.array_equal(other, base)
    # a crowd's leaders leave the marker nearest their far end
    crowd = ([300.0, 330.0], [200.0, 200.0], 5.0)
    led = far_places(300.0, 200.0, 60.0, 12.0, 5.0, FRAME, CHART, crowd)()
    assert np.array_equal(led, lead_from(base, *crowd))
    assert not np.array_equal(led, base)
    assert not led.flags.writeable


def test_only_a_few_are_kept():
    """Each is a few hundred kB: the oldest is forgotten past :data:`FAR_KEPT`."""
    first = far_places(100.0, 100.0, 30.0, 10.0, 4.0, FRAME, CHART)()
    for i in range(FAR_KEPT):
        far_places(100.0 + i + 1, 100.0, 30.0, 10.0, 4.0, FRAME, CHART)()
    assert far_places(100.0, 100.0, 30.0, 10.0, 4.0, FRAME, CHART)() is not first


def first_reach() -> float:
    """The reach :func:`far_places` gives a text in :data:`FRAME` of a :data:`CHART`
    (half the plot's diagonal, at most 0.24 of the chart's)."""
    diagonal = float(np.hypot(FRAME[2] - FRAME[0], FRAME[3] - FRAME[1]))
    return min(0.5 * diagonal, 0.24 * float(np.hypot(*CHART)))


def step() -> float:
    """Its places' spacing: the plot's diagonal over 80, at least 6 pixels."""
    return max(6.0, float(np.hypot(FRAME[2] - FRAME[0], FRAME[3] - FRAME[1])) / 80.0)
