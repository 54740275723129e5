"""The operations list: every operation of the session in a compact, editable table.

Columns: colour swatch, shown-on-chart checkbox, name (editable), kind, arithmetic intensity
(FLOP/byte) and the bound (memory / compute / overhead) on the first visible machine.
A toolbar adds (one entry per kind), duplicates, deletes and reorders operations; the same
actions are attributes of the panel so the main window can put them in its Edit menu.

A whole model (Edit ▸ Add Model…) is one collapsible group: a header row (bold, with the
model's set-up and its operation count; a click on its arrow, a double-click, Space or →/←
to expand or collapse) above
the operations it expands into, hidden while the group is collapsed.

The table is a :class:`QTableView` over
:class:`~workbench.ui.panels.operations_model.OperationsModel` (its own module), which reads the
document directly and follows its :class:`~workbench.document.Change` notifications: an edit
of one operation repaints that row only (``dataChanged``), a structural change resets the
model and keeps the selection, a machine edit refreshes the intensity and bound columns.

A model's operations follow the model (:mod:`workbench.ui.editors.model_lock`): they are not renamed
here, and deleting one on its own is refused with a note above the table; a model's header
row deletes or duplicates the whole model.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QColorDialog,
    QHeaderView,
    QLabel,
    QMenu,
    QStyle,
    QTableView,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import OverBudget, new_operation, unique_name
from workbench.model.operations import KINDS
from workbench.ui.bridge import Workspace
from workbench.ui.editors.model_lock import refusal
from workbench.ui.mnemonics import give_mnemonics, give_mnemonics_when_shown
from workbench.ui.panels.model_group import duplicate_icon as _duplicate_icon
from workbench.ui.panels.model_group import plus_icon as _plus_icon
from workbench.ui.panels.operations_model import (
    COL_BOUND,
    COL_COLOR,
    COL_INTENSITY,
    COL_KIND,
    COL_NAME,
    COL_VISIBLE,
    COLUMNS,
    OP_ID_ROLE,
    OperationsModel,
)
from workbench.ui.widgets import style_row_table

if TYPE_CHECKING:  # (imported with the first whole model)
    from workbench.model.llm.session import ModelEntry

__all__ = ["OperationsPanel", "OperationsModel", "COLUMNS", "OP_ID_ROLE", "COL_COLOR",
           "COL_VISIBLE", "COL_NAME", "COL_KIND", "COL_INTENSITY", "COL_BOUND"]


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
        #: why the last edit was refused (deleting one operation of a model); hidden when
        #: there is nothing to say, cleared when the selection changes
        self.notice = QLabel(self)
        self.notice.setObjectName("operationsNotice")
        self.notice.setWordWrap(True)
        self.notice.setTextFormat(Qt.TextFormat.PlainText)
        self.notice.setStyleSheet("QLabel#operationsNotice { color: #b35900; padding: 4px 6px; }")
        self.notice.hide()
        layout.addWidget(self.notice)
        self.model.refused.connect(self._show_notice)
        layout.addWidget(self.view)
        workspace.model_requested.connect(self.model_chosen)

        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.modelReset.connect(self._restore_selection)
        self.view.selectionModel().currentRowChanged.connect(self._on_view_selection)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection)
        self.view.doubleClicked.connect(self._on_double_click)
        # a model's arrow opens its group when clicked; → and ← open and close it
        self.view.installEventFilter(self)
        self.view.viewport().installEventFilter(self)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        workspace.selection.changed.connect(self._on_selection)
        self._kept: list[int] = []
        self._kept_current_row = -1
        #: the session the rows were last made for (a new one starts on its first row)
        self._session = self.document.session
        self._fresh = False
        self._on_selection(workspace.selection.current)
        self._update_actions()

    # -- construction ----------------------------------------------------------------------

    def _configure_view(self) -> None:
        view = self.view
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        view.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                             | QAbstractItemView.EditTrigger.EditKeyPressed)
        style_row_table(view)
        view.setTextElideMode(Qt.TextElideMode.ElideRight)
        view.setIconSize(QSize(14, 14))
        header = view.horizontalHeader()
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
        give_mnemonics_when_shown(self.add_menu)

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

        self.duplicate_action = make("Dupli&cate Operation", "duplicate", self.duplicate_current,
                                     QKeySequence("Ctrl+D"),
                                     "Duplicate the selected operation")
        self.delete_action = make("&Delete Operation", "delete", self.delete_selected,
                                  QKeySequence.StandardKey.Delete,
                                  "Delete the selected operations", SP.SP_TrashIcon,
                                  Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.move_up_action = make("Move U&p", "move_up", lambda: self.move_current(-1),
                                   QKeySequence("Alt+Up"), "Move the selected operation up",
                                   SP.SP_ArrowUp)
        self.move_down_action = make("Move D&own", "move_down", lambda: self.move_current(+1),
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
        self.notice.hide()
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
        if self.document.session is not self._session:
            # another session (opened, new, recovered): nothing of the last one's selection
            # carries over, not even its row number; it starts on its own first operation
            self._session = self.document.session
            self._kept, self._kept_current_row = [], 0
            self._fresh = True

    def _restore_selection(self) -> None:
        fresh, self._fresh = self._fresh, False
        live = [i for i in self._kept if self.model.row_of(i) >= 0]
        current = self.workspace.selection.current
        if current is not None and self.model.row_of(current) < 0 and any(
                current in m.op_ids for m in self.document.session.models):
            return  # an operation of a collapsed model: its header stands for it
        if current is not None and self.model.row_of(current) < 0:
            # The selected operation is gone: a model's part made anew stays selected (its
            # tensor parallelism changed); else (deleted, an add undone) its neighbour.
            successor = None if fresh else self.workspace.successor()
            if successor is not None:
                current = successor
                live = [successor] if self.model.row_of(successor) >= 0 else []
            elif self.model.rowCount():
                row = max(self._kept_current_row, 0)
                current = self.model.op_id(min(row, self.model.rowCount() - 1))
                live = [current]
            else:
                current, live = None, []
            if live or current is None:
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
        return unique_name(base, {e.operation.name for e in self.document.session.operations},
                           "operation")

    def add_operation(self, kind: str) -> int | None:
        """Add a new ``kind`` operation after the selected one (or at the end); select it
        (``None``: the session holds as many operations as it may)."""
        current = self.current_id()
        index = self.model.row_of(current) + 1 if current is not None else None
        operation = new_operation(kind, self._unique_name(KINDS[kind].default_name))
        try:
            op_id = self.document.add_operation(operation, index)
        except OverBudget as exc:
            self._refuse_addition("Add Operation", exc)
            return None
        self.workspace.selection.select(op_id)
        self.select([op_id], op_id)
        return op_id

    def _show_notice(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.show()

    def _refuse_addition(self, title: str, exc: Exception) -> None:
        """Say why nothing was added (the session could not be opened again)."""
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.warning(self, title, str(exc))

    def duplicate_current(self) -> int | None:
        """Duplicate the current operation: the copy of a model's operation is an ordinary,
        editable operation after the model's block; a model's header row duplicates the
        whole model. Returns the new operation's id (a new model's first)."""
        index = self.view.selectionModel().currentIndex()
        if (index.isValid() and self.model.is_header(index.row())
                and self.view.selectionModel().isRowSelected(index.row())):
            model = self.model.entry(index.row())
            from workbench.model.llm.session import ModelEntry

            labels = {m.label for m in self.document.session.models}
            twin = ModelEntry(model.config, model.arch, replace(model.setup), view=model.view,
                              name=unique_name(model.label, labels, "model", " (copy)"),
                              visible=model.visible)
            from workbench.document.models import ModelTooLarge

            try:
                self.document.add_model(twin)
            except ModelTooLarge as exc:  # (the session could not be opened again)
                self._refuse_addition("Duplicate Model", exc)
                return None
            new_id = twin.op_ids[0] if twin.op_ids else None
            self.workspace.selection.select(new_id)
            self.select([new_id], new_id)
            self.model_chosen.emit(twin.id)
            return new_id
        op_id = self.current_id()
        if op_id is None:
            return None
        try:
            new_id = self.document.duplicate_operation(op_id)
        except OverBudget as exc:
            self._refuse_addition("Duplicate Operation", exc)
            return None
        self.workspace.selection.select(new_id)
        self.select([new_id], new_id)
        return new_id

    def delete_selected(self) -> None:
        """Delete the selected operations; a selected model header deletes the whole model.
        An operation of a model is not deleted on its own: the notice says why."""
        rows = sorted(i.row() for i in self.view.selectionModel().selectedRows())
        models = [self.model.entry(r) for r in rows if self.model.is_header(r)]
        refused: list[int] = []
        held: list[ModelEntry] = []
        ids = []
        for r in rows:
            owner = self.model.model_at(r)
            if owner is None:
                ids.append(self.model.op_id(r))
            elif owner.id not in {m.id for m in models} and not self.model.is_header(r):
                refused.append(r)
                if all(owner.id != m.id for m in held):
                    held.append(owner)
        if refused:
            self._show_notice(refusal(held, len(refused)))
        if models:  # a model's operations go with the model
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
        initial = QColor(OperationsModel.color_of(row, entry))
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

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if (obj is self.view and kind == QEvent.Type.KeyPress
                and event.key() in (Qt.Key.Key_Right, Qt.Key.Key_Left)
                and not event.modifiers()):
            index = self.view.selectionModel().currentIndex()
            if index.isValid() and self.model.is_header(index.row()):
                model_id = self.model.entry(index.row()).id
                # → opens a closed group, ← closes an open one (as in any tree)
                if (event.key() == Qt.Key.Key_Right) != (model_id in self.model.expanded):
                    self.toggle_group(model_id)
                return True
        elif (obj is self.view.viewport() and kind == QEvent.Type.MouseButtonRelease
              and event.button() == Qt.MouseButton.LeftButton and not event.modifiers()):
            pos = event.position().toPoint()
            index = self.view.indexAt(pos)
            if (index.isValid() and index.column() == COL_NAME
                    and self.model.is_header(index.row())
                    and pos.x() < self.view.visualRect(index).left() + self._arrow_width()):
                self.toggle_group(self.model.entry(index.row()).id)
        return super().eventFilter(obj, event)

    def _arrow_width(self) -> int:
        """How far into a model's name cell its arrow reaches (with the cell's margin)."""
        return self.view.fontMetrics().horizontalAdvance("▾ ") + 6

    def _on_double_click(self, index: QModelIndex) -> None:
        if index.isValid() and self.model.is_header(index.row()):
            self.toggle_group(self.model.entry(index.row()).id)
            return
        if (index.isValid() and index.column() == COL_COLOR
                and self.model.model_at(index.row()) is None):
            self.choose_color(self.model.op_id(index.row()))

    def _context_menu(self, pos) -> None:
        self.context_menu(pos).exec(self.view.viewport().mapToGlobal(pos))

    def context_menu(self, pos) -> QMenu:
        """The menu of a right click at ``pos`` (in the list's viewport): adding, and what
        can be done to the model or the operation there."""
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
        give_mnemonics(menu)
        return menu
