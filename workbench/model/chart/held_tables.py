"""The tables an occupancy answers from while it is held
(:meth:`~workbench.model.chart.occupancy.Occupancy.held`): summed-area tables of its covered
cells, made once, and what was covered since. A part of
:mod:`workbench.model.chart.occupancy`."""

from __future__ import annotations

import weakref
from typing import Protocol

import numpy as np

__all__ = ["Held", "HeldBase", "reduce_all", "reduce_any", "reduce_max", "reduce_min"]


class Occupancy(Protocol):
    """What the tables are made of: an occupancy's counts
    (:class:`~workbench.model.chart.occupancy.Occupancy`)."""

    grid: np.ndarray
    soft: np.ndarray
    texts: np.ndarray


#: reductions called as numpy's own ufuncs: ``a.any()``, ``a.min()``, ``np.all(a, axis=1)``
#: and the like pass through numpy's Python wrappers, a good part of their cost on the few
#: dozen values the layout looks at at a time (each reduces along ``axis``, 0 unless given;
#: ``axis=None``: over all)
reduce_any, reduce_all = np.logical_or.reduce, np.logical_and.reduce
reduce_min, reduce_max = np.minimum.reduce, np.maximum.reduce


def _summed(covered: np.ndarray) -> np.ndarray:
    """The summed-area table of ``covered`` (a row and a column of zeros first)."""
    sat = np.zeros((covered.shape[0] + 1, covered.shape[1] + 1), dtype=np.int32)
    counts = covered.astype(np.int32)
    np.cumsum(counts, axis=0, out=counts)
    np.cumsum(counts, axis=1, out=sat[1:, 1:])
    return sat


class HeldBase:
    """What the holds of an occupancy's copies share (:meth:`Occupancy.hold_copies`): the
    occupancy's counts (not changed after; the arrays, not the occupancy, which holds
    this), the tables of them, as made, and whether it has texts."""

    def __init__(self, occ: Occupancy) -> None:
        self.grid, self.soft, self.texts = occ.grid, occ.soft, occ.texts
        self.tables: dict = {}
        self.any_text = bool(occ.texts.any())


class Held:
    """What :meth:`Occupancy.held` keeps: summed-area tables of the grid's covered cells
    (made when first asked for), and each thing covered since: its cells' span, and whether
    it covers all of it (a box) or some cells of it (a line)."""

    BOX, TEXTS, CELLS = 0, 1, 2  # a box of the grid, of the texts; some cells of the grid
    #: boxes a copy of a :class:`HeldBase` may add before its placing, at most (more: a whole
    #: model's thousands of markers, counted afresh)
    DRAWN_BOXES = 256

    def __init__(self, occ: Occupancy, base: HeldBase | None = None) -> None:
        """``base``: the tables are those of an occupancy ``occ`` is a copy of (see
        :meth:`Occupancy.hold_copies`), else of ``occ`` as it is now."""
        # (by a weak reference: the occupancy holds this, and a cycle of the two, kept after
        # a placing, left its grids to the cyclic collector, megabytes an edit)
        self._occ = weakref.ref(occ)
        self.shape = occ.grid.shape
        self.base = base
        #: whether cells were only covered more since (else the tables no longer tell, and
        #: boxes are counted afresh); so from counts of none or more (a count below none
        #: covered once more is still not covered)
        self.more_only = True if base is not None else bool(occ.grid.min() >= 0
                                                            and occ.texts.min() >= 0)
        self.tables: dict = base.tables if base is not None else {}
        self.any_text = base.any_text if base is not None else bool(occ.texts.any())
        self.spans = np.zeros((32, 5), dtype=np.intp)  # r0, r1, c0, c1, what
        self.count = 0
        self.line_cells: np.ndarray | None = None  # the lines' cells covered since
        #: a copy's hold, before its placing holds it (what is drawn still being added)
        self.drawing = base is not None

    def copy_for(self, occ: Occupancy) -> Held:
        """This hold, for ``occ``: a copy of its occupancy (the same counts)."""
        assert self.base is not None  # (only a copy's: see Occupancy.copy)
        new = Held(occ, self.base)
        new.spans, new.count, new.drawing = self.spans.copy(), self.count, self.drawing
        new.line_cells = None if self.line_cells is None else self.line_cells.copy()
        return new

    def covered_boxes(self, r0: np.ndarray, r1: np.ndarray, c0: np.ndarray,
                      c1: np.ndarray) -> None:
        """Many boxes of the grid covered once more (cells ``r0:r1``, ``c0:c1`` each, none
        empty)."""
        n = len(r0)
        while self.count + n > len(self.spans):
            self.spans = np.concatenate((self.spans, np.zeros_like(self.spans)))
        self.spans[self.count:self.count + n] = np.column_stack(
            (r0, r1, c0, c1, np.full(n, self.BOX)))
        self.count += n

    def covered(self, what: int, r0: int, r1: int, c0: int, c1: int, weight: int,
                cells: np.ndarray | None = None) -> None:
        """Cells ``r0:r1``, ``c0:c1`` (or just ``cells``, flat, within them) changed by
        ``weight``."""
        if weight < 0:
            self.more_only = False
        if weight <= 0 or r1 <= r0 or c1 <= c0:
            return
        if self.count == len(self.spans):
            self.spans = np.concatenate((self.spans, np.zeros_like(self.spans)))
        self.spans[self.count] = (r0, r1, c0, c1, what)
        self.count += 1
        if cells is not None:
            if self.line_cells is None:
                self.line_cells = np.zeros(self.shape, dtype=bool)
            self.line_cells.ravel()[cells] = True

    def table(self, kind: str) -> np.ndarray | None:
        """The summed-area table of the covered cells (``data``: what
        :meth:`Occupancy.counts_local` counts, ``all``: with the texts, ``texts``: these
        alone; None: none)."""
        if kind not in self.tables:
            occ = self.base if self.base is not None else self._occ()
            assert occ is not None  # (asked through the occupancy: see held)
            if kind == "texts":
                covered = occ.texts > 0 if self.any_text else None
            elif kind == "all" and not self.any_text:
                covered = None
                self.tables[kind] = self.table("data")
            else:
                covered = occ.grid > 0
                covered |= occ.soft
                if kind == "all":
                    covered |= occ.texts > 0
            if kind not in self.tables:
                self.tables[kind] = _summed(covered) if covered is not None else None
        return self.tables[kind]

    def clear_under(self, r0: np.ndarray, r1: np.ndarray, c0: np.ndarray, c1: np.ndarray,
                    kind: str) -> np.ndarray:
        """Whether no covered cell (of the table ``kind``) lies in each box of rows
        ``r0:r1`` and columns ``c0:c1``: see :meth:`Occupancy.clear_under`."""
        sat = self.table(kind)
        if sat is None:
            clear = np.ones(len(r0), dtype=bool)
        else:
            # (looked up in the flat table: cheaper than by row and column)
            flat, wide = sat.ravel(), sat.shape[1]
            top, bottom = r0 * wide, r1 * wide
            clear = (flat.take(bottom + c1) - flat.take(top + c1) - flat.take(bottom + c0)
                     + flat.take(top + c0)) == 0
        if not self.count:
            return clear
        spans = self.spans[:self.count]
        what = spans[:, 4]
        spans = spans[(what == self.TEXTS) if kind == "texts" else
                      (what != self.TEXTS) if kind == "data" else slice(None)]
        at = (clear & (r1 > r0) & (c1 > c0)).nonzero()[0]
        if not len(spans) or not len(at):
            return clear
        # (only what was covered where the boxes lie: a text's places lie close together)
        spans = spans[(spans[:, 0] < reduce_max(r1[at])) & (spans[:, 1] > reduce_min(r0[at]))
                      & (spans[:, 2] < reduce_max(c1[at])) & (spans[:, 3] > reduce_min(c0[at]))]
        if not len(spans):
            return clear
        b0, b1, d0, d1 = r0[at, None], r1[at, None], c0[at, None], c1[at, None]
        meets = ((b0 < spans[:, 1]) & (spans[:, 0] < b1)
                 & (d0 < spans[:, 3]) & (spans[:, 2] < d1))
        line = spans[:, 4] == self.CELLS
        covered = reduce_any(meets & ~line, axis=1)
        # a line's cells, not all of its span: the box's cells looked at
        for i in (~covered & reduce_any(meets & line, axis=1)).nonzero()[0].tolist():
            k = at[i]
            assert self.line_cells is not None  # (a span of line cells sets them)
            covered[i] = reduce_any(self.line_cells[r0[k]:r1[k], c0[k]:c1[k]], axis=None)
        clear[at[covered]] = False
        return clear
