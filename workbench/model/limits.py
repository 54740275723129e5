"""The limits of what a session may hold, in one table used by the readers, the editor and
the importers alike: whatever can be entered can be saved and opened again, and what cannot
be opened is refused at entry with the same message.

Numbers: :data:`~workbench.model.units.MIN_MAGNITUDE` … :data:`~workbench.model.units.MAX_MAGNITUDE`
(checked by :func:`~workbench.model.units.parse_quantity`). Texts: a length per kind, and no
control characters other than tab, line feed and carriage return (they cannot be written to
an SVG or PDF, and they would drive a terminal).
"""

from __future__ import annotations

import re

from workbench.records import record

__all__ = ["TEXT_LIMITS", "text_problem", "CONTROL_RE", "MAX_OPERATIONS", "model_problem",
           "MAX_MEASUREMENTS", "MAX_SWEEP_POINTS", "MAX_SWEEP_TOTAL", "MAX_SESSION_BYTES",
           "OverBudget", "Totals", "session_totals", "measurement_bytes", "budget_problem",
           "sweep_total_problem"]

#: The most operations a session holds, a whole model's included.
MAX_OPERATIONS = 100_000
#: The most measured points a session holds.
MAX_MEASUREMENTS = 100_000
#: Most values one sweep may expand to (a path of 100k points is already far beyond a chart).
MAX_SWEEP_POINTS = 100_000
#: The most sweep points of all the session's sweeps together (each is a point on the chart
#: and a row of the results on every machine).
MAX_SWEEP_TOTAL = 100_000
#: The largest session file: a save never writes one beyond it, and Open refuses one.
MAX_SESSION_BYTES = 32 * 1024 * 1024

#: The longest text of each kind, in characters.
TEXT_LIMITS = {
    "title": 300,
    "notes": 100_000,
    "operation": 300,       # an operation's name
    "machine": 120,         # a machine's name
    "measurement": 300,     # a measured point's name, and the operation or machine it names
    "source": 2_000,        # where a measured point came from
}

#: C0 controls other than tab, LF and CR; DEL and the C1 controls; the non-characters U+FFFE
#: and U+FFFF; lone surrogates.
CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")


def text_problem(text: str, kind: str | int) -> str | None:
    """Why ``text`` cannot be a ``kind`` of text (a key of :data:`TEXT_LIMITS`, or a length),
    or ``None``."""
    limit = TEXT_LIMITS[kind] if isinstance(kind, str) else kind
    if len(text) > limit:
        return f"is longer than {limit:,} characters ({len(text):,})"
    bad = CONTROL_RE.search(text)
    if bad is not None:
        return (f"holds the control character U+{ord(bad.group()):04X} at position "
                f"{bad.start() + 1}; remove it")
    return None


def model_problem(added: int, others: int) -> str | None:
    """Why a model that expands into ``added`` operations cannot join ``others`` operations
    (the session's other operations), or ``None``."""
    if others + added <= MAX_OPERATIONS:
        return None
    return (f"expands into {added:,} operations; with the session's other operations that "
            f"is more than {MAX_OPERATIONS:,}")


class OverBudget(ValueError):
    """An edit refused because the session would pass one of its limits (the message says
    which, with the numbers); the session is unchanged."""


@record(frozen=True)
class Totals:
    """What a session holds against its budget: operations, measured points, sweep points
    of all sweeps together, and the size of its file (estimated from above, in bytes)."""

    operations: int = 0
    measurements: int = 0
    sweep_points: int = 0
    bytes: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(self.operations + other.operations,
                      self.measurements + other.measurements,
                      self.sweep_points + other.sweep_points, self.bytes + other.bytes)


def _text_bytes(text: str | None) -> int:
    """At most the bytes ``text`` takes written as a YAML value: its UTF-8, quotes and
    doubled quotes, escapes, and the indentation of folded lines."""
    if not text:
        return 0
    size = len(text.encode("utf-8"))
    if size > 60:  # (long text is folded onto indented lines)
        size += size // 16
    return size + 4 + 2 * len(_QUOTED(text))  # (a doubled quote, or an escape)


_QUOTED = re.compile("['\"\\\\\n\r\t]").findall


_QUANTITY = 30  # the longest quantity as written ("1.2345678901234567e+300 FLOP/s")


def measurement_bytes(m) -> int:
    """At most the bytes measured point ``m`` takes in a session file."""
    size = 10 + _text_bytes(m.name)
    if m.operation is not None:
        size += 16 + _text_bytes(m.operation)
    if m.hardware is not None:
        size += 15 + _text_bytes(m.hardware)
    if m.source:
        size += 13 + _text_bytes(m.source)
    for value in (m.time_s, m.achieved_flops, m.flops, m.bytes, m.precision):
        if value is not None:
            size += 14 + _QUANTITY
    return size


def operation_bytes(entry) -> int:
    """At most the bytes an operation takes in a session file."""
    op = entry.operation
    size = 40 + _text_bytes(op.name) + len(op.kind) + _text_bytes(op.memory_level) + 64
    for key, value in op.params.items():
        size += len(key) + 5 + (len(repr(value)) if not isinstance(value, str)
                                else _text_bytes(value))
    if entry.sweep is not None:
        size += 120 + 26 * (0 if entry.sweep.range is not None else entry.sweep.points)
    return size


def session_totals(session) -> Totals:
    """The totals of ``session`` (see :class:`Totals`); models' operations are written as
    their models, but counted here as operations."""
    size = 4096 + _text_bytes(session.title) + _text_bytes(session.notes)
    size += 8192 * len(session.hardware) + 1024 * len(session.models)
    size += 64 * len(session.comparisons) + sum(
        _text_bytes(c.first) + _text_bytes(c.second) for c in session.comparisons)
    sweeps = 0
    for entry in session.operations:
        size += operation_bytes(entry)
        if entry.sweep is not None:
            sweeps += entry.sweep.points
    size += sum(measurement_bytes(m) for m in session.measurements)
    return Totals(len(session.operations), len(session.measurements), sweeps, size)


def budget_problem(totals: Totals, before: Totals | None = None) -> str | None:
    """Why a session with ``totals`` cannot be saved and opened again, or ``None``;
    ``before``: the totals before the edit (the message says what the edit adds)."""
    checks = (("operations", MAX_OPERATIONS, "operations"),
              ("measurements", MAX_MEASUREMENTS, "measured points"),
              ("sweep_points", MAX_SWEEP_TOTAL, "sweep points in all its sweeps together"))
    for field_name, limit, what in checks:
        value = getattr(totals, field_name)
        if value > limit:
            added = value - getattr(before, field_name) if before is not None else 0
            adding = f" (adding {added:,})" if added > 0 else ""
            return f"the session would hold {value:,} {what}{adding}; at most {limit:,}"
    if totals.bytes > MAX_SESSION_BYTES:
        mb = 2**20
        added = (totals.bytes - before.bytes) / mb if before is not None else 0
        adding = f" (adding {added:.1f} MB)" if added > 0 else ""
        return (f"the session file would take about {totals.bytes / mb:.1f} MB{adding}; a "
                f"session file holds at most {MAX_SESSION_BYTES // mb} MB")
    return None


def sweep_total_problem(total: int) -> str | None:
    """Why sweeps of ``total`` points in all cannot be in one session, or ``None``."""
    if total <= MAX_SWEEP_TOTAL:
        return None
    return (f"the session's sweeps have {total:,} points in total; at most "
            f"{MAX_SWEEP_TOTAL:,} (fewer values, or fewer swept operations)")
