"""Names used once in a session: measured points and compared pairs name their operation and
machine, and a model names its operations after itself."""

from __future__ import annotations

from workbench.model.limits import TEXT_LIMITS

__all__ = ["NameInUse", "unique_name", "suffixed"]


class NameInUse(ValueError):
    """A rename refused: another operation (or machine, or model) of the session has that
    name, and measured points and compared pairs refer to them by name."""


def unique_name(name: str, taken: set[str], kind: str, suffix: str = "") -> str:
    """``name`` (a copy's: ``name`` with ``suffix``, ``"GEMM (copy)"``), or ``name 2``,
    ``name 3``, … : the first not in ``taken``, within the length a session file holds for a
    ``kind`` of name (a key of :data:`~workbench.model.limits.TEXT_LIMITS`; see
    :func:`suffixed`)."""
    candidate = suffixed(name, suffix, kind) if suffix else name
    n = 2
    while candidate in taken:
        candidate = suffixed(name, f"{suffix} {n}", kind)
        n += 1
    return candidate


def suffixed(name: str, suffix: str, kind: str) -> str:
    """``name`` followed by ``suffix`` (``" (copy)"``, ``" 2"``), ``name`` shortened where the
    whole would be longer than a session file holds for a ``kind`` of name: the name is kept
    and the file opens again."""
    room = TEXT_LIMITS[kind] - len(suffix)
    if len(name) > room:
        name = name[:room].rstrip()
    return name + suffix
