"""The editor's "Sweep" section: one numeric parameter of the operation over a list or a range.

The section sits under the operation's form (:class:`~workbench.ui.editors.operation_editor.OperationEditor`
places it). An enable checkbox gives the operation a sweep; a combo picks the parameter (the
numeric parameters of its kind); a mode picks an explicit list ("1, 16, 256") or a linear or
log range (start, stop, number of values). Every edit applies at once through
:meth:`Document.set_sweep`, so the chart draws the path while typing; consecutive keystrokes
merge into one undo step and Return / focus out ends it, while a pick in a combo or a click on
the checkbox is a step of its own. Input the model refuses (not a number, below the
parameter's minimum, a reversed log range, too many values…) is never applied: the field gets
a red frame, its tooltip and the hint under the section say why, and finishing the gesture
puts the document's sweep back.

Under the fields: the number of values, and where the operation crosses each machine's ridge
inside the sweep's span (:func:`~workbench.model.sweeps.sweep_crossings`: the exact real-valued
crossing, and for whole-number parameters the first whole value on the compute-bound side).
The crossings are computed only while the section is shown.

Public API::

    section = SweepSection(workspace)
    section.set_operation(op_id)            # follow an operation (None: nothing)
    section.load()                          # show the document's sweep (after undo, …)
    section.refresh()                       # the operation or a machine changed
    section.enable_box, section.param_combo, section.mode_combo,
    section.values_edit, section.start_edit, section.stop_edit, section.num_edit
    section.error()                         # the refusal shown now, or ""
    section.points_text(), section.crossings_text()
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from workbench.model.chart.sweep_cache import cached_sweep
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.limits import MAX_SWEEP_POINTS
from workbench.model.operations import Param
from workbench.model.rules import compute_bound
from workbench.model.units import QuantityError, format_number, parse_quantity
from workbench.ui.bridge import Workspace
from workbench.ui.widgets import no_wheel_filter, set_invalid

if TYPE_CHECKING:
    from workbench.model.sweeps import Sweep

# The sweeps' module is imported by the methods that make or evaluate a sweep: the editor is
# built at start-up, most often for an operation without one.

__all__ = ["SweepSection", "parse_values", "MODES", "format_value"]

#: (key, label) of the modes: an explicit list, a linear range, a log range.
MODES = (("list", "List of values"), ("linear", "Linear range"), ("log", "Log range"))
_SPLIT_RE = re.compile(r"[,;]")


def format_value(value: float) -> str:
    """A value as typed: whole numbers in full, others with up to 15 significant figures."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return f"{value:.15g}"


def _unit(param: Param) -> str:
    return (param.unit or "count") if param.type == "quantity" else "count"


def _number(text: str, param: Param) -> float:
    return parse_quantity(text.strip(), _unit(param))


def parse_values(text: str, param: Param) -> list[float]:
    """Values separated by commas or semicolons ("1, 16, 256"; plain numbers may also be
    separated by spaces). Raises ``ValueError`` naming the first value that is not a number."""
    out: list[float] = []
    for token in _SPLIT_RE.split(text):
        token = token.strip()
        if not token:
            continue
        try:
            out.append(_number(token, param))
            continue
        except QuantityError as exc:
            parts = token.split()
            if len(parts) < 2:
                detail = f" ({exc})" if param.type == "quantity" else ""
                raise ValueError(f"{token!r} is not a number{detail}") from None
        for part in parts:
            try:
                out.append(_number(part, param))
            except QuantityError:
                raise ValueError(f"{part!r} is not a number") from None
    if not out:
        raise ValueError("type at least one value (e.g. 1, 16, 256)")
    if len(out) > MAX_SWEEP_POINTS:
        raise ValueError(f"at most {MAX_SWEEP_POINTS} values, got {len(out)}")
    # (a count takes whole values, as a session file holds them: 1.5 was taken, rounded when
    # drawn, and the file saved then could not be opened again)
    broken = next((v for v in out if param.type == "int" and not float(v).is_integer()), None)
    if broken is not None:
        raise ValueError(f"{param.label} takes whole numbers, got {format_number(broken)}")
    return out


class SweepSection(QGroupBox):
    """The "Sweep" group box of the operation editor (see the module docstring)."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__("Sweep", parent)
        self.setObjectName("sweep_section")
        self.workspace = workspace
        self.document = workspace.document
        self._op_id: int | None = None
        self._error = ""  # the refusal shown now
        self._error_widget: QWidget | None = None
        self._note = ""
        self._applying = False
        self._dirty = True  # crossings need recomputing
        self._crossings = ""
        self._points_key: tuple[Any, ...] | None = None
        self._span: tuple[float, float] | None = None
        # crossings are recomputed once typing pauses, not on every keystroke
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(40)
        self._timer.timeout.connect(self._flush)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(6)
        self.enable_box = QCheckBox("Sweep a parameter (drawn as a path)")
        self.enable_box.setObjectName("sweep_enable")
        self.enable_box.setToolTip("Evaluate this operation over a list or a range of one "
                                   "parameter; the chart draws the values as a path and marks "
                                   "where it crosses each machine's ridge.")
        self.enable_box.toggled.connect(self._on_enable)
        outer.addWidget(self.enable_box)

        self._fields = QWidget()
        form = QFormLayout(self._fields)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.param_combo = QComboBox()
        self.param_combo.setObjectName("sweep_param")
        self.param_combo.setToolTip("The swept parameter (numeric parameters of this kind)")
        # as wide as the form allows, not as its longest parameter's text (the list opens
        # wide enough to read every entry)
        self.param_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.param_combo.setMinimumContentsLength(16)
        self.param_combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.param_combo.installEventFilter(no_wheel_filter())
        self.param_combo.currentIndexChanged.connect(lambda _i: self._on_discrete())
        form.addRow("Parameter", self.param_combo)
        self.mode_combo = QComboBox()
        self.mode_combo.setObjectName("sweep_mode")
        self.mode_combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.mode_combo.installEventFilter(no_wheel_filter())
        for key, label in MODES:
            self.mode_combo.addItem(label, key)
        self.mode_combo.setToolTip("An explicit list of values, or num values from start to "
                                   "stop (both included) evenly spaced on a linear or log scale")
        self.mode_combo.currentIndexChanged.connect(self._on_mode)
        form.addRow("Values", self.mode_combo)
        self.values_edit = QLineEdit()
        self.values_edit.setObjectName("sweep_values")
        self.values_edit.setPlaceholderText("e.g. 1, 16, 256")
        self._values_tip = ("Values separated by commas: 1, 16, 256 (whole-number parameters "
                            "are rounded; duplicates dropped)")
        self.values_edit.setToolTip(self._values_tip)
        form.addRow("List", self.values_edit)
        self._range_row = QWidget()
        row = QHBoxLayout(self._range_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.start_edit = QLineEdit()
        self.start_edit.setObjectName("sweep_start")
        self.start_edit.setPlaceholderText("start")
        self.stop_edit = QLineEdit()
        self.stop_edit.setObjectName("sweep_stop")
        self.stop_edit.setPlaceholderText("stop")
        self.num_edit = QLineEdit()
        self.num_edit.setObjectName("sweep_num")
        self.num_edit.setPlaceholderText("num")
        self._range_tips = {self.start_edit: "First value (included)",
                            self.stop_edit: "Last value (included; may be below start)",
                            self.num_edit: f"Number of values, 1 to {MAX_SWEEP_POINTS}"}
        for edit, label in ((self.start_edit, "from"), (self.stop_edit, "to"),
                            (self.num_edit, "values")):
            edit.setToolTip(self._range_tips[edit])
            if label != "from":
                row.addWidget(QLabel(label))
            row.addWidget(edit, 1 if edit is not self.num_edit else 0)
        self.num_edit.setMaximumWidth(80)
        form.addRow("Range", self._range_row)
        self._form = form
        for edit in (self.values_edit, self.start_edit, self.stop_edit, self.num_edit):
            edit.textEdited.connect(lambda _t, e=edit: self._on_text(e))
            edit.editingFinished.connect(self._on_finished)
        outer.addWidget(self._fields)

        self.hint = QLabel("")
        self.hint.setObjectName("sweep_hint")
        self.hint.setWordWrap(True)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setStyleSheet("QLabel#sweep_hint { color: #c62828; }")
        self.hint.setVisible(False)
        outer.addWidget(self.hint)
        self.points_label = QLabel("")
        self.points_label.setObjectName("sweep_points")
        outer.addWidget(self.points_label)
        self.crossings_label = QLabel("")
        self.crossings_label.setObjectName("sweep_crossings")
        self.crossings_label.setWordWrap(True)
        self.crossings_label.setTextFormat(Qt.TextFormat.PlainText)
        self.crossings_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        outer.addWidget(self.crossings_label)
        self._show_mode("list")

    # -- public ----------------------------------------------------------------------------

    def set_operation(self, op_id: int | None) -> None:
        self._op_id = op_id
        self._clear_error()
        self._note = ""
        self._fill_params()
        self.load()

    def error(self) -> str:
        return self._error

    def points_text(self) -> str:
        return self.points_label.text()

    def crossings_text(self) -> str:
        self._flush(force=True)
        return self._crossings

    def load(self) -> None:
        """Show the document's sweep. A change made by this section keeps what is typed; a
        change from elsewhere (undo, redo, a reopened session) replaces it."""
        if self._op_id is None:
            return
        if self._applying:
            self.refresh()
            return
        sweep = self._entry().sweep
        self._clear_error()
        widgets = (self.enable_box, self.param_combo, self.mode_combo)
        for w in widgets:
            w.blockSignals(True)
        try:
            self.enable_box.setChecked(sweep is not None)
            self._fields.setEnabled(sweep is not None)
            if sweep is not None:
                index = self.param_combo.findData(sweep.param)
                if index < 0:
                    self.param_combo.addItem(f"{sweep.param} (not numeric here)", sweep.param)
                    index = self.param_combo.count() - 1
                self.param_combo.setCurrentIndex(index)
                mode = sweep.range.scale if sweep.range is not None else "list"
                self.mode_combo.setCurrentIndex(self.mode_combo.findData(mode))
                self._show_mode(mode)
                if not self._means(sweep):
                    self._write(sweep)
        finally:
            for w in widgets:
                w.blockSignals(False)
        self.refresh()

    def refresh(self) -> None:
        """The operation, a machine or the sweep changed: recount points and crossings (now
        if shown, else when next shown)."""
        self._dirty = True
        self._update_points()
        if self.isVisible():
            self._timer.start()

    # -- reading the widgets ---------------------------------------------------------------

    def _entry(self):
        return self.document.operation(self._op_id)

    def _param(self) -> Param | None:
        name = self.param_combo.currentData()
        if name is None or self._op_id is None:
            return None
        try:
            return self._entry().operation.spec.param(name)
        except KeyError:
            return None

    def _mode(self) -> str:
        return self.mode_combo.currentData() or "list"

    def _candidate(self) -> tuple[Sweep | None, str, QWidget | None]:
        """The sweep the widgets describe, or (None, problem, widget to mark)."""
        from workbench.model.sweeps import Range, Sweep, SweepError  # (see the imports)

        param = self._param()
        if param is None:
            return None, "choose a parameter", self.param_combo
        mode = self._mode()
        try:
            if mode == "list":
                try:
                    values = parse_values(self.values_edit.text(), param)
                except ValueError as exc:
                    return None, str(exc), self.values_edit
                sweep = Sweep(param.name, values)
                widget: QWidget = self.values_edit
            else:
                bounds = []
                for edit, what in ((self.start_edit, "start"), (self.stop_edit, "stop")):
                    try:
                        bounds.append(_number(edit.text(), param))
                    except QuantityError as exc:
                        return None, f"{what}: {exc}", edit
                try:
                    num = parse_quantity(self.num_edit.text().strip(), "count")
                except QuantityError as exc:
                    return None, f"number of values: {exc}", self.num_edit
                if not num.is_integer():
                    return None, f"number of values must be whole, got {format_number(num)}", \
                        self.num_edit
                try:
                    rng = Range(bounds[0], bounds[1], int(num), mode)
                except SweepError as exc:
                    message = str(exc)
                    if message.startswith("num"):
                        target: QWidget = self.num_edit
                    elif "equal" in message or (mode == "log" and bounds[0] > 0):
                        target = self.stop_edit
                    else:
                        target = self.start_edit
                    return None, message, target
                sweep = Sweep(param.name, rng)
                widget = self.start_edit
            sweep.values_for(self._entry().operation)
        except SweepError as exc:
            return None, str(exc), widget
        problem = self.document.sweep_problem(self._op_id, sweep)  # (the session's budget)
        if problem:
            return None, problem, widget
        return sweep, "", None

    def _means(self, sweep: Sweep) -> bool:
        """Whether the widgets already describe ``sweep`` (so typed text is left alone)."""
        candidate, _problem, _w = self._candidate()
        return candidate is not None and candidate.param == sweep.param and \
            candidate.describe() == sweep.describe() and candidate.spec == sweep.spec

    def _write(self, sweep: Sweep) -> None:
        rng = sweep.range
        if rng is None:
            self.values_edit.setText(", ".join(format_value(v) for v in sweep.values or ()))
        else:
            self.start_edit.setText(format_value(rng.start))
            self.stop_edit.setText(format_value(rng.stop))
            self.num_edit.setText(str(rng.num))

    # -- edits -----------------------------------------------------------------------------

    def _on_enable(self, checked: bool) -> None:
        if self._op_id is None:
            return
        self._fields.setEnabled(checked)
        if not checked:
            self._clear_error()
            self._apply(None, discrete=True)
            return
        candidate, _problem, _w = self._candidate()
        if candidate is None:
            self._fill_defaults()
        self._propose(discrete=True)

    def _on_discrete(self) -> None:
        if self._op_id is None or not self.enable_box.isChecked():
            return
        self._propose(discrete=True)

    def _on_mode(self, _index: int) -> None:
        mode = self._mode()
        if self._op_id is not None:
            self._convert_fields(mode)
        self._show_mode(mode)
        self._on_discrete()

    def _on_text(self, _edit: QLineEdit) -> None:
        if self._op_id is None or not self.enable_box.isChecked():
            return
        self._propose(discrete=False)

    def _on_finished(self) -> None:
        """End of a typing gesture: one undo step; refused text is put back."""
        self.document.seal()
        if self._op_id is None or not self._error:
            return
        message = self._error
        self._clear_error()
        sweep = self._entry().sweep
        if sweep is not None:
            self.load()
            self._note = f"{message} — kept {sweep.describe()}."
        else:
            self._note = f"{message} — no sweep applied."
        self._update_hint()

    def _propose(self, discrete: bool) -> None:
        candidate, problem, widget = self._candidate()
        if candidate is None:
            self._refuse(problem, widget)
            return
        self._clear_error()
        self._note = ""
        self._update_hint()
        self._apply(candidate, discrete)

    def _apply(self, sweep: Sweep | None, discrete: bool) -> None:
        self._applying = True
        try:
            if discrete:
                self.document.seal()
            self.document.set_sweep(self._op_id, sweep)
            if discrete:
                self.document.seal()
        finally:
            self._applying = False
        self.refresh()

    def _refuse(self, message: str, widget: QWidget | None) -> None:
        self._clear_error()
        self._error = message
        self._note = ""
        if widget is not None:
            self._error_widget = widget
            set_invalid(widget, True)
            widget.setToolTip(f"Not applied: {message}")
        self._update_hint()

    def _clear_error(self) -> None:
        self._error = ""
        widget, self._error_widget = self._error_widget, None
        if widget is not None:
            set_invalid(widget, False)
            if widget is self.values_edit:
                widget.setToolTip(self._values_tip)
            elif widget in self._range_tips:
                widget.setToolTip(self._range_tips[widget])
            elif widget is self.param_combo:
                widget.setToolTip("The swept parameter (numeric parameters of this kind)")
        self._update_hint()

    def _update_hint(self) -> None:
        lines = [f"Sweep not applied: {self._error}"] if self._error else []
        if self._note:
            lines.append(self._note)
        text = "\n".join(lines)
        if self.hint.text() != text:
            self.hint.setText(text)
        self.hint.setVisible(bool(text))

    # -- helpers ---------------------------------------------------------------------------

    def _fill_params(self) -> None:
        combo = self.param_combo
        combo.blockSignals(True)
        combo.clear()
        if self._op_id is not None:
            for p in self._entry().operation.spec.params:
                if p.numeric:
                    combo.addItem(f"{p.label} ({p.name})" if p.label.lower() != p.name
                                  else p.name, p.name)
                    combo.setItemData(combo.count() - 1, p.doc, Qt.ItemDataRole.ToolTipRole)
        combo.blockSignals(False)
        self.setEnabled(combo.count() > 0 or self._op_id is None)

    def _current_value(self, param: Param) -> float:
        op = self._entry().operation
        value = op.spec.resolve(op.params).get(param.name)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
        return max(float(param.minimum), 1.0)

    def _fill_defaults(self) -> None:
        """Sensible values for a new sweep: a log range around the parameter's value."""
        param = self._param()
        if param is None:
            return
        value = self._current_value(param)
        low = max(float(param.minimum), value / 16)
        high = max(value * 16, low * 2)
        if param.type == "int":
            low, high = float(math.ceil(low)), float(math.floor(high))
        self.start_edit.setText(format_value(low))
        self.stop_edit.setText(format_value(high))
        self.num_edit.setText("9")
        if not self.values_edit.text().strip():
            self.values_edit.setText(", ".join(format_value(v) for v in (
                np.rint(np.geomspace(low, high, 5)) if param.type == "int"
                else np.geomspace(low, high, 5))))

    def _convert_fields(self, mode: str) -> None:
        """Carry what is typed over to the new mode (a list's ends become a range's)."""
        param = self._param()
        if param is None:
            return
        if mode == "list":
            sweep = self._entry().sweep
            if sweep is not None and sweep.range is not None and sweep.range.num <= 32:
                values = sweep.values_for(self._entry().operation)
                self.values_edit.setText(", ".join(format_value(v) for v in values))
            return
        try:
            values = parse_values(self.values_edit.text(), param)
        except ValueError:
            values = []
        if not self.start_edit.text().strip() and len(values) >= 2:
            self.start_edit.setText(format_value(min(values)))
            self.stop_edit.setText(format_value(max(values)))
            self.num_edit.setText(str(len(values)))
        if mode == "log":
            for edit in (self.start_edit, self.stop_edit):
                try:
                    below_zero = _number(edit.text(), param) <= 0
                except QuantityError:
                    below_zero = False  # (a refused text is marked where it stands)
                if below_zero:
                    edit.setText(format_value(max(float(param.minimum), 1.0)))

    def _show_mode(self, mode: str) -> None:
        self._form.setRowVisible(self.values_edit, mode == "list")
        self._form.setRowVisible(self._range_row, mode != "list")

    def _update_points(self) -> None:
        """The number of values and their span (depend on the sweep and the parameter's
        type and minimum only: kept while other parameters are edited)."""
        text = ""
        sweep = self._entry().sweep if self._op_id is not None else None
        if sweep is None:
            self._points_key, self._span = None, None
        else:
            from workbench.model.sweeps import SweepError  # (see the note at the imports)

            op = self._entry().operation
            key = (sweep, op.kind)
            if key == self._points_key:
                return
            self._points_key = key
            try:
                values = sweep.values_for(op)
                n = len(values)
                self._span = (float(values.min()), float(values.max()))
                text = f"{n} point{'s' * (n != 1)}: {sweep.describe()}"
            except SweepError as exc:
                self._span = None
                text = f"Cannot sweep: {exc}"
        if self.points_label.text() != text:
            self.points_label.setText(text)
        self.points_label.setVisible(bool(text))

    def _flush(self, force: bool = False) -> None:
        if not self._dirty or (not force and not self.isVisible()):
            return
        self._timer.stop()
        self._dirty = False
        self._crossings = self._compute_crossings()
        if self.crossings_label.text() != self._crossings:
            self.crossings_label.setText(self._crossings)
        self.crossings_label.setVisible(bool(self._crossings))

    def _compute_crossings(self) -> str:
        if self._op_id is None:
            return ""
        entry = self._entry()
        sweep = entry.sweep
        if sweep is None:
            return ""
        op = entry.operation
        self._update_points()
        if self._span is None:
            return ""
        lo, hi = self._span
        lines = ["Ridge crossings (T_math = T_mem):"]
        for hw_entry in self.document.session.hardware:
            hw = hw_entry.hardware
            try:
                # (the chart and the sweep plot find the same ones: found once, kept)
                found = cached_sweep(op, hw, sweep)[1] if lo < hi else []
            except COUNTING_ERRORS as exc:  # shown in the list
                lines.append(f"  {hw.label}: cannot evaluate ({exc})")
                continue
            if not found:
                lines.append(f"  {hw.label}: {self._one_side(op, hw, sweep, lo, hi)}")
                continue
            for c in found:
                turns = "compute" if c.direction == "to_compute" else "memory"
                text = f"  {hw.label}: {c.param} = {c.value:.6g}, turns {turns}-bound"
                if c.integer is not None:
                    side = ("first compute-bound whole value" if c.direction == "to_compute"
                            else "last compute-bound whole value")
                    text += f" ({side}: {c.integer})"
                lines.append(text)
        if not self.document.session.hardware:
            lines.append("  no machine in the session")
        return "\n".join(lines)

    @staticmethod
    def _one_side(op: Any, hw: Any, sweep: Sweep, lo: float, hi: float) -> str:
        span = f"{format_value(lo)} … {format_value(hi)}"
        if lo == hi:
            return f"one value ({span}): no crossing"
        from workbench.model.sweeps import Sweep, evaluate_sweep  # (see the note at the imports)

        try:
            result = evaluate_sweep(op, hw, Sweep(sweep.param, [lo]))
            compute = bool(compute_bound(result["t_math_s"][0], result["t_mem_s"][0]))
        except COUNTING_ERRORS:  # (the crossings above say why)
            return f"no crossing in {span}"
        side = "compute" if compute else "memory"
        return f"no crossing in {span} ({side}-bound throughout)"

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._flush()
