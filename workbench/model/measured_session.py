"""The measurements of a session, judged on its machines.

Each measurement is checked against the session (:func:`measurement_problems`: the operation
and machine it names must exist, once), predicted on each machine it concerns
(:func:`~workbench.model.analysis.evaluate_pair`) and judged against that prediction
(:func:`~workbench.model.measured.judge`).

A judgement depends only on the measurement's values, its operation's and its machine's:
each is remembered by them (:class:`SessionJudge`), so the chart and the Measurements table,
and every redraw after an edit, judge a measurement once, not at each look. An edit of a
measurement, an operation or a machine changes those values, and what it touched is judged
again; nothing else is.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from workbench.model.analysis import evaluate_pair
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.measured import Judgement, Measurement, judge
from workbench.model.operations import Counts
from workbench.model.roofline import Result
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.records import record

__all__ = ["MeasuredPoint", "SessionJudge", "judge_ahead", "judge_session", "measurement_key",
           "measurement_problems"]


@record(frozen=True)
class MeasuredPoint:
    """One measurement judged on one machine: ``judgement`` or, if it could not be judged,
    ``problem`` (no such operation or machine, a precision the machine lacks, …).
    ``operation`` is the linked :class:`OperationEntry` (``None`` when standalone)."""

    measurement: Measurement
    operation: OperationEntry | None
    hardware: HardwareEntry | None
    result: Result | None
    judgement: Judgement | None
    problem: str | None


#: What judging a measurement on a machine gave: its prediction, its judgement, or why not.
Outcome = tuple[Result | None, Judgement | None, str | None]


class _Memo:
    """Values by hashable keys, the oldest forgotten beyond :attr:`size` (which grows to
    twice the largest session judged, so that an undone import's judgements are still
    there when it is redone)."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()  # (sessions are also read off the window's thread)
        self.size = size

    def get(self, key: Any) -> Any:
        return self._items.get(key) if key is not None else None

    def put(self, key: Any, value: Any) -> None:
        if key is None:
            return
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def fit(self, entries: int) -> None:
        self.size = max(self.size, 2 * entries)


#: A measurement's own problems (:meth:`Measurement.problems`), by its values.
_PROBLEMS = _Memo(4096)
#: Outcomes by (measurement's values, operation's, machine's).
_JUDGED = _Memo(4096)


def measurement_key(m: Measurement) -> tuple | None:
    """Every value of ``m`` with its type (``1``, ``1.0`` and ``True`` are judged apart),
    hashable; ``None`` when one is not (nothing is remembered for it)."""
    fields = m.__dict__
    levels = fields.get("levels")
    if levels is not None:  # (a dict: by its text, where its values' types show)
        fields = {**fields, "levels": (type(levels), repr(levels))}
    values = tuple(fields.values())
    key = (values, tuple(map(type, values)))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def own_problems(m: Measurement, key: tuple | None = None) -> list[tuple[str, str]]:
    """:meth:`Measurement.problems` of ``m``, found once for its values (``key``: its
    :func:`measurement_key`, when the caller has it)."""
    key = measurement_key(m) if key is None else key
    found = _PROBLEMS.get(key)
    if found is None:
        found = tuple(m.problems())
        _PROBLEMS.put(key, found)
    return list(found)


def measurement_problems(session: Session, measurement: Measurement) -> list[tuple[str, str]]:
    """What stops ``measurement`` from being judged in ``session``: its own problems and
    references to operations or machines the session does not have (or has several of)."""
    return SessionJudge(session).problems(measurement)


class SessionJudge:
    """Judges measurements in ``session`` as it is now: one for each look at it (a redraw,
    a table's rows), as it remembers the session's operations and machines as they were
    when it first looked. Each judgement is remembered by the values it depends on, across
    judges: the next look judges only what an edit changed."""

    def __init__(self, session: Session, adding: int = 0) -> None:
        """``adding``: how many measurements are about to join the session (checked with
        :meth:`problems` first): their checks are remembered for their judging."""
        self.session = session
        self._ops: dict[str, list[OperationEntry]] | None = None
        self._machines: dict[str, list[HardwareEntry]] = {}
        self._machine_keys: dict[int, str] = {}
        self._op_keys: dict[int, str] = {}
        self._counts: dict[int, Counts | Exception] = {}
        points = len(session.measurements) + adding
        _PROBLEMS.fit(points)
        _JUDGED.fit(points * max(1, len(session.hardware)))

    def _operations_named(self, name: str) -> list[OperationEntry]:
        if self._ops is None:
            self._ops = {}
            for e in self.session.operations:
                self._ops.setdefault(e.operation.name, []).append(e)
        return self._ops.get(name, [])

    def machines_matching(self, ref: str) -> list[HardwareEntry]:
        """:meth:`Session.machines_matching`, found once for each ``ref``."""
        found = self._machines.get(ref)
        if found is None:
            found = self._machines[ref] = self.session.machines_matching(ref)
        return found

    def problems(self, m: Measurement, key: tuple | None = None) -> list[tuple[str, str]]:
        """:func:`measurement_problems` of ``m`` (``key``: its :func:`measurement_key`)."""
        session = self.session
        out = own_problems(m, key)
        if m.operation is not None:
            matches = self._operations_named(m.operation)
            if not matches:
                names = ", ".join(repr(e.operation.name) for e in session.operations[:10]) \
                    or "none"
                out.append(("operation", f"no operation named {m.operation!r} in this "
                                         f"session (operations: {names})"))
            elif len(matches) > 1:
                out.append(("operation", f"{len(matches)} operations are named "
                                         f"{m.operation!r}; rename one"))
        if m.hardware is not None:
            machines = self.machines_matching(m.hardware)
            if not machines:
                names = ", ".join(repr(e.preset or e.hardware.name) for e in session.hardware) \
                    or "none"
                out.append(("hardware", f"no machine {m.hardware!r} in this session "
                                        f"(machines: {names})"))
            elif len(machines) > 1:
                out.append(("hardware", f"{len(machines)} machines match {m.hardware!r}; "
                                        "use a machine's name"))
        return out

    def operation(self, m: Measurement) -> OperationEntry | None:
        """The operation ``m`` is attached to (the first of that name), or ``None``."""
        if m.operation is None:
            return None
        matches = self._operations_named(m.operation)
        return matches[0] if matches else None

    def machines(self, m: Measurement) -> list[HardwareEntry]:
        """The machines ``m`` is judged on: the one it names, or every machine."""
        return (self.machines_matching(m.hardware) if m.hardware is not None
                else list(self.session.hardware))

    def outcome(self, m: Measurement, op_entry: OperationEntry | None, hw_entry: HardwareEntry,
                key: tuple | None = None) -> Outcome:
        """``m`` (free of :meth:`problems`) judged on ``hw_entry``, attached to ``op_entry``
        (``None``: standalone): ``(prediction, judgement, None)``, or why it was not judged
        in place of what is missing. An operation that cannot be counted says why; a
        standalone measurement's prediction that cannot be made raises (one of
        :data:`~workbench.model.errors.COUNTING_ERRORS`). ``key``: ``m``'s
        :func:`measurement_key`."""
        key = measurement_key(m) if key is None else key
        hw_key = self._machine_keys.get(hw_entry.id)
        if hw_key is None:  # (the figures that predict: a machine's are all in its text)
            hw_key = self._machine_keys[hw_entry.id] = repr(hw_entry.hardware)
        op_key = None
        if op_entry is not None:
            op_key = self._op_keys.get(op_entry.id)
            if op_key is None:
                op_key = self._op_keys[op_entry.id] = repr(op_entry.operation)
        memo = (key, op_key, hw_key) if key is not None else None
        found = _JUDGED.get(memo)
        if found is None:
            found = self._judge(m, op_entry, hw_entry)
            _JUDGED.put(memo, found)
        return found

    def _judge(self, m: Measurement, op_entry: OperationEntry | None,
               hw_entry: HardwareEntry) -> Outcome:
        if op_entry is not None:
            counts = self._counts.get(op_entry.id)
            if counts is None:
                try:
                    counts = op_entry.operation.counts()
                except COUNTING_ERRORS as exc:
                    counts = exc
                self._counts[op_entry.id] = counts
            if isinstance(counts, Exception):
                return None, None, f"cannot be counted: {counts}"
            pair = evaluate_pair(op_entry, hw_entry, counts)
        else:
            pair = evaluate_pair(OperationEntry(m.as_operation()), hw_entry)
        if pair.result is None:
            return None, None, pair.skipped.reason if pair.skipped else "skipped"
        try:
            return pair.result, judge(m, pair.result, checked=True), None
        except ValueError as exc:
            return pair.result, None, str(exc)

    def points(self, m: Measurement) -> list[MeasuredPoint]:
        """``m`` judged: one point on the machine it names, or one on each machine."""
        key = measurement_key(m)
        problems = self.problems(m, key)
        if problems:
            name, problem = problems[0]
            return [MeasuredPoint(m, None, None, None, None, f"{name}: {problem}")]
        linked = self.operation(m)
        return [MeasuredPoint(m, linked, hw_entry, *self.outcome(m, linked, hw_entry, key))
                for hw_entry in self.machines(m)]


def judge_session(session: Session) -> list[MeasuredPoint]:
    """Every measurement of ``session`` judged: one point per measurement, or one per machine
    of the session for a measurement that names no machine. Operation-attached measurements
    are predicted at the operation's own parameters (not at sweep values)."""
    judge_ = SessionJudge(session)
    return [point for m in session.measurements for point in judge_.points(m)]


def judge_ahead(session: Session, measurements: list[Measurement],
                progress: Callable[[float], None] | None = None,
                cancel: Callable[[], bool] | None = None) -> bool:
    """Judge ``measurements``, about to join ``session``, on its machines as they are now, so
    that the chart and the table that show them once they have joined find them judged: a
    large file's points are judged as it is read, off the window's thread. ``progress`` is
    told the fraction done; False when ``cancel()`` said so (at most a few hundred points
    after it did)."""
    judge_ = SessionJudge(session, adding=len(measurements))
    for i, m in enumerate(measurements):
        if i % 256 == 0:
            if cancel is not None and cancel():
                return False
            if progress is not None:
                progress(i / len(measurements))
        try:
            judge_.points(m)
        except COUNTING_ERRORS:
            continue  # (said where the point is shown, as when nothing was judged ahead)
    return True
