"""The form of one machine, under the machine list of the hardware panel.

Its name, a table of its ceilings (dense peak FLOP/s per precision, bandwidth per memory
level with the main one marked, interconnects), a row to add a ceiling, launch overhead,
efficiency and capacity, and its provenance; and the edits they make to the document. See
:mod:`workbench.ui.panels.hardware_panel` for how values are parsed, refused and applied.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.io.presets import get_preset, is_hand_made
from workbench.model.advisories import machine_advisories
from workbench.model.dtypes import PRECISIONS
from workbench.model.hardware import Hardware
from workbench.model.limits import OverBudget
from workbench.model.session import HardwareEntry
from workbench.ui.editors.hardware_fields import (
    FieldEdit,
    format_efficiency,
    format_optional,
    parse_efficiency,
    parse_name,
    parse_optional,
    parse_positive,
    rate_text,
    shortest_text,
)
from workbench.ui.widgets import escape_html, set_invalid

__all__ = ["MachineForm"]

_LEVEL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
_LEVEL_SUGGESTIONS = ("l2", "l1", "smem", "sram", "llc", "ddr", "hbm", "vmem")
_LINK_SUGGESTIONS = ("nvlink", "pcie", "ici", "xgmi", "ethernet", "infiniband")

#: (group, heading, unit, what one value is called)
_GROUPS = (
    ("compute", "Compute, matrix units — dense peak", "flop_rate", "peak"),
    ("vector_compute", "Compute, vector units — dense peak", "flop_rate", "vector peak"),
    ("memory", "Memory bandwidth", "bandwidth", "bandwidth"),
    ("interconnect", "Interconnect", "bandwidth", "bandwidth"),
)
_UNIT_OF = {group: unit for group, _, unit, _ in _GROUPS}
_PEAK_GROUPS = ("compute", "vector_compute")
#: pixels either side of a ceiling's name in its column
NAME_PADDING = 8
_WHAT_OF = {group: what for group, _, _, what in _GROUPS}


class MachineForm:
    """The machine form's part of :class:`~workbench.ui.panels.hardware_panel.HardwarePanel`.

    Mixed into the panel, which provides ``document``, ``current_entry()`` (the machine
    shown), ``value_edits``, ``main_radios``, ``remove_buttons``, ``editor_stack``,
    ``hint_label`` and ``revert_action``; the form owns the problems its fields report.
    """

    # -- the form -------------------------------------------------------------------------

    def _field(self, parse: Callable[[str], object], fmt: Callable[[object], str], key: str,
               label: str, name: str, tooltip: str, placeholder: str = "") -> FieldEdit:
        edit = FieldEdit(parse, fmt, self, tooltip)
        edit.setObjectName(name)
        if placeholder:
            edit.setPlaceholderText(placeholder)
        edit.problemChanged.connect(partial(self._set_problem, key, label))
        return edit

    def build_editor(self) -> QWidget:
        page = QWidget(self)
        page.setObjectName("machineEditor")
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.setSpacing(6)

        self.name_edit = self._field(self._parse_name, str, "name", "Name", "machineName",
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
        self.ceilings_table.setTabKeyNavigation(False)  # Tab goes on to the next field
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
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Fixed)  # (see _fit_table)
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
        self.add_kind_combo.addItem("Vector precision", "vector_compute")
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
            parse_optional("time", "launch overhead"), format_optional("time"), "overhead",
            "Launch overhead", "launchOverhead",
            "Fixed cost of a kernel launch; below it an operation is overhead-bound. "
            "SI time: 8 us, 5 µs; empty for none", "none (e.g. 8 us)")
        self.overhead_edit.committed.connect(partial(self._set_field, "launch_overhead",
                                                     "launch overhead"))
        self.efficiency_edit = self._field(
            parse_efficiency, format_efficiency, "efficiency", "Efficiency", "efficiency",
            "Derating for predicted times: the fraction of the roofline real kernels reach "
            "(0 < e ≤ 1; production kernels land at 0.65–0.85); empty for none",
            "none (e.g. 0.78)")
        self.efficiency_edit.committed.connect(partial(self._set_field, "efficiency",
                                                       "efficiency"))
        self.capacity_edit = self._field(
            parse_optional("bytes", "capacity"), format_optional("bytes"), "capacity",
            "Capacity", "capacity", "Main memory capacity (80 GB, 96 GiB); empty if unknown",
            "unknown (e.g. 80 GB)")
        self.capacity_edit.committed.connect(partial(self._set_field, "capacity", "capacity"))
        self.overhead_label = QLabel("Launch overhead", page)
        self.overhead_label.setObjectName("launchOverheadLabel")
        form.addRow(self.overhead_label, self.overhead_edit)
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

    def value_edit(self, group: str, name: str) -> FieldEdit:
        """The value field of a ceiling: ``value_edit("memory", "hbm")``."""
        return self.value_edits[(group, name)]

    def forget_structure(self) -> None:
        """The form's rows are built again at the next refresh (another machine, another
        session)."""
        self._structure: tuple | None = None

    def structure_shown(self) -> bool:
        """Whether the form's rows were built for a machine."""
        return self._structure is not None

    def reset_problems(self) -> None:
        """No problem reported (another machine is shown)."""
        self._problems: dict[str, str] = {}

    def problems(self) -> dict[str, str]:
        """The refusals shown at the moment, by field."""
        return dict(self._problems)

    # -- editor ----------------------------------------------------------------------------

    def refresh_editor(self, reset: bool = False) -> None:
        """Show the current machine; ``reset`` (another machine) also drops typed text."""
        entry = self.current_entry()
        if entry is None:
            self.editor_stack.setCurrentIndex(0)
            self._structure = None
            self._problems.clear()
            self._show_problems()
            return
        self.editor_stack.setCurrentIndex(1)
        hw = entry.hardware
        structure = (tuple(hw.compute), tuple(hw.vector_compute), tuple(hw.memory),
                     tuple(hw.interconnect), tuple(hw.measured_figures()))
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
        status = hw.figure_status("launch_overhead")
        self.overhead_label.setText(f"Launch overhead ({status})")
        self.overhead_label.setToolTip(
            "A measured launch overhead for this machine" if status == "measured" else
            "A rule of thumb, not a hardware figure: kernel launch plus dispatch is measured "
            "at 5–30 µs depending on driver, runtime and kernel")
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
            if not values and group in ("interconnect", "vector_compute"):
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
            if group in _PEAK_GROUPS:
                order = {p: i for i, p in enumerate(PRECISIONS)}
                names.sort(key=lambda n: order.get(n, len(order)))
            for name in names:
                row = table.rowCount()
                table.insertRow(row)
                table.setRowHeight(row, row_height)
                measured = hw.is_measured(f"{group}.{name}")
                label = QTableWidgetItem(f"{name} · measured" if measured else name)
                label.setFlags(Qt.ItemFlag.ItemIsEnabled)
                label.setToolTip(self._ceiling_tip(group, name) + (
                    "\nMeasured (a published benchmark), not a vendor specification: see the "
                    "sources" if measured else ""))
                table.setItem(row, 0, label)
                fmt = (partial(rate_text, precision=name) if group in _PEAK_GROUPS
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
                                  f"{'precision' if group in _PEAK_GROUPS else 'level'}"
                                  if last else f"Remove {name}")
                button.clicked.connect(partial(self.remove_ceiling, group, name))
                table.setCellWidget(row, 3, button)
                self.remove_buttons[(group, name)] = button
        # Tab goes down the rows just after the name, as they are shown: made after the
        # fields below the table, they would come last
        previous: QWidget = self.name_edit
        for key, edit in self.value_edits.items():
            row = (edit, self.main_radios.get(key[1]) if key[0] == "memory" else None,
                   self.remove_buttons[key])
            for widget in row:
                if widget is not None:
                    QWidget.setTabOrder(previous, widget)
                    previous = widget
        self._fit_table()
        self._show_problems()
        if focused in self.value_edits:
            self.value_edits[focused].setFocus(Qt.FocusReason.OtherFocusReason)

    def _ceiling_tip(self, group: str, name: str) -> str:
        if group == "compute":
            return (f"Dense peak of the matrix units (tensor cores, MXU, AMX) for {name} in "
                    "FLOP/s (or OP/s): e.g. 989 TFLOP/s. GEMM and attention meet it. Vendor "
                    "figures 'with sparsity' must be halved.")
        if group == "vector_compute":
            return (f"Peak of the vector units (CUDA cores, VPU, AVX) for {name} in FLOP/s: "
                    "e.g. 134 TFLOP/s. Elementwise work, norms, softmax and reductions meet "
                    "it.")
        if group == "memory":
            return f"Bandwidth of {name} in B/s: e.g. 3.35 TB/s, 819 GB/s"
        return f"Bandwidth of the {name} link in B/s, per direction: e.g. 450 GB/s"

    def _fit_table(self) -> None:
        table = self.ceilings_table
        # the names' column as wide as its names, not as the group titles that span the
        # row (sized to those, it left the values "67 TFL…" cut)
        header = table.horizontalHeader()
        metrics = table.fontMetrics()
        names = [table.item(r, 0).text() for r in range(table.rowCount())
                 if table.columnSpan(r, 0) == 1 and table.item(r, 0) is not None]
        width = max([metrics.horizontalAdvance(n) for n in names]
                    + [header.sectionSizeHint(0)]) + 2 * NAME_PADDING
        header.resizeSection(0, width)
        height = table.horizontalHeader().height() + 2 * table.frameWidth()
        height += sum(table.rowHeight(r) for r in range(table.rowCount()))
        table.setFixedHeight(height)

    def _fill_add_names(self) -> None:
        entry = self.current_entry()
        group = self.add_kind_combo.currentData()
        combo = self.add_name_combo
        blocker = QSignalBlocker(combo)
        keep = combo.currentText() if combo.isEditable() else ""
        combo.clear()
        if entry is None:
            del blocker
            return
        hw = entry.hardware
        if group in _PEAK_GROUPS:
            combo.setEditable(False)
            combo.addItems([p for p in PRECISIONS if p not in getattr(hw, group)])
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
        self.add_button.setEnabled(group not in _PEAK_GROUPS or combo.count() > 0)
        del blocker

    def _fill_provenance(self, entry: HardwareEntry) -> None:
        hw = entry.hardware
        parts = []
        meta = " · ".join(m for m in (hw.vendor if hw.vendor != "none" else "",
                                      hw.kind if hw.kind != "custom" else "") if m)
        if entry.preset:
            edited = self.is_edited_preset(entry)
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
        if is_hand_made(entry):
            for advisory in machine_advisories(hw):
                parts.append(f"<b>⚠ {escape_html(advisory.message)}</b>")
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
        if hw.calibration is not None:
            parts.append("Calibrated prediction figures: "
                         f"{escape_html(hw.calibration.source or 'given in this session')}")
        else:
            parts.append("Calibrated prediction figures: assumed (the H100 SXM's)")
        self.provenance_label.setText("<p>" + "</p><p>".join(parts) + "</p>")
        self.notes_label.setText(hw.notes.strip())
        self.notes_label.setVisible(bool(hw.notes.strip()))
        self.revert_button.setVisible(bool(entry.preset))

    def is_edited_preset(self, entry: HardwareEntry) -> bool:
        if not entry.preset:
            return False
        try:
            hw = entry.hardware  # the session's prediction choice is not an edit
            return get_preset(entry.preset).copy(prediction=hw.prediction,
                                                 launches=hw.launches) != hw
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

    def apply_machine(self, hw: Hardware, text: str) -> None:
        entry = self.current_entry()
        if entry is None:
            return
        try:
            self.document.set_machine(entry.id, hw, text=text)
        except OverBudget as exc:  # (a session file Save would refuse)
            self.refresh_editor()
            self._set_problem("budget", "Not applied", str(exc))
            return
        self._set_problem("budget", "", "")
        self.document.seal()
        self.refresh_editor()  # also when nothing changed: show the text the usual way

    def _edited(self) -> Hardware | None:
        entry = self.current_entry()
        return entry.hardware.copy() if entry is not None else None

    def _parse_name(self, text: str) -> str:
        """A machine's name: one a session file holds, and no other machine's."""
        name = parse_name(text)
        entry = self.current_entry()
        problem = self.document.machine_name_problem(entry.id if entry else None, name)
        if problem is not None:
            raise ValueError(problem)
        return name

    def _set_name(self, name: str) -> None:
        hw = self._edited()
        if hw is not None:
            hw.name = name
            self.apply_machine(hw, "Edit name")

    def _set_field(self, attribute: str, label: str, value: float | None) -> None:
        hw = self._edited()
        if hw is not None:
            setattr(hw, attribute, value)
            self.apply_machine(hw, f"Edit {label}")

    def _set_ceiling(self, group: str, name: str, value: float) -> None:
        hw = self._edited()
        if hw is not None and name in getattr(hw, group):
            getattr(hw, group)[name] = value
            self.apply_machine(hw, f"Edit {name} {_WHAT_OF[group]}")

    def _on_main_toggled(self, name: str, checked: bool) -> None:
        hw = self._edited()
        if checked and hw is not None and hw.main_memory != name:
            hw.main_memory = name
            self.apply_machine(hw, "Edit main memory")

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
        self.apply_machine(hw, f"Remove {name}")

    def add_ceiling(self, group: str, name: str, value_text: str) -> bool:
        """Add a ceiling from typed text; refuses (with a hint) a bad name or value."""
        hw = self._edited()
        if hw is None:
            return False
        name = name.strip()
        problem_name = problem_value = ""
        if group in _PEAK_GROUPS:
            if name not in PRECISIONS:
                problem_name = f"unknown precision {name!r}; one of: {', '.join(PRECISIONS)}"
            elif name in getattr(hw, group):
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
            what = {"compute": "New precision", "vector_compute": "New vector precision",
                    "memory": "New memory level", "interconnect": "New interconnect"}[group]
            self._set_problem("add", what, problem_name or problem_value)
            return False
        self._clear_add_problem()
        getattr(hw, group)[name] = value
        label = {"compute": "peak", "vector_compute": "vector peak", "memory": "memory level",
                 "interconnect": "interconnect"}
        self.apply_machine(hw, f"Add {name} {label[group]}")
        self.add_value_edit.clear()
        if self.add_name_combo.isEditable():
            self.add_name_combo.setEditText("")
        return True

    def add_ceiling_from_form(self) -> bool:
        return self.add_ceiling(self.add_kind_combo.currentData(),
                                self.add_name_combo.currentText(), self.add_value_edit.text())


def _centered(widget: QWidget) -> QWidget:
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget, 0, Qt.AlignmentFlag.AlignCenter)
    return holder
