"""The texts of the chart other than the operations' names, asked for where a reader pairs
each with what it names: the roofs' values beside their own lines, the ridges' texts by their
diamonds, the regions' names in their corners, the sweeps' crossings and ends by their marks,
the figure's kernel tags by their markers and the compared pairs' figures by their arcs.

Each is handed to the text layout of :class:`~workbench.ui.chart.labels.LabelLayer` (its
``add``), which places it with the operations' names."""

from __future__ import annotations

import functools

import numpy as np

from workbench.model.chart.attribution import Attribution
from workbench.model.chart.leader_places import leaders_off
from workbench.model.chart.occupancy import clip_segment
from workbench.model.chart.placement import (
    Candidate,
    Request,
    as_array,
    corner_candidates,
    flat_candidates,
    point_candidates,
    sloped_candidates,
)
from workbench.ui.chart.axes import to_view
from workbench.ui.chart.drawn_cells import CELL
from workbench.ui.chart.naming import (
    AIR,
    DrawnMarks,
    line_spot,
    line_spots,
    names_spot,
    roof_segments,
    seen_parts,
)
from workbench.ui.chart.point_places import within

#: a ridge's text (naming its machine: told from the other ridges by its words, from the
#: operations' points by place) lies this far from its diamond at most, unled
RIDGE_REACH = 18.0
#: a roof's value lies at most this many pixels from its line (more than a text's height
#: off, it no longer reads as the line's)
ROOF_REACH = 20.0
#: the roofs' and ridges' places kept (by line or corner, text size and plot frame: a few
#: dozen for one view and size; each edit of an operation asks for the same again)
PLACES_KEPT = 256


@functools.lru_cache(maxsize=PLACES_KEPT)
def _line_places(sloped: bool, x0: float, y0: float, x1: float, y1: float, w: float,
                 h: float, frame: tuple, below_first: bool) -> np.ndarray:
    """A roof value's places (:func:`sloped_candidates` along a rising line,
    :func:`flat_candidates` over a flat one at ``y0``), as rows, read-only."""
    places = as_array(sloped_candidates(x0, y0, x1, y1, w, h, frame) if sloped else
                      flat_candidates(x0, x1, y0, w, h, frame, below_first=below_first))
    places.setflags(write=False)
    return places


@functools.lru_cache(maxsize=PLACES_KEPT)
def _corner_places(x: float, y: float, w: float, h: float, radius: float) -> np.ndarray:
    """A ridge text's places: by its diamond's corners, then around it; read-only."""
    places = np.vstack((as_array(corner_candidates(x, y, w, h)),
                        point_candidates(x, y, w, h, radius)[8:]))
    places.setflags(write=False)
    return places


@functools.lru_cache(maxsize=PLACES_KEPT)
def _ridge_places(x: float, y: float, w: float, h: float, radius: float,
                  away: tuple[tuple[float, float], ...]) -> np.ndarray:
    """A ridge text's places (:func:`_corner_places`) but those whose leaders leave the
    diamond within a few degrees of the directions ``away`` (:func:`leaders_off`);
    read-only."""
    places = leaders_off(_corner_places(x, y, w, h, radius), away)
    places.setflags(write=False)
    return places


def _add_roof_text(canvas, frame, lines, drawn: DrawnMarks, px, i: int, add,
                   hide=None) -> None:
    """Ask ``add`` (see :func:`add_chart_texts`) for a place for the roof text ``i`` (of
    :attr:`RoofLayer.roof_texts`) beside its own line (``lines``: :func:`roof_segments`,
    their parts in the plot; ``drawn``: the marks it must not be taken to name), or
    ``hide`` it where no part of its line lies in the plot (a text beside nothing drawn)."""
    roofs, theme = canvas.roofs, canvas.theme
    roof, label = roofs.roof_texts[i]
    xs, ys = px(to_view(np.asarray(roof.xs)), to_view(np.asarray(roof.ys)))
    order = i + (0 if roof.emphasis == "main" and not roof.derated else 100)
    # a roof's value beside its own line, nearer it than any other line; a sloped
    # one's, than any marker too (its line is long: beside a point, "hbm 819 GB/s" read
    # as that point's name)
    # (another machine's roof drawn as the same line is this one's too: a reader cannot
    # tell them apart, and a text beside them names both)
    same = {id(r) for r in roofs.same_line(roof)}
    # (``lines`` are their parts in the plot already)
    own = np.concatenate([seen_parts(np.array([[xs[0], ys[0], xs[1], ys[1]]]), frame)]
                         + [segs for other, segs in lines
                            if id(other) in same and other is not roof])
    if not len(own):
        if hide is not None:
            hide(label)
        return
    others = [seg for other, seg in lines if id(other) not in same]
    names = Attribution(own_lines=own,
                        other_lines=np.concatenate(others) if others
                        else np.zeros((0, 4)),
                        others=drawn.rects() if roof.sloped else np.zeros((0, 4)),
                        reach=ROOF_REACH)
    if roof.sloped:
        # where the lines lie close together (View ▸ All Memory Roofs) a value with
        # no place along its line is said off it, a leader to its part in view (near
        # the middle, where no point sits on it; else to another spot of it)
        seen = clip_segment(float(xs[0]), float(ys[0]), float(xs[-1]), float(ys[-1]),
                            frame) if roof.kind == "memory" else None
        spot = None if seen is None else line_spot(seen, drawn, theme.point_size)
        add(("roof", i), label, "roof",
            lambda w, h, xs=xs, ys=ys: roofs.places_clear_of_lines(_line_places(
                True, float(xs[0]), float(ys[0]), float(xs[1]), float(ys[1]), w, h,
                tuple(frame), False), frame, CELL, (w, h)), order,
            mark=None if spot is None else (*spot, 2.0),
            also=None if spot is None else lambda seen=seen: [
                (*more, 2.0) for more in line_spots(seen, drawn, theme.point_size)[1:]],
            names=names)
    else:
        add(("roof", i), label, "roof",
            lambda w, h, xs=xs, ys=ys, roof=roof: roofs.places_clear_of_lines(_line_places(
                False, float(xs[0]), float(ys[0]), float(xs[1]), float(ys[0]), w, h,
                tuple(frame), bool(roof.derated)), frame, CELL, (w, h)), order,
            names=names)


def _add_ridge_text(canvas, frame, drawn: DrawnMarks, px, i: int, add, hide=None) -> None:
    """Ask ``add`` (see :func:`add_chart_texts`) for a place for the ridge text ``i`` (of
    :attr:`RoofLayer.ridges`) by its diamond, or ``hide`` it where its diamond lies out of
    the plot (its leader would run to the plot's edge, to nothing drawn)."""
    ridge, label = canvas.roofs.ridges[i]
    sx, sy = (float(v) for v in px(to_view(ridge.x), to_view(ridge.y)))
    if not within(sx, sy, frame):
        if hide is not None:
            hide(label)
        return
    size = canvas.theme.ridge_size
    # (its leader leaves the diamond neither left at the compute roof's height nor up
    # along the memory roof's slope: either reads as that roof going on past the ridge)
    xs, ys = px(to_view(np.array([ridge.x / 10.0, ridge.x * 10.0])),
                to_view(np.array([ridge.y, ridge.y * 10.0])))
    # (rounded: a key of the places kept, the same for every pass of a view)
    away = tuple((round(float(x) - sx, 3), round(float(y) - sy, 3))
                 for x, y in zip(xs, ys, strict=True))
    # (its places whose leaders cross a roof's or a ridge's line left out: refused at
    # every edit, they were looked at again each time)
    add(("ridge", i), label, "ridge",
        lambda w, h, sx=sx, sy=sy: canvas.roofs.places_clear_of_lines(
            _ridge_places(sx, sy, w, h, size / 2, away), frame, CELL, (w, h)), i,
        names=names_spot(sx, sy, size, drawn, False, RIDGE_REACH))


def add_chart_texts(canvas, frame, px, marker_rects: np.ndarray, marks, add, hide,
                    roof_lines=None) -> None:
    """Asks ``add(key, label, kind, candidates, order, mark=, own=, names=)`` for a place for
    each text of ``canvas`` other than the operations' names (``px(x, y)``: the view's
    units to scene pixels), within the plot ``frame``; ``marker_rects``
    and ``marks``: the markers drawn, which the texts must not be taken to name. The texts
    not drawn (a region's out of view, a pair's or a sweep's said by another) are hidden
    by ``hide(label)``. ``roof_lines()``: the roofs' :func:`roof_segments`, where the caller
    keeps them."""
    roofs, overlays = canvas.roofs, canvas.overlays
    theme = canvas.theme
    lines = roof_segments(canvas, px, frame) if roof_lines is None else roof_lines()
    drawn = DrawnMarks(marker_rects, marks)
    for i in range(len(roofs.roof_texts)):
        _add_roof_text(canvas, frame, lines, drawn, px, i, add, hide)

    keyed = canvas.key.ridges_in_key()  # (a figure's: said in its key instead)
    for i, (ridge, label) in enumerate(roofs.ridges):
        if ridge.hw_id in keyed:
            hide(label)
            continue
        _add_ridge_text(canvas, frame, drawn, px, i, add, hide)

    for i, (region, curve, label) in enumerate(roofs.regions):
        if not curve.isVisible():
            hide(label)
            continue
        edge = float(px(to_view(region.xs[1] if region.kind == "memory" else region.xs[0]),
                        0.0)[0])

        def region_place(w, h, region=region, edge=edge):
            left, _top, right, bottom = frame
            if region.kind == "memory":
                x = left + 6
                return [] if edge < x + w else [Candidate(x, bottom - h - 5)]
            x = right - 6 - w
            return [] if edge > x else [Candidate(x, bottom - h - 5)]
        add(("region", i), label, "region", region_place, i)

    g = theme.point_size / 2
    owns: dict[int, np.ndarray] = {}

    def own_marks(hw_id: int) -> np.ndarray:
        """:func:`sweep_marks` of a machine, made once for all its sweeps' texts."""
        found = owns.get(hw_id)
        if found is None:
            found = owns[hw_id] = sweep_marks(canvas, px, marker_rects, hw_id)
        return found

    done: set[int] = set()
    for mark, label in overlays.crossing_texts:
        if id(label) in done:
            continue
        done.add(id(label))
        sx, sy = (float(v) for v in px(to_view(mark.x), to_view(mark.y)))
        if not within(sx, sy, frame):
            hide(label)
            continue
        # (a crossing and a sweep's ends are what the user asked to see: said farther
        # off, with a leader, where the roofs' texts crowd them)
        add(("crossing", id(label)), label, "crossing",
            lambda w, h, sx=sx, sy=sy: point_candidates(sx, sy, w, h, g + 3, first="left"),
            mark=(sx, sy, g + 3), own=own_marks(mark.hw_id))
    # a kernel measured on no machine of its own is drawn on each at one spot, every one
    # with the same text (a figure's tag; else a line per machine, see whose_measured):
    # said once
    said_at: set[tuple[str, float, float]] = set()
    for i, (mark, _link, label) in enumerate(overlays.measured_texts):
        sx, sy = (float(v) for v in px(to_view(mark.x), to_view(mark.y)))
        spot = (label.toPlainText(), round(sx, 1), round(sy, 1))
        if not within(sx, sy, frame) or spot in said_at:
            hide(label)
            continue
        said_at.add(spot)
        # (a figure's kernel tag names its marker wherever it goes: farther off, with a
        # leader, where there is no room beside it)
        add(("measured", i), label, "measured",
            lambda w, h, sx=sx, sy=sy: point_candidates(sx, sy, w, h, g * 1.3), i,
            mark=(sx, sy, g * 1.3) if mark.tag else None,
            names=names_spot(sx, sy, 2 * g * 1.3, drawn))
    # the same pair with the same figures on several machines is said once, by whichever
    # of its links has room (the lower arc may be boxed in by the roof and the arc above)
    apexes: dict[tuple, list[int]] = {}
    for i, (link, _curve, _arrow, label) in enumerate(overlays.pair_texts):
        # (a kernel's arrow between two runs is the runs' pair: each kernel's is its own,
        # by where it is, the same on every machine)
        said = (link.first, link.second, label.toPlainText(),
                *((link.x0, link.y0, link.x1, link.y1) if link.comparison_id == -1 else ()))
        if said in apexes:
            hide(label)
        apexes.setdefault(said, []).append(i)
    for links in apexes.values():
        i = links[0]
        add(("pair", i), overlays.pair_texts[i][3], "pair",
            lambda w, h, links=links: np.vstack([
                point_candidates(*overlays.pair_apexes[j], w, h, 2.0) for j in links]), i)
    seen: set[tuple[int, str]] = set()
    for i, (path, end, label) in enumerate(overlays.sweep_texts):
        key = (path.hw_id, label.toPlainText())
        sx, sy = (float(v) for v in px(to_view(path.xs[end]), to_view(path.ys[end])))
        if key in seen or not within(sx, sy, frame):  # the same "m = 1" on one machine: once
            hide(label)
            continue
        seen.add(key)
        add(("sweep", i), label, "sweep",
            lambda w, h, sx=sx, sy=sy, end=end: point_candidates(
                sx, sy, w, h, g * 0.55 + 1, first="left" if end == 0 else "right"), i,
            mark=(sx, sy, g * 0.55 + 1), own=own_marks(path.hw_id),
            names=names_spot(sx, sy, 2 * g * 0.55 + 2, drawn, drawn_size=2 * g * 0.55))


class RoofLines:
    """The roofs' lines in the plot (:func:`roof_segments`) for one frame and view, kept
    where asked (a placing: nothing drawn changes meanwhile, and its texts' requests and
    those of the roof values it says short ask for them) until :meth:`forget`."""

    def __init__(self, canvas) -> None:
        self._canvas = canvas
        self._kept: tuple | None = None

    def of(self, frame: tuple, t, px, keep: bool) -> list:
        """The lines in the plot ``frame`` for the view ``t`` (``px(x, y, t)``: view units
        to pixels); kept for the same frame and view where ``keep``."""
        key = (frame, tuple(t))
        if self._kept is not None and self._kept[0] == key:
            return self._kept[1]
        lines = roof_segments(self._canvas, lambda x, y: px(x, y, t), frame)
        self._kept = (key, lines) if keep else None
        return lines

    def forget(self) -> None:
        self._kept = None


def _adder(text_box, far_places, added: list):
    """The ``add`` of :func:`add_chart_texts` that appends ``(key, label, request)`` to
    ``added`` (``text_box(label)``: the box a text's label keeps clear; ``far_places(x, y,
    w, h, radius)``: its places farther off)."""

    def add(key, label, kind, candidates, order=0.0, mark=None, own=None, names=None,
            also=None):
        """``mark``: ``(x, y, radius)`` of what the text names, for a text that may be
        said farther off, with a leader (which may cross the marks ``own``), when it finds
        no place by it; ``also``: a function making more such spots, tried when that finds none (the place
        with the shortest leader taken); ``names``: what a reader must pair it with."""
        w, h = text_box(label)
        far = far_places(*mark[:2], w, h, mark[2]) if mark else None
        farther = None if also is None else lambda: tuple(
            far_places(*spot[:2], w, h, spot[2]) for spot in also())
        added.append((key, label, Request(key, kind, w, h, candidates(w, h), order,
                                          cross_lines=mark is not None, far=far, own=own,
                                          names=names, farther=farther)))

    return add


def chart_text_requests(canvas, frame, px, marker_rects: np.ndarray, marks, text_box,
                        far_places, memo: dict | None, view: tuple, roof_lines=None) -> list:
    """The requests of :func:`add_chart_texts`, as ``(key, label, request)`` in order
    (``text_box(label)``: the box a text's label keeps clear; ``far_places(x, y, w, h,
    radius)``: its places farther off). With a ``memo`` (while nothing drawn changes: a
    figure's key passes), those made for the same ``view`` (the plot's frame and view,
    the canvas's size) are taken again, the texts not drawn hidden again, where each text
    says what it said and is as large. ``roof_lines``: see :func:`add_chart_texts`."""
    view = (*view, canvas.key.ridges_in_key())  # (the ridges the key says are not asked for)
    made = memo.get(view) if memo is not None else None
    if made is not None and made[2] == _said(made, text_box):
        for label in made[1]:
            label.setVisible(False)
        return made[0]
    added: list = []
    hidden: list = []

    def hide(label) -> None:
        label.setVisible(False)
        hidden.append(label)

    add_chart_texts(canvas, frame, px, marker_rects, marks,
                    _adder(text_box, far_places, added), hide, roof_lines)
    if memo is not None:
        memo[view] = (added, hidden, _said((added, hidden), text_box))
    return added


def roof_text_requests(canvas, frame, px, marker_rects: np.ndarray, marks, text_box,
                       far_places, indices, ridges=(), roof_lines=None) -> list:
    """The requests of the roof texts ``indices`` and the ridge texts ``ridges`` alone, as
    :func:`chart_text_requests` makes them (``roof_lines``: see :func:`add_chart_texts`)."""
    added: list = []
    add = _adder(text_box, far_places, added)
    lines = ([] if not len(indices) else roof_segments(canvas, px, frame) if roof_lines is None
             else roof_lines())
    drawn = DrawnMarks(marker_rects, marks)
    for i in indices:
        _add_roof_text(canvas, frame, lines, drawn, px, i, add)
    for i in ridges:
        _add_ridge_text(canvas, frame, drawn, px, i, add)
    return added


def _said(made: tuple, text_box) -> list:
    """What each text of ``made`` (its requests and the texts hidden) says now, and its
    box."""
    labels = [label for _key, label, _request in made[0]] + made[1]
    return [(label.toPlainText(), text_box(label)) for label in labels]


def sweep_marks(canvas, px, marker_rects: np.ndarray, hw_id: int) -> np.ndarray:
    """The boxes (rows ``left, top, right, bottom``) of the sweep samples and ridge
    crossings drawn on machine ``hw_id``: a sweep's texts say where its path goes, their
    leaders may cross its marks."""
    theme = canvas.theme
    xs, ys, sizes = [], [], []
    for path, _curve in canvas.overlays.sweep_paths_drawn:
        if path.hw_id != hw_id:
            continue
        if path.dots:
            xs += list(path.xs)
            ys += list(path.ys)
            sizes += [theme.point_size * 0.55] * len(path.xs)
        for mark in path.crossings:
            xs.append(mark.x)
            ys.append(mark.y)
            sizes.append(theme.point_size + 5)
    if not xs:
        return np.zeros((0, 4))
    sx, sy = px(to_view(np.asarray(xs, dtype=float)), to_view(np.asarray(ys, dtype=float)))
    half = np.asarray(sizes) / 2 + AIR
    own = np.column_stack((sx - half, sy - half, sx + half, sy + half))
    # and the markers those marks touch (a crossing at a ridge lies on its operation's
    # point and the ridge's mark: every way out of it passes over one)
    rects = marker_rects
    ridges = canvas.roofs.ridge_marks
    rx, ry = ridges.getData() if ridges.isVisible() else (None, None)
    if rx is not None and len(rx):
        qx, qy = px(rx, ry)
        half = theme.ridge_size / 2 + AIR
        rects = np.vstack((rects.reshape(-1, 4),
                           np.column_stack((qx - half, qy - half, qx + half, qy + half))))
    if len(rects):
        near = canvas.theme.point_size
        r, o = rects[:, None, :], own[None, :, :]
        touch = ((r[..., 0] < o[..., 2] + near) & (r[..., 2] > o[..., 0] - near)
                 & (r[..., 1] < o[..., 3] + near) & (r[..., 3] > o[..., 1] - near)).any(axis=1)
        own = np.vstack((own, rects[touch]))
    return own

