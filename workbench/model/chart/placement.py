"""Where the chart's texts go: one layout for the live canvas and every figure.

Everything here is in **device units** (the view's pixels, y downwards) and free of Qt: the
view measures its texts and maps its data to pixels, this module decides where each text
goes, and the view puts it there.

The plot area is an occupancy grid (:class:`~workbench.model.chart.occupancy.Occupancy`) of
small cells, each counting what covers it: roofs, interconnect segments, ridge lines,
markers, sweep paths and crossing marks (drawn with their line width and a little air), the
legend and every label already placed.
A text is placed at the first of its candidate places (:func:`point_candidates`,
:func:`sloped_candidates`, :func:`flat_candidates`, :func:`corner_candidates`) whose box
lies inside the plot and covers no occupied cell; a far place is joined to its marker by a
thin leader line, itself kept clear of data and texts (a roof's, ridge's or sweep's text
where it can, its leader ending clear of the other texts).
Texts are placed in order of priority (:data:`PRIORITIES`: the selected operation, the
annotations a user asked for (compared pairs, measured points), then operations, roof
values, ridge labels, sweep labels); a text without a clean place is not drawn. A text that
names something (a marker, a roof line:
:class:`~workbench.model.chart.attribution.Attribution`) is placed only where a reader pairs
it with that thing:
without a leader line, its own marks are the nearest to its box by a clear margin
(:data:`PAIRING_RATIO`, :data:`PAIRING_MARGIN`) and lie within :attr:`Attribution.reach`;
farther off, a leader joins it to one of them. An operation whose name has no clean
place is named by a short tag instead (``1``, ``2`` … placed like any text) and a key beside
or below the plot lists "1 — name" (see :mod:`workbench.model.chart.tagging`). Counts, not flags, so
that a marker that moves can be taken out of the grid and put back elsewhere: an edit
re-places only the texts it touches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import field, replace

import numpy as np

from workbench.model.chart.attribution import (
    PAIRING_MARGIN,
    PAIRING_RATIO,
    PAIRING_REACH,
    Attribution,
    box_gaps,
    same_spot,
    scope,
    segment_gaps,
)
from workbench.model.chart.candidates import (
    Candidate,
    as_array,
    corner_candidates,
    flat_candidates,
    point_candidates,
    sloped_candidates,
)
from workbench.model.chart.kept_places import UNKNOWN, KeptPlaces
from workbench.model.chart.leader_places import far_candidates, lead_from
from workbench.model.chart.occupancy import (
    Occupancy,
    Rect,
    reduce_all,
    reduce_any,
    reduce_max,
)
from workbench.model.chart.placed_again import MISSING, Again, Found
from workbench.model.chart.plot_frame import free_corners, legend_corner, wrap_title
from workbench.model.chart.tries import FreeFlags, Tried
from workbench.records import record

__all__ = [
    "PRIORITIES", "Occupancy", "Request", "Placement", "TextLayout", "Attribution",
    "PAIRING_RATIO", "PAIRING_MARGIN", "PAIRING_REACH", "box_gaps", "segment_gaps", "same_spot",
    "lead_from", "far_candidates", "point_candidates", "sloped_candidates", "flat_candidates",
    "corner_candidates", "as_array", "Candidate", "legend_corner", "free_corners",
    "wrap_title", "leaders_stopped", "boxes_stopped"]

#: Who yields to whom: lower places first.
PRIORITIES = {"selected": 0, "pair": 0.5, "crowd": 0.8, "operation": 1, "measured": 1.5,
              "roof": 2, "crossing": 2.5, "ridge": 3, "sweep": 5, "region": 6}

#: the texts that look at their first few places before the rest (see
#: :attr:`TextLayout.FIRST_LOOK`): the operations' names and tags
_LOOK_FIRST = frozenset({"selected", "crowd", "operation"})

# ---------------------------------------------------------------------------------------
# placing (the places tried: :mod:`~workbench.model.chart.candidates`)


@record
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
    #: its leader may cross lines of data (a short tag's, to a place farther off), never a
    #: marker or a text
    cross_lines: bool = False
    #: the markers of what it names (rows ``left, top, right, bottom``): its leader may
    #: cross them, its box may not
    own: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: more places, tried only when none of ``candidates`` is clean (a tag's farther off:
    #: many, made when asked for)
    far: Callable[[], np.ndarray] | None = field(default=None, compare=False, repr=False)
    #: places led to other spots of what it names, tried only when ``far`` has none clean
    #: (made then): of their first clean places, the one with the shortest leader (a roof's)
    farther: Callable[[], tuple[Callable[[], np.ndarray], ...]] | None = field(
        default=None, compare=False, repr=False)
    #: air kept between its box and other texts, pixels, beyond :attr:`TextLayout.PAD`
    air: float = 0.0
    #: what it names: a place without a leader is taken only where a reader pairs the text
    #: with that (see :class:`Attribution`); None: a text that names no mark (a title)
    names: Attribution | None = field(default=None, compare=False, repr=False)

    @property
    def priority(self) -> float:
        return PRIORITIES.get(self.kind, 9)


@record
class Placement:
    """Where a text went: its box ``rect`` and, when it is led to its marker, the leader."""

    key: Hashable
    rect: Rect
    leader: tuple[float, float, float, float] | None = None
    weight: int = field(default=1, repr=False)
    #: the air its request keeps from other texts
    air: float = field(default=0.0, repr=False)


#: the cells of the leaders reserved lately, by the grid's frame and cell and the leader: a
#: text taken again as it was (see kept_places) reserves the same leader in a grid of the
#: same frame at each placing, and a long leader's cells cost a pass over its segment
_LEADER_CELLS: dict[tuple, np.ndarray | None] = {}
_LEADER_CELLS_SIZE = 512


class TextLayout:
    """The placed texts over an :class:`Occupancy` of the data."""

    #: air between a text and anything else, pixels
    PAD = 1.0
    #: half width of a leader line's footprint
    LEADER_HALF = 1.0
    #: a leader's first pixels, leaving its marker, are not checked
    LEADER_SKIP = 8.0

    def __init__(self, occupancy: Occupancy, again: Found | None = None,
                 record: bool = False, kept: KeptPlaces | None = None) -> None:
        """``again``: what an earlier placing found, to be taken where it holds (see
        :mod:`~workbench.model.chart.placed_again`); ``record``: keep what this one finds,
        for the next (:attr:`found`); ``kept``: what texts found at earlier placings, taken
        where their surroundings are as they were, and added to (see
        :mod:`~workbench.model.chart.kept_places`)."""
        self.occupancy = occupancy
        self.placed: dict[Hashable, Placement] = {}
        self.requests: dict[Hashable, Request] = {}
        self._again = again
        self._record = record
        self._kept = kept
        if kept is not None:
            kept.begin()
        #: what the last full placing found (when recorded)
        self.found: Found | None = None

    def place(self, request: Request, own: bool = True,
              tried: Tried | None = None) -> Placement | None:
        """Place one text at its first clean candidate (and reserve its box and leader), or
        return ``None`` when none is clean. A candidate is clean when its box lies inside
        the plot, nothing covers the box grown by :attr:`PAD`, and its leader (past its
        first :attr:`LEADER_SKIP` pixels) crosses nothing (but lines, with
        :attr:`Request.cross_lines`, and the request's own markers unless ``own`` is
        False). ``tried``: what an earlier try of this request found, kept for the next
        (see :class:`Tried`)."""
        self.remove(request.key)
        self._beside = None  # (see _clean_leaders)
        self._ends_checked = request.priority >= PRIORITIES["roof"]
        self.requests[request.key] = request
        kept = self._kept if not own or request.own is None else None
        if kept is not None:  # (its leader never across its own markers: see kept_places)
            known = kept.known(self, request)
            if known is not UNKNOWN:
                if known is not None:
                    self._reserve(known, 1)
                    self.placed[request.key] = known
                return known
        w, h = request.width, request.height
        air, cross = request.air, request.cross_lines
        mine = request.own if own else None
        row = first = None
        # (each list's places and which are free, worked out as far as asked for and kept
        # for both tries: nothing is placed between them)
        free_of: dict[int, tuple[np.ndarray, FreeFlags]] = {}
        earlier = tried.free_of if tried is not None else {}
        # (and which leaders were found crossing something: still so for the lenient
        # pass, which differs in pairing only)
        crossed_of: dict[int, np.ndarray] = {}
        # a tag's leader keeps clear of other marks where it can; else, rather than untold,
        # it may pass by them (its own marker hidden among others' leaves no clear way), the
        # text itself still clear of them; a text with no markers of its own (a roof's
        # value) never does
        lenient = request.far is not None and request.own is not None
        for strict in (True, False) if lenient else (True,):
            found = []
            for i, given in enumerate(_givens(request)):
                if given is None:  # (the far ones made if needed)
                    continue
                if i not in free_of:
                    if i in earlier:  # (the same places; those covered then are still)
                        cands, before = earlier[i]
                        free_of[i] = cands, FreeFlags(self, cands, w, h, air, before)
                    else:
                        cands = given() if callable(given) else as_array(given)
                        free_of[i] = cands, FreeFlags(self, cands, w, h, air)
                cands, flags = free_of[i]
                if i not in crossed_of:
                    crossed_of[i] = np.zeros(len(cands), dtype=bool)
                # (what each of its first places is paired with, kept for kept_places)
                recorded = kept is not None and i == 0 and strict
                paired = (tried.paired_of(i, strict, len(cands)) if tried is not None else
                          np.full(len(cands), -1, dtype=np.int8) if recorded else None)
                chosen = self._first_clean(cands, w, h, cross, mine, air, request.names,
                                           strict, free=flags, paired=paired,
                                           crossed=crossed_of[i],
                                           look_first=self.FIRST_LOOK
                                           if i or request.kind in _LOOK_FIRST else 0)
                if recorded:  # (what decided it, for kept_places)
                    first = (cands, chosen, flags.free, paired)
                if chosen is not None:
                    found.append(cands[chosen])
                    if i < 2:
                        break
            if found:
                row = min(found, key=lambda r: math.hypot(r[4] - r[2], r[5] - r[3]))
            if row is not None or request.names is None:
                break
        if row is None and self._beside is not None:
            row = self._beside  # (no place whose leader ends clear of the other texts)
        if row is None:
            if tried is not None:
                tried.free_of = free_of
            if (kept is not None and first is not None and request.far is None
                    and request.farther is None and request.own is None):
                kept.keep(self, request, *first, None)  # (its places all taken)
            return None
        leader = None if math.isnan(row[2]) else (float(row[2]), float(row[3]), float(row[4]),
                                                  float(row[5]))
        left, top = float(row[0]), float(row[1])
        placement = Placement(request.key, (left, top, left + w, top + h), leader, air=air)
        if kept is not None and first is not None and first[1] is not None:
            kept.keep(self, request, *first, placement)
        self._reserve(placement, 1)
        self.placed[request.key] = placement
        return placement

    def _first_clean(self, cands: np.ndarray, w: float, h: float,
                     cross_lines: bool = False, own: np.ndarray | None = None,
                     air: float = 0.0, names: Attribution | None = None,
                     strict: bool = True, free: FreeFlags | None = None,
                     paired: np.ndarray | None = None,
                     crossed: np.ndarray | None = None, look_first: int = 0) -> int | None:
        """Index of the first clean candidate among ``cands`` (see :meth:`place`; with
        ``cross_lines`` a leader may cross lines of data, and the markers ``own``; the box
        keeps ``air`` more from other texts, and out of their air; a place without a leader
        pairs the text with what it ``names``). ``free``: which boxes are free (as
        :meth:`_free` says), as far as already worked out for an earlier try; ``paired``:
        which places are known to be paired with what it names (``known`` of
        :meth:`_paired`, filled in as they are worked out); ``crossed``: for each of
        ``cands``, whether its leader is known to cross something (for the same markers
        ``own``, with nothing placed since: not followed again; filled in as found);
        ``look_first``: of the first step, how many places to look at before the rest
        (:attr:`FIRST_LOOK`; 0: the whole step at once).

        The places are looked at in order, a step at a time (most texts find theirs among
        the first few): of each step, the free ones; of those, the ones a reader pairs with
        what the text names (:meth:`_paired`); of those, the first without a leader or
        whose leader crosses nothing (:meth:`_clean_leaders`). No more than
        :attr:`MOST_LEADERS` of the free and paired places are looked at (a leader past
        them would be long and hard to follow)."""
        flags = FreeFlags(self, cands, w, h, air) if free is None else free
        seen = looked = 0
        size = self.FIRST_STEP
        while looked < self.MOST_LEADERS:
            step = flags.between(seen, seen + size)
            if not len(step):
                return None
            # (of the first step, its first ``look_first`` places, then the rest: in order,
            # so the first clean place is the same)
            parts = ((step[:look_first], step[look_first:])
                     if look_first and not seen and len(step) > look_first else (step,))
            seen, size = seen + len(step), min(2 * size, self.MOST_LEADERS)
            for at in parts:
                if names is not None:
                    at = at[self._paired(cands, at, w, h, names, strict, paired)]
                at = at[:self.MOST_LEADERS - looked]
                looked += len(at)
                if crossed is not None and len(at):
                    at = at[~crossed[at]]  # (never the first clean: no need to follow them)
                if len(at):
                    found = self._clean_leaders(cands, at, cross_lines, own, crossed)
                    if found is not None:
                        return found
        return None

    #: places looked at in the first step of :meth:`_first_clean` (then twice as many each
    #: step)
    FIRST_STEP = 32
    #: of the first step's places, those an operation's name looks at before the rest:
    #: most names find theirs among them (where their points moved, the rest of the step
    #: cost as much again), while the texts that find no place (a crowded chart's measured
    #: values) would look twice
    FIRST_LOOK = 8

    def _free(self, cands: np.ndarray, w: float, h: float, air: float = 0.0) -> np.ndarray:
        """Which of the ``w`` × ``h`` boxes at ``cands`` lie inside the plot, clear of the
        data, the other texts and their air (a tag's); with ``air`` of its own, the box
        grown by it clear of the texts and their air too."""
        occ = self.occupancy
        boxes = _boxes(cands, w, h)
        ok = _boxes_clear(occ, boxes, texts=not air)
        if air and reduce_any(ok):
            a = self.PAD + air
            ok[ok] = occ.clear_under(boxes[ok] + (-a, -a, a, a), occ.texts)
        return ok

    def _paired(self, cands: np.ndarray, at: np.ndarray, w: float, h: float,
                names: Attribution, strict: bool = True,
                known: np.ndarray | None = None) -> np.ndarray:
        """Which of the places ``at`` (free) a reader pairs with what the text ``names``:
        without a leader, where its own marks are the nearest (:meth:`Attribution.paired`);
        with one, where the text (and, when ``strict``, its leader) keeps clear of the
        other marks (:meth:`Attribution.led`). ``known``: for each of ``cands``, whether
        it is paired (1, 0), or not yet worked out (-1): those worked out are taken, the
        rest written in (pairing depends on the marks alone, not on what is placed)."""
        if known is not None:
            seen = known[at]
            todo = seen < 0
            if reduce_any(todo):
                seen[todo] = self._paired(cands, at[todo], w, h, names, strict)
                known[at[todo]] = seen[todo]
            return seen > 0
        boxes = _boxes(cands[at], w, h)
        bare = np.isnan(cands[at, 2])
        good = np.zeros(len(at), dtype=bool)
        if reduce_any(bare):
            good[bare] = names.paired(boxes[bare])
        if not reduce_all(bare):
            good[~bare] = names.led(boxes[~bare], cands[at[~bare], 2:6], leader=strict)
        return good

    def paired_at(self, cands: np.ndarray, at: np.ndarray, w: float, h: float,
                  names: Attribution) -> np.ndarray:
        """Whether a reader pairs a ``w`` × ``h`` text at each of the places ``at`` (of
        ``cands``) with what it ``names``, as a first try asks (:meth:`_paired`)."""
        return self._paired(cands, at, w, h, names, True)

    #: free (and paired) places looked at, at most: the nearest (a leader past them would be
    #: long and hard to follow)
    MOST_LEADERS = 128
    #: a leader is followed at points this many cells apart, or nearer
    LEADER_SPACING = 0.5

    def _clean_leaders(self, cands: np.ndarray, chosen: np.ndarray, cross_lines: bool,
                       own: np.ndarray | None, known: np.ndarray | None = None) -> int | None:
        """The first of the candidates ``chosen`` (free boxes, in order) that has no leader,
        or whose leader, past its first :attr:`LEADER_SKIP` pixels, crosses nothing (lines
        aside with ``cross_lines``; the cells of the markers ``own``) and whose end at its
        text lies clear of the other texts (:meth:`_ends_apart`). ``known``: for each of
        ``cands``, set where its leader was found to cross something (or to end beside a
        text: texts are only added meanwhile)."""
        occ = self.occupancy
        lead = cands[chosen, 2:]
        has = ~np.isnan(lead[:, 0])
        if not has[0]:  # (the first place needs no leader)
            return int(chosen[0])
        # only the leaders before the first place with none can be taken before it
        plain = (~has).nonzero()[0]
        upto = int(plain[0]) if len(plain) else len(chosen)
        seg = lead[:upto]
        lines, counts = _followed(seg, occ.cell)
        # every fourth point first (most leaders that cross something are stopped by one
        # of them), then every point of the leaders those leave clear
        crossed = _crossing(occ, lines, counts, self.COARSE, cross_lines, own)
        rest = (~crossed).nonzero()[0]
        if len(rest):
            crossed[rest] = _crossing(occ, tuple(v[rest] for v in lines), counts[rest], 1,
                                      cross_lines, own)
        # (two leaders that cross near their markers, where the cells are not looked at,
        # read as each text naming the other's marker)
        rest = (~crossed).nonzero()[0]
        if len(rest):
            crossed[rest] = self._crosses_leaders(seg[rest])
        # of those, the first whose end at its text lies clear of the other texts (a
        # leader ending beside another text reads as that text's); the first that ends
        # beside one is kept, taken where the text finds no other place
        for i in (~crossed).nonzero()[0].tolist() if self._ends_checked else ():
            if self._ends_apart(seg[i]):
                break
            crossed[i] = True
            if self._beside is None:
                self._beside = cands[int(chosen[i])].copy()
        if known is not None:
            known[chosen[:upto][crossed]] = True
        clear = (~crossed).nonzero()[0]
        if len(clear):
            return int(chosen[int(clear[0])])
        return int(chosen[upto]) if upto < len(chosen) else None

    def leaders_crossed(self, seg: np.ndarray) -> np.ndarray:
        """Whether each leader of ``seg`` crosses a leader placed already
        (:meth:`_crosses_leaders`)."""
        return self._crosses_leaders(seg) if len(seg) else np.zeros(0, dtype=bool)

    def _crosses_leaders(self, seg: np.ndarray) -> np.ndarray:
        """Whether each leader of ``seg`` (rows ``x0, y0, x1, y1``) crosses a leader placed
        already (touching at an end is no crossing)."""
        placed = [p.leader for p in self.placed.values() if p.leader is not None]
        if not placed:
            return np.zeros(len(seg), dtype=bool)
        q = np.array(placed, dtype=float)
        a, b = seg[:, None, 0:2], seg[:, None, 2:4]  # (one row per leader, a column each)
        c, d = q[None, :, 0:2], q[None, :, 2:4]

        def side(p, r, t):  # (which side of the line p → r the point t lies on)
            return ((r[..., 0] - p[..., 0]) * (t[..., 1] - p[..., 1])
                    - (r[..., 1] - p[..., 1]) * (t[..., 0] - p[..., 0]))

        return reduce_any((side(c, d, a) * side(c, d, b) < 0)
                          & (side(a, b, c) * side(a, b, d) < 0), axis=1)

    #: pixels from the end of a leader at its text to any other text (and its air), at least
    #: where the text has such a place: for the texts placed after the operations' names
    #: (a roof's value, a ridge's, a sweep's), which then never move a name
    LEADER_END_CLEAR = 6.0
    _ends_checked = False
    #: the first place :meth:`place` found whose leader ends beside another text, else None
    _beside: np.ndarray | None = None

    def _ends_apart(self, leader: np.ndarray) -> bool:
        """Whether the end of ``leader`` (``x0, y0, x1, y1``) at its text lies
        :attr:`LEADER_END_CLEAR` pixels or more from every text placed (its own is not
        placed yet; the end at its marker is read with the marker)."""
        r = self.LEADER_END_CLEAR
        x1, y1 = float(leader[2]), float(leader[3])
        return not self.occupancy.text_under((x1 - r, y1 - r, x1 + r, y1 + r))

    #: of a leader's points, every this many is followed first
    COARSE = 4

    def place_all(self, requests: Iterable[Request], names_missed=None
                  ) -> dict[Hashable, Placement | None]:
        """Place ``requests`` in order of priority; then those with no place whose leaders
        may cross their own markers (:attr:`Request.own`) are tried again so (a leader
        across its own markers only where nothing else is left).

        ``names_missed(placed)``: asked once the operations' names and tags (and the texts
        placed before them) have had their first try; where it is true, the placing stops
        there, the rest not placed: a pass of the chart key that leaves a name out is
        followed by another that places every text again. Every other text is placed after
        the names and a name is never tried again, so the names left out are those the whole
        placing leaves out; not so where a text left out is given room by placing it first
        (:attr:`MAKE_ROOM_FOR`): then it is not asked."""
        ordered = sorted(requests, key=lambda r: (r.priority, r.order))
        room = any(r.kind in self.MAKE_ROOM_FOR for r in ordered)
        # (what is drawn, before any text: where room is made for a text left out; a
        # recorded placing keeps its counts already, see Found)
        bare = self.occupancy.copy() if room and not self._record else None
        out = self._place_ordered(ordered, None if room else names_missed)
        if room:
            if bare is None:
                assert self.found is not None  # (recorded by _place_ordered)
                bare = Occupancy(self.occupancy.frame, self.occupancy.cell, self.found.start)
            for r in ordered:
                if out[r.key] is None and r.kind in self.MAKE_ROOM_FOR:
                    out = self._make_room(r, ordered, out, bare)
        return out

    def _place_ordered(self, ordered: Sequence[Request], names_missed=None
                       ) -> dict[Hashable, Placement | None]:
        """:meth:`place_all` of requests already in order (each placed in turn, then those
        without a place again, their leaders across their own markers)."""
        found = Found.starting(self.occupancy, ordered) if self._record else None
        again = (Again(self._again) if self._again is not None
                 and self._again.matches(self.occupancy, ordered) else None)
        with self.occupancy.held(kept=True):  # (kept: see say_values_short)
            # (what each text without a place found, for its second try: meanwhile only
            # more is placed)
            tried: dict[Hashable, Tried] = {}
            out: dict[Hashable, Placement | None] = {}
            for r in ordered:
                if names_missed is not None and r.priority > PRIORITIES["operation"]:
                    if names_missed(self.placed):
                        return out  # (the names' first tries alone: see place_all)
                    names_missed = None
                out[r.key] = self._try(r, False, again, tried)
            first = dict(out)
            second: dict[Hashable, Placement | None] = {}
            for r in ordered:
                if out[r.key] is None:
                    if r.own is not None:
                        out[r.key] = second[r.key] = self._try(r, True, again, tried)
                    elif again is not None:  # (tried a second time the last time?)
                        again.looked_for(r, None, True)
        if found is not None:
            found.first, found.second = first, second
            self.found = found
        return out

    def _try(self, r: Request, second: bool, again: Again | None,
             tried: dict[Hashable, Tried]) -> Placement | None:
        """The first try of ``r`` (its leaders clear of its own markers), or its second
        (:meth:`_place_ordered`): what it found the last time, where ``again`` knows it,
        reserved as :meth:`place` would reserve it; else looked for."""
        known = again.known(r, second) if again is not None else MISSING
        if known is not MISSING:
            self.requests.pop(r.key, None)  # (in the order place() leaves them)
            self.requests[r.key] = r
            if known is not None:
                assert isinstance(known, Placement)
                self._reserve(known, 1)
                self.placed[r.key] = known
            return known
        if second:
            got = self.place(r, tried=tried.get(r.key))
        else:
            memo = Tried() if r.own is not None else None
            got = self.place(r, own=False, tried=memo)
            if got is None and memo is not None:
                tried[r.key] = memo
        if again is not None:
            again.looked_for(r, got, second)
        return got

    #: the texts for which, left out, room is made by placing them first (a sweep's
    #: crossing of a ridge: what the user asked the sweep to show), and at how many of
    #: their places beside their mark at most
    MAKE_ROOM_FOR = frozenset({"crossing"})
    MAKE_ROOM_TRIES = 6

    def _make_room(self, request: Request, ordered: Sequence[Request],
                   out: dict[Hashable, Placement | None], bare: Occupancy
                   ) -> dict[Hashable, Placement | None]:
        """A placing with ``request`` (left out of ``out``) in it: placed first, at the
        first of its places beside its mark clean of the data (``bare``: the occupancy
        before any text), then the rest in order; kept (as this layout's) only where no
        text is left out for a less important one: of each priority, the most important
        first, as many placed or more, and one more in all. Else ``out`` stays."""
        best = self._placed_by_priority(ordered, out)
        rest = [r for r in ordered if r.key != request.key]
        tried = 0
        for row in as_array(request.candidates):
            if tried >= self.MAKE_ROOM_TRIES:
                break
            trial = TextLayout(bare.copy())
            lead = None if math.isnan(row[2]) else (float(row[2]), float(row[3]),
                                                     float(row[4]), float(row[5]))
            here = replace(request, candidates=[Candidate(float(row[0]), float(row[1]), lead)],
                           far=None)
            first = trial.place(here)
            if first is None:  # (data in its way: no text moved makes room there)
                continue
            tried += 1
            trial.requests[request.key] = request
            got = trial._place_ordered(rest)
            got[request.key] = first
            if self._placed_by_priority(ordered, got) > best:
                self.occupancy, self.placed, self.requests = (trial.occupancy, trial.placed,
                                                              trial.requests)
                return got
        return out

    @staticmethod
    def _placed_by_priority(ordered: Sequence[Request],
                            out: dict[Hashable, Placement | None]) -> tuple[int, ...]:
        """How many of ``ordered`` (in order of priority) are placed in ``out``, for each
        priority, the most important first."""
        counts: dict[float, int] = {}
        for r in ordered:
            counts[r.priority] = counts.get(r.priority, 0) + (out.get(r.key) is not None)
        return tuple(counts.values())

    def _reserve(self, placement: Placement, weight: int) -> None:
        occ = self.occupancy
        a, r = placement.air, placement.rect
        occ.add_text((r[0] - a, r[1] - a, r[2] + a, r[3] + a), weight)
        occ.add_rect(placement.rect, weight)
        if placement.leader is not None:
            # (its cells as add_polyline covers them, remembered: see _LEADER_CELLS)
            key = (occ.frame, occ.cell, placement.leader)
            if key in _LEADER_CELLS:
                cells = _LEADER_CELLS[key]
            else:
                x0, y0, x1, y1 = placement.leader
                cells = occ.line_cells((x0, x1), (y0, y1), self.LEADER_HALF)
                if cells is not None:
                    cells.flags.writeable = False
                if len(_LEADER_CELLS) >= _LEADER_CELLS_SIZE:
                    _LEADER_CELLS.pop(next(iter(_LEADER_CELLS)))
                _LEADER_CELLS[key] = cells
            occ.add_cells(cells, weight)

    def remove(self, key: Hashable) -> None:
        placement = self.placed.pop(key, None)
        if placement is not None:
            self._reserve(placement, -1)
        self.requests.pop(key, None)

    def still_named(self, key: Hashable, names: Attribution) -> bool:
        """Whether the text ``key``, where it is placed, still names what ``names`` says (the
        marks as they are now): beside its own marks with no leader, or clear of the others
        with one (see :meth:`_paired`, its more lenient pass)."""
        p = self.placed[key]
        box = np.array([p.rect], dtype=float)
        if p.leader is None:
            return bool(names.paired(box)[0])
        return bool(names.led(box, np.array([p.leader], dtype=float), leader=False)[0])

    def hit_by(self, rect: Rect) -> list[Hashable]:
        """Keys of the placed texts whose box (or leader's box) meets ``rect``."""
        hit = self.hit_by_any(np.array([rect], dtype=float))
        return [key for key in self.placed if key in hit]

    def hit_by_any(self, rects: np.ndarray, bearing: bool = False) -> set[Hashable]:
        """Keys of the placed texts whose box (or leader's box) meets any of ``rects``
        (rows ``left, top, right, bottom``): :meth:`hit_by` for many rectangles at once.
        With ``bearing``, also those a marker at ``rects`` is near enough to bear on whom a
        reader pairs them with: each text whose rule looks at markers (see
        :class:`Attribution`), its box grown by its :func:`scope`."""
        rects = np.asarray(rects, dtype=float).reshape(-1, 4)
        if not len(rects) or not self.placed:
            return set()
        keys, boxes = [], []
        for key, p in self.placed.items():
            keys.append(key)
            names = self.requests[key].names if bearing and key in self.requests else None
            if names is None or not (len(names.own) or len(names.others)):
                boxes.append(p.rect)
            else:
                grow = scope(names.reach, p.rect[3] - p.rect[1])
                boxes.append((p.rect[0] - grow, p.rect[1] - grow, p.rect[2] + grow,
                              p.rect[3] + grow))
            if p.leader is not None:
                x0, y0, x1, y1 = p.leader
                keys.append(key)
                boxes.append((min(x0, x1) - 1, min(y0, y1) - 1, max(x0, x1) + 1,
                              max(y0, y1) + 1))
        b = np.asarray(boxes, dtype=float)
        meets = ((b[:, None, 0] < rects[None, :, 2]) & (rects[None, :, 0] < b[:, None, 2])
                 & (b[:, None, 1] < rects[None, :, 3]) & (rects[None, :, 1] < b[:, None, 3]))
        return {keys[i] for i in np.flatnonzero(meets.any(axis=1))}


def _followed(seg: np.ndarray, cell: float) -> tuple[tuple, np.ndarray]:
    """The leaders ``seg`` (rows ``x0, y0, x1, y1``, from the marker) as :func:`_crossing`
    follows them: each past its first :attr:`TextLayout.LEADER_SKIP` pixels, at points
    :attr:`TextLayout.LEADER_SPACING` cells apart or nearer (its ends among them), all at
    once. ``((x0, y0, dx, dy, skipped part), points on each)``."""
    dx, dy = seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]
    length = np.hypot(dx, dy)
    skip = np.minimum(TextLayout.LEADER_SKIP / np.maximum(length, 1e-9), 1.0)
    counts = np.maximum(2, np.ceil(length * (1.0 - skip)
                                   / (TextLayout.LEADER_SPACING * cell)).astype(int) + 1)
    return (seg[:, 0], seg[:, 1], dx, dy, skip), counts


def _crossing(occ: Occupancy, lines: tuple, counts: np.ndarray, stride: int,
              cross_lines: bool, own: np.ndarray | None) -> np.ndarray:
    """Whether each leader (``lines``: its start ``x0``, ``y0``, its run ``dx``, ``dy`` and
    the part skipped, each an array) crosses something drawn in ``occ`` at its ``counts``
    points spread from the skipped part to its end: at every ``stride``-th of them and the
    last (see :meth:`TextLayout._clean_leaders`)."""
    x0, y0, dx, dy, skip = lines
    # (one row per leader, as many columns as the longest has points: a shorter one's last
    # point repeated, looked at again to no effect)
    last = (counts - 1)[:, None]
    steps = -(-(int(reduce_max(counts)) - 1) // stride) + 1  # (every stride-th, and the last)
    k = np.minimum(np.arange(steps) * stride, last)
    tt = skip[:, None] + (1.0 - skip)[:, None] * (k / last)
    f, cell = occ.frame, occ.cell
    col = np.floor((x0[:, None] + dx[:, None] * tt - f[0]) / cell).astype(int)
    row = np.floor((y0[:, None] + dy[:, None] * tt - f[1]) / cell).astype(int)
    # what each point lies on (off the grid: nothing that stops a leader)
    on = (col >= 0) & (col < occ.cols) & (row >= 0) & (row < occ.rows)
    flat = row * occ.cols + col
    flat[~on] = 0
    cover = occ.grid.ravel().take(flat)
    if cross_lines:
        cover -= occ.lines.ravel().take(flat)
    hit = (cover > 0) & on
    if own is not None and reduce_any(hit, axis=None):
        # (its own markers' cells, counted where something is: a crowd's thousand markers
        # are compared with those few points alone)
        at = np.nonzero(hit)
        hit[at] = cover[at] - occ.covering(own, row[at], col[at]) > 0
    return reduce_any(hit, axis=1)


def leaders_stopped(occ: Occupancy, places: np.ndarray) -> np.ndarray:
    """Which of ``places`` (rows ``left, top, x0, y0, x1, y1``) have a leader that crosses
    something drawn in ``occ`` (lines not crossed: :attr:`Request.cross_lines` False; no
    markers of its own), as :meth:`TextLayout.place` follows it. What ``occ`` holds lies in
    every occupancy made from it (counts only add up), so such a place is never taken in
    one: a text's places can leave these out beforehand (a ridge's, whose leaders across
    the roofs' lines are refused at every edit)."""
    places = np.asarray(places, dtype=float).reshape(-1, 6)
    stopped = np.zeros(len(places), dtype=bool)
    led = (~np.isnan(places[:, 2])).nonzero()[0]
    if len(led):
        lines, counts = _followed(places[led, 2:6], occ.cell)
        stopped[led] = _crossing(occ, lines, counts, 1, False, None)
    return stopped


def boxes_stopped(occ: Occupancy, places: np.ndarray, w: float, h: float) -> np.ndarray:
    """Which of ``places`` (rows ``left, top, …``) put a ``w`` × ``h`` box out of the plot
    or over something drawn in ``occ`` (within :attr:`TextLayout.PAD`), as
    :meth:`TextLayout._free` finds. What ``occ`` holds lies in every occupancy made from it
    (counts only add up), so such a place is never free in one: as with
    :func:`leaders_stopped`, a text's places can leave these out beforehand (a roof's value
    or a ridge's text over another roof's line)."""
    places = np.asarray(places, dtype=float).reshape(-1, 6)
    return ~_boxes_clear(occ, _boxes(places, w, h))


def _boxes_clear(occ: Occupancy, boxes: np.ndarray, texts: bool = False) -> np.ndarray:
    """Which of ``boxes`` (rows ``left, top, right, bottom``) lie inside the plot with
    nothing drawn in ``occ`` under them, grown by :attr:`TextLayout.PAD` (nor a placed text,
    with ``texts``)."""
    f = occ.frame
    ok = reduce_all((boxes >= (f[0], f[1], -np.inf, -np.inf))
                    & (boxes <= (np.inf, np.inf, f[2], f[3])), axis=1)
    if reduce_any(ok):
        p = TextLayout.PAD
        ok[ok] = occ.clear_under(boxes[ok] + (-p, -p, p, p), texts=texts)
    return ok


def _boxes(cands: np.ndarray, w: float, h: float) -> np.ndarray:
    """The ``w`` × ``h`` boxes at the places ``cands`` (rows ``left, top, right,
    bottom``)."""
    return cands[:, _LEFT_TOP_TWICE] + (0.0, 0.0, w, h)


_LEFT_TOP_TWICE = np.array([0, 1, 0, 1])


def _givens(request: Request):
    """A request's lists of places in the order they are tried: the farther ones made only
    when the first two have none clean."""
    yield request.candidates
    yield request.far
    if request.farther is not None:
        yield from request.farther()
