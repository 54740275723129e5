"""Autosaves of unsaved sessions, and finding them again after a crash.

Each running app writes its unsaved session to ``<dir>/autosave-<pid>-<n>.yaml`` (atomically)
with a small header naming the file it belongs to. A clean save or close removes it. On the
next start, autosaves whose process is gone are offered for recovery.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.io.atomic import process_alive, write_atomic
from workbench.io.sessions import dumps_session, loads_session
from workbench.model.session import Session

__all__ = ["Autosave", "Recoverable", "find_recoverable"]

_HEADER = "# roofline-workbench autosave "


@dataclass(frozen=True)
class Recoverable:
    """An autosave left by a process that did not close cleanly."""
    path: Path
    original: str | None
    saved_at: float
    pid: int

    def load(self) -> Session:
        from workbench.io.limits import read_regular_file  # (the readers' file checks)
        from workbench.io.yamlio import MAX_FILE_BYTES

        return loads_session(read_regular_file(self.path, MAX_FILE_BYTES, "session file"),
                             str(self.path))

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class Autosave:
    """The autosave slot of one running app."""

    _counter = 0

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        Autosave._counter += 1
        self.path = self.folder / f"autosave-{os.getpid()}-{Autosave._counter}.yaml"

    def write(self, session: Session, original: Path | None) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        meta = {"original": str(original) if original else None, "saved_at": time.time(),
                "pid": os.getpid()}
        import json  # here: only an unsaved session needs it, not the start-up

        text = _HEADER + json.dumps(meta) + "\n" + dumps_session(session)
        write_atomic(self.path, text.encode("utf-8"), new_mode=0o600)  # private work
        return self.path

    def remove(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def find_recoverable(folder: Path) -> list[Recoverable]:
    """Autosaves left by apps that are no longer running, newest first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    import json

    found = []
    for path in folder.glob("autosave-*.yaml"):
        try:
            if not path.is_file():  # a FIFO or device would block the start-up
                continue
            with path.open(encoding="utf-8") as handle:
                first = handle.readline()
            meta = json.loads(first[len(_HEADER):]) if first.startswith(_HEADER) else {}
            pid = int(meta.get("pid", 0))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        if pid and process_alive(pid):
            continue
        found.append(Recoverable(path, meta.get("original"), float(meta.get("saved_at", 0)), pid))
    found.sort(key=lambda r: r.saved_at, reverse=True)
    return found
