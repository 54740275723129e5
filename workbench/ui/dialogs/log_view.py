"""Help ▸ Show Log: the app's log file, read-only, with its place on disk to send it from."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout

from workbench.ui.log import read_log
from workbench.ui.widgets import escape_html

__all__ = ["LogDialog"]


class LogDialog(QDialog):
    """The newest part of the log at ``path``, scrolled to its end."""

    def __init__(self, path: Path, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("log_dialog")
        self.setWindowTitle("Log")
        self.resize(820, 480)
        layout = QVBoxLayout(self)
        self.place = QLabel(f"Kept in <code>{escape_html(path)}</code> (send this file with a report).")
        self.place.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.place)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlainText(read_log(path) or "Nothing has been logged yet.")
        self.text.moveCursor(QTextCursor.MoveOperation.End)
        layout.addWidget(self.text)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
