"""The steps of an elementwise chain: a small editor of its own, and its form field."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.model.limits import MAX_STEPS
from workbench.model.operations import STEP_OPS, Param
from workbench.ui.editors.fields import Field, FieldOwner, tooltip
from workbench.ui.widgets import no_wheel_filter, set_invalid

__all__ = ["StepsEditor", "StepsField"]


class StepsEditor(QWidget):
    """The steps of an elementwise chain: op, extra inputs, FLOPs override, and buttons to
    add, remove and reorder. Each change proposes the whole list through ``propose``."""

    def __init__(self, propose: Callable[..., None], finish: Callable[[], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("steps_editor")
        self._propose = propose
        self._finish = finish
        self._steps: list[dict[str, Any]] = []
        self.rows: list[tuple[QComboBox, QLineEdit, QLineEdit]] = []
        self._buttons: list[tuple[QToolButton, QToolButton, QToolButton]] = []
        self._ops = QStandardItemModel(self)  # the ops of every row's combo box
        for name, (flops, what) in STEP_OPS.items():
            item = QStandardItem(name)
            item.setData(name, Qt.ItemDataRole.UserRole)
            item.setToolTip(f"{what} — {flops:g} FLOP per element")
            self._ops.appendRow(item)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(6)
        self.grid.setVerticalSpacing(4)
        self.grid.setColumnStretch(2, 3)
        self.grid.setColumnStretch(3, 1)
        outer.addLayout(self.grid)
        bottom = QHBoxLayout()
        self.add_button = QToolButton()
        self.add_button.setObjectName("step_add")
        self.add_button.setText("+ Add step")
        self.add_button.setToolTip("Add a step at the end of the chain")
        self.add_button.clicked.connect(self.add_step)
        bottom.addWidget(self.add_button)
        bottom.addStretch(1)
        outer.addLayout(bottom)
        self._header()

    def _header(self) -> None:
        for column, (text, tip) in enumerate((
            ("#", "Order of the steps"),
            ("Op", "What the step computes; its default FLOPs per element are in its tooltip"),
            ("Extra inputs", "Tensors read besides the running value, comma-separated "
                             "(e.g. “r” for a residual)"),
            ("FLOP/elem", "FLOPs per element; empty: the op's default"),
        )):
            label = QLabel(text)
            label.setToolTip(tip)
            font = label.font()
            font.setPointSizeF(font.pointSizeF() * 0.9)
            label.setFont(font)
            label.setEnabled(False)  # draws in the disabled (dim) text colour
            label.setWordWrap(True)  # "Extra inputs" on two lines in a narrow dock
            self.grid.addWidget(label, 0, column)

    # -- data ------------------------------------------------------------------------------

    def steps(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._steps)

    def load(self, steps: list[dict[str, Any]] | None) -> None:
        steps = copy.deepcopy(list(steps or []))
        self._steps = steps
        if len(steps) != len(self.rows):
            self._resize()
            for i, step in enumerate(steps):
                self._load_row(i, step, force=True)
            return
        for i, step in enumerate(steps):
            self._load_row(i, step)

    def reset(self) -> None:
        """Show the last loaded steps again, replacing whatever was typed."""
        for i, step in enumerate(self._steps):
            self._load_row(i, step, force=True)

    def _load_row(self, i: int, step: dict[str, Any], force: bool = False) -> None:
        combo, inputs, flops = self.rows[i]
        combo.blockSignals(True)
        index = combo.findData(step.get("op"))
        if index >= 0:
            combo.setCurrentIndex(index)
        combo.blockSignals(False)
        text = ", ".join(step.get("inputs") or [])
        if inputs.text() != text if force else _names(inputs.text()) != (step.get("inputs")
                                                                         or []):
            inputs.setText(text)
        default = STEP_OPS.get(step.get("op"), (1, ""))[0]
        flops.setPlaceholderText(f"{default:g}")
        value = step.get("flops")
        current = flops.text().strip()
        same = (value is None and not current) or (value is not None and current
                                                    and _float_or_none(current) == float(value))
        shown = "" if value is None else f"{float(value):g}"
        if flops.text() != shown if force else not same:
            flops.setText(shown)
        for widget in (inputs, flops):
            set_invalid(widget, False)

    def _resize(self) -> None:
        """As many rows as steps: rows are added or removed at the end, the others (and
        whatever has the focus in them) kept."""
        count = len(self._steps)
        for i in reversed(range(count, len(self.rows))):
            for column in range(5):
                item = self.grid.itemAtPosition(i + 1, column)
                widget = item.widget() if item else None
                if widget is None:
                    continue
                self.grid.removeWidget(widget)
                widget.hide()
                for child in [widget, *widget.findChildren(QWidget)]:
                    child.setObjectName("")  # gone for findChild even before deletion
                widget.deleteLater()  # not now: a row's own button may be what was clicked
            del self.rows[i], self._buttons[i]
        new = range(len(self.rows), count)
        # rows added to a shown editor each lay out the whole grid again as they appear:
        # many are added hidden, and shown (laid out) once
        focus = QApplication.focusWidget()
        hide = len(new) > 1 and self.isVisible() and not (focus and self.isAncestorOf(focus))
        if hide:
            self.hide()
        for i in new:
            self._add_row(i)
        if hide:
            self.show()
        for i, (up, down, remove) in enumerate(self._buttons):
            up.setEnabled(i > 0)
            down.setEnabled(i < count - 1)
            remove.setEnabled(count > 1)
        full = count >= MAX_STEPS
        self.add_button.setEnabled(not full)
        self.add_button.setToolTip(f"A chain has at most {MAX_STEPS} steps" if full
                                   else "Add a step at the end of the chain")

    def _add_row(self, i: int) -> None:
        row = i + 1
        number = QLabel(str(row))
        number.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        number.setEnabled(False)
        self.grid.addWidget(number, row, 0)
        combo = QComboBox()
        combo.setObjectName(f"step_op_{i}")
        combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        combo.installEventFilter(no_wheel_filter())
        combo.setModel(self._ops)
        combo.setToolTip("Step operation (hover an entry for its FLOPs per element)")
        combo.currentIndexChanged.connect(lambda _=0, r=i: self._on_op(r))
        self.grid.addWidget(combo, row, 1)
        inputs = QLineEdit()
        inputs.setObjectName(f"step_inputs_{i}")
        inputs.setPlaceholderText("none")
        inputs.setToolTip("Extra input tensors of this step, comma-separated (e.g. “r” or "
                          "“b, c”). Unfused, each is read by this step; fused, each distinct "
                          "name is read once.")
        inputs.textEdited.connect(lambda _t, r=i: self._on_text(r))
        inputs.editingFinished.connect(self._finish)
        self.grid.addWidget(inputs, row, 2)
        flops = QLineEdit()
        flops.setObjectName(f"step_flops_{i}")
        flops.setToolTip("FLOPs per element of this step. Empty: the op's default "
                         "(shown in grey). A multiply-add is 2.")
        flops.textEdited.connect(lambda _t, r=i: self._on_text(r))
        flops.editingFinished.connect(self._finish)
        flops.setMaximumWidth(80)
        self.grid.addWidget(flops, row, 3)
        buttons = QWidget()
        box = QHBoxLayout(buttons)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        made = []
        for text, tip, name, slot in (
            ("▲", "Move this step up", "up", lambda _=False, r=i: self.move_step(r, -1)),
            ("▼", "Move this step down", "down", lambda _=False, r=i: self.move_step(r, 1)),
            ("✕", "Remove this step", "remove", lambda _=False, r=i: self.remove_step(r)),
        ):
            button = QToolButton()
            button.setObjectName(f"step_{name}_{i}")
            button.setText(text)
            button.setToolTip(tip)
            button.setAutoRaise(True)
            button.clicked.connect(slot)
            box.addWidget(button)
            made.append(button)
        self.grid.addWidget(buttons, row, 4)
        self.rows.append((combo, inputs, flops))
        self._buttons.append((made[0], made[1], made[2]))

    # -- edits -----------------------------------------------------------------------------

    def _row_step(self, i: int) -> dict[str, Any]:
        combo, inputs, flops = self.rows[i]
        step: dict[str, Any] = {"op": combo.currentData()}
        names = _names(inputs.text())
        if names:
            step["inputs"] = names
        text = flops.text().strip()
        if text:
            step["flops"] = text
        return step

    def _on_op(self, i: int) -> None:
        combo, _inputs, flops = self.rows[i]
        op = combo.currentData()
        if op == "custom" and not flops.text().strip():
            flops.setText(f"{STEP_OPS['custom'][0]:g}")
        flops.setPlaceholderText(f"{STEP_OPS[op][0]:g}")
        steps = self.steps()
        steps[i] = self._row_step(i)
        self._propose(steps, True, (i, None))

    def _on_text(self, i: int) -> None:
        steps = self.steps()
        steps[i] = self._row_step(i)
        self._propose(steps, False, (i, None))

    def add_step(self) -> None:
        if len(self._steps) >= MAX_STEPS:
            return
        steps = self.steps() + [{"op": "relu"}]
        self._propose(steps, True, None)

    def remove_step(self, i: int) -> None:
        steps = self.steps()
        if len(steps) > 1:
            del steps[i]
            self._propose(steps, True, None)

    def move_step(self, i: int, delta: int) -> None:
        steps = self.steps()
        j = i + delta
        if 0 <= j < len(steps):
            steps[i], steps[j] = steps[j], steps[i]
            self._propose(steps, True, None)

    def mark(self, row: int | None, part: str | None, invalid: bool) -> None:
        for i, (_combo, inputs, flops) in enumerate(self.rows):
            set_invalid(inputs, invalid and i == row and part == "inputs")
            set_invalid(flops, invalid and i == row and part == "flops")


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.replace(";", ",").split(",") if name.strip()]


def _float_or_none(text: str) -> float | None:
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


class StepsField(Field):
    """The elementwise chain's steps parameter: a :class:`StepsEditor` in a group box."""

    def __init__(self, editor: FieldOwner, param: Param) -> None:
        super().__init__(editor, param)
        self.steps = StepsEditor(self._on_steps, self.finish)
        self.steps.setToolTip("")
        group = QGroupBox(param.label)
        group.setObjectName(f"param_{param.name}")
        group.setToolTip(tooltip(param))
        layout = QVBoxLayout(group)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(self.steps)
        self.widget = group
        self.input = self.steps

    def _on_steps(self, steps: list[dict[str, Any]], discrete: bool, where: Any) -> None:
        self.editor.propose(self.param.name, steps, discrete=discrete)

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        rows = len(self.steps.rows)
        self.steps.load(resolved.get(self.param.name))
        if rows and len(self.steps.rows) != rows:  # a step added or removed: refit the form
            QTimer.singleShot(0, self.editor, self.editor.fit_splitter)
