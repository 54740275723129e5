"""The text layout keeps the candidate places of the text sizes it met lately, not of every
size it ever met: a working session's edits change text widths thousands of times."""

from __future__ import annotations

import numpy as np

from workbench.model.chart import candidates
from workbench.model.chart.candidates import point_candidates


def test_the_candidates_kept_over_a_long_session_stay_within_2_mb():
    candidates._around_origin.cache_clear()
    widths = [20.0 + 0.037 * i for i in range(5000)]  # every edit a new width
    for w in widths:
        point_candidates(100.0, 50.0, w, 14.0, 4.0)
    last = point_candidates(100.0, 50.0, widths[-1], 14.0, 4.0)
    assert candidates._around_origin.cache_info().currsize * last.nbytes <= 2e6
    # what a placing asks again is served as when first made
    candidates._around_origin.cache_clear()
    assert np.array_equal(last, point_candidates(100.0, 50.0, widths[-1], 14.0, 4.0),
                          equal_nan=True)
