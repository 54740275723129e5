"""What the subcommands share: the program name, the bad-input exit, JSON-safe numbers, an
operation's derivation as plain data, whole-number arguments and reading a session file."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys

PROG = "roofline-workbench"
EXIT_BAD_INPUT = 2


def positive_whole(expected: str, positive: str, maximum: int | None = None):
    """An argparse ``type``: a whole number of at least 1 (and at most ``maximum``). Its
    messages read ``expected {expected}, got …`` (not a whole number) and ``must be
    {positive}, got …`` (below 1)."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"must be {positive}, got {text!r}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:,}, got {text!r}")
        return value

    return parse


def fail(message: str) -> int:
    """Say ``message`` on one line of standard error; the exit status of bad input (2),
    whether or not standard error can be written (closed, or a full disk)."""
    say(f"{PROG}: {terminal(' '.join(str(message).split()))}\n")
    return EXIT_BAD_INPUT


def say(text: str) -> None:
    """Write ``text`` to standard error; when it cannot be written (closed, a full disk),
    nothing more is tried, so that the exit status stays the command's own."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        silence_stderr()


def silence_stderr() -> None:
    """Standard error to the null device (see :func:`to_null_device`)."""
    to_null_device(2)


def to_null_device(fd: int) -> None:
    """Point file descriptor ``fd`` at the null device, so that the interpreter's last flush
    of what is still buffered cannot fail a second time (and change the exit status)."""
    import os

    with contextlib.suppress(OSError):  # (no null device: nothing left to protect)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def terminal(text: str) -> str:
    """``text`` with its control characters escaped (a name holding ESC[2J must not clear
    the screen it is printed on)."""
    from workbench.io.limits import terminal_text

    return terminal_text(text)


def json_safe(value):
    """Infinite or NaN numbers (a sweep value with zero bytes…) as null, not invalid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def derivation_json(op) -> dict:
    counts = op.counts()
    terms = [
        {"kind": t.kind, "name": t.name, "formula": t.formula, "substituted": t.substituted,
         "value": float(t.value)}
        for t in counts.flop_terms + counts.byte_terms
    ]
    return {"name": op.name, "kind": op.kind, "precision": counts.precision,
            "unit": counts.unit, "kernels": counts.kernels,
            "flops": float(counts.flops), "bytes": float(counts.bytes), "terms": terms,
            "notes": counts.notes, "defaults": op.defaults_taken()}


def load(path: str):
    """The session at ``path`` and no error, or ``None`` and the error's line. A value an
    older file leaves to an example default is a warning on stderr (the output is unchanged,
    the exit status still 0)."""
    from workbench.io.errors import InputError
    from workbench.io.sessions import load_session

    assumed: list[str] = []
    try:
        session = load_session(path, assumed)
    except InputError as exc:
        return None, str(exc)
    for line in assumed:
        say(f"{PROG}: warning: {terminal(line)}\n")
    return session, None
