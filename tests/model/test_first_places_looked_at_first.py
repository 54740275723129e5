"""An operation's name looks at the first few of its places before the rest of the first
step (:attr:`TextLayout.FIRST_LOOK`: most names find theirs there); in order, so it takes the
place it would take looking at them all at once."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.model.chart.placement import (
    Attribution,
    Candidate,
    Occupancy,
    Request,
    TextLayout,
    far_candidates,
    point_candidates,
)

FRAME = (0.0, 0.0, 260.0, 180.0)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(rects=st.lists(st.tuples(st.floats(0, 250), st.floats(0, 170), st.floats(1, 40),
                                st.floats(1, 30)), max_size=8),
       marks=st.lists(st.tuples(st.floats(10, 250), st.floats(10, 170)), max_size=6),
       texts=st.lists(st.tuples(st.floats(0, 240), st.floats(0, 170)), max_size=4),
       spot=st.tuples(st.floats(20, 240), st.floats(20, 160)),
       size=st.tuples(st.floats(8, 90), st.floats(8, 16)),
       kind=st.sampled_from(["operation", "crowd", "roof"]), far=st.booleans())
def test_looking_at_the_first_places_first_takes_the_same_place(
        rects, marks, texts, spot, size, kind, far):
    occ = Occupancy(FRAME, 2.0)
    for x, y, w, h in rects:
        occ.add_rect((x, y, x + w, y + h))
    own = np.array([[spot[0] - 5, spot[1] - 5, spot[0] + 5, spot[1] + 5]])
    others = np.array([[x - 5, y - 5, x + 5, y + 5] for x, y in marks]).reshape(-1, 4)
    occ.add_rects(np.vstack((own, others)))
    w, h = size
    names = Attribution(own=own, others=others)
    request = Request("it", kind, w, h, point_candidates(spot[0], spot[1], w, h, 6.0),
                      own=own, names=names,
                      far=(lambda: far_candidates(spot[0], spot[1], w, h, 6.0, FRAME, 120.0, 8.0))
                      if far else None)

    def placed(first_look: int):
        layout = TextLayout(occ.copy())
        layout.FIRST_LOOK = first_look
        for i, (x, y) in enumerate(texts):
            layout.place(Request(("text", i), "selected", 30.0, 12.0, [Candidate(x, y)]))
        got = layout.place(request)
        return None if got is None else (got.rect, got.leader)

    assert placed(TextLayout.FIRST_LOOK) == placed(0)
    assert placed(1) == placed(0)
