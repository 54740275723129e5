"""The operations list: every operation of the session in a compact, editable table.

Columns: colour swatch, shown-on-chart checkbox, name (editable), kind, arithmetic intensity
(FLOP/byte) and the bound (memory / compute / overhead) on the first visible machine.
A toolbar adds (one entry per kind), duplicates, deletes and reorders operations; the same
actions are attributes of the panel so the main window can put them in its Edit menu.

A whole model (Edit ▸ Add Model…) is one collapsible group: a header row (bold, with the
model's set-up and its operation count; double-click or Space to expand or collapse) above
the operations it expands into, hidden while the group is collapsed.

The table is a :class:`QTableView` over :class:`OperationsModel`, which reads the document
directly and follows its :class:`~workbench.document.Change` notifications: an edit of one
operation repaints that row only (``dataChanged``), a structural change resets the model and
keeps the selection, a machine edit refreshes the intensity and bound columns.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QColorDialog,
    QHeaderView,
    QMenu,
    QStyle,
    QTableView,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change, new_operation
from workbench.model.analysis import Pair
from workbench.model.llm_session import ModelEntry
from workbench.model.operations import KINDS
from workbench.model.session import PALETTE, HardwareEntry, OperationEntry
from workbench.model.units import format_number, format_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.model_group import duplicate_icon as _duplicate_icon
from workbench.ui.model_group import bound_tooltip, group_rows, header_data, swatch_icon
from workbench.ui.model_group import plus_icon as _plus_icon
from workbench.ui.results_table import BOUND_COLORS

__all__ = ["OperationsPanel", "OperationsModel", "COLUMNS"]

COL_COLOR, COL_VISIBLE, COL_NAME, COL_KIND, COL_INTENSITY, COL_BOUND = range(6)
#: (header, header tooltip) per column.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("", "Colour on the chart (double-click to choose another)"),
    ("", "Shown on the chart"),
    ("Name", "Name of the operation (double-click or F2 to rename)"),
    ("Kind", "Kind of operation"),
    ("Intensity", "Arithmetic intensity I = FLOPs / bytes, in FLOP/byte"),
    ("Bound", "Memory-, compute- or overhead-bound on the first visible machine"),
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
    ``dataChanged`` on its row.
    """

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
        #: op id -> (intensity, bound) texts as shown, until a change touches them
        self._texts: dict[int, tuple[str, str | None]] = {}
        self._snapshot()
        workspace.signals.changed.connect(self._on_change)

    # -- bookkeeping -----------------------------------------------------------------------

    def _snapshot(self) -> None:
        session = self.workspace.document.session
        if session.models:
            self._entries, self._grouped = group_rows(session, self.expanded)
            self._model_rows = {item.id: i for i, item in enumerate(self._entries)
                                if isinstance(item, ModelEntry)}
            self._rows = {e.id: i for i, e in enumerate(self._entries)
                          if not isinstance(e, ModelEntry)}
        else:
            self._entries = list(session.operations)
            self._grouped, self._model_rows = {}, {}
            self._rows = {e.id: i for i, e in enumerate(self._entries)}
        self._machine = next((h for h in session.hardware if h.visible), None)
        self._texts = {}

    def reset(self) -> None:
        self.beginResetModel()
        self._snapshot()
        self.endResetModel()

    def entry(self, row: int) -> OperationEntry:
        return self._entries[row]

    def is_header(self, row: int) -> bool:
        return 0 <= row < len(self._entries) and isinstance(self._entries[row], ModelEntry)

    def model_at(self, row: int) -> ModelEntry | None:
        """The model of a row: its header or one of its operations."""
        if not 0 <= row < len(self._entries):
            return None
        item = self._entries[row]
        if isinstance(item, ModelEntry):
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
        if isinstance(item, ModelEntry):
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
        if what == "operation":
            last = self.columnCount() - 1
            fields = set(change.fields)
            numbers_only = bool(fields) and not fields & _ROW_FIELDS
            grouped = self._grouped
            headers = {grouped[i] for i in change.ids[:1] if i in grouped}
            if headers:  # a model's edit: its header row shows the new set-up and intensity
                for model_id in {grouped[i] for i in change.ids if i in grouped}:
                    self._texts.pop(("model", model_id), None)
                    row = self._model_rows.get(model_id)
                    if row is not None:
                        self.dataChanged.emit(self.index(row, 0), self.index(row, last))
            for op_id in change.ids:
                row = self._rows.get(op_id)
                old = self._texts.pop(op_id, None)
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
        elif what in ("operations", "session"):
            self.reset()
        elif what in ("hardware", "machines"):
            session = self.workspace.document.session
            self._machine = next((h for h in session.hardware if h.visible), None)
            self._texts.clear()
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
            if section in (COL_BOUND, COL_INTENSITY) and self._machine is not None:
                tip += f"\nMachine: {self._machine.hardware.label}"
            return tip
        if role == Qt.ItemDataRole.TextAlignmentRole and section == COL_INTENSITY:
            return _ALIGN_RIGHT
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
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
        R = Qt.ItemDataRole
        if isinstance(entry, ModelEntry):
            return self._header_data(entry, col, role)
        if role == OP_ID_ROLE:
            return entry.id
        if col == COL_COLOR:
            if role == R.DecorationRole:
                return swatch_icon(self._color(row, entry))
            if role == R.ToolTipRole:
                return f"{self._color(row, entry)} — double-click to choose a colour"
            return None
        if col == COL_VISIBLE:
            if role == R.CheckStateRole:
                return Qt.CheckState.Checked if entry.visible else Qt.CheckState.Unchecked
            if role == R.ToolTipRole:
                return "Shown on the chart" if entry.visible else "Hidden from the chart"
            return None
        if col == COL_NAME:
            if role in (R.DisplayRole, R.EditRole):
                return entry.operation.name
            if role == R.ToolTipRole:
                return f"{entry.operation.name}\n{KINDS[entry.operation.kind].doc}"
            if role == R.ForegroundRole and not entry.visible:
                return self._dim()
            return None
        if col == COL_KIND:
            if role == R.DisplayRole:
                return KINDS[entry.operation.kind].label
            if role == R.ToolTipRole:
                return KINDS[entry.operation.kind].doc
            if role == R.ForegroundRole and not entry.visible:
                return self._dim()
            return None
        if col == COL_INTENSITY:
            if role == R.TextAlignmentRole:
                return _ALIGN_RIGHT
            if role == R.DisplayRole:
                return self._shown(entry)[0]
            if role == R.ToolTipRole:
                return self._intensity(entry, True)
            return None
        if col == COL_BOUND:
            if role == R.DisplayRole:
                return self._shown(entry)[1]
            if role == R.ForegroundRole:
                bound = self._shown(entry)[1]
                return QColor(BOUND_COLORS[bound]) if bound in BOUND_COLORS else None
            if role == R.ToolTipRole:
                return self._bound(entry, role)
        return None

    def _header_data(self, model: ModelEntry, col: int, role: int) -> Any:
        return header_data(self, model, col, role)

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid():
            return False
        entry = self._entries[index.row()]
        document = self.workspace.document
        if isinstance(entry, ModelEntry):
            if index.column() == COL_VISIBLE and role == Qt.ItemDataRole.CheckStateRole:
                document.set_model(entry.id, visible=Qt.CheckState(value) == Qt.CheckState.Checked)
                document.seal()
                return True
            return False
        if index.column() == COL_VISIBLE and role == Qt.ItemDataRole.CheckStateRole:
            visible = Qt.CheckState(value) == Qt.CheckState.Checked
            document.set_operation_field(entry.id, "visible", visible)
            document.seal()
            return True
        if index.column() == COL_NAME and role == Qt.ItemDataRole.EditRole:
            name = str(value).strip()
            if not name:
                return False
            document.set_operation_field(entry.id, "name", name)
            document.seal()
            return True
        return False

    # -- cell contents ---------------------------------------------------------------------

    @staticmethod
    def _color(row: int, entry: OperationEntry) -> str:
        # Session.color_of, without its linear search: ``row`` is the index in the session.
        return entry.color or PALETTE[row % len(PALETTE)]

    @staticmethod
    def _dim() -> QColor:
        from PySide6.QtWidgets import QApplication

        return QApplication.palette().color(QPalette.ColorGroup.Disabled,
                                            QPalette.ColorRole.Text)

    def _shown(self, entry: OperationEntry) -> tuple[str, str | None]:
        """(intensity, bound) texts of an operation, formatted once until a change."""
        texts = self._texts.get(entry.id)
        if texts is None:
            texts = self._texts[entry.id] = (self._intensity(entry, False),
                                             self._bound(entry, Qt.ItemDataRole.DisplayRole))
        return texts

    def _intensity(self, entry: OperationEntry, tooltip: bool) -> str:
        try:
            counts = self.workspace.results.counts(entry.id)
        except Exception as exc:  # invalid parameters: say why, never raise into Qt
            return f"Cannot count this operation: {exc}" if tooltip else "—"
        flops, nbytes = float(counts.flops), float(counts.bytes)
        intensity = flops / nbytes if nbytes else float("inf")
        if not tooltip:
            return format_number(intensity)
        return (f"FLOPs / bytes = {format_quantity(flops, 'flops')} / "
                f"{format_quantity(nbytes, 'bytes')} = {format_number(intensity)} FLOP/B")

    def _pair(self, entry: OperationEntry) -> Pair | Exception | None:
        if self._machine is None:
            return None
        try:
            return self.workspace.results.pair(entry.id, self._machine.id)
        except Exception as exc:
            return exc

    def _bound(self, entry: OperationEntry, role: int) -> Any:
        R = Qt.ItemDataRole
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


class OperationsPanel(QWidget):
    """Toolbar + table of the session's operations, synchronised with the shared selection.

    Public actions (also usable from a menu): :attr:`add_menu` (one action per kind, see
    :attr:`add_actions`), :attr:`duplicate_action` (Ctrl+D), :attr:`delete_action` (Delete,
    active while the panel has focus), :attr:`move_up_action` (Alt+Up),
    :attr:`move_down_action` (Alt+Down).
    """

    #: A model's header row was chosen (its id): the model editor shows it.
    model_chosen = Signal(int)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("OperationsPanel")
        self.workspace = workspace
        self.document = workspace.document
        self._syncing = False
        self._pending_select: int | None = None

        self.model = OperationsModel(workspace, self)
        self.view = QTableView(self)
        self.view.setObjectName("operationsView")
        self.view.setModel(self.model)
        self._configure_view()

        self._build_actions()
        self.toolbar = self._build_toolbar()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.view)

        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.modelReset.connect(self._restore_selection)
        self.view.selectionModel().currentRowChanged.connect(self._on_view_selection)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection)
        self.view.doubleClicked.connect(self._on_double_click)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        workspace.selection.changed.connect(self._on_selection)
        self._kept: list[int] = []
        self._kept_current_row = -1
        self._on_selection(workspace.selection.current)
        self._update_actions()

    # -- construction ----------------------------------------------------------------------

    def _configure_view(self) -> None:
        view = self.view
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed)
        view.setShowGrid(False)
        view.setAlternatingRowColors(True)
        view.setWordWrap(False)
        view.setTextElideMode(Qt.TextElideMode.ElideRight)
        view.setIconSize(QSize(14, 14))
        view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        vh = view.verticalHeader()
        vh.setVisible(False)
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(view.fontMetrics().height() + 8)
        header = view.horizontalHeader()
        header.setHighlightSections(False)
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(22)
        fm = view.fontMetrics()
        # Fixed widths from the font: ResizeToContents would measure every row (1000+).
        widths = {
            COL_COLOR: 26,
            COL_VISIBLE: 26,
            COL_KIND: fm.horizontalAdvance("GEMM / GEMV") + 14,
            COL_INTENSITY: fm.horizontalAdvance("Intensity") + 14,
            COL_BOUND: fm.horizontalAdvance("overhead") + 14,
        }
        for col, width in widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed
                                        if col in (COL_COLOR, COL_VISIBLE)
                                        else QHeaderView.ResizeMode.Interactive)
            header.resizeSection(col, width)
        header.setSectionResizeMode(COL_NAME, QHeaderView.ResizeMode.Stretch)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    def _build_actions(self) -> None:
        style = self.style()
        SP = QStyle.StandardPixmap
        self.add_menu = QMenu("&Add Operation", self)
        self.add_menu.setObjectName("addMenu")
        self.add_actions: dict[str, QAction] = {}
        for kind, spec in KINDS.items():
            action = self.add_menu.addAction(spec.label)
            action.setObjectName(f"add_{kind}")
            action.setData(kind)
            action.setStatusTip(spec.doc)
            action.setToolTip(f"Add: {spec.doc}")
            action.triggered.connect(lambda _checked=False, k=kind: self.add_operation(k))
            self.add_actions[kind] = action

        def make(text: str, name: str, slot, shortcut, tip: str, icon=None,
                 context=Qt.ShortcutContext.WindowShortcut) -> QAction:
            action = QAction(text, self)
            action.setObjectName(name)
            if icon is not None:
                action.setIcon(style.standardIcon(icon))
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(context)
            shown = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            action.setToolTip(f"{tip} ({shown})" if shown else tip)
            action.setStatusTip(tip)
            action.triggered.connect(slot)
            self.addAction(action)
            return action

        self.duplicate_action = make("D&uplicate Operation", "duplicate", self.duplicate_current,
                                     QKeySequence("Ctrl+D"),
                                     "Duplicate the selected operation")
        self.delete_action = make("&Delete Operation", "delete", self.delete_selected,
                                  QKeySequence.StandardKey.Delete,
                                  "Delete the selected operations", SP.SP_TrashIcon,
                                  Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.move_up_action = make("Move &Up", "move_up", lambda: self.move_current(-1),
                                   QKeySequence("Alt+Up"), "Move the selected operation up",
                                   SP.SP_ArrowUp)
        self.move_down_action = make("Move Do&wn", "move_down", lambda: self.move_current(+1),
                                     QKeySequence("Alt+Down"),
                                     "Move the selected operation down", SP.SP_ArrowDown)

    def _build_toolbar(self) -> QToolBar:
        bar = QToolBar("Operations", self)
        bar.setObjectName("operationsToolbar")
        bar.setIconSize(QSize(16, 16))
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        self.add_button = QToolButton(bar)
        self.add_button.setObjectName("addButton")
        self.add_button.setText("Add")
        self.add_button.setToolTip("Add an operation of a kind, after the selected one")
        self.add_button.setMenu(self.add_menu)
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.add_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.add_button.setIcon(_plus_icon(self.palette().color(QPalette.ColorRole.ButtonText)))
        bar.addWidget(self.add_button)
        bar.addSeparator()
        self.duplicate_action.setIcon(
            _duplicate_icon(self.palette().color(QPalette.ColorRole.ButtonText)))
        for action in (self.duplicate_action, self.delete_action, self.move_up_action,
                       self.move_down_action):
            bar.addAction(action)
            button = bar.widgetForAction(action)
            if button is not None:
                button.setObjectName(f"{action.objectName()}Button")
        return bar

    #: Below this width the Kind column is hidden so the names stay readable (the kind is
    #: still in each name's tooltip).
    COMPACT_WIDTH = 420

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.view.setColumnHidden(COL_KIND, event.size().width() < self.COMPACT_WIDTH)

    # -- selection -------------------------------------------------------------------------

    def selected_ids(self) -> list[int]:
        """Ids of the selected rows' operations, top to bottom (a model's header stands for
        its first operation)."""
        rows = sorted(i.row() for i in self.view.selectionModel().selectedRows())
        return [i for i in (self.model.op_id(r) for r in rows) if i >= 0]

    def selected_models(self) -> list[ModelEntry]:
        """Models whose header or any of whose operations is selected."""
        out: list[ModelEntry] = []
        for index in self.view.selectionModel().selectedRows():
            model = self.model.model_at(index.row())
            if model is not None and model not in out:
                out.append(model)
        return out

    def current_id(self) -> int | None:
        index = self.view.selectionModel().currentIndex()
        if index.isValid() and self.view.selectionModel().isRowSelected(index.row()):
            return self.model.op_id(index.row())
        ids = self.selected_ids()
        return ids[0] if ids else None

    def select(self, op_ids: list[int], current: int | None = None) -> None:
        """Select these operations' rows (``current`` gets the focus) without echoing."""
        sm = self.view.selectionModel()
        selection = QItemSelection()
        last = self.model.columnCount() - 1
        for op_id in op_ids:
            row = self.model.row_of(op_id)
            if row >= 0:
                selection.select(self.model.index(row, 0), self.model.index(row, last))
        self._syncing = True
        try:
            F = QItemSelectionModel.SelectionFlag
            crow = self.model.row_of(current)
            if crow >= 0:
                sm.setCurrentIndex(self.model.index(crow, COL_NAME), F.NoUpdate)
            sm.select(selection, F.ClearAndSelect)
        finally:
            self._syncing = False
        if current is not None and self.model.row_of(current) >= 0:
            self.view.scrollTo(self.model.index(self.model.row_of(current), COL_NAME),
                               QAbstractItemView.ScrollHint.EnsureVisible)
        self._update_actions()

    def _on_view_selection(self, *_args) -> None:
        """The user selected rows: the shared selection follows the current selected row
        (a current row that is not selected, as after focusing the table, selects nothing)."""
        if self._syncing:
            return
        self._update_actions()
        self._syncing = True
        try:
            self.workspace.selection.select(self.current_id())
        finally:
            self._syncing = False
        index = self.view.selectionModel().currentIndex()
        if index.isValid() and self.model.is_header(index.row()):
            self.model_chosen.emit(self.model.entry(index.row()).id)

    def _on_selection(self, op_id: int | None) -> None:
        """The shared selection changed (here or elsewhere): select and reveal its row."""
        if self._syncing:
            return
        if op_id is None:
            self._syncing = True
            try:
                self.view.selectionModel().clear()
            finally:
                self._syncing = False
            self._update_actions()
            return
        if self.model.row_of(op_id) < 0:
            return
        if self.current_id() == op_id and op_id in self.selected_ids():
            return
        index = self.view.selectionModel().currentIndex()
        if (index.isValid() and self.model.is_header(index.row())
                and self.model.op_id(index.row()) == op_id):
            return  # the header of its model is selected already
        self.select([op_id], op_id)

    def _remember_selection(self) -> None:
        self._kept = self.selected_ids()
        self._kept_current_row = self.model.row_of(self.workspace.selection.current)

    def _restore_selection(self) -> None:
        live = [i for i in self._kept if self.model.row_of(i) >= 0]
        current = self.workspace.selection.current
        if current is not None and self.model.row_of(current) < 0 and any(
                current in m.op_ids for m in self.document.session.models):
            return  # an operation of a collapsed model: its header stands for it
        if current is not None and self.model.row_of(current) < 0:
            # The selected operation is gone (deleted, an add undone): select its neighbour.
            if self.model.rowCount():
                row = max(self._kept_current_row, 0)
                current = self.model.op_id(min(row, self.model.rowCount() - 1))
                live = [current]
            else:
                current, live = None, []
            self.select(live, current)
            self._syncing = True
            try:
                self.workspace.selection.select(current)
            finally:
                self._syncing = False
            return
        if current is not None and current not in live:
            live = [current]
        self.select(live, current)

    def _update_actions(self, *_args) -> None:
        ids = self.selected_ids()
        current = self.current_id()
        row = self.model.row_of(current)
        if self.selected_models():
            row = -1  # a model's operations keep the model's order
        self.duplicate_action.setEnabled(current is not None)
        self.delete_action.setEnabled(bool(ids))
        self.delete_action.setText("&Delete Operations" if len(ids) > 1 else "&Delete Operation")
        self.move_up_action.setEnabled(row > 0)
        self.move_down_action.setEnabled(0 <= row < self.model.rowCount() - 1)

    # -- edits -----------------------------------------------------------------------------

    def _unique_name(self, base: str) -> str:
        names = {e.operation.name for e in self.document.session.operations}
        if base not in names:
            return base
        n = 2
        while f"{base} {n}" in names:
            n += 1
        return f"{base} {n}"

    def add_operation(self, kind: str) -> int:
        """Add a new ``kind`` operation after the selected one (or at the end); select it."""
        current = self.current_id()
        index = self.model.row_of(current) + 1 if current is not None else None
        operation = new_operation(kind, self._unique_name(KINDS[kind].default_name))
        op_id = self.document.add_operation(operation, index)
        self.workspace.selection.select(op_id)
        self.select([op_id], op_id)
        return op_id

    def duplicate_current(self) -> int | None:
        op_id = self.current_id()
        if op_id is None:
            return None
        new_id = self.document.duplicate_operation(op_id)
        self.workspace.selection.select(new_id)
        self.select([new_id], new_id)
        return new_id

    def delete_selected(self) -> None:
        models = self.selected_models()
        ids = self.selected_ids()
        if models:  # a model's operations go with the model
            grouped = {i for m in models for i in m.op_ids}
            ids = [i for i in ids if i not in grouped]
            first = min(self.model.header_row(m.id) for m in models)
            for m in models:
                self.document.remove_model(m.id)
            if ids:
                self.document.remove_operations(ids)
            self.workspace.select_valid()
            return
        if not ids:
            return
        first = min(self.model.row_of(i) for i in ids)
        self.document.remove_operations(ids)
        # The model has been reset; select the row that took the first deleted one's place.
        if self.model.rowCount():
            next_id = self.model.op_id(min(first, self.model.rowCount() - 1))
            self.workspace.selection.select(next_id)
            self.select([next_id], next_id)
        else:
            self.workspace.selection.select(None)

    def move_current(self, step: int) -> None:
        op_id = self.current_id()
        if op_id is None:
            return
        row = self.model.row_of(op_id)
        target = row + step
        if not 0 <= target < self.model.rowCount():
            return
        self.document.move_operation(op_id, target)
        self.select([op_id], op_id)

    def choose_color(self, op_id: int) -> None:
        """Ask for a colour (QColorDialog) and set it on the operation."""
        row = self.model.row_of(op_id)
        if row < 0:
            return
        entry = self.model.entry(row)
        initial = QColor(OperationsModel._color(row, entry))
        color = QColorDialog.getColor(initial, self, f"Colour of {entry.operation.name}")
        if color.isValid():
            self.document.set_operation_field(op_id, "color", color.name().upper())
            self.document.seal()

    def toggle_group(self, model_id: int) -> None:
        """Expand or collapse a model's group (its header stays selected)."""
        self.model.set_expanded(model_id, model_id not in self.model.expanded)
        row = self.model.header_row(model_id)
        if row >= 0:
            self._syncing = True
            try:
                F = QItemSelectionModel.SelectionFlag
                self.view.selectionModel().setCurrentIndex(self.model.index(row, COL_NAME),
                                                           F.ClearAndSelect | F.Rows)
            finally:
                self._syncing = False

    def keyPressEvent(self, event) -> None:
        index = self.view.selectionModel().currentIndex()
        if (event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and index.isValid() and self.model.is_header(index.row())):
            self.toggle_group(self.model.entry(index.row()).id)
            return
        super().keyPressEvent(event)

    def _on_double_click(self, index: QModelIndex) -> None:
        if index.isValid() and self.model.is_header(index.row()):
            self.toggle_group(self.model.entry(index.row()).id)
            return
        if index.isValid() and index.column() == COL_COLOR:
            self.choose_color(self.model.op_id(index.row()))

    def _context_menu(self, pos) -> None:
        index = self.view.indexAt(pos)
        menu = QMenu(self)
        menu.addMenu(self.add_menu)
        menu.addSeparator()
        if index.isValid() and self.model.model_at(index.row()) is not None:
            model = self.model.model_at(index.row())
            toggle = menu.addAction("Collapse" if model.id in self.model.expanded else "Expand")
            toggle.triggered.connect(lambda: self.toggle_group(model.id))
            edit = menu.addAction("Edit Model…")
            edit.triggered.connect(lambda: self.model_chosen.emit(model.id))
            menu.addSeparator()
        elif index.isValid():
            op_id = self.model.op_id(index.row())
            color = menu.addAction("Colour…")
            color.triggered.connect(lambda: self.choose_color(op_id))
            entry = self.model.entry(index.row())
            if entry.color:
                reset = menu.addAction("Default Colour")
                reset.triggered.connect(
                    lambda: self.document.set_operation_field(op_id, "color", None))
            menu.addSeparator()
        for action in (self.duplicate_action, self.delete_action, self.move_up_action,
                       self.move_down_action):
            menu.addAction(action)
        menu.exec(self.view.viewport().mapToGlobal(pos))
