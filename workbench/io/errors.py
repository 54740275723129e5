"""One error type for every bad input: it names the file, the place and the problem."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["InputError", "ReadCancelled", "ReadProgress", "format_path", "did_you_mean",
           "unknown_key_message"]


def format_path(path: tuple[object, ...]) -> str:
    """``("operations", 2, "m")`` → ``operations[2].m``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class InputError(ValueError):
    """Bad input. ``str()`` gives one line: ``file:line: key.path: problem``."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 path: tuple[object, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.path = tuple(path)

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        elif self.line:
            where = f"line {self.line}: "
        key = format_path(self.path)
        text = f"{where}{key}: {self.message}" if key else f"{where}{self.message}"
        return " ".join(text.split())  # always one line


class ReadCancelled(Exception):
    """The user cancelled the read of a file (its name the argument); nothing was changed."""


class SaveCancelled(Exception):
    """The user cancelled a save before its file was written (its name the argument): the
    file on disk is as it was."""


class ReadProgress:
    """How far a long read has come, and whether to stop it: called with the fraction done
    (0…1) every few thousand items, it tells ``progress`` and raises :class:`ReadCancelled`
    when ``cancelled()`` is true. :meth:`part` is the same for one step of the read, which
    takes the share ``start``…``end`` of it."""

    def __init__(self, progress: Callable[[float], None] | None = None,
                 cancelled: Callable[[], bool] | None = None, name: str | None = None,
                 start: float = 0.0, end: float = 1.0) -> None:
        self.progress = progress
        self.cancelled = cancelled
        self.name = name
        self.start, self.end = start, end

    def __call__(self, fraction: float) -> None:
        if self.cancelled is not None and self.cancelled():
            raise ReadCancelled(self.name)
        if self.progress is not None:
            self.progress(self.start + (self.end - self.start) * min(max(fraction, 0.0), 1.0))

    def part(self, start: float, end: float) -> ReadProgress:
        """The step of the read from ``start`` to ``end`` (fractions of this one)."""
        width = self.end - self.start
        return ReadProgress(self.progress, self.cancelled, self.name,
                            self.start + width * start, self.start + width * end)


def did_you_mean(word: str, options: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options``, or ``""``."""
    import difflib  # only a message needs it

    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key_message(key: object, allowed) -> str:
    """``unknown key 'x' (did you mean 'y'?); expected one of: …``."""
    hint = did_you_mean(str(key), [str(a) for a in allowed])
    return f"unknown key {key!r}{hint}; expected one of: {', '.join(sorted(allowed))}"
