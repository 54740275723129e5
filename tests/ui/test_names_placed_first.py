"""A pass of the figure key that leaves a name of an operation out is followed by another that
places every text again, so such a pass places the names and tags alone
(:func:`~workbench.ui.chart.text_requests.names_alone`): it must leave out exactly the names
a placing of every text would, and the figure must come out the same, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES

from workbench.io.sessions import load_session
from workbench.model.chart.placement import (
    PRIORITIES,
    Candidate,
    Occupancy,
    Request,
    TextLayout,
    point_candidates,
)
from workbench.ui.chart import labels as labels_module
from workbench.ui.chart.text_requests import names_alone
from workbench.ui.figures.export import figure_bytes, resolve_size

FRAME = (0.0, 0.0, 400.0, 300.0)
KINDS = ("operation", "crowd", "measured", "roof", "ridge", "sweep")


def _scene(seed: int) -> tuple[Occupancy, dict]:
    """A crowded plot (lines, markers) and texts of every kind around random points: names,
    tags with markers of their own and places farther off, and the chart's other texts."""
    rng = np.random.default_rng(seed)
    occ = Occupancy(FRAME)
    for _ in range(5):
        occ.add_polyline(rng.uniform(-20, 420, 3), rng.uniform(-20, 320, 3), 2.5, line=True)
    x, y = rng.uniform(0, 400, 50), rng.uniform(0, 300, 50)
    occ.add_rects(np.column_stack((x - 4, y - 4, x + 4, y + 4)))
    requests = {}
    for i in range(45):
        sx, sy = rng.uniform(0, 400), rng.uniform(0, 300)
        w, h = rng.uniform(10, 80), rng.uniform(8, 24)
        kind = KINDS[i % len(KINDS)]
        tag = kind in ("operation", "crowd") and i % 4 == 0
        own = np.array([[sx - 4, sy - 4, sx + 4, sy + 4]]) if tag else None
        far = ((lambda sx=sx, sy=sy, w=w, h=h: np.array(
            [[sx + d, sy - d - h, sx + 4, sy - 4, sx + d, sy - d] for d in (20.0, 35.0, 50.0)]))
            if tag else None)
        key = ("point", i) if kind in ("operation", "crowd") else (kind, i)
        requests[key] = Request(key, kind, w, h, point_candidates(sx, sy, w, h, 4.0),
                                order=float(rng.uniform()), cross_lines=tag, own=own, far=far)
    return occ, requests


def _names(requests: dict) -> set:
    """The keys of the operations' names (not tags: those are tried again)."""
    return {k for k, r in requests.items()
            if r.priority <= PRIORITIES["operation"] and r.own is None}


@pytest.mark.parametrize("seed", range(30))
def test_names_alone_leave_out_the_names_every_text_would(seed):
    occ, requests = _scene(seed)
    names = _names(requests)
    full = TextLayout(occ.copy())
    full.place_all(requests.values())
    left_out = names - set(full.placed)
    alone = names_alone(occ, requests, lambda placed: names - set(placed))
    if not left_out:
        assert alone is None  # (every name placed: the placing of every text is the one)
        return
    assert alone is not None
    layout, placements = alone
    assert names - set(layout.placed) == left_out
    # the names and tags placed where the placing of every text puts them
    for key in names:
        assert (layout.placed.get(key) is None) == (full.placed.get(key) is None)
        if key in layout.placed:
            assert layout.placed[key].rect == full.placed[key].rect
    # and no other text: they are placed by the next pass
    assert all(requests[k].priority <= PRIORITIES["operation"] for k in placements)


def test_not_when_a_text_left_out_is_given_room_first():
    for seed in range(30):  # (the first scene in which names are left out)
        occ, requests = _scene(seed)
        names = _names(requests)
        if names_alone(occ, requests, lambda placed, names=names: names - set(placed)):
            break
    else:
        pytest.fail("no scene leaves a name out")
    crossing = Request(("crossing", 1), "crossing", 30.0, 12.0, [Candidate(10.0, 10.0)])
    requests[crossing.key] = crossing
    assert names_alone(occ, requests, lambda placed: names - set(placed)) is None


def _example(stem: str):
    return load_session(next(p for p in EXAMPLES if p.stem == stem))


@pytest.mark.parametrize("all_levels", [False, True])
def test_the_figure_is_the_one_every_pass_placing_every_text_makes(qapp, monkeypatch, all_levels):
    """The real-kernels figure, whose key's passes leave names out, with the names placed
    alone in those passes and with every text placed in every pass: the same SVG. With
    every memory level drawn (whose values the key names where they find no place) no pass
    places names alone."""
    session = _example("real_kernels_h100_h200")
    session.view.all_levels = all_levels
    fig = resolve_size(None, None, None, None, "light")
    used = []

    def counted(*args):
        placing = names_alone(*args)
        used.append(placing is not None)
        return placing

    monkeypatch.setattr(labels_module, "names_alone", counted)
    shortcut = figure_bytes(session, "svg", fig)
    assert any(used) != all_levels
    monkeypatch.setattr(labels_module, "names_alone", lambda *args: None)
    assert figure_bytes(session, "svg", fig) == shortcut
