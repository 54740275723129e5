"""The machines of the session: which are drawn, and an editor for the selected one.

Top: the list of machines (visible checkbox, chart marker, name, a one-line summary) with
actions to add a preset, define a new machine, duplicate and remove. Below: the selected
machine's name, a table of its ceilings (dense peak FLOP/s per precision, bandwidth per
memory level with the main one marked, interconnects), launch overhead, efficiency and
capacity, all typed as SI text ("3.35 TB/s", "989 TFLOP/s", "8 us"), and its provenance.

Every value is parsed when the edit is finished (Return or leaving the field). Text that
does not parse, or a ceiling of zero or less, is refused in place: the field turns red, the
hint at the bottom of the panel says what is wrong, and the document is not touched
(Escape puts the current value back). An accepted edit is one undo step
(``Document.set_machine`` then ``seal``). Changes from the document (undo, redo, other
views) refresh the fields without echoing back and without moving the focus.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSignalBlocker, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QRadioButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change, unique_name
from workbench.document.changes import What
from workbench.io.presets import get_preset
from workbench.model.hardware import Hardware
from workbench.model.limits import OverBudget
from workbench.model.session import HardwareEntry
from workbench.ui.bridge import Workspace
from workbench.ui.dialogs.preset_dialog import (
    ID_ROLE,
    SUMMARY_ROLE,
    PresetDialog,
    TwoLineDelegate,
    machine_summary,
)
from workbench.ui.editors.hardware_fields import MARKER_NAMES, FieldEdit, marker_icon
from workbench.ui.editors.machine_form import MachineForm
from workbench.ui.widgets import OwnKeysFilter

__all__ = ["HardwarePanel", "NEW_MACHINE"]

#: The figures a new custom machine starts from (the seeds' toy accelerator, its 16-bit peak
#: for both bf16 and fp16: bf16 work, the most common, would otherwise run at the fp32 peak).
NEW_MACHINE = {"compute": {"bf16": 100e12, "fp16": 100e12, "fp32": 20e12},
               "memory": {"hbm": 1e12}}

_PROBLEM_COLOR = "#b3261e"


# ---------------------------------------------------------------------------------------------
# the panel


class HardwarePanel(MachineForm, QWidget):
    """The machines of a session and an editor for the selected one (see the module doc).

    Public actions: :attr:`add_preset_action`, :attr:`new_machine_action`,
    :attr:`duplicate_action`, :attr:`remove_action`, :attr:`revert_action`.
    Signal :attr:`current_machine_changed` (the selected machine's id, or ``None``).
    """

    current_machine_changed = Signal(object)

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("HardwarePanel")
        self.workspace = workspace
        self.document = workspace.document
        self._current: int | None = None
        self._known_ids: set[int] = set()
        self.forget_structure()
        self.reset_problems()
        self.preset_dialog: PresetDialog | None = None
        #: value edit per ceiling, by (group, name)
        self.value_edits: dict[tuple[str, str], FieldEdit] = {}
        self.main_radios: dict[str, QRadioButton] = {}
        self.remove_buttons: dict[tuple[str, str], QToolButton] = {}

        self._build_actions()
        self._build_ui()
        workspace.signals.changed.connect(self._on_change)
        self._rebuild_list()
        ids = self.machine_ids()
        self.select_machine(ids[0] if ids else None)

    # -- construction ----------------------------------------------------------------------

    def _action(self, text: str, slot: Callable[[], object], tip: str, name: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_actions(self) -> None:
        self.add_preset_action = self._action(
            "Add preset…", self.open_preset_dialog,
            "Add machines from the hardware presets (sourced vendor figures)", "addPreset")
        self.new_machine_action = self._action(
            "New machine", self.new_machine,
            "Define a machine of your own, starting from 100 TFLOP/s (bf16, fp16) and 1 TB/s",
            "newMachine")
        self.duplicate_action = self._action(
            "Duplicate", self.duplicate_current,
            "Copy the selected machine, e.g. to try other figures beside the original",
            "duplicateMachine")
        self.remove_action = self._action(
            "Remove", self.remove_current, "Remove the selected machine from the session",
            "removeMachine")
        self.remove_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.remove_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.revert_action = self._action(
            "Revert to preset", self.revert_current,
            "Put the preset's figures back (keeps visibility and marker)", "revertMachine")
        # (in the list, as the operations' Alt+Up and Alt+Down: the legend's order)
        self.move_up_action = self._action(
            "Move up", lambda: self.move_current(-1),
            "Move the selected machine up (the legend and the results follow)", "moveMachineUp")
        self.move_down_action = self._action(
            "Move down", lambda: self.move_current(+1),
            "Move the selected machine down (the legend and the results follow)",
            "moveMachineDown")
        for action, key in ((self.move_up_action, "Alt+Up"), (self.move_down_action, "Alt+Down")):
            action.setShortcut(QKeySequence(key))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)

    def _build_ui(self) -> None:
        toolbar = QToolBar(self)
        toolbar.setObjectName("hardwareToolbar")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        toolbar.setIconSize(QSize(16, 16))
        for action in (self.add_preset_action, self.new_machine_action, self.duplicate_action,
                       self.remove_action):
            toolbar.addAction(action)

        self.machine_list = QListWidget(self)
        self.machine_list.setObjectName("machineList")
        self.machine_list.setItemDelegate(TwoLineDelegate(self.machine_list))
        self.machine_list.setIconSize(QSize(16, 16))
        self.machine_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.machine_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.machine_list.setToolTip("Tick the machines to draw on the chart")
        for action in (self.move_up_action, self.move_down_action, self.remove_action):
            self.machine_list.addAction(action)
        self.machine_list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        OwnKeysFilter(self.machine_list, (self.move_up_action, self.move_down_action))
        self.machine_list.currentItemChanged.connect(self._on_current_item)
        self.machine_list.itemChanged.connect(self._on_item_changed)

        self.editor_stack = QStackedWidget(self)
        self.editor_stack.addWidget(self._build_placeholder())
        scroll = QScrollArea(self)
        scroll.setObjectName("machineEditorScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.build_editor())
        self.editor_stack.addWidget(scroll)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.setObjectName("hardwareSplitter")
        splitter.addWidget(self.machine_list)
        splitter.addWidget(self.editor_stack)
        splitter.setChildrenCollapsible(False)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([150, 450])
        self.splitter = splitter

        self.hint_label = QLabel(self)
        self.hint_label.setObjectName("hardwareHint")
        self.hint_label.setWordWrap(True)
        self.hint_label.setTextFormat(Qt.TextFormat.PlainText)
        self.hint_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint_label.setStyleSheet(
            f"QLabel {{ color: {_PROBLEM_COLOR}; background: #fff1f0; border: 1px solid #f2b8b5;"
            " border-radius: 3px; padding: 4px; }")
        self.hint_label.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(toolbar)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.hint_label)

    def _build_placeholder(self) -> QWidget:
        page = QWidget(self)
        layout = QVBoxLayout(page)
        label = QLabel("No machine selected.\nAdd a preset, or define a machine of your own.",
                       page)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setEnabled(False)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for action in (self.add_preset_action, self.new_machine_action):
            button = QToolButton(page)
            button.setDefaultAction(action)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addStretch(1)
        layout.addWidget(label)
        layout.addLayout(buttons)
        layout.addStretch(2)
        return page

    # -- queries ---------------------------------------------------------------------------

    def machine_ids(self) -> list[int]:
        """Ids of the machines in list order."""
        return [self.machine_list.item(r).data(ID_ROLE) for r in range(self.machine_list.count())]

    def item_for(self, hw_id: int) -> QListWidgetItem | None:
        for row in range(self.machine_list.count()):
            item = self.machine_list.item(row)
            if item.data(ID_ROLE) == hw_id:
                return item
        return None

    @property
    def current_machine(self) -> int | None:
        """The id of the machine being edited, or ``None``."""
        return self._current

    def current_entry(self) -> HardwareEntry | None:
        if self._current is None:
            return None
        try:
            return self.document.machine(self._current)
        except KeyError:
            return None

    # -- selection -------------------------------------------------------------------------

    def select_machine(self, hw_id: int | None) -> None:
        item = self.item_for(hw_id) if hw_id is not None else None
        if item is not None:
            self.machine_list.setCurrentItem(item)
        self._set_current(hw_id if item is not None else None)

    def _on_current_item(self, item: QListWidgetItem | None, _previous=None) -> None:
        self._set_current(item.data(ID_ROLE) if item is not None else None)

    def _set_current(self, hw_id: int | None) -> None:
        if hw_id == self._current and self.structure_shown():
            return
        self._current = hw_id
        self.forget_structure()
        self.reset_problems()
        self.refresh_editor(reset=True)
        self._update_actions()
        self.current_machine_changed.emit(hw_id)

    def _update_actions(self) -> None:
        entry = self.current_entry()
        self.remove_action.setEnabled(entry is not None)
        self.duplicate_action.setEnabled(entry is not None)
        self.revert_action.setEnabled(entry is not None and self.is_edited_preset(entry))
        ids = self.machine_ids()
        row = ids.index(entry.id) if entry is not None and entry.id in ids else -1
        self.move_up_action.setEnabled(row > 0)
        self.move_down_action.setEnabled(0 <= row < len(ids) - 1)

    # -- list ------------------------------------------------------------------------------

    def _rebuild_list(self) -> None:
        session = self.document.session
        blocker = QSignalBlocker(self.machine_list)
        self.machine_list.clear()
        for entry in session.hardware:
            item = QListWidgetItem()
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                          | Qt.ItemFlag.ItemIsUserCheckable)
            item.setData(ID_ROLE, entry.id)
            self._fill_item(item, entry)
            self.machine_list.addItem(item)
        del blocker
        self._known_ids = {e.id for e in session.hardware}

    def _fill_item(self, item: QListWidgetItem, entry: HardwareEntry) -> None:
        hw = entry.hardware
        marker = self.document.session.marker_of(entry)
        item.setText(hw.label)
        item.setData(SUMMARY_ROLE, machine_summary(hw))
        item.setIcon(marker_icon(marker, self.palette().color(QPalette.ColorRole.Text)))
        item.setCheckState(Qt.CheckState.Checked if entry.visible else Qt.CheckState.Unchecked)
        origin = f"preset {entry.preset}" if entry.preset else "custom machine"
        item.setToolTip(f"{hw.label} ({origin})\n{machine_summary(hw)}\n"
                        f"Marker on the chart: {MARKER_NAMES.get(marker, marker)}\n"
                        "Untick to hide it from the chart")

    def _update_items(self, ids: tuple[int, ...]) -> None:
        blocker = QSignalBlocker(self.machine_list)
        for hw_id in ids:
            item = self.item_for(hw_id)
            try:
                entry = self.document.machine(hw_id)
            except KeyError:
                continue
            if item is not None:
                self._fill_item(item, entry)
        del blocker
        self.machine_list.viewport().update()

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        hw_id = item.data(ID_ROLE)
        visible = item.checkState() == Qt.CheckState.Checked
        try:
            entry = self.document.machine(hw_id)
        except KeyError:
            return
        if entry.visible != visible:
            self.document.set_machine_visible(hw_id, visible)
            self.document.seal()

    # -- document changes ------------------------------------------------------------------

    def _on_change(self, change: Change) -> None:
        if change.what in (What.SESSION, What.MACHINES):
            self._on_machines_changed(change)
        elif change.what == What.HARDWARE:
            self._update_items(change.ids)
            if self._current in change.ids:
                self.refresh_editor()
                self._update_actions()

    def _on_machines_changed(self, change: Change) -> None:
        previous_ids = self.machine_ids()
        old_row = previous_ids.index(self._current) if self._current in previous_ids else 0
        known = self._known_ids
        self._rebuild_list()
        ids = self.machine_ids()
        added = [i for i in change.ids if i in ids and i not in known]
        if change.what == What.MACHINES and added:
            target = added[-1]
        elif self._current in ids:
            target = self._current
        elif ids:
            target = ids[min(old_row, len(ids) - 1)]
        else:
            target = None
        if change.what == What.SESSION:
            self.forget_structure()
        item = self.item_for(target) if target is not None else None
        blocker = QSignalBlocker(self.machine_list)
        self.machine_list.setCurrentItem(item)
        del blocker
        if target == self._current:
            self.refresh_editor()
            self._update_actions()
        else:
            self._set_current(target)

    # -- actions ---------------------------------------------------------------------------

    def open_preset_dialog(self) -> PresetDialog:
        """Show the preset chooser (window-modal, not blocking); returns it."""
        if self.preset_dialog is not None:
            self.preset_dialog.close()
            self.preset_dialog.deleteLater()
        dialog = PresetDialog(self.workspace, self)
        dialog.presets_added.connect(self._on_presets_added)
        self.preset_dialog = dialog
        dialog.open()
        return dialog

    def _on_presets_added(self, ids: list[int]) -> None:
        if ids:
            self.select_machine(ids[-1])

    def new_machine(self) -> int | None:
        """Add a custom machine with round starting figures, select it and focus its name
        (``None``, said in a dialog, when the session could not hold it)."""
        names = {e.hardware.name for e in self.document.session.hardware}
        name, n = "Custom machine", 2
        while name in names:
            name, n = f"Custom machine {n}", n + 1
        hw = Hardware(name=name, compute=dict(NEW_MACHINE["compute"]),
                      memory=dict(NEW_MACHINE["memory"]), main_memory="hbm")
        hw_id = self._add("New Machine", hw)
        if hw_id is None:
            return None
        self.document.seal()
        self.select_machine(hw_id)
        self.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)
        self.name_edit.selectAll()
        return hw_id

    def duplicate_current(self) -> int | None:
        entry = self.current_entry()
        if entry is None:
            return None
        taken = {e.hardware.name for e in self.document.session.hardware}
        hw = entry.hardware.copy(name=unique_name(entry.hardware.label, taken, "machine",
                                                  " (copy)"))
        hw_id = self._add("Duplicate Machine", hw, entry.preset)
        if hw_id is None:
            return None
        self.document.seal()
        self.select_machine(hw_id)
        return hw_id

    def _add(self, title: str, hw: Hardware, preset: str | None = None) -> int | None:
        """Add ``hw`` to the session; ``None``, said in a dialog, when the session could
        not hold it (a file Save would refuse)."""
        try:
            return self.document.add_machine(hw, preset=preset)
        except OverBudget as exc:
            from PySide6.QtWidgets import QMessageBox

            QMessageBox.warning(self, title, f"Not added: {exc}")
            return None

    def move_current(self, step: int) -> None:
        """Move the selected machine ``step`` places (−1: up), keeping it selected."""
        entry = self.current_entry()
        if entry is None:
            return
        self.document.move_machine(entry.id, self.document.machine_index(entry.id) + step)
        self.document.seal()
        self.select_machine(entry.id)
        self._update_actions()

    def remove_current(self) -> None:
        entry = self.current_entry()
        if entry is not None:
            self.document.remove_machine(entry.id)
            self.document.seal()

    def revert_current(self) -> None:
        entry = self.current_entry()
        if entry is None or not entry.preset:
            return
        try:
            base = get_preset(entry.preset)
        except KeyError:
            return
        # the session's prediction choice is not a figure of the machine: it stays
        base.prediction, base.launches = entry.hardware.prediction, entry.hardware.launches
        if self.document.machine_name_problem(entry.id, base.name):  # another machine has it
            base.name = entry.hardware.name
        self.apply_machine(base, "Revert to preset")
