"""Where an operation's name or tag may go on the chart, as plain functions of what they
are given (the plot frame, the chart's size, the points): the spot it is said by
(:func:`anchor_of`), the places farther off (:func:`far_places`), whether a text fits the
plot at all (:func:`fits`) and how large a text is in a font (:func:`text_size`). Read by
:class:`~workbench.ui.chart.labels.LabelLayer`; the texts' own constants live here too.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsTextItem

from workbench.model.chart.leader_places import far_candidates, lead_from
from workbench.ui.chart.axes import to_view

#: rings of places around a crowd of markers: the first twice, its second time with leaders
CROWD_RINGS = (0.0, 0.0, 14.0, 30.0, 50.0, 75.0, 105.0)
#: a tag is tried this share of the plot's diagonal away from its markers, at most, and
#: its leader is at most this share of the chart's diagonal long
FAR_REACH = 0.5
LEADER_MOST = 0.24
#: air kept between a tag and other texts, pixels ("add_fp32" and a tag "22" side by side
#: read as one label)
TAG_AIR = 3.0
#: and between an operation's name and other texts ("g_512" and "g_1024" side by side
#: read as one name "g_512 g_1024" a pixel apart)
NAME_AIR = 2.0

#: texts' sizes laid out by :func:`text_size`, by font and text, and how many are kept
#: (then forgotten all at once)
_SIZES: dict[tuple[str, str], tuple[float, float]] = {}
_SIZES_KEPT = 1024
_MEASURE: list[QGraphicsTextItem] = []  # (the one text item that lays them out)


def within(xs: np.ndarray | float, ys: np.ndarray | float, frame) -> np.ndarray | bool:
    """Which of the pixels ``(xs, ys)`` lie within the plot ``frame`` (edges included; for
    one pixel, a bool)."""
    left, top, right, bottom = frame
    return (xs >= left) & (xs <= right) & (ys >= top) & (ys <= bottom)


def fits(w: float, h: float, frame) -> bool:
    """Whether a ``w`` × ``h`` text could lie within the plot ``frame`` at all (a place the
    layout takes lies inside the plot; a pixel's slack for rounding)."""
    return w <= frame[2] - frame[0] + 1.0 and h <= frame[3] - frame[1] + 1.0


def text_size(font: QFont, text: str) -> tuple[float, float]:
    """The width and height of a text item saying ``text`` in ``font``: laid out once by a
    text item of that font, and kept by font and text."""
    key = (font.key(), text)
    size = _SIZES.get(key)
    if size is None:
        if not _MEASURE:
            _MEASURE.append(QGraphicsTextItem())
        item = _MEASURE[0]
        item.setFont(font)
        item.setPlainText(text)
        rect = item.boundingRect()
        size = (rect.width(), rect.height())
        if len(_SIZES) >= _SIZES_KEPT:
            _SIZES.clear()
        _SIZES[key] = size
    return size


def anchor_of(points, op_id: int, t, frame) -> tuple[float, float]:
    """Where an operation's name is said, in scene pixels (``t``: the view's transform
    ``(ax, bx, ay, by)``): by the point that carries it (``points.label_point``), or, when
    that one is out of the plot ``frame``, by the highest of its points in it (its leader
    ran out of the plot to a marker not seen)."""
    point = points.label_point(op_id)
    ax, bx, ay, by = t
    # (plain numbers: the same sums as an array's, without numpy's cost for one)
    sx, sy = to_view(point.x) * ax + bx, to_view(point.y) * ay + by
    left, top, right, bottom = frame
    if left <= sx <= right and top <= sy <= bottom:
        return float(sx), float(sy)
    rows = points.rows_of(points.keys_of(op_id))
    if len(rows):
        xs = np.asarray(points.xy[rows, 0], float) * ax + bx
        ys = np.asarray(points.xy[rows, 1], float) * ay + by
        seen = within(xs, ys, frame)
        if seen.any():
            best = int(np.argmin(np.where(seen, ys, np.inf)))  # (the highest on screen)
            return float(xs[best]), float(ys[best])
    return float(sx), float(sy)


def in_plot(xs: list[float], ys: list[float], frame) -> tuple[list[float], list[float]]:
    """Of the points ``xs``, ``ys`` (scene pixels) that a name is said beside, those within
    the plot ``frame`` where some are: no leader runs to a marker out of the plot, half
    drawn at its edge or not at all, while one of its own is in view."""
    seen = within(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), frame)
    if not seen.any() or seen.all():
        return xs, ys
    kept = seen.tolist()
    return ([x for x, ok in zip(xs, kept, strict=True) if ok],
            [y for y, ok in zip(ys, kept, strict=True) if ok])


def far_places(sx: float, sy: float, w: float, h: float, radius: float, frame,
               chart_size: tuple[float, float], lead=None):
    """The places farther off (:func:`far_candidates`, each with its leader: from the
    nearest of the markers ``lead``, ``(xs, ys, half-size)``, where given) for a ``w`` ×
    ``h`` text that finds none beside its mark at ``(sx, sy)``, in the plot ``frame`` of a
    chart of ``chart_size``: a function that makes them when first asked (read-only, the
    same array for the same text, mark and plot: see :func:`_far_rows`)."""
    diagonal = math.hypot(frame[2] - frame[0], frame[3] - frame[1])
    most = min(FAR_REACH * diagonal, LEADER_MOST * math.hypot(*chart_size))
    step = max(6.0, diagonal / 80.0)
    made: list[np.ndarray] = []  # (asked for once: a tag with no place is tried again)

    def far():
        if not made:  # (a crowd's markers made a key only when asked: a model's are many)
            led = None if not lead else (tuple(map(float, lead[0])),
                                         tuple(map(float, lead[1])), float(lead[2]))
            made.append(_far_rows(float(sx), float(sy), float(w), float(h), float(radius),
                                  tuple(map(float, frame)), most, step, led))
        return made[0]
    return far


#: far places kept (by mark, text size and plot: a roof's value led to its line is asked for
#: again at each edit of an operation, its line unmoved). A few: each is a few hundred kB,
#: and a tag's, around points that move at each edit, is seldom asked for again
FAR_KEPT = 4


@functools.lru_cache(maxsize=FAR_KEPT)
def _far_rows(sx: float, sy: float, w: float, h: float, radius: float, frame: tuple,
              most: float, step: float, lead: tuple | None) -> np.ndarray:
    """:func:`far_places`' rows, read-only."""
    places = far_candidates(sx, sy, w, h, radius, frame, most, step)
    if lead:
        places = lead_from(places, *lead)
        places.setflags(write=False)
    return places
