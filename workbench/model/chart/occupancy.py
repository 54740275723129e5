"""The plot as a grid of small cells, each counting what covers it (device units, free of
Qt): what the text layout (:mod:`workbench.model.chart.placement`) places texts on.

:class:`Occupancy` counts the cells covered by lines of data, markers, the legend and the
texts already placed, and says how many covered cells lie under boxes (a text's candidate
places) or whether none does: within one whole placing (:meth:`Occupancy.held`) from tables
of the whole grid made once and what was covered since. Counts, not flags, so that a marker
that moves can be taken out of the grid and put back elsewhere.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from workbench.model.chart.held_tables import (
    Held,
    HeldBase,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_min,
)

__all__ = ["Occupancy", "Rect", "clip_segment", "reduce_all", "reduce_any", "reduce_max",
           "reduce_min", "spread"]

Rect = tuple[float, float, float, float]  # left, top, right, bottom

#: the most covers a cell's 16-bit count holds (see :meth:`Occupancy._room`)
_NARROW_MOST = int(np.iinfo(np.int16).max)



class Occupancy:
    """Counts of what covers each ``cell``-pixel square of the plot ``frame``
    ``(left, top, right, bottom)``."""

    def __init__(self, frame: Rect, cell: float = 2.0,
                 counts: tuple[np.ndarray, ...] | None = None, most: int | None = None
                 ) -> None:
        """``counts``: the grids ``grid``, ``soft``, ``lines`` and ``texts`` to start from
        (a copy's), else none covered; ``most``: no cell's count is further from none
        (worked out from ``counts`` where not given)."""
        self.frame: Rect = (float(frame[0]), float(frame[1]), float(frame[2]), float(frame[3]))
        self.cell = float(cell)
        left, top, right, bottom = self.frame
        self.cols = max(1, math.ceil((right - left) / self.cell))
        self.rows = max(1, math.ceil((bottom - top) / self.cell))
        # (for :meth:`_cells`: the frame's corner, and the grid's last cells, by side)
        self._origin = np.array((left, top, left, top))[:, None]
        self._far_cells = np.array((self.cols, self.rows) * 2, dtype=float)[:, None]
        if counts is None:
            shape = (self.rows, self.cols)
            counts = (np.zeros(shape, dtype=np.int16), np.zeros(shape, dtype=bool),
                      np.zeros(shape, dtype=np.int16), np.zeros(shape, dtype=np.int16))
            most = 0
        elif most is None:
            grid, _soft, lines, texts = counts
            most = max(max(int(a.max()), -int(a.min())) for a in (grid, lines, texts))
        #: what covers each cell; ``soft``: thin guide lines (the ridges' drop lines), no
        #: text on them but a leader line may cross them; ``lines``: of ``grid``, the counts
        #: of lines (roofs, paths), which a tag's leader may cross; ``texts``: the placed
        #: texts' boxes, each grown by its air (a tag keeps others off a little farther: two
        #: texts side by side read as one)
        self.grid, self.soft, self.lines, self.texts = counts
        #: how far from none a cell's count can be, at most (the covers added and taken
        #: away): the counts are 16-bit (half the bytes to copy and compare of 32-bit ones,
        #: which every placing does) until they could pass that, then 32-bit
        self._most = most
        #: while :meth:`held`: see :class:`Held`
        self._held: Held | None = None
        #: where :meth:`hold_copies`: what its copies' holds share (see :class:`HeldBase`)
        self._base: HeldBase | None = None

    def copy(self) -> Occupancy:
        """An occupancy of its own with the same counts (a placing changes its copy only;
        what :meth:`keep_drawn` kept is shared until either changes it); held from its
        start where this one :meth:`hold_copies` (or is such a copy, still held so)."""
        new = Occupancy(self.frame, self.cell, self.own_counts(), self._most)
        if self._base is not None:
            new._held = Held(new, self._base)
        elif self._held is not None and self._held.base is not None and self._held.more_only:
            new._held = self._held.copy_for(new)
        return new

    def hold_copies(self) -> None:
        """Its copies are :meth:`held` from their start, from tables of this one's counts
        (made when a copy first asks, then shared by them all): what a copy adds before
        its placing holds it (the markers, the legend) is looked at as covered since, as
        the texts its placing adds are. For the lines under everything else (the roofs and
        the ridges' lines), which every edit's placing copies: the tables of the whole grid
        cost as much as a few texts' tries. Its counts are not changed after this; it answers
        :meth:`clear_under` from the same tables (a text's places kept clear of these lines
        beforehand: :func:`~workbench.model.chart.placement.boxes_stopped`)."""
        if self.grid.min() >= 0 and self.texts.min() >= 0:
            self._base = HeldBase(self)
            self._held = Held(self, self._base)
            self._held.drawing = False

    def own_counts(self) -> tuple[np.ndarray, ...]:
        """The counts ``grid``, ``soft``, ``lines`` and ``texts`` for a copy or a record of
        their own: copies, but those kept read-only by :meth:`keep_drawn` (shared)."""
        return _own(self.grid), _own(self.soft), _own(self.lines), _own(self.texts)

    def keep_drawn(self) -> None:
        """Every line is drawn (the texts, the legend and the markers add to :attr:`grid`
        and :attr:`texts` only): :attr:`soft` and :attr:`lines` are kept read-only and
        shared by copies, not copied for each placing (a line added later to either copies
        them first); so are the :attr:`texts` placed so far (none, as a placing starts),
        until a copy places one."""
        self.soft.flags.writeable = False
        self.lines.flags.writeable = False
        self.texts.flags.writeable = False

    def _room(self, covers: int) -> None:
        """Make room for ``covers`` more covers (or fewer) of a cell: the counts widened to
        32 bits before a cell's count could pass what 16 bits hold (tens of thousands of
        markers on one spot)."""
        self._most += abs(covers)
        if self._most > _NARROW_MOST and self.grid.dtype == np.int16:
            self.grid, self.lines, self.texts = (a.astype(np.int32)
                                                 for a in (self.grid, self.lines, self.texts))

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

    def span_of(self, rect: Rect) -> tuple[int, int, int, int] | None:
        """The cell rows and columns ``(r0, r1, c0, c1)`` a rectangle touches (ends
        excluded), None where it misses the grid."""
        return self._span(rect)

    def counts_at(self, span: tuple[int, int, int, int] | None) -> tuple[bytes, ...]:
        """Every count (``grid``, ``soft``, ``lines``, ``texts``) of the cells ``span``
        (:meth:`span_of`; None: none), as bytes (compared as bytes by :meth:`same_counts`:
        a third of the time numpy's comparison of a few hundred cells takes)."""
        if span is None:
            return ()
        r0, r1, c0, c1 = span
        return tuple(a[r0:r1, c0:c1].tobytes()
                     for a in (self.grid, self.soft, self.lines, self.texts))

    def same_counts(self, span: tuple[int, int, int, int] | None, counts: tuple) -> bool:
        """Whether the counts of the cells ``span`` are ``counts`` (see
        :meth:`counts_at`)."""
        if span is None:
            return not counts
        r0, r1, c0, c1 = span
        # (the counts that change most, the texts' and the grid's, first)
        for a, i in ((self.texts, 3), (self.grid, 0), (self.lines, 2), (self.soft, 1)):
            if a[r0:r1, c0:c1].tobytes() != counts[i]:  # (the same cells, the same dtype)
                return False
        return True

    @contextlib.contextmanager
    def held(self, kept: bool = False):
        """Within this block :meth:`clear_under` answers from summed-area tables of the
        whole grid, made once (a placing asks about hundreds of boxes, over much the same
        cells), and from what was covered since (the few texts placed meanwhile). Every
        change goes through this class's methods; while cells are only covered more, a box
        covered then is covered now, and one clear then is covered now where it meets what
        was covered since. ``kept``: the tables stay after the block, for the texts placed
        after the rest (a roof's value or a ridge's said short), until a cell is covered
        less (then a later block makes them again)."""
        if self._held is not None and self._held.more_only:
            self._held.drawing = False  # (a copy's hold: its placing begins)
            yield
            return
        self._held = Held(self)
        try:
            yield
        finally:
            if not kept:
                self._held = None

    def clear_under(self, rects: np.ndarray, layer: np.ndarray | None = None,
                    texts: bool = False) -> np.ndarray:
        """Whether no covered cell lies under each rectangle: ``counts_local(rects, layer,
        texts) == 0`` (while :meth:`held`, from its tables)."""
        held = self._held
        if (held is None or not held.more_only or not len(rects)
                or not (layer is None or layer is self.texts)):
            return self.counts_local(rects, layer, texts) == 0
        r0, r1, c0, c1 = self._cells(rects)
        return held.clear_under(r0, np.maximum(r1, r0), c0, np.maximum(c1, c0),
                                "texts" if layer is not None else "all" if texts else "data")

    def counts_local(self, rects: np.ndarray, layer: np.ndarray | None = None,
                     texts: bool = False) -> np.ndarray:
        """How many covered cells lie under each rectangle (rows ``left, top, right,
        bottom``), all at once, from just the part of the grid the rectangles span (cheaper
        than keeping a table of the whole grid while texts are placed one by one): for a few
        rectangles, from running counts along the part's rows, summed over each one's rows
        (a text is a few cells tall: one pass over the part); for many (a tag's far places),
        from a summed-area table of it (two passes, four look-ups each). ``layer``: count
        the cells of this grid instead; ``texts``: those of :attr:`texts` too."""
        if not len(rects):
            return np.zeros(0, dtype=np.int64)
        r0, r1, c0, c1 = self._cells(rects)
        c1 = np.maximum(c1, c0)
        r1 = np.maximum(r1, r0)
        a0, a1 = int(reduce_min(r0)), int(reduce_max(r1))
        b0, b1 = int(reduce_min(c0)), int(reduce_max(c1))
        if a1 <= a0 or b1 <= b0:
            return np.zeros(len(rects), dtype=np.int32)
        if layer is not None:
            covered = layer[a0:a1, b0:b1] > 0
        else:
            covered = self.grid[a0:a1, b0:b1] > 0
            covered |= self.soft[a0:a1, b0:b1]
            if texts:
                covered |= self.texts[a0:a1, b0:b1] > 0
        r0, r1, c0, c1 = r0 - a0, r1 - a0, c0 - b0, c1 - b0
        tall = int(reduce_max(r1 - r0))
        if len(rects) * tall * 8 > covered.size:
            sat = np.zeros((a1 - a0 + 1, b1 - b0 + 1), dtype=np.int32)
            counts = covered.astype(np.int32)
            np.cumsum(counts, axis=0, out=counts)
            np.cumsum(counts, axis=1, out=sat[1:, 1:])
            return sat[r1, c1] - sat[r0, c1] - sat[r1, c0] + sat[r0, c0]
        run = np.zeros((a1 - a0, b1 - b0 + 1), dtype=np.int32)  # (a column of zeros first)
        np.cumsum(covered, axis=1, dtype=np.int32, out=run[:, 1:])
        rows = r0[:, None] + _steps(tall)
        beyond = rows >= r1[:, None]  # (a box less tall than the tallest)
        rows[beyond] = 0
        per_row = run[rows, c1[:, None]] - run[rows, c0[:, None]]
        per_row[beyond] = 0
        return per_row.sum(axis=1, dtype=np.int32)

    def _cells(self, rects: np.ndarray) -> tuple[np.ndarray, ...]:
        """The grid rows ``r0:r1`` and columns ``c0:c1`` each rectangle covers, clipped to
        the grid."""
        # (the rectangles' sides as rows, a copy: each step over all of one side at once)
        at = np.asarray(rects, dtype=float).T - self._origin
        at /= self.cell
        np.floor(at[:2], out=at[:2])
        np.ceil(at[2:], out=at[2:])
        # (np.maximum and np.minimum, not np.clip: the same, at a fraction of the cost)
        np.maximum(at, 0, out=at)
        np.minimum(at, self._far_cells, out=at)
        c0, r0, c1, r1 = at.astype(int)
        return r0, r1, c0, c1

    def inside(self, rect: Rect) -> bool:
        f = self.frame
        return rect[0] >= f[0] and rect[1] >= f[1] and rect[2] <= f[2] and rect[3] <= f[3]

    def add_text(self, rect: Rect, weight: int = 1) -> None:
        """A placed text's box, grown by its air (see :attr:`texts`)."""
        span = self._span(rect)
        if span is not None:
            r0, r1, c0, c1 = span
            self._room(weight)
            self.texts = _own(self.texts, True)
            self.texts[r0:r1, c0:c1] += weight
            if self._held is not None:
                self._held.covered(Held.TEXTS, r0, r1, c0, c1, weight)

    def add_rect(self, rect: Rect, weight: int = 1) -> None:
        span = self._span(rect)
        if span is not None:
            r0, r1, c0, c1 = span
            self._room(weight)
            self.grid[r0:r1, c0:c1] += weight
            if self._held is not None:
                self._held.covered(Held.BOX, r0, r1, c0, c1, weight)

    def text_under(self, rect: Rect) -> bool:
        """Whether a placed text (or its air) covers a cell under ``rect``."""
        span = self._span(rect)
        return span is not None and bool((self.texts[span[0]:span[1],
                                                     span[2]:span[3]] > 0).any())

    def count(self, rect: Rect) -> int:
        """How many covers lie under ``rect`` (cells × covers)."""
        span = self._span(rect)
        if span is None:
            return 0
        r0, r1, c0, c1 = span
        # (the guide lines' cells counted, not summed: a fifth of the time)
        return (int(self.grid[r0:r1, c0:c1].sum())
                + int(np.count_nonzero(self.soft[r0:r1, c0:c1])))

    def add_rects(self, rects: np.ndarray, weight: int = 1) -> None:
        """Add many rectangles (rows ``left, top, right, bottom``) at once."""
        r0, r1, c0, c1 = spans = self._rects_cells(rects)
        if not len(r0):
            return
        self._room(len(r0) * weight)
        if int(((r1 - r0) * (c1 - c0)).sum()) <= self.grid.size // 3:
            # (markers over a part of the grid: their cells' counts added where they lie,
            # not a grid of counts made and added whole, passes over every cell; sorting
            # their cells costs more once they cover about half the grid)
            rows, cols, counts = self._few_cells(*spans)
            self.grid[rows, cols] += (counts * weight).astype(self.grid.dtype)
        else:
            added = self._coverage(*spans)
            self.grid += added if weight == 1 else (weight * added).astype(self.grid.dtype)
        held = self._held
        if held is not None:
            if held.drawing and weight > 0 and held.count + len(r0) <= Held.DRAWN_BOXES:
                # (a copy's markers, before its placing: a box each)
                held.covered_boxes(r0, r1, c0, c1)
            elif held.drawing:
                self._unheld()  # (a whole model's markers)
            else:  # (many at once: counted afresh)
                held.more_only = False

    def _rects_cells(self, rects: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`_cells` of the rectangles ``rects`` that cover a cell (not those with no
        place, nan, or outside the grid)."""
        rects = np.asarray(rects, dtype=float).reshape(-1, 4)
        r0, r1, c0, c1 = self._cells(rects[np.isfinite(rects).all(axis=1)])
        keep = (c1 > c0) & (r1 > r0)
        return r0[keep], r1[keep], c0[keep], c1[keep]

    def _few_cells(self, r0: np.ndarray, r1: np.ndarray, c0: np.ndarray, c1: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cells the rectangles of rows ``r0:r1`` and columns ``c0:c1`` cover (rows and
        columns, each once) and how many cover each."""
        heights, widths = r1 - r0, c1 - c0
        flat = []
        # (rectangles of one size share their cells' offsets: by size, vectorised; a set,
        # not np.unique: its first call imports numpy.ma, 7 ms of start-up)
        for h, w in set(zip(heights.tolist(), widths.tolist(), strict=True)):
            sel = (heights == h) & (widths == w)
            dr, dc = _offsets(h, w)
            flat.append(((r0[sel][:, None] + dr) * self.cols + c0[sel][:, None] + dc).ravel())
        cells = np.sort(np.concatenate(flat))
        # (each cell once, with how many times it came: where the sorted run changes)
        starts = np.flatnonzero(np.diff(cells, prepend=-1))
        counts = np.diff(starts, append=len(cells))
        rows, cols = np.divmod(cells[starts], self.cols)
        return rows, cols, counts

    def _coverage(self, r0: np.ndarray, r1: np.ndarray, c0: np.ndarray, c1: np.ndarray
                  ) -> np.ndarray:
        """How many of the rectangles of rows ``r0:r1`` and columns ``c0:c1`` cover each
        cell (the grid's shape), where they cover much of it (a thousand markers): each
        rectangle's four corners marked in a table of differences, whose running sums down
        and across are the counts (two passes over the grid, not one for each cell of each
        rectangle)."""
        wide = self.cols + 1
        size = (self.rows + 1) * wide
        plus = np.bincount(np.concatenate((r0 * wide + c0, r1 * wide + c1)), minlength=size)
        minus = np.bincount(np.concatenate((r0 * wide + c1, r1 * wide + c0)), minlength=size)
        diff = (plus - minus).reshape(self.rows + 1, wide)
        np.cumsum(diff, axis=0, out=diff)
        np.cumsum(diff, axis=1, out=diff)
        return diff[:-1, :-1]

    def covering(self, rects: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """How many of ``rects`` cover each cell ``(rows[i], cols[i])``: ``_coverage`` of them
        there, without a grid of counts (a tag's markers, where its leaders pass)."""
        rects = np.asarray(rects, dtype=float).reshape(-1, 4)
        rects = rects[np.isfinite(rects).all(axis=1)]
        out = np.zeros(len(rows), dtype=np.int64)
        if not len(rects) or not len(rows):
            return out
        r0, r1, c0, c1 = self._cells(rects)
        # (a few thousand pairs at a time)
        step = max(1, 65536 // len(rects))
        for i in range(0, len(rows), step):
            r, c = rows[i:i + step, None], cols[i:i + step, None]
            out[i:i + step] = ((r0 <= r) & (r < r1) & (c0 <= c) & (c < c1)).sum(axis=1)
        return out

    def line_cells(self, xs, ys, half: float) -> np.ndarray | None:
        """Flat indices of the cells within ``half`` pixels of the polyline through ``(xs,
        ys)``, each once (``None`` when none): what :meth:`add_polyline` covers, to keep
        for a line drawn again in the same place and add with :meth:`add_cells`."""
        xs = np.asarray(xs, dtype=float).tolist()
        ys = np.asarray(ys, dtype=float).tolist()
        if len(xs) < 2:
            return None
        px, py = [], []
        step = self.cell * 0.5
        grown = self._grown(half)
        kept = []  # (the segments in the grid, as given)
        for x0, y0, x1, y1 in zip(xs[:-1], ys[:-1], xs[1:], ys[1:], strict=True):
            clipped = clip_segment(x0, y0, x1, y1, grown)
            if clipped is None:
                continue
            kept.append((x0, y0, x1, y1))
            a, b, c, d = clipped
            t = spread(max(2, math.ceil(math.hypot(c - a, d - b) / step) + 1))
            px.append(a + (c - a) * t)
            py.append(b + (d - b) * t)
        if not px:
            return None
        pts = np.stack((np.concatenate(px), np.concatenate(py)) if len(px) > 1
                       else (px[0], py[0]))
        origin = np.array(self.frame[:2])[:, None]
        row_col = np.floor((pts - origin) / self.cell).astype(int)  # (columns, rows)
        col, row = row_col
        reach = math.ceil(half / self.cell)
        if len(px) == 1 and len(col) > 64:  # (a long straight line: its runs of cells)
            return self._segments_cells(np.array(kept), np.array([half]))[0]
        (cmin, rmin), (cmax, rmax) = row_col.min(axis=1).tolist(), row_col.max(axis=1).tolist()
        # each cell once: a mask over just the part of the grid the line spans (a leader's
        # few cells do not pay for a pass over the whole grid), reach wider on each side
        c0, r0 = cmin - reach, rmin - reach
        wide, tall = cmax + reach + 1 - c0, rmax + reach + 1 - r0
        if len(col) > 64:  # (a long line: each cell is sampled about twice, taken once)
            mask = np.zeros(tall * wide, dtype=bool)
            mask[(row - r0) * wide + (col - c0)] = True
            seen = np.flatnonzero(mask)
            row, col = seen // wide + r0, seen % wide + c0
        dr, dc = _square(reach)
        mask = np.zeros((tall, wide), dtype=bool)
        mask[(row[:, None] + (dr - r0)).ravel(), (col[:, None] + (dc - c0)).ravel()] = True
        # the part on the grid
        a0, a1 = max(0, r0), min(self.rows, r0 + tall)
        b0, b1 = max(0, c0), min(self.cols, c0 + wide)
        if a1 <= a0 or b1 <= b0:
            return np.zeros(0, dtype=np.intp)
        on = mask[a0 - r0:a1 - r0, b0 - c0:b1 - c0]
        cells = np.flatnonzero(on)
        width = b1 - b0
        return (cells // width + a0) * self.cols + cells % width + b0

    def _grown(self, d: float) -> Rect:
        f = self.frame
        return f[0] - d, f[1] - d, f[2] + d, f[3] + d

    def add_polyline(self, xs, ys, half: float, weight: int = 1, soft: bool = False,
                     line: bool = False) -> None:
        """Cover the cells within ``half`` pixels of the polyline through ``(xs, ys)``
        (``soft``: a guide line texts keep off and leader lines may cross; ``line``: a line
        of data, which only a tag's leader may cross)."""
        self.add_cells(self.line_cells(xs, ys, half), weight, soft, line)

    def segments_line_cells(self, segments: np.ndarray, halves) -> list[np.ndarray | None]:
        """:meth:`line_cells` of each straight segment (rows ``x0, y0, x1, y1``, each with
        its own ``halves[i]``; ``None``: no cells), worked out for all at once."""
        segments = np.asarray(segments, dtype=float).reshape(-1, 4)
        halves = np.broadcast_to(np.asarray(halves, dtype=float), (len(segments),))
        cells, owner = self._segments_cells(segments, halves)
        out: list[np.ndarray | None] = [None] * len(segments)
        if len(cells):
            order = np.lexsort((cells, owner))  # (by segment, each one's cells in order)
            cells, owner = cells[order], owner[order]
            bounds = np.flatnonzero(np.diff(owner)) + 1
            starts = [0, *bounds.tolist()]
            for start, part in zip(starts, np.split(cells, bounds), strict=True):
                out[int(owner[start])] = part
        return out

    def add_cells(self, cells: np.ndarray | None, weight: int = 1, soft: bool = False,
                  line: bool = False) -> None:
        """Cover ``cells`` (from :meth:`line_cells` of a grid of the same frame and cell) as
        :meth:`add_polyline` of their line does."""
        if cells is not None and len(cells):
            self._unheld()
            if self._held is not None:
                rows, cols = cells // self.cols, cells % self.cols
                self._held.covered(Held.CELLS, int(rows[0]), int(rows[-1]) + 1,
                                   int(cols.min()), int(cols.max()) + 1, 1 if soft else weight,
                                   cells)
        if soft:
            if cells is not None and len(cells):
                self.soft = _own(self.soft, True)
                self.soft.ravel()[cells] = True
            return
        if cells is not None and len(cells):
            self._room(weight)
            self.grid.ravel()[cells] += weight
            if line:
                self.lines = _own(self.lines, True)
                self.lines.ravel()[cells] += weight

    def _unheld(self) -> None:
        """A copy's hold (:meth:`hold_copies`) let go before its placing, where lines are
        drawn on it (a sweep's path, a pair's link) or markers by the thousand: a placing's
        boxes looked at along such lines, one by one, cost more than tables made afresh by
        :meth:`held`; and lines added while held are followed one segment at a time."""
        if self._held is not None and self._held.drawing:
            self._held = None

    def add_segments(self, segments: np.ndarray, halves, soft=None, line=None) -> None:
        """:meth:`add_polyline` of many straight segments (rows ``x0, y0, x1, y1``), each
        with its own ``halves[i]`` and flags ``soft[i]``, ``line[i]``: the same counts as
        one call for each, their cells found in a few numpy steps for all (the roofs and
        the ridges' drop lines, laid out anew after every pan or zoom)."""
        segments = np.asarray(segments, dtype=float).reshape(-1, 4)
        n = len(segments)
        halves = np.broadcast_to(np.asarray(halves, dtype=float), (n,))
        soft = np.zeros(n, dtype=bool) if soft is None else np.asarray(soft, dtype=bool)
        line = np.zeros(n, dtype=bool) if line is None else np.asarray(line, dtype=bool)
        if n:
            self._unheld()
        if self._held is not None:  # (while held, each as its own polyline: see held)
            for (x0, y0, x1, y1), half, s, li in zip(segments.tolist(), halves.tolist(),
                                                     soft.tolist(), line.tolist(), strict=True):
                self.add_polyline((x0, x1), (y0, y1), half, soft=s, line=li)
            return
        cells, owner = self._segments_cells(segments, halves)
        if not len(cells):
            return
        # (each segment's cells come once each: as one segment at a time, lines that cross
        # count twice where they cross; all counted at once)
        guide = soft[owner]
        if guide.any():
            self.soft = _own(self.soft, True)
            self.soft.ravel()[cells[guide]] = True
        drawn, owner = cells[~guide], owner[~guide]
        if len(drawn):
            self._room(n)
            size = self.grid.size
            self.grid += np.bincount(drawn, minlength=size).reshape(self.grid.shape)
            lined = drawn[line[owner]]
            if len(lined):
                self.lines = _own(self.lines, True)
                self.lines += np.bincount(lined, minlength=size).reshape(self.lines.shape)

    def _segments_cells(self, segments: np.ndarray, halves: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
        """The cells of :meth:`line_cells` of each segment (each cell once per segment),
        all together, and which segment each is of: the segments sampled as there (half a
        cell apart or less), then their runs (:meth:`_runs_within`) all at once, those of
        one reach together."""
        step = self.cell * 0.5
        if len(segments) < CLIP_AT_ONCE:
            ends, counts, reaches, index = [], [], [], []
            for i, ((x0, y0, x1, y1), half) in enumerate(zip(
                    segments.tolist(), halves.tolist(), strict=True)):
                clipped = clip_segment(x0, y0, x1, y1, self._grown(half))
                if clipped is None:
                    continue
                a, b, c, d = clipped
                ends.append((a, b, c - a, d - b))
                counts.append(max(2, math.ceil(math.hypot(c - a, d - b) / step) + 1))
                reaches.append(math.ceil(half / self.cell))
                index.append(i)
        else:
            index, ends, counts, reaches = self._clipped_runs(segments, halves, step)
        none = np.zeros(0, dtype=np.intp)
        if not len(ends):
            return none, none
        t = np.concatenate([spread(k) for k in counts])
        e = np.repeat(np.asarray(ends), counts, axis=0)
        left, top = self.frame[0], self.frame[1]
        col = np.floor((e[:, 0] + e[:, 2] * t - left) / self.cell).astype(int)
        row = np.floor((e[:, 1] + e[:, 3] * t - top) / self.cell).astype(int)
        seg = np.repeat(np.arange(len(counts)), counts)
        # each segment's runs of samples in one row (a straight segment passes through its
        # rows in order, each once), its rows upwards
        new = np.flatnonzero((np.diff(row) != 0) | (np.diff(seg) != 0)) + 1
        first = np.concatenate(([0], new))
        last = np.concatenate((new - 1, [len(row) - 1]))
        lo = np.minimum(col[first], col[last])
        hi = np.maximum(col[first], col[last])
        rows, owner = row[first], seg[first]
        order = np.lexsort((rows, owner))
        lo, hi, rows, owner = lo[order], hi[order], rows[order], owner[order]
        reach_of = np.asarray(reaches)
        out_cells: list[np.ndarray] = []
        out_owner: list[np.ndarray] = []
        for reach in sorted(set(reaches)):
            pick = reach_of[owner] == reach
            self._runs_within(lo[pick], hi[pick], rows[pick], owner[pick], reach,
                              out_cells, out_owner)
        if not out_cells:
            return none, none
        return (np.concatenate(out_cells),
                np.asarray(index)[np.concatenate(out_owner)])

    def _clipped_runs(self, segments: np.ndarray, halves: np.ndarray, step: float) -> tuple:
        """For many segments at once, as :meth:`_segments_cells` one by one: the segments
        that meet the frame grown by their ``halves`` (:func:`clip_segment`, the same sums),
        their clipped parts ``(a, b, c - a, d - b)``, how many samples each (``step``
        apart or less) and their reach in cells: ``(index, ends, counts, reaches)``."""
        x0, y0, x1, y1 = segments.T
        left, top, right, bottom = self.frame
        ok = np.isfinite(segments).all(axis=1)
        t0, t1 = np.zeros(len(segments)), np.ones(len(segments))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            dx, dy = x1 - x0, y1 - y0  # (those not finite left out below)
            for p, q in ((-dx, x0 - (left - halves)), (dx, (right + halves) - x0),
                         (-dy, y0 - (top - halves)), (dy, (bottom + halves) - y0)):
                flat = p == 0
                ok &= ~(flat & (q < 0))
                r = q / p
                # (as max(t0, r) and min(t1, r): the first unless the second is beyond it)
                t0 = np.where(~flat & (p < 0) & (r > t0), r, t0)
                t1 = np.where(~flat & (p > 0) & (r < t1), r, t1)
        ok &= ~(t0 > t1)
        index = np.flatnonzero(ok)
        x0, y0, dx, dy, t0, t1 = (v[index] for v in (x0, y0, dx, dy, t0, t1))
        a, b = x0 + t0 * dx, y0 + t0 * dy
        w, h = (x0 + t1 * dx) - a, (y0 + t1 * dy) - b
        length = np.hypot(w, h) / step
        # (math.hypot, as one by one, where the two might round apart across a whole step)
        for i in np.flatnonzero(np.abs(length - np.round(length)) < 1e-6).tolist():
            length[i] = math.hypot(float(w[i]), float(h[i])) / step
        counts = np.maximum(2, np.ceil(length).astype(np.int64) + 1)
        reaches = np.ceil(halves[index] / self.cell).astype(np.int64)
        return (index, np.column_stack((a, b, w, h)), counts.tolist(), reaches.tolist())

    def _runs_within(self, lo, hi, rows, owner, reach: int, out_cells: list,
                     out_owner: list) -> None:
        """The cells within ``reach`` cells of the segments whose samples' runs are
        ``lo``, ``hi`` (least and greatest column of each row), ``rows`` (each segment's
        rows upwards, in a block), ``owner``: their cells and owners appended to the lists.
        A straight segment's samples pass through every row between its first and last, in
        order, and in the rows a few apart through every column between their least and
        greatest; so its cells are, in each row, one run: from the least column of the
        samples up to ``reach`` rows away, less ``reach``, to their greatest, plus
        ``reach``."""
        if not len(rows):
            return
        starts = np.flatnonzero(np.diff(owner)) + 1
        k = np.diff(np.concatenate(([0], starts, [len(rows)])))  # runs of each segment
        pad = 2 * reach
        # each segment's block: pad entries that stop nothing, then its runs; one pad more
        # at the end (the windows of the last segment's last rows)
        first_at = np.cumsum(k + pad) - k  # where each segment's runs start
        total = int(first_at[-1] + k[-1] + pad)
        low = np.full(total, np.iinfo(np.int64).max)
        high = np.full(total, np.iinfo(np.int64).min)
        pos = np.repeat(first_at - np.concatenate(([0], np.cumsum(k)[:-1])), k) + np.arange(
            len(rows))
        low[pos], high[pos] = lo, hi
        span = total - pad
        least, most = low[:span].copy(), high[:span].copy()
        for shift in range(1, pad + 1):
            np.minimum(least, low[shift:shift + span], out=least)
            np.maximum(most, high[shift:shift + span], out=most)
        # each segment's outputs: its rows from its first less reach to its last plus reach
        width = k + pad
        out_at = np.repeat(first_at - pad, width) + (np.arange(int(width.sum()))
                                                     - np.repeat(np.cumsum(width) - width, width))
        first_row = rows[np.concatenate(([0], starts))]
        out_rows = (np.repeat(first_row - reach, width)
                    + out_at - np.repeat(first_at - pad, width))
        seg = np.repeat(owner[np.concatenate(([0], starts))], width)
        least = np.maximum(least[out_at] - reach, 0)
        most = np.minimum(most[out_at] + reach, self.cols - 1)
        on = (out_rows >= 0) & (out_rows < self.rows) & (most >= least)
        out_rows, least, most, seg = out_rows[on], least[on], most[on], seg[on]
        if not len(out_rows):
            return
        counts = most - least + 1
        begin = out_rows * self.cols + least
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        out_cells.append(np.repeat(begin, counts) + offsets)
        out_owner.append(np.repeat(seg, counts))


#: segments from which :meth:`Occupancy._segments_cells` clips them all at once (fewer:
#: one by one, a leader's few)
CLIP_AT_ONCE = 8


def _own(counts: np.ndarray, write: bool = False) -> np.ndarray:
    """``counts`` for an occupancy of its own: kept read-only (:meth:`Occupancy.keep_drawn`)
    it is shared, unless it is to be written (``write``: then a copy); else a copy."""
    if counts.flags.writeable:
        return counts if write else counts.copy()
    return counts.copy() if write else counts


@functools.lru_cache(maxsize=256)
def _steps(n: int) -> np.ndarray:
    """``np.arange(n)`` as a row, made once for each ``n`` (read only)."""
    out = np.arange(n)[None, :]
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=1024)
def spread(n: int) -> np.ndarray:
    """``np.linspace(0, 1, n)``, made once for each ``n`` (read only)."""
    out = np.linspace(0.0, 1.0, n)
    out.flags.writeable = False
    return out


@functools.lru_cache(maxsize=64)
def _offsets(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column offsets (as rows) of the cells of an ``h`` × ``w`` block, made once
    for each size (read only)."""
    dr, dc = (a.ravel()[None, :] for a in np.meshgrid(np.arange(h), np.arange(w),
                                                     indexing="ij"))
    dr.flags.writeable = dc.flags.writeable = False
    return dr, dc


@functools.lru_cache(maxsize=16)
def _square(reach: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column offsets of the cells within ``reach`` cells each way (read only)."""
    offsets = np.arange(-reach, reach + 1)
    dr, dc = (a.ravel() for a in np.meshgrid(offsets, offsets, indexing="ij"))
    dr.flags.writeable = dc.flags.writeable = False
    return dr, dc


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
