"""Once every line of the chart is drawn, the text layout's grid keeps its lines' counts
(``soft`` and ``lines``) and the texts placed so far read-only and shares them with its
copies, not copying them for each placing. Sharing must never show: a line or a text added
to a copy, or to the original after it was copied, changes that occupancy alone, and a
placing's record of the counts it started from
(:class:`~workbench.model.chart.placed_again.Found`) still tells a changed start from its
own."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.occupancy import Occupancy
from workbench.model.chart.placed_again import Found

FRAME = (0.0, 0.0, 300.0, 200.0)


def _drawn() -> Occupancy:
    occ = Occupancy(FRAME)
    occ.add_polyline([0.0, 300.0], [20.0, 180.0], 2.0, line=True)
    occ.add_polyline([150.0, 150.0], [0.0, 200.0], 1.0, soft=True)
    occ.add_rects(np.array([[40.0, 40.0, 48.0, 48.0]]))
    occ.keep_drawn()
    return occ


def _add_line(occ: Occupancy, how: str) -> None:
    """A line along y = 100, added one of the ways lines are added."""
    if how == "cells":
        occ.add_polyline([0.0, 300.0], [100.0, 100.0], 1.0, line=True)
    elif how == "guide":
        occ.add_polyline([0.0, 300.0], [100.0, 100.0], 1.0, soft=True)
    elif how == "segments":
        occ.add_segments(np.array([[0.0, 100.0, 300.0, 100.0]]), 1.0,
                         line=np.ones(1, dtype=bool))
    else:  # (guide segments)
        occ.add_segments(np.array([[0.0, 100.0, 300.0, 100.0]]), 1.0,
                         soft=np.ones(1, dtype=bool))


def _state(occ: Occupancy) -> tuple[np.ndarray, ...]:
    return tuple(a.copy() for a in (occ.grid, occ.soft, occ.lines, occ.texts))


def _same(a: tuple, b: tuple) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


HOWS = ["cells", "guide", "segments", "guide segments"]


@pytest.mark.parametrize("how", HOWS)
def test_a_line_added_to_a_copy_leaves_the_original_alone(how):
    occ = _drawn()
    before = _state(occ)
    copy = occ.copy()
    _add_line(copy, how)
    assert _same(_state(occ), before)
    assert not _same(_state(copy), before)
    fresh = Occupancy(FRAME)  # (the same lines, never shared)
    fresh.add_polyline([0.0, 300.0], [20.0, 180.0], 2.0, line=True)
    fresh.add_polyline([150.0, 150.0], [0.0, 200.0], 1.0, soft=True)
    fresh.add_rects(np.array([[40.0, 40.0, 48.0, 48.0]]))
    _add_line(fresh, how)
    assert _same(_state(copy), _state(fresh))


@pytest.mark.parametrize("how", HOWS)
def test_a_line_added_to_the_original_leaves_its_copies_alone(how):
    occ = _drawn()
    copy = occ.copy()
    before = _state(copy)
    _add_line(occ, how)
    assert _same(_state(copy), before)
    assert not _same(_state(occ), before)


@pytest.mark.parametrize("how", HOWS)
def test_a_placing_record_tells_a_line_added_since(how):
    occ = _drawn()
    found = Found.starting(occ, [])
    assert found.matches(occ, [])
    assert found.matches(occ.copy(), [])  # (a copy starts as the original did)
    _add_line(occ, how)
    assert not found.matches(occ, [])


def test_texts_and_markers_on_a_copy_leave_the_original_alone():
    occ = _drawn()
    before = _state(occ)
    found = Found.starting(occ, [])
    copy = occ.copy()
    copy.add_text((100.0, 100.0, 140.0, 112.0))
    copy.add_rect((200.0, 50.0, 208.0, 58.0))
    assert _same(_state(occ), before)
    assert found.matches(occ, []) and not found.matches(copy, [])


def test_a_placing_record_tells_texts_and_markers_added_since():
    occ = _drawn()
    found = Found.starting(occ, [])
    occ.add_text((100.0, 100.0, 140.0, 112.0))
    assert not found.matches(occ, [])
    occ.add_text((100.0, 100.0, 140.0, 112.0), -1)
    assert found.matches(occ, [])
    occ.add_rect((200.0, 50.0, 208.0, 58.0))
    assert not found.matches(occ, [])


def test_a_text_placed_on_the_original_leaves_its_copies_alone():
    occ = _drawn()
    occ.add_text((10.0, 10.0, 50.0, 22.0))  # (placed before the lines were kept)
    occ.keep_drawn()
    copy = occ.copy()
    before = _state(copy)
    occ.add_text((100.0, 100.0, 140.0, 112.0))
    assert _same(_state(copy), before)
    copy.add_text((100.0, 100.0, 140.0, 112.0))
    assert _same(_state(copy), _state(occ))
