"""Texts whose surroundings did not change keep their places from one placing to the next.

A text's try (:meth:`~workbench.model.chart.placement.TextLayout.place`) takes the first of
its places that lies in the plot, covers no occupied cell, is paired with what the text names
and whose leader crosses nothing. Which place that is depends on the text (its size, its air,
its places up to the one taken, what it names) and on what lies around those places: the
plot's frame, the counts of the occupancy's cells within reach of them, which of their
leaders cross a leader already placed, and the other marks and lines within the reach of the
pairing rule (:func:`~workbench.model.chart.attribution.scope`). Where all of that is as it
was when the text was last placed, it finds the same place again: an edit that moves one point
places again only the texts whose surroundings it changed, and the roofs' values, the ridges'
texts and the names of the points that stayed are taken as they were, as a full search would
find them. The same for a text that found no place among its only places (a ridge's text
where the chart is crowded): it finds none again.

Kept only for a text placed among its first places (not its far ones), on a try that does not
let its leader cross its own markers; the rest are always looked for. A text whose
surroundings changed at each of the last placings is kept less often
(:attr:`KeptPlaces.MISSES`): what is kept is the same, but comparing and copying it, for
nothing, cost a third of a search."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Protocol

import numpy as np

from workbench.model.chart.attribution import LEADER_CLEAR, LINE_END_CLEAR, Attribution, scope
from workbench.model.chart.occupancy import Occupancy, reduce_any, reduce_max, reduce_min


class Request(Protocol):
    """A text to place (:class:`~workbench.model.chart.placement.Request`)."""

    key: Hashable
    kind: str
    width: float
    height: float
    candidates: Any
    air: float
    cross_lines: bool
    names: Attribution | None


class Placement(Protocol):
    """Where a text went (:class:`~workbench.model.chart.placement.Placement`)."""

    leader: tuple[float, float, float, float] | None


class TextLayout(Protocol):
    """The layout a text is placed in (:class:`~workbench.model.chart.placement.TextLayout`)."""

    PAD: float
    LEADER_END_CLEAR: float
    occupancy: Occupancy

    def leaders_crossed(self, seg: np.ndarray) -> np.ndarray: ...

    def paired_at(self, cands: np.ndarray, at: np.ndarray, w: float, h: float,
                  names: Attribution) -> np.ndarray: ...


__all__ = ["KeptPlaces", "UNKNOWN"]

#: what :meth:`KeptPlaces.known` answers for a text to be looked for
UNKNOWN = object()


class _Kept:
    """What one text found and everything that decided it. (A plain class, not a record:
    a record of this many fields compiles its own template, at start-up.)"""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    kind: str
    air: float
    cross_lines: bool
    frame: tuple
    cell: float
    #: the text's places up to the one taken (rows ``left, top, x0, y0, x1, y1``; and as
    #: bytes), and the array they came from (the same object: no need to compare them)
    places: np.ndarray
    places_said: bytes
    source: Any
    #: the occupancy's cells whose counts bear on it (those around the places looked at),
    #: and their counts
    span: Any
    counts: tuple
    #: the leaders of the places found free up to the one taken, and which of them cross a
    #: leader placed before it
    leads: np.ndarray
    crossed: np.ndarray
    #: what it names: its own marks and lines and its reach (:func:`_own`; empty: it names
    #: nothing), the pixels where other marks bear on it (within ``reach`` of a place found
    #: free), and the other marks and lines there
    own: tuple
    marks: tuple[float, float, float, float]
    reach: float
    others: np.ndarray | None
    others_said: tuple
    other_lines: tuple
    #: the places found free up to the one taken, and whether each is paired with what the
    #: text names
    free: np.ndarray
    paired: np.ndarray | None
    placement: Any
    #: the cells whose counts are kept
    cells: int
    #: the last placing that kept it or took it (see KeptPlaces.begin)
    used: int


def _within(rows: np.ndarray, region: tuple[float, float, float, float]) -> np.ndarray:
    """Of ``rows`` (``left, top, right, bottom`` or segments ``x0, y0, x1, y1``), those whose
    extent meets ``region``, in a fixed order (the rules read them as a set)."""
    if not len(rows):
        return rows
    x0, x1 = np.minimum(rows[:, 0], rows[:, 2]), np.maximum(rows[:, 0], rows[:, 2])
    y0, y1 = np.minimum(rows[:, 1], rows[:, 3]), np.maximum(rows[:, 1], rows[:, 3])
    near = rows[(x1 >= region[0]) & (x0 <= region[2]) & (y1 >= region[1]) & (y0 <= region[3])]
    return near[np.lexsort(near.T[::-1])] if len(near) > 1 else near


def _extents(places: np.ndarray, w: float, h: float) -> tuple[np.ndarray, np.ndarray]:
    """The pixels the ``w`` × ``h`` box at each of ``places`` and its leader cover: the
    least ``x, y`` of each, and the greatest (a leader's nan, where it has none, passed
    over)."""
    boxes, starts, ends = places[:, 0:2], places[:, 2:4], places[:, 4:6]  # (views)
    lo = np.fmin(np.fmin(boxes, starts), ends)
    hi = np.fmax(np.fmax(boxes + (w, h), starts), ends)
    return lo, hi


def _extent(places: np.ndarray, w: float, h: float, grow: float
            ) -> tuple[float, float, float, float]:
    """The pixels all of :func:`_extents` cover, grown by ``grow`` (none: an empty
    extent)."""
    if not len(places):
        return (np.inf, np.inf, -np.inf, -np.inf)
    lo, hi = _extents(places, w, h)
    least, most = reduce_min(lo, axis=0), reduce_max(hi, axis=0)
    return (float(least[0]) - grow, float(least[1]) - grow,
            float(most[0]) + grow, float(most[1]) + grow)


def _said(a: np.ndarray | None) -> tuple:
    """An array as plain values to compare (the same bytes: the same numbers)."""
    return () if a is None else (a.dtype.str, a.shape, a.tobytes())


def _own(names: Attribution | None) -> tuple:
    return () if names is None else (names.reach, _said(names.own), _said(names.own_lines))


class KeptPlaces:
    """What texts found at earlier placings (by key and size), taken again where nothing
    that decided it changed (see the module's note)."""

    #: cells kept at most, over all texts (what to forget first: see begin): 13 bytes a
    #: cell (four counts), about 6.5 MB; a chart's texts look over a few thousand cells
    #: each
    BUDGET = 500_000
    #: cells a text's search may look over and still be kept: a wider one (a ridge's text
    #: with no place, searched all around its diamond: 40,000–70,000 cells of a 405B
    #: model's crowded chart) is seldom as it was at the next edit, and copying it costs
    #: a third of the search (the texts kept and taken again look over 2,000–16,000)
    WIDEST = 24_000
    #: a text not taken again at this many placings in a row (what decided it changed each
    #: time: a roof's value or a ridge's text among the points an edit of a model's batch
    #: moves), or whose search was too wide to keep, is looked for without keeping what it
    #: found (comparing and copying its cells cost a third of its search, for nothing) at
    #: the next placing, then, missed again, at the next two, four ... up to
    #: :attr:`LONGEST`; taken again once, it is kept at every placing again
    MISSES = 2
    LONGEST = 8

    def __init__(self) -> None:
        self._kept: dict[Hashable, _Kept] = {}
        self._cells = 0  # (kept, over all texts)
        #: texts taken as they were, and texts looked for, since made (for the benchmarks)
        self.taken = self.looked_for = 0
        self._placing = 0  # (see begin)
        #: what the last text asked for had found before it moved (see keep)
        self._moved: _Kept | None = None
        #: by text and size: at how many placings in a row it was not taken again, and the
        #: placing it is kept at again (see MISSES)
        self._misses: dict[Hashable, tuple[int, int]] = {}

    def __len__(self) -> int:
        """How many texts are kept."""
        return len(self._kept)

    @property
    def cells(self) -> int:
        """The cells whose counts are kept, over all texts (at most :attr:`BUDGET`)."""
        return self._cells

    def begin(self) -> None:
        """A placing starts (each asks for its texts in the same order). Where what is kept
        would grow past :attr:`BUDGET`, the texts neither this placing nor the last one kept
        or took are forgotten, the oldest first; the others stay and the new text is not
        kept. Forgetting the oldest of those instead would forget, at every placing, the
        texts the next one asks for first: a chart whose texts need more than the budget
        would take none again."""
        self._placing += 1

    def known(self, layout: TextLayout, request: Request) -> Any:
        """Where ``request`` goes in ``layout`` now (None: nowhere), where that is sure from
        an earlier placing (see the module's note); else :data:`UNKNOWN`, to be looked
        for."""
        key = (request.key, request.width, request.height)
        e = self._kept.get(key)
        self._moved = None
        if e is not None:
            if self._holds(e, layout, request):
                self.taken += 1
                e.used = self._placing
                self._kept[key] = self._kept.pop(key)  # (the last forgotten)
                self._misses.pop(key, None)
                return e.placement
            self._missed(key)
        self.looked_for += 1
        return UNKNOWN

    def _missed(self, key: Hashable) -> None:
        """The text ``key`` (with its size) was not taken again (or could not be kept): see
        :attr:`MISSES`."""
        misses = self._misses
        if len(misses) > 4 * len(self._kept) + 1024:  # (texts long gone)
            misses.clear()
        n = misses.get(key, (0, 0))[0] + 1
        wait = 0 if n < self.MISSES else min(1 << (n - self.MISSES), self.LONGEST)
        misses[key] = (n, self._placing + wait)

    def _holds(self, e: _Kept, layout: TextLayout, request: Request) -> bool:
        occ = layout.occupancy
        if (e.kind != request.kind or e.air != request.air
                or e.cross_lines != request.cross_lines or e.frame != occ.frame
                or e.cell != occ.cell):
            return False
        if request.candidates is not e.source:
            places = request.candidates
            if not isinstance(places, np.ndarray):
                return False
            n = len(e.places)
            if (len(places) < n or (e.placement is None and len(places) != n)
                    or places[:n].tobytes() != e.places_said):
                # (a text that moved, as its point: kept at its next placing, not this one)
                self._moved = self._forget((request.key, request.width, request.height))
                return False
        names = request.names
        if _own(names) != e.own or (
                names is not None
                and _said(_within(names.other_lines, e.marks)) != e.other_lines):
            return False
        if not occ.same_counts(e.span, e.counts):
            return False
        if len(e.leads) and not np.array_equal(layout.leaders_crossed(e.leads), e.crossed):
            return False
        if names is None:
            return True
        others = _within(names.others, e.marks)
        return (_said(others) == e.others_said
                or self._paired_as_before(e, layout, request, others))

    @staticmethod
    def _paired_as_before(e: _Kept, layout: TextLayout, request: Request,
                          others: np.ndarray) -> bool:
        """Whether each place looked at and found free is paired with what the text names
        (or not) as it was, the other marks now ``others`` (those in its region): worked
        out again for the places within reach of a mark that moved, came or went."""
        names = request.names
        if e.others is None or e.paired is None or names is None:
            return False
        changed = {tuple(row) for row in e.others} ^ {tuple(row) for row in others.tolist()}
        moved = np.array(sorted(changed), dtype=float).reshape(-1, 4)
        lo, hi = _extents(e.places[e.free], request.width, request.height)
        lo, hi = lo - e.reach, hi + e.reach
        near = reduce_any((lo[:, None, 0] <= moved[None, :, 2])
                          & (moved[None, :, 0] <= hi[:, None, 0])
                          & (lo[:, None, 1] <= moved[None, :, 3])
                          & (moved[None, :, 1] <= hi[:, None, 1]), axis=1)
        if not reduce_any(near):
            return True
        again = layout.paired_at(e.places, e.free[near], request.width, request.height,
                                 names)
        return bool(np.array_equal(again, e.paired[near]))

    def keep(self, layout: TextLayout, request: Request, places: np.ndarray,
             upto: int | None, free: np.ndarray, paired: np.ndarray | None,
             placement: Placement | None) -> None:
        """``request`` found ``placement``, the place ``upto`` of its first ``places`` (of
        which ``free``, at least, were found free; ``paired``: whether each is paired with
        what it names, -1 where not worked out), in ``layout`` as it is (before the text is
        reserved there); or, with ``upto`` and ``placement`` None, found no place among
        ``places``, its only ones."""
        if (not isinstance(request.candidates, np.ndarray) or not len(places)
                or self._moved is not None):
            return  # (made anew for each placing: compared at no saving; see known)
        occ = layout.occupancy
        w, h = request.width, request.height
        key = (request.key, w, h)
        self._forget(key)
        missed = self._misses.get(key)
        if missed is not None and self._placing < missed[1]:
            return  # (not taken again of late: see MISSES)
        upto = len(places) - 1 if upto is None else upto
        tried = places[:upto + 1]
        # what is drawn and placed bears on every place looked at; the other marks, only on
        # those found free (the rest were not paired with anything)
        region = _extent(tried, w, h, layout.PAD + request.air + occ.cell * 2
                         + max(LEADER_CLEAR, LINE_END_CLEAR, layout.LEADER_END_CLEAR))
        span = occ.span_of(region)
        cells = 0 if span is None else (span[1] - span[0]) * (span[3] - span[2])
        if cells > self.WIDEST:
            self._missed(key)
            return  # (nothing else worked out for a text not kept)
        names = request.names
        free = free[free <= upto]
        free_places = free  # (those whose leaders were followed, at most)
        if names is not None and paired is not None:
            free = free[paired[free] >= 0]  # (the places looked at: paired or not)
        reach = (0.0 if names is None else
                 max(scope(names.reach, h), LEADER_CLEAR, LINE_END_CLEAR) + 1.0)
        marks = region if names is None else _extent(places[free], w, h, reach)
        counts = occ.counts_at(span)
        seen = places[free_places]
        leads = seen[~np.isnan(seen[:, 2]), 2:6]
        while self._kept and self._cells + cells > self.BUDGET:
            oldest = next(iter(self._kept))
            if self._kept[oldest].used >= self._placing - 1:
                return  # (see begin: no room for it)
            self._forget(oldest)
        self._cells += cells
        others = None if names is None else _within(names.others, marks)
        self._kept[key] = _Kept(
            kind=request.kind, air=request.air, cross_lines=request.cross_lines,
            frame=occ.frame, cell=occ.cell, places=tried.copy(), places_said=tried.tobytes(),
            source=request.candidates, span=span, counts=counts, leads=leads,
            crossed=layout.leaders_crossed(leads), own=_own(names), marks=marks,
            reach=reach, others=others, others_said=_said(others),
            other_lines=_said(None if names is None else _within(names.other_lines, marks)),
            free=free.copy(),
            paired=None if names is None or paired is None else paired[free].copy(),
            placement=placement, cells=cells, used=self._placing)

    def _forget(self, key: Hashable) -> _Kept | None:
        """Forget what the text ``key`` (with its size) found; what it was, if anything."""
        e = self._kept.pop(key, None)
        if e is not None:
            self._cells -= e.cells
        return e
