"""Command line: the desktop app, and the same engine headless.

    roofline-workbench [SESSION.yaml]
    roofline-workbench analyze SESSION.yaml [--format table|json|csv] [--measurements FILE.csv]
    roofline-workbench render SESSION.yaml -o FIG.png|.svg|.pdf|.html [--size slide|single|double]
                       [--width PX] [--height PX] [--dpi N] [--theme NAME] [--transparent]
    roofline-workbench presets [--format table|json]
    roofline-workbench model CONFIG.json --phase prefill|decode --batch B [...]
    roofline-workbench measure [--device cpu|cuda|cuda:N|mps] [--quick] [-o MACHINE.yaml]
                       [--compare PRESET]
    roofline-workbench --version

Bad input prints one line naming the file, the place and the problem, and exits with 2.

One module per subcommand (:mod:`~workbench.cli.analyze`, :mod:`~workbench.cli.render`,
:mod:`~workbench.cli.presets`, :mod:`~workbench.cli.measure`, :mod:`~workbench.cli.model`),
each with ``add_parser(sub)`` and ``run(args)``; :mod:`~workbench.cli.common` holds what they
share. The command line sits on top: it may import every other part of the package, and only
``workbench.__main__`` imports it.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence

from workbench import __version__
from workbench.cli.common import EXIT_BAD_INPUT, PROG, fail, to_null_device


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    from workbench.cli import analyze, measure, model, presets, render

    parser = _Parser(prog=PROG, description="Roofline Workbench: the roofline model, live.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for command in (analyze, render, presets, measure, model):
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    commands = {"analyze", "presets", "render", "model", "measure", "-h", "--help",
                "--version"}
    if not args or args[0] not in commands:
        if args and args[0].startswith("-") and args[0] not in commands:
            _parser().parse_args(args)  # reports the unknown option
        if args and _looks_like_a_command(args[0]):
            return fail(unknown_command(args[0]))
        return _run_app(args[0] if args else None, args[1:])
    real = sys.stdout
    sys.stdout = _Output(real)
    try:
        try:
            status = _command(args)
        except SystemExit:  # --help, --version and argparse's errors: once printed
            sys.stdout.flush()
            raise
        sys.stdout.flush()
        return status
    except OutputError as exc:
        _silence_stdout()
        sys.stderr.write(f"{PROG}: cannot write the output: {exc}\n")
        return EXIT_OUTPUT_FAILED
    except BrokenPipeError:
        _silence_stdout()
        return 0
    finally:
        sys.stdout = real


EXIT_OUTPUT_FAILED = 1


class OutputError(Exception):
    """Standard output could not be written (a full disk, a closed stream)."""


class _Output:
    """``sys.stdout`` while a subcommand runs: a write or flush that fails is an
    :class:`OutputError` (a closed pipe stays a BrokenPipeError: the reader has all it wants)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _call(self, name: str, *args):
        if self._stream is None:
            raise OutputError("standard output is closed")
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.errno == errno.EBADF:
                raise OutputError("standard output is closed") from None
            raise OutputError(exc.strerror or str(exc)) from None
        except ValueError as exc:  # "I/O operation on closed file"
            raise OutputError(str(exc)) from None

    def write(self, text: str) -> int:
        return self._call("write", text)

    def flush(self) -> None:
        self._call("flush")

    def __getattr__(self, name: str):
        if self._stream is None:
            raise OutputError("standard output is closed")
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    to_null_device(1)


def _command(args: list[str]) -> int:
    from workbench.cli import analyze, measure, model, presets, render

    parsed = _parser().parse_args(args)
    commands = {"analyze": analyze, "presets": presets, "render": render, "model": model,
                "measure": measure}
    if parsed.command in commands:
        return commands[parsed.command].run(parsed)
    _parser().print_help()
    return EXIT_BAD_INPUT


COMMANDS = ("analyze", "render", "presets", "model", "measure")


def _looks_like_a_command(word: str) -> bool:
    """A first word that is no file and no session's name (no folder, no extension) is a
    command misspelt, not a session to open."""
    return not os.path.exists(word) and not any(c in word for c in "./\\")


def unknown_command(word: str) -> str:
    """``unknown command 'analyse' (did you mean analyze?)``."""
    import difflib

    close = difflib.get_close_matches(word.lower(), COMMANDS, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]}?)" if close else f" (commands: {', '.join(COMMANDS)})"
    return f"unknown command {word!r}{hint}"


def _run_app(session: str | None, rest: list[str]) -> int:
    if rest:
        return fail(f"unexpected arguments: {' '.join(rest)} (see --help)")
    from workbench.ui.window.launch import run

    return run(session)


# ---------------------------------------------------------------------------------------------
