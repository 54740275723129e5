"""The limits of what a session may hold, in one table used by the readers, the editor and
the importers alike: whatever can be entered can be saved and opened again, and what cannot
be opened is refused at entry with the same message.

Numbers: :data:`~workbench.model.units.MIN_MAGNITUDE` … :data:`~workbench.model.units.MAX_MAGNITUDE`
(checked by :func:`~workbench.model.units.parse_quantity`). Texts: a length per kind, and no
control characters other than tab, line feed and carriage return (they cannot be written to
an SVG or PDF, and they would drive a terminal).
"""

from __future__ import annotations

import math
import re

from workbench.records import record

__all__ = ["TEXT_LIMITS", "text_problem", "CONTROL_RE", "MAX_OPERATIONS", "model_problem",
           "MAX_MACHINES", "MAX_MODELS", "MAX_COMPARISONS", "MAX_MEASUREMENTS",
           "MAX_SWEEP_POINTS", "MAX_SWEEP_TOTAL", "MAX_SESSION_BYTES", "MAX_STEPS",
           "OverBudget", "Totals", "session_totals", "measurement_bytes", "budget_problem",
           "sweep_total_problem", "model_bytes", "operation_bytes", "hardware_bytes",
           "text_bytes"]

#: The most operations a session holds, a whole model's included.
MAX_OPERATIONS = 100_000
#: The most machines a session holds.
MAX_MACHINES = 64
#: The most whole models a session holds.
MAX_MODELS = 64
#: The most compared pairs a session holds.
MAX_COMPARISONS = 1000
#: The most measured points a session holds.
MAX_MEASUREMENTS = 100_000
#: Most values one sweep may expand to (a path of 100k points is already far beyond a chart).
MAX_SWEEP_POINTS = 100_000
#: The most sweep points of all the session's sweeps together (each is a point on the chart
#: and a row of the results on every machine).
MAX_SWEEP_TOTAL = 100_000
#: The most steps of one elementwise chain (its editor draws a row per step: a chain of
#: hundreds takes seconds to show, and no kernel fuses that many).
MAX_STEPS = 128
#: The largest session file: a save never writes one beyond it, and Open refuses one.
MAX_SESSION_BYTES = 32 * 1024 * 1024

#: The longest text of each kind, in characters.
TEXT_LIMITS = {
    "title": 300,
    "notes": 100_000,
    "operation": 300,       # an operation's name
    "machine": 120,         # a machine's name
    "model": 200,           # a whole model's name
    "measurement": 300,     # a measured point's name, and the operation or machine it names
    "source": 2_000,        # where a measured point came from
    "path": 4_096,          # a file a session names (a model's config): the longest path a
                            # system opens
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
    of all sweeps together, the size of its file (estimated from above, in bytes), and its
    machines, whole models and compared pairs."""

    operations: int = 0
    measurements: int = 0
    sweep_points: int = 0
    bytes: int = 0
    machines: int = 0
    models: int = 0
    comparisons: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(*(a + b for a, b in zip(self._values(), other._values(), strict=True)))

    def __sub__(self, other: Totals) -> Totals:
        return Totals(*(a - b for a, b in zip(self._values(), other._values(), strict=True)))

    def _values(self) -> tuple[int, ...]:
        return (self.operations, self.measurements, self.sweep_points, self.bytes,
                self.machines, self.models, self.comparisons)

    def grows(self) -> bool:
        """Whether any of these (the change an edit makes) is an increase."""
        return max(self._values()) > 0


def text_bytes(text: str | None) -> int:
    """At most the bytes ``text`` takes written as a YAML value: :func:`_text_written`, and
    the indentation of folded lines."""
    if not text:
        return 0
    size = _text_written(text)
    if size > 60:  # (long text is folded onto indented lines)
        size += size // 16
    return size


def _text_written(text: str) -> int:
    """At most the bytes ``text`` takes written as a YAML value on one line, quotes included:
    its UTF-8, and what each character that is not written as it is adds (the YAML writer
    picks the style, so the costliest is counted): a doubled quote or a two-character escape
    (``''``, ``\\"``, ``\\t``), a line break written as two with the next line's indentation,
    and the escapes of characters it does not write as they are (``\\uFEFF`` for 3 bytes,
    ``\\U0001F600`` for 4)."""
    size = (len(text) if text.isascii() else len(text.encode("utf-8"))) + 2
    for char in _COSTLY(text):
        size += _EXTRA.get(char, 6)  # (a character beyond U+FFFF: 10 bytes for its 4)
    return size


_COSTLY = re.compile("['\"\\\\\t\r\n\u2028\u2029\ufeff\U00010000-\U0010ffff]").findall
_EXTRA = {"'": 1, '"': 1, "\\": 1, "\t": 1, "\r": 1, "\ufeff": 3,
          "\n": 7, "\u2028": 7, "\u2029": 7}


#: The longest quantity beyond the range of :func:`_quantity_bytes`'s rule as written (up to
#: 10⁴⁰, "12345678901234567000000 EFLOP/s" with its 17 digits padded with zeros).
_QUANTITY = 32


def _quantity_bytes(value: float, unit: str = "B") -> int:
    """At most the bytes ``value`` takes written as a quantity (a time, or FLOP/s, FLOPs or
    bytes, as :func:`~workbench.model.units.format_quantity` writes them to a file): the
    digits of its shortest text (``repr``) with the point moved to its SI prefix, then the
    prefix (``µ``: 2 bytes) and the unit; below 1 (bytes per level only) written in full
    ("0.000…0123 B", a zero per decade), and beyond the largest prefix padded with zeros."""
    if unit == "s" or 1 <= value < 1e21:  # (a time has a prefix down to its least, 1 ps)
        return len(repr(value)) + 4 + len(unit)
    if value == 0:
        return 4
    if value < 1:
        return _QUANTITY + 1 - math.floor(math.log10(value))
    return _QUANTITY


def measurement_bytes(m) -> int:
    """At most the bytes measured point ``m`` takes in a session file: each key that
    :func:`~workbench.io.sessions.measurement_to_data` writes, with its separator (``", "``,
    or a line break and the indentation), and its value at its longest; then the lines a
    long item is folded onto (a line is folded past 96 characters, and its fold adds a
    line break, 4 spaces of indentation and at most an escape)."""
    size = 11 + _text_written(m.name)  # ("- {name: …}" and its line break)
    for key, text in (("operation", m.operation), ("hardware", m.hardware),
                      ("precision", m.precision), ("unit", m.unit), ("run", m.run)):
        if text is not None:
            size += len(key) + 5 + _text_written(text)
    if m.source:
        size += 11 + _text_written(m.source)
    if m.time_s is not None:
        size += 9 + _quantity_bytes(m.time_s, "s")
    for key, value, unit in (("achieved", m.achieved_flops, "FLOP/s"), ("flops", m.flops, "FLOP"),
                             ("bytes", m.bytes, "B")):
        if value is not None:
            size += len(key) + 5 + _quantity_bytes(value, unit)
    if m.levels:  # ("levels: {l1: …, l2: …, dram: …}")
        size += 12 + sum(len(level) + 4 + _quantity_bytes(value)
                         for level, value in m.levels.items())
    if m.count != 1:
        size += 10 + len(str(m.count))
    return size + 5 * (size // 96)


def operation_bytes(entry) -> int:
    """At most the bytes an operation takes in a session file."""
    op = entry.operation
    size = 40 + text_bytes(op.name) + len(op.kind) + text_bytes(op.memory_level) + 64
    for key, value in op.params.items():
        size += len(key) + 5 + (len(repr(value)) if not isinstance(value, str)
                                else text_bytes(value))
    if entry.sweep is not None:
        size += 120 + 26 * (0 if entry.sweep.range is not None else entry.sweep.points)
    return size


def hardware_bytes(entry) -> int:
    """At most the bytes a machine takes in a session file: its figures, keys and
    calibration block (4 KB for a preset's), then what is as long as it is given: its texts
    and sources, and each named peak, level and link (a name is written up to three times:
    its figure, the main memory or a link's latency, and the measured figures)."""
    hw = entry.hardware
    size = 8192 + sum(text_bytes(text) for text in (hw.name, hw.id, hw.vendor, hw.kind,
                                                     hw.notes))
    size += sum(text_bytes(source) + 8 for source in hw.sources)
    if hw.calibration is not None:
        size += text_bytes(hw.calibration.source)
    for table in (hw.compute, hw.vector_compute, hw.memory, hw.interconnect, hw.link_latency):
        size += sum(3 * len(name) + 32 + _QUANTITY for name in table)
    return size


def model_bytes(model) -> int:
    """At most the bytes a whole model takes in a session file (its operations are not
    written): its set-up, view and colours (1 KB), its name, and its config's path, which
    Save writes relative to the session's folder (each folder up to the one both share a
    ``../``) while that path is within :data:`TEXT_LIMITS`, else as it is."""
    # (a shipped config is written by its name, but that is one model in 64 at most)
    return 1024 + text_bytes(model.name) + text_bytes(model.config) + TEXT_LIMITS["path"]


def session_totals(session) -> Totals:
    """The totals of ``session`` (see :class:`Totals`); models' operations are written as
    their models, and counted here as operations."""
    size = 4096 + text_bytes(session.title) + text_bytes(session.notes)
    size += sum(map(hardware_bytes, session.hardware)) + sum(map(model_bytes, session.models))
    size += 64 * len(session.comparisons) + sum(
        text_bytes(c.first) + text_bytes(c.second) for c in session.comparisons)
    expanded = {i for model in session.models for i in model.op_ids}
    sweeps = 0
    for entry in session.operations:
        if entry.id not in expanded:
            size += operation_bytes(entry)
        if entry.sweep is not None:
            sweeps += entry.sweep.points
    size += sum(measurement_bytes(m) for m in session.measurements)
    return Totals(len(session.operations), len(session.measurements), sweeps, size,
                  len(session.hardware), len(session.models), len(session.comparisons))


def budget_problem(totals: Totals, before: Totals | None = None) -> str | None:
    """Why a session with ``totals`` cannot be saved and opened again, or ``None``;
    ``before``: the totals before the edit (the message says what the edit adds)."""
    checks = (("operations", MAX_OPERATIONS, "operations"),
              ("measurements", MAX_MEASUREMENTS, "measured points"),
              ("sweep_points", MAX_SWEEP_TOTAL, "sweep points in all its sweeps together"),
              ("machines", MAX_MACHINES, "machines"), ("models", MAX_MODELS, "models"),
              ("comparisons", MAX_COMPARISONS, "compared pairs"))
    for field_name, limit, what in checks:
        value = getattr(totals, field_name)
        if value > limit:
            added = value - getattr(before, field_name) if before is not None else 0
            adding = f" (adding {added:,})" if added > 0 else ""
            return f"the session would hold {value:,} {what}{adding}; at most {limit:,}"
    if totals.bytes > MAX_SESSION_BYTES:
        mb = 2**20
        added = (totals.bytes - before.bytes) / mb if before is not None else 0
        adding = (f" (adding {added:.1f} MB)" if added >= 0.1
                  else f" (adding {added * 1024:.1f} KB)" if added > 0 else "")
        return (f"the session file would take about {totals.bytes / mb:.1f} MB{adding}; a "
                f"session file holds at most {MAX_SESSION_BYTES // mb} MB")
    return None


def sweep_total_problem(total: int) -> str | None:
    """Why sweeps of ``total`` points in all cannot be in one session, or ``None``."""
    if total <= MAX_SWEEP_TOTAL:
        return None
    return (f"the session's sweeps have {total:,} points in total; at most "
            f"{MAX_SWEEP_TOTAL:,} (fewer values, or fewer swept operations)")
