"""The measurements of a session, judged on its machines.

Each measurement is checked against the session (:func:`measurement_problems`: the operation
and machine it names must exist, once), predicted on each machine it concerns
(:func:`~workbench.model.analysis.evaluate_pair`) and judged against that prediction
(:func:`~workbench.model.measured.judge`).
"""

from __future__ import annotations

from workbench.model.analysis import evaluate_pair
from workbench.model.measured import Judgement, Measurement, judge
from workbench.model.roofline import Result
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.records import record

__all__ = ["MeasuredPoint", "judge_session", "measurement_problems"]


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


def measurement_problems(session: Session, measurement: Measurement) -> list[tuple[str, str]]:
    """What stops ``measurement`` from being judged in ``session``: its own problems and
    references to operations or machines the session does not have (or has several of)."""
    out = list(measurement.problems())
    if measurement.operation is not None:
        matches = [e for e in session.operations if e.operation.name == measurement.operation]
        if not matches:
            names = ", ".join(repr(e.operation.name) for e in session.operations[:10]) or "none"
            out.append(("operation", f"no operation named {measurement.operation!r} in this "
                                     f"session (operations: {names})"))
        elif len(matches) > 1:
            out.append(("operation", f"{len(matches)} operations are named "
                                     f"{measurement.operation!r}; rename one"))
    if measurement.hardware is not None:
        machines = session.machines_matching(measurement.hardware)
        if not machines:
            names = ", ".join(repr(e.preset or e.hardware.name) for e in session.hardware) or "none"
            out.append(("hardware", f"no machine {measurement.hardware!r} in this session "
                                    f"(machines: {names})"))
        elif len(machines) > 1:
            out.append(("hardware", f"{len(machines)} machines match {measurement.hardware!r}; "
                                    "use a machine's name"))
    return out


def judge_session(session: Session) -> list[MeasuredPoint]:
    """Every measurement of ``session`` judged: one point per measurement, or one per machine
    of the session for a measurement that names no machine. Operation-attached measurements
    are predicted at the operation's own parameters (not at sweep values)."""
    points: list[MeasuredPoint] = []
    for m in session.measurements:
        problems = measurement_problems(session, m)
        if problems:
            key, problem = problems[0]
            points.append(MeasuredPoint(m, None, None, None, None, f"{key}: {problem}"))
            continue
        if m.operation is not None:
            op_entry = next(e for e in session.operations if e.operation.name == m.operation)
            linked: OperationEntry | None = op_entry
        else:
            op_entry = OperationEntry(m.as_operation())
            linked = None
        machines = (session.machines_matching(m.hardware) if m.hardware is not None
                    else list(session.hardware))
        for hw_entry in machines:
            pair = evaluate_pair(op_entry, hw_entry)
            if pair.result is None:
                points.append(MeasuredPoint(m, linked, hw_entry, None, None,
                                            pair.skipped.reason if pair.skipped else "skipped"))
                continue
            try:
                judgement = judge(m, pair.result)
            except ValueError as exc:
                points.append(MeasuredPoint(m, linked, hw_entry, pair.result, None, str(exc)))
                continue
            points.append(MeasuredPoint(m, linked, hw_entry, pair.result, judgement, None))
    return points
