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

import math
import re
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QPointF, QSignalBlocker, QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QFont,
    QIcon,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.io.presets import get_preset
from workbench.model.dtypes import PRECISIONS
from workbench.model.hardware import Hardware
from workbench.model.session import HardwareEntry
from workbench.model.units import QuantityError, format_quantity, parse_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.preset_dialog import (
    ID_ROLE,
    SUMMARY_ROLE,
    PresetDialog,
    TwoLineDelegate,
    machine_summary,
)
from workbench.ui.widgets import escape_html, set_invalid

__all__ = ["HardwarePanel", "FieldEdit", "marker_icon", "NEW_MACHINE"]

#: The figures a new custom machine starts from (the seeds' toy accelerator).
NEW_MACHINE = {"compute": {"fp16": 100e12, "fp32": 20e12}, "memory": {"hbm": 1e12}}

_LEVEL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
_LEVEL_SUGGESTIONS = ("l2", "l1", "smem", "sram", "llc", "ddr", "hbm", "vmem")
_LINK_SUGGESTIONS = ("nvlink", "pcie", "ici", "xgmi", "ethernet", "infiniband")

#: (group, heading, unit, what one value is called)
_GROUPS = (
    ("compute", "Compute — dense peak", "flop_rate", "peak"),
    ("memory", "Memory bandwidth", "bandwidth", "bandwidth"),
    ("interconnect", "Interconnect", "bandwidth", "bandwidth"),
)
_UNIT_OF = {group: unit for group, _, unit, _ in _GROUPS}
_WHAT_OF = {group: what for group, _, _, what in _GROUPS}
_PROBLEM_COLOR = "#b3261e"


# ---------------------------------------------------------------------------------------------
# parsing and formatting of one field


def shortest_text(value: float, unit: str) -> str:
    """The shortest SI text for ``value`` that reads back as the same number."""
    for digits in range(3, 17):
        text = format_quantity(value, unit, digits)
        try:
            back = parse_quantity(text, unit)
        except QuantityError:
            break
        if math.isclose(back, value, rel_tol=1e-12):
            return text
    return repr(float(value))


def rate_text(value: float, precision: str) -> str:
    """A peak as SI text; integer precisions in OP/s ("1.979 POP/s")."""
    text = shortest_text(value, "flop_rate")
    return text.replace("FLOP/s", "OP/s") if precision.startswith("int") else text


def _strip(text: str) -> str:
    return text.strip()


def parse_positive(unit: str) -> Callable[[str], float]:
    """A parser for a ceiling: a quantity in ``unit``, more than zero, never empty."""
    example = {"flop_rate": "989 TFLOP/s", "bandwidth": "3.35 TB/s"}.get(unit, "1")

    def parse(text: str) -> float:
        text = _strip(text)
        if not text:
            raise ValueError(f"needs a value such as '{example}' (remove the row instead)")
        value = parse_quantity(text, unit)
        if value <= 0:
            raise ValueError(f"must be more than zero, got {text!r}")
        return value

    return parse


def parse_optional(unit: str, what: str) -> Callable[[str], float | None]:
    """A parser for an optional quantity: empty (or zero) means none, negative is refused."""

    def parse(text: str) -> float | None:
        text = _strip(text)
        if not text:
            return None
        value = parse_quantity(text, unit)
        if value < 0:
            raise ValueError(f"{what} cannot be negative, got {text!r} (leave empty for none)")
        return value or None

    return parse


def parse_efficiency(text: str) -> float | None:
    """A derating fraction in (0, 1]: "0.78" or "78 %"; empty means none."""
    text = _strip(text)
    if not text:
        return None
    percent = text.endswith("%")
    number = parse_quantity(text[:-1].strip() if percent else text, "count")
    value = number / 100 if percent else number
    if not 0 < value <= 1:
        raise ValueError(f"must be a fraction in (0, 1] such as 0.78 or 78%, got {text!r}")
    return value


def parse_name(text: str) -> str:
    text = _strip(text)
    if not text:
        raise ValueError("a machine needs a name")
    if len(text) > 120:
        raise ValueError("is longer than 120 characters")
    return text


def _format_optional(unit: str) -> Callable[[float | None], str]:
    return lambda value: "" if value is None else shortest_text(value, unit)


def _format_efficiency(value: float | None) -> str:
    return "" if value is None else f"{value:.12g}"


class FieldEdit(QLineEdit):
    """A line edit for one field of a machine, parsed when the edit is finished.

    ``committed(value)`` is emitted on Return or focus-out when the text parses to a value
    other than the one shown; otherwise the edit is refused in place: red frame, tooltip,
    ``problemChanged(message)`` (``""`` once the problem is gone). Escape reverts.
    """

    committed = Signal(object)
    problemChanged = Signal(str)

    def __init__(self, parse: Callable[[str], object], fmt: Callable[[object], str],
                 parent: QWidget | None = None, tooltip: str = "") -> None:
        super().__init__(parent)
        self._parse = parse
        self._fmt = fmt
        self._value: object = None
        self._problem = ""
        self._tooltip = tooltip
        self.setToolTip(tooltip)
        self.textEdited.connect(self._on_text_edited)
        self.editingFinished.connect(self._on_editing_finished)

    # -- state -----------------------------------------------------------------------------

    @property
    def problem(self) -> str:
        """Why the text was refused ("" if it was not)."""
        return self._problem

    def value(self) -> object:
        """The value last shown (the document's)."""
        return self._value

    def show_value(self, value: object) -> None:
        """Show the document's value; no signal. Clears any refusal."""
        self._value = value
        text = self._fmt(value)
        if self.text() != text:
            self.setText(text)
            self.setCursorPosition(0)
        self._set_problem("")

    def sync(self, value: object) -> None:
        """Follow the document without disturbing the user: a field being typed in keeps its
        text, and refused text stays in place while the value it would replace is unchanged."""
        being_typed = self.hasFocus() and self.isModified()
        if being_typed or (self._problem and _same(value, self._value)):
            self._value = value
            return
        self.show_value(value)

    # -- reactions -------------------------------------------------------------------------

    def _on_text_edited(self, text: str) -> None:
        # While typing, only lift an old refusal once the text is valid again: "4 T" on the
        # way to "4 TB/s" is not worth a red flash.
        if self._problem:
            try:
                self._parse(text)
            except ValueError:
                return
            self._set_problem("")

    def _on_editing_finished(self) -> None:
        text = self.text()
        try:
            value = self._parse(text)
        except ValueError as exc:  # QuantityError is a ValueError
            self._set_problem(str(exc))
            return
        self._set_problem("")
        self.setModified(False)
        if _same(value, self._value):
            self.show_value(self._value)  # "3350 GB/s" for 3.35 TB/s: show it the usual way
            return
        self.committed.emit(value)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        if event.key() == Qt.Key.Key_Escape and (self._problem or self.isModified()):
            self.show_value(self._value)
            self.setModified(False)
            event.accept()
            return
        super().keyPressEvent(event)

    def _set_problem(self, message: str) -> None:
        if message == self._problem:
            return
        self._problem = message
        set_invalid(self, bool(message))
        self.setToolTip(message or self._tooltip)
        self.problemChanged.emit(message)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-12)
    return a == b


# ---------------------------------------------------------------------------------------------
# marker glyphs


def marker_icon(symbol: str, color: QColor, size: int = 16) -> QIcon:
    """The chart's marker for a machine (a pyqtgraph symbol) as a small icon."""
    from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols

    ratio = 2
    pixmap = QPixmap(size * ratio, size * ratio)
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.translate(QPointF(size / 2, size / 2))
    painter.scale(size * 0.78, size * 0.78)
    pen = QPen(color, 1.3)
    pen.setCosmetic(True)
    painter.setPen(pen)
    fill = QColor(color)
    fill.setAlphaF(0.35)
    painter.setBrush(fill)
    painter.drawPath(Symbols.get(symbol, Symbols["o"]))
    painter.end()
    return QIcon(pixmap)


_MARKER_NAMES = {"o": "circle", "s": "square", "t": "triangle", "d": "diamond", "star": "star",
                 "p": "pentagon", "h": "hexagon", "t1": "triangle (up)"}


# ---------------------------------------------------------------------------------------------
# the panel


class HardwarePanel(QWidget):
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
        self._structure: tuple | None = None
        self._problems: dict[str, str] = {}
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
            "Define a machine of your own, starting from 100 TFLOP/s and 1 TB/s", "newMachine")
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
        self.machine_list.addAction(self.remove_action)
        self.machine_list.currentItemChanged.connect(self._on_current_item)
        self.machine_list.itemChanged.connect(self._on_item_changed)

        self.editor_stack = QStackedWidget(self)
        self.editor_stack.addWidget(self._build_placeholder())
        scroll = QScrollArea(self)
        scroll.setObjectName("machineEditorScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self._build_editor())
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

    def _field(self, parse: Callable[[str], object], fmt: Callable[[object], str], key: str,
               label: str, name: str, tooltip: str, placeholder: str = "") -> FieldEdit:
        edit = FieldEdit(parse, fmt, self, tooltip)
        edit.setObjectName(name)
        if placeholder:
            edit.setPlaceholderText(placeholder)
        edit.problemChanged.connect(partial(self._set_problem, key, label))
        return edit

    def _build_editor(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("machineEditor")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.setSpacing(6)

        self.name_edit = self._field(parse_name, str, "name", "Name", "machineName",
                                     "The machine's name, as shown on the chart")
        self.name_edit.committed.connect(self._set_name)
        name_font = QFont(self.name_edit.font())
        name_font.setWeight(QFont.Weight.DemiBold)
        self.name_edit.setFont(name_font)
        self.origin_label = QLabel(page)
        self.origin_label.setObjectName("machineOrigin")
        self.origin_label.setEnabled(False)
        self.origin_label.setWordWrap(True)
        layout.addWidget(self.name_edit)
        layout.addWidget(self.origin_label)

        self.ceilings_table = QTableWidget(0, 4, page)
        self.ceilings_table.setObjectName("ceilingsTable")
        self.ceilings_table.setHorizontalHeaderLabels(["Ceiling", "Value", "Main", ""])
        header_tips = ("Precision, memory level or link", "SI text: 989 TFLOP/s, 3.35 TB/s",
                       "The memory level operations are measured against unless they choose "
                       "another", "Remove the row")
        for column, tip in enumerate(header_tips):
            self.ceilings_table.horizontalHeaderItem(column).setToolTip(tip)
        self.ceilings_table.verticalHeader().hide()
        self.ceilings_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.ceilings_table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.ceilings_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.ceilings_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.ceilings_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.ceilings_table.setShowGrid(False)
        self.ceilings_table.setWordWrap(False)
        header = self.ceilings_table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(3, 26)
        header.setHighlightSections(False)
        self.ceilings_table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.main_group = QButtonGroup(self)
        self.main_group.setExclusive(True)
        layout.addWidget(self.ceilings_table)

        # add a ceiling: kind, name, value, Add
        self.add_kind_combo = QComboBox(page)
        self.add_kind_combo.setObjectName("addCeilingKind")
        self.add_kind_combo.addItem("Precision", "compute")
        self.add_kind_combo.addItem("Memory level", "memory")
        self.add_kind_combo.addItem("Interconnect", "interconnect")
        self.add_kind_combo.setToolTip("What kind of ceiling to add")
        self.add_name_combo = QComboBox(page)
        self.add_name_combo.setObjectName("addCeilingName")
        self.add_name_combo.setMinimumContentsLength(6)
        self.add_name_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.add_value_edit = QLineEdit(page)
        self.add_value_edit.setObjectName("addCeilingValue")
        self.add_value_edit.returnPressed.connect(self.add_ceiling_from_form)
        self.add_value_edit.textEdited.connect(lambda _text: self._clear_add_problem())
        self.add_name_combo.editTextChanged.connect(lambda _text: self._clear_add_problem())
        self.add_button = QPushButton("Add", page)
        self.add_button.setObjectName("addCeiling")
        self.add_button.setAutoDefault(False)
        self.add_button.clicked.connect(self.add_ceiling_from_form)
        self.add_kind_combo.currentIndexChanged.connect(lambda _i: self._fill_add_names())
        add_row = QGridLayout()
        add_row.setHorizontalSpacing(4)
        add_row.setVerticalSpacing(4)
        add_label = QLabel("Add a ceiling", page)
        add_label.setEnabled(False)
        add_row.addWidget(add_label, 0, 0, 1, 3)
        add_row.addWidget(self.add_kind_combo, 1, 0)
        add_row.addWidget(self.add_name_combo, 1, 1, 1, 2)
        add_row.addWidget(self.add_value_edit, 2, 0, 1, 2)
        add_row.addWidget(self.add_button, 2, 2)
        add_row.setColumnStretch(0, 1)
        add_row.setColumnStretch(1, 1)
        layout.addLayout(add_row)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setContentsMargins(0, 6, 0, 0)
        self.overhead_edit = self._field(
            parse_optional("time", "launch overhead"), _format_optional("time"), "overhead",
            "Launch overhead", "launchOverhead",
            "Fixed cost of a kernel launch; below it an operation is overhead-bound. "
            "SI time: 8 us, 5 µs; empty for none", "none (e.g. 8 us)")
        self.overhead_edit.committed.connect(partial(self._set_field, "launch_overhead",
                                                     "launch overhead"))
        self.efficiency_edit = self._field(
            parse_efficiency, _format_efficiency, "efficiency", "Efficiency", "efficiency",
            "Derating for predicted times: the fraction of the roofline real kernels reach "
            "(0 < e ≤ 1; production kernels land at 0.65–0.85); empty for none",
            "none (e.g. 0.78)")
        self.efficiency_edit.committed.connect(partial(self._set_field, "efficiency",
                                                       "efficiency"))
        self.capacity_edit = self._field(
            parse_optional("bytes", "capacity"), _format_optional("bytes"), "capacity",
            "Capacity", "capacity", "Main memory capacity (80 GB, 96 GiB); empty if unknown",
            "unknown (e.g. 80 GB)")
        self.capacity_edit.committed.connect(partial(self._set_field, "capacity", "capacity"))
        form.addRow("Launch overhead", self.overhead_edit)
        form.addRow("Efficiency", self.efficiency_edit)
        form.addRow("Capacity", self.capacity_edit)
        layout.addLayout(form)

        box = QGroupBox("Provenance", page)
        box.setObjectName("provenanceBox")
        box_layout = QVBoxLayout(box)
        box_layout.setSpacing(4)
        self.provenance_label = QLabel(box)
        self.provenance_label.setObjectName("provenance")
        self.provenance_label.setWordWrap(True)
        self.provenance_label.setTextFormat(Qt.TextFormat.RichText)
        self.provenance_label.setOpenExternalLinks(True)
        self.provenance_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction)
        self.notes_label = QLabel(box)
        self.notes_label.setObjectName("provenanceNotes")
        self.notes_label.setWordWrap(True)
        self.notes_label.setTextFormat(Qt.TextFormat.PlainText)
        self.notes_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        notes_palette = self.notes_label.palette()
        notes_palette.setColor(QPalette.ColorRole.WindowText,
                               self.palette().color(QPalette.ColorRole.PlaceholderText))
        self.notes_label.setPalette(notes_palette)
        self.revert_button = QToolButton(box)
        self.revert_button.setDefaultAction(self.revert_action)
        box_layout.addWidget(self.provenance_label)
        box_layout.addWidget(self.notes_label)
        box_layout.addWidget(self.revert_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(box)
        layout.addStretch(1)
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

    def _entry(self) -> HardwareEntry | None:
        if self._current is None:
            return None
        try:
            return self.document.machine(self._current)
        except KeyError:
            return None

    def value_edit(self, group: str, name: str) -> FieldEdit:
        """The value field of a ceiling: ``value_edit("memory", "hbm")``."""
        return self.value_edits[(group, name)]

    def problems(self) -> dict[str, str]:
        """The refusals shown at the moment, by field."""
        return dict(self._problems)

    # -- selection -------------------------------------------------------------------------

    def select_machine(self, hw_id: int | None) -> None:
        item = self.item_for(hw_id) if hw_id is not None else None
        if item is not None:
            self.machine_list.setCurrentItem(item)
        self._set_current(hw_id if item is not None else None)

    def _on_current_item(self, item: QListWidgetItem | None, _previous=None) -> None:
        self._set_current(item.data(ID_ROLE) if item is not None else None)

    def _set_current(self, hw_id: int | None) -> None:
        if hw_id == self._current and self._structure is not None:
            return
        self._current = hw_id
        self._structure = None
        self._problems.clear()
        self._refresh_editor(reset=True)
        self._update_actions()
        self.current_machine_changed.emit(hw_id)

    def _update_actions(self) -> None:
        entry = self._entry()
        self.remove_action.setEnabled(entry is not None)
        self.duplicate_action.setEnabled(entry is not None)
        self.revert_action.setEnabled(entry is not None and self._is_edited_preset(entry))

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
                        f"Marker on the chart: {_MARKER_NAMES.get(marker, marker)}\n"
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
        if change.what in ("session", "machines"):
            self._on_machines_changed(change)
        elif change.what == "hardware":
            self._update_items(change.ids)
            if self._current in change.ids:
                self._refresh_editor()
                self._update_actions()

    def _on_machines_changed(self, change: Change) -> None:
        previous_ids = self.machine_ids()
        old_row = previous_ids.index(self._current) if self._current in previous_ids else 0
        known = self._known_ids
        self._rebuild_list()
        ids = self.machine_ids()
        added = [i for i in change.ids if i in ids and i not in known]
        if change.what == "machines" and added:
            target = added[-1]
        elif self._current in ids:
            target = self._current
        elif ids:
            target = ids[min(old_row, len(ids) - 1)]
        else:
            target = None
        if change.what == "session":
            self._structure = None
        item = self.item_for(target) if target is not None else None
        blocker = QSignalBlocker(self.machine_list)
        self.machine_list.setCurrentItem(item)
        del blocker
        if target == self._current:
            self._refresh_editor()
            self._update_actions()
        else:
            self._set_current(target)

    # -- editor ----------------------------------------------------------------------------

    def _refresh_editor(self, reset: bool = False) -> None:
        """Show the current machine; ``reset`` (another machine) also drops typed text."""
        entry = self._entry()
        if entry is None:
            self.editor_stack.setCurrentIndex(0)
            self._structure = None
            self._problems.clear()
            self._show_problems()
            return
        self.editor_stack.setCurrentIndex(1)
        hw = entry.hardware
        structure = (tuple(hw.compute), tuple(hw.memory), tuple(hw.interconnect))
        if structure != self._structure:
            self._build_ceilings(hw)
            self._structure = structure
        else:
            for (group, name), edit in self.value_edits.items():
                edit.sync(getattr(hw, group)[name])
        for name, radio in self.main_radios.items():
            if radio.isChecked() != (name == hw.main_memory):
                blocker = QSignalBlocker(radio)
                radio.setChecked(name == hw.main_memory)
                del blocker
        for edit, value in ((self.name_edit, hw.name), (self.overhead_edit, hw.launch_overhead),
                            (self.efficiency_edit, hw.efficiency),
                            (self.capacity_edit, hw.capacity)):
            if reset:
                edit.show_value(value)
                edit.setModified(False)
            else:
                edit.sync(value)
        self._fill_provenance(entry)
        self._fill_add_names()

    def _build_ceilings(self, hw: Hardware) -> None:
        table = self.ceilings_table
        focused = next((key for key, edit in self.value_edits.items() if edit.hasFocus()), None)
        for key in list(self._problems):
            if key.startswith("ceiling:"):
                del self._problems[key]
        for edit in self.value_edits.values():
            edit.blockSignals(True)  # no late commit from a row that is going away
        for radio in self.main_radios.values():
            radio.blockSignals(True)
            self.main_group.removeButton(radio)
        self.value_edits.clear()
        self.main_radios.clear()
        self.remove_buttons.clear()
        table.clearContents()
        table.setRowCount(0)

        header_font = QFont(table.font())
        header_font.setWeight(QFont.Weight.DemiBold)
        header_brush = self.palette().brush(QPalette.ColorRole.AlternateBase)
        row_height = self.name_edit.sizeHint().height() + 2
        for group, heading, unit, what in _GROUPS:
            values: dict[str, float] = getattr(hw, group)
            if not values and group == "interconnect":
                continue
            row = table.rowCount()
            table.insertRow(row)
            title = QTableWidgetItem(f"{heading} ({'FLOP/s' if unit == 'flop_rate' else 'B/s'})")
            title.setFlags(Qt.ItemFlag.ItemIsEnabled)
            title.setFont(header_font)
            table.setItem(row, 0, title)
            for column in range(4):
                if column:
                    table.setItem(row, column, QTableWidgetItem())
                    table.item(row, column).setFlags(Qt.ItemFlag.ItemIsEnabled)
                table.item(row, column).setBackground(header_brush)
            table.setSpan(row, 0, 1, 4)
            table.setRowHeight(row, row_height)
            names = list(values)
            if group == "compute":
                order = {p: i for i, p in enumerate(PRECISIONS)}
                names.sort(key=lambda n: order.get(n, len(order)))
            for name in names:
                row = table.rowCount()
                table.insertRow(row)
                table.setRowHeight(row, row_height)
                label = QTableWidgetItem(name)
                label.setFlags(Qt.ItemFlag.ItemIsEnabled)
                label.setToolTip(self._ceiling_tip(group, name))
                table.setItem(row, 0, label)
                fmt = (partial(rate_text, precision=name) if group == "compute"
                       else partial(shortest_text, unit=unit))
                edit = self._field(
                    parse_positive(unit), fmt,
                    f"ceiling:{group}:{name}", f"{name} {what}", f"value_{group}_{name}",
                    self._ceiling_tip(group, name))
                edit.setFrame(False)
                edit.show_value(values[name])
                edit.committed.connect(partial(self._set_ceiling, group, name))
                table.setCellWidget(row, 1, edit)
                self.value_edits[(group, name)] = edit
                if group == "memory":
                    radio = QRadioButton(table)
                    radio.setObjectName(f"main_{name}")
                    radio.setToolTip(f"Measure operations against {name} unless they choose "
                                     "another level")
                    radio.setChecked(name == hw.main_memory)
                    radio.toggled.connect(partial(self._on_main_toggled, name))
                    self.main_group.addButton(radio)
                    self.main_radios[name] = radio
                    table.setCellWidget(row, 2, _centered(radio))
                button = QToolButton(table)
                button.setObjectName(f"remove_{group}_{name}")
                button.setText("✕")
                button.setAutoRaise(True)
                last = group in ("compute", "memory") and len(values) == 1
                button.setEnabled(not last)
                button.setToolTip(f"A machine needs at least one {_WHAT_OF[group]} "
                                  f"{'precision' if group == 'compute' else 'level'}"
                                  if last else f"Remove {name}")
                button.clicked.connect(partial(self.remove_ceiling, group, name))
                table.setCellWidget(row, 3, button)
                self.remove_buttons[(group, name)] = button
        self._fit_table()
        self._show_problems()
        if focused in self.value_edits:
            self.value_edits[focused].setFocus(Qt.FocusReason.OtherFocusReason)

    def _ceiling_tip(self, group: str, name: str) -> str:
        if group == "compute":
            return (f"Dense peak for {name} in FLOP/s (or OP/s): e.g. 989 TFLOP/s, 1.98 PFLOP/s."
                    " Vendor figures 'with sparsity' must be halved.")
        if group == "memory":
            return f"Bandwidth of {name} in B/s: e.g. 3.35 TB/s, 819 GB/s"
        return f"Bandwidth of the {name} link in B/s, per direction: e.g. 450 GB/s"

    def _fit_table(self) -> None:
        table = self.ceilings_table
        height = table.horizontalHeader().height() + 2 * table.frameWidth()
        height += sum(table.rowHeight(r) for r in range(table.rowCount()))
        table.setFixedHeight(height)

    def _fill_add_names(self) -> None:
        entry = self._entry()
        group = self.add_kind_combo.currentData()
        combo = self.add_name_combo
        blocker = QSignalBlocker(combo)
        keep = combo.currentText() if combo.isEditable() else ""
        combo.clear()
        if entry is None:
            del blocker
            return
        hw = entry.hardware
        if group == "compute":
            combo.setEditable(False)
            combo.addItems([p for p in PRECISIONS if p not in hw.compute])
            combo.setToolTip("Precisions this machine has no peak for yet")
            self.add_value_edit.setPlaceholderText("peak, e.g. 989 TFLOP/s")
        else:
            combo.setEditable(True)
            combo.lineEdit().setPlaceholderText("name")
            taken = set(hw.memory) | set(hw.interconnect)
            pool = _LEVEL_SUGGESTIONS if group == "memory" else _LINK_SUGGESTIONS
            combo.addItems([n for n in pool if n not in taken])
            combo.setEditText(keep if keep and keep not in taken else "")
            combo.setToolTip("A letter, then letters, digits, _ or -")
            self.add_value_edit.setPlaceholderText("bandwidth, e.g. 3.35 TB/s")
        self.add_button.setEnabled(group != "compute" or combo.count() > 0)
        del blocker

    def _fill_provenance(self, entry: HardwareEntry) -> None:
        hw = entry.hardware
        parts = []
        meta = " · ".join(m for m in (hw.vendor if hw.vendor != "none" else "",
                                      hw.kind if hw.kind != "custom" else "") if m)
        if entry.preset:
            edited = self._is_edited_preset(entry)
            origin = f"Preset {entry.preset}" + (", edited" if edited else "")
        else:
            origin = "Custom machine, defined in this session"
        self.origin_label.setText(origin + (f" · {meta}" if meta else ""))
        if hw.sparse_halved:
            parts.append("<b>Dense figures; vendor sparse figures halved.</b>")
        elif entry.preset:
            parts.append("Dense figures (no sparse vendor figures were halved).")
        else:
            parts.append("Figures as entered: use dense peaks (halve any 'with sparsity' "
                         "vendor figure).")
        if hw.sources:
            links = []
            for source in hw.sources:
                text = escape_html(source)
                if source.startswith(("http://", "https://")):
                    links.append(f'<a href="{text}">{text}</a>')
                else:
                    links.append(text)
            parts.append("Sources:<br>" + "<br>".join(links))
        else:
            parts.append("No sources given.")
        self.provenance_label.setText("<p>" + "</p><p>".join(parts) + "</p>")
        self.notes_label.setText(hw.notes.strip())
        self.notes_label.setVisible(bool(hw.notes.strip()))
        self.revert_button.setVisible(bool(entry.preset))

    def _is_edited_preset(self, entry: HardwareEntry) -> bool:
        if not entry.preset:
            return False
        try:
            return get_preset(entry.preset) != entry.hardware
        except KeyError:
            return False

    # -- problems --------------------------------------------------------------------------

    def _set_problem(self, key: str, label: str, message: str) -> None:
        if message:
            self._problems[key] = f"{label}: {message}"
        else:
            self._problems.pop(key, None)
        self._show_problems()

    def _show_problems(self) -> None:
        text = "\n".join(self._problems.values())
        self.hint_label.setText(text)
        self.hint_label.setVisible(bool(text))

    def _clear_add_problem(self) -> None:
        if "add" in self._problems:
            set_invalid(self.add_value_edit, False)
            if self.add_name_combo.isEditable():
                set_invalid(self.add_name_combo, False)
            self._set_problem("add", "", "")

    # -- edits -----------------------------------------------------------------------------

    def _apply(self, hw: Hardware, text: str) -> None:
        entry = self._entry()
        if entry is None:
            return
        self.document.set_machine(entry.id, hw, text=text)
        self.document.seal()
        self._refresh_editor()  # also when nothing changed: show the text the usual way

    def _edited(self) -> Hardware | None:
        entry = self._entry()
        return entry.hardware.copy() if entry is not None else None

    def _set_name(self, name: str) -> None:
        hw = self._edited()
        if hw is not None:
            hw.name = name
            self._apply(hw, "Edit name")

    def _set_field(self, attribute: str, label: str, value: float | None) -> None:
        hw = self._edited()
        if hw is not None:
            setattr(hw, attribute, value)
            self._apply(hw, f"Edit {label}")

    def _set_ceiling(self, group: str, name: str, value: float) -> None:
        hw = self._edited()
        if hw is not None and name in getattr(hw, group):
            getattr(hw, group)[name] = value
            self._apply(hw, f"Edit {name} {_WHAT_OF[group]}")

    def _on_main_toggled(self, name: str, checked: bool) -> None:
        hw = self._edited()
        if checked and hw is not None and hw.main_memory != name:
            hw.main_memory = name
            self._apply(hw, "Edit main memory")

    def set_main_memory(self, name: str) -> None:
        self.main_radios[name].setChecked(True)

    def remove_ceiling(self, group: str, name: str) -> None:
        """Remove a precision, memory level or interconnect (not the last peak or level)."""
        hw = self._edited()
        if hw is None or name not in getattr(hw, group):
            return
        if group in ("compute", "memory") and len(getattr(hw, group)) == 1:
            return
        del getattr(hw, group)[name]
        if group == "memory" and hw.main_memory == name:
            hw.main_memory = next(iter(hw.memory))
        self._apply(hw, f"Remove {name}")

    def add_ceiling(self, group: str, name: str, value_text: str) -> bool:
        """Add a ceiling from typed text; refuses (with a hint) a bad name or value."""
        hw = self._edited()
        if hw is None:
            return False
        name = name.strip()
        problem_name = problem_value = ""
        if group == "compute":
            if name not in PRECISIONS:
                problem_name = f"unknown precision {name!r}; one of: {', '.join(PRECISIONS)}"
            elif name in hw.compute:
                problem_name = f"{name} already has a peak; edit it in the table"
        elif not _LEVEL_RE.match(name):
            problem_name = (f"name {name!r} must start with a letter and hold letters, digits, "
                            "_ or -" if name else "the new level needs a name, such as l2")
        elif name in hw.memory or name in hw.interconnect:
            problem_name = f"{name!r} is already a memory level or interconnect of this machine"
        value = None
        try:
            value = parse_positive(_UNIT_OF[group])(value_text)
        except ValueError as exc:
            problem_value = str(exc)
        if problem_name or problem_value:
            set_invalid(self.add_value_edit, bool(problem_value))
            if self.add_name_combo.isEditable():
                set_invalid(self.add_name_combo, bool(problem_name))
            what = {"compute": "New precision", "memory": "New memory level",
                    "interconnect": "New interconnect"}[group]
            self._set_problem("add", what, problem_name or problem_value)
            return False
        self._clear_add_problem()
        getattr(hw, group)[name] = value
        label = {"compute": "peak", "memory": "memory level", "interconnect": "interconnect"}
        self._apply(hw, f"Add {name} {label[group]}")
        self.add_value_edit.clear()
        if self.add_name_combo.isEditable():
            self.add_name_combo.setEditText("")
        return True

    def add_ceiling_from_form(self) -> bool:
        return self.add_ceiling(self.add_kind_combo.currentData(),
                                self.add_name_combo.currentText(), self.add_value_edit.text())

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

    def new_machine(self) -> int:
        """Add a custom machine with round starting figures, select it and focus its name."""
        names = {e.hardware.name for e in self.document.session.hardware}
        name, n = "Custom machine", 2
        while name in names:
            name, n = f"Custom machine {n}", n + 1
        hw = Hardware(name=name, compute=dict(NEW_MACHINE["compute"]),
                      memory=dict(NEW_MACHINE["memory"]), main_memory="hbm")
        hw_id = self.document.add_machine(hw)
        self.document.seal()
        self.select_machine(hw_id)
        self.name_edit.setFocus(Qt.FocusReason.OtherFocusReason)
        self.name_edit.selectAll()
        return hw_id

    def duplicate_current(self) -> int | None:
        entry = self._entry()
        if entry is None:
            return None
        hw = entry.hardware.copy(name=f"{entry.hardware.label} (copy)")
        hw_id = self.document.add_machine(hw, preset=entry.preset)
        self.document.seal()
        self.select_machine(hw_id)
        return hw_id

    def remove_current(self) -> None:
        entry = self._entry()
        if entry is not None:
            self.document.remove_machine(entry.id)
            self.document.seal()

    def revert_current(self) -> None:
        entry = self._entry()
        if entry is None or not entry.preset:
            return
        try:
            base = get_preset(entry.preset)
        except KeyError:
            return
        self._apply(base, "Revert to preset")


def _centered(widget: QWidget) -> QWidget:
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignCenter)
    return holder
