"""One field of a machine: parsing and formatting of SI text, the line edit that refuses
bad text in place, and the chart marker of a machine as a small icon."""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QKeyEvent, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QLineEdit, QWidget

from workbench.model.limits import text_problem
from workbench.model.units import (
    QuantityError,
    format_quantity,
    magnitude_problem,
    parse_quantity,
)
from workbench.ui.widgets import document_undo_filter, set_invalid

__all__ = ["FieldEdit", "marker_icon", "shortest_text", "rate_text", "parse_positive",
           "parse_optional", "parse_efficiency", "parse_name", "format_optional",
           "format_efficiency", "MARKER_NAMES"]


# ---------------------------------------------------------------------------------------------
# parsing and formatting of one field


def shortest_text(value: float, unit: str) -> str:
    """The shortest SI text for ``value`` that reads back as the same number; a size in
    bytes that is a whole number of GiB or MiB (a memory's capacity) in those units when
    that is shorter ("24 GiB", not "25.769803776 GB")."""
    text = _decimal_text(value, unit)
    if unit == "bytes":
        binary = _binary_text(value)
        if binary is not None and len(binary) < len(text):
            return binary
    return text


def _decimal_text(value: float, unit: str) -> str:
    for digits in range(3, 17):
        text = format_quantity(value, unit, digits)
        try:
            back = parse_quantity(text, unit)
        except QuantityError:
            break
        if math.isclose(back, value, rel_tol=1e-12):
            return text
    return repr(float(value))


#: binary prefixes a size may be shown in, largest first
_BINARY = (("TiB", 2.0**40), ("GiB", 2.0**30), ("MiB", 2.0**20))


def _binary_text(value: float) -> str | None:
    """``value`` bytes as a whole (or half, quarter…: at most four decimals) number of TiB,
    GiB or MiB, the largest that is, or None."""
    for name, size in _BINARY:
        count = value / size
        if count >= 1 and abs(count * 16 - round(count * 16)) < 1e-9:
            return f"{count:.4f}".rstrip("0").rstrip(".") + f" {name}"
    return None


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
    problem = magnitude_problem(value)  # as a session file holds it
    if problem is not None:
        raise ValueError(problem)
    if not 0 < value <= 1:
        raise ValueError(f"must be a fraction in (0, 1] such as 0.78 or 78%, got {text!r}")
    return value


def parse_name(text: str) -> str:
    text = _strip(text)
    if not text:
        raise ValueError("a machine needs a name")
    problem = text_problem(text, "machine")  # the limit a session file holds
    if problem is not None:
        raise ValueError(problem)
    return text


def format_optional(unit: str) -> Callable[[float | None], str]:
    """The formatter of an optional quantity in ``unit``: empty when unset, else its shortest text."""
    return lambda value: "" if value is None else shortest_text(value, unit)


def format_efficiency(value: float | None) -> str:
    """An efficiency as the field shows it: empty when unset, else up to 12 significant figures."""
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
        self.installEventFilter(document_undo_filter())  # Ctrl+Z: the document's

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

    def keyPressEvent(self, event: QKeyEvent) -> None:
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


#: The name of each chart marker (:data:`~workbench.model.session.MARKERS`, which the chart
#: draws as the pyqtgraph symbols of the same codes), as the machine list's tool tips say it.
MARKER_NAMES = {"o": "circle", "s": "square", "t": "triangle", "d": "diamond", "star": "star",
                "p": "pentagon", "h": "hexagon", "t1": "triangle (up)"}
