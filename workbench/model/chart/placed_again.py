"""A placing of every text that differs from an earlier one in a few texts, taken along it.

A full placing (:meth:`TextLayout.place_all`) places the texts one by one in order, each at
its first clean place given what was placed before it, then tries those left out again, more
leniently. Placed again from the same occupancy, with the same requests (the same objects)
in the same order, it finds the same: so while every text so far has found what it found
the last time, the next unchanged text finds it too and is not looked for again. The chart
key's steps (a crowd of tags said in parts, lone tags joined) change a few texts that found
no place and place everything again, to see whether the chart then tells more; where the
changed texts find no place again, that placing costs a few look-ups instead of a search
for every text. A text that finds something else than the last time ends it: every text
after it is looked for again."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from workbench.records import record

if TYPE_CHECKING:
    from workbench.model.chart.occupancy import Occupancy

__all__ = ["MISSING", "Again", "Found"]


class Request(Protocol):
    """A text to place (:class:`~workbench.model.chart.placement.Request`), by its key."""

    @property
    def key(self) -> Hashable: ...


#: where a text was placed (a :class:`~workbench.model.chart.placement.Placement`, compared
#: by its box, leader, air and weight), or None where it found no place
Placement = object

#: what :meth:`Again.known` answers for a text to be looked for
MISSING = object()


def _counts(occupancy: Occupancy) -> tuple[np.ndarray, ...]:
    return occupancy.grid, occupancy.soft, occupancy.lines, occupancy.texts


@record(eq=False)
class Found:
    """What a full placing found: the occupancy it started from (copies of its counts), its
    requests in order, and what each found at its first try and at its second."""

    frame: tuple
    cell: float
    start: tuple[np.ndarray, ...]
    requests: Mapping[Hashable, Request]
    first: Mapping[Hashable, Placement | None]
    second: Mapping[Hashable, Placement | None]

    @classmethod
    def starting(cls, occupancy: Occupancy, ordered: Sequence[Request]) -> Found:
        """The record of a placing of ``ordered`` about to start from ``occupancy``."""
        return cls(occupancy.frame, occupancy.cell, occupancy.own_counts(),
                   {r.key: r for r in ordered}, {}, {})

    def matches(self, occupancy: Occupancy, ordered: Sequence[Request]) -> bool:
        """Whether a placing of ``ordered`` from ``occupancy`` starts as this one did: the same
        plot and counts, and the texts it shares with this one in the same order; a text of
        this one left out must have found no place (one added is looked for, like a text
        whose request changed)."""
        if occupancy.frame != self.frame or occupancy.cell != self.cell:
            return False
        keys = [r.key for r in ordered]
        now = set(keys)
        if [k for k in keys if k in self.requests] != [k for k in self.requests if k in now]:
            return False
        if any(self.first.get(k) is not None or self.second.get(k) is not None
               for k in self.requests if k not in now):
            return False
        return all(a is b or np.array_equal(a, b)
                   for a, b in zip(_counts(occupancy), self.start, strict=True))


class Again:
    """A placing taken along an earlier one's :class:`Found`, while in step with it."""

    def __init__(self, found: Found) -> None:
        self.found = found
        self.in_step = True

    def known(self, request: Request, second: bool) -> object:
        """What ``request`` finds at its first try (or its second): what it found the last
        time, while every text before it did too and it is the same request; else
        :data:`MISSING` (to be looked for)."""
        found = self.found
        if not self.in_step or found.requests.get(request.key) is not request:
            return MISSING
        return (found.second if second else found.first)[request.key]

    def looked_for(self, request: Request, got: Placement | None, second: bool) -> None:
        """``request`` was looked for and found ``got``: the placing stays in step only where
        that is what its text found the last time (the occupancy then the same)."""
        if self.in_step:
            before = (self.found.second if second else self.found.first).get(request.key)
            self.in_step = got == before
