"""Places for a text farther from its marker, each joined to it by a leader line: the
far places of a tag with no room beside its marker (:func:`far_candidates`), and leaders
that leave the marker of a crowd nearest their far end (:func:`lead_from`), and places
whose leaders would run on along a line (:func:`leaders_off`). Device units
(pixels, y downwards), free of Qt; the rows are those of
:func:`~workbench.model.chart.placement.point_candidates`: ``left, top, x0, y0, x1, y1``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.model.chart.occupancy import Rect

__all__ = ["far_candidates", "lead_from", "leaders_off"]


def far_candidates(x: float, y: float, w: float, h: float, radius: float, frame: Rect,
                   most: float, step: float) -> np.ndarray:
    """Places anywhere in ``frame`` for a ``w`` × ``h`` text whose nearest point lies at most
    ``most`` pixels from a marker (or a crowd of them) at ``(x, y)`` of half-size ``radius``,
    every ``step`` pixels, nearest first, each with its leader (rows as
    :func:`point_candidates`'): a tag with no place beside its marker, said farther off."""
    left, top, right, bottom = frame
    lefts = np.arange(left, right - w, step)
    tops = np.arange(top, bottom - h, step)
    if not len(lefts) or not len(tops):
        return np.zeros((0, 6))
    # the nearest point of a box, and its nearest corner, depend on its column (x) or its
    # row (y) alone: worked out for each column and row, then taken for each place
    near_x = np.minimum(np.maximum(x, lefts), lefts + w) - x  # (np.clip, without its wrapper)
    near_y = np.minimum(np.maximum(y, tops), tops + h) - y
    corner_x = np.where(np.abs(lefts - x) <= np.abs(lefts + w - x), lefts, lefts + w) - x
    corner_y = np.where(np.abs(tops - y) <= np.abs(tops + h - y), tops, tops + h) - y
    d = np.hypot(near_x[None, :], near_y[:, None]).ravel()
    kept = ((d > radius + 6.0) & (d <= most)).nonzero()[0]
    row, col = np.divmod(kept, len(lefts))
    d = d[kept]
    # each place twice: the leader to the box's nearest point, and to its nearest corner
    # (a box right below a crowd: a slanted leader misses the markers under it)
    order = np.argsort(np.concatenate((d, d + 0.5)), kind="stable")
    twice = order >= len(kept)
    which = order - twice * len(kept)
    row, col = row[which], col[which]
    nx = np.where(twice, corner_x[col], near_x[col])
    ny = np.where(twice, corner_y[row], near_y[row])
    start = (radius + 1.5) / np.maximum(np.hypot(nx, ny), 1e-9)
    out = np.column_stack((lefts[col], tops[row], x + nx * start, y + ny * start, x + nx,
                           y + ny))
    out.flags.writeable = False
    return out


def lead_from(cands: np.ndarray, xs: Sequence[float], ys: Sequence[float], radius: float
              ) -> np.ndarray:
    """``cands`` (rows as :func:`point_candidates`') with each leader starting at the edge
    of the marker nearest its far end, of those centred at ``xs``, ``ys`` of half-size
    ``radius``: a text placed around a crowd of markers is joined to one of them, not to a
    point between them."""
    if len(xs) < 2 or not len(cands):
        return cands
    cands = np.array(cands, dtype=float)
    has = ~np.isnan(cands[:, 2])
    ends = cands[has, 4:6]
    cx, cy = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    d2 = (ends[:, 0, None] - cx[None, :]) ** 2 + (ends[:, 1, None] - cy[None, :]) ** 2
    nearest = d2.argmin(axis=1)
    ox, oy = cx[nearest], cy[nearest]
    dx, dy = ends[:, 0] - ox, ends[:, 1] - oy
    d = np.maximum(np.hypot(dx, dy), 1e-9)
    start = np.minimum(radius + 1.5, d)
    cands[has, 2] = ox + dx / d * start
    cands[has, 3] = oy + dy / d * start
    return cands


#: a leader this many degrees or less off a line's direction runs on along it
ALONG_DEGREES = 8.0


def leaders_off(cands: np.ndarray, directions: Sequence[tuple[float, float]],
                degrees: float = ALONG_DEGREES) -> np.ndarray:
    """``cands`` less the places whose leaders leave their mark within ``degrees`` of one
    of ``directions`` (``(dx, dy)`` each, from the mark): a leader that runs on from a
    line's end, in its direction, reads as the line going on (a ridge's leader drawn left
    at its compute roof's height is that roof continuing past the ridge). Places without a
    leader are kept."""
    dx, dy = cands[:, 4] - cands[:, 2], cands[:, 5] - cands[:, 3]
    length = np.hypot(dx, dy)
    along = np.zeros(len(cands), dtype=bool)
    cos = np.cos(np.radians(degrees))
    for ux, uy in directions:
        norm = float(np.hypot(ux, uy))
        if not norm > 0.0:
            continue
        with np.errstate(invalid="ignore"):
            along |= (dx * ux + dy * uy) >= cos * length * norm
    along &= length > 0
    return cands[~along] if along.any() else cands
