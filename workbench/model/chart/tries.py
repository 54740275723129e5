"""What one text's tries found within one placing (:meth:`TextLayout.place`), kept for its
next try: only more is covered meanwhile, so the places found covered stay covered."""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["FreeFlags", "Tried"]


class TextLayout(Protocol):
    """What tells which of a text's places are free
    (:meth:`~workbench.model.chart.placement.TextLayout._free`)."""

    def _free(self, cands: np.ndarray, w: float, h: float, air: float = 0.0) -> np.ndarray: ...


class Tried:
    """What a try of one text found, for its next try within one placing (only more is
    covered meanwhile): which of its places were free (:class:`FreeFlags`, looked at again
    only where they were), and which are paired with what it names (those do not change)."""

    def __init__(self) -> None:
        self.free_of: dict[int, tuple[np.ndarray, FreeFlags]] = {}
        self._paired: dict[tuple[int, bool], np.ndarray] = {}

    def paired_of(self, i: int, strict: bool, n: int) -> np.ndarray:
        """For each of the ``n`` places of list ``i``: paired (1, 0) or not yet known
        (-1), when ``strict`` or not (see :meth:`TextLayout._paired`)."""
        found = self._paired.get((i, strict))
        if found is None:
            found = self._paired[(i, strict)] = np.full(n, -1, dtype=np.int8)
        return found


class FreeFlags:
    """Which of a text's candidate places are free (:meth:`TextLayout._free`), worked
    out a part at a time, in order, as far as asked for: of a tag's thousand far places
    the first free few are usually enough."""

    #: candidates looked at together, at first (then twice as many each time)
    FIRST = 256

    def __init__(self, layout: TextLayout, cands: np.ndarray, w: float, h: float,
                 air: float, earlier: FreeFlags | None = None) -> None:
        """``earlier``: the flags of the same places at an earlier try of the same text,
        with only more covered since: of the places it looked at, those it found covered
        are covered still, and only those it found free are looked at again."""
        self.layout, self.cands, self.w, self.h, self.air = layout, cands, w, h, air
        self.done = 0  # candidates looked at
        self.size = self.FIRST if len(cands) > 2 * self.FIRST else len(cands)
        self.free = np.zeros(0, dtype=np.intp)
        self._again = earlier

    def between(self, i: int, j: int) -> np.ndarray:
        """The indices of the ``i``-th to the ``j``-th free places (fewer where there are
        not so many)."""
        earlier = self._again
        if earlier is not None:  # (first, what the earlier try found free: looked at again)
            self._again = None
            self.done, self.size = earlier.done, earlier.size
            was = earlier.free
            if len(was):
                self.free = was[self.layout._free(self.cands[was], self.w, self.h, self.air)]
        while len(self.free) < j and self.done < len(self.cands):
            lo, hi = self.done, min(self.done + self.size, len(self.cands))
            part = self.cands[lo:hi]
            found = np.flatnonzero(self.layout._free(part, self.w, self.h, self.air)) + lo
            self.free = np.concatenate((self.free, found)) if len(self.free) else found
            self.done, self.size = hi, 2 * self.size
        return self.free[i:j]
