"""Results of every (operation, machine) pair, recomputed only where an edit touched."""

from __future__ import annotations

from workbench.document.changes import What
from workbench.document.document import Change, Document
from workbench.model.analysis import Pair, Skipped, evaluate_pair
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.operations import Counts, Operation
from workbench.model.roofline import Result

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
        # by value: the operations of a model's layers have the same parameters, so a whole
        # model's edit counts and evaluates each distinct operation once per machine
        self._counts_of: dict[tuple, Counts] = {}
        self._result_of: dict[tuple, Result] = {}
        self._key_of: dict[int, tuple | None] = {}  # op id → its value key, with _counts
        document.subscribe(self._on_change)

    def _on_change(self, change: Change) -> None:
        # the memo by value serves the evaluations that follow one change (a whole model's
        # layers); kept across changes it would grow with every value ever typed
        self._counts_of.clear()
        self._result_of.clear()
        if change.what == What.OPERATION:
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
        elif change.what == What.HARDWARE:
            if change.fields == ("visible",):
                return
            for hw_id in change.ids:
                for key in [k for k in self._pairs if k[1] == hw_id]:
                    del self._pairs[key]
        elif change.what in (What.SESSION,):
            self._counts.clear()
            self._pairs.clear()
        elif change.what in (What.OPERATIONS, What.MACHINES):
            live_ops = {e.id for e in self.document.session.operations}
            live_hw = {e.id for e in self.document.session.hardware}
            self._counts = {k: v for k, v in self._counts.items() if k in live_ops}
            self._pairs = {k: v for k, v in self._pairs.items()
                           if k[0] in live_ops and k[1] in live_hw}

    def counts(self, op_id: int, entry=None) -> Counts:
        """Counts of an operation; raises the counting error (one of :data:`COUNTING_ERRORS`)
        if its parameters are invalid, ``KeyError`` if there is no such operation. ``entry``
        is the operation's entry when the caller has it (no lookup)."""
        cached = self._counts.get(op_id)
        if cached is None:
            if entry is None:
                entry = self.document.operation(op_id)
            op = entry.operation
            try:
                key = self._key_of[op_id] = _value_key(op)
                cached = self._counts_of.get(key) if key is not None else None
                if cached is None:
                    cached = op.counts()
                    if key is not None:
                        self._counts_of[key] = cached
            except COUNTING_ERRORS as exc:
                cached = exc
            self._counts[op_id] = cached
        if isinstance(cached, Exception):
            raise cached
        return cached

    def pair(self, op_id: int, hw_id: int) -> Pair:
        cached = self._pairs.get((op_id, hw_id))
        if cached is None:
            cached = self._evaluate(op_id, self.document.operation(op_id),
                                    self.document.machine(hw_id))
        return cached

    def shared_rows(self, entries, hw_ids: list[int]) -> dict[int, list[Pair]]:
        """``{op: [pair(op', hw) for hw in hw_ids]}`` for many operation entries at once (a
        whole model's edit), where ``op'`` is the first of ``entries`` with the same counts
        as ``op``: the layers of a model share one row, evaluated once, so a row's results
        may carry another operation's name (the caller names its points itself). An
        operation that cannot be counted has a row of skipped pairs saying why."""
        out: dict[int, list[Pair]] = {}
        rows: dict[tuple, list[Pair]] = {}
        machines = None
        for entry in entries:
            op_id = entry.id
            self._count_or_none(op_id, entry)
            value = self._key_of.get(op_id)
            row = rows.get(value) if value is not None else None
            if row is None:
                if machines is None:
                    machines = [self.document.machine(h) for h in hw_ids]
                row = [self._pairs.get((op_id, m.id)) or self._evaluate(op_id, entry, m)
                       for m in machines]
                if value is not None:
                    rows[value] = row
            out[op_id] = row
        return out

    def _count_or_none(self, op_id: int, entry) -> Counts | None:
        try:
            return self.counts(op_id, entry)
        except COUNTING_ERRORS:
            self._key_of[op_id] = None  # no row to share
            return None

    def _evaluate(self, op_id: int, entry, machine) -> Pair:
        counts = self._count_or_none(op_id, entry)
        if counts is None:  # a pair with no result, and the reason, shown like any other
            reason = f"cannot be counted: {self._counts[op_id]}"
            cached = Pair(entry, machine, None,
                          Skipped(entry.operation.name, machine.hardware.label, reason))
            self._pairs[(op_id, machine.id)] = cached
            return cached
        value = self._key_of.get(op_id)
        memo = (value, machine.id)
        shared = self._result_of.get(memo) if value is not None else None
        if shared is not None:
            cached = Pair(entry, machine, shared.renamed(entry.operation.name), None)
        else:
            cached = evaluate_pair(entry, machine, counts)
            if value is not None and cached.result is not None:
                self._result_of[memo] = cached.result
        self._pairs[(op_id, machine.id)] = cached
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



def _value_key(op: Operation) -> tuple | None:
    """What an operation's counts depend on, hashable; ``None`` when a parameter is not."""
    # (with each value's type: 2 and 2.0 are equal keys but may count differently; the
    # parameters' names in their order: the same operation built twice lists them alike;
    # a list, tuple or mapping, as an elementwise chain's steps, by its text, where its
    # items' types show; the names and values as two tuples, not a pair for each: a whole
    # model's edit makes a key for each of its thousand operations)
    params = op.params
    values = tuple(params.values())
    types = tuple(map(type, values))
    key: tuple = (op.kind, op.memory_level, tuple(params), types,
                  values if _NESTED.isdisjoint(types)
                  else tuple(repr(v) if t in _NESTED else v
                             for v, t in zip(values, types, strict=True)))
    try:
        hash(key)
    except TypeError:
        return None
    return key


_NESTED = frozenset({list, tuple, dict})
