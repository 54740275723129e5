"""Small shared pieces of the user interface."""

from __future__ import annotations

import html

from hypothesis import given
from hypothesis import strategies as st

from workbench.ui.widgets import escape_html


@given(st.text())
def test_escape_html_escapes_as_the_standard_library_does(text):
    assert escape_html(text) == html.escape(text)


def test_escaped_text_shows_as_written_in_a_rich_text_label(qtbot):
    from PySide6.QtGui import QTextDocument

    text = """5 < 7 & "quoted" 'single' <b>not bold</b>"""
    document = QTextDocument()
    document.setHtml(f"<p title='{escape_html(text)}'>{escape_html(text)}</p>")
    assert document.toPlainText() == text
