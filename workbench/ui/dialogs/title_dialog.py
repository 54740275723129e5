"""Edit ▸ Title and Notes…: the session's title (the chart's and every figure's heading) and
its notes (kept in the file, for whoever opens it next), as one undo step."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from workbench.model.limits import text_problem

__all__ = ["TitleDialog"]


class TitleDialog(QDialog):
    """The title in one line and the notes below it; OK is offered only while both can be
    saved (the session's text limits: a length each, no control characters), the reason
    said under them."""

    def __init__(self, title: str, notes: str, parent: QWidget | None = None,
                 budget: Callable[[str, str], str | None] | None = None) -> None:
        """``budget(title, notes)``: why the session could not be saved with them, or
        ``None``."""
        super().__init__(parent)
        self._budget = budget
        self.setObjectName("title_dialog")
        self.setWindowTitle("Title and Notes")
        self.title_edit = QLineEdit(title, self)
        self.title_edit.setObjectName("title")
        self.title_edit.setToolTip("The chart's heading, on screen and in every figure "
                                   "exported (empty: none)")
        self.notes_edit = QPlainTextEdit(notes, self)
        self.notes_edit.setObjectName("notes")
        self.notes_edit.setTabChangesFocus(True)
        self.notes_edit.moveCursor(QTextCursor.MoveOperation.End)  # (to write more after)
        self.notes_edit.setToolTip("Kept in the session file with the chart, for whoever "
                                   "opens it next")
        self.problem = QLabel("", self)
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel, self)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("&Title:", self.title_edit)
        form.addRow("&Notes:", self.notes_edit)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self.title_edit.textChanged.connect(self._check)
        self.notes_edit.textChanged.connect(self._check)
        self._check()
        # notes written in lines (a file's, wrapped at 90 characters) are shown in those
        # lines, where the screen has the room: wrapped again in a narrower box, every other
        # line was a word or two
        edit = self.notes_edit
        longest = max((edit.fontMetrics().horizontalAdvance(line)
                       for line in notes.splitlines()), default=0)
        screen = self.screen().availableGeometry().width() if self.screen() else 1024
        edit.setMinimumWidth(min(
            longest + 2 * (round(edit.document().documentMargin()) + edit.frameWidth())
            + edit.verticalScrollBar().sizeHint().width() + 4, int(screen * 0.7)))
        self.resize(max(self.fontMetrics().averageCharWidth() * 70,
                        self.sizeHint().width()), self.sizeHint().height())

    def values(self) -> tuple[str, str]:
        """The title and the notes as written (the title without spaces at its ends)."""
        return self.title_edit.text().strip(), self.notes_edit.toPlainText()

    def _check(self) -> None:
        title, notes = self.values()
        problem = text_problem(title, "title")
        where = "The title"
        if problem is None:
            problem, where = text_problem(notes, "notes"), "The notes"
        if problem is None and self._budget is not None:
            problem, where = self._budget(title, notes), "With them,"
        self.problem.setText("" if problem is None else f"{where} {problem}.")
        self.problem.setVisible(problem is not None)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(problem is None)
