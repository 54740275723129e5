"""The rule that a text names what a reader pairs it with (:class:`Attribution`), for
the text layout (:mod:`workbench.model.chart.placement`): without a leader, its own marks are
the nearest to its box by a clear margin; with one, the text keeps clear of the other marks.
In device units (pixels, y downwards), free of Qt."""

from __future__ import annotations

from dataclasses import field

import numpy as np

from workbench.model.chart.occupancy import reduce_all, reduce_any, reduce_max, reduce_min
from workbench.records import record

__all__ = ["Attribution", "PAIRING_RATIO", "PAIRING_MARGIN", "PAIRING_REACH", "CENTRE_SCOPE",
           "LEADER_CLEAR", "LINE_END_CLEAR", "box_gaps", "segment_gaps", "point_gaps",
           "same_spot", "SPOT_PAIRS", "scope"]

#: a text without a leader names the marks nearest to it: any other mark is at least this
#: many times as far from its box, and :data:`PAIRING_MARGIN` pixels more ("Softmax" right
#: above the Norm point, a little nearer it than to its own, reads as naming Norm)
PAIRING_RATIO = 1.6
PAIRING_MARGIN = 3.0
#: and it lies at most this many pixels from the nearest of them (a tag farther off, with
#: no leader, names nothing a reader can find)
PAIRING_REACH = 12.0
#: of the other marks this many times :data:`PAIRING_REACH` (or two text heights) from a
#: text's box or nearer, none is nearer its middle than its own marks (one farther off is
#: not read with it)
CENTRE_SCOPE = 2.5
#: a text with a leader keeps this many pixels from every other mark ("4" touching one
#: marker, its short leader leaving another, names neither), and its leader leaves its own
#: marker where no other covers it
LEADER_CLEAR = 6.0
#: a leader to a line touches no other line this many pixels from its end
LINE_END_CLEAR = 16.0


def box_gaps(boxes: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """The gap between each box and each rectangle (rows ``left, top, right, bottom``), in
    pixels: 0 where they touch or overlap, else the distance between their nearest points.
    Shape ``(len(boxes), len(rects))``."""
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)[:, None, :]
    r = np.asarray(rects, dtype=float).reshape(-1, 4)[None, :, :]
    dx = np.maximum(np.maximum(r[..., 0] - b[..., 2], b[..., 0] - r[..., 2]), 0.0)
    dy = np.maximum(np.maximum(r[..., 1] - b[..., 3], b[..., 1] - r[..., 3]), 0.0)
    return np.hypot(dx, dy)


def segment_gaps(boxes: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """The gap between each box and each segment (rows ``x0, y0, x1, y1``) that does not
    cross it, in pixels: the nearest of a box's corners to the segment, or of the segment's
    ends to the box (where a box and a segment apart come nearest). Shape ``(len(boxes),
    len(segments))``."""
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    g = np.asarray(segments, dtype=float).reshape(-1, 4)
    ends = np.concatenate((g[:, :2], g[:, 2:]))
    tips = box_gaps(b, np.column_stack((ends, ends)))
    best = np.minimum(tips[:, :len(g)], tips[:, len(g):])
    ax, ay = g[None, None, :, 0], g[None, None, :, 1]
    dx, dy = g[None, None, :, 2] - ax, g[None, None, :, 3] - ay
    length2 = np.maximum(dx * dx + dy * dy, 1e-12)
    # the box's four corners (left-top, right-top, left-bottom, right-bottom) at once
    px, py = b[:, _CORNER_X, None], b[:, _CORNER_Y, None]
    t = np.minimum(np.maximum(((px - ax) * dx + (py - ay) * dy) / length2, 0.0), 1.0)
    return np.minimum(best, reduce_min(np.hypot(ax + t * dx - px, ay + t * dy - py), axis=1))


_CORNER_X, _CORNER_Y = np.array([0, 2, 0, 2]), np.array([1, 1, 3, 3])


def point_gaps(px: np.ndarray, py: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """The distance from each point ``(px, py)`` to each segment (rows ``x0, y0, x1,
    y1``): :func:`segment_gaps` of boxes that are points, worked out for one corner, not
    four. Shape ``(len(px), len(segments))``."""
    g = np.asarray(segments, dtype=float).reshape(-1, 4)
    ax, ay = g[None, :, 0], g[None, :, 1]
    dx, dy = g[None, :, 2] - ax, g[None, :, 3] - ay
    length2 = np.maximum(dx * dx + dy * dy, 1e-12)
    x, y = np.asarray(px, dtype=float)[:, None], np.asarray(py, dtype=float)[:, None]
    t = np.minimum(np.maximum(((x - ax) * dx + (y - ay) * dy) / length2, 0.0), 1.0)
    # (and to the far end as such, the same sum as :func:`segment_gaps`' to the last digit)
    return np.minimum(np.hypot(ax + t * dx - x, ay + t * dy - y),
                      np.hypot(g[None, :, 2] - x, g[None, :, 3] - y))


def scope(reach: float, height: float) -> float:
    """How far from a text's box (``height`` pixels tall, said at most ``reach`` pixels from
    its own marks) another mark can bear on whether a reader pairs the text with its own:
    the farthest :meth:`Attribution.paired` and :meth:`Attribution.led` look (a mark
    farther off, wherever it moves, changes neither)."""
    return max(CENTRE_SCOPE * reach, 2.0 * height, PAIRING_RATIO * reach + PAIRING_MARGIN,
               LEADER_CLEAR)


@record
class Attribution:
    """What a text names, for the rule that a reader pairs it with that: ``own`` the
    rectangles of its marks (rows ``left, top, right, bottom``: markers), ``own_lines`` its
    lines (rows ``x0, y0, x1, y1``: a roof); ``others`` and ``other_lines`` what it could be
    taken to name instead (the other markers, the other lines); ``reach`` the farthest its
    box may be from its own marks without a leader."""

    own: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    others: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    reach: float = PAIRING_REACH
    own_lines: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    other_lines: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    _spans: list | None = field(default=None, init=False, repr=False, compare=False)

    def _near(self, boxes: np.ndarray, span: float):
        """The other marks and lines that come within ``span`` pixels of the boxes' span
        (the rest cannot break the rule for any of them), each with its measure."""
        lo = reduce_min(boxes[:, :2], axis=0) - span
        hi = reduce_max(boxes[:, 2:], axis=0) + span
        if self._spans is None:  # (each group's extent, worked out once)
            self._spans = [(g, m, np.minimum(g[:, 0], g[:, 2]), np.maximum(g[:, 0], g[:, 2]),
                            np.minimum(g[:, 1], g[:, 3]), np.maximum(g[:, 1], g[:, 3]))
                           for g, m in ((self.others, box_gaps),
                                        (self.other_lines, segment_gaps)) if len(g)]
        for group, measure, x0, x1, y0, y1 in self._spans:
            near = group[(x1 >= lo[0]) & (x0 <= hi[0]) & (y1 >= lo[1]) & (y0 <= hi[1])]
            if len(near):
                yield near, measure

    def own_gaps(self, boxes: np.ndarray) -> np.ndarray:
        """For each box (rows ``left, top, right, bottom``; a point where left = right and
        top = bottom), the gap to the nearest of its own marks (inf: none)."""
        boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
        mine = np.full(len(boxes), np.inf)
        if len(self.own):
            mine = reduce_min(box_gaps(boxes, self.own), axis=1)
        if len(self.own_lines):
            mine = np.minimum(mine, reduce_min(segment_gaps(boxes, self.own_lines), axis=1))
        return mine

    def paired(self, boxes: np.ndarray) -> np.ndarray:
        """Whether a reader pairs each text box (rows ``left, top, right, bottom``) with
        these marks: the nearest of its own lies within :attr:`reach` pixels of the box,
        every other lies at least :data:`PAIRING_RATIO` times as far from it, and
        :data:`PAIRING_MARGIN` pixels more; and of the others within
        :data:`CENTRE_SCOPE` × :attr:`reach` of the box, none is nearer the middle of the
        text than its own ("Softmax" beside its point but right over another reads as
        naming that one)."""
        boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
        n = len(boxes)
        mx = (boxes[:, 0] + boxes[:, 2]) / 2
        my = (boxes[:, 1] + boxes[:, 3]) / 2
        # the boxes and their middles measured together (rows of the boxes, then of the
        # middles: a few numpy steps for both)
        both = np.concatenate((boxes, np.column_stack((mx, my, mx, my))))
        mine_both = self.own_gaps(both)
        mine = mine_both[:n]
        ok = mine <= self.reach
        if not reduce_any(ok):
            return ok
        at = ok.nonzero()[0]
        k = len(at)
        boxes, mine, mine_c = boxes[at], mine[at], mine_both[n + at]
        both = both[np.concatenate((at, n + at))]
        # (a large text is read with the marks farther around it)
        close = np.maximum(CENTRE_SCOPE * self.reach, 2.0 * (boxes[:, 3] - boxes[:, 1]))
        good = np.ones(k, dtype=bool)
        tallest = float(reduce_max(boxes[:, 3] - boxes[:, 1]))
        for near, measure in self._near(boxes, scope(self.reach, tallest)):
            measured = measure(both, near)
            gaps = measured[:k]
            good &= reduce_min(gaps, axis=1) >= PAIRING_RATIO * mine + PAIRING_MARGIN
            centre = np.where(gaps <= close[:, None], measured[k:], np.inf)
            good &= reduce_min(centre, axis=1) >= mine_c
        ok[at] = good
        return ok

    def led(self, boxes: np.ndarray, leaders: np.ndarray, leader: bool = True) -> np.ndarray:
        """Whether each text box, joined to its marks by a leader (rows ``x0, y0, x1, y1``:
        from its mark to the box; or ``x, y``: where it leaves the mark), keeps
        :data:`LEADER_CLEAR` pixels from every other mark (a text right beside another
        point reads as its name, whatever its leader says), and (unless not ``leader``)
        its leader leaves from outside them, and a leader to a line (:attr:`own_lines`)
        touches no other line in its last :data:`LINE_END_CLEAR` pixels (one across a line
        to the line beside it reads as naming either)."""
        boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
        leaders = np.asarray(leaders, dtype=float).reshape(len(boxes), -1)
        starts = leaders[:, :2]
        if not len(boxes) or not (len(self.others) or len(self.other_lines)):
            return np.ones(len(boxes), dtype=bool)
        ok = np.ones(len(boxes), dtype=bool)
        for near, measure in self._near(boxes, LEADER_CLEAR):
            ok &= reduce_min(measure(boxes, near), axis=1) >= LEADER_CLEAR
        if not leader:
            return ok
        if (reduce_any(ok) and len(self.own_lines) and len(self.other_lines)
                and leaders.shape[1] == 4):
            ok &= self._line_end_clear(leaders)
        if reduce_any(ok) and len(self.others):
            at = ok.nonzero()[0]
            xy = np.asarray(starts, dtype=float).reshape(-1, 2)[at]
            o = self.others  # (those that can hold a start)
            lo, hi = reduce_min(xy, axis=0), reduce_max(xy, axis=0)
            o = o[(o[:, 2] > lo[0]) & (o[:, 0] < hi[0]) & (o[:, 3] > lo[1]) & (o[:, 1] < hi[1])]
            inside = ((xy[:, None, 0] > o[None, :, 0]) & (xy[:, None, 0] < o[None, :, 2])
                      & (xy[:, None, 1] > o[None, :, 1]) & (xy[:, None, 1] < o[None, :, 3]))
            ok[at] = ~reduce_any(inside, axis=1)
        return ok

    def _line_end_clear(self, leaders: np.ndarray) -> np.ndarray:
        """Whether each leader (rows ``x0, y0, x1, y1``, from its line) keeps off every
        other line over its first :data:`LINE_END_CLEAR` pixels (points a cell apart)."""
        d = leaders[:, 2:4] - leaders[:, :2]
        length = np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)
        steps = np.arange(0.0, LINE_END_CLEAR + 1.0, 2.0)
        t = np.minimum(steps[None, :], length[:, None])  # (pixels along each leader)
        xs = leaders[:, 0, None] + d[:, 0, None] / length[:, None] * t
        ys = leaders[:, 1, None] + d[:, 1, None] / length[:, None] * t
        px, py = xs.ravel(), ys.ravel()
        # (only the lines that come within a pixel of the points' span can touch them: the
        # leaders of one text leave its line at a few spots, the other lines lie far off)
        g = self.other_lines
        g = g[(np.maximum(g[:, 0], g[:, 2]) >= reduce_min(px) - 1.0)
              & (np.minimum(g[:, 0], g[:, 2]) <= reduce_max(px) + 1.0)
              & (np.maximum(g[:, 1], g[:, 3]) >= reduce_min(py) - 1.0)
              & (np.minimum(g[:, 1], g[:, 3]) <= reduce_max(py) + 1.0)]
        if not len(g):
            return np.ones(len(leaders), dtype=bool)
        return reduce_all((reduce_min(point_gaps(px, py, g), axis=1) >= 1.0)
                          .reshape(len(leaders), -1), axis=1)


def same_spot(rects: np.ndarray, own: np.ndarray, air: float = 0.0) -> np.ndarray:
    """Which of ``rects`` are drawn where one of ``own`` is (their centres a quarter of the
    smaller one's size apart or less, each way; sizes less ``air`` on each side): no other
    mark, to a reader (a sweep's end on its operation's point)."""
    rects = np.asarray(rects, dtype=float).reshape(-1, 4)
    own = np.asarray(own, dtype=float).reshape(-1, 4)
    if not len(rects) or not len(own):
        return np.zeros(len(rects), dtype=bool)
    cx, cy = (rects[:, 0] + rects[:, 2]) / 2, (rects[:, 1] + rects[:, 3]) / 2
    if len(rects) * len(own) <= SPOT_PAIRS:
        pairs = _same_spot_pairs(cx, cy, rects[:, 2] - rects[:, 0], own, air)
        return np.asarray(pairs.any(axis=1))
    # many marks (a model's thousands of points): only the pairs whose centres are close
    # enough across are compared, ``own`` sorted by its centres' x (its repeats, a model's
    # layers drawn at one place, once)
    own = np.unique(own, axis=0)
    ox = (own[:, 0] + own[:, 2]) / 2
    order = np.argsort(ox, kind="stable")
    own, ox = own[order], ox[order]
    size = rects[:, 2] - rects[:, 0]
    # the farthest across a pair may lie (a quarter of the smaller size, less the air),
    # with a little slack for rounding: the pairs found are then compared exactly
    reach = 0.25 * (np.minimum(size, float(np.nanmax(own[:, 2] - own[:, 0]))) - 2 * air)
    reach = reach * (1 + 1e-9) + 1e-9
    lo = np.searchsorted(ox, cx - reach, side="left")
    hi = np.searchsorted(ox, cx + reach, side="right")
    counts = np.where(reach >= 0, np.maximum(hi - lo, 0), 0)
    total = int(counts.sum())
    out = np.zeros(len(rects), dtype=bool)
    if not total:
        return out
    which = np.repeat(np.arange(len(rects)), counts)
    first = np.cumsum(counts) - counts
    other = lo[which] + (np.arange(total) - first[which])
    o = own[other]
    ocx, ocy = (o[:, 0] + o[:, 2]) / 2, (o[:, 1] + o[:, 3]) / 2
    near = 0.25 * (np.minimum(size[which], o[:, 2] - o[:, 0]) - 2 * air)
    hit = (np.abs(cx[which] - ocx) <= near) & (np.abs(cy[which] - ocy) <= near)
    out[which[hit]] = True
    return out


#: marks × own marks compared pair by pair in :func:`same_spot` at most (more: only the
#: pairs close across)
SPOT_PAIRS = 16384


def _same_spot_pairs(cx: np.ndarray, cy: np.ndarray, size: np.ndarray, own: np.ndarray,
                     air: float) -> np.ndarray:
    """For centres ``cx``, ``cy`` of marks ``size`` wide, whether each lies at each of
    ``own`` (see :func:`same_spot`): shape ``(len(cx), len(own))``."""
    ox, oy = (own[:, 0] + own[:, 2]) / 2, (own[:, 1] + own[:, 3]) / 2
    near = 0.25 * (np.minimum(size[:, None], (own[:, 2] - own[:, 0])[None, :]) - 2 * air)
    return ((np.abs(cx[:, None] - ox[None, :]) <= near)
            & (np.abs(cy[:, None] - oy[None, :]) <= near))
