"""Places whose leaders cross lines drawn beforehand can be left out of a text's places at no
change: :func:`leaders_stopped` of an occupancy holding some of what is drawn marks places
that no placing over more than that takes (a ridge's text, whose leaders across the roofs'
lines were refused at every edit of a model)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.chart.placement import (
    Candidate,
    Occupancy,
    Placement,
    Request,
    TextLayout,
    leaders_stopped,
    point_candidates,
)

FRAME = (0.0, 0.0, 240.0, 160.0)

coords = st.tuples(st.floats(-20, 260), st.floats(-20, 180))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(lines=st.lists(st.tuples(coords, coords, st.floats(0.5, 3.0)), min_size=1, max_size=5),
       rects=st.lists(st.tuples(st.floats(0, 230), st.floats(0, 150), st.floats(1, 25),
                                st.floats(1, 25)), max_size=5),
       texts=st.lists(st.tuples(st.floats(0, 220), st.floats(0, 150)), max_size=3),
       spot=st.tuples(st.floats(20, 220), st.floats(20, 140)),
       size=st.tuples(st.floats(8, 90), st.floats(8, 16)),
       kind=st.sampled_from(["operation", "roof", "ridge"]))
def test_places_whose_leaders_cross_lines_drawn_before_are_never_taken(
        lines, rects, texts, spot, size, kind):
    lines_only = Occupancy(FRAME, 2.0)
    for (x0, y0), (x1, y1), half in lines:
        lines_only.add_segments([(x0, y0, x1, y1)], [half])
    # what a placing sees: those lines, and markers and texts drawn since
    drawn = lines_only.copy()
    for x, y, w, h in rects:
        drawn.add_rect((x, y, x + w, y + h))
    w, h = size
    places = point_candidates(spot[0], spot[1], w, h, 6.0)
    stopped = leaders_stopped(lines_only, places)
    assert not stopped[np.isnan(places[:, 2])].any()  # (a place without a leader: none)

    def placed(cands: np.ndarray) -> Placement | None:
        layout = TextLayout(drawn.copy())
        for i, (x, y) in enumerate(texts):
            layout.place(Request(("text", i), "selected", 30.0, 12.0, [Candidate(x, y)]))
        return layout.place(Request("it", kind, w, h, cands))

    everywhere, clear = placed(places), placed(places[~stopped])
    assert (everywhere is None) == (clear is None)
    if everywhere is not None and clear is not None:
        assert (everywhere.rect, everywhere.leader) == (clear.rect, clear.leader)
        taken = [i for i, p in enumerate(places)
                 if (p[0], p[1]) == clear.rect[:2] and (np.isnan(p[2]) if clear.leader is None
                                                        else tuple(p[2:6]) == clear.leader)]
        assert taken and not stopped[taken[0]]


def test_a_leader_across_a_line_is_stopped_and_one_beside_it_is_not():
    occ = Occupancy(FRAME, 2.0)
    # a roof at x = 100 (a line: a tag's leader may cross it, a ridge's text's may not)
    occ.add_segments([(100.0, 0.0, 100.0, 160.0)], [1.0], line=[True])
    places = np.array([
        [130.0, 70.0, 80.0, 80.0, 130.0, 76.0],  # from x = 80 across the line to x = 130
        [40.0, 70.0, 80.0, 80.0, 50.0, 76.0],  # from x = 80 away from it
        [104.0, 70.0, 98.0, 80.0, 104.0, 76.0],  # from beside the line: its first pixels
        [20.0, 20.0, np.nan, np.nan, np.nan, np.nan],  # no leader
    ])
    assert leaders_stopped(occ, places).tolist() == [True, False, False, False]
