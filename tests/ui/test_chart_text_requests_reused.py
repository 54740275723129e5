"""A figure's key is laid out in several passes over one drawing; passes made for the same
plot frame and view ask the text layout for the texts other than the operations' names
(roof values, ridges, measured kernels, pairs) once, not once a pass, unless a text now
says something else. What is asked for must be what would be asked for afresh: the same,
but for the places of a roof's or a ridge's text that the lines refuse at every placing,
left out when the same places are asked for again (see RoofLayer.places_clear_of_lines)."""

from __future__ import annotations

import numpy as np
from conftest import EXAMPLES, open_canvas

from workbench.model.chart.placement import as_array
from workbench.ui.chart.drawn_cells import CELL

EXAMPLE = next(p for p in EXAMPLES if p.name == "real_kernels_h100_h200.yaml")


def _arr(values) -> tuple:
    """An array's shape and bytes (equal for equal sums, gaps (NaN) too)."""
    a = np.asarray(values, dtype=float)
    return a.shape, a.tobytes()


def _asked(request, canvas) -> tuple:
    """What a request asks for, its arrays as bytes (to compare two made apart); of a
    roof's or a ridge's text, its places but those the lines refuse."""
    far = request.far() if callable(request.far) else request.far
    names = request.names
    places = as_array(request.candidates)
    if request.kind in ("roof", "ridge"):
        f = canvas.view_box.sceneBoundingRect()
        frame = (f.left(), f.top(), f.right(), f.bottom())
        places = places[~canvas.roofs.places_refused(places, frame, CELL,
                                                     (request.width, request.height))]
    return (request.key, request.kind, request.width, request.height,
            _arr(places), request.order,
            request.cross_lines, request.air,
            None if request.own is None else _arr(request.own),
            None if far is None else _arr(far),
            None if names is None else [_arr(getattr(names, side))
                                        for side in ("own", "others", "own_lines",
                                                     "other_lines")])


def _chart_texts(requests: dict) -> list:
    return [key for key in requests if key[0] != "point"]


def test_a_second_pass_for_the_same_view_takes_the_texts_asked_for(qtbot):
    canvas = open_canvas(qtbot, EXAMPLE, (1100, 700))
    labels = canvas.labels
    with labels.reusing_occupancy():
        labels.occupancy()
        first = labels.requests()
        labels.occupancy()
        again = labels.requests()
    keys = _chart_texts(first)
    assert {key[0] for key in keys} >= {"roof", "ridge", "measured"}
    assert list(again) == list(first)
    assert all(again[key] is first[key] for key in keys)
    # and they ask for what a placing on its own asks for
    labels.occupancy()
    fresh = labels.requests()
    assert ([_asked(fresh[key], canvas) for key in keys]
            == [_asked(first[key], canvas) for key in keys])


def test_a_text_that_says_more_is_asked_for_afresh(qtbot):
    canvas = open_canvas(qtbot, EXAMPLE, (1100, 700))
    labels = canvas.labels
    roof_label = canvas.roofs.roof_texts[0][1]
    with labels.reusing_occupancy():
        labels.occupancy()
        first = labels.requests()
        said = roof_label.toPlainText()
        roof_label.setText(said + " (and more)")
        labels.occupancy()
        again = labels.requests()
    assert again[("roof", 0)] is not first[("roof", 0)]
    assert again[("roof", 0)].width > first[("roof", 0)].width
    labels.occupancy()
    fresh = labels.requests()
    assert _asked(fresh[("roof", 0)], canvas) == _asked(again[("roof", 0)], canvas)
