"""An older file that leaves out a required dimension opens as it always did, but the app says
which values it assumed: a message that does not block the window, and the status bar."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox

from workbench.ui.window.launch import start

OLD = ("schema_version: 1\nhardware: [{preset: h100-sxm}]\noperations:\n"
       "  - name: FFN\n    kind: gemm\n    m: 64\n    n: 4096\n"
       "  - {name: scores, kind: attention, heads: 32, head_dim: 128, query_len: 1}\n")


@pytest.fixture
def window(open_window):
    return open_window()


def _message(win) -> QMessageBox | None:
    boxes = [b for b in win.findChildren(QMessageBox, "assumed_values") if b.isVisible()]
    assert len(boxes) <= 1
    return boxes[0] if boxes else None


def test_opening_an_older_file_lists_each_value_assumed(window, qtbot, tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(OLD, encoding="utf-8")
    assert window.open_path(path)
    box = _message(window)
    assert box is not None
    assert box.windowModality() == Qt.WindowModality.NonModal  # the window stays usable
    text = box.text()
    assert f"{path}:4: operations[0].k: not given; k = 4096 assumed" in text
    assert f"{path}:8: operations[1].kv_len: not given; kv_len = 1 assumed" in text  # = query_len
    assert "old.yaml" in window.statusBar().currentMessage()
    assert "2 required values" in window.statusBar().currentMessage()
    # the session opened with those values, and the editor marks them
    op = window.document.session.operations[0]
    assert op.operation.counts().flops == 2 * 64 * 4096 * 4096
    window.workspace.selection.select(op.id)
    assert "(assumed)" in window.findChild(QLabel, "label_k").text()


def test_the_message_goes_with_its_file(window, tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(OLD, encoding="utf-8")
    assert window.open_path(path)
    assert _message(window) is not None
    example = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")
    assert window.open_path(example)
    assert _message(window) is None


def test_a_current_or_complete_file_opens_without_a_message(window, tmp_path):
    for version in (1, 2):
        path = tmp_path / f"v{version}.yaml"
        path.write_text(OLD.replace("schema_version: 1", f"schema_version: {version}")
                        .replace("    n: 4096\n", "    n: 4096\n    k: 4096\n")
                        .replace("query_len: 1}", "query_len: 1, kv_len: 8}"),
                        encoding="utf-8")
        assert window.open_path(path)
        assert _message(window) is None


def test_starting_on_an_older_file_says_so(qtbot, tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(OLD, encoding="utf-8")
    win = start(str(path))
    qtbot.addWidget(win)
    box = _message(win)
    assert box is not None
    assert f"{path}:4: operations[0].k: not given" in box.text()
    win.ask_save_changes = lambda: QMessageBox.Discard
