"""The operation editor: a live form for the selected operation and its derivation.

The form is generated from the kind's :class:`~workbench.model.operations.Param` list (the
elementwise ``steps`` list has its own small editor). Every keystroke, arrow or wheel step
sets the parameter in the document at once, so the chart and the tables follow while
typing; ``editingFinished`` (Return, focus out) seals the gesture so a whole drag or a typed
number is one undo step. Values the model refuses (``check_param`` / ``kind_checks``) are
never applied: the field gets a red frame and the hint under the form says why.

Below the form, the derivation shows every FLOP term and byte term with its formula in
symbols, the same with values, and the value; the totals; the kind's notes; the roofline on
every machine of the session with its formulas; and the counting conventions.

Public API::

    editor = OperationEditor(workspace)      # follows workspace.selection and its signals
    editor.operation_id                      # the operation shown, or None (empty state)
    editor.field("m")                        # the input widget of a parameter (or of "name",
                                             # "memory_level"), None if not shown
    editor.errors()                          # {param: message} of values refused right now
    editor.hint_text()                       # the text of the hint under the form
    editor.derivation_text()                 # the derivation as plain text
    editor.copy_derivation()                 # ... put on the clipboard (the Copy button)
    editor.set_conventions_open(True)        # expand the Conventions section
    editor.sweep_section                     # the "Sweep" section under the form (see
                                             # workbench.ui.editors.sweep_editor), None when empty
    editor.last_refresh_ms                   # time of the last derivation refresh

The derivation itself is built and shown by :mod:`workbench.ui.editors.derivation`; the fields of the
form are in :mod:`workbench.ui.editors.fields` and the chain-steps editor in
:mod:`workbench.ui.editors.steps_editor`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QSignalBlocker, QSize, Qt, QTimer, QUrl
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QStackedLayout,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.document import Change
from workbench.document.changes import What
from workbench.io.errors import InputError
from workbench.io.schema import Place, check_param, kind_checks
from workbench.model.errors import COUNTING_ERRORS
from workbench.model.limits import OverBudget, text_problem
from workbench.model.operations import KINDS, Kind, Operation, Param
from workbench.ui.bridge import Workspace
from workbench.ui.editors.derivation import DerivationView, Section, build_derivation, derivation_to_text
from workbench.ui.editors.fields import (
    DEFAULT_MARK,
    BoolField,
    ComboField,
    Field,
    IntField,
    QuantityField,
    TextField,
)
from workbench.ui.editors.model_lock import model_banner
from workbench.ui.editors.steps_editor import StepsField
from workbench.ui.editors.sweep_editor import SweepSection
from workbench.ui.widgets import (
    document_undo_filter,
    escape_html,
    no_wheel_filter,
    set_invalid,
)

__all__ = ["OperationEditor"]

_QUIET_FIELDS = {"color", "visible", "label"}  # operation fields that change no number


#: Posted to the editor to update its derivation after an edit. Its priority is below that of
#: Qt's repaint request (``Qt.LowEventPriority``), so the event loop paints what the edit
#: changed (the chart, the tables) before the text is laid out again.
_FLUSH_EVENT = QEvent.Type(QEvent.registerEventType())
_AFTER_REPAINT = int(Qt.EventPriority.LowEventPriority.value) - 1


# =========================================================================================
# the editor


class OperationEditor(QWidget):
    """Edits the operation selected in ``workspace.selection`` (see the module docstring)."""

    def __init__(self, workspace: Workspace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("operation_editor")
        self.workspace = workspace
        self.document = workspace.document
        self._op_id: int | None = None
        self._kind: str | None = None
        self._fields: dict[str, Field] = {}
        #: each parameter's row label, its own text and format, and the mark it shows now
        self._labels: dict[str, tuple[QLabel, str, Qt.TextFormat, str]] = {}
        self._errors: dict[str, str] = {}
        self._note = ""
        # the typing of the current gesture, per parameter: the text and value of each edit
        # applied, and the text last refused (see finish)
        self._typed: dict[str, list[tuple[str, Any]]] = {}
        self._refused_text: dict[str, str] = {}
        self._applying = False  # the document is changing because of this editor
        self._conventions_open = False
        self._dirty = True
        self._flush_posted = False  # a derivation update is queued (see _refresh_derivation)
        self._sections: list[Section] = []
        self._header = ("", "")
        self._levels_key: tuple[Any, ...] = ()
        self.last_refresh_ms = 0.0
        self.sweep_section: SweepSection | None = None
        #: the operation belongs to a whole model: shown read-only (see workbench.ui.editors.model_lock)
        self.read_only = False

        self._stack = QStackedLayout(self)
        self._stack.addWidget(self._empty_page())

        page = QWidget()
        page_layout = QVBoxLayout(page)
        page_layout.setContentsMargins(0, 0, 0, 0)
        self._splitter = QSplitter(Qt.Orientation.Vertical)
        self._splitter.setChildrenCollapsible(False)
        self._scroll = QScrollArea()
        self._scroll.setWidgetResizable(True)
        self._scroll.setFrameShape(QFrame.Shape.NoFrame)
        self._scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._splitter.addWidget(self._scroll)

        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.setSpacing(0)
        # the hint sits right under the form, outside its scroll area: always in view
        self._hint = QLabel("")
        self._hint.setObjectName("hint")
        self._hint.setWordWrap(True)
        self._hint.setTextFormat(Qt.TextFormat.PlainText)
        self._hint.setStyleSheet("QLabel#hint { color: #c62828; padding: 4px 10px; }")
        self._hint.setVisible(False)
        self._hint.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lower_layout.addWidget(self._hint)
        bar = QHBoxLayout()
        bar.setContentsMargins(10, 6, 6, 2)
        title = QLabel("Derivation")
        font = title.font()
        font.setBold(True)
        title.setFont(font)
        bar.addWidget(title)
        bar.addStretch(1)
        copy_button = QToolButton()
        copy_button.setObjectName("copy_derivation")
        copy_button.setText("Copy")
        copy_button.setToolTip("Copy the derivation as plain text")
        copy_button.setAutoRaise(True)
        copy_button.clicked.connect(self.copy_derivation)
        bar.addWidget(copy_button)
        lower_layout.addLayout(bar)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setFrameShadow(QFrame.Shadow.Sunken)
        lower_layout.addWidget(line)
        self.derivation = DerivationView()
        self.derivation.anchorClicked.connect(self._on_anchor)
        lower_layout.addWidget(self.derivation, 1)
        self._splitter.addWidget(lower)
        self._splitter.setStretchFactor(0, 0)
        self._splitter.setStretchFactor(1, 1)
        self._splitter_moved = False
        self._splitter.splitterMoved.connect(self._on_splitter_moved)
        page_layout.addWidget(self._splitter)
        self._stack.addWidget(page)

        workspace.signals.changed.connect(self._on_change)
        workspace.selection.changed.connect(self._on_selection)
        self._show(workspace.selection.current)

    @staticmethod
    def _empty_page() -> QWidget:
        """The page shown when no operation is selected. Its text is plain: a stacked page is
        measured on every layout pass, shown or not, and a rich-text label lays out a text
        document each time."""
        page = QWidget()
        page.setObjectName("editor_empty")
        page.setEnabled(False)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.addStretch(1)
        title = QLabel("No operation selected")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        title.setFont(font)
        body = QLabel("Select an operation on the chart, in the operations list or in the "
                      "results table to edit its parameters here and see how its FLOPs and "
                      "bytes are counted.")
        body.setWordWrap(True)
        for label in (title, body):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        layout.addStretch(1)
        return page

    # -- public ----------------------------------------------------------------------------

    @property
    def operation_id(self) -> int | None:
        return self._op_id

    def field(self, name: str) -> QWidget | None:
        """The input widget of a parameter of the shown operation (``"name"`` and
        ``"memory_level"`` too), or ``None``."""
        if name == "name":
            return self._name_edit if self._op_id is not None else None
        if name == "memory_level":
            return self._level_combo if self._op_id is not None else None
        f = self._fields.get(name)
        return f.input if f is not None else None

    def hint_text(self) -> str:
        return self._hint.text() if self._op_id is not None else ""

    def errors(self) -> dict[str, str]:
        """Refused values now shown in the form: ``{param: message}``."""
        return dict(self._errors)

    def derivation_text(self) -> str:
        self._flush()
        if self._op_id is None:
            return ""
        return derivation_to_text(" — ".join(self._header), self._sections)

    def copy_derivation(self) -> None:
        QGuiApplication.clipboard().setText(self.derivation_text())

    def set_conventions_open(self, open_: bool) -> None:
        self._conventions_open = bool(open_)
        self._refresh_derivation(force=True)

    # -- selection and document changes ----------------------------------------------------

    def _on_selection(self, op_id: int | None) -> None:
        self._show(op_id)

    def _exists(self, op_id: int | None) -> bool:
        if op_id is None:
            return False
        try:
            self.document.operation(op_id)
        except KeyError:
            return False
        return True

    def _show(self, op_id: int | None, force: bool = False) -> None:
        if not self._exists(op_id):
            op_id = None
        kind = self.document.operation(op_id).operation.kind if op_id is not None else None
        if op_id == self._op_id and kind == self._kind and not force:
            return
        if self._exists(self._op_id):  # (one made anew by a model's edit ends no gesture)
            self.document.seal()
        self._op_id, self._kind = op_id, kind
        self._errors.clear()
        self._typed.clear()
        self._refused_text.clear()
        self._note = ""
        if op_id is None:
            self._fields = {}
            self.sweep_section = None
            self.derivation.clear_sections()
            self._stack.setCurrentIndex(0)
            return
        self._build_form()
        self._stack.setCurrentIndex(1)
        self._sync()
        self.fit_splitter()
        QTimer.singleShot(0, self, self.fit_splitter)  # again once the new rows are laid out
        self._refresh_derivation(force=True)

    def _on_change(self, change: Change) -> None:
        what = change.what
        if what in (What.STATE, What.VIEW, What.TITLE):
            return
        if what == What.SESSION:  # a batch of edits, or another session
            current = self.workspace.selection.current
            if (self._op_id is not None and current == self._op_id and self._exists(current)
                    and self.document.operation(current).operation.kind == self._kind):
                self._sync()  # same operation: no rebuild, nothing typed is lost
                self._refresh_levels()
                if self.sweep_section is not None:
                    self.sweep_section.load()
                self._refresh_derivation()
            else:
                self._show(current, force=True)
            return
        if self._op_id is None:
            if what == What.OPERATIONS and self._exists(self.workspace.selection.current):
                self._show(self.workspace.selection.current)  # undo of a delete
            return
        if what == What.OPERATIONS:
            if not self._exists(self._op_id):
                self._show(None)
            return
        if what == What.OPERATION:
            if self._op_id not in change.ids:
                return
            if change.fields and set(change.fields) <= _QUIET_FIELDS:
                return
            if change.fields == ("sweep",):  # no number of the operation itself changed
                if self.sweep_section is not None:
                    self.sweep_section.load()
                return
            self._sync()
            if self.sweep_section is not None:
                self.sweep_section.refresh()
            self._refresh_derivation()
            return
        if what in (What.HARDWARE, What.MACHINES):
            self._refresh_levels()
            if self.sweep_section is not None:
                self.sweep_section.refresh()
            self._refresh_derivation()

    # -- form ------------------------------------------------------------------------------

    def _build_form(self) -> None:
        entry = self.document.operation(self._op_id)
        kind = KINDS[entry.operation.kind]
        container = QWidget()
        container.setObjectName("editor_form")
        outer = QVBoxLayout(container)
        outer.setContentsMargins(6, 8, 6, 8)  # narrow: the form fits a narrow dock
        outer.setSpacing(8)
        model = self.document.session.model_of(self._op_id)
        self.read_only = model is not None
        if model is not None:
            outer.addWidget(model_banner(
                model, lambda mid=model.id: self.workspace.model_requested.emit(mid)))
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setHorizontalSpacing(10)
        form.setVerticalSpacing(6)
        self._form = form

        self._name_edit = QLineEdit()
        self._name_edit.setObjectName("op_name")
        self._name_edit.setToolTip("Name of the operation (shown on the chart and in tables)")
        self._name_edit.textEdited.connect(self._on_name)
        self._name_edit.editingFinished.connect(lambda: self.finish("name"))
        self._name_edit.installEventFilter(document_undo_filter())  # Ctrl+Z: the document's
        form.addRow(self._bold_label("Name"), self._name_edit)

        kind_label = QLabel(f"{kind.label}")
        kind_label.setObjectName("op_kind")
        kind_label.setToolTip(f"<b>{escape_html(kind.label)}</b> ({kind.kind})<br>"
                              f"{escape_html(kind.doc)}")
        font = kind_label.font()
        font.setBold(True)
        kind_label.setFont(font)
        kind_label.setWordWrap(True)  # "Sharded matmul (communication)" fits the dock
        kind_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self._plain_label("Kind"), kind_label)

        self._level_combo = QComboBox()
        self._level_combo.setObjectName("op_memory_level")
        self._level_combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._level_combo.installEventFilter(no_wheel_filter())
        # its longest item ("main memory (default: …)") must not widen the form past the dock
        self._level_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self._level_combo.setMinimumContentsLength(14)
        self._level_combo.setToolTip(
            "Memory level (or interconnect) whose traffic the bytes count, and whose "
            "bandwidth makes the sloped roof. Default: each machine's main memory.")
        self._level_combo.currentIndexChanged.connect(self._on_level)
        self._levels_key = ()
        self._refresh_levels()
        form.addRow(self._plain_label("Memory level"), self._level_combo)

        separator = QFrame()
        separator.setFrameShape(QFrame.Shape.HLine)
        separator.setFrameShadow(QFrame.Shadow.Sunken)
        form.addRow(separator)

        self._fields = {}
        self._labels = {}
        for param in kind.params:
            f = self._make_field(param, kind)
            self._fields[param.name] = f
            if isinstance(f, StepsField):  # a group box across both columns
                form.addRow(f.widget)
                continue
            label = self._param_label(param)
            self._labels[param.name] = (label, label.text(), label.textFormat(), "")
            label.setBuddy(f.input)
            label.setToolTip(f.input.toolTip())
            form.addRow(label, f.widget)
        outer.addLayout(form)

        self.sweep_section = SweepSection(self.workspace)
        self.sweep_section.set_operation(self._op_id)
        outer.addWidget(self.sweep_section)
        if self.read_only:  # values shown, nothing editable: the model sets them
            for widget in (self._name_edit, self._level_combo, self.sweep_section,
                           *(f.widget for f in self._fields.values())):
                widget.setEnabled(False)

        outer.addStretch(1)
        self._update_hint()
        self._scroll.setWidget(container)  # deletes the previous form

    def fit_splitter(self) -> None:
        """Give the form the height it needs (at most 62 %), the derivation the rest; once
        the user drags the splitter, their choice is kept."""
        if self._splitter_moved:
            return
        total = sum(self._splitter.sizes()) or self.height()
        if total <= 0:
            return
        container = self._scroll.widget()
        if container is None:
            return
        container.layout().activate()  # rows added since the last layout pass count too
        wanted = container.sizeHint().height() + 2
        top = max(120, min(wanted, int(total * 0.62)))
        self._splitter.setSizes([top, max(total - top, 100)])

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self._op_id is not None:
            self.fit_splitter()

    @staticmethod
    def _bold_label(text: str) -> QLabel:
        label = QLabel(text)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        return label

    @staticmethod
    def _plain_label(text: str) -> QLabel:
        return QLabel(text)

    @staticmethod
    def _param_label(param: Param) -> QLabel:
        symbol = param.symbol
        label = param.label.lower()
        if symbol and label != symbol.lower() and not label.startswith(symbol.lower() + " "):
            widget = QLabel(f"{escape_html(param.label)} "
                            f"<span style='color:gray;'><i>{escape_html(symbol)}</i></span>")
            widget.setTextFormat(Qt.TextFormat.RichText)
        else:  # plain text: a rich-text label lays out a text document of its own
            widget = QLabel(param.label)
            widget.setTextFormat(Qt.TextFormat.PlainText)
        widget.setObjectName(f"label_{param.name}")
        return widget

    def _make_field(self, param: Param, kind: Kind) -> Field:
        t = param.type
        if t == "int":
            return IntField(self, param, kind)
        if t in ("float", "quantity"):
            return QuantityField(self, param)
        if t in ("dtype", "precision", "choice"):
            return ComboField(self, param, kind)
        if t == "bool":
            return BoolField(self, param)
        if t == "str":
            return TextField(self, param)
        if t == "steps":
            return StepsField(self, param)
        raise AssertionError(t)

    def _refresh_levels(self) -> None:
        if self._op_id is None:
            return
        machines = [e.hardware for e in self.document.session.hardware]
        current = self.document.operation(self._op_id).operation.memory_level
        levels: dict[str, list[str]] = {}
        links: dict[str, list[str]] = {}
        for hw in machines:
            for name in hw.memory:
                levels.setdefault(name, []).append(hw.label)
            for name in hw.interconnect:
                links.setdefault(name, []).append(hw.label)
        kind = self.document.operation(self._op_id).operation.spec
        on_link = getattr(kind, "default_level", "") == "interconnect"
        if on_link:  # communication kinds count bytes over the first interconnect
            defaults = sorted({next(iter(hw.interconnect)) for hw in machines if hw.interconnect})
            what = "first interconnect"
        else:
            defaults = sorted({hw.main_memory for hw in machines})
            what = "main memory"
        key = (tuple((k, tuple(v)) for k, v in levels.items()),
               tuple((k, tuple(v)) for k, v in links.items()), tuple(defaults), what, current)
        if key == self._levels_key:
            return
        self._levels_key = key
        combo = self._level_combo
        combo.blockSignals(True)
        combo.clear()
        # the value first, as every other field's default ("bf16  (2 B) — default"): the
        # machines' own levels, which a narrow dock shows whole
        first = (", ".join(defaults) if defaults else what) + DEFAULT_MARK
        combo.addItem(first, None)
        combo.setItemData(0, f"Each machine's {what}", Qt.ItemDataRole.ToolTipRole)
        everyone = len(machines)
        for table, what in ((levels, ""), (links, "interconnect")):
            for name, owners in table.items():
                tags = [t for t in (what, "" if len(owners) == everyone
                                    else f"only {len(owners)} of {everyone} machines") if t]
                combo.addItem(name + (f"  ({', '.join(tags)})" if tags else ""), name)
                combo.setItemData(combo.count() - 1, "On: " + ", ".join(owners),
                                  Qt.ItemDataRole.ToolTipRole)
        if current is not None and combo.findData(current) < 0:
            combo.addItem(f"{current}  (on no machine of the session)", current)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        combo.blockSignals(False)

    def _context(self) -> dict[str, Any]:
        try:
            precision = self.workspace.results.counts(self._op_id).precision
        except COUNTING_ERRORS:  # (the derivation says why)
            precision = None
        return {"precision": precision}

    def _sync(self) -> None:
        """Show the document's values (no echo, no rebuild, the field being typed in kept).

        A field showing refused text keeps it while the editor itself applies other edits;
        a change from outside (undo, redo, another panel) replaces it and clears the hint."""
        entry = self.document.operation(self._op_id)
        op = entry.operation
        kind = KINDS[op.kind]
        resolved = kind.resolve(op.params)
        context = self._context()
        external = not self._applying
        if "name" not in self._errors or external:
            if self._name_edit.text() != op.name:
                self._name_edit.setText(op.name)
            if self._errors.pop("name", None) is not None:
                set_invalid(self._name_edit, False)
        self._refresh_levels()
        for name, f in self._fields.items():
            if name in self._errors:
                if not external:
                    continue
                del self._errors[name]
                set_invalid(f.input, False)
                if isinstance(f, StepsField):
                    f.steps.mark(None, None, False)
                    f.load(op.params.get(name), resolved, context)
                    f.steps.reset()
                    continue
            f.load(op.params.get(name), resolved, context)
        for param in kind.params:
            if param.only_if is not None:
                other, wanted = param.only_if
                visible = resolved.get(other) == wanted
                widget = self._fields[param.name].widget
                if self._form.isRowVisible(widget) != visible:
                    self._form.setRowVisible(widget, visible)
        self._mark_defaults(kind, op.params)
        self._update_hint()

    def _mark_defaults(self, kind: Kind, given: dict[str, Any]) -> None:
        """Mark the row of each parameter the operation does not give: the field shows the
        value the engine takes, "(default)", or "(assumed)" for a dimension that only files
        before schema_version 2 may leave out (an example value). Rows that follow another
        parameter or are automatic say so in their own field."""
        for param in kind.params:
            row = self._labels.get(param.name)
            if row is None:
                continue
            label, text, fmt, shown = row
            mark = ""
            if given.get(param.name) is None and param.default is not None and not param.inherit:
                mark = "assumed" if param.required else "default"
            if mark == shown:
                continue
            self._labels[param.name] = (label, text, fmt, mark)
            if not mark:
                label.setTextFormat(fmt)
                label.setText(text)
                continue
            base = text if fmt == Qt.TextFormat.RichText else escape_html(text)
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setText(f"{base} <span style='color:gray;'>({mark})</span>")

    # -- edits -----------------------------------------------------------------------------

    def _on_name(self, text: str) -> None:
        if self._op_id is None or self.read_only:
            return
        if not text.strip():
            self._refuse("name", "Name: must not be empty", self._name_edit)
            return
        problem = (text_problem(text, "operation")  # what a session file can hold
                   or self.document.operation_name_problem(self._op_id, text))
        if problem is not None:
            self._refuse("name", f"Name: {problem}", self._name_edit)
            return
        with self._apply():
            try:
                self.document.set_operation_field(self._op_id, "name", text)
            except OverBudget as exc:  # (a session file Save would refuse)
                self._refuse("name", f"Name: {exc}", self._name_edit)
                return
        self._accept("name", self._name_edit)

    def _on_level(self, index: int) -> None:
        if self._op_id is None or self.read_only:
            return
        with self._apply():
            self.document.seal()
            try:
                self.document.set_operation_field(self._op_id, "memory_level",
                                                  self._level_combo.itemData(index))
            except OverBudget as exc:  # (a session file Save would refuse)
                level = self.document.operation(self._op_id).operation.memory_level
                blocker = QSignalBlocker(self._level_combo)
                self._level_combo.setCurrentIndex(max(0, self._level_combo.findData(level)))
                del blocker
                self._note = f"Memory level not changed: {exc}"
                self._update_hint()
                return
            self.document.seal()

    def propose(self, name: str, value: Any, discrete: bool = False) -> None:
        """Apply ``value`` to parameter ``name`` if the model accepts it; else explain."""
        if self._op_id is None or self.read_only:
            return
        f = self._fields[name]
        op = self.document.operation(self._op_id).operation
        param = op.spec.param(name)
        if value is None:
            normalised = None
        else:
            try:
                normalised = check_param(param, value, Place(None))
            except InputError as exc:
                self._refuse(name, self._message(param, _describe(exc)), f.input, exc)
                return
        candidate = dict(op.params)
        if normalised is None:
            candidate.pop(name, None)
        else:
            candidate[name] = normalised
        before = set(kind_checks(op.kind, op.params))
        for other, problem in kind_checks(op.kind, candidate):
            if (other, problem) in before:
                continue
            other_param = op.spec.param(other)
            if other == name:
                message = self._message(param, problem)
            else:
                message = (f"{param.label} = {value}: not applied — "
                           f"{self._message(other_param, problem)}")
            self._refuse(name, message, f.input)
            return
        problem = self._sweep_problem(candidate)
        if problem is not None:
            self._refuse(name, f"{param.label} = {value}: not applied — {problem}", f.input)
            return
        self._accept(name, f.input)
        if discrete:
            self._typed.pop(name, None)
        else:
            text = _typed_text(f.input)
            if text is not None:
                self._typed.setdefault(name, []).append((text, normalised))
        if op.params.get(name) == normalised:
            return
        with self._apply():
            if discrete:  # a pick or a click is an undo step of its own
                self.document.seal()
            try:
                self.document.set_param(self._op_id, name, normalised)
            except OverBudget as exc:  # (a session file Save would refuse)
                if not discrete and self._typed.get(name):
                    self._typed[name].pop()
                self._refuse(name, f"{param.label} = {value}: not applied — {exc}", f.input)
                return
            if discrete:
                self.document.seal()

    def _sweep_problem(self, params: dict[str, Any]) -> str | None:
        """Why the operation's sweep could not take the parameters ``params`` (a point of it
        then breaks a rule of its kind: heads swept over 8, 16, 32 with 16 KV heads), or
        None: every value the session holds is one it can save and open again."""
        assert self._op_id is not None
        entry = self.document.operation(self._op_id)
        if entry.sweep is None:
            return None
        from workbench.model.sweeps import SweepError  # (the sweep's module: loaded with it)

        try:
            entry.sweep.values_for(Operation(entry.operation.kind, params))
        except SweepError as exc:
            return f"the sweep of {entry.sweep.param} would break: {exc}"
        return None

    @contextmanager
    def _apply(self) -> Iterator[None]:
        self._applying = True
        try:
            yield
        finally:
            self._applying = False

    @staticmethod
    def _message(param: Param, problem: str) -> str:
        label = param.label
        if param.symbol and param.symbol.lower() != label.lower():
            label += f" ({param.symbol})"
        return f"{label}: {problem}"

    def _refuse(self, name: str, message: str, widget: QWidget,
                exc: InputError | None = None) -> None:
        self._errors[name] = message
        text = _typed_text(widget)
        if text is not None:
            self._refused_text[name] = text
        self._note = ""
        f = self._fields.get(name)
        if isinstance(f, StepsField):
            row, part = _step_place(exc)
            f.steps.mark(row, part, True)
        else:
            set_invalid(widget, True)
        self._update_hint()

    def _accept(self, name: str, widget: QWidget) -> None:
        if name in self._errors or self._note:
            self._errors.pop(name, None)
            self._note = ""
            f = self._fields.get(name)
            if isinstance(f, StepsField):
                f.steps.mark(None, None, False)
            self._update_hint()
        set_invalid(widget, False)

    def finish(self, name: str) -> None:
        """End of a gesture (Return, focus out): one undo step. Refused text is put back, and
        what the typing applied on the way ("1e3" of "1e30") is taken back with it: the
        typed value applies whole or not at all."""
        typed = self._typed.pop(name, [])
        refused = self._refused_text.pop(name, None)
        if self._op_id is not None and name in self._errors and typed and refused is not None:
            self._take_back(name, typed, refused)
        self.document.seal()
        if self._op_id is None or name not in self._errors:
            return
        message = self._errors.pop(name)
        op = self.document.operation(self._op_id).operation
        if name == "name":
            set_invalid(self._name_edit, False)
            self._name_edit.setText(op.name)
            self._note = f"{message} — kept “{op.name}”."
        else:
            f = self._fields[name]
            resolved = op.spec.resolve(op.params)
            set_invalid(f.input, False)
            if isinstance(f, StepsField):
                f.steps.mark(None, None, False)
            f.load(op.params.get(name), resolved, self._context())
            if isinstance(f, StepsField):
                f.steps.reset()
            shown = resolved.get(name)
            kept = "" if isinstance(shown, list) else f" — kept {f.param.label} = {shown}"
            self._note = f"{message}{kept}."
        self._update_hint()

    def _take_back(self, name: str, typed: list[tuple[str, Any]], refused: str) -> None:
        """The gesture ends on ``refused`` text: what was applied on the way to it (its
        prefixes, "1" and "1e3" of "1e30") is taken back. The value kept is the last one
        typed that was not such a prefix, else the value from before the gesture."""
        keep = [value for text, value in typed if not refused.startswith(text)]
        with self._apply():
            if keep:
                self.document.set_param(self._op_id, name, keep[-1])
            else:
                self.document.abandon_param_edit(self._op_id, name)

    def _update_hint(self) -> None:
        lines = list(self._errors.values())
        if self._note:
            lines.append(self._note)
        text = "\n".join(lines)
        if self._hint.text() != text:
            self._hint.setText(text)
        self._hint.setVisible(bool(text))

    # -- derivation ------------------------------------------------------------------------

    def _refresh_derivation(self, force: bool = False) -> None:
        """Show the derivation again: at once when ``force`` (another operation, the
        conventions toggled), else once the edit's repaint is done. The chart and the tables
        an edit changed are painted first; a burst of edits (a key held down) re-lays out
        the text once. :meth:`derivation_text` is always up to date."""
        self._dirty = True
        if force:
            self._flush()
        elif self.isVisible() and not self._flush_posted:
            self._flush_posted = True
            QCoreApplication.postEvent(self, QEvent(_FLUSH_EVENT), _AFTER_REPAINT)

    def event(self, event: QEvent) -> bool:
        if event.type() == _FLUSH_EVENT:
            self._flush_posted = False
            self._flush()
            return True
        return super().event(event)

    def _flush(self) -> None:
        if not self._dirty or self._op_id is None:
            return
        start = time.perf_counter()
        self._dirty = False
        entry = self.document.operation(self._op_id)
        kind = KINDS[entry.operation.kind]
        self._sections = build_derivation(self.document, self.workspace.results, self._op_id,
                                          self._conventions_open)
        self._header = (entry.operation.name, kind.label)
        self.derivation.show_sections(entry.operation.name, f"{kind.label} — {kind.doc}",
                                      self._sections, self._conventions_open)
        self.last_refresh_ms = (time.perf_counter() - start) * 1000

    def _on_splitter_moved(self, *_: Any) -> None:
        self._splitter_moved = True

    def sizeHint(self) -> QSize:
        return super().sizeHint().expandedTo(QSize(460, 640))

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._flush()

    def _on_anchor(self, url: QUrl) -> None:
        if url.toString() == "toggle:conventions":
            self.set_conventions_open(not self._conventions_open)


def _typed_text(widget: QWidget) -> str | None:
    """The text of a field typed in (a spin box's or a line edit's), else ``None``."""
    if isinstance(widget, QAbstractSpinBox):
        return widget.lineEdit().text()
    if isinstance(widget, QLineEdit):
        return widget.text()
    return None


def _describe(exc: InputError) -> str:
    """The problem of ``exc``, with a steps key path said in words ("step 2, extra inputs")."""
    path = exc.path
    if not path or not isinstance(path[0], int):
        return str(exc)
    where = [f"step {path[0] + 1}"]
    if "inputs" in path[1:]:
        where.append("extra inputs")
    elif "flops" in path[1:]:
        where.append("FLOP/elem")
    elif "op" in path[1:]:
        where.append("op")
    return f"{', '.join(where)}: {exc.message}"


def _step_place(exc: InputError | None) -> tuple[int | None, str | None]:
    """(row, "inputs" | "flops") of a steps error from its key path."""
    if exc is None or not exc.path:
        return None, None
    path = exc.path
    row = path[0] if isinstance(path[0], int) else None
    part = next((p for p in path[1:] if p in ("inputs", "flops")), None)
    return row, part
