"""A whole model cannot take the session past the operation limit that the session reader
refuses at open: whatever can be entered can be saved and opened again. The Add Model dialog,
the Model tab's view and the document refuse it with the reader's message, and the session
stays as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from workbench.document import Document
from workbench.document.models import ModelTooLarge
from workbench.io.errors import InputError
from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.io.sessions import dumps_session, loads_session
from workbench.model import limits
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry
from workbench.model.session import HardwareEntry, Session

CONFIGS = Path(__file__).resolve().parents[2] / "workbench" / "model_configs"


def _deep_config(tmp_path) -> Path:
    """Llama-3.1-8B with 1,000 layers (the most a config may have): about 11,000 operations
    with every operation shown."""
    data = json.loads((CONFIGS / "Llama-3.1-8B.json").read_text(encoding="utf-8"))
    data["num_hidden_layers"] = 1_000
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_document_refuses_a_model_past_the_limit_with_the_readers_message(tmp_path):
    path = _deep_config(tmp_path)
    arch = read_model_config(str(path))
    doc = Document(Session(hardware=[HardwareEntry(get_preset("h100-sxm"), preset="h100-sxm")]))

    def model(i: int) -> ModelEntry:
        return ModelEntry(str(path), arch, Setup("decode", 1, kv_len=8), view="all",
                          name=f"m{i}")

    refused = ""
    for added in range(20):  # (about 11,000 operations each: the tenth does not fit)
        try:
            doc.add_model(model(added))
        except ModelTooLarge as exc:
            refused = str(exc)
            break
    assert refused, "twenty models of 11,000 operations each were all added"
    count = len(doc.session.operations)
    assert 90_000 < count <= 100_000  # room was filled, not refused early
    assert len(doc.session.models) == added
    assert doc.undo_text() == f"Add m{added - 1}"
    # what was entered opens again
    text = dumps_session(doc.session)
    assert len(loads_session(text, "s.yaml").operations) == count
    # the reader refuses the same model with the same words
    doc.session.models.append(model(added))
    with pytest.raises(InputError) as opened:
        loads_session(dumps_session(doc.session), "s.yaml")
    problem = refused.removeprefix(f"m{added} ")
    assert "with the session's other operations that is more than 100,000" in problem
    assert str(opened.value).endswith(problem)


@pytest.fixture
def window(gpu_window):
    return gpu_window


def test_add_model_dialog_refuses_a_model_past_the_limit(qtbot, window, monkeypatch):
    # (a lower limit: the app's window need not hold a hundred thousand operations)
    monkeypatch.setattr(limits, "MAX_OPERATIONS", 2_000)
    undo = window.document.undo_text()
    window.add_model_action.trigger()
    dialog = window._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData("Llama-3.1-405B"))
    dialog.form.view.setCurrentIndex(dialog.form.view.findData("all"))
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    # 1,389 operations fit: the first one is added
    qtbot.waitUntil(lambda: not dialog.isVisible())
    assert len(window.document.session.models) == 1
    count = len(window.document.session.operations)
    assert count == 1_389
    # a second one does not: the dialog says so and stays open; nothing changes
    window.add_model_action.trigger()
    dialog = window._add_model_dialog
    qtbot.waitUntil(dialog.isVisible)
    dialog.config.setCurrentIndex(dialog.config.findData("Llama-3.1-405B"))
    dialog.form.view.setCurrentIndex(dialog.form.view.findData("all"))
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    assert dialog.isVisible()
    assert dialog.summary.text() == (
        "Llama-3.1-405B expands into 1,389 operations; with the session's other operations "
        "that is more than 2,000")
    assert len(window.document.session.models) == 1
    assert len(window.document.session.operations) == count
    assert window.document.undo_text() != undo
    assert window.document.undo_text().startswith("Add Llama-3.1-405B")
    dialog.reject()


def test_model_tab_refuses_every_operation_past_the_limit(qtbot, window, monkeypatch):
    monkeypatch.setattr(limits, "MAX_OPERATIONS", 1_000)
    arch = read_model_config("Llama-3.1-405B")
    model_id = window.add_model(ModelEntry("Llama-3.1-405B", arch, Setup("decode", 1, kv_len=8)))
    window.document.seal()
    model = window.document.session.models[0]
    ids = list(model.op_ids)
    undo = window.document.undo_text()
    editor = window.model_panel.editor
    assert editor.model_id == model_id
    view = editor.form.view
    view.setCurrentIndex(view.findData("all"))  # what choosing it in the list does
    assert editor.problem.text() == (
        "Llama-3.1-405B expands into 1,389 operations; with the session's other operations "
        "that is more than 1,000")
    assert view.currentData() == "layers"  # the form shows the model as it stays
    assert model.view == "layers" and model.op_ids == ids
    assert [e.id for e in window.document.session.operations] == ids
    assert window.document.undo_text() == undo
