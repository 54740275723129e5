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

__all__ = ["TEXT_LIMITS", "text_problem", "CONTROL_RE", "MAX_OPERATIONS", "model_problem"]

#: The most operations a session holds, a whole model's included.
MAX_OPERATIONS = 100_000

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
