"""The operation editor with real widgets: live edits, one undo step per gesture, values
refused in place, updates from outside without echo, and a derivation that names every term."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QObject, Qt, QUrl
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QToolButton,
    QWidget,
)

from workbench.document import Document, new_operation
from workbench.io.presets import get_preset
from workbench.io.sessions import load_session
from workbench.model.operations import CONVENTIONS, KINDS
from workbench.model.units import format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.editors.operation_editor import OperationEditor
from workbench.ui.widgets import BigSpinBox, QuantityEdit

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "examples"


def _editor(qtbot, document: Document) -> tuple[Workspace, OperationEditor]:
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    editor.resize(520, 900)
    editor.show()
    return workspace, editor


def _example(qtbot, name: str, index: int = 0):
    document = Document(load_session(EXAMPLES / f"{name}.yaml"))
    workspace, editor = _editor(qtbot, document)
    op_id = document.session.operations[index].id
    workspace.selection.select(op_id)
    return document, workspace, editor, op_id


def _type(qtbot, widget, text: str) -> None:
    """Select everything in the field and type ``text`` key by key."""
    edit = widget.lineEdit() if isinstance(widget, BigSpinBox) else widget
    edit.selectAll()
    qtbot.keyClicks(widget, text)


def _paste(qtbot, widget, text: str) -> None:
    """Select everything in the field and paste ``text`` (one edit, no intermediate values)."""
    QApplication.clipboard().setText(text)
    edit = widget.lineEdit() if isinstance(widget, BigSpinBox) else widget
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def _params(document: Document, op_id: int) -> dict:
    return dict(document.operation(op_id).operation.params)


# -- live edits and undo ---------------------------------------------------------------------


def test_typing_m_updates_document_derivation_and_results(qtbot):
    document, workspace, editor, op_id = _example(qtbot, "llama_ffn", 0)
    hw_id = document.session.hardware[0].id
    before = workspace.results.pair(op_id, hw_id).result.intensity
    spin = editor.field("m")
    assert isinstance(spin, BigSpinBox)
    assert spin.value() == 8192

    _type(qtbot, spin, "1024")
    qtbot.keyClick(spin, Qt.Key.Key_Return)

    assert _params(document, op_id)["m"] == 1024
    flops = 2 * 1024 * 28672 * 8192
    text = editor.derivation_text()
    assert format_quantity(flops, "flops") in text
    assert "2·batch·M·N·K = 2·1·1024·28672·8192" in text
    after = workspace.results.pair(op_id, hw_id).result.intensity
    assert after != before
    assert after == pytest.approx(flops / ((1024 * 8192 + 8192 * 28672 + 1024 * 28672) * 2))
    assert editor.hint_text() == ""


def test_each_keystroke_is_applied_at_once(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("k")
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin, "5")
    assert _params(document, op_id)["k"] == 5
    qtbot.keyClicks(spin, "12")
    assert _params(document, op_id)["k"] == 512


def test_a_drag_of_ten_steps_then_seal_is_one_undo_step(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("m")
    depth = len(document._undo)
    for _ in range(10):
        qtbot.keyClick(spin, Qt.Key.Key_Up)
    assert _params(document, op_id)["m"] == 8202
    qtbot.keyClick(spin, Qt.Key.Key_Return)  # editingFinished → seal
    assert len(document._undo) == depth + 1
    assert spin.value() == 8202

    document.undo()
    assert _params(document, op_id)["m"] == 8192
    assert spin.value() == 8192  # the form follows the undo

    # after the seal, the next gesture is a new step
    qtbot.keyClick(spin, Qt.Key.Key_Down)
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    qtbot.keyClick(spin, Qt.Key.Key_Down)
    assert _params(document, op_id)["m"] == 8190
    document.undo()
    assert _params(document, op_id)["m"] == 8191


def test_page_up_doubles_and_page_down_halves(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("n")
    qtbot.keyClick(spin, Qt.Key.Key_PageUp)
    assert _params(document, op_id)["n"] == 2 * 28672
    qtbot.keyClick(spin, Qt.Key.Key_PageDown)
    qtbot.keyClick(spin, Qt.Key.Key_PageDown)
    assert _params(document, op_id)["n"] == 28672 // 2


def test_values_up_to_2_pow_53(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("k")
    _paste(qtbot, spin, str(2**53))
    assert _params(document, op_id)["k"] == 2**53
    _paste(qtbot, spin, str(2**54))
    assert _params(document, op_id)["k"] == 2**53
    assert "too large" in editor.hint_text()


@pytest.mark.parametrize("text, message", [
    ("-5", "must be a positive integer"),
    ("abc", "must be a positive integer"),
    ("0", "must be a positive integer"),
    ("2.5", "must be a positive integer"),
])
def test_invalid_int_is_refused_in_place(qtbot, text, message):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    assert not document.modified
    spin = editor.field("m")
    _paste(qtbot, spin, text)
    assert message in editor.hint_text()
    assert "M" in editor.hint_text()
    assert spin.property("invalid") is True
    assert spin.lineEdit().text() == text  # shown as typed, not swallowed
    assert _params(document, op_id)["m"] == 8192
    assert not document.modified
    assert not document.can_undo()

    # Return puts the document's value back and says so; a valid value clears everything
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert spin.lineEdit().text() == "8192"
    assert not spin.property("invalid")
    assert "kept M = 8192" in editor.hint_text()
    _type(qtbot, spin, "64")
    assert editor.hint_text() == ""
    assert _params(document, op_id)["m"] == 64


def test_refused_text_survives_other_edits_until_an_outside_change(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    m, n = editor.field("m"), editor.field("n")
    _paste(qtbot, m, "-5")
    qtbot.keyClick(n, Qt.Key.Key_Up)  # the editor's own edit of another field
    assert _params(document, op_id)["n"] == 28673
    assert m.lineEdit().text() == "-5"
    assert "M" in editor.hint_text() and m.property("invalid") is True
    document.undo()  # from outside: the form shows the document again
    assert _params(document, op_id)["n"] == 28672
    assert m.lineEdit().text() == "8192"
    assert not m.property("invalid")
    assert editor.hint_text() == ""


def test_kv_heads_must_divide_heads(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "attention", 3)  # GQA: 32 heads, 8 KV
    spin = editor.field("kv_heads")
    _paste(qtbot, spin, "12")
    assert "must divide heads (32)" in editor.hint_text()
    assert _params(document, op_id)["kv_heads"] == 8
    assert not document.modified
    _type(qtbot, spin, "16")
    assert editor.hint_text() == ""
    assert _params(document, op_id)["kv_heads"] == 16

    # heads is checked against kv_heads too
    heads = editor.field("heads")
    _paste(qtbot, heads, "40")
    assert "KV heads" in editor.hint_text()
    assert _params(document, op_id)["heads"] == 32


def test_a_value_that_breaks_a_point_of_the_sweep_is_refused(qtbot, tmp_path):
    """Heads swept over 8, 16 and 32 with 8 KV heads: 16 KV heads suits the typed heads (32)
    but not the sweep's first point (8 heads), and was taken; the session then saved could
    not be opened again ("kv_heads: must not exceed heads (8) … at the sweep's point 1"). Now it
    is refused in place, with the reason; a value every point takes is applied."""
    from workbench.io.sessions import load_session, save_session
    from workbench.model.sweeps import Sweep

    document, _ws, editor, op_id = _example(qtbot, "attention", 3)  # GQA: 32 heads, 8 KV
    document.set_sweep(op_id, Sweep("heads", [8, 16, 32]))
    document.seal()
    spin = editor.field("kv_heads")
    _paste(qtbot, spin, "16")
    assert "the sweep of heads would break" in editor.hint_text()
    assert "heads (8), got 16 (at the sweep's point 1)" in editor.hint_text()
    assert spin.property("invalid") is True
    assert _params(document, op_id)["kv_heads"] == 8
    _type(qtbot, spin, "4")
    assert editor.hint_text() == ""
    assert _params(document, op_id)["kv_heads"] == 4
    path = tmp_path / "swept.yaml"
    save_session(document.session, path)
    assert load_session(path).operations[3].operation.params["kv_heads"] == 4


def test_undo_from_outside_updates_the_form_without_echo(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("m")
    form = editor._scroll.widget()
    document.set_param(op_id, "m", 123)
    document.seal()
    assert spin.value() == 123
    assert spin.lineEdit().text() == "123"
    document.undo()
    assert spin.value() == 8192
    assert document.can_redo()  # the form did not write the value back (no echo)
    document.redo()
    assert spin.value() == 123
    assert editor._scroll.widget() is form  # no rebuild
    assert editor.field("m") is spin


def test_outside_change_keeps_the_text_being_typed(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("m")
    spin.setFocus()
    _type(qtbot, spin, "1e3")
    assert _params(document, op_id)["m"] == 1000
    document.set_param(op_id, "n", 1000)  # another panel edits another field
    assert spin.lineEdit().text() == "1e3"
    assert editor.field("n").value() == 1000


def test_one_parameter_edit_does_not_rebuild_form_or_derivation(qtbot):
    _document, _ws, editor, _op_id = _example(qtbot, "llama_ffn", 0)
    form = editor._scroll.widget()
    spin = editor.field("m")
    full = editor.derivation.full_renders
    for _ in range(5):
        qtbot.keyClick(spin, Qt.Key.Key_Up)
        QApplication.processEvents()  # the event loop runs between key presses
    assert editor._scroll.widget() is form
    assert editor.field("m") is spin
    assert editor.derivation.full_renders == full  # only changed runs were replaced
    assert editor.derivation.partial_renders >= 5
    # the shown text matches a fresh render
    shown = editor.derivation.toPlainText()
    assert "2·batch·M·N·K = 2·1·8197·28672·8192" in shown


def _document_as_shown(view) -> list:
    """Each paragraph of a derivation view as it is laid out: its text, paragraph format,
    runs of text in one character format, lines and place."""
    from PySide6.QtGui import QTextBlockFormat, QTextCharFormat

    out = []
    block = view.document().begin()
    while block.isValid():
        runs: list = []
        text = block.text()
        parts = block.textFormats()
        for part in parts:
            # (a copy of each: a format range's own goes with the list; formats compare by
            # their properties)
            look = QTextCharFormat(part.format)
            piece = text[part.start:part.start + part.length]
            if runs and runs[-1][1] == look:
                runs[-1][0] += piece
            else:
                runs.append([piece, look])
        layout = block.layout()
        lines = [(line.textStart(), line.textLength(), line.y(), line.naturalTextWidth())
                 for line in (layout.lineAt(i) for i in range(layout.lineCount()))]
        out.append((block.text(), QTextBlockFormat(block.blockFormat()), runs, lines,
                    view.document().documentLayout().blockBoundingRect(block)))
        block = block.next()
    return out


def test_a_derivation_changed_in_place_is_laid_out_as_one_written_afresh(qtbot, monkeypatch):
    """An edit changes the derivation's paragraphs in place, the changed ones in runs (each
    run one edit block): the text, its formats and its lines are those of the same
    derivation written afresh."""
    from workbench.ui.editors import derivation

    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    QApplication.processEvents()
    view = editor.derivation
    changed: list[list[int]] = []
    update = derivation.DerivationView._update
    monkeypatch.setattr(derivation.DerivationView, "_update",
                        lambda self, blocks, which: (changed.append(list(which)),
                                                     update(self, blocks, which))[1])
    full = view.full_renders
    document.set_param(op_id, "m", 123_457)
    QApplication.processEvents()
    assert view.full_renders == full and changed and len(changed[-1]) > 1
    runs = sum(1 for a, b in zip(changed[-1], changed[-1][1:], strict=False)
               if b - a > derivation._RUN_GAP + 1) + 1
    assert runs > 1  # (several edit blocks, and paragraphs left between them)
    assert any(b - a > 1 for a, b in zip(changed[-1], changed[-1][1:], strict=False))
    in_place = _document_as_shown(view)
    view._stale = True  # (written afresh)
    view._render_now()
    assert view.full_renders == full + 1
    assert _document_as_shown(view) == in_place


def test_derivation_follows_an_edit_after_its_repaint_and_once_per_burst(qtbot):
    """An edit's repaint comes first; the derivation text follows in the same turn of the
    event loop, once for edits that arrive together (a key held down)."""
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    editor.show()
    qtbot.waitExposed(editor)
    QApplication.processEvents()
    view = editor.derivation
    renders = view.partial_renders + view.full_renders
    for m in (8200, 8300, 8400):
        document.set_param(op_id, "m", m)
    assert "2·1·8400·" not in view.toPlainText()  # not yet laid out again
    assert "2·1·8400·" in editor.derivation_text()  # but what Copy takes is current
    QApplication.processEvents()
    assert "2·batch·M·N·K = 2·1·8400·28672·8192" in view.toPlainText()
    assert view.partial_renders + view.full_renders == renders + 1

    # the order within one turn of the event loop: the spin box (repainted by the edit)
    # before the derivation's update
    from PySide6.QtCore import QEvent, QObject

    seen: list[str] = []

    class Watch(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and obj is editor.field("m").lineEdit():
                seen.append("spin box painted")
            elif event.type() == QEvent.Type.Paint and obj is view.viewport():
                seen.append("derivation painted")
            return False

    watch = Watch()
    QApplication.instance().installEventFilter(watch)
    try:
        document.set_param(op_id, "m", 9000)
        for _ in range(3):  # the text's own repaint request may wait for the next turn
            QApplication.processEvents()
    finally:
        QApplication.instance().removeEventFilter(watch)
    assert seen[:1] == ["spin box painted"]
    assert "derivation painted" in seen
    assert "2·1·9000·" in view.toPlainText()


# -- form per kind ---------------------------------------------------------------------------


def _first_numeric(kind: str):
    return next(p for p in KINDS[kind].params if p.numeric)


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_builds_and_edits_its_first_numeric_param(qtbot, kind):
    document = Document()
    document.add_machine(get_preset("h100-sxm"), "h100-sxm")
    document.add_machine(get_preset("teaching-machine"), "teaching-machine")
    op_id = document.add_operation(new_operation(kind))
    workspace, editor = _editor(qtbot, document)
    workspace.selection.select(op_id)

    for param in KINDS[kind].params:
        widget = editor.field(param.name)
        assert widget is not None, param.name
        assert param.doc.split()[0] in widget.toolTip() or param.type == "steps"

    param = _first_numeric(kind)
    widget = editor.field(param.name)
    old = document.operation(op_id).operation.resolved()[param.name]
    if param.type == "int":
        assert isinstance(widget, BigSpinBox)
        _type(qtbot, widget, str(int(old) * 2))
        expected = int(old) * 2
    else:
        assert isinstance(widget, QuantityEdit)
        _type(qtbot, widget, "3.85 TFLOP" if param.unit == "flops" else "1e12")
        expected = 3.85e12 if param.unit == "flops" else 1e12
    qtbot.keyClick(widget, Qt.Key.Key_Return)
    assert _params(document, op_id)[param.name] == pytest.approx(expected)
    assert editor.hint_text() == ""

    counts = workspace.results.counts(op_id)
    text = editor.derivation_text()
    for term in counts.flop_terms + counts.byte_terms:
        assert term.name in text
        assert term.formula in text
    assert format_quantity(float(counts.flops), "flops") in text
    assert format_quantity(float(counts.bytes), "bytes") in text
    for note in counts.notes:
        assert note in text
    for entry in document.session.hardware:
        assert entry.hardware.label in text


def test_quantity_field_accepts_si_text_and_refuses_bad_units(qtbot):
    document = Document()
    op_id = document.add_operation(new_operation("custom"))
    document.mark_clean()
    workspace, editor = _editor(qtbot, document)
    workspace.selection.select(op_id)
    edit = editor.field("bytes")
    _type(qtbot, edit, "80 GiB")
    assert _params(document, op_id)["bytes"] == 80 * 2**30
    _paste(qtbot, edit, "3 gb")
    assert "case-sensitive" in editor.hint_text()
    assert edit.property("invalid") is True
    assert _params(document, op_id)["bytes"] == 80 * 2**30
    _paste(qtbot, edit, "-1 GB")
    assert "must be at least" in editor.hint_text()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    assert edit.text() == "85.8993 GB" or QuantityEdit("bytes").parse(edit.text()) == 80 * 2**30
    assert _params(document, op_id)["bytes"] == 80 * 2**30


def test_all_example_operations_show_every_term(qtbot):
    for path in sorted(EXAMPLES.glob("*.yaml")):
        document = Document(load_session(path))
        workspace, editor = _editor(qtbot, document)
        for entry in document.session.operations:
            workspace.selection.select(entry.id)
            counts = workspace.results.counts(entry.id)
            text = editor.derivation_text()
            for term in counts.flop_terms + counts.byte_terms:
                assert term.name in text, (path.name, entry.operation.name, term.name)
            assert "intensity" in text
            for hw in document.session.hardware:
                assert hw.hardware.label in text
        assert not document.can_undo()  # showing an operation never edits it
        assert not document.modified


# -- only_if, inherited values, combos ---------------------------------------------------------


def test_naive_attention_shows_score_passes(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "attention", 1)  # Flash prefill
    passes = editor.field("score_passes")
    form = editor._scroll.widget()
    assert not passes.isVisible()
    assert "S/P" not in editor.derivation_text()
    combo = editor.field("implementation")
    combo.setCurrentIndex(combo.findData("naive"))
    assert _params(document, op_id)["implementation"] == "naive"
    assert passes.isVisible()
    assert editor.field("score_dtype").isVisible()
    assert editor._scroll.widget() is form  # shown, not rebuilt
    text = editor.derivation_text()
    assert "S/P (2 of 4 passes)" in text
    _type(qtbot, passes, "2")
    assert "S/P (1 of 2 passes)" in editor.derivation_text()
    document.undo()
    document.undo()
    assert not passes.isVisible()


def test_inherited_dtype_combo(qtbot):
    document, _workspace, editor, op_id = _example(qtbot, "llama_ffn", 0)
    combo = editor.field("b_dtype")
    assert isinstance(combo, QComboBox)
    assert combo.currentData() is None
    assert combo.itemText(0) == "bf16 = Element type"
    combo.setCurrentIndex(combo.findData("int8"))
    assert _params(document, op_id)["b_dtype"] == "int8"
    assert "int8" in editor.derivation_text()
    combo.setCurrentIndex(0)
    assert "b_dtype" not in _params(document, op_id)
    dtype = editor.field("dtype")
    dtype.setCurrentIndex(dtype.findData("fp16"))
    assert combo.itemText(0) == "fp16 = Element type"
    # GEMM's compute precision is automatic by default: the wider of A and B
    compute = editor.field("compute")
    assert compute.itemText(0) == "automatic (fp16)"
    assert len(document._undo) == 3  # one step per pick


def test_kv_heads_follows_heads_until_set(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "attention", 1)  # no kv_heads given
    same = editor.findChild(QCheckBox, "same_kv_heads")
    assert same.isChecked()
    assert editor.field("kv_heads").value() == 32
    _type(qtbot, editor.field("heads"), "16")
    assert editor.field("kv_heads").value() == 16
    _type(qtbot, editor.field("kv_heads"), "4")
    assert _params(document, op_id)["kv_heads"] == 4
    assert not same.isChecked()
    same.click()
    assert "kv_heads" not in _params(document, op_id)
    assert editor.field("kv_heads").value() == 16


def test_memory_level_combo_lists_levels_and_interconnects(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "attention", 0)
    combo = editor.field("memory_level")
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts[0] == "hbm — default"
    assert combo.itemData(0, Qt.ItemDataRole.ToolTipRole) == "Each machine's main memory"
    assert combo.findData("hbm") > 0
    assert combo.findData("nvlink") > 0
    combo.setCurrentIndex(combo.findData("nvlink"))
    assert document.operation(op_id).operation.memory_level == "nvlink"
    text = editor.derivation_text()
    assert "nvlink" in text and "(interconnect)" in text
    document.undo()
    assert combo.currentIndex() == 0


def test_name_edit_renames_and_refuses_empty(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    name = editor.field("name")
    assert isinstance(name, QLineEdit)
    _type(qtbot, name, "Up projection")
    assert document.operation(op_id).operation.name == "Up projection"
    name.selectAll()
    qtbot.keyClick(name, Qt.Key.Key_Backspace)
    assert "must not be empty" in editor.hint_text()
    assert document.operation(op_id).operation.name == "Up projection"
    qtbot.keyClick(name, Qt.Key.Key_Return)
    assert name.text() == "Up projection"
    document.undo()
    assert name.text() == "FFN up, prefill (M=8192)"


# -- elementwise chains -----------------------------------------------------------------------


def _bytes_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith("bytes  B"))


def test_chain_steps_add_remove_move_and_fuse(qtbot):
    document, workspace, editor, op_id = _example(qtbot, "fusion", 0)  # unfused, 3 steps
    n = 16777216
    assert workspace.results.counts(op_id).bytes == 7 * 4 * n  # 28 bytes per element
    unfused = _bytes_line(editor.derivation_text())
    assert "Bytes (7 terms)" in editor.derivation_text()

    editor.findChild(QToolButton, "step_add").click()
    steps = _params(document, op_id)["steps"]
    assert [s["op"] for s in steps] == ["fma", "gelu", "add", "relu"]
    assert "Bytes (9 terms)" in editor.derivation_text()
    assert _bytes_line(editor.derivation_text()) != unfused

    editor.findChild(QToolButton, "step_remove_3").click()
    assert len(_params(document, op_id)["steps"]) == 3
    assert _bytes_line(editor.derivation_text()) == unfused

    editor.findChild(QToolButton, "step_up_1").click()
    assert [s["op"] for s in _params(document, op_id)["steps"]] == ["gelu", "fma", "add"]

    fused = editor.field("fused")
    fused.click()
    assert workspace.results.counts(op_id).bytes == 3 * 4 * n  # x and r read, w written
    assert "Bytes (3 terms)" in editor.derivation_text()
    assert _bytes_line(editor.derivation_text()) != unfused

    for _ in range(4):  # fuse, move, remove, add: four separate steps
        document.undo()
    assert [s["op"] for s in _params(document, op_id)["steps"]] == ["fma", "gelu", "add"]
    assert "Bytes (7 terms)" in editor.derivation_text()
    assert not document.can_undo()


def test_a_chain_stops_taking_steps_at_the_most_a_session_file_holds(qtbot):
    """A chain holds at most 128 steps: at 128 its Add step button is off and says why,
    and the chain saves and opens again."""
    from workbench.io.sessions import dumps_session, loads_session

    chain = new_operation("elementwise", "long chain")
    chain.params["steps"] = [{"op": "add", "inputs": [f"r{i}"]} for i in range(127)]
    document = Document()
    op_id = document.add_operation(chain)
    workspace, editor = _editor(qtbot, document)
    workspace.selection.select(op_id)
    add = editor.findChild(QToolButton, "step_add")
    assert add.isEnabled()
    add.click()
    assert len(_params(document, op_id)["steps"]) == 128
    assert not add.isEnabled() and add.toolTip() == "A chain has at most 128 steps"
    add.click()
    assert len(_params(document, op_id)["steps"]) == 128
    reopened = loads_session(dumps_session(document.session))
    assert len(reopened.operations[0].operation.params["steps"]) == 128


def _long_chain(qtbot, count: int):
    chain = new_operation("elementwise", "long chain")
    chain.params["steps"] = [{"op": "add", "inputs": [f"r{i}"]} for i in range(count)]
    document = Document()
    op_id = document.add_operation(chain)
    workspace, editor = _editor(qtbot, document)
    return document, workspace, editor, op_id


def test_a_long_chain_is_laid_out_once_not_once_per_step(qtbot):
    """Showing a chain of 100 steps places each step's fields a few times, however many
    steps there are: the form is not laid out again as each row appears (seconds at 128)."""
    _document, workspace, editor, op_id = _long_chain(qtbot, 100)
    moves: dict[str, int] = {}

    class Moves(QObject):
        def eventFilter(self, watched, event):
            name = watched.objectName()
            if event.type() == QEvent.Type.Move and name.startswith("step_"):
                moves[name] = moves.get(name, 0) + 1
            return False

    counter = Moves()
    QApplication.instance().installEventFilter(counter)
    try:
        workspace.selection.select(op_id)
        qtbot.waitUntil(lambda: editor.findChild(QLineEdit, "step_inputs_99").isVisible())
        qtbot.wait(50)
    finally:
        QApplication.instance().removeEventFilter(counter)
    assert editor.findChild(QLineEdit, "step_inputs_99").text() == "r99"
    assert len(moves) >= 600  # combo box, two fields and three buttons per step
    assert max(moves.values()) <= 4


def test_a_step_added_or_removed_keeps_the_other_rows(qtbot):
    """Adding, removing or undoing a step adds or removes one row at the end; the other
    rows stay the same fields (what is typed and focused there too) and show their step."""
    document, workspace, editor, op_id = _long_chain(qtbot, 100)
    workspace.selection.select(op_id)

    def fields(count: int) -> list[QLineEdit]:
        return [editor.findChild(QLineEdit, f"step_inputs_{i}") for i in range(count)]

    before = fields(100)
    editor.findChild(QToolButton, "step_add").click()
    after = fields(101)
    assert all(a is b for a, b in zip(after[:100], before, strict=True))
    assert after[100] is not None and all(after[100] is not b for b in before)
    qtbot.waitUntil(after[100].isVisible)
    assert editor.findChild(QComboBox, "step_op_100").currentData() == "relu"
    assert editor.findChild(QToolButton, "step_down_99").isEnabled()
    assert not editor.findChild(QToolButton, "step_down_100").isEnabled()

    editor.findChild(QToolButton, "step_remove_50").click()
    assert _params(document, op_id)["steps"][50]["inputs"] == ["r51"]
    assert all(a is b for a, b in zip(fields(100), before, strict=True))
    assert before[50].text() == "r51"
    assert editor.findChild(QLineEdit, "step_inputs_100") is None
    assert not editor.findChild(QToolButton, "step_down_99").isEnabled()

    document.undo()
    assert before[50].text() == "r50"
    assert all(a is b for a, b in zip(fields(100), before, strict=True))
    assert editor.findChild(QLineEdit, "step_inputs_100").text() == ""
    assert editor.findChild(QToolButton, "step_down_99").isEnabled()


def test_chain_step_fields(qtbot):
    document, _workspace, editor, op_id = _example(qtbot, "fusion", 1)  # fused
    inputs = editor.findChild(QLineEdit, "step_inputs_1")
    _type(qtbot, inputs, "b, c")
    assert _params(document, op_id)["steps"][1]["inputs"] == ["b", "c"]
    assert "b (input of gelu)" in editor.derivation_text()

    _type(qtbot, inputs, "1x")
    assert "step 2, extra inputs" in editor.hint_text()
    assert inputs.property("invalid") is True
    assert _params(document, op_id)["steps"][1]["inputs"] == ["b", "c"]
    qtbot.keyClick(inputs, Qt.Key.Key_Return)
    assert editor.findChild(QLineEdit, "step_inputs_1").text() == "b, c"

    flops = editor.findChild(QLineEdit, "step_flops_1")
    assert flops.placeholderText() == "9"
    _type(qtbot, flops, "14")
    assert _params(document, op_id)["steps"][1]["flops"] == 14
    assert "14·n" in editor.derivation_text()
    _type(qtbot, flops, "x")
    assert "step 2, FLOP/elem" in editor.hint_text()

    op = editor.findChild(QComboBox, "step_op_0")
    op.setCurrentIndex(op.findData("custom"))
    assert _params(document, op_id)["steps"][0] == {"op": "custom", "flops": 1.0}


# -- selection, session, derivation extras ----------------------------------------------------


def test_empty_state_and_selection_changes(qtbot):
    document = Document(load_session(EXAMPLES / "llama_ffn.yaml"))
    workspace, editor = _editor(qtbot, document)
    assert editor.field("m") is None
    empty = editor.findChild(QWidget, "editor_empty")
    assert empty.isVisible()
    assert "No operation selected" in [label.text() for label in empty.findChildren(QLabel)]
    first, second = (e.id for e in document.session.operations[:2])
    workspace.selection.select(first)
    assert editor.field("m").value() == 8192
    workspace.selection.select(second)
    assert editor.field("m").value() == 4096
    document.remove_operations([second])
    assert editor.field("m") is None
    document.undo()  # the deleted operation comes back, still selected
    assert editor.field("m").value() == 4096
    document.replace_session(load_session(EXAMPLES / "fusion.yaml"))
    assert editor.field("m") is None  # the old id is gone


def test_a_batch_of_edits_updates_without_rebuilding(qtbot):
    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    form = editor._scroll.widget()
    with document.batch():
        document.set_param(op_id, "m", 512)
        document.set_param(op_id, "k", 1024)
    assert editor._scroll.widget() is form
    assert editor.field("m").value() == 512
    assert "2·1·512·28672·1024" in editor.derivation_text()


def test_machine_changes_refresh_the_derivation(qtbot):
    document, _ws, editor, _op_id = _example(qtbot, "fusion", 0)
    assert "TPU v5e" not in editor.derivation_text()
    hw_id = document.add_machine(get_preset("tpu-v5e"), "tpu-v5e")
    assert "TPU v5e" in editor.derivation_text()
    assert "has no fp32 peak" in editor.derivation_text()  # skipped, with the reason
    h100 = document.session.hardware[0]
    hw = h100.hardware.copy()
    hw.memory = {"hbm": 1e12}
    document.set_machine(h100.id, hw)
    assert "hbm 1 TB/s" in editor.derivation_text()
    document.remove_machine(hw_id)
    assert "TPU v5e" not in editor.derivation_text()


def test_roofline_lines_and_skipped_machines(qtbot):
    document, _ws, editor, _op_id = _example(qtbot, "llama_ffn", 0)
    text = editor.derivation_text()
    for needle in ("ceiling", "bf16 peak 989 TFLOP/s", "hbm 3.35 TB/s", "ridge",
                   "peak / bandwidth", "min(peak, I × bandwidth)", "F / peak", "B / bandwidth",
                   "compute (T_math ≥ T_mem)", "T_fixed + T_work"):
        assert needle in text, needle
    # the example names no prediction: calibrated; derated, the machine's 78 % efficiency
    document.set_prediction(model="derated")
    assert "at 78 % efficiency" in editor.derivation_text()
    document.set_prediction(model="calibrated")
    combo = editor.field("compute")
    combo.setCurrentIndex(combo.findData("fp8"))
    assert "(no fp8 peak" in editor.derivation_text()  # the A100 runs fp8 at bf16
    combo.setCurrentIndex(combo.findData("fp64"))
    assert "skipped" in editor.derivation_text()  # TPU v5e has no fp64 peak


def test_conventions_section_expands(qtbot):
    _doc, _ws, editor, _op = _example(qtbot, "llama_ffn", 0)
    assert CONVENTIONS[0] not in editor.derivation_text()
    editor._on_anchor(QUrl("toggle:conventions"))
    text = editor.derivation_text()
    for line in CONVENTIONS:
        assert line in text
    assert CONVENTIONS[0] in editor.derivation.toPlainText()
    editor._on_anchor(QUrl("toggle:conventions"))
    assert CONVENTIONS[0] not in editor.derivation_text()


def test_copy_puts_plain_text_on_the_clipboard(qtbot):
    _doc, _ws, editor, _op = _example(qtbot, "llama_ffn", 0)
    editor.copy_derivation()
    text = QApplication.clipboard().text()
    assert text.startswith("FFN up, prefill (M=8192) — GEMM / GEMV")
    assert "multiply-adds of A·B" in text
    assert "\u00a0" not in text


# -- the reusable inputs ----------------------------------------------------------------------


def test_big_spin_box_api(qtbot):
    spin = BigSpinBox(minimum=1)
    qtbot.addWidget(spin)
    seen = []
    spin.valueChanged.connect(seen.append)
    spin.setValue(2**40)
    assert spin.value() == 2**40 and spin.text() == str(2**40)
    spin.stepBy(3)
    assert seen == [2**40, 2**40 + 3]
    spin.setValue(0)  # clamped to the minimum
    assert spin.value() == 1
    spin.stepBy(-5)
    assert spin.value() == 1
    spin.setValue(2**60)
    assert spin.value() == 2**53
    assert spin.sizeHint().width() > spin.minimumSizeHint().width()


def test_unfocused_spin_box_ignores_the_wheel(qtbot):
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtGui import QWheelEvent

    _doc, _ws, editor, _op = _example(qtbot, "llama_ffn", 0)
    spin = editor.field("m")
    event = QWheelEvent(QPointF(5, 5), QPointF(spin.mapToGlobal(QPoint(5, 5))), QPoint(0, 0),
                        QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(spin, event)
    assert spin.value() == 8192


def test_quantity_edit_api(qtbot):
    edit = QuantityEdit("flop_rate", positive=True)
    qtbot.addWidget(edit)
    values, errors = [], []
    edit.valueEdited.connect(values.append)
    edit.errorChanged.connect(errors.append)
    edit.setValue(989.4e12)
    assert edit.text() == "989.4 TFLOP/s"
    assert edit.parse(edit.text()) == 989.4e12  # shown with every digit needed
    qtbot.keyClicks(edit, "x")
    assert errors and "FLOP/s" in errors[-1]
    assert edit.property("invalid") is True
    edit.selectAll()
    qtbot.keyClicks(edit, "1e12")
    assert values[-1] == 1e12 and errors[-1] == ""
    assert not edit.property("invalid")
    edit.selectAll()
    qtbot.keyClicks(edit, "0")
    assert "positive" in edit.error()


def test_derivation_follows_a_palette_change(qtbot):
    """Formats are kept while the palette is the same and rebuilt when it changes."""
    from PySide6.QtGui import QColor, QPalette

    document, _ws, editor, op_id = _example(qtbot, "llama_ffn", 0)
    view = editor.derivation
    document.set_param(op_id, "m", 123)
    assert view._formats["plain"].foreground().color() == view.palette().color(
        QPalette.ColorRole.Text)
    palette = QPalette(view.palette())
    palette.setColor(QPalette.ColorRole.Text, QColor("#123456"))
    full = view.full_renders
    view.setPalette(palette)
    assert view.full_renders == full + 1
    assert view._formats["plain"].foreground().color() == QColor("#123456")
    document.set_param(op_id, "m", 124)
    QApplication.processEvents()  # the text follows the edit's repaint
    assert view.full_renders == full + 1  # the same palette: an update, not a rebuild
    assert "2·batch·M·N·K = 2·1·124·" in view.toPlainText()


def test_derivation_opens_at_its_start_with_nothing_selected(qtbot):
    """A freshly shown derivation reads from its title: not scrolled to the end, no text
    selected (the text is built with a cursor of its own)."""
    document, workspace, editor, _op_id = _example(qtbot, "llama_ffn", 0)
    qtbot.waitExposed(editor)
    QApplication.processEvents()
    view = editor.derivation
    assert view.verticalScrollBar().maximum() > 0  # long enough to scroll
    assert view.verticalScrollBar().value() == 0
    assert view.textCursor().selectedText() == ""
    workspace.selection.select(document.session.operations[1].id)  # another operation
    QApplication.processEvents()
    assert view.textCursor().selectedText() == ""
    assert view.verticalScrollBar().value() == 0


def test_a_hidden_derivation_is_laid_out_once_when_shown_at_that_width(qtbot):
    """A window is filled before it is shown: the derivation is laid out for the width it
    is shown at, once; read while hidden, it is still complete."""
    document = Document(load_session(EXAMPLES / "llama_ffn.yaml"))
    workspace = Workspace(document)
    editor = OperationEditor(workspace)
    qtbot.addWidget(editor)
    view = editor.derivation
    workspace.selection.select(document.session.operations[0].id)
    QApplication.processEvents()
    assert view.full_renders == 0
    editor.resize(520, 900)
    editor.show()
    qtbot.waitExposed(editor)
    QApplication.processEvents()
    assert view.full_renders == 1
    assert view._width == pytest.approx(view._line_width())
    assert "multiply-adds" in view.toPlainText()

    hidden = OperationEditor(workspace)
    qtbot.addWidget(hidden)
    QApplication.processEvents()
    assert hidden.derivation.full_renders == 0
    assert hidden.derivation.toPlainText().startswith(
        document.session.operations[0].operation.name)
