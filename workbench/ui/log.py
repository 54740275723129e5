"""The app's log: what the engine and the window report, and every fault nothing handled, in
a file in the user's data folder, kept to a few rotated files, so that a user who meets a
fault has something to send (Help ▸ Show Log).

The engine only names its loggers (``logging.getLogger(__name__)``, under ``workbench``);
where their records go is decided here, by the app, once.
"""

from __future__ import annotations

import logging
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

__all__ = ["LOG_BYTES", "LOG_FILES", "log_path", "read_log", "start_log"]

#: one file holds this much before it is rotated; this many older files are kept
LOG_BYTES = 1_000_000
LOG_FILES = 3
#: what Show Log reads back from the newest file's end
SHOWN_BYTES = 200_000

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_log = logging.getLogger("workbench")


def log_path() -> Path:
    """The log file, in the user's data folder (:func:`~workbench.io.atomic.user_folder`,
    beside the autosaves and the measured presets)."""
    from workbench.io.atomic import user_folder

    return user_folder("data") / "roofline-workbench.log"


def start_log(path: Path | None = None) -> Path | None:
    """Send the ``workbench`` loggers' records (information and above) to ``path`` (the
    user's log file unless given), rotated at :data:`LOG_BYTES`, and log every exception that
    reaches the top of the program before Python reports it as usual. Returns the file, or
    ``None`` where it cannot be written (the app runs on, saying so on stderr)."""
    path = Path(path) if path else log_path()
    for handler in _log.handlers:
        if isinstance(handler, RotatingFileHandler) and Path(handler.baseFilename) == path:
            return path  # (started already)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_FILES,
                                      encoding="utf-8", delay=True)
    except OSError as exc:
        sys.stderr.write(f"roofline-workbench: no log is kept: {path}: {exc}\n")
        return None
    handler.setFormatter(logging.Formatter(_FORMAT))
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    _log_unhandled()
    return path


def _log_unhandled() -> None:
    """Faults nothing caught (in the event loop they end a slot, not the app) go to the log
    with their traceback, then to Python's usual report."""
    previous = sys.excepthook
    if getattr(previous, "logs_to_workbench", False):
        return

    def hook(kind, value, trace) -> None:
        _log.critical("a fault nothing handled", exc_info=(kind, value, trace))
        previous(kind, value, trace)

    hook.logs_to_workbench = True  # type: ignore[attr-defined]
    sys.excepthook = hook


def read_log(path: Path | None = None, limit: int = SHOWN_BYTES) -> str:
    """The end of the log (its last ``limit`` bytes, from a line's start), or ``""`` where
    nothing has been logged yet."""
    path = Path(path) if path else log_path()
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - limit))
            data = handle.read()
    except FileNotFoundError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if size > limit and "\n" in text:
        text = text.split("\n", 1)[1]
    return text
