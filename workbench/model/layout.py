"""Where the chart's texts go: one layout for the live canvas and every figure.

Everything here is in **device units** (the view's pixels, y downwards) and free of Qt: the
view measures its texts and maps its data to pixels, this module decides where each text
goes, and the view puts it there.

The plot area is an occupancy grid (:class:`Occupancy`) of small cells, each counting what
covers it: roofs, interconnect segments, ridge lines, markers, sweep paths and crossing marks
(drawn with their line width and a little air), the legend and every label already placed.
A text is placed at the first of its candidate places (:func:`point_candidates`,
:func:`sloped_candidates`, :func:`flat_candidates`, :func:`corner_candidates`) whose box
lies inside the plot and covers no occupied cell; a far place is joined to its marker by a
thin leader line, itself kept clear of data and texts. Texts are placed in order of
priority (:data:`PRIORITIES`: the selected operation, then operations, roof values, ridge
labels, sweep labels); a text without a clean place is not drawn (its information stays in
the tooltip and the tables). Counts, not flags, so that a marker that moves can be taken
out of the grid and put back elsewhere: an edit re-places only the texts it touches.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "PRIORITIES", "Occupancy", "Request", "Placement", "TextLayout", "point_candidates",
    "sloped_candidates", "flat_candidates", "corner_candidates", "legend_corner",
    "wrap_title",
]

#: Who yields to whom: lower places first.
PRIORITIES = {"selected": 0, "operation": 1, "roof": 2, "ridge": 3, "pair": 4, "crossing": 4,
              "measured": 4, "sweep": 5, "region": 6}

Rect = tuple[float, float, float, float]  # left, top, right, bottom


class Occupancy:
    """Counts of what covers each ``cell``-pixel square of the plot ``frame``
    ``(left, top, right, bottom)``."""

    def __init__(self, frame: Rect, cell: float = 2.0) -> None:
        self.frame = tuple(float(v) for v in frame)
        self.cell = float(cell)
        left, top, right, bottom = self.frame
        self.cols = max(1, math.ceil((right - left) / self.cell))
        self.rows = max(1, math.ceil((bottom - top) / self.cell))
        self.grid = np.zeros((self.rows, self.cols), dtype=np.int32)

    # -- cells ------------------------------------------------------------------------

    def _span(self, rect: Rect) -> tuple[int, int, int, int] | None:
        """Cell rows and columns ``(r0, r1, c0, c1)`` (end exclusive) a rectangle touches,
        clipped to the grid; ``None`` when it misses the grid."""
        left, top = self.frame[0], self.frame[1]
        c = self.cell
        c0 = max(0, math.floor((rect[0] - left) / c))
        c1 = min(self.cols, math.ceil((rect[2] - left) / c))
        r0 = max(0, math.floor((rect[1] - top) / c))
        r1 = min(self.rows, math.ceil((rect[3] - top) / c))
        if c1 <= c0 or r1 <= r0:
            return None
        return r0, r1, c0, c1

    def inside(self, rect: Rect) -> bool:
        f = self.frame
        return rect[0] >= f[0] and rect[1] >= f[1] and rect[2] <= f[2] and rect[3] <= f[3]

    def add_rect(self, rect: Rect, weight: int = 1) -> None:
        span = self._span(rect)
        if span is not None:
            r0, r1, c0, c1 = span
            self.grid[r0:r1, c0:c1] += weight

    def count(self, rect: Rect) -> int:
        """How many covers lie under ``rect`` (cells × covers)."""
        span = self._span(rect)
        if span is None:
            return 0
        r0, r1, c0, c1 = span
        return int(self.grid[r0:r1, c0:c1].sum())

    def occupied(self, rect: Rect) -> bool:
        """True when some cell under ``rect`` is covered."""
        span = self._span(rect)
        if span is None:
            return False
        r0, r1, c0, c1 = span
        return bool(self.grid[r0:r1, c0:c1].any())

    def free(self, rect: Rect) -> bool:
        """True when ``rect`` lies inside the frame and covers no occupied cell."""
        if not self.inside(rect):
            return False
        span = self._span(rect)
        if span is None:
            return True
        r0, r1, c0, c1 = span
        return not self.grid[r0:r1, c0:c1].any()

    def add_rects(self, rects: np.ndarray, weight: int = 1) -> None:
        """Add many rectangles (rows ``left, top, right, bottom``) at once."""
        rects = np.asarray(rects, dtype=float).reshape(-1, 4)
        if not len(rects):
            return
        ok = np.isfinite(rects).all(axis=1)
        rects = rects[ok]
        left, top = self.frame[0], self.frame[1]
        c = self.cell
        c0 = np.clip(np.floor((rects[:, 0] - left) / c), 0, self.cols).astype(int)
        c1 = np.clip(np.ceil((rects[:, 2] - left) / c), 0, self.cols).astype(int)
        r0 = np.clip(np.floor((rects[:, 1] - top) / c), 0, self.rows).astype(int)
        r1 = np.clip(np.ceil((rects[:, 3] - top) / c), 0, self.rows).astype(int)
        keep = (c1 > c0) & (r1 > r0)
        if not keep.any():
            return
        c0, c1, r0, r1 = c0[keep], c1[keep], r0[keep], r1[keep]
        # rectangles of one size share their cell offsets: add them by size, vectorised
        sizes = np.stack((r1 - r0, c1 - c0), axis=1)
        for h, w in np.unique(sizes, axis=0):
            sel = (sizes[:, 0] == h) & (sizes[:, 1] == w)
            dr, dc = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
            rows = (r0[sel][:, None] + dr.ravel()[None, :]).ravel()
            cols = (c0[sel][:, None] + dc.ravel()[None, :]).ravel()
            np.add.at(self.grid, (rows, cols), weight)

    def _line_cells(self, xs: np.ndarray, ys: np.ndarray, half: float) -> np.ndarray | None:
        """Flat indices of the cells within ``half`` pixels of the polyline, each once."""
        xs = np.asarray(xs, dtype=float)
        ys = np.asarray(ys, dtype=float)
        if len(xs) < 2:
            return None
        pieces = []
        step = self.cell * 0.5
        for x0, y0, x1, y1 in zip(xs[:-1], ys[:-1], xs[1:], ys[1:], strict=True):
            clipped = clip_segment(x0, y0, x1, y1, self._grown(half))
            if clipped is None:
                continue
            a, b, c, d = clipped
            n = max(2, math.ceil(math.hypot(c - a, d - b) / step) + 1)
            t = np.linspace(0.0, 1.0, n)
            pieces.append(np.column_stack((a + (c - a) * t, b + (d - b) * t)))
        if not pieces:
            return None
        pts = np.concatenate(pieces)
        reach = math.ceil(half / self.cell)
        offsets = np.arange(-reach, reach + 1)
        col = np.floor((pts[:, 0] - self.frame[0]) / self.cell).astype(int)
        row = np.floor((pts[:, 1] - self.frame[1]) / self.cell).astype(int)
        cols = (col[:, None, None] + offsets[None, None, :]).repeat(len(offsets), axis=1)
        rows = (row[:, None, None] + offsets[None, :, None]).repeat(len(offsets), axis=2)
        cols, rows = cols.ravel(), rows.ravel()
        ok = (cols >= 0) & (cols < self.cols) & (rows >= 0) & (rows < self.rows)
        return np.unique(rows[ok] * self.cols + cols[ok])

    def _grown(self, d: float) -> Rect:
        f = self.frame
        return f[0] - d, f[1] - d, f[2] + d, f[3] + d

    def add_polyline(self, xs, ys, half: float, weight: int = 1) -> None:
        """Cover the cells within ``half`` pixels of the polyline through ``(xs, ys)``."""
        cells = self._line_cells(xs, ys, half)
        if cells is not None and len(cells):
            self.grid.ravel()[cells] += weight

    def line_free(self, xs, ys, half: float) -> bool:
        cells = self._line_cells(xs, ys, half)
        return cells is None or not self.grid.ravel()[cells].any()


def clip_segment(x0: float, y0: float, x1: float, y1: float, rect: Rect
                 ) -> tuple[float, float, float, float] | None:
    """The part of a segment inside ``rect`` (Liang–Barsky), or ``None``."""
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        return None
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - rect[0]), (dx, rect[2] - x0), (-dy, y0 - rect[1]),
                 (dy, rect[3] - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return None
    return x0 + t0 * dx, y0 + t0 * dy, x0 + t1 * dx, y0 + t1 * dy


# ---------------------------------------------------------------------------------------
# candidate places


@dataclass(frozen=True)
class Candidate:
    """A text box's top-left corner; ``leader`` the thin line ``(x0, y0, x1, y1)`` from the
    marker's edge to the box, for a place away from the marker."""

    left: float
    top: float
    leader: tuple[float, float, float, float] | None = None


def point_candidates(x: float, y: float, w: float, h: float, radius: float,
                     rings: Sequence[float] = (0.0, 14.0, 30.0, 50.0, 75.0, 105.0),
                     first: str = "right") -> list[Candidate]:
    """Places around a marker at ``(x, y)`` of half-size ``radius`` for a ``w`` × ``h``
    text: right, left, above, below and the four diagonals next to it, then the same farther
    out (``rings`` pixels beyond the first ring), those with a leader line."""
    out: list[Candidate] = []
    for k, extra in enumerate(rings):
        g = radius + 5.0 + extra  # clear of the marker's cells and the text's air
        d = g
        places = [
            (x + g, y - h / 2),  # right
            (x - g - w, y - h / 2),  # left
            (x + d, y - d - h),  # above right
            (x - d - w, y - d - h),  # above left
            (x - w / 2, y - g - h),  # above
            (x - w / 2, y + g),  # below
            (x + d, y + d),  # below right
            (x - d - w, y + d),  # below left
        ]
        if first == "left":
            places[0], places[1] = places[1], places[0]
            places[2], places[3] = places[3], places[2]
        if k:
            # farther out, eight more directions (the free side of a rising roof is above
            # left of it): boxes whose nearest corner or edge is at distance g
            for angle in (-157.5, -135.0, -112.5, -67.5, -22.5, 22.5, 67.5, 157.5):
                a = math.radians(angle)
                ux, uy = math.cos(a), math.sin(a)
                cx, cy = x + ux * g, y + uy * g  # the box's point nearest the marker
                left = cx - (w if ux < -0.38 else (0.0 if ux > 0.38 else w / 2))
                top = cy - (h if uy < -0.38 else (0.0 if uy > 0.38 else h / 2))
                places.append((left, top))
        for left, top in places:
            leader = None
            if k:
                # from the marker's edge to the nearest point of the box
                nx = min(max(x, left), left + w)
                ny = min(max(y, top), top + h)
                dx, dy = nx - x, ny - y
                d = math.hypot(dx, dy) or 1.0
                start = radius + 1.5
                leader = (x + dx / d * start, y + dy / d * start, nx, ny)
            out.append(Candidate(left, top, leader))
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
                    gap: float = 6.0, below_first: bool = False) -> list[Candidate]:
    """Places for a text over (then under) a flat segment from ``x0`` to ``x1`` at height
    ``y``: right end first, then left end and points between."""
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
    above = [Candidate(left, y - h - gap) for left in xs]
    below = [Candidate(left, y + gap) for left in xs]
    return below + above if below_first else above + below


def corner_candidates(x: float, y: float, w: float, h: float, gap: float = 5.0
                      ) -> list[Candidate]:
    """Places next to a corner point (a ridge): below right, above left, below left, above
    right, then a little farther."""
    out = []
    for g in (gap, gap + 10.0):
        out += [Candidate(x + g, y + g), Candidate(x - g - w, y - g - h),
                Candidate(x - g - w, y + g), Candidate(x + g, y - g - h)]
    return out


# ---------------------------------------------------------------------------------------
# placing


@dataclass
class Request:
    """A text to place: ``key`` names it, ``kind`` gives its priority (see
    :data:`PRIORITIES`), ``width`` × ``height`` its box (the view measures), ``candidates``
    its places in preference order."""

    key: Hashable
    kind: str
    width: float
    height: float
    candidates: list[Candidate]
    order: float = 0.0  # among equal priorities, lower places first

    @property
    def priority(self) -> int:
        return PRIORITIES.get(self.kind, 9)


@dataclass
class Placement:
    key: Hashable
    rect: Rect
    leader: tuple[float, float, float, float] | None = None
    weight: int = field(default=1, repr=False)


class TextLayout:
    """The placed texts over an :class:`Occupancy` of the data."""

    #: air between a text and anything else, pixels
    PAD = 1.0
    #: half width of a leader line's footprint
    LEADER_HALF = 1.0
    #: a leader's first pixels, leaving its marker, are not checked
    LEADER_SKIP = 8.0

    def __init__(self, occupancy: Occupancy) -> None:
        self.occupancy = occupancy
        self.placed: dict[Hashable, Placement] = {}
        self.requests: dict[Hashable, Request] = {}

    def _box(self, cand: Candidate, w: float, h: float) -> Rect:
        return cand.left, cand.top, cand.left + w, cand.top + h

    def _clean(self, cand: Candidate, w: float, h: float) -> bool:
        occ = self.occupancy
        p = self.PAD
        box = self._box(cand, w, h)
        if not occ.inside(box):
            return False
        if occ.occupied((box[0] - p, box[1] - p, box[2] + p, box[3] + p)):
            return False
        if cand.leader is not None:
            # the first pixels leave the marker (and the roof it sits on): not checked
            x0, y0, x1, y1 = cand.leader
            length = math.hypot(x1 - x0, y1 - y0)
            if length <= self.LEADER_SKIP:
                return True
            f = self.LEADER_SKIP / length
            x0, y0 = x0 + (x1 - x0) * f, y0 + (y1 - y0) * f
            if not occ.line_free((x0, x1), (y0, y1), self.LEADER_HALF):
                return False
        return True

    def place(self, request: Request) -> Placement | None:
        """Place one text at its first clean candidate (and reserve its box and leader), or
        return ``None`` when none is clean."""
        self.remove(request.key)
        self.requests[request.key] = request
        w, h = request.width, request.height
        for cand in request.candidates:
            if self._clean(cand, w, h):
                placement = Placement(request.key, self._box(cand, w, h), cand.leader)
                self._reserve(placement, 1)
                self.placed[request.key] = placement
                return placement
        return None

    def place_all(self, requests: Iterable[Request]) -> dict[Hashable, Placement | None]:
        ordered = sorted(requests, key=lambda r: (r.priority, r.order))
        return {r.key: self.place(r) for r in ordered}

    def _reserve(self, placement: Placement, weight: int) -> None:
        self.occupancy.add_rect(placement.rect, weight)
        if placement.leader is not None:
            x0, y0, x1, y1 = placement.leader
            self.occupancy.add_polyline((x0, x1), (y0, y1), self.LEADER_HALF, weight)

    def remove(self, key: Hashable) -> None:
        placement = self.placed.pop(key, None)
        if placement is not None:
            self._reserve(placement, -1)
        self.requests.pop(key, None)

    def hit_by(self, rect: Rect) -> list[Hashable]:
        """Keys of the placed texts whose box (or leader's box) meets ``rect``."""
        out = []
        for key, p in self.placed.items():
            boxes = [p.rect]
            if p.leader is not None:
                x0, y0, x1, y1 = p.leader
                boxes.append((min(x0, x1) - 1, min(y0, y1) - 1, max(x0, x1) + 1,
                              max(y0, y1) + 1))
            for b in boxes:
                if b[0] < rect[2] and rect[0] < b[2] and b[1] < rect[3] and rect[1] < b[3]:
                    out.append(key)
                    break
        return out


def legend_corner(occupancy: Occupancy, w: float, h: float, margin: float = 8.0
                  ) -> tuple[str, Rect] | None:
    """The emptiest corner of the plot for a ``w`` × ``h`` legend: ``(name, rect)`` for
    the first corner it would cover nothing in (top left, top right, bottom right, bottom
    left), or ``None`` when each covers something (the legend then goes outside)."""
    left, top, right, bottom = occupancy.frame
    if w + 2 * margin > right - left or h + 2 * margin > bottom - top:
        return None
    corners = {
        "top-left": (left + margin, top + margin),
        "top-right": (right - margin - w, top + margin),
        "bottom-right": (right - margin - w, bottom - margin - h),
        "bottom-left": (left + margin, bottom - margin - h),
    }
    best = None
    for name, (x, y) in corners.items():
        rect = (x, y, x + w, y + h)
        n = occupancy.count(rect)
        if n == 0:
            return name, rect
        if best is None or n < best[0]:
            best = (n, name, rect)
    return None


def wrap_title(words_width, text: str, room: float) -> list[str]:
    """``text`` on one line when ``words_width(text) <= room``, else on two lines broken at
    the space that balances them best. ``words_width`` measures a string (the view's
    font metrics)."""
    if words_width(text) <= room or " " not in text.strip():
        return [text]
    words = text.split(" ")
    best = None
    for i in range(1, len(words)):
        a, b = " ".join(words[:i]), " ".join(words[i:])
        widest = max(words_width(a), words_width(b))
        if best is None or widest < best[0]:
            best = (widest, [a, b])
    return best[1]
