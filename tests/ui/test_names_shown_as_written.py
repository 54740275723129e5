"""A name the user wrote is shown as written wherever the app shows it, whatever it holds:
an operation named "QK<sup>T</sup> & R&D" was drawn as markup (a raised T) in the compare
panel's title and the Compare With dialog, its "&" taken for an underlined access key in the
dialog's check box; a model named with "<b>" turned the model editor's title bold."""

from __future__ import annotations

from conftest import EXAMPLES
from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QCheckBox, QLabel

from workbench.ui.mnemonics import shown_text

LLAMA_FFN = next(p for p in EXAMPLES if p.name == "llama_ffn.yaml")
LLAMA_8B = next(p for p in EXAMPLES if p.name == "llama31_8b_inference.yaml")

NAME = "QK<sup>T</sup> & R&D <b>x</b>"


def _shown(label: QLabel) -> str:
    """The text a label shows (as a reader sees it, markup read as markup)."""
    text = label.text()
    rich = (label.textFormat() == Qt.TextFormat.RichText
            or (label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)))
    if not rich:
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def test_an_operations_name_is_shown_as_written_when_compared(open_window, qtbot):
    win = open_window(LLAMA_FFN, size=(1366, 768))
    doc = win.document
    first = doc.session.operations[0]
    doc.set_operation_field(first.id, "name", NAME)
    win.workspace.selection.select(first.id)
    win.compare_action.trigger()
    dialog = win.compare_dialog
    assert dialog.isVisible()
    assert any(_shown(label) == NAME for label in dialog.findChildren(QLabel))
    box = dialog.findChild(QCheckBox, "compare_baseline")
    assert shown_text(box.text()) == f"“{NAME}” is the baseline (first)"
    dialog.reject()
    win.compare_dock.show()
    win.compare_dock.raise_()
    panel = win.compare_panel
    qtbot.waitUntil(lambda: NAME in _shown(panel.machines_title))
    assert _shown(panel.machines_title) == f"Across machines: {NAME}"


def test_a_models_name_is_shown_as_written_in_its_editor(open_window, qtbot):
    win = open_window(LLAMA_8B, size=(1366, 768))
    doc = win.document
    model = doc.session.models[0]
    doc.set_model(model.id, name="8B <b>bold</b> & co")
    win.model_dock.raise_()
    panel = win.model_panel
    panel.show_model(model.id)
    title = panel.editor.title
    qtbot.waitUntil(lambda: "bold" in _shown(title))
    assert _shown(title).startswith(f"{doc.session.models[0].label}\n")
    assert "8B <b>bold</b> & co" in _shown(title)


def test_a_points_tooltip_shows_a_name_with_tags_as_written(open_window, qtbot):
    """Qt reads a tooltip whose first line holds something like a tag as markup: a point of
    an operation named "x<b>y</b>" showed a bold y and its nine lines run into one. The tip
    says the name as written, one line for each of its lines."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QToolTip

    win = open_window(LLAMA_FFN, size=(1366, 768))
    doc = win.document
    op = doc.session.operations[0]
    doc.set_operation_field(op.id, "name", "x<b>y</b> & z")
    canvas = win.canvas
    qtbot.waitUntil(lambda: any(o == op.id for o, *_ in canvas.point_items()))
    _op, _hw, x, y = next(p for p in canvas.point_items() if p[0] == op.id)
    viewport = canvas.plot_widget.viewport()
    qtbot.mouseMove(viewport, QPoint(2, 2))
    qtbot.wait(40)  # (pyqtgraph drops moves closer than a frame apart)
    qtbot.mouseMove(viewport, canvas.pixel_of(x, y))
    qtbot.waitUntil(lambda: canvas.hover_text().startswith("x<b>y</b> & z"))
    qtbot.waitUntil(QToolTip.isVisible)
    document = QTextDocument()
    document.setHtml(QToolTip.text())
    assert document.toPlainText().splitlines() == canvas.hover_text().splitlines()
