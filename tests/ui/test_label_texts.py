"""A chart text said again after another (a whole model's crowd of tags, said whole and then
in parts at each edit) reads and measures as a text said once, in its font as it is now."""

from __future__ import annotations

from PySide6.QtGui import QFont

from workbench.ui.chart.items import Label

WHOLE = "\n".join(f"A{i}, B{i}: {i}, {i + 3}, {i + 6}" for i in range(60))
PART = "\n".join(f"A{i}: {i}" for i in range(12))


def _fresh(text: str, font: QFont | None = None) -> Label:
    label = Label()
    if font is not None:
        label.setFont(font)
    label.setText(text)
    return label


def _said(label: Label) -> tuple:
    """What a label says and how: its text, its formatted document, its size and box."""
    item = label.textItem
    return (label.toPlainText(), item.document().toHtml(), label.size(),
            label.boundingRect().getRect())


def test_a_text_said_again_reads_as_said_once(qtbot):
    label = Label()
    for text in (WHOLE, PART, WHOLE, PART, "x", PART, WHOLE):
        label.setText(text)
        assert _said(label) == _said(_fresh(text))


def test_a_new_font_is_kept_by_a_text_said_again(qtbot):
    label = Label()
    label.setText(WHOLE)
    label.setText(PART)
    font = QFont(label.textItem.font())
    font.setPointSizeF(font.pointSizeF() * 2)
    label.setFont(font)
    label.setText(WHOLE)  # (said before, in the smaller font)
    assert _said(label) == _said(_fresh(WHOLE, font))
    label.setText(PART)
    assert _said(label) == _said(_fresh(PART, font))


def test_texts_after_markup_read_as_in_a_plain_text_item(qtbot):
    """Markup and plain texts in turn (a sweep's coloured values) read and measure as
    pyqtgraph's own text item says them."""
    import pyqtgraph as pg

    label, plain = Label(), pg.TextItem()
    html = '<span style="color:#ff0000">A1: 1</span>'
    for step in (PART, html, "A1: 1", PART, "A1: 1", WHOLE, html, PART):
        for item in (label, plain):
            if step.startswith("<"):
                item.setHtml(step)
            else:
                item.setText(step)
        assert label.toPlainText() == plain.toPlainText()
        assert label.textItem.document().toHtml() == plain.textItem.document().toHtml()
        assert label.size() == (plain.textItem.boundingRect().width(),
                                plain.textItem.boundingRect().height())
