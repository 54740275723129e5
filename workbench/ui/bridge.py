"""Qt side of the document: its change notifications as a signal, and the selection."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from workbench.document import Document, ResultCache

__all__ = ["Workspace", "DocumentSignals", "Selection"]


class DocumentSignals(QObject):
    """Re-emits every :class:`Change` of a document as ``changed(Change)``."""

    changed = Signal(object)

    def __init__(self, document: Document, parent: QObject | None = None) -> None:
        super().__init__(parent)
        document.subscribe(self.changed.emit)


class Selection(QObject):
    """The selected operation (its id, or ``None``), shared by every view."""

    changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._current: int | None = None

    @property
    def current(self) -> int | None:
        return self._current

    def select(self, op_id: int | None) -> None:
        if op_id != self._current:
            self._current = op_id
            self.changed.emit(op_id)


class Workspace(QObject):
    """What every panel is given: the document, its results, its signals, the selection.

    The result cache subscribes to the document before the signals do, so by the time a view
    hears of a change the results it reads are already invalidated.
    """

    #: A view asks for a whole model (its id) to be shown in the Model tab.
    model_requested = Signal(int)

    def __init__(self, document: Document | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document or Document()
        self.results = ResultCache(self.document)
        self.signals = DocumentSignals(self.document, self)
        self.selection = Selection(self)
        #: the selected operation's name and model (a model's part): ``(name, model id)``
        self._selected_part: tuple[str, int | None] | None = None
        self.selection.changed.connect(self._remember_part)

    def _remember_part(self, op_id) -> None:
        self._selected_part = None
        if op_id is None:
            return
        try:
            name = self.document.operation(op_id).operation.name
        except KeyError:
            return
        model = next((m.id for m in self.document.session.models if op_id in m.op_ids), None)
        self._selected_part = (name, model)

    def select_valid(self) -> None:
        """Keep the selection on an operation that exists (after deletes, undo, open). A
        model's part made anew (its tensor parallelism changed its operations) stays
        selected: the part of the same name in the same model."""
        ids = [e.id for e in self.document.session.operations]
        if self.selection.current in ids:
            return
        successor = self.successor()
        self.selection.select(successor if successor is not None else ids[0] if ids else None)

    def successor(self) -> int | None:
        """Where the selection goes when its operation is gone: the part of the same name
        in the same model, when that model made its operations anew (else None)."""
        part = self._selected_part
        if part is None or part[1] is None:
            return None
        name, model_id = part
        model = next((m for m in self.document.session.models if m.id == model_id), None)
        for op_id in model.op_ids if model is not None else ():
            try:
                if self.document.operation(op_id).operation.name == name:
                    return op_id
            except KeyError:
                continue
        return None


