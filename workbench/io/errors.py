"""One error type for every bad input: it names the file, the place and the problem."""

from __future__ import annotations

__all__ = ["InputError", "format_path", "did_you_mean", "unknown_key_message"]


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


def did_you_mean(word: str, options: list[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options``, or ``""``."""
    import difflib  # only a message needs it

    close = difflib.get_close_matches(word, options, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_key_message(key: object, allowed) -> str:
    """``unknown key 'x' (did you mean 'y'?); expected one of: …``."""
    hint = did_you_mean(str(key), [str(a) for a in allowed])
    return f"unknown key {key!r}{hint}; expected one of: {', '.join(sorted(allowed))}"
