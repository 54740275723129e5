"""The operations table's model: every operation of the session, one row each, and a whole
model as one collapsible group (a header row, its operations under it while expanded).

:class:`OperationsModel` reads the document directly and follows its
:class:`~workbench.document.Change` notifications: an edit of one operation repaints that row
only (``dataChanged``), a structural change resets the model, a machine edit refreshes the
intensity and bound columns. The panel around it is :mod:`workbench.ui.panels.operations_panel`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QColor, QPalette

from workbench.document import Change
from workbench.document.changes import What
from workbench.model.analysis import Pair
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.limits import OverBudget, text_problem
from workbench.model.operations import KINDS
from workbench.model.rules import intensity as intensity_of
from workbench.model.session import PALETTE, HardwareEntry, OperationEntry
from workbench.model.units import format_number, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.panels.model_group import (
    bound_tooltip,
    group_rows,
    header_data,
    is_model,
    swatch_icon,
)
from workbench.ui.panels.results_table import BOUND_COLORS

if TYPE_CHECKING:  # (imported with the first whole model)
    from workbench.model.llm.session import ModelEntry

__all__ = ["OperationsModel", "COLUMNS", "OP_ID_ROLE", "COL_COLOR", "COL_VISIBLE", "COL_NAME",
           "COL_KIND", "COL_INTENSITY", "COL_BOUND"]

COL_COLOR, COL_VISIBLE, COL_NAME, COL_KIND, COL_INTENSITY, COL_BOUND = range(6)
#: (header, header tooltip) per column.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("", "Colour on the chart (double-click to choose another)"),
    ("", "Shown on the chart"),
    ("Name", "Name of the operation (double-click or F2 to rename)"),
    ("Kind", "Kind of operation"),
    ("Intensity", "Arithmetic intensity I = FLOPs / bytes, in FLOP/byte"),
    ("Bound", "Memory-, compute- or overhead-bound on each visible machine; \"mixed\" where "
              "the machines differ (the cell's tooltip says which is which)"),
)

#: Operation fields shown outside the intensity and bound columns: an edit of any other field
#: (a parameter, the memory level) can change only those two.
_ROW_FIELDS = frozenset({"name", "color", "visible", "kind"})

#: Role holding an operation's id on every cell.
OP_ID_ROLE = Qt.ItemDataRole.UserRole + 1

_ALIGN_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_ALIGN_CENTER = int(Qt.AlignmentFlag.AlignCenter)

class OperationsModel(QAbstractTableModel):
    """One row per operation of the workspace's document, in session order.

    The model keeps a snapshot of the entries (replaced only between ``beginResetModel`` and
    ``endResetModel``) and an id → row map, so an edit of one operation is one
    ``dataChanged`` on its row. ``refused(reason)``: a name typed in a cell was not taken.
    """

    refused = Signal(str)

    def __init__(self, workspace: Workspace, parent=None) -> None:
        super().__init__(parent)
        self.workspace = workspace
        #: rows: operations, and a header per model (its operations follow it when expanded)
        self._entries: list[OperationEntry | ModelEntry] = []
        self._rows: dict[int, int] = {}
        #: model id -> header row; op id -> model id for operations of a model
        self._model_rows: dict[int, int] = {}
        self._grouped: dict[int, int] = {}
        #: ids of the models shown expanded
        self.expanded: set[int] = set()
        self._machine: HardwareEntry | None = None
        #: The (intensity, bound) texts shown per operation, and per model group (its
        #: header row, see :mod:`workbench.ui.panels.model_group`), formatted once until a change.
        self.texts: dict[int, tuple[str, str | None]] = {}
        self._snapshot()
        workspace.signals.changed.connect(self._on_change)

    # -- bookkeeping -----------------------------------------------------------------------

    def _snapshot(self) -> None:
        session = self.workspace.document.session
        if session.models:
            self._entries, self._grouped = group_rows(session, self.expanded)
            self._model_rows = {item.id: i for i, item in enumerate(self._entries)
                                if is_model(item)}
            self._rows = {e.id: i for i, e in enumerate(self._entries)
                          if not is_model(e)}
        else:
            self._entries = list(session.operations)
            self._grouped, self._model_rows = {}, {}
            self._rows = {e.id: i for i, e in enumerate(self._entries)}
        self._machines = [h for h in session.hardware if h.visible]
        self._machine = self._machines[0] if self._machines else None
        self.texts = {}

    def reset(self) -> None:
        self.beginResetModel()
        self._snapshot()
        self.endResetModel()

    def entry(self, row: int) -> OperationEntry:
        return self._entries[row]

    def is_header(self, row: int) -> bool:
        return 0 <= row < len(self._entries) and is_model(self._entries[row])

    def model_at(self, row: int) -> ModelEntry | None:
        """The model of a row: its header or one of its operations."""
        if not 0 <= row < len(self._entries):
            return None
        item = self._entries[row]
        if is_model(item):
            return item
        mid = self._grouped.get(item.id)
        return self._model(mid) if mid is not None else None

    def _model(self, model_id: int) -> ModelEntry | None:
        return next((m for m in self.workspace.document.session.models if m.id == model_id),
                    None)

    def header_row(self, model_id: int) -> int:
        return self._model_rows.get(model_id, -1)

    def op_id(self, row: int) -> int:
        """The operation of a row; for a model's header, its first operation."""
        item = self._entries[row]
        if is_model(item):
            return item.op_ids[0] if item.op_ids else -1
        return item.id

    def set_expanded(self, model_id: int, expanded: bool) -> None:
        if (model_id in self.expanded) == expanded:
            return
        if expanded:
            self.expanded.add(model_id)
        else:
            self.expanded.discard(model_id)
        self.reset()

    def row_of(self, op_id: int | None) -> int:
        """Row of an operation, or -1."""
        return self._rows.get(op_id, -1) if op_id is not None else -1

    @property
    def machine(self) -> HardwareEntry | None:
        """The machine the intensity and bound columns are evaluated on."""
        return self._machine

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what == What.OPERATION:
            last = self.columnCount() - 1
            fields = set(change.fields)
            numbers_only = bool(fields) and not fields & _ROW_FIELDS
            grouped = self._grouped
            headers = {grouped[i] for i in change.ids[:1] if i in grouped}
            if headers:  # a model's edit: its header row shows the new set-up and intensity
                for model_id in {grouped[i] for i in change.ids if i in grouped}:
                    self.texts.pop(("model", model_id), None)
                    row = self._model_rows.get(model_id)
                    if row is not None:
                        self.dataChanged.emit(self.index(row, 0), self.index(row, last))
            for op_id in change.ids:
                row = self._rows.get(op_id)
                old = self.texts.pop(op_id, None)
                if row is None:
                    continue
                if not numbers_only:
                    self.dataChanged.emit(self.index(row, 0), self.index(row, last))
                    continue
                # a parameter: only the intensity and the bound can change, and only the
                # cells whose text changed are repainted
                first, stop = COL_INTENSITY, COL_BOUND
                if old is not None:
                    new = self._shown(self._entries[row])
                    changed = [c for c, a, b in zip((COL_INTENSITY, COL_BOUND), old, new,
                                                    strict=True) if a != b]
                    if not changed:
                        continue
                    first, stop = changed[0], changed[-1]
                self.dataChanged.emit(self.index(row, first), self.index(row, stop))
        elif what in (What.OPERATIONS, What.SESSION):
            self.reset()
        elif what in (What.HARDWARE, What.MACHINES):
            session = self.workspace.document.session
            self._machines = [h for h in session.hardware if h.visible]
            self._machine = self._machines[0] if self._machines else None
            self.texts.clear()
            if self._entries:
                self.dataChanged.emit(self.index(0, COL_INTENSITY),
                                      self.index(len(self._entries) - 1, COL_BOUND))
                self.headerDataChanged.emit(Qt.Orientation.Horizontal, COL_BOUND, COL_BOUND)

    # -- Qt model interface ----------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = COLUMNS[section][1]
            if section == COL_INTENSITY and self._machine is not None:
                tip += f"\nMachine: {self._machine.hardware.label}"
            elif section == COL_BOUND and self._machines:
                tip += "\nMachines: " + ", ".join(h.hardware.label for h in self._machines)
            return tip
        if role == Qt.ItemDataRole.TextAlignmentRole and section == COL_INTENSITY:
            return _ALIGN_RIGHT
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        member = not self.is_header(index.row()) and self.model_at(index.row()) is not None
        if member:  # a model names, colours and shows its operations (workbench.ui.editors.model_lock)
            return base
        if index.column() == COL_VISIBLE:
            return base | Qt.ItemFlag.ItemIsUserCheckable
        if index.column() == COL_NAME and not self.is_header(index.row()):
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if not 0 <= row < len(self._entries):
            return None
        entry = self._entries[row]
        if is_model(entry):
            return self._header_data(entry, col, role)
        if role == OP_ID_ROLE:
            return entry.id
        if col == COL_COLOR:
            return self._color_cell(row, entry, role)
        if col == COL_VISIBLE:
            return self._visible_cell(entry, role)
        if col == COL_NAME:
            return self._name_cell(entry, role)
        if col == COL_KIND:
            return self._kind_cell(entry, role)
        if col == COL_INTENSITY:
            return self._intensity_cell(entry, role)
        if col == COL_BOUND:
            return self._bound_cell(entry, role)
        return None

    def _color_cell(self, row: int, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
        if role == R.DecorationRole:
            return swatch_icon(self.color_of(row, entry))
        if role == R.ToolTipRole:
            if entry.id in self._grouped:
                return f"{self.color_of(row, entry)} — its model's colour for this layer kind"
            return f"{self.color_of(row, entry)} — double-click to choose a colour"
        return None

    def _visible_cell(self, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
        if role == R.CheckStateRole:
            return Qt.CheckState.Checked if entry.visible else Qt.CheckState.Unchecked
        if role == R.ToolTipRole:
            shown = "Shown on the chart" if entry.visible else "Hidden from the chart"
            if entry.id in self._grouped:
                shown += (" with its model: the model's header row shows or hides all of "
                          "its operations" if entry.visible else
                          " (no FLOPs, or its model is hidden: the header row shows it)")
            return shown
        return None

    def _name_cell(self, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
        if role == R.DisplayRole and entry.id in self._grouped:
            return self._member_name(entry)
        if role in (R.DisplayRole, R.EditRole):
            return entry.operation.name
        if role == R.ToolTipRole:
            return f"{entry.operation.name}\n{KINDS[entry.operation.kind].doc}"
        if role == R.ForegroundRole and not entry.visible:
            return self.dim_color()
        return None

    def _kind_cell(self, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
        if role == R.DisplayRole:
            return KINDS[entry.operation.kind].label
        if role == R.ToolTipRole:
            return KINDS[entry.operation.kind].doc
        if role == R.ForegroundRole and not entry.visible:
            return self.dim_color()
        return None

    def _intensity_cell(self, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
        if role == R.TextAlignmentRole:
            return _ALIGN_RIGHT
        if role == R.DisplayRole:
            return self._shown(entry)[0]
        if role == R.ToolTipRole:
            return self._intensity(entry, True)
        return None

    def _bound_cell(self, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
        if role == R.DisplayRole:
            return self._shown(entry)[1]
        if role == R.ForegroundRole:
            bound = self._shown(entry)[1]
            return QColor(BOUND_COLORS[bound]) if bound in BOUND_COLORS else None
        if role == R.ToolTipRole:
            return self._bound(entry, role)
        return None

    def _member_name(self, entry: OperationEntry) -> str:
        """An operation under its model's header: indented, without the model's name (the
        tooltip has the full name)."""
        model = self._model(self._grouped[entry.id])
        name = entry.operation.name
        if model is not None:
            name = name.removeprefix(f"{model.label}: ")
        return "    " + name

    def _header_data(self, model: ModelEntry, col: int, role: int) -> Any:
        return header_data(self, model, col, role)

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid():
            return False
        entry = self._entries[index.row()]
        document = self.workspace.document
        if is_model(entry):
            if index.column() == COL_VISIBLE and role == Qt.ItemDataRole.CheckStateRole:
                document.set_model(entry.id, visible=Qt.CheckState(value) == Qt.CheckState.Checked)
                document.seal()
                return True
            return False
        if entry.id in self._grouped:
            return False  # its model sets it
        if index.column() == COL_VISIBLE and role == Qt.ItemDataRole.CheckStateRole:
            visible = Qt.CheckState(value) == Qt.CheckState.Checked
            document.set_operation_field(entry.id, "visible", visible)
            document.seal()
            return True
        if index.column() == COL_NAME and role == Qt.ItemDataRole.EditRole:
            name = str(value).strip()
            problem = ("a name must not be empty" if not name else
                       text_problem(name, "operation")
                       or document.operation_name_problem(entry.id, name))
            if problem is not None:  # (a session file could not hold it, or reopen it)
                self.refused.emit(f"Name not changed: {problem}")
                return False
            try:
                document.set_operation_field(entry.id, "name", name)
            except OverBudget as exc:  # (a session file Save would refuse)
                self.refused.emit(f"Name not changed: {exc}")
                return False
            document.seal()
            return True
        return False

    # -- cell contents ---------------------------------------------------------------------

    @staticmethod
    def color_of(row: int, entry: OperationEntry) -> str:
        # Session.color_of, without its linear search: ``row`` is the index in the session.
        return entry.color or entry.auto_color or PALETTE[row % len(PALETTE)]

    @staticmethod
    def dim_color() -> QColor:
        from PySide6.QtWidgets import QApplication

        return QApplication.palette().color(QPalette.ColorGroup.Disabled,
                                            QPalette.ColorRole.Text)

    def _shown(self, entry: OperationEntry) -> tuple[str, str | None]:
        """(intensity, bound) texts of an operation, formatted once until a change."""
        texts = self.texts.get(entry.id)
        if texts is None:
            texts = self.texts[entry.id] = (self._intensity(entry, False),
                                             self._bound(entry, Qt.ItemDataRole.DisplayRole))
        return texts

    def _intensity(self, entry: OperationEntry, tooltip: bool) -> str:
        try:
            counts = self.workspace.results.counts(entry.id)
        except COUNTING_ERRORS as exc:  # invalid parameters: say why, never raise into Qt
            return f"Cannot count this operation: {exc}" if tooltip else "—"
        flops, nbytes = float(counts.flops), float(counts.bytes)
        intensity = intensity_of(flops, nbytes)
        if not tooltip:
            return format_number(intensity)
        return (f"FLOPs / bytes = {format_quantity(flops, 'flops')} / "
                f"{format_quantity(nbytes, 'bytes')} = {format_number(intensity)} FLOP/B")

    def _pair(self, entry: OperationEntry) -> Pair | Exception | None:
        if self._machine is None:
            return None
        try:
            return self.workspace.results.pair(entry.id, self._machine.id)
        except COUNTING_ERRORS as exc:
            return exc

    def _bound(self, entry: OperationEntry, role: int) -> Any:
        """The bound on every visible machine where they agree ("memory"), else "mixed"; the
        tooltip says which and why on each machine."""
        R = Qt.ItemDataRole
        if len(self._machines) > 1:
            found = []
            for hw in self._machines:
                try:
                    pair = self.workspace.results.pair(entry.id, hw.id)
                except COUNTING_ERRORS as exc:  # said in the tooltip
                    found.append((hw, None, str(exc)))
                    continue
                found.append((hw, pair.result, "" if pair.result else pair.skipped.reason))
            results = [r for _, r, _ in found if r is not None]
            if results:
                bounds = list(dict.fromkeys(r.bound for r in results))
                if role == R.DisplayRole:
                    return bounds[0] if len(bounds) == 1 else "mixed"
                if role == R.ForegroundRole:
                    return QColor(BOUND_COLORS[bounds[0]]) if len(bounds) == 1 else None
                return "\n\n".join(
                    bound_tooltip(r, hw.hardware.label) if r is not None
                    else f"skipped on {hw.hardware.label}: {why}" for hw, r, why in found)
        pair = self._pair(entry)
        if pair is None:
            return "Add a machine to see the bound" if role == R.ToolTipRole else None
        if isinstance(pair, Exception) or pair.result is None:
            if role == R.DisplayRole:
                return "—"
            if role == R.ToolTipRole:
                return str(pair) if isinstance(pair, Exception) else pair.skipped.reason
            return None
        if role == R.DisplayRole:
            return pair.result.bound
        if role == R.ForegroundRole:
            return QColor(BOUND_COLORS[pair.result.bound])
        return bound_tooltip(pair.result, self._machine.hardware.label if self._machine else "")
