"""Files written from the app stay as the user had them: Save As writes the name chosen,
read-only files are refused with a dialog, the results CSV is whole or not written, and the
tables for spreadsheets never carry a formula."""

from __future__ import annotations

import csv
import os
import resource
import signal
import stat

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from workbench.io.sessions import load_session
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

FORMULA = "=cmd|' /C calc'!A0"

SESSION = f"""\
schema_version: 2
title: Spreadsheet check
hardware:
  - name: "@rig"
    compute: {{fp16: 100 TFLOP/s, fp32: 20 TFLOP/s}}
    memory: {{hbm: 1 TB/s}}
operations:
  - name: "{FORMULA}"
    kind: gemm
    m: 64
    n: 64
    k: 64
    dtype: fp16
  - name: "-2+3 fused"
    kind: custom
    flops: 1e9
    bytes: 1e8
  - name: plain GEMM
    kind: gemm
    m: 4096
    n: 4096
    k: 4096
    dtype: fp16
"""


@pytest.fixture
def window(qtbot, tmp_path):
    create_app()
    path = tmp_path / "work.yaml"
    path.write_text(SESSION, encoding="utf-8")
    win = MainWindow()
    assert win.open_path(path)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.ask_save_changes = lambda: QMessageBox.Discard
    box = getattr(win, "_error_box", None)
    if box is not None:
        box.close()
    win.close()
    win.deleteLater()


def _choose(monkeypatch, path) -> list:
    """The Save dialog answers ``path``; returns the list of start names it was shown."""
    asked = []

    def answer(parent, caption, start, *args, **kwargs):
        asked.append(start)
        return str(path), "Roofline sessions (*.yaml *.yml)"

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(answer))
    return asked


def _edit(win) -> None:
    op = win.document.session.operations[2]
    win.document.set_param(op.id, "m", 2048)
    assert win.isWindowModified()


def test_save_as_with_another_extension_writes_that_name(window, tmp_path, monkeypatch):
    existing = tmp_path / "run.yaml"
    existing.write_text("title: someone else's run\n", encoding="utf-8")
    _edit(window)
    _choose(monkeypatch, tmp_path / "run.v2")
    window.save_as_action.trigger()
    assert load_session(tmp_path / "run.v2").operations[2].operation.params["m"] == 2048
    assert existing.read_text(encoding="utf-8") == "title: someone else's run\n"
    assert window.windowTitle().startswith("run.v2")
    assert not window.isWindowModified()
    _choose(monkeypatch, tmp_path / "session.backup")
    window.save_as_action.trigger()
    assert load_session(tmp_path / "session.backup").title == "Spreadsheet check"
    assert not (tmp_path / "session.yaml").exists()


def test_save_as_without_extension_adds_yaml_and_asks_before_replacing(window, tmp_path,
                                                                        monkeypatch):
    existing = tmp_path / "notes.yaml"
    existing.write_text("title: keep me\n", encoding="utf-8")
    _edit(window)
    _choose(monkeypatch, tmp_path / "notes")
    asked = []
    window.confirm_replace = lambda path: asked.append(path) or False
    window.save_as_action.trigger()
    assert asked == [existing]
    assert existing.read_text(encoding="utf-8") == "title: keep me\n"
    assert not (tmp_path / "notes").exists()
    assert window.isWindowModified()
    window.confirm_replace = lambda path: asked.append(path) or True
    window.save_as_action.trigger()
    assert load_session(existing).operations[2].operation.params["m"] == 2048
    assert window.windowTitle().startswith("notes.yaml") and not window.isWindowModified()
    # a new name without extension: .yaml added, nothing to ask
    _choose(monkeypatch, tmp_path / "fresh")
    window.save_as_action.trigger()
    assert len(asked) == 2 and load_session(tmp_path / "fresh.yaml").title


def test_saving_over_a_read_only_file_shows_a_dialog_and_keeps_it(window, tmp_path, qtbot):
    path = tmp_path / "work.yaml"
    os.chmod(path, 0o444)
    before = path.read_bytes()
    _edit(window)
    window.save_action.trigger()
    box = window.findChild(QMessageBox, "error_dialog")
    qtbot.waitUntil(lambda: box is not None and box.isVisible())
    assert "work.yaml" in box.text() and "read-only" in box.text()
    assert window.isWindowModified()  # the edit is still unsaved
    assert window.windowTitle().startswith("work.yaml")
    assert path.read_bytes() == before and stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_saving_keeps_the_files_mode_and_link(window, tmp_path):
    real = tmp_path / "work.yaml"
    os.chmod(real, 0o640)
    link = tmp_path / "shortcut.yaml"
    link.symlink_to(real)
    _edit(window)
    assert window.save_to(link)
    assert link.is_symlink() and stat.S_IMODE(os.stat(real).st_mode) == 0o640
    assert load_session(real).operations[2].operation.params["m"] == 2048


def test_saving_over_a_file_another_program_changed_asks_first(window, tmp_path,
                                                                monkeypatch):
    """The open file edited in a text editor meanwhile: Save says so and, cancelled, leaves
    that program's text on disk and the session unsaved; confirmed, it saves and keeps the
    other text as the backup."""
    path = tmp_path / "work.yaml"
    theirs = SESSION.replace("title: Spreadsheet check", "title: edited by hand") + "# mine\n"
    _edit(window)
    path.write_text(theirs, encoding="utf-8")
    asked = []

    def answer(with_button):
        def question(parent, title, text, *args, **kwargs):
            asked.append(text)
            return with_button
        return staticmethod(question)

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Cancel))
    window.save_action.trigger()
    assert len(asked) == 1 and "work.yaml" in asked[0] and "changed by another program" in asked[0]
    assert path.read_text(encoding="utf-8") == theirs
    assert window.isWindowModified()

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Save))
    window.save_action.trigger()
    assert len(asked) == 2
    assert load_session(path).operations[2].operation.params["m"] == 2048
    assert (tmp_path / "work.yaml.bak").read_text(encoding="utf-8") == theirs
    assert not window.isWindowModified()

    # saved here since: a further edit saves without asking
    op = window.document.session.operations[2]
    window.document.set_param(op.id, "m", 1024)
    window.save_action.trigger()
    assert len(asked) == 2 and load_session(path).operations[2].operation.params["m"] == 1024


def test_a_file_changed_by_another_program_is_told_on_return_and_can_be_read_again(
        window, tmp_path, monkeypatch):
    """Back in the window after a hand edit of the open file: the status bar says the file
    changed (once for that version); File ▸ Revert to Saved reads it, asking first when
    there are changes here, and Cancel keeps them."""
    path = tmp_path / "work.yaml"
    window.statusBar().clearMessage()
    assert window.revert_action.isEnabled()
    window.changeEvent(QEvent(QEvent.Type.ActivationChange))
    assert window.statusBar().currentMessage() == ""  # unchanged: nothing said

    path.write_text(SESSION.replace("title: Spreadsheet check", "title: edited by hand"),
                    encoding="utf-8")
    window.activateWindow()
    monkeypatch.setattr(window, "isActiveWindow", lambda: True)
    window.changeEvent(QEvent(QEvent.Type.ActivationChange))
    told = window.statusBar().currentMessage()
    assert "work.yaml has been changed by another program" in told and "Revert to Saved" in told
    window.statusBar().clearMessage()
    window.changeEvent(QEvent(QEvent.Type.ActivationChange))
    assert window.statusBar().currentMessage() == ""  # that version told once

    _edit(window)  # changes here: Revert asks, and Cancel keeps them
    asked = []
    monkeypatch.setattr(window, "confirm_revert", lambda p: asked.append(p) or False)
    window.revert_action.trigger()
    assert asked == [path.resolve()] and window.isWindowModified()
    assert window.document.session.title == "Spreadsheet check"

    monkeypatch.setattr(window, "confirm_revert", lambda p: True)
    window.revert_action.trigger()
    assert window.document.session.title == "edited by hand"
    assert not window.isWindowModified()
    assert window.windowTitle().startswith("work.yaml")
    window.save_action.trigger()  # read as it is now: Save replaces it without asking
    assert load_session(path).title == "edited by hand"


def test_export_results_csv_makes_formulas_text_and_keeps_numbers(window, tmp_path,
                                                                  monkeypatch):
    target = tmp_path / "results.csv"
    _choose(monkeypatch, target)
    window.export_csv_action.trigger()
    with target.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["operation"] for r in rows] == [f"'{FORMULA}", "'-2+3 fused", "plain GEMM"]
    assert {r["hardware"] for r in rows} == {"'@rig"}
    for r in rows:
        assert float(r["flops [FLOP]"]) > 0 and float(r["t_lower [s]"]) > 0


def test_copy_all_makes_formulas_text(window, qtbot):
    window.results_table.copy_all_button.click()
    lines = QApplication.clipboard().text().splitlines()
    header = lines[0].split("\t")
    cells = [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]
    assert [c["operation"] for c in cells] == [f"'{FORMULA}", "'-2+3 fused", "plain GEMM"]
    assert all(c["hardware"] == "'@rig" for c in cells)
    assert all(float(c["intensity [FLOP/B]"]) > 0 for c in cells)


def test_a_full_disk_during_export_results_keeps_the_old_csv(window, tmp_path):
    """The file system refuses to grow any file past 256 bytes (as a full disk would): the
    export fails with a message and the old table is still there, whole."""
    target = tmp_path / "results.csv"
    old = "operation,machine\nyesterday's table,H100\n"
    target.write_text(old, encoding="utf-8")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (256, hard))
    try:
        ok = window.export_results_csv(target)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert not ok
    assert "results.csv" in window.last_error and ".tmp" not in window.last_error
    assert target.read_text(encoding="utf-8") == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv", "work.yaml"]


def test_export_figure_refuses_a_read_only_file_and_keeps_a_files_mode(window, tmp_path):
    from workbench.ui.figures.export_dialog import CUSTOM, FigureOptions

    options = FigureOptions(size=CUSTOM, width=320, height=200, dpi=96)
    frozen = tmp_path / "paper.pdf"
    frozen.write_bytes(b"%PDF the submitted figure")
    os.chmod(frozen, 0o444)
    assert not window.export_figure(frozen, options)
    assert "paper.pdf" in window.last_error and "read-only" in window.last_error
    assert frozen.read_bytes() == b"%PDF the submitted figure"
    window._error_box.close()
    shared = tmp_path / "slide.svg"
    shared.write_text("old", encoding="utf-8")
    os.chmod(shared, 0o640)
    assert window.export_figure(shared, options)
    assert "<svg" in shared.read_text(encoding="utf-8")
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o640


def test_a_save_that_kept_no_backup_says_so(window, tmp_path, monkeypatch):
    long_name = tmp_path / ("s" * 247 + ".yaml")  # NAME.bak would be 256 bytes
    _choose(monkeypatch, long_name)
    window.save_as_action.trigger()  # a new file: nothing to back up, nothing to say
    assert getattr(window, "_error_box", None) is None
    _edit(window)
    window.save_action.trigger()
    assert load_session(long_name).operations[2].operation.params["m"] == 2048
    box = window._error_box
    assert box.isVisible() and box.objectName() == "warning_dialog"
    assert "no backup was kept" in box.text() and "too long" in box.text()
    assert not window.isWindowModified()  # saved all the same
