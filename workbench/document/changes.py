"""What an edit touched (:class:`Change`) and an undoable edit (:class:`Command`)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from workbench.model.limits import Totals
from workbench.records import record

__all__ = ["Change", "Command", "What"]


class What(StrEnum):
    """What kind of thing an edit touched: the vocabulary of :class:`Change`."""

    OPERATION = "operation"        # parameters or style of the operations in ``ids``
    OPERATIONS = "operations"      # operations added, removed or reordered
    HARDWARE = "hardware"          # a machine's figures or style (``ids`` names them)
    MACHINES = "machines"          # machines added, removed or reordered
    VIEW = "view"                  # a view setting (``fields`` names it)
    TITLE = "title"
    MEASUREMENTS = "measurements"  # the measured points
    COMPARISONS = "comparisons"    # the compared pairs
    SESSION = "session"            # everything: a new or reloaded session
    STATE = "state"                # only the undo/modified state


@record(frozen=True)
class Change:
    """What an edit touched: a :class:`What`, the ids of the entries it touched and the
    fields it changed (a sweep edit is ``What.OPERATION`` with field ``"sweep"``)."""

    what: What
    ids: tuple[int, ...] = ()
    fields: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.what, What):  # a misspelt kind would be heard by no one
            raise TypeError(f"a change's kind must be a What, got {self.what!r}")


@record
class Command:
    """An undoable edit: its menu text, how to redo and undo it, and what it may merge with."""
    text: str
    redo: Callable[[], Change]
    undo: Callable[[], Change]
    merge_key: object = None
    sealed: bool = False
    #: What doing it adds to the session's totals (undoing it takes them back); ``None``:
    #: not known, the totals are counted anew when next needed.
    grows: Totals | None = None
