"""Results of every (operation, machine) pair, recomputed only where an edit touched."""

from __future__ import annotations

from workbench.document.document import Change, Document
from workbench.model.analysis import Pair, evaluate_pair
from workbench.model.operations import Counts

__all__ = ["ResultCache"]


class ResultCache:
    """Keeps :class:`Pair` results up to date with a :class:`Document`.

    An edit of one operation recomputes that operation's counts and its pairs; a machine
    edit recomputes that machine's column; anything structural rebuilds lazily.
    """

    def __init__(self, document: Document) -> None:
        self.document = document
        self._counts: dict[int, Counts | Exception] = {}
        self._pairs: dict[tuple[int, int], Pair] = {}
        document.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        if change.what == "operation":
            if set(change.fields) <= {"color", "visible", "label", "sweep"} and change.fields:
                return
            if len(change.ids) == 1:
                (op_id,) = change.ids
                self._counts.pop(op_id, None)
                for key in [k for k in self._pairs if k[0] == op_id]:
                    del self._pairs[key]
            else:  # a group edit (a whole model): one pass, not one per operation
                ids = set(change.ids)
                for op_id in ids:
                    self._counts.pop(op_id, None)
                self._pairs = {k: v for k, v in self._pairs.items() if k[0] not in ids}
        elif change.what == "hardware":
            if change.fields == ("visible",):
                return
            for hw_id in change.ids:
                for key in [k for k in self._pairs if k[1] == hw_id]:
                    del self._pairs[key]
        elif change.what in ("session",):
            self._counts.clear()
            self._pairs.clear()
        elif change.what in ("operations", "machines"):
            live_ops = {e.id for e in self.document.session.operations}
            live_hw = {e.id for e in self.document.session.hardware}
            self._counts = {k: v for k, v in self._counts.items() if k in live_ops}
            self._pairs = {k: v for k, v in self._pairs.items()
                           if k[0] in live_ops and k[1] in live_hw}

    def counts(self, op_id: int) -> Counts:
        """Counts of an operation; raises the counting error if its parameters are invalid."""
        cached = self._counts.get(op_id)
        if cached is None:
            try:
                cached = self.document.operation(op_id).operation.counts()
            except (KeyError, ValueError, TypeError, ZeroDivisionError) as exc:
                cached = exc
            self._counts[op_id] = cached
        if isinstance(cached, Exception):
            raise cached
        return cached

    def pair(self, op_id: int, hw_id: int) -> Pair:
        key = (op_id, hw_id)
        cached = self._pairs.get(key)
        if cached is None:
            cached = evaluate_pair(self.document.operation(op_id), self.document.machine(hw_id),
                                   self.counts(op_id))
            self._pairs[key] = cached
        return cached

    def pairs(self, visible_only: bool = False) -> list[Pair]:
        session = self.document.session
        machines = [h for h in session.hardware if h.visible or not visible_only]
        out = []
        for op in session.operations:
            if visible_only and not op.visible:
                continue
            for hw in machines:
                out.append(self.pair(op.id, hw.id))
        return out
