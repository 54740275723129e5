"""Say what an opened file left to made-up values: a non-modal message and the status bar.

A ``schema_version: 1`` file may leave out a required dimension (GEMM ``k``, attention
``kv_len``…) and gets the kind's example value. The session opens as it always did, but
never silently: each value taken is listed (file, line, key, value), in a message that does
not block the window, and the status bar says how many there are.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QMessageBox

__all__ = ["show_assumed", "MAX_LISTED"]

#: Lines listed in the message; the rest are counted.
MAX_LISTED = 12


def show_assumed(window: QMainWindow, path: str | Path, lines: list[str]) -> QMessageBox | None:
    """Tell the user which values ``path`` did not give (``lines`` from
    :func:`workbench.io.sessions.load_session`); ``None`` when there are none. The message
    is kept as ``window.assumed_message`` (a later one replaces it)."""
    previous = getattr(window, "assumed_message", None)
    if previous is not None:
        previous.close()
        previous.deleteLater()
    window.assumed_message = None
    if not lines:
        return None
    name = Path(path).name
    count = len(lines)
    values = "value" if count == 1 else "values"
    window.statusBar().showMessage(
        f"{name}: {count} required {values} not given, example {values} assumed", 15000)
    # the intro says once what each line's closing words say
    listed = [line.partition(" (the example value")[0] for line in lines[:MAX_LISTED]]
    if count > MAX_LISTED:
        listed.append(f"… and {count - MAX_LISTED} more")
    intro = (f"{name} is a schema_version 1 file that does not give "
             + ("a required value: it takes an example value" if count == 1 else
                f"{count} required values: they take example values")
             + ", marked “(assumed)” in the editor. Write them in the file, or save the "
             "session to write them.")
    box = QMessageBox(QMessageBox.Icon.Warning, "Values assumed", "",
                      QMessageBox.StandardButton.Ok, window)
    box.setObjectName("assumed_values")
    box.setTextFormat(Qt.TextFormat.PlainText)  # file names and keys are shown as written
    box.setText(intro + "\n\n" + "\n".join(listed))
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.show()
    window.assumed_message = box
    return box
