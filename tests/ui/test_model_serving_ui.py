"""The Model tab's serving settings: memory utilisation, the all-reduce algorithm, routing
imbalance and speculative decoding, typed into the set-up form, change what the results
table shows, and are saved with the session."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from workbench.io.model_configs import read_model_config
from workbench.io.presets import get_preset
from workbench.model.llm.architecture import Setup
from workbench.model.llm.session import ModelEntry
from workbench.ui.panels.model_panel import ROW_CAPACITY, ROW_MAX_BATCH, ROW_PREDICTED


@pytest.fixture
def window(open_window):
    win = open_window(size=(1366, 768))
    win.ask_save_changes = lambda: QMessageBox.Discard  # (the tests replace the session)
    win.document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    return win


def _type(qtbot, spin, text: str) -> None:
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def test_memory_utilisation_and_draft_tokens_typed_change_the_results(qtbot, window, tmp_path):
    win = window
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1, prompt_len=2048, kv_len=2048,
                             output_len=256), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    panel = win.model_panel
    table, form = panel.table, panel.editor.form
    qtbot.waitUntil(lambda: table.columnCount() == 1)
    # by hand (tests/model/test_serving.py): 196 sequences at 0.9 of the card
    assert table.item(ROW_MAX_BATCH, 0).text() == "196"
    assert table.item(ROW_CAPACITY, 0).text() == "75.9 GB of 85.5 GB (79.6 GiB)"
    # 0.95: 85,520,809,984 B × 0.95 − 1 GiB = 80.17 GB usable; (80.17 − 16.06 − 0.537) GB
    # over 302 MB per sequence = 210.5: 210
    _type(qtbot, form.memory_utilization, "0.95")
    qtbot.waitUntil(lambda: table.item(ROW_MAX_BATCH, 0).text() == "210")
    assert win.document.session.models[0].setup.memory_utilization == 0.95

    tpot = table.item(ROW_PREDICTED, 0).text()
    assert not form.acceptance.isEnabled()  # no draft tokens, nothing to accept
    _type(qtbot, form.draft_tokens, "4")
    qtbot.waitUntil(lambda: table.item(ROW_PREDICTED, 0).text() != tpot)
    assert form.acceptance.isEnabled()
    assert "speculative decoding" in panel.derivation.toPlainText()
    assert "(1 − 0.7^5)/(1 − 0.7) = 2.77" in panel.derivation.toPlainText()

    form.all_reduce.setCurrentText("ring")
    assert win.document.session.models[0].setup.all_reduce == "ring"
    _type(qtbot, form.imbalance, "1.3")
    assert win.document.session.models[0].setup.imbalance == pytest.approx(1.3)

    path = tmp_path / "s.yaml"
    assert win.save_to(path)
    text = path.read_text(encoding="utf-8")
    for line in ("memory_utilization: 0.95", "draft_tokens: 4", "all_reduce: ring",
                 "imbalance: 1.3"):
        assert line in text
    assert "kv_block" not in text  # a default is not written

    # each setting is one undo step
    win.document.undo()
    assert win.document.session.models[0].setup.imbalance == 1.0
    assert form.imbalance.value() == 1.0


def test_a_bad_utilisation_cannot_be_typed(qtbot, window):
    win = window
    entry = ModelEntry("Llama-3.1-8B", read_model_config("Llama-3.1-8B"),
                       Setup(phase="decode", batch=1), name="8B")
    win.add_model(entry)
    win.show_model(entry.id)
    form = win.model_panel.editor.form
    assert (form.memory_utilization.minimum(), form.memory_utilization.maximum()) == (0.05, 1.0)
    _type(qtbot, form.memory_utilization, "1.5")  # the spin box keeps it in its range
    assert 0 < win.document.session.models[0].setup.memory_utilization <= 1.0
