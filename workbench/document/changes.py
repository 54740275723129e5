"""What an edit touched (:class:`Change`) and an undoable edit (:class:`Command`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Change", "Command"]


@dataclass(frozen=True)
class Change:
    """What an edit touched.

    ``what`` is one of ``"operation"`` (parameters or style of the operations in ``ids``),
    ``"operations"`` (added, removed or reordered), ``"hardware"`` (a machine's figures or
    style; ``ids`` names them), ``"machines"`` (added, removed or reordered), ``"view"``,
    ``"title"``, ``"measurements"`` (the measured points), ``"comparisons"`` (the compared
    pairs), ``"session"`` (everything: a new or reloaded session), ``"state"`` (only the
    undo/modified state). A sweep edit is ``"operation"`` with field ``"sweep"``.
    """

    what: str
    ids: tuple[int, ...] = ()
    fields: tuple[str, ...] = ()


@dataclass
class Command:
    """An undoable edit: its menu text, how to redo and undo it, and what it may merge with."""
    text: str
    redo: Callable[[], Change]
    undo: Callable[[], Change]
    merge_key: object = None
    sealed: bool = False
