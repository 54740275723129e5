"""Texts whose surroundings did not change keep their places (:mod:`kept_places`): an edit
that moves one point places again only the texts near it. What is kept must be what a search
from scratch finds: after every edit, the placing that takes the kept places and the one that
looks for every text give the same places and the same counts on the grid."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.model.chart.attribution import Attribution
from workbench.model.chart.kept_places import KeptPlaces
from workbench.model.chart.placement import Occupancy, Request, TextLayout, point_candidates

FRAME = (0.0, 0.0, 400.0, 300.0)
HALF = 4.0


def _box(x: float, y: float) -> np.ndarray:
    return np.array([[x - HALF, y - HALF, x + HALF, y + HALF]])


class Scene:
    """Points with names, two lines with values, and some clutter: what a chart draws."""

    def __init__(self, rng, n: int) -> None:
        self.points = {i: (float(rng.uniform(20, 380)), float(rng.uniform(20, 280)))
                       for i in range(n)}
        self.sizes = {i: (float(rng.uniform(14, 70)), float(rng.uniform(9, 16)))
                      for i in range(n)}
        self.lines = [tuple(float(v) for v in rng.uniform(0, 300, 4)) for _ in range(2)]
        self.clutter = [tuple(float(v) for v in rng.uniform(0, 300, 2)) for _ in range(4)]

    def occupancy(self) -> Occupancy:
        occ = Occupancy(FRAME)
        for x0, y0, x1, y1 in self.lines:
            occ.add_polyline((x0, x1), (y0, y1), 2.0, line=True)
        for x, y in self.clutter:
            occ.add_rect((x - 10, y - 3, x + 10, y + 3))
        occ.add_rects(np.vstack([_box(x, y) for x, y in self.points.values()]))
        return occ

    def requests(self) -> list[Request]:
        out = []
        boxes = {i: _box(x, y) for i, (x, y) in self.points.items()}
        lines = np.array(self.lines)
        for i, (x, y) in self.points.items():
            w, h = self.sizes[i]
            others = np.vstack([b for j, b in boxes.items() if j != i] or [np.zeros((0, 4))])
            out.append(Request(("point", i), "operation", w, h,
                               point_candidates(x, y, w, h, HALF), order=float(i),
                               names=Attribution(boxes[i], others)))
        for k, line in enumerate(self.lines):
            x0, y0, x1, y1 = line
            places = np.array([[x0 + (x1 - x0) * f - 20, y0 + (y1 - y0) * f - 14,
                                np.nan, np.nan, np.nan, np.nan]
                               for f in (0.2, 0.4, 0.6, 0.8)])
            out.append(Request(("roof", k), "roof", 40.0, 10.0, places, order=float(k),
                               names=Attribution(own_lines=lines[[k]],
                                                 other_lines=lines[[1 - k]], reach=20.0)))
        # a text that names nothing (a title)
        out.append(Request(("title", 0), "region", 60.0, 12.0,
                           np.array([[5.0, 5.0] + [np.nan] * 4, [300.0, 5.0] + [np.nan] * 4]),
                           order=0.0))
        return out


def _place(scene: Scene, kept: KeptPlaces | None) -> tuple[TextLayout, dict]:
    layout = TextLayout(scene.occupancy(), kept=kept)
    return layout, layout.place_all(scene.requests())


def _edit(rng, scene: Scene) -> None:
    """One edit, as a user makes: a point moved a little or far, a name renamed, some
    clutter moved."""
    what = rng.integers(0, 4)
    i = int(rng.integers(0, len(scene.points)))
    if what == 0:
        x, y = scene.points[i]
        scene.points[i] = (float(np.clip(x + rng.normal(0, 6), 5, 395)),
                           float(np.clip(y + rng.normal(0, 6), 5, 295)))
    elif what == 1:
        scene.points[i] = (float(rng.uniform(20, 380)), float(rng.uniform(20, 280)))
    elif what == 2:
        w, h = scene.sizes[i]
        scene.sizes[i] = (w + float(rng.choice([-6.0, 6.0])), h)
    else:
        k = int(rng.integers(0, len(scene.clutter)))
        scene.clutter[k] = tuple(float(v) for v in rng.uniform(0, 300, 2))


@pytest.mark.parametrize("seed", range(40))
def test_the_kept_places_are_the_places_a_search_finds(seed):
    rng = np.random.default_rng(seed)
    scene = Scene(rng, int(rng.integers(4, 30)))
    kept = KeptPlaces()
    for _ in range(8):
        with_kept, out_kept = _place(scene, kept)
        fresh, out_fresh = _place(scene, None)
        assert list(out_kept.items()) == list(out_fresh.items())
        for name in ("grid", "soft", "lines", "texts"):
            assert np.array_equal(getattr(with_kept.occupancy, name),
                                  getattr(fresh.occupancy, name)), name
        _edit(rng, scene)


def test_an_edit_looks_again_only_for_the_texts_near_it():
    rng = np.random.default_rng(7)
    scene = Scene(rng, 12)
    # one point far from every other, moved a little: the others keep their places
    scene.points = {i: (30.0 + 30.0 * i, 40.0 + 20.0 * (i % 3)) for i in range(11)}
    scene.points[11] = (350.0, 260.0)
    scene.clutter = [(390.0, 5.0)] * 4
    scene.lines = [(0.0, 300.0, 120.0, 200.0), (0.0, 120.0, 100.0, 120.0)]
    kept = KeptPlaces()
    _, before = _place(scene, kept)
    assert [key for key, p in before.items() if p is None] == [("roof", 0)]
    looked_for = kept.looked_for
    scene.points[11] = (345.0, 255.0)
    _layout, out = _place(scene, kept)
    # the name of the point that moved (the text with no place still has none)
    assert kept.looked_for - looked_for == 1
    assert out == _place(scene, None)[1]
    assert out[("point", 11)] is not None


def test_a_mark_that_comes_near_a_text_has_it_looked_for_again():
    rng = np.random.default_rng(3)
    scene = Scene(rng, 2)
    scene.points = {0: (100.0, 100.0), 1: (300.0, 250.0)}
    scene.sizes = {0: (40.0, 10.0), 1: (40.0, 10.0)}
    scene.clutter = [(390.0, 5.0)] * 4
    scene.lines = [(0.0, 300.0, 10.0, 290.0), (0.0, 290.0, 10.0, 280.0)]
    kept = KeptPlaces()
    _, before = _place(scene, kept)
    name = before[("point", 0)]
    assert name is not None and name.leader is None
    # the other point moved right beside the first one's name: a reader would pair the
    # name with it, so the name is looked for again and goes elsewhere
    _x0, y0, x1, y1 = name.rect
    scene.points[1] = (x1 + 8.0, (y0 + y1) / 2)
    looked_for = kept.looked_for
    _, after = _place(scene, kept)
    assert kept.looked_for - looked_for == 2  # (the names of both points)
    assert after == _place(scene, None)[1]
    assert after[("point", 0)] != name


def _lone(points: dict, sizes: dict) -> Scene:
    scene = Scene(np.random.default_rng(0), len(points))
    scene.points, scene.sizes = points, sizes
    scene.clutter = [(395.0, 295.0)] * 4
    scene.lines = [(0.0, 300.0, 2.0, 298.0), (0.0, 298.0, 2.0, 296.0)]
    return scene


def test_a_mark_that_moves_within_reach_of_a_names_middle_has_it_looked_for_again():
    # "Softmax" beside its own point but right under another reads as naming that one: a
    # point 28 px over the middle of a wide name, beyond the cells its place looked at
    # (21 px around), is nearer that middle than the name's own point is
    scene = _lone({0: (100.0, 150.0), 1: (300.0, 40.0)}, {0: (70.0, 10.0), 1: (20.0, 10.0)})
    kept = KeptPlaces()
    _, before = _place(scene, kept)
    name = before[("point", 0)]
    assert name is not None and name.leader is None
    x0, y0, x1, _y1 = name.rect
    assert x0 > 100.0  # (right of its point)
    scene.points[1] = ((x0 + x1) / 2 + 6.0, y0 - 28.0)
    _, after = _place(scene, kept)
    assert after == _place(scene, None)[1]
    assert after[("point", 0)] != name


def test_something_drawn_within_a_pixel_of_a_kept_name_has_it_looked_for_again():
    # a name's box keeps a pixel of air from anything drawn: a line drawn half a pixel off
    # its edge, in the next cell, takes that place from it
    scene = _lone({0: (100.0, 150.0)}, {0: (40.0, 10.0)})
    kept = KeptPlaces()
    _, before = _place(scene, kept)
    name = before[("point", 0)]
    assert name is not None
    _x0, y0, x1, y1 = name.rect
    scene.clutter = [(x1 + 10.5, (y0 + y1) / 2)] * 4  # (a 20-px-wide box: from x1 + 0.5)
    _, after = _place(scene, kept)
    assert after == _place(scene, None)[1]
    assert after[("point", 0)] != name


def test_a_text_with_no_place_is_not_looked_for_again_until_one_of_its_places_clears():
    scene = _lone({0: (100.0, 150.0), 1: (300.0, 40.0)}, {0: (40.0, 10.0), 1: (20.0, 10.0)})
    # the first line's value has its four places, all covered by clutter
    scene.lines = [(40.0, 200.0, 240.0, 200.0), (0.0, 298.0, 2.0, 296.0)]
    spots = [(40.0 + 200.0 * f, 200.0 - 9.0) for f in (0.2, 0.4, 0.6, 0.8)]
    scene.clutter = list(spots)
    kept = KeptPlaces()
    _, before = _place(scene, kept)
    assert before[("roof", 0)] is None
    # a point far off moved: the value is known to have no place, as a search finds
    scene.points[1] = (310.0, 45.0)
    looked_for = kept.looked_for
    _, after = _place(scene, kept)
    assert after == _place(scene, None)[1] and after[("roof", 0)] is None
    assert kept.looked_for - looked_for == 1  # (the name of the point that moved)
    # one of its places cleared: looked for, and found
    scene.clutter[2] = (395.0, 295.0)
    _, cleared = _place(scene, kept)
    assert cleared == _place(scene, None)[1] and cleared[("roof", 0)] is not None


def test_a_text_with_no_place_given_one_more_is_looked_for_again():
    occ = Occupancy(FRAME)
    occ.add_rect((0.0, 0.0, 200.0, 300.0))  # (the left half covered)
    covered = np.array([[20.0, 20.0] + [np.nan] * 4, [60.0, 100.0] + [np.nan] * 4])
    kept = KeptPlaces()
    first = TextLayout(occ.copy(), kept=kept)
    assert first.place(Request("value", "roof", 40.0, 10.0, covered)) is None
    more = np.vstack((covered, [[260.0, 100.0] + [np.nan] * 4]))
    again = TextLayout(occ.copy(), kept=kept)
    found = again.place(Request("value", "roof", 40.0, 10.0, more))
    assert found is not None and found.rect[0] == 260.0


def _cells_of_a_placing(scene: Scene) -> int:
    kept = KeptPlaces()
    _place(scene, kept)
    return kept.cells


def test_what_is_kept_stays_within_its_budget_over_a_long_session():
    # every edit renames the points (new widths: new texts to keep); what is kept is
    # bounded by the cells it copies, the oldest forgotten first
    rng = np.random.default_rng(11)
    scene = Scene(rng, 20)
    scene.sizes = {i: (80.0 + i, 10.0) for i in scene.sizes}  # (the widest of the session)
    kept = KeptPlaces()
    kept.BUDGET = 2 * _cells_of_a_placing(scene)  # (room for two placings' texts)
    kept.MISSES = 10**6  # (each text kept at every placing: the budget alone decides)
    most = 0
    for step in range(60):
        scene.sizes = {i: (20.0 + step + i, 10.0) for i in scene.sizes}
        _place(scene, kept)
        assert 0 < kept.cells <= kept.BUDGET
        most = max(most, kept.cells)
    assert most > kept.BUDGET // 2  # (it was full: the oldest were forgotten)
    # the latest placing's texts are kept: the same placing again looks for none of them
    looked_for = kept.looked_for
    _place(scene, kept)
    assert kept.looked_for == looked_for


def test_a_chart_whose_texts_need_more_than_the_budget_takes_again_those_that_fit():
    # each placing asks for its texts in the same order: forgetting the oldest to make room
    # would forget, at every placing, the texts the next one asks for first, and none would
    # be taken again (a profile's chart of 120 texts looked for every one at every edit)
    scene = Scene(np.random.default_rng(5), 24)
    kept = KeptPlaces()
    kept.BUDGET = _cells_of_a_placing(scene) * 6 // 10
    _place(scene, kept)
    first = len(kept)
    assert 0 < first < len(scene.requests())
    for step in range(1, 4):
        _layout, out = _place(scene, kept)
        assert out == _place(scene, None)[1]
        assert kept.taken == step * first  # (the same texts, each time)
        assert kept.cells <= kept.BUDGET


def test_a_text_whose_surroundings_change_at_each_placing_is_kept_again_once_they_settle():
    # something drawn moves beside a name at every placing (a model's points, at each edit
    # of its batch): not taken again, the name stops being kept after MISSES placings (for
    # one, then two ... placings: nothing of it compared or copied), then, its surroundings
    # settled, is kept and taken again; every placing finds what a search from scratch finds
    scene = _lone({0: (100.0, 150.0), 1: (300.0, 40.0)}, {0: (40.0, 10.0), 1: (20.0, 10.0)})
    kept = KeptPlaces()
    _, first = _place(scene, kept)
    name = first[("point", 0)]
    every = len(kept)  # (the names, the lines' values, the title)
    assert name is not None and every == len(first)
    _x0, y0, x1, y1 = name.rect
    sizes = []
    for step in range(12):
        scene.clutter = [(x1 + 24.0 + 4.0 * (step % 2), (y0 + y1) / 2)] * 4
        taken = kept.taken
        _, out = _place(scene, kept)
        assert out == _place(scene, None)[1] and out[("point", 0)] == name
        assert kept.taken - taken == every - 1  # (all but the name)
        sizes.append(len(kept))
    # kept at the first placings, then not at one in two, then at one in three, in five ...
    misses = KeptPlaces.MISSES
    assert sizes[:misses - 1] == [every] * (misses - 1)
    assert sizes[misses - 1] == every - 1
    assert every in sizes[misses:] and sizes[misses:].count(every - 1) > 4
    for _ in range(KeptPlaces.LONGEST + 2):  # settled: kept again, then taken again
        _place(scene, kept)
    taken = kept.taken
    _, out = _place(scene, kept)
    assert kept.taken - taken == every and len(kept) == every
    assert out == _place(scene, None)[1]
