"""Operations that belong to a whole model are read-only outside the model's editor.

A model (Edit ▸ Add Model…) keeps its parameters (batch, lengths, dtypes, tensor-parallel
degree) and expands into operations; the next edit of the model gives them new shapes, and a
saved session keeps the model, not its operations. An edit of one of those operations
would be overwritten or lost, so the operation editor shows them disabled under the banner
built here, with a button that opens the model in the Model tab; the operations panel
does not rename, recolour or hide one of them on its own, and refuses to delete one
(:func:`refusal`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QVBoxLayout, QWidget

if TYPE_CHECKING:  # (imported with the first whole model)
    from workbench.model.llm.session import ModelEntry

__all__ = ["read_only_text", "model_banner", "refusal"]


def read_only_text(model: ModelEntry) -> str:
    """The line at the top of the editor for an operation of ``model``."""
    return (f"Part of model “{model.label}”: its shape follows the model's batch, lengths "
            "and dtypes — edit them in the Model tab.")


def refusal(models: list[ModelEntry], count: int) -> str:
    """Why deleting ``count`` operations of ``models`` on their own is refused."""
    names = ", ".join(f"“{m.label}”" for m in models)
    what = "This operation is" if count == 1 else f"These {count} operations are"
    return (f"{what} part of model {names} and kept: a model's operations follow its set-up. "
            "Select the model's header row to hide or delete the whole model.")


def model_banner(model: ModelEntry, open_model: Callable[[], None],
                 parent: QWidget | None = None) -> QFrame:
    """A framed note (``read_only_text``) with an “Edit Model…” button calling
    ``open_model``."""
    frame = QFrame(parent)
    frame.setObjectName("model_banner")
    frame.setFrameShape(QFrame.Shape.StyledPanel)
    frame.setStyleSheet("QFrame#model_banner { background: palette(alternate-base); "
                        "border: 1px solid palette(mid); border-radius: 4px; }")
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(8, 6, 8, 6)
    layout.setSpacing(4)
    label = QLabel(read_only_text(model), frame)
    label.setObjectName("model_banner_text")
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    layout.addWidget(label)
    button = QPushButton("Edit Model…", frame)
    button.setObjectName("edit_model")
    button.setToolTip(f"Show “{model.label}” in the Model tab: its batch, lengths, dtypes "
                      "and tensor-parallel degree")
    button.clicked.connect(lambda _checked=False: open_model())
    layout.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
    return frame
