"""Evaluate every operation of a session on every machine."""

from __future__ import annotations

from workbench.model.hardware import UnknownLevel, UnsupportedPrecision
from workbench.model.roofline import Result, calibrated_for, evaluate_counts
from workbench.model.session import HardwareEntry, OperationEntry, Session
from workbench.records import record

__all__ = ["Skipped", "Pair", "evaluate_session", "evaluate_pair"]


@record(frozen=True)
class Skipped:
    """Why an (operation, machine) pair has no result."""
    operation: str
    hardware: str
    reason: str


@record(frozen=True)
class Pair:
    """An (operation, machine) pair and its result, or why it has none."""
    operation: OperationEntry
    hardware: HardwareEntry
    result: Result | None
    skipped: Skipped | None


def evaluate_pair(op_entry: OperationEntry, hw_entry: HardwareEntry, counts=None) -> Pair:
    op = op_entry.operation
    hw = hw_entry.hardware
    counts = counts if counts is not None else op.counts()
    try:
        result = evaluate_counts(counts, hw, op.level_on(hw), op.name,
                                 calibrated_for(op.kind, op.params, hw))
    except (UnsupportedPrecision, UnknownLevel) as exc:
        return Pair(op_entry, hw_entry, None, Skipped(op.name, hw.label, str(exc).strip("'\"")))
    return Pair(op_entry, hw_entry, result, None)


def evaluate_session(session: Session, visible_only: bool = False) -> list[Pair]:
    """One :class:`Pair` per (operation, machine), operations outermost."""
    pairs = []
    machines = [h for h in session.hardware if h.visible or not visible_only]
    for op_entry in session.operations:
        if visible_only and not op_entry.visible:
            continue
        counts = op_entry.operation.counts()
        for hw_entry in machines:
            pairs.append(evaluate_pair(op_entry, hw_entry, counts))
    return pairs
