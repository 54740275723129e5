"""A Help page (Reading the Chart, Counting Conventions, About): rich text in a page that
scrolls, never taller than the screen it opens on."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

__all__ = ["InfoDialog"]

#: the page's width in average characters, and the share of the screen's height it may take
WIDTH_CHARS = 72
MOST_SCREEN_SHARE = 0.8


class InfoDialog(QDialog):
    """``title`` over the rich text ``html``, with OK. As tall as its text, at most
    :data:`MOST_SCREEN_SHARE` of the available screen height: a longer text scrolls."""

    def __init__(self, title: str, html: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("info_dialog")
        self.setWindowTitle(title)
        self._html = html
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("info_text")
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(html)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok, self)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self._fit()

    def text(self) -> str:
        """The rich text shown."""
        return self._html

    def _fit(self) -> None:
        """Wide enough for :data:`WIDTH_CHARS` characters; as tall as the text there, within
        the screen."""
        browser = self.browser
        width = browser.fontMetrics().averageCharWidth() * WIDTH_CHARS
        # (measured on a copy: the text box lays its own document out at its width so far,
        # a few dozen pixels before it is shown)
        document = browser.document().clone()
        document.setTextWidth(width)
        frame = 2 * browser.frameWidth() + 2 * int(document.documentMargin())
        chrome = self.layout().sizeHint().height() - browser.sizeHint().height()
        screen = (self.parentWidget() or self).screen().availableGeometry()
        most = int(screen.height() * MOST_SCREEN_SHARE)
        height = min(int(document.size().height()) + frame + chrome, most)
        scroll = browser.verticalScrollBar().sizeHint().width()
        self.resize(width + frame + scroll + 2 * self.layout().contentsMargins().left(),
                    height)
        self.setMaximumHeight(screen.height())
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
