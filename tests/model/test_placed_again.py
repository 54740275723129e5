"""A placing taken along an earlier one (:mod:`workbench.model.chart.placed_again`): the chart
key's steps change a few texts and place everything again; the texts that did not change are
not looked for again while every text before them found what it found the last time. The
layout must be the one a placing from scratch makes: the same places, in the same order, and
the same counts on the grid."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.placement import Occupancy, Request, TextLayout, point_candidates

FRAME = (0.0, 0.0, 400.0, 300.0)
KINDS = ("operation", "crowd", "measured", "roof", "ridge")


def _occupancy(rng) -> Occupancy:
    occ = Occupancy(FRAME)
    for _ in range(5):
        occ.add_polyline(rng.uniform(-20, 420, 3), rng.uniform(-20, 320, 3), 2.5, line=True)
    x, y = rng.uniform(0, 400, 60), rng.uniform(0, 300, 60)
    occ.add_rects(np.column_stack((x - 4, y - 4, x + 4, y + 4)))
    return occ


def _request(rng, key, kind: str, tag: bool) -> Request:
    sx, sy = rng.uniform(0, 400), rng.uniform(0, 300)
    w, h = rng.uniform(10, 90), rng.uniform(8, 26)
    own = np.array([[sx - 4, sy - 4, sx + 4, sy + 4]]) if tag else None
    far = ((lambda sx=sx, sy=sy, h=h: np.array(
        [[sx + d, sy - d - h, sx + 4, sy - 4, sx + d, sy - d] for d in (20.0, 35.0, 50.0)]))
        if tag else None)
    return Request(key, kind, w, h, point_candidates(sx, sy, w, h, 4.0),
                   order=float(rng.uniform()), cross_lines=tag, own=own, far=far)


def _requests(rng, n: int = 45) -> dict:
    out = {}
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        key = ("point", i) if kind in ("operation", "crowd") else (kind, i)
        out[key] = _request(rng, key, kind, kind in ("operation", "crowd") and i % 3 == 0)
    return out


def _layout(occ: Occupancy, requests: dict, again=None, counted: list | None = None):
    layout = TextLayout(occ.copy(), again=again, record=True)
    if counted is not None:  # (each text looked for)
        place = layout.place

        def looked_for(request, *args, **kwargs):
            counted.append(request.key)
            return place(request, *args, **kwargs)

        layout.place = looked_for  # type: ignore[method-assign]
    out = layout.place_all(requests.values())
    return layout, out


def _same(a: TextLayout, out_a: dict, b: TextLayout, out_b: dict) -> None:
    assert list(out_a.items()) == list(out_b.items())
    assert list(a.placed.items()) == list(b.placed.items())
    assert list(a.requests) == list(b.requests)
    for name in ("grid", "soft", "lines", "texts"):
        assert np.array_equal(getattr(a.occupancy, name), getattr(b.occupancy, name)), name


@pytest.mark.parametrize("seed", range(60))
def test_a_placing_again_is_the_placing_from_scratch(seed):
    rng = np.random.default_rng(seed)
    occ = _occupancy(rng)
    requests = _requests(rng)
    base, out = _layout(occ, requests)
    changed = dict(requests)
    unplaced = [k for k, p in out.items() if p is None]
    placed = [k for k, p in out.items() if p is not None]
    # the key's steps: texts that found no place said otherwise (smaller, larger, elsewhere),
    # one of them gone, texts added; now and then one that was placed changes too
    for i, key in enumerate(unplaced[:: 1 + seed % 3]):
        old = requests[key]
        # (now and then with markers of its own where it had none, or none where it had)
        changed[key] = _request(rng, key, old.kind, (old.own is not None) != (i % 4 == 1))
    if len(unplaced) > 2 and seed % 2:
        del changed[unplaced[-1]]
    for i in range(seed % 3):
        key = ("point", 100 + i)
        changed[key] = _request(rng, key, "crowd", True)
    if placed and seed % 3 == 0:
        key = placed[len(placed) // 2]
        changed[key] = _request(rng, key, requests[key].kind, requests[key].own is not None)
    counted: list = []
    again, out_again = _layout(occ, changed, base.found, counted)
    fresh, out_fresh = _layout(occ, changed)
    _same(again, out_again, fresh, out_fresh)
    # and it is taken along again by the next
    third, out_third = _layout(occ, changed, again.found)
    _same(third, out_third, fresh, out_fresh)


def test_only_the_changed_texts_are_looked_for_while_they_find_what_they_found():
    checked = 0
    for seed in range(30):
        rng = np.random.default_rng(1000 + seed)
        occ = _occupancy(rng)
        requests = _requests(rng, 60)
        base, out = _layout(occ, requests)
        unplaced = [k for k, p in out.items() if p is None]
        if not unplaced:
            continue
        key = unplaced[0]
        old = requests[key]
        # too large to be placed anywhere: it finds no place again
        changed = dict(requests)
        changed[key] = Request(key, old.kind, 1000.0, 1000.0, old.candidates, order=old.order,
                               cross_lines=old.cross_lines, own=old.own, far=old.far)
        counted: list = []
        again, out_again = _layout(occ, changed, base.found, counted)
        fresh, out_fresh = _layout(occ, changed)
        _same(again, out_again, fresh, out_fresh)
        assert set(counted) == {key}  # (its first try and, with markers of its own, its second)
        assert len(counted) == (2 if old.own is not None else 1)
        checked += 1
    assert checked >= 10


def test_a_placing_from_other_counts_or_without_a_placed_text_is_looked_for_whole():
    rng = np.random.default_rng(7)
    occ = _occupancy(rng)
    requests = _requests(rng)
    base, out = _layout(occ, requests)
    # something more drawn: nothing is taken
    other = occ.copy()
    other.add_rect((100.0, 100.0, 140.0, 120.0))
    counted: list = []
    again, out_again = _layout(other, requests, base.found, counted)
    fresh, out_fresh = _layout(other, requests)
    _same(again, out_again, fresh, out_fresh)
    assert len(set(counted)) == len(requests)
    # a text that was placed left out: the texts after it may find other places
    placed = next(k for k, p in out.items() if p is not None)
    fewer = {k: r for k, r in requests.items() if k != placed}
    counted = []
    again, out_again = _layout(occ, fewer, base.found, counted)
    fresh, out_fresh = _layout(occ, fewer)
    _same(again, out_again, fresh, out_fresh)
    assert len(set(counted)) == len(fewer)


def test_a_changed_text_that_takes_a_place_moves_the_texts_after_it():
    # a text first in order that found no place (too large), said smaller, takes the place
    # a later text had: that one is looked for again, and goes elsewhere
    occ = Occupancy(FRAME)
    first = Request("first", "operation", 500.0, 30.0, point_candidates(200, 150, 500, 30, 4),
                    order=0.0)
    later = Request("later", "roof", 40.0, 12.0, point_candidates(200, 150, 40, 12, 4),
                    order=1.0)
    base, out = _layout(occ, {"first": first, "later": later})
    assert out["first"] is None and out["later"] is not None
    smaller = Request("first", "operation", 40.0, 12.0, point_candidates(200, 150, 40, 12, 4),
                      order=0.0)
    changed = {"first": smaller, "later": later}
    counted: list = []
    again, out_again = _layout(occ, changed, base.found, counted)
    fresh, out_fresh = _layout(occ, changed)
    _same(again, out_again, fresh, out_fresh)
    assert out_again["first"].rect == out["later"].rect  # (it took the place)
    assert out_again["later"].rect != out["later"].rect
    assert counted == ["first", "later"]


def test_a_text_no_longer_tried_twice_ends_the_step():
    # A tag whose leader crosses a marker of its own finds its place at its second try
    # only; said again without markers of its own, it is tried once and finds none: a later
    # tag that could not lie where A lay now can, and is looked for again
    from workbench.model.chart.placement import Candidate

    occ = Occupancy(FRAME)
    marks = {"a": (100.0, 100.0), "a2": (130.0, 81.0), "b": (260.0, 100.0), "b2": (230.0, 81.0)}
    for x, y in marks.values():
        occ.add_rect((x - 4, y - 4, x + 4, y + 4))

    def box(x, y):
        return np.array([[x - 4, y - 4, x + 4, y + 4]])

    def tag(key, at, via, order):
        (mx, my), (vx, vy) = marks[at], marks[via]
        own = np.vstack((box(mx, my), box(vx, vy)))
        lead = (mx, my - 4, 175.0, 60.0)  # (past its other marker, to the same box)
        return Request(key, "crowd", 20.0, 10.0, [Candidate(165.0, 50.0, lead)], order=order,
                       cross_lines=True, own=own, far=lambda: np.zeros((0, 6)))

    a, b = tag("a", "a", "a2", 0.0), tag("b", "b", "b2", 1.0)
    base, out = _layout(occ, {"a": a, "b": b})
    assert out["a"] is not None and out["b"] is None  # (a at its second try; b then none)
    assert base.found.first["a"] is None
    alone = Request("a", "crowd", 20.0, 10.0, a.candidates, order=0.0, cross_lines=True)
    changed = {"a": alone, "b": b}
    counted: list = []
    again, out_again = _layout(occ, changed, base.found, counted)
    fresh, out_fresh = _layout(occ, changed)
    _same(again, out_again, fresh, out_fresh)
    assert out_again["a"] is None and out_again["b"] is not None
