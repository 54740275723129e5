"""A text's candidate places, in the order the text layout
(:mod:`~workbench.model.chart.placement`) tries them: around a marker, along a sloped or
flat line, by a corner. Device units (pixels, y downwards), free of Qt."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from workbench.model.chart.occupancy import Rect, clip_segment

__all__ = ["Candidate", "NEAR_GAP", "point_candidates", "as_array", "sloped_candidates",
           "flat_candidates", "corner_candidates"]


class Candidate(NamedTuple):
    """A text box's top-left corner; ``leader`` the thin line ``(x0, y0, x1, y1)`` from the
    marker's edge to the box, for a place away from the marker."""

    left: float
    top: float
    leader: tuple[float, float, float, float] | None = None


def _directions() -> tuple[np.ndarray, np.ndarray]:
    """Unit offsets of the sixteen directions of the far rings, and how each places its
    box (fraction of the width and height left of / above the nearest point)."""
    angles = np.radians([-157.5, -135.0, -112.5, -67.5, -22.5, 22.5, 67.5, 157.5])
    ux, uy = np.cos(angles), np.sin(angles)
    fx = np.where(ux < -0.38, 1.0, np.where(ux > 0.38, 0.0, 0.5))
    fy = np.where(uy < -0.38, 1.0, np.where(uy > 0.38, 0.0, 0.5))
    return np.column_stack((ux, uy)), np.column_stack((fx, fy))


_FAR_DIRECTIONS = _directions()
#: the nearest places lie this many pixels beyond a marker's half-size: clear of its cells
#: (its box and air, rounded out to whole cells) and a text's pad, and no farther (a short
#: tag farther off reads as standing alone)
NEAR_GAP = 5.0
#: the eight near places: (x offset in g, y offset in g, fraction of w left, of h above)
_NEAR = np.array([
    (1, 0, 0.0, 0.5),  # right
    (-1, 0, 1.0, 0.5),  # left
    (1, -1, 0.0, 1.0),  # above right
    (-1, -1, 1.0, 1.0),  # above left
    (0, -1, 0.5, 1.0),  # above
    (0, 1, 0.5, 0.0),  # below
    (1, 1, 0.0, 0.0),  # below right
    (-1, 1, 1.0, 0.0),  # below left
], dtype=float)
_NEAR_LEFT_FIRST = _NEAR[[1, 0, 3, 2, 4, 5, 7, 6]]


def point_candidates(x: float, y: float, w: float, h: float, radius: float,
                     rings: Sequence[float] = (0.0, 14.0, 30.0, 50.0, 75.0, 105.0),
                     first: str = "right") -> np.ndarray:
    """Places around a marker at ``(x, y)`` of half-size ``radius`` for a ``w`` × ``h``
    text: right, left, the four diagonals, above and below next to it, then the same and
    eight more directions farther out (``rings`` pixels beyond the first ring), those with a
    leader line from the marker's edge to the box. Rows ``left, top, x0, y0, x1, y1`` (the
    leader; nan when none)."""
    around = _around_origin(float(w), float(h), float(radius), tuple(rings), first)
    return around + np.array((x, y, x, y, x, y))


#: the text sizes whose candidates are kept: a full placing asks for at most a few dozen
#: (28 for the real-kernels example, 16 for 100 operations); each is 2–5 KB, and every edit
#: that changes a text's width asks for new ones, so more than this would keep growing
#: over a working session (4,096 of them, 10 MB, over 10,000 edits)
AROUND_KEPT = 256


@functools.lru_cache(maxsize=AROUND_KEPT)
def _around_origin(w: float, h: float, radius: float, rings: tuple[float, ...],
                   first: str) -> np.ndarray:
    """The candidates of :func:`point_candidates` around (0, 0), read-only: kept per text
    size, radius and rings (a full placing asks for the same ones for every marker; a
    crowd's radius, its spread, changes as its points move: all rings at once)."""
    dx, dy, fx, fy, extra, led = _ring_rows(rings, first)
    g = radius + NEAR_GAP + extra  # clear of the marker's cells (rounded out), the air
    lefts = dx * g - fx * w
    tops = dy * g - fy * h
    out = np.full((len(g), 6), np.nan)
    out[:, 0], out[:, 1] = lefts, tops
    # beyond the first ring, a leader from the marker's edge to the nearest point of the box
    lefts, tops = lefts[led:], tops[led:]
    nx = np.minimum(np.maximum(0.0, lefts), lefts + w)  # (np.clip, without its wrapper)
    ny = np.minimum(np.maximum(0.0, tops), tops + h)
    d = np.hypot(nx, ny)
    d[d == 0] = 1.0
    start = radius + 1.5
    out[led:, 2] = nx / d * start
    out[led:, 3] = ny / d * start
    out[led:, 4], out[led:, 5] = nx, ny
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=16)
def _ring_rows(rings: tuple[float, ...], first: str) -> tuple:
    """The directions of :func:`_around_origin`'s places, ring by ring (the eight near ones,
    then, beyond the first ring, the far ones): x and y offsets in units of the ring's
    distance, fractions of the width and height left of and above that point, the ring's
    distance beyond the first, and where the places with a leader begin."""
    near = _NEAR_LEFT_FIRST if first == "left" else _NEAR
    ring = np.vstack((near, np.column_stack(_FAR_DIRECTIONS)))  # (beyond the first ring)
    blocks = [near if not k else ring for k in range(len(rings))]
    rows = np.column_stack((np.concatenate(blocks),
                            np.repeat(rings, [len(block) for block in blocks])))
    columns = np.ascontiguousarray(rows.T)  # (each a row of it, read-only as it is)
    columns.flags.writeable = False
    return (*columns, len(near))


def as_array(candidates) -> np.ndarray:
    """Candidates as rows ``left, top, x0, y0, x1, y1`` (leader nan when none)."""
    if isinstance(candidates, np.ndarray):
        return candidates
    out = np.full((len(candidates), 6), np.nan)
    for i, c in enumerate(candidates):
        out[i, 0], out[i, 1] = c.left, c.top
        if c.leader is not None:
            out[i, 2:] = c.leader
    return out


def sloped_candidates(x0: float, y0: float, x1: float, y1: float, w: float, h: float,
                      frame: Rect, gap: float = 8.0,
                      fractions: Sequence[float] = (0.12, 0.25, 0.4, 0.55, 0.7, 0.85, 0.05,
                                                    0.95)) -> list[Candidate]:
    """Places for a horizontal text along a rising segment (device y down), on the free side
    first (above it, left of the line) then below it, at points spread along its visible
    part."""
    part = clip_segment(x0, y0, x1, y1, frame)
    if part is None:
        return []
    a, b, c, d = part
    above, below = [], []
    for f in fractions:
        px, py = a + (c - a) * f, b + (d - b) * f
        # above-left of the line: the box's bottom-right corner just over the line
        above.append(Candidate(px - w - gap * 0.5, py - h - gap))
        # below-right: the box's top-left corner just under the line
        below.append(Candidate(px + gap * 0.5, py + gap))
    return above + below


def flat_candidates(x0: float, x1: float, y: float, w: float, h: float, frame: Rect,
                    gap: float = 6.0, below_first: bool = False,
                    clear: float = 12.0) -> list[Candidate]:
    """Places for a text over (then under) a flat segment from ``x0`` to ``x1`` at height
    ``y``: right end first, then left end and points between; then the same 2 px farther
    (a box ``gap`` off may touch the line's cells, by where the line falls on their grid)
    and ``clear`` pixels farther, over the markers of the points on it (a compute roof's)."""
    lo, hi = max(x0, frame[0] + 2), min(x1, frame[2] - 2)
    if hi <= lo:
        return []
    # over its own visible part first, then reaching left of it (over the slope below)
    xs = [hi - w - 4, lo + 4] + [lo + (hi - lo - w) * f for f in (0.5, 0.75, 0.25, 0.62,
                                                                  0.38, 0.88, 0.12)]
    xs = [x for x in xs if x + w <= hi + 1e-9 and x >= frame[0]]
    step = max(w / 4, 8.0)
    x = hi - w - 4 - step
    while x >= frame[0] + 2 and x + w > lo:
        if x < lo:
            xs.append(x)
        x -= step
    out = []
    for g in (gap, gap + 2.0, gap + clear):
        above = [Candidate(left, y - h - g) for left in xs]
        below = [Candidate(left, y + g) for left in xs]
        out += below + above if below_first else above + below
    return out


def corner_candidates(x: float, y: float, w: float, h: float, gap: float = 5.0
                      ) -> list[Candidate]:
    """Places next to a corner point (a ridge): below right, above left, below left, above
    right, then a little farther."""
    out = []
    for g in (gap, gap + 10.0):
        out += [Candidate(x + g, y + g), Candidate(x - g - w, y - g - h),
                Candidate(x - g - w, y + g), Candidate(x + g, y - g - h)]
    return out
