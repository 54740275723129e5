"""The fields of the operation form: one per parameter, all with the same small interface.

Each field puts a widget into the form (``widget``), marks its input red when a value is
refused (``input``), shows the document's value with ``load`` and proposes what the user
types or picks to the editor, which applies it (see :mod:`workbench.ui.editors.operation_editor`).
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QVBoxLayout, QWidget

from workbench.model.dtypes import DTYPE_BYTES, PRECISIONS
from workbench.model.operations import Kind, Param
from workbench.ui.widgets import (
    BigSpinBox,
    QuantityEdit,
    document_undo_filter,
    escape_html,
    no_wheel_filter,
)


class FieldOwner(Protocol):
    """The editor a field belongs to (:class:`~workbench.ui.editors.operation_editor.
    OperationEditor`): what a field tells it. Named here, so that the fields do not depend
    back on the editor that places them."""

    def propose(self, name: str, value: Any, discrete: bool = False) -> None: ...

    def finish(self, name: str) -> None: ...

    def fit_splitter(self) -> None: ...

MAX_INT = 2**53
#: Appended to the entry of a list that is the parameter's default value.
DEFAULT_MARK = " — default"

# =========================================================================================
# form fields: one per parameter, all with the same small interface


def tooltip(param: Param, extra: str = "") -> str:
    """A parameter's tool tip (rich text): its label, symbol, description, default and ``extra``."""
    symbol = param.sym if param.numeric or param.symbol else ""
    text = f"<b>{escape_html(param.label)}</b>"
    if symbol:
        text += f" &nbsp;<i>symbol in formulas:</i> <code>{escape_html(symbol)}</code>"
    text += f"<br>{escape_html(param.doc)}"
    if param.inherit:
        text += f"<br><i>Default: same as “{escape_html(param.inherit)}”.</i>"
    if extra:
        text += f"<br><span style='color:gray'>{extra}</span>"
    return text


class Field:
    """Base: ``widget`` goes into the form, ``input`` gets the red frame.

    ``load`` shows the document's value without emitting, and leaves text that already
    means that value alone (so "1e3" typed for 1000 stays, with its cursor).
    """

    widget: QWidget
    input: QWidget

    def __init__(self, editor: FieldOwner, param: Param) -> None:
        self.editor = editor
        self.param = param

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        raise NotImplementedError

    def _propose(self, value: Any, discrete: bool = False) -> None:
        self.editor.propose(self.param.name, value, discrete=discrete)

    def finish(self) -> None:
        """The user is done with the field (it lost focus, Enter): its value is committed."""
        self.editor.finish(self.param.name)


def _inherit_label(kind: Kind, param: Param) -> str:
    try:
        return kind.param(param.inherit).label
    except KeyError:
        return param.inherit


class IntField(Field):
    """int parameters: a spin box, with a "same as" check box when the parameter inherits."""

    def __init__(self, editor: FieldOwner, param: Param, kind: Kind) -> None:
        super().__init__(editor, param)
        self.spin = BigSpinBox(minimum=int(param.minimum), maximum=MAX_INT)
        self.spin.setObjectName(f"param_{param.name}")
        self.spin.setToolTip(tooltip(param, "Up/Down ±1 · PageUp/PageDown ×2 / ÷2 · "
                                            "typed: 4096, 4_096, 1e6"))
        self.spin.valueChanged.connect(lambda value: self._propose(value))
        self.spin.textEdited.connect(lambda text: self._propose(text))
        self.spin.editingFinished.connect(self.finish)
        self.input = self.spin
        self.same: QCheckBox | None = None
        if param.inherit:
            # the check box under the spin box: side by side they made the form wider than
            # the editor dock (the arrows and "same as Qu…" were cut)
            box = QWidget()
            row = QVBoxLayout(box)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(2)
            row.addWidget(self.spin)
            self.same = QCheckBox(f"same as {_inherit_label(kind, param)}")
            self.same.setObjectName(f"same_{param.name}")
            self.same.setToolTip(f"Follow “{_inherit_label(kind, param)}” (the parameter is "
                                 "left unset). Typing a value sets it explicitly.")
            self.same.toggled.connect(self._on_same)
            row.addWidget(self.same)
            self.widget = box
        else:
            self.widget = self.spin

    def _on_same(self, checked: bool) -> None:
        if checked:
            self._propose(None, discrete=True)
        else:
            self._propose(self.spin.value(), discrete=True)

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        value = resolved.get(self.param.name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = int(value)
            if self.spin.text_value() != value:  # "1e3" typed for 1000 is left alone
                self.spin.blockSignals(True)
                self.spin.setValue(value)
                self.spin.blockSignals(False)
        if self.same is not None:
            self.same.blockSignals(True)
            self.same.setChecked(raw is None)
            self.same.blockSignals(False)


class QuantityField(Field):
    """float and quantity parameters: a line edit that reads SI text."""

    def __init__(self, editor: FieldOwner, param: Param) -> None:
        super().__init__(editor, param)
        unit = param.unit or "count"
        self.edit = QuantityEdit(unit)
        self.edit.setObjectName(f"param_{param.name}")
        self.edit.setToolTip(tooltip(param, "SI text is accepted: 3.85 TFLOP, 1e12, 80 GiB"))
        self.edit.textEdited.connect(lambda text: self._propose(text))
        self.edit.editingFinished.connect(self.finish)
        self.input = self.widget = self.edit

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        value = resolved.get(self.param.name)
        if value is None:
            return
        self.edit.setValue(float(value))


class ComboField(Field):
    """dtype, precision and choice parameters; ``None`` is the "same as"/automatic entry."""

    def __init__(self, editor: FieldOwner, param: Param, kind: Kind) -> None:
        super().__init__(editor, param)
        self.kind = kind
        self.combo = QComboBox()
        self.combo.setObjectName(f"param_{param.name}")
        self.combo.setToolTip(tooltip(param))
        self.combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.combo.installEventFilter(no_wheel_filter())
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.has_none = param.default is None
        if self.has_none:
            self.combo.addItem("", None)
        if param.type == "dtype":
            for name, size in DTYPE_BYTES.items():
                self.combo.addItem(f"{name}  ({size:g} B)", name)
        elif param.type == "precision":
            for name in PRECISIONS:
                self.combo.addItem(name, name)
        else:
            for name in param.choices:
                self.combo.addItem(name, name)
        if not self.has_none:  # the value the engine takes when the session gives none
            index = self.combo.findData(param.default)
            if index >= 0:
                self.combo.setItemText(index, self.combo.itemText(index) + DEFAULT_MARK)
        self.combo.currentIndexChanged.connect(self._on_index)
        self.input = self.widget = self.combo

    def _on_index(self, index: int) -> None:
        self._propose(self.combo.itemData(index), discrete=True)

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        self.combo.blockSignals(True)
        if self.has_none:
            if self.param.inherit:
                current = resolved.get(self.param.name)
                # the value first, then the field it follows: "bf16 = Activation dtype"
                # (a narrow dock cut "same as Activation dtype (bf16" before its value)
                text = f"{current} = {_inherit_label(self.kind, self.param)}"
            else:
                text = f"automatic ({context.get('precision') or '?'})"
            if self.combo.itemText(0) != text:
                self.combo.setItemText(0, text)
        shown = raw
        if raw is None and not self.has_none:  # not given: show the default the engine uses
            shown = resolved.get(self.param.name)
        index = self.combo.findData(shown)
        if index < 0 and shown is not None:  # a value the list does not know: show it anyway
            self.combo.addItem(str(shown), shown)
            index = self.combo.count() - 1
        if index >= 0 and index != self.combo.currentIndex():
            self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)


class BoolField(Field):
    """bool parameters: a check box."""

    def __init__(self, editor: FieldOwner, param: Param) -> None:
        super().__init__(editor, param)
        self.check = QCheckBox()
        self.check.setObjectName(f"param_{param.name}")
        self.check.setToolTip(tooltip(param))
        self.check.toggled.connect(lambda on: self._propose(bool(on), discrete=True))
        self.input = self.widget = self.check

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        self.check.blockSignals(True)
        self.check.setChecked(bool(resolved.get(self.param.name)))
        self.check.blockSignals(False)


class TextField(Field):
    """str parameters: a line edit."""

    def __init__(self, editor: FieldOwner, param: Param) -> None:
        super().__init__(editor, param)
        self.edit = QLineEdit()
        self.edit.setObjectName(f"param_{param.name}")
        self.edit.setToolTip(tooltip(param))
        self.edit.textEdited.connect(lambda text: self._propose(text))
        self.edit.editingFinished.connect(self.finish)
        self.edit.installEventFilter(document_undo_filter())  # Ctrl+Z: the document's
        self.input = self.widget = self.edit

    def load(self, raw: Any, resolved: dict[str, Any], context: dict[str, Any]) -> None:
        value = resolved.get(self.param.name)
        text = "" if value is None else str(value)
        if self.edit.text() != text:
            cursor = self.edit.cursorPosition()
            self.edit.setText(text)
            self.edit.setCursorPosition(min(cursor, len(text)))
