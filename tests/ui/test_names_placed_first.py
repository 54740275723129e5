"""A pass of the chart key that leaves a name of an operation out is followed by another that
places every text again, so such a pass stops once the names and tags are placed
(``names_missed`` of :meth:`~workbench.model.chart.placement.TextLayout.place_all`): it must
leave out exactly the names a placing of every text would, a pass that leaves none out must
be that placing, and the figure must come out the same, byte for byte."""

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


def _stopping(occ, requests, names):
    layout = TextLayout(occ.copy())
    return layout, layout.place_all(requests.values(), lambda placed: names - set(placed))


@pytest.mark.parametrize("seed", range(30))
def test_a_pass_stopped_at_the_names_leaves_out_the_names_every_text_would(seed):
    occ, requests = _scene(seed)
    names = _names(requests)
    full = TextLayout(occ.copy())
    out = full.place_all(requests.values())
    left_out = names - set(full.placed)
    layout, placements = _stopping(occ, requests, names)
    if not left_out:  # (every name placed: the placing of every text, whole)
        assert list(placements.items()) == list(out.items())
        assert list(layout.placed.items()) == list(full.placed.items())
        return
    assert names - set(layout.placed) == left_out
    # the names and tags placed where the placing of every text puts them
    for key in names:
        assert (layout.placed.get(key) is None) == (full.placed.get(key) is None)
        if key in layout.placed:
            assert layout.placed[key].rect == full.placed[key].rect
    # and no other text: they are placed by the next pass
    assert placements and all(requests[k].priority <= PRIORITIES["operation"]
                              for k in placements)


def test_not_when_a_text_left_out_is_given_room_first():
    for seed in range(30):  # (the first scene in which names are left out)
        occ, requests = _scene(seed)
        names = _names(requests)
        if len(_stopping(occ, requests, names)[1]) < len(requests):
            break
    else:
        pytest.fail("no scene leaves a name out")
    crossing = Request(("crossing", 1), "crossing", 30.0, 12.0, [Candidate(10.0, 10.0)])
    requests[crossing.key] = crossing
    assert len(_stopping(occ, requests, names)[1]) == len(requests)


def _example(stem: str):
    return load_session(next(p for p in EXAMPLES if p.stem == stem))


_PLACE_ALL = TextLayout.place_all


def _stops(monkeypatch) -> list:
    """Whether each placing stopped at the names (a list that grows by one for each)."""
    stopped: list = []

    def counted(self, requests, names_missed=None):
        requests = list(requests)
        out = _PLACE_ALL(self, requests, names_missed)
        stopped.append(len(out) < len(requests))
        return out

    monkeypatch.setattr(TextLayout, "place_all", counted)
    return stopped


def _never_stopping(monkeypatch) -> None:
    monkeypatch.setattr(TextLayout, "place_all",
                        lambda self, requests, names_missed=None: _PLACE_ALL(self, requests))


@pytest.mark.parametrize("all_levels", [False, True])
def test_the_figure_is_the_one_every_pass_placing_every_text_makes(qapp, monkeypatch, all_levels):
    """The real-kernels figure, whose key's passes leave names out, with those passes stopped
    at the names and with every text placed in every pass: the same SVG. With every memory
    level drawn (whose values the key names where they find no place) a pass of the key
    stops only where it tries rows of values or ridges in the key, which a name left out
    refuses."""
    session = _example("real_kernels_h100_h200")
    session.view.all_levels = all_levels
    fig = resolve_size(None, None, None, None, "light")
    stopped = _stops(monkeypatch)
    shortcut = figure_bytes(session, "svg", fig)
    assert any(stopped)
    _never_stopping(monkeypatch)
    assert figure_bytes(session, "svg", fig) == shortcut


def test_on_screen_too(qapp, monkeypatch):
    """The live chart's key passes stop at the names too (the window of the Llama FFN
    example, whose first passes leave names out): the texts shown are the ones every pass
    placing every text shows."""
    from PySide6.QtWidgets import QApplication

    from workbench.ui.window.main_window import MainWindow

    def shown(place_all_texts: bool):
        if place_all_texts:
            _never_stopping(monkeypatch)
        window = MainWindow()
        window.resize(1024, 700)
        window.set_session(_example("llama_ffn"), None)
        window.show()
        QApplication.processEvents()
        window.canvas.relayout()
        labels = window.canvas.labels
        # (by kind and text: the second window's operations have other ids)
        out = sorted((key[0], label.toPlainText(), label.pos().x(), label.pos().y())
                     for key, (label, _r) in labels._label_of.items() if label.isVisible())
        window.document.mark_clean()
        window.close()
        return out

    stopped = _stops(monkeypatch)
    quick = shown(False)
    assert any(stopped)
    assert quick == shown(True)
