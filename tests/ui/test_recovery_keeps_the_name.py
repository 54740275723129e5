"""A session recovered after a crash is named as it was before: the example it was opened
from, or Untitled, in the title, in Save's file dialog and in the close prompt (not the
example the restarted app opened on)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import HANG_GUARD_S, ROOT
from PySide6.QtWidgets import QFileDialog, QMessageBox

_CRASHING_APP = """
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
sys.path.insert(0, {root!r})
from PySide6.QtCore import QStandardPaths
QStandardPaths.setTestModeEnabled(True)  # (this test's settings and autosave folders)
from workbench.document import new_operation
from workbench.io.presets import examples_dir
from workbench.ui.window.launch import start
window = start()  # the app as the command line starts it
example = {example!r}
assert window.open_example(examples_dir() / example) if example else window.new_session()
window.document.add_operation(new_operation("gemm", "edited before the crash"))
window.autosave_now()
os._exit(3)  # a crash: no close, no clean-up
"""


def _crash_with_unsaved_work(example: str | None) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _CRASHING_APP.format(root=str(ROOT), example=example)],
        capture_output=True, text=True, env=dict(os.environ), timeout=HANG_GUARD_S)
    assert proc.returncode == 3, proc.stderr


@pytest.mark.parametrize(("example", "name"), [
    ("critical_batch_sweep.yaml", "critical_batch_sweep.yaml"), (None, "Untitled")])
def test_a_recovered_session_keeps_its_name(qtbot, monkeypatch, example, name):
    from workbench.io.presets import DEFAULT_EXAMPLE
    from workbench.ui.window.launch import start

    assert example != DEFAULT_EXAMPLE  # (the restarted app opens on that one)
    _crash_with_unsaved_work(example)
    window = start()  # the app started again, as from the command line: its example shown
    qtbot.addWidget(window)
    qtbot.waitExposed(window)
    try:
        _recover_and_check_the_name(window, monkeypatch, example, name)
    finally:
        window.ask_save_changes = lambda: QMessageBox.StandardButton.Discard


def _recover_and_check_the_name(window, monkeypatch, example, name) -> None:
    from workbench.io.presets import DEFAULT_EXAMPLE

    asked = []
    monkeypatch.setattr(window, "ask_recover", lambda found: asked.append(found) or True)
    assert window.offer_recovery()  # "Recover them?" — Yes
    assert any(op.operation.name == "edited before the crash"
               for op in window.document.session.operations)
    assert window.document.path is None

    assert window.windowTitle().startswith(name)
    assert DEFAULT_EXAMPLE not in window.windowTitle()

    offered = []  # Ctrl+S: the file dialog starts on the session's own name
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda _parent, _caption, start, _filter: offered.append(start) or ("", ""))
    window.save_action.trigger()
    expected_start = example or "session.yaml"
    assert offered == [expected_start]

    prompts = []  # closing: the prompt names it
    monkeypatch.setattr(QMessageBox, "exec",
                        lambda box: prompts.append(box.text())
                        or QMessageBox.StandardButton.Discard.value)
    window.close()
    assert prompts and f"Save changes to {name} " in prompts[0]
