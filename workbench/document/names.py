"""Names used once in a session: measured points and compared pairs name their operation and
machine, and a model names its operations after itself."""

from __future__ import annotations

__all__ = ["NameInUse", "unique_name"]


class NameInUse(ValueError):
    """A rename refused: another operation (or machine, or model) of the session has that
    name, and measured points and compared pairs refer to them by name."""


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name 2``, ``name 3``, … : the first not in ``taken``."""
    if name not in taken:
        return name
    n = 2
    while f"{name} {n}" in taken:
        n += 1
    return f"{name} {n}"
