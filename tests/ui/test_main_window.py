"""The main window driven as a user would: menus, files, undo, errors, close, drops."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import EXAMPLES, HANG_GUARD_S
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QMessageBox

from workbench.io.sessions import load_session
from workbench.model.operations import KINDS
from workbench.ui.mnemonics import shown_text
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow

LLAMA = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")


@pytest.fixture
def window(qtbot):
    create_app()
    win = MainWindow()
    win.open_path(LLAMA)
    win.show()
    qtbot.waitExposed(win)
    yield win
    # A test that left changes must not meet a modal prompt when the window closes.
    win.ask_save_changes = lambda: QMessageBox.Discard
    win.close()
    win.deleteLater()


def _points(win):
    return sorted((round(x, 9), round(y, 3)) for _, _, x, y in win.canvas.point_items())


def test_opens_with_file_name_in_title_and_not_modified(window):
    assert window.windowTitle().startswith("llama_ffn.yaml")
    assert not window.isWindowModified()
    session = load_session(LLAMA)
    n = len(session.operations) * len(session.hardware)
    assert len(window.canvas.point_items()) == n


def test_add_every_kind_through_the_edit_menu(window):
    before = len(window.document.session.operations)
    for kind in KINDS:
        window.add_kind_actions[kind].trigger()
        selected = window.workspace.selection.current
        assert window.document.operation(selected).operation.kind == kind
    assert len(window.document.session.operations) == before + len(KINDS)
    assert window.isWindowModified()
    assert window.windowTitle().startswith("llama_ffn.yaml")


def test_undo_and_redo_actions_follow_the_document(window):
    op = window.document.session.operations[2]
    old = op.operation.params["m"]
    points_before = _points(window)
    window.document.set_param(op.id, "m", 64)
    assert _points(window) != points_before
    assert window.undo_action.isEnabled()
    assert "Set M" in window.undo_action.text()
    window.undo_action.trigger()
    assert op.operation.params["m"] == old
    assert _points(window) == points_before
    assert not window.isWindowModified()
    window.redo_action.trigger()
    assert op.operation.params["m"] == 64
    assert window.isWindowModified()


def test_save_and_reopen_gives_the_same_chart(window, tmp_path):
    op = window.document.session.operations[0]
    window.document.set_param(op.id, "k", 1024)
    chart = _points(window)
    target = tmp_path / "mine.yaml"
    assert window.save_to(target)
    assert not window.isWindowModified()
    assert window.windowTitle().startswith("mine.yaml")
    assert str(target.resolve()) == window.recent_files()[0]
    other = MainWindow()
    try:
        assert other.open_path(target)
        assert _points(other) == chart
    finally:
        other.close()


def test_opening_a_session_whose_title_wraps_otherwise_places_its_own_texts(qtbot, tmp_path):
    # a chart with tags in its key, then a session whose title takes another number of
    # lines: the plot shrank while the chart was half rebuilt and its texts were placed
    # for operations no longer there (a KeyError in the event loop, the texts not placed)
    create_app()
    kernels = next(p for p in EXAMPLES if p.name == "real_kernels_h100_h200.yaml")
    text = kernels.read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("title: "))
    other = tmp_path / "other.yaml"
    other.write_text(text.replace(title, "title: " + "a title long enough to wrap " * 4),
                     encoding="utf-8")
    win = MainWindow()
    win.resize(900, 700)
    assert win.open_path(kernels)
    win.show()
    qtbot.waitExposed(win)
    qtbot.waitUntil(lambda: bool(win.canvas.key.tags))  # (operations tagged in the key)
    assert win.open_path(other)
    qtbot.wait(50)
    ids = {e.id for e in win.document.session.operations}
    assert win.canvas.key.tags and set(win.canvas.key.tags) <= ids
    assert win.canvas.labels.placed_for_view()  # (the texts placed for the chart shown)
    win.close()
    win.deleteLater()


def test_the_title_and_notes_are_edited_in_one_undo_step(qtbot, window, monkeypatch):
    # the chart's title heads every figure exported: it is edited in the app, not only in
    # the file; the dialog refuses what could not be saved, and says why
    seen = {}

    def fill(dialog):
        seen["title"], seen["notes"] = dialog.values()
        dialog.title_edit.selectAll()
        dialog.title_edit.insert("Prefill\x1b")  # (as pasted)
        ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
        seen["refused"] = (ok.isEnabled(), dialog.problem.text())
        qtbot.keyClick(dialog.title_edit, Qt.Key.Key_Backspace)
        qtbot.keyClicks(dialog.title_edit, " and decode on one chart ")
        qtbot.keyClicks(dialog.notes_edit, "Measured on the lab's H100.")
        return ok.isEnabled()

    before = load_session(LLAMA)
    monkeypatch.setattr(window, "run_dialog", fill)
    window.title_action.trigger()
    assert (seen["title"], seen["notes"]) == (before.title, before.notes)
    enabled, problem = seen["refused"]
    assert not enabled and "control character U+001B" in problem
    session = window.document.session
    assert session.title == "Prefill and decode on one chart"
    assert session.notes.endswith("Measured on the lab's H100.")
    assert " ".join(window.canvas.titles.title_lines()[0]) == "Prefill and decode on one chart"
    assert window.isWindowModified()
    assert window.undo_action.text() == "&Undo Edit Title and Notes"
    window.undo_action.trigger()
    assert (session.title, session.notes) == (before.title, before.notes)
    assert not window.isWindowModified()


def test_malformed_file_keeps_the_session_and_its_history(window, tmp_path):
    op = window.document.session.operations[0]
    window.document.set_param(op.id, "m", 512)
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\noperations:\n  - kind: gemm\n    m: -5\n")
    session_before = window.document.session
    chart = _points(window)
    assert not window.open_path(bad)
    assert "bad.yaml:4: operations[0].m: must be a positive integer" in window.last_error
    assert window.document.session is session_before
    assert _points(window) == chart
    assert window.document.can_undo()
    window.document.undo()
    assert op.operation.params["m"] == 8192


def test_close_asks_to_save_and_cancel_keeps_the_window(window, monkeypatch):
    window.document.set_param(window.document.session.operations[0].id, "m", 100)
    monkeypatch.setattr(window, "ask_save_changes", lambda: QMessageBox.Cancel)
    assert not window.close()
    assert window.isVisible()
    monkeypatch.setattr(window, "ask_save_changes", lambda: QMessageBox.Discard)
    assert window.close()


def test_the_close_prompt_answers_its_access_keys(qtbot, window, monkeypatch):
    # Qt's own texts for Save and Discard have no access key on a desktop without a theme
    # (openbox): Discard was reachable by Tab alone
    window.document.set_param(window.document.session.operations[0].id, "m", 100)
    box = window.save_changes_box()
    keys = {box.standardButton(b): b.text() for b in box.buttons()}
    assert "&" in keys[QMessageBox.Save] and "&" in keys[QMessageBox.Discard]
    saved, discard = (shown_text(keys[b]).lower() for b in (QMessageBox.Save,
                                                             QMessageBox.Discard))
    key_of = {b: keys[b][keys[b].index("&") + 1].lower() for b in keys if "&" in keys[b]}
    assert len(set(key_of.values())) == len(key_of)  # each its own letter
    assert key_of[QMessageBox.Save] in saved and key_of[QMessageBox.Discard] in discard
    box.deleteLater()
    # the prompt as closing shows it: Alt and Discard's letter discards, and the window closes
    from PySide6.QtCore import QTimer

    stuck = []

    def press() -> None:
        shown = next(w for w in window.findChildren(QMessageBox) if w.isVisible())
        shown.activateWindow()
        shown.windowHandle().requestActivate()
        qtbot.waitUntil(shown.isActiveWindow)  # (its keys are read while it is active)
        letter = key_of[QMessageBox.Discard].upper()
        qtbot.keyClick(shown, getattr(Qt.Key, f"Key_{letter}"), Qt.KeyboardModifier.AltModifier)
        try:  # (the button is clicked as a shortcut clicks it: shown pressed for a moment)
            qtbot.waitUntil(lambda: not shown.isVisible(), timeout=5000)
        except qtbot.TimeoutError:  # (the key did nothing: closed, so that the test fails)
            stuck.append(shown.text())
            shown.reject()

    QTimer.singleShot(0, press)
    answer = window.ask_save_changes()
    assert not stuck and answer == QMessageBox.Discard
    monkeypatch.setattr(window, "ask_save_changes", lambda: QMessageBox.Cancel)


def test_window_layout_is_remembered(qtbot, window):
    # Smaller than the offscreen screen (800 x 600), which restoreGeometry clamps to, and
    # no smaller than the window's least size (the left column stacks two panels).
    window.resize(711, 583)
    window.results_dock.hide()
    window.close()
    again = MainWindow()
    qtbot.addWidget(again)
    assert (again.size().width(), again.size().height()) == (711, 583)
    assert not again.results_dock.isVisibleTo(again)


def test_dropping_a_session_file_opens_it(qtbot, window):
    target = next(p for p in EXAMPLES if p.name == "attention.yaml")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(target))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    window.dropEvent(event)
    qtbot.waitUntil(lambda: window.document.path == target.resolve(), timeout=HANG_GUARD_S * 1000)
    assert window.windowTitle().startswith("attention.yaml")


def test_view_menu_toggles_are_undoable_session_settings(window):
    action = window.view_actions["regions"]
    assert not action.isChecked()
    action.trigger()
    assert window.document.session.view.regions
    window.document.undo()
    assert not window.document.session.view.regions
    assert not action.isChecked()


def test_each_view_menu_choice_is_an_undo_step_named_as_the_menu_names_it(window):
    """Theme ▸ Dark, then Presentation: Undo goes back to Dark, not straight to Light; Legend
    off then on again: Undo hides it (the two choices had merged into one step that undid
    nothing). The Edit menu names each step in the View menu's words, not a setting's key."""
    undo = window.undo_action
    window.theme_actions["dark"].trigger()
    window.theme_actions["presentation"].trigger()
    assert shown_text(undo.text()) == "Undo Theme: Presentation"
    undo.trigger()
    assert window.theme_actions["dark"].isChecked()
    assert shown_text(undo.text()) == "Undo Theme: Dark"
    undo.trigger()
    assert window.theme_actions["light"].isChecked()
    legend = window.view_actions["legend"]
    legend.trigger()
    legend.trigger()
    assert legend.isChecked()
    assert shown_text(undo.text()) == "Undo Show Legend"
    undo.trigger()
    assert not legend.isChecked()
    assert shown_text(undo.text()) == "Undo Hide Legend"
    window.view_actions["all_precisions"].trigger()
    assert shown_text(undo.text()) == "Undo Show All Precision Roofs"
    window.level_actions["l2"].trigger()
    assert shown_text(undo.text()) == "Undo Profile Memory Level: L2"
    window.top_actions[10].trigger()
    assert shown_text(undo.text()) == "Undo Profiled Kernels Shown: Top 10"


def test_open_example_menu_lists_every_example(window):
    titles = [shown_text(a.text()) for a in window.examples_menu.actions()]
    assert len(titles) == len(EXAMPLES)
    for path in EXAMPLES:
        assert load_session(path).title in titles


def test_new_session_is_empty_and_untitled(window, monkeypatch):
    monkeypatch.setattr(window, "ask_save_changes", lambda: QMessageBox.Discard)
    window.document.set_param(window.document.session.operations[0].id, "m", 100)
    assert window.new_session()
    assert window.document.session.operations == []
    assert window.windowTitle().startswith("Untitled")
    assert window.canvas.point_items() == []


def test_help_dialogs_state_the_conventions(window):
    window.conventions_action.trigger()
    text = window._info_box.text()
    assert "multiply-add counts as 2 FLOPs" in text
    assert "min(peak, I × bandwidth)" in text
    window._info_box.close()


def test_counting_conventions_show_every_formula_whole(window):
    """The bound formula says "T_lower / efficiency < kernels × launch overhead": as rich
    text, everything after the "<" was lost. The text shown is each formula, whole."""
    from PySide6.QtGui import QTextDocument

    from workbench.model.roofline import FORMULAS

    window.conventions_action.trigger()
    shown = QTextDocument()
    shown.setHtml(window._info_box.text())  # what the dialog's rich-text label draws
    plain = " ".join(shown.toPlainText().split())
    for formula in FORMULAS.values():
        assert formula in plain
    assert plain.rstrip().endswith(FORMULAS[list(FORMULAS)[-1]])
    window._info_box.close()


_CRASHING_APP = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
sys.path.insert(0, {root!r})
from workbench.io.sessions import load_session
from PySide6.QtCore import QStandardPaths
from workbench.ui.window.app import create_app
from workbench.ui.window.main_window import MainWindow
QStandardPaths.setTestModeEnabled(True)  # the same folders as the test process
app = create_app()
window = MainWindow()
window.open_path({example!r})
op = window.document.session.operations[0]
window.document.set_param(op.id, "m", 4321)
window.autosave_now()
print(window.autosave.path, flush=True)
os._exit(3)  # a crash: no close, no clean-up
"""


def test_unsaved_changes_survive_a_crash_and_are_recovered_on_next_start(qtbot, tmp_path):
    import os
    import subprocess
    import sys

    from conftest import ROOT

    create_app()
    env = dict(os.environ)  # same isolated HOME/XDG folders as this test
    proc = subprocess.run(
        [sys.executable, "-c", _CRASHING_APP.format(root=str(ROOT), example=str(LLAMA))],
        capture_output=True, text=True, env=env, timeout=HANG_GUARD_S)
    assert proc.returncode == 3, proc.stderr
    autosave_file = Path(proc.stdout.strip().splitlines()[-1])
    assert autosave_file.exists()

    window = MainWindow()
    qtbot.addWidget(window)
    assert autosave_file.parent == window.autosave.folder
    asked = []
    window.ask_recover = lambda found: asked.append(found.original) or True
    assert window.offer_recovery()
    assert asked == [str(LLAMA.resolve())]
    assert window.document.session.operations[0].operation.params["m"] == 4321
    assert window.document.path == LLAMA.resolve()
    assert window.isWindowModified()
    assert not autosave_file.exists()
    # a clean save removes this app's own autosave too
    window.autosave_now()
    assert window.autosave.path.exists()
    window.save_to(tmp_path / "recovered.yaml")
    assert not window.autosave.path.exists()
    assert load_session(tmp_path / "recovered.yaml").operations[0].operation.params["m"] == 4321


def test_an_autosave_left_where_earlier_versions_kept_them_is_recovered(qtbot, tmp_path):
    """Autosaves moved to the user's data folder; work a crash left in the folder earlier
    versions used (Qt's name for it) is still offered, newest first, and removed once
    recovered."""
    from workbench.io.autosave import Autosave
    from workbench.io.sessions import load_session
    from workbench.ui.window.files import autosave_folder, former_autosave_folder

    create_app()
    assert former_autosave_folder() != autosave_folder()
    session = load_session(LLAMA)
    session.operations[0].operation.params["m"] = 1234
    left = Autosave(former_autosave_folder())
    left.write(session, LLAMA)
    meta, _, rest = left.path.read_text(encoding="utf-8").partition("\n")
    # (by a process that is gone)
    left.path.write_text(meta.replace(f'"pid": {os.getpid()}', '"pid": 0') + "\n" + rest,
                         encoding="utf-8")
    window = MainWindow()
    qtbot.addWidget(window)
    asked = []
    window.ask_recover = lambda found: asked.append(found.original) or True
    assert window.offer_recovery()
    assert asked == [str(LLAMA)]
    assert window.document.session.operations[0].operation.params["m"] == 1234
    assert window.document.path == LLAMA.resolve()
    assert not left.path.exists()
    window.document.mark_clean()  # (closed with the test, asking nothing)


def _left_by_a_crash(session, original, saved_at: float) -> Path:
    """An autosave of ``session`` (belonging to ``original``) left by a process that is
    gone, written at ``saved_at``."""
    import json

    from workbench.io.autosave import Autosave
    from workbench.ui.window.files import autosave_folder

    left = Autosave(autosave_folder())
    left.write(session, original)
    header, _, rest = left.path.read_text(encoding="utf-8").partition("\n")
    prefix, _, meta = header.partition("{")
    meta = json.loads("{" + meta) | {"pid": 0, "saved_at": saved_at}
    left.path.write_text(f"{prefix}{json.dumps(meta)}\n{rest}", encoding="utf-8")
    return left.path


def test_every_crashed_window_s_work_is_offered_not_only_the_newest(qtbot, tmp_path):
    """Two windows crashed with unsaved work in two files: recovering the newest keeps the
    other's autosave, offered at the next start; declining one offers the next."""
    from workbench.io.sessions import save_session

    create_app()
    files = {}
    for m, name in ((1111, "older.yaml"), (2222, "newer.yaml")):
        session = load_session(LLAMA)
        files[name] = tmp_path / name
        save_session(session, files[name])
        session.operations[0].operation.params["m"] = m
        _left_by_a_crash(session, files[name], saved_at=1000.0 + m)

    window = MainWindow()
    qtbot.addWidget(window)
    asked = []
    window.ask_recover = lambda found: asked.append(Path(found.original).name) or True
    assert window.offer_recovery()
    assert asked == ["newer.yaml"]
    assert window.document.path == files["newer.yaml"]
    assert window.document.session.operations[0].operation.params["m"] == 2222
    window.document.mark_clean()  # (closed with the test, asking nothing)

    # the next start: the older window's work is still there; "No" to it removes it
    later = MainWindow()
    qtbot.addWidget(later)
    asked.clear()
    later.ask_recover = lambda found: asked.append(Path(found.original).name) or False
    assert not later.offer_recovery()
    assert asked == ["older.yaml"]

    # the one recovered and the one declined are gone: nothing is offered again
    again = MainWindow()
    qtbot.addWidget(again)
    asked.clear()
    again.ask_recover = lambda found: asked.append(found) or True
    assert not again.offer_recovery()
    assert asked == []


def test_start_shows_the_built_in_example_and_leaves_the_collector_running(qtbot):
    import gc

    from workbench.io.presets import DEFAULT_EXAMPLE, examples_dir
    from workbench.ui.window.launch import start

    assert gc.isenabled()
    window = start()
    qtbot.addWidget(window)
    assert window.isVisible()
    example = load_session(examples_dir() / DEFAULT_EXAMPLE)
    assert window.document.session.title == example.title
    # every operation is drawn on every machine (its name is written on the chart where it
    # has a clean place at the window's size; the offscreen screen is small)
    assert len(window.canvas.point_items()) == len(example.operations) * len(example.hardware)
    assert len(window.canvas.label_items()) <= len(example.operations)
    assert gc.isenabled()  # paused only while the window was built
    # (its youngest generation large enough that a whole model's edit, some 10,000 new
    # objects, runs no collection of the long-lived ones: see create_app)
    from workbench.ui.window.app import YOUNG_OBJECTS

    assert gc.get_threshold()[0] == YOUNG_OBJECTS >= 10_000


def test_start_refuses_a_bad_session_before_any_window_and_resumes_the_collector(tmp_path):
    import gc

    from PySide6.QtWidgets import QApplication

    from workbench.io.errors import InputError
    from workbench.ui.window.launch import start

    create_app()
    bad = tmp_path / "bad.yaml"
    bad.write_text("operations: [\n", encoding="utf-8")
    before = set(QApplication.topLevelWidgets())
    with pytest.raises(InputError, match=r"bad\.yaml"):
        start(str(bad))
    assert set(QApplication.topLevelWidgets()) == before
    assert gc.isenabled()
