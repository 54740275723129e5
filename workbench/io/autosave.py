"""Autosaves of unsaved sessions, and finding them again after a crash.

Each running app writes its unsaved session to ``<dir>/autosave-<pid>-<n>.yaml`` (atomically)
with a small header naming the file it belongs to, or the built-in example it was opened
from. A clean save or close removes it. On the
next start, autosaves whose process is gone are offered for recovery.

A large session (tens of thousands of measured points) takes seconds to turn into YAML:
:meth:`Autosave.write_in_background` takes a snapshot of the session on the calling thread
(:func:`~workbench.io.sessions.snapshot_session`: a copy of its plain data and a tuple of
each measured point's values, a small fraction of that time) and formats and writes the text
on a worker thread, so the window is not blocked while it is written. The points' texts are
kept from one write to the next (:class:`~workbench.io.sessions.PointTexts`): the points
that did not change are not formatted again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.io.atomic import process_alive, write_atomic
from workbench.io.sessions import (
    PointTexts,
    PointValues,
    SessionSnapshot,
    loads_session,
    snapshot_session,
    snapshot_text,
)
from workbench.io.yamlio import MAX_SESSION_BYTES
from workbench.model.session import Session
from workbench.records import record

if TYPE_CHECKING:  # (the worker thread is made by the first background write)
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["Autosave", "Recoverable", "find_recoverable"]

_HEADER = "# roofline-workbench autosave "


@record(frozen=True)
class Recoverable:
    """An autosave left by a process that did not close cleanly."""
    path: Path
    original: str | None
    saved_at: float
    pid: int
    #: the built-in example (its file name) an unsaved session was opened from, if any
    example: str | None = None

    def load(self) -> Session:
        from workbench.io.limits import read_regular_file  # (the readers' file checks)

        return loads_session(read_regular_file(self.path, MAX_SESSION_BYTES, "session file"),
                             str(self.path))

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class Autosave:
    """The autosave slot of one running app."""

    _counter = 0

    def __init__(self, folder: Path, texts: PointTexts | None = None) -> None:
        self.folder = Path(folder)
        #: the measured points' texts of the last write (shared with the window's saves)
        self.texts = texts if texts is not None else PointTexts()
        #: the measured points' values of the last snapshot (shared with the window's saves)
        self.values = PointValues()
        Autosave._counter += 1
        self.path = self.folder / f"autosave-{os.getpid()}-{Autosave._counter}.yaml"
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future | None = None

    def write(self, session: Session, original: Path | None, example: str | None = None
              ) -> Path:
        """Write ``session`` now (after any write still running in the background); it
        belongs to the file ``original``, else to the built-in ``example``, if any."""
        self.wait()
        self._write_data(self._data(session, original, example))
        return self.path

    def write_in_background(self, session: Session, original: Path | None,
                            example: str | None = None) -> Future | None:
        """Write ``session`` on a worker thread: a snapshot of it is taken here, turned into
        YAML and written there. ``None`` (nothing done) while the previous write still runs: the next
        call writes the newer state."""
        if self._pending is not None and not self._pending.done():
            return None
        data = self._data(session, original, example)
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor  # (not needed at start-up)

            self._executor = ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix="roofline-autosave")
        self._pending = self._executor.submit(self._write_data, data)
        return self._pending

    def wait(self) -> None:
        """Until the background write (if any) is done; its error, if it had one, is raised."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def remove(self) -> None:
        with contextlib.suppress(OSError):  # (a failed background write leaves no file)
            self.wait()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _data(self, session: Session, original: Path | None, example: str | None = None
              ) -> tuple[dict, SessionSnapshot]:
        """The header and a snapshot of the session, detached from the live session (later
        edits cannot reach it)."""
        meta = {"original": str(original) if original else None, "saved_at": time.time(),
                "pid": os.getpid(), "example": None if original else example}
        return meta, snapshot_session(session, values=self.values)

    def _write_data(self, data: tuple[dict, SessionSnapshot]) -> None:
        import json  # here: only an unsaved session needs it, not the start-up

        meta, snapshot = data
        self.folder.mkdir(parents=True, exist_ok=True)
        text = _HEADER + json.dumps(meta) + "\n" + snapshot_text(snapshot, self.texts)
        if len(text.encode("utf-8")) > MAX_SESSION_BYTES:  # recovery would refuse it
            raise OSError(errno.EFBIG, f"the session is {len(text.encode()) / 2**20:.1f} MB; "
                                       f"a session file holds at most "
                                       f"{MAX_SESSION_BYTES // 2**20} MB (not written)")
        write_atomic(self.path, text.encode("utf-8"), new_mode=0o600)  # private work


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
            if not isinstance(meta, dict):
                meta = {}
            pid = int(meta.get("pid", 0))
            saved_at = float(meta.get("saved_at", 0))
        except (OSError, ValueError, TypeError, UnicodeDecodeError):
            continue
        if pid and process_alive(pid) and not (saved_at > 0 and _started_after(pid, saved_at)):
            continue  # (its app still runs: its own work)
        example = meta.get("example")  # (a bare file name, else none)
        if not (isinstance(example, str) and example and Path(example).name == example):
            example = None
        found.append(Recoverable(path, meta.get("original"), saved_at, pid, example))
    found.sort(key=lambda r: r.saved_at, reverse=True)
    return found


#: seconds of slack in :func:`_started_after` (the boot time is known to the second)
_START_SLACK_S = 2.0


def _started_after(pid: int, when: float) -> bool:
    """Whether process ``pid`` started after ``when`` (seconds since the epoch), so cannot be
    the app that wrote an autosave then: its number was given again to another process, as
    after a restart of the computer. ``False`` where that cannot be told (no ``/proc``)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            ticks = int(handle.read().rsplit(") ", 1)[1].split()[19])
        with open("/proc/stat") as handle:
            boot = next(int(line.split()[1]) for line in handle if line.startswith("btime "))
        started = boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return False
    return started > when + _START_SLACK_S
