"""Reusable input widgets: a 64-bit integer spin box and an SI quantity line edit.

Both widgets let the user type anything (so a wrong value can be shown and explained in
place instead of being silently swallowed) and report what was typed; a caller that refuses
a value marks the widget with :func:`set_invalid` (a red frame) and says why elsewhere.

``BigSpinBox``
    Whole numbers up to 2**53 (``QSpinBox`` is 32-bit). Up/Down and the wheel step by one,
    PageUp/PageDown double/halve. Signals: ``valueChanged(object)`` (an ``int``: after a
    step or a valid typed number), ``textEdited(str)`` (every keystroke), and the inherited
    ``editingFinished`` (Return or focus out; invalid text is put back to the last value).

``QuantityEdit``
    A line edit for one field with a fixed unit (a key of :data:`workbench.model.units.UNITS`:
    ``"flops"``, ``"bytes"``, ``"flop_rate"``, ``"bandwidth"``, ``"time"``, ``"count"``).
    Accepts "3.85 TFLOP", "1e12", "3.35 TB/s". Signals: ``valueEdited(float)`` on every
    keystroke that parses, ``errorChanged(str)`` (the parse message, or "" when it parses
    again), and the inherited ``editingFinished``. ``setValue`` shows the value with an SI
    prefix and enough digits to read back exactly.
"""

from __future__ import annotations

import contextlib
import functools
import math

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QKeyEvent, QKeySequence, QValidator
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QHeaderView,
    QLineEdit,
    QSplitter,
    QStyle,
    QStyleOptionSpinBox,
    QWidget,
)

from workbench.model.units import QuantityError, format_quantity, parse_number, parse_quantity

__all__ = [
    "BigSpinBox",
    "QuantityEdit",
    "set_invalid",
    "NoWheelFilter",
    "no_wheel_filter",
    "DocumentUndoFilter",
    "WindowKeysFilter",
    "style_row_table",
    "WideSplitter",
    "document_undo_filter",
    "INVALID_STYLE",
]

MAX_INT = 2**53

#: Style sheet rule for widgets marked invalid by :func:`set_invalid`.
INVALID_STYLE = (
    '*[invalid="true"] { border: 1px solid #c62828; border-radius: 3px; '
    "background-color: #fff1f0; }"
)


#: what :func:`html.escape` replaces, written here: the html module brings a table of every
#: named character with it, which the start-up would import for five of them
_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
                               "'": "&#x27;"})


def escape_html(text: object) -> str:
    """``text`` for rich text (labels, tooltips, attribute values): ``& < > " '`` escaped,
    as :func:`html.escape` does."""
    return str(text).translate(_HTML_ESCAPES)


def set_invalid(widget: QWidget, invalid: bool) -> None:
    """Mark ``widget`` with (or clear) a red frame; cheap when nothing changes.

    A spin box is marked on its inner line edit, so that its arrow buttons keep the
    platform style (a style sheet on the spin box itself would replace them)."""
    if bool(widget.property("invalid")) == invalid:
        return
    widget.setProperty("invalid", invalid)
    target = widget.lineEdit() if isinstance(widget, QAbstractSpinBox) else widget
    target.setProperty("invalid", invalid)
    target.setStyleSheet(INVALID_STYLE if invalid else "")
    target.update()


class NoWheelFilter(QObject):
    """Wheel events on widgets without the focus go to their parent (the scroll area) instead,
    so that scrolling a form never changes a value by accident. Install on spin boxes and
    combo boxes (``no_wheel_filter()`` returns a shared instance)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.Wheel and isinstance(watched, QWidget)
                and not watched.hasFocus()):
            parent = watched.parentWidget()
            if parent is not None:  # let the enclosing scroll area scroll instead
                QCoreApplication.sendEvent(parent, event)
            return True
        return False


@functools.cache
def no_wheel_filter() -> NoWheelFilter:
    """The one :class:`NoWheelFilter` the fields share."""
    return NoWheelFilter()


class DocumentUndoFilter(QObject):
    """Ctrl+Z / Ctrl+Shift+Z (the platform's Undo and Redo keys) in a field go to the
    window's Undo and Redo, which undo the document's last edit, as everywhere else: a line
    edit would take the keys for its own text history, which a field set from the document
    has lost (nothing happened) or which puts back text the document never had. Install on
    the fields whose every edit is a document edit (``document_undo_filter()`` returns a
    shared instance)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) and (
                event.matches(QKeySequence.StandardKey.Undo)
                or event.matches(QKeySequence.StandardKey.Redo)):
            event.ignore()  # not taken by the field: the shortcut fires
            return True
        return False


class WindowKeysFilter(QObject):
    """A window's commands whose keys a text field would take for its own line editing go
    to the window: on X11, Qt's line edits and spin boxes take Ctrl+E as "end of line" (the
    End key does the same), so File ▸ Export Figure… (Ctrl+E) did nothing while a field had
    the focus. It watches whichever widget of ``window`` has the focus (the one a shortcut's
    key goes to first), not every event of the application."""

    def __init__(self, window: QWidget, actions) -> None:
        super().__init__(window)
        self._window = window
        self._actions = list(actions)
        self._watched: QWidget | None = None
        QApplication.instance().focusChanged.connect(self._focus_changed)

    def _focus_changed(self, _old, new) -> None:
        if self._watched is not None:
            with contextlib.suppress(RuntimeError):  # (deleted meanwhile)
                self._watched.removeEventFilter(self)
            self._watched = None
        if isinstance(new, QWidget) and new.window() is self._window:
            new.installEventFilter(self)
            self._watched = new

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent)
                and isinstance(watched, QWidget) and watched.window() is self._window):
            pressed = QKeySequence(event.keyCombination())
            for action in self._actions:
                if action.isEnabled() and any(
                        key.matches(pressed) == QKeySequence.SequenceMatch.ExactMatch
                        for key in action.shortcuts()):
                    event.ignore()  # not taken by the field: the window's shortcut fires
                    return True
        return False


class OwnKeysFilter(QObject):
    """A widget's own commands whose keys the window also uses take them while it has the
    focus: the machine list's Alt+Up (move the machine) before the window's Alt+Up (move the
    selected operation). Two shortcuts of one key both active do nothing in Qt (an
    ambiguous key), so the widget takes the key and triggers its own action."""

    def __init__(self, widget: QWidget, actions) -> None:
        super().__init__(widget)
        self._actions = list(actions)
        widget.installEventFilter(self)

    def _action_for(self, event: QKeyEvent):
        pressed = QKeySequence(event.keyCombination())
        return next((a for a in self._actions if any(
            key.matches(pressed) == QKeySequence.SequenceMatch.ExactMatch
            for key in a.shortcuts())), None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(
                event, QKeyEvent):
            action = self._action_for(event)
            if action is None:
                return False
            if kind == QEvent.Type.ShortcutOverride:
                event.accept()  # (the key comes to the widget, not to a shortcut)
            elif action.isEnabled():
                action.trigger()
            return True
        return False


@functools.cache
def document_undo_filter() -> DocumentUndoFilter:
    """The one :class:`DocumentUndoFilter` the fields share."""
    return DocumentUndoFilter()


def style_row_table(view: QAbstractItemView) -> None:
    """A table of rows (the operations, the results): alternating rows without grid lines or
    wrapped text, scrolled sideways by the pixel; no row numbers, each row as high as a line
    of its font and a little air; its header's sections neither highlighted nor stretched."""
    view.setShowGrid(False)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    rows = view.verticalHeader()
    rows.setVisible(False)
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setHighlightSections(False)
    header.setStretchLastSection(False)


class WideSplitter(QSplitter):
    """A splitter that puts its panes side by side while it is much wider than tall (in the
    short bottom row of the window, where one over the other leaves each a sliver) and one
    over the other otherwise (a tall or floating dock). The two thresholds keep it from
    flipping back and forth at one size."""

    SIDE_BY_SIDE = 2.5  # width / height at or above which the panes go side by side
    STACKED = 1.8  # ... and below which they go back one over the other

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)

    def resizeEvent(self, event) -> None:
        width, height = event.size().width(), max(1, event.size().height())
        if self.orientation() == Qt.Orientation.Vertical and width >= self.SIDE_BY_SIDE * height:
            self.setOrientation(Qt.Orientation.Horizontal)
        elif self.orientation() == Qt.Orientation.Horizontal and width < self.STACKED * height:
            self.setOrientation(Qt.Orientation.Vertical)
        super().resizeEvent(event)


def _parse_int(text: str) -> int | None:
    """A whole number from text ("4096", "4_096", "1e6", " 12 "); ``None`` if it is not one."""
    try:
        number = parse_number(text.strip().replace(",", ""))
    except QuantityError:
        return None
    if not number.is_integer() or abs(number) > 2**63:
        return None
    return int(number)


class BigSpinBox(QAbstractSpinBox):
    """An integer spin box for values up to 2**53 (see the module docstring)."""

    valueChanged = Signal(object)
    textEdited = Signal(str)

    def __init__(self, parent: QWidget | None = None, minimum: int = 0,
                 maximum: int = MAX_INT) -> None:
        super().__init__(parent)
        self._min = int(minimum)
        self._max = int(maximum)
        self._value = self._min
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccelerated(True)
        self.setKeyboardTracking(True)
        self.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToPreviousValue)
        self.lineEdit().setText(str(self._value))
        self.lineEdit().textEdited.connect(self._on_text_edited)
        self.editingFinished.connect(self._restore_if_invalid)
        self.installEventFilter(no_wheel_filter())
        self.installEventFilter(document_undo_filter())

    # -- value -----------------------------------------------------------------------------

    def value(self) -> int:
        return self._value

    def setValue(self, value: int) -> None:
        value = max(self._min, min(self._max, int(value)))
        text = str(value)
        if self.lineEdit().text() != text:
            edit = self.lineEdit()
            cursor = edit.cursorPosition()
            at_end = cursor >= len(edit.text())
            edit.setText(text)
            edit.setCursorPosition(len(text) if at_end else min(cursor, len(text)))
        if value != self._value:
            self._value = value
            self.valueChanged.emit(value)

    def minimum(self) -> int:
        return self._min

    def maximum(self) -> int:
        return self._max

    def setRange(self, minimum: int, maximum: int) -> None:
        self._min, self._max = int(minimum), int(maximum)
        self.setValue(self._value)

    def text_value(self) -> int | None:
        """The typed text as a whole number in range, or ``None``."""
        number = _parse_int(self.lineEdit().text())
        if number is None or not self._min <= number <= self._max:
            return None
        return number

    def is_acceptable(self) -> bool:
        return self.text_value() is not None

    # -- QAbstractSpinBox ------------------------------------------------------------------

    def validate(self, text: str, pos: int) -> QValidator.State:
        number = _parse_int(text)
        if number is not None and self._min <= number <= self._max:
            return QValidator.State.Acceptable
        return QValidator.State.Intermediate  # shown, explained, never applied

    def fixup(self, text: str) -> str:
        return str(self._value)

    def stepEnabled(self) -> QAbstractSpinBox.StepEnabledFlag:
        if self.isReadOnly():
            return QAbstractSpinBox.StepEnabledFlag.StepNone
        flags = QAbstractSpinBox.StepEnabledFlag.StepNone
        if self._value < self._max:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepUpEnabled
        if self._value > self._min:
            flags |= QAbstractSpinBox.StepEnabledFlag.StepDownEnabled
        return flags

    def stepBy(self, steps: int) -> None:
        base = self.text_value()
        base = self._value if base is None else base
        self._step_to(base + steps)

    def _step_to(self, value: int) -> None:
        value = max(self._min, min(self._max, value))
        self.lineEdit().setText(str(value))
        if value != self._value:
            self._value = value
            self.valueChanged.emit(value)
        else:
            # a step from invalid text back to the current value still needs reporting
            self.textEdited.emit(str(value))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown) and not self.isReadOnly():
            base = self.text_value()
            base = self._value if base is None else base
            if key == Qt.Key.Key_PageUp:
                self._step_to(max(base * 2, base + 1))
            else:
                self._step_to(max(base // 2, self._min))
            event.accept()
            return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:
        return self._hint(max(len(str(self._max)), len(str(self._value)), 8))

    def minimumSizeHint(self) -> QSize:
        return self._hint(6)

    def _hint(self, digits: int) -> QSize:
        metrics = QFontMetrics(self.font())
        width = metrics.horizontalAdvance("9" * min(digits, 12)) + 8
        option = QStyleOptionSpinBox()
        self.initStyleOption(option)
        height = self.lineEdit().sizeHint().height()
        return self.style().sizeFromContents(
            QStyle.ContentsType.CT_SpinBox, option, QSize(width, height), self
        )

    # -- typing ----------------------------------------------------------------------------

    def _on_text_edited(self, text: str) -> None:
        number = self.text_value()
        if number is not None and number != self._value:
            self._value = number
            self.valueChanged.emit(number)
        self.textEdited.emit(text)

    def _restore_if_invalid(self) -> None:
        if self.text_value() is None:
            self.lineEdit().setText(str(self._value))


def _shortest_text(value: float, unit: str) -> str:
    """The shortest SI text for ``value`` that reads back as the same number."""
    if value == 0:
        return "0"
    for digits in range(3, 17):
        text = format_quantity(value, unit, digits)
        try:
            back = parse_quantity(text.replace("µ", "u"), unit)
        except QuantityError:
            break
        if math.isclose(back, value, rel_tol=1e-12, abs_tol=0.0):
            return text
    return repr(float(value))


class QuantityEdit(QLineEdit):
    """A line edit for a quantity with a fixed unit (see the module docstring).

    ``minimum`` (inclusive) and ``positive`` (strictly above zero) add range checks whose
    messages come through ``errorChanged`` like parse errors do. With ``mark_invalid`` (the
    default) the edit draws its own red frame while its text does not parse.
    """

    valueEdited = Signal(float)
    errorChanged = Signal(str)

    def __init__(self, unit: str, parent: QWidget | None = None, *, minimum: float | None = None,
                 positive: bool = False, mark_invalid: bool = True) -> None:
        super().__init__(parent)
        self.unit = unit
        self.mark_invalid = mark_invalid
        self.minimum = minimum
        self.positive = positive
        self._value: float | None = None
        self._error = ""
        self.textEdited.connect(self._on_text_edited)
        self.installEventFilter(document_undo_filter())
        example = {"flops": "3.85 TFLOP", "bytes": "80 GiB", "flop_rate": "989 TFLOP/s",
                   "bandwidth": "3.35 TB/s", "time": "5 us", "count": "1e12"}.get(unit, "")
        if example:
            self.setPlaceholderText(f"e.g. {example}")

    def value(self) -> float | None:
        return self._value

    def error(self) -> str:
        return self._error

    def setValue(self, value: float | None) -> None:
        """Show ``value`` (no signal). Text that already means this value is left alone, so a
        field being typed in keeps its text and cursor."""
        self._value = None if value is None else float(value)
        if value is None:
            if self.text():
                self.setText("")
        else:
            current = self.parse(self.text())
            if current is None or not math.isclose(current, value, rel_tol=1e-12):
                cursor = self.cursorPosition()
                at_end = cursor >= len(self.text())
                text = _shortest_text(float(value), self.unit)
                self.setText(text)
                self.setCursorPosition(len(text) if at_end else min(cursor, len(text)))
        self._set_error("")

    def parse(self, text: str) -> float | None:
        try:
            number = self.check(text)
        except QuantityError:
            return None
        return number

    def check(self, text: str) -> float:
        """``text`` as a number in this field's unit; raises ``QuantityError`` with a message."""
        number = parse_quantity(text, self.unit)
        if self.positive and number <= 0:
            raise QuantityError(f"must be positive, got {text.strip()!r}")
        if self.minimum is not None and number < self.minimum:
            raise QuantityError(f"must be at least {self.minimum:g}, got {text.strip()!r}")
        return number

    def _on_text_edited(self, text: str) -> None:
        try:
            number = self.check(text)
        except QuantityError as exc:
            self._set_error(str(exc))
            return
        self._value = number
        self._set_error("")
        self.valueEdited.emit(number)

    def _set_error(self, message: str) -> None:
        if message != self._error:
            self._error = message
            if self.mark_invalid:
                set_invalid(self, bool(message))
            self.errorChanged.emit(message)
