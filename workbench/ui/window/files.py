"""The main window's files: New, Open, Open Recent, examples, Save and Save As, dropped
files, the autosave and recovery after a crash, and the window title that names the file (a
mixin of :class:`~workbench.ui.window.main_window.MainWindow`)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QEvent, QStandardPaths, Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog

from workbench.io.atomic import user_folder
from workbench.io.autosave import Autosave, Recoverable, find_recoverable
from workbench.io.errors import InputError, ReadCancelled, SaveCancelled
from workbench.io.sessions import load_session, save_snapshot, snapshot_session
from workbench.model.session import Session
from workbench.ui.dialogs.load_warnings import show_assumed
from workbench.ui.mnemonics import access_key, escaped, with_mnemonic
from workbench.ui.window.app import APP_NAME

__all__ = ["FilesMixin", "MAX_RECENT", "AUTOSAVE_INTERVAL_MS", "FILE_FILTER", "autosave_folder"]

MAX_RECENT = 8
AUTOSAVE_INTERVAL_MS = 30_000
#: Session files from this size on are opened under a progress dialog with Cancel
LARGE_SESSION_BYTES = 1_000_000
#: A save that formats this many measured points or more (those whose text no earlier save
#: or autosave kept) is written under a progress dialog
LARGE_SAVE_POINTS = 2_000
#: The steps of a progress dialog's bar
PROGRESS_STEPS = 100
FILE_FILTER = "Roofline sessions (*.yaml *.yml);;All files (*)"

_log = logging.getLogger(__name__)

T = TypeVar("T")


class FilesMixin:
    """Opening and saving sessions, the recent files, the autosave and recovery."""

    #: the open file as it was on disk when it was opened or last saved here (see
    #: :func:`_disk_stamp`): a Save over it asks first when another program has changed it
    _opened_stamp: tuple[int, ...] | None = None

    # -- autosave and recovery -------------------------------------------------------------

    def start_autosave(self) -> None:
        """Autosave every :data:`AUTOSAVE_INTERVAL_MS` to the user's data folder."""
        self.autosave = Autosave(autosave_folder())
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(AUTOSAVE_INTERVAL_MS)
        self.autosave_timer.timeout.connect(self._autosave_tick)
        self._autosaved_state = False  # the autosave slot holds the session as it is
        self.autosave_failed.connect(self._show_autosave_failure)
        self.autosave_timer.start()

    def autosave_now(self) -> None:
        """Write unsaved changes to the autosave slot; remove it when there are none."""
        self._autosave(background=False)

    def _autosave_tick(self) -> None:
        """The autosave timer: write what changed since the last autosave, on a worker thread
        (a session of tens of thousands of measured points takes seconds to write)."""
        self._autosave(background=True)

    def _autosave(self, background: bool) -> None:
        if not self.document.modified:
            self.autosave.remove()
            self._autosaved_state = False
            return
        if self._autosaved_state and self.autosave.path.exists():
            return  # (nothing changed since it was written)
        session, path = self.document.session, self.document.path
        try:
            if background:
                pending = self.autosave.write_in_background(session, path, self.example)
                if pending is None:
                    return  # the previous write still runs: the next tick writes this state
                pending.add_done_callback(self._autosave_done)
            else:
                self.autosave.write(session, path, self.example)
        except OSError as exc:
            self._autosave_failed(exc)
            return
        self._autosaved_state = True

    def _autosave_done(self, pending) -> None:
        """(On the worker thread) a failed write is said in the status bar, on the window's
        thread."""
        exc = pending.exception()
        if exc is not None:
            self.autosave_failed.emit(_reason(exc))

    def _autosave_failed(self, exc: BaseException) -> None:
        self._show_autosave_failure(_reason(exc))

    def _show_autosave_failure(self, reason: str) -> None:
        _log.warning("autosave failed: %s", reason)
        self._autosaved_state = False
        self.statusBar().showMessage(f"Autosave failed: {reason}", 5000)

    def ask_recover(self, found: Recoverable) -> bool:
        """Ask whether to recover an autosave (separate so that tests can answer it)."""
        import datetime

        when = datetime.datetime.fromtimestamp(found.saved_at).strftime("%Y-%m-%d %H:%M")
        name = (Path(found.original).name if found.original
                else f"the example {found.example}" if found.example else "an untitled session")
        answer = QMessageBox.question(
            self, "Recover unsaved work?",
            f"Roofline Workbench did not close cleanly. Unsaved changes to {name} were "
            f"autosaved at {when}.\n\nRecover them?",
            QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return answer == QMessageBox.Yes

    def offer_recovery(self) -> bool:
        """After a crash: offer the autosaves left by processes that are gone (in the
        autosave folder, or where earlier versions kept them), newest first, one at a time.
        One declined is removed and the next offered; the one recovered is removed; those
        not yet offered stay for the next start (each holds work of its own: another
        window's file may have crashed with it)."""
        found = sorted((item for folder in (self.autosave.folder, former_autosave_folder())
                        for item in find_recoverable(folder)),
                       key=lambda item: item.saved_at, reverse=True)
        chosen = None
        for item in found:
            if self.ask_recover(item):
                chosen = item
                break
            item.discard()
        if chosen is None:
            return False
        try:
            session = chosen.load()
        except InputError as exc:
            self.show_error("Cannot recover autosave", str(exc))
            return False
        original = Path(chosen.original) if chosen.original else None
        # named as it was before the crash: its file, the example it came from, or Untitled
        self.example = None if original else chosen.example
        self.document.replace_session(session, original, modified=True)
        self._opened_stamp = _disk_stamp(original) if original else None
        self.workspace.select_valid()
        chosen.discard()
        self.autosave_now()
        left = len(found) - found.index(chosen) - 1
        self.statusBar().showMessage(
            "Recovered unsaved changes" + (f" ({left} more autosave{'s' * (left != 1)} "
                                           "offered at the next start)" if left else ""), 8000)
        return True

    # -- the session shown and its file ----------------------------------------------------

    def _session_name(self) -> str:
        """The open file's name, an example's file name, or "Untitled"."""
        if self.document.path:
            return self.document.path.name
        return self.example or "Untitled"

    def update_title(self) -> None:
        name = self._session_name()
        if not self.document.path and self.example:
            name += " (example)"
        self.setWindowTitle(f"{name}[*] — {APP_NAME}")
        self.setWindowModified(self.document.modified)
        self.revert_action.setEnabled(self.document.path is not None)

    def set_session(self, session: Session, path: Path | None, example: str | None = None
                    ) -> None:
        """Show another session (New, Open, an example): nothing of the last one stays in
        the status bar."""
        show_assumed(self, path or "", [])  # a message about the previous file goes with it
        self.example = example
        self.statusBar().clearMessage()
        self.cursor_label.clear()
        self.document.replace_session(session, path)
        self._opened_stamp = _disk_stamp(path) if path else None
        self.workspace.select_valid()
        self.results_over_empty_tabs()
        # The canvas already rebuilt and fitted on the "session" change; that fit differs
        # from fit_to_data only when the session saved a view range, so only then is a
        # second full rebuild needed (it is the slowest step of opening a large session).
        if hasattr(self.canvas, "fit_to_data") and (session.view.x_range
                                                    or session.view.y_range):
            self.canvas.fit_to_data()

    def open_path(self, path: str | Path) -> bool:
        """Open a session file. On any problem the current session (and its undo history) is
        left exactly as it was and the engine's message is shown."""
        path = Path(path)
        assumed: list[str] = []
        stamp = _disk_stamp(path)  # (before reading: a change while it is read is seen)
        try:
            session = self.read_session(path, assumed)
        except InputError as exc:
            self.show_error("Cannot open session", str(exc))
            return False
        if session is None or not self.maybe_save():
            return False  # (cancelled)
        self.set_session(session, path.resolve())
        self._opened_stamp = stamp
        self.add_recent(path.resolve())
        self.statusBar().showMessage(f"Opened {path}", 4000)
        show_assumed(self, path, assumed)
        return True

    def read_session(self, path: Path, assumed: list[str], label: str | None = None,
                     title: str = "Open Session") -> Session | None:
        """Read the session file ``path`` (see :func:`load_session`); one of
        :data:`LARGE_SESSION_BYTES` or more is read off the window's thread under a progress
        dialog (``label``: its text, "Opening NAME…" unless given; ``title``: its title) with
        Cancel (a profile's 100,000 measured points take seconds to read and check).
        ``None``: the user cancelled; the read then stops at its next step, unseen."""
        try:
            large = path.stat().st_size >= LARGE_SESSION_BYTES
        except OSError:
            large = False  # (the reader says what is wrong)
        if not large:
            return load_session(path, assumed)
        found: list[str] = []
        session = self.in_background(
            lambda progress, cancelled: load_session(path, found, progress, cancelled),
            label or f"Opening {path.name}…", title, "open_progress")
        if session is None:
            return None
        assumed.extend(found)
        return session

    def in_background(self, work: Callable[[Callable[[float], None], Callable[[], bool]], T],
                      label: str, title: str, name: str, settle: bool = False) -> T | None:
        """``work(progress, cancelled)`` run on a thread of its own under a window-modal
        progress dialog (the window keeps painting and takes no input meanwhile) that shows
        the fraction ``progress`` is told, with Cancel; its result, or ``None`` where the user
        cancelled (``cancelled()`` is then true and the work stops at its next check, unseen;
        with ``settle``, the dialog says "Cancelling…" until it has stopped, and its result
        is returned where it ended first: a save cancelled as it wrote its file). What
        ``work`` raises is raised here."""
        import threading
        from concurrent.futures import ThreadPoolExecutor

        from PySide6.QtCore import QEventLoop

        fraction = [0.0]
        stop = threading.Event()

        def progress(value: float) -> None:
            fraction[0] = value

        dialog = QProgressDialog(label, "Cancel", 0, PROGRESS_STEPS, self)
        dialog.setObjectName(name)
        dialog.setWindowTitle(title)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        # (the worker touches nothing of the window; what it raises is kept by its future)
        worker = ThreadPoolExecutor(1, thread_name_prefix=f"roofline-{name}")
        loop = QEventLoop()
        poll = QTimer()
        poll.setInterval(30)

        def look() -> None:
            if future.done() or (dialog.wasCanceled() and not settle):
                loop.quit()
            elif not dialog.wasCanceled():
                dialog.setValue(round(PROGRESS_STEPS * fraction[0]))

        poll.timeout.connect(look)
        dialog.canceled.connect(stop.set)
        if settle:
            dialog.canceled.connect(lambda: dialog.setLabelText("Cancelling…"))
        else:
            dialog.canceled.connect(loop.quit)
        dialog.setValue(0)
        dialog.show()
        future = worker.submit(work, progress, stop.is_set)
        worker.shutdown(wait=False)
        poll.start()
        loop.exec()
        poll.stop()
        cancelled = not future.done()  # (the loop ends before the work only by Cancel)
        dialog.hide()
        dialog.deleteLater()
        if cancelled:
            return None
        try:
            return future.result()
        except (ReadCancelled, SaveCancelled):  # (cancelled as it ended, or stopped)
            return None

    def open_example(self, path: Path) -> bool:
        try:
            session = load_session(path)
        except InputError as exc:
            self.show_error("Cannot open example", str(exc))
            return False
        if not self.maybe_save():
            return False
        self.set_session(session, None, Path(path).name)
        self.statusBar().showMessage(f"Example: {session.title} (Save As to keep a copy)", 5000)
        return True

    def new_session(self) -> bool:
        if not self.maybe_save():
            return False
        self.set_session(Session(), None)
        return True

    def save_to(self, path: str | Path) -> bool:
        """Save to exactly ``path``. A read-only file is refused with a message and the
        session stays modified."""
        path = Path(path)
        if self._changed_elsewhere(path) and not self.confirm_replace_changed(path):
            return False
        notes: list[str] = []
        texts = self.autosave.texts
        snapshot = snapshot_session(self.document.session, path, self.autosave.values)
        try:
            if texts.missing(snapshot) >= LARGE_SAVE_POINTS:
                # formatting the points takes seconds (a profile's 100,000 on its first
                # save): done off the window's thread, under a progress dialog that takes
                # the window's input meanwhile, so what is written is what the user saved
                # (Cancel stops it before the file is written: the file stays as it was)
                saved = self.in_background(
                    lambda progress, cancelled: save_snapshot(
                        snapshot, path, notes=notes, texts=texts, progress=progress,
                        cancelled=cancelled) or True,
                    f"Saving {path.name}…", "Save Session", "save_progress", settle=True)
                if saved is None:
                    self.statusBar().showMessage(
                        f"Save cancelled: {path} was not written", 6000)
                    return False
            else:  # (later saves reuse the points' texts: a moment)
                save_snapshot(snapshot, path, notes=notes, texts=texts)
        except OSError as exc:
            self.show_error("Cannot save session", f"{path}: {exc.strerror or exc}")
            return False
        self.example = None
        self.document.mark_clean(path.resolve())
        self._opened_stamp = _disk_stamp(path)
        self.add_recent(path.resolve())
        if notes:  # (saved, but the user should know)
            self.show_warning("Session saved", "\n".join(notes))
        self.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    def _changed_elsewhere(self, path: Path) -> bool:
        """Whether ``path`` is the open file and another program has changed it since it was
        opened or saved here (one deleted is not: saving writes it again)."""
        if self.document.path is None or self._opened_stamp is None:
            return False
        try:
            same = path.resolve() == self.document.path.resolve()
        except OSError:
            return False
        now = _disk_stamp(path)
        return same and now is not None and now != self._opened_stamp

    def revert_to_saved(self) -> bool:
        """File ▸ Revert to Saved: read the open file again, as it is on disk now (another
        program's edit, or the last save), the changes made here since dropped after asking.
        A file that cannot be read leaves the session as it was."""
        path = self.document.path
        if path is None:
            return False
        assumed: list[str] = []
        stamp = _disk_stamp(path)
        try:
            session = self.read_session(path, assumed, f"Reading {path.name} again…",
                                        "Revert to Saved")
        except InputError as exc:
            self.show_error("Cannot revert to the saved session", str(exc))
            return False
        if session is None:
            return False  # (cancelled)
        if self.document.modified and not self.confirm_revert(path):
            return False
        self.set_session(session, path)
        self._opened_stamp = stamp
        self.statusBar().showMessage(f"Read {path} again", 4000)
        show_assumed(self, path, assumed)
        return True

    def confirm_revert(self, path: Path) -> bool:
        """Ask before Revert to Saved drops the changes made here (separate so that tests
        can answer it)."""
        answer = QMessageBox.question(
            self, APP_NAME,
            f"Drop the changes made since {path.name} was last saved, and read the file "
            f"again as it is on disk?", QMessageBox.Discard | QMessageBox.Cancel,
            QMessageBox.Cancel)
        return answer == QMessageBox.Discard

    #: the open file's version last told of as changed by another program (told once each)
    _told_stamp: tuple[int, ...] | None = None

    def changeEvent(self, event) -> None:
        """Back in the window: where another program has changed or removed the open file
        since it was opened or saved here, the status bar says so (once for each version),
        and what to do."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow():
            self.tell_changed_on_disk()

    def tell_changed_on_disk(self) -> None:
        """See :meth:`changeEvent`."""
        path = self.document.path
        if path is None or self._opened_stamp is None:
            return
        now = _disk_stamp(path)
        if now == self._opened_stamp or now == self._told_stamp or (
                now is None and self._told_stamp == ()):
            return
        self._told_stamp = now if now is not None else ()
        if now is None:
            text = f"{path.name} has been moved or deleted by another program: Save writes it again"
        else:
            text = (f"{path.name} has been changed by another program: File ▸ Revert to Saved "
                    "reads it again" + ("; Save asks before replacing it"
                                        if self.document.modified else ""))
        self.statusBar().showMessage(text)

    def confirm_replace_changed(self, path: Path) -> bool:
        """Ask before a save replaces what another program wrote to the open file
        (separate so that tests can answer it)."""
        answer = QMessageBox.question(
            self, APP_NAME,
            f"{path.name} has been changed by another program since it was opened or saved "
            f"here.\n\nReplace it with the session shown here? (What the file holds now is "
            f"kept as {path.name}.bak.)",
            QMessageBox.Save | QMessageBox.Cancel, QMessageBox.Cancel)
        return answer == QMessageBox.Save

    def on_open(self) -> None:
        start = str(self.document.path.parent) if self.document.path else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open Session", start, FILE_FILTER)
        if path:
            self.open_path(path)

    def on_save(self) -> bool:
        if self.document.path is None:
            return self.on_save_as()
        return self.save_to(self.document.path)

    def on_save_as(self) -> bool:
        start = str(self.document.path) if self.document.path else (
            self.example or "session.yaml")
        path, _ = QFileDialog.getSaveFileName(self, "Save Session As", start, FILE_FILTER)
        if not path:
            return False
        named = self.with_extension(path, ".yaml")
        return self.save_to(named) if named is not None else False

    def with_extension(self, path: str, suffix: str) -> Path | None:
        """The name chosen in a save dialog, with ``suffix`` added only when it has no
        extension; ``None`` where that names a file the user declines to replace (the dialog
        asked about the name typed, not about the one with the extension added)."""
        named = Path(path)
        if named.suffix:
            return named
        named = named.with_name(named.name.rstrip(".") + suffix)
        if os.path.lexists(named) and not self.confirm_replace(named):
            return None
        return named

    def confirm_replace(self, path: Path) -> bool:
        """Ask before replacing a file the user did not name (separate so that tests can
        answer it)."""
        answer = QMessageBox.question(
            self, APP_NAME, f"{path.name} already exists in {path.parent}. Replace it?",
            QMessageBox.Yes | QMessageBox.No, QMessageBox.No)
        return answer == QMessageBox.Yes

    def save_changes_box(self) -> QMessageBox:
        """The question whether to save unsaved changes: Save (Enter), Discard and Cancel
        (Escape), Save and Discard each with an access key of its own (the platform's texts
        give them none)."""
        box = QMessageBox(QMessageBox.Question, APP_NAME,
                          f"Save changes to {self._session_name()} before closing it?",
                          QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, self)
        box.setDefaultButton(QMessageBox.Save)
        box.setEscapeButton(QMessageBox.Cancel)
        taken = {k for b in box.buttons() if (k := access_key(b.text())) is not None}
        for which in (QMessageBox.Save, QMessageBox.Discard):
            button = box.button(which)
            if access_key(button.text()) is None:
                button.setText(with_mnemonic(button.text(), taken))
        return box

    def ask_save_changes(self) -> QMessageBox.StandardButton:
        """Ask whether to save unsaved changes (separate so that tests can answer it)."""
        box = self.save_changes_box()
        try:  # (with standard buttons, exec answers the one clicked: Cancel for Escape)
            return QMessageBox.StandardButton(box.exec())
        finally:
            box.deleteLater()

    def maybe_save(self) -> bool:
        """True when it is fine to drop the current session."""
        if not self.document.modified:
            return True
        answer = self.ask_save_changes()
        if answer == QMessageBox.Save:
            return self.on_save()
        return answer == QMessageBox.Discard

    # -- recent files ----------------------------------------------------------------------

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [v for v in (value or []) if isinstance(v, str)]

    def add_recent(self, path: Path) -> None:
        files = [str(path)] + [f for f in self.recent_files() if f != str(path)]
        self.settings.setValue("recent_files", files[:MAX_RECENT])

    def fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
            return
        for i, name in enumerate(files, 1):
            action = self.recent_menu.addAction(f"&{i} {escaped(Path(name).name)}")
            action.setToolTip(name)
            action.setStatusTip(name)
            action.setEnabled(Path(name).exists())
            action.triggered.connect(lambda checked=False, n=name: self.open_path(n))
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear Menu").triggered.connect(
            lambda: self.settings.setValue("recent_files", []))

    # -- dropped files ---------------------------------------------------------------------

    def dragEnterEvent(self, event) -> None:
        if self._dropped_path(event) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:
        path = self._dropped_path(event)
        if path is not None:
            event.acceptProposedAction()
            QTimer.singleShot(0, lambda: self.open_path(path))

    @staticmethod
    def _dropped_path(event) -> Path | None:
        mime = event.mimeData()
        if not mime.hasUrls():
            return None
        for url in mime.urls():
            if url.isLocalFile() and url.toLocalFile().lower().endswith((".yaml", ".yml")):
                return Path(url.toLocalFile())
        return None


def _disk_stamp(path: str | Path) -> tuple[int, ...] | None:
    """What tells one version of the file at ``path`` from another written over it (its
    identity, size and modification time), or ``None`` where there is no file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _reason(exc: BaseException) -> str:
    return str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)


def autosave_folder() -> Path:
    """Where unsaved changes are kept against a crash: the user's data folder
    (:func:`~workbench.io.atomic.user_folder`), beside the log and the measured presets."""
    return user_folder("data") / "autosave"


def former_autosave_folder() -> Path:
    """Where versions before 2026-11-29 kept their autosaves (Qt's name for the
    application's data folder): looked in for work a crash left there."""
    base = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation)
    return Path(base or Path.home() / ".roofline-workbench") / "autosave"
