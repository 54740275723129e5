"""The app keeps a log a user can send: the engine's and the window's records and every
fault nothing handled go to a rotated file in the user's data folder, and Help ▸ Show Log
shows it."""

from __future__ import annotations

import logging
import sys
from logging.handlers import RotatingFileHandler

import pytest
from PySide6.QtWidgets import QPlainTextEdit

from workbench.ui import log


@pytest.fixture
def started(tmp_path, monkeypatch):
    """The log started on a file of this test; its handler and hook are gone afterwards."""
    # Python's own report under the log's (pytest-qt's own hook is back at the end)
    monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)
    logger = logging.getLogger("workbench")
    before, level = list(logger.handlers), logger.level
    path = log.start_log(tmp_path / "data" / "roofline-workbench.log")
    yield path
    for handler in logger.handlers:
        if handler not in before:
            handler.close()
            logger.removeHandler(handler)
    logger.setLevel(level)


def _text(path) -> str:
    for handler in logging.getLogger("workbench").handlers:
        handler.flush()
    return path.read_text(encoding="utf-8")


def test_the_log_lives_in_the_users_data_folder_with_the_autosaves_and_presets(qtbot):
    """One data folder for everything the product keeps of a user's: the log, the
    autosaves and the measured presets (the log and the autosaves were kept in Qt's
    "Roofline Workbench/Roofline Workbench" folder, the presets in "roofline-workbench")."""
    import os
    from pathlib import Path

    from workbench.io.user_presets import user_presets_dir
    from workbench.ui.window.app import create_app
    from workbench.ui.window.files import autosave_folder

    create_app()
    data = Path(os.environ["XDG_DATA_HOME"]) / "roofline-workbench"
    assert log.log_path() == data / "roofline-workbench.log"
    assert autosave_folder() == data / "autosave"
    assert user_presets_dir() == data / "presets"


def test_an_engine_modules_record_reaches_the_file_with_its_name_and_level(started):
    logging.getLogger("workbench.io.sessions").warning("s.yaml: line 3: not a number")
    logging.getLogger("workbench.document").debug("too fine to keep")
    text = _text(started)
    assert "WARNING workbench.io.sessions: s.yaml: line 3: not a number" in text
    assert "too fine to keep" not in text
    assert log.start_log(started) == started  # started twice: one handler, one line a record
    logging.getLogger("workbench").info("once")
    assert _text(started).count("once") == 1


def test_a_fault_nothing_handled_is_logged_with_its_traceback(started, capsys):
    def fails():
        raise ZeroDivisionError("the divisor was zero")

    try:
        fails()
    except ZeroDivisionError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    text = _text(started)
    assert "CRITICAL workbench: a fault nothing handled" in text
    assert "Traceback" in text and "in fails" in text
    assert "ZeroDivisionError: the divisor was zero" in text
    assert "ZeroDivisionError" in capsys.readouterr().err  # Python's own report still comes


def test_the_log_is_rotated_and_keeps_a_few_files(tmp_path, monkeypatch):
    monkeypatch.setattr(log, "LOG_BYTES", 2_000)
    monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)
    path = log.start_log(tmp_path / "roofline-workbench.log")
    logger = logging.getLogger("workbench.test")
    try:
        for i in range(400):  # 400 lines of about 60 bytes: 12 files' worth
            logger.warning("line %04d of a long session", i)
    finally:
        for handler in list(logging.getLogger("workbench").handlers):
            if isinstance(handler, RotatingFileHandler) and handler.baseFilename == str(path):
                handler.close()
                logging.getLogger("workbench").removeHandler(handler)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["roofline-workbench.log"] + [f"roofline-workbench.log.{n}"
                                                 for n in range(1, log.LOG_FILES + 1)]
    assert all(p.stat().st_size <= 2_000 for p in tmp_path.iterdir())
    assert "line 0399" in path.read_text(encoding="utf-8")


def test_show_log_shows_the_newest_records_and_where_the_file_is(qtbot, open_window, started,
                                                                 monkeypatch):
    window = open_window()
    monkeypatch.setattr(log, "log_path", lambda: started)
    window.show_error("Cannot open the file", "s.yaml: line 7: unknown kind 'gemv'")
    window._error_box.close()
    help_menu = next(a.menu() for a in window.menuBar().actions()
                     if a.text().replace("&", "") == "Help")
    show = next(a for a in help_menu.actions() if a.text().replace("&", "") == "Show Log")
    show.trigger()
    dialog = window.findChild(log_dialog_class())
    assert dialog is not None and dialog.isVisible()
    shown = dialog.findChild(QPlainTextEdit).toPlainText()
    assert "Cannot open the file: s.yaml: line 7: unknown kind 'gemv'" in shown
    assert str(started) in dialog.place.text()
    dialog.close()


def test_show_log_before_anything_was_logged_says_so(qtbot, open_window, tmp_path,
                                                     monkeypatch):
    window = open_window()
    monkeypatch.setattr(log, "log_path", lambda: tmp_path / "none.log")
    window.show_log_action.trigger()
    dialog = window.findChild(log_dialog_class())
    assert dialog.findChild(QPlainTextEdit).toPlainText() == "Nothing has been logged yet."
    dialog.close()


def log_dialog_class():
    from workbench.ui.dialogs.log_view import LogDialog

    return LogDialog
